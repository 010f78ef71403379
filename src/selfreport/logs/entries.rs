//! One message as a `session_logs` entry: its text on one line, a preview
//! of it, and where a search query matches it.

use crate::selfreport::SESSION_LOGS;
use gsv_protocol::{AssistantBlock, ContentBlock, Message, UserContent};
use serde::Serialize;

/// One message of a session, shortened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Position in the session's whole transcript (archives, then live).
    pub index: usize,
    /// `user`, `assistant` or `toolResult`.
    pub role: &'static str,
    /// Epoch milliseconds.
    pub timestamp: i64,
    /// The tool a `toolResult` answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Set on a `toolResult` that reported an error.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// The start of [`entry_text`], at most `previewChars` characters.
    pub preview: String,
}

/// A search match: the session and the entry, its preview centered on the
/// match.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    pub session_id: String,
    #[serde(flatten)]
    pub entry: Entry,
}

/// What a message says, on one line (whitespace runs become one space):
/// text blocks; tool calls as `name({json args})`; `[image]` for an image.
/// Thinking blocks are left out: they are the model's scratch work, long,
/// and not part of the conversation.
pub fn entry_text(message: &Message) -> String {
    render(message, None).unwrap_or_default()
}

/// The text `search` looks in: [`entry_text`] without `session_logs`
/// calls, and nothing for their results. They only repeat queries and
/// what was found elsewhere, so each search would otherwise find itself
/// and every earlier search for the same words.
pub fn search_text(message: &Message) -> Option<String> {
    render(message, Some(SESSION_LOGS))
}

/// [`entry_text`], leaving out calls of tool `skip` (`None` for a result
/// of it).
fn render(message: &Message, skip: Option<&str>) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    let blocks = |parts: &mut Vec<String>, blocks: &[ContentBlock]| {
        for b in blocks {
            parts.push(match b {
                ContentBlock::Text { text } => text.clone(),
                ContentBlock::Image { .. } => "[image]".into(),
                // A voice note reads as what was said.
                ContentBlock::Attachment(a) => match a.kind {
                    gsv_protocol::channels::MediaType::Audio => crate::media::notes::audio(a),
                    _ => crate::media::notes::unprepared(a),
                },
            });
        }
    };
    match message {
        Message::User(m) => match &m.content {
            UserContent::Text(t) => parts.push(t.clone()),
            UserContent::Blocks(b) => blocks(&mut parts, b),
        },
        Message::Assistant(m) => {
            for b in &m.content {
                match b {
                    AssistantBlock::Text { text } => parts.push(text.clone()),
                    AssistantBlock::ToolCall { name, .. } if Some(name.as_str()) == skip => {}
                    AssistantBlock::ToolCall {
                        name, arguments, ..
                    } => parts.push(format!("{name}({arguments})")),
                    AssistantBlock::Thinking { .. } => {}
                }
            }
        }
        Message::ToolResult(m) if Some(m.tool_name.as_str()) == skip => return None,
        Message::ToolResult(m) => blocks(&mut parts, &m.content),
    }
    Some(one_line(&parts.join(" ")))
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Entry `index` of a session: `message` with its text cut to `max_chars`.
pub fn entry(index: usize, message: &Message, max_chars: usize) -> Entry {
    entry_with(index, message, preview(&entry_text(message), max_chars))
}

fn entry_with(index: usize, message: &Message, preview: String) -> Entry {
    let (tool_name, is_error) = tool_of(message);
    Entry {
        index,
        role: message.role(),
        timestamp: message.timestamp(),
        tool_name,
        is_error,
        preview,
    }
}

fn tool_of(message: &Message) -> (Option<String>, bool) {
    match message {
        Message::ToolResult(r) => (Some(r.tool_name.clone()), r.is_error),
        _ => (None, false),
    }
}

/// `text` if it has at most `max` characters, else its first `max - 1`
/// and `…` (cut on a character, never inside one).
pub fn preview(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// At most `max` characters of `text` around the match at characters
/// `start..start + len`: the match centered, `…` where text was cut. A
/// match longer than the window shows from its start.
pub fn preview_around(text: &str, start: usize, len: usize, max: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= max {
        return text.to_string();
    }
    // Room for a cut mark at each end.
    let width = max.saturating_sub(2).max(1);
    let centered = (start + len / 2).saturating_sub(width / 2);
    let from = centered.min(start).min(chars.len() - width);
    let to = from + width;
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    out.extend(&chars[from..to]);
    if to < chars.len() {
        out.push('…');
    }
    out
}

/// Where `query` first occurs in `text` ignoring case: `(start, len)` in
/// characters of `text`. Both are folded one character at a time, and each
/// folded character remembers the character it came from, so a fold that
/// changes length (`İ` → `i̇`) still maps back onto `text` exactly.
/// Whitespace runs in `query` match one space (entry texts are one line).
pub fn find_match(text: &str, query: &str) -> Option<(usize, usize)> {
    let needle: Vec<char> = one_line(query)
        .chars()
        .flat_map(char::to_lowercase)
        .collect();
    if needle.is_empty() {
        return None;
    }
    let mut folded = Vec::new();
    let mut origin = Vec::new();
    for (i, c) in text.chars().enumerate() {
        for l in c.to_lowercase() {
            folded.push(l);
            origin.push(i);
        }
    }
    let at = folded.windows(needle.len()).position(|w| w == needle)?;
    let start = origin[at];
    let end = origin[at + needle.len() - 1] + 1;
    Some((start, end - start))
}

/// The hits for `query` in a session's `messages` (all of them, from
/// entry 0), at most `max_hits`, in order; matched in [`search_text`].
pub fn search(
    session_id: &str,
    messages: &[Message],
    query: &str,
    preview_chars: usize,
    max_hits: usize,
) -> Vec<Hit> {
    let mut hits = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        if hits.len() == max_hits {
            break;
        }
        let Some(text) = search_text(message) else {
            continue;
        };
        let Some((start, len)) = find_match(&text, query) else {
            continue;
        };
        hits.push(Hit {
            session_id: session_id.to_string(),
            entry: entry_with(
                index,
                message,
                preview_around(&text, start, len, preview_chars),
            ),
        });
    }
    hits
}

/// How many of `items`, taken in order, fit in `budget` characters of
/// JSON (with a separator each). At least one: a single entry larger than
/// the budget is still shown (the result cap cuts it) rather than leaving
/// a reader with no way forward.
pub fn fitting<'a, T: Serialize + 'a>(items: impl Iterator<Item = &'a T>, budget: usize) -> usize {
    let mut used = 0;
    let mut n = 0;
    for item in items {
        used += serde_json::to_string(item).map_or(0, |s| s.chars().count()) + 1;
        if used > budget && n > 0 {
            break;
        }
        n += 1;
    }
    n
}
