//! Inline directives: `/think:L` `/thinking:L` `/t:L`, `/model:sel`
//! `/m:sel`, and a bare `/status`, at the start of the message or after
//! whitespace, case-insensitive; the first of each kind applies and is
//! removed from the text. Think and model directives need a value, so a
//! bare `/t` in prose stays prose.

use super::{level_name, parse_model_selector, InvalidSelector, ModelSelector, UnknownLevel};
use crate::llm::ThinkingLevel;
use gsv_protocol::ModelSelection;

/// A message with its directives taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directives {
    /// The message without directives, trimmed.
    pub text: String,
    /// `Err` holds an unknown level as typed.
    pub thinking: Option<Result<ThinkingLevel, UnknownLevel>>,
    /// `Err` holds an invalid selector as typed.
    pub model: Option<Result<ModelSelector, InvalidSelector>>,
    pub status: bool,
}

impl Directives {
    pub fn has_any(&self) -> bool {
        self.thinking.is_some() || self.model.is_some() || self.status
    }

    /// Directives and nothing else: acknowledge, do not run the model.
    pub fn is_directive_only(&self) -> bool {
        self.has_any() && self.text.is_empty()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Think,
    Model,
    Status,
}

fn kind_of(name: &str) -> Option<Kind> {
    match name.to_ascii_lowercase().as_str() {
        "think" | "thinking" | "t" => Some(Kind::Think),
        "model" | "m" => Some(Kind::Model),
        "status" => Some(Kind::Status),
        _ => None,
    }
}

/// The first directive of `kind` in `text`: byte range of the token and
/// its value (empty for `/status`).
fn find(text: &str, kind: Kind) -> Option<(usize, usize, &str)> {
    let mut prev_ws = true;
    for (i, c) in text.char_indices() {
        if c == '/' && prev_ws {
            let rest = &text[i + 1..];
            let token_len = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let token = &rest[..token_len];
            let (name, value) = match token.split_once(':') {
                Some((n, v)) => (n, Some(v)),
                None => (token, None),
            };
            let fits = match (kind_of(name), value) {
                (Some(Kind::Status), None) => kind == Kind::Status,
                (Some(k), Some(v)) if k != Kind::Status && !v.is_empty() => k == kind,
                _ => false,
            };
            if fits {
                return Some((i, i + 1 + token_len, value.unwrap_or("")));
            }
        }
        prev_ws = c.is_whitespace();
    }
    None
}

/// Removes `text[start..end]` and one space or tab beside it (after it if
/// there is one, else before it).
fn cut(text: &str, start: usize, end: usize) -> String {
    let is_blank = |c: Option<char>| matches!(c, Some(' ' | '\t'));
    let (mut start, mut end) = (start, end);
    if is_blank(text[end..].chars().next()) {
        end += 1;
    } else if is_blank(text[..start].chars().next_back()) {
        start -= 1;
    }
    format!("{}{}", &text[..start], &text[end..])
}

/// Takes the directives out of `text`.
pub fn parse_directives(text: &str) -> Directives {
    let mut rest = text.to_string();
    let mut take = |kind: Kind| -> Option<String> {
        let (start, end, value) = find(&rest, kind)?;
        let value = value.to_string();
        rest = cut(&rest, start, end);
        Some(value)
    };
    let thinking = take(Kind::Think).map(|v| ThinkingLevel::parse(&v).ok_or(UnknownLevel(v)));
    let model = take(Kind::Model).map(|v| parse_model_selector(&v));
    let status = take(Kind::Status).is_some();
    Directives {
        text: rest.trim().to_string(),
        thinking,
        model,
        status,
    }
}

/// The reply to a directive-only message, e.g. `_Thinking: high | Model:
/// openai/gpt-4.1_`; `None` when there is nothing to report.
pub fn directive_ack(d: &Directives, current: &ModelSelection) -> Option<String> {
    let mut parts = Vec::new();
    match &d.thinking {
        Some(Ok(level)) => parts.push(format!("Thinking: {}", level_name(*level))),
        Some(Err(raw)) => parts.push(format!("Unknown thinking level: {raw}")),
        None => {}
    }
    match &d.model {
        Some(Ok(sel)) => {
            let m = sel.resolve(&current.provider);
            parts.push(format!("Model: {}/{}", m.provider, m.id));
        }
        Some(Err(raw)) => parts.push(format!("Invalid model selector: {raw}")),
        None => {}
    }
    (!parts.is_empty()).then(|| format!("_{}_", parts.join(" | ")))
}
