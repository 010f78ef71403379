//! Slash commands and inline directives in chat messages.
//!
//! The shell first tries [`parse_command`]: a whole message like `/reset`
//! or `/model openai/gpt-4.1` is handled without a model run. Otherwise
//! [`parse_directives`] strips `/t:high`, `/m:sel`, `/status` from the text
//! and applies them to that one message; a directive-only message is
//! answered with [`directive_ack`] and starts no run.

mod directives;
mod replies;

pub use directives::{directive_ack, parse_directives, Directives};
pub use replies::{
    applied_directives, is_empty, model_command, think_command, CommandReply, SettingChange,
    NOT_YOURS,
};

use crate::llm::ThinkingLevel;
use crate::session::reset::ResetPolicy;
use gsv_protocol::{ModelSelection, TokenCounts};

/// Messages kept by `/compact` without an argument.
pub const DEFAULT_COMPACT_KEEP: usize = 20;

/// A recognised slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/new`, `/reset`; text after the command, if any, is meant as the
    /// first message of the new session.
    Reset { message: Option<String> },
    /// `/compact [N]`: keep the last N messages (default 20).
    Compact { keep: usize },
    /// `/stop`: abort the run.
    Stop,
    /// `/status`.
    Status,
    /// `/model`: show (`None`) or set the session's model.
    Model(Option<Result<ModelSelector, InvalidSelector>>),
    /// `/think`, `/thinking`, `/t`: show (`None`) or set the level; `Err`
    /// holds an unknown level as typed.
    Think(Option<Result<ThinkingLevel, UnknownLevel>>),
    /// `/help`, `/?`.
    Help,
    /// A known command with unusable arguments: reply with this usage line.
    Usage(&'static str),
}

/// A model selector that is neither `provider/id` nor `id`; its `Display`
/// is the selector as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidSelector(pub String);

/// A thinking level that is not one of the known ones; its `Display` is
/// the level as typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownLevel(pub String);

impl std::fmt::Display for InvalidSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Display for UnknownLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidSelector {}
impl std::error::Error for UnknownLevel {}

impl From<&str> for InvalidSelector {
    fn from(raw: &str) -> Self {
        Self(raw.to_string())
    }
}

impl From<&str> for UnknownLevel {
    fn from(raw: &str) -> Self {
        Self(raw.to_string())
    }
}

/// A parsed model selector: `provider/id`, or `id` on the current provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSelector {
    pub provider: Option<String>,
    pub id: String,
}

impl ModelSelector {
    /// The selection, taking the provider from `current` when none was given.
    pub fn resolve(&self, current_provider: &str) -> ModelSelection {
        ModelSelection {
            provider: self
                .provider
                .clone()
                .unwrap_or_else(|| current_provider.to_string()),
            id: self.id.clone(),
        }
    }
}

/// `provider/id` (split at the first `/`, so `openrouter/meta/llama` keeps
/// `meta/llama` as id) or `id`. Empty parts and whitespace are invalid;
/// the error is the selector as typed.
pub fn parse_model_selector(raw: &str) -> Result<ModelSelector, InvalidSelector> {
    let s = raw.trim();
    if s.is_empty() || s.chars().any(char::is_whitespace) {
        return Err(s.into());
    }
    match s.split_once('/') {
        Some((provider, id)) if !provider.is_empty() && !id.is_empty() => Ok(ModelSelector {
            provider: Some(provider.to_string()),
            id: id.to_string(),
        }),
        Some(_) => Err(s.into()),
        None => Ok(ModelSelector {
            provider: None,
            id: s.to_string(),
        }),
    }
}

/// The canonical spelling of a level (`none`, `minimal`, … `xhigh`).
pub fn level_name(level: ThinkingLevel) -> &'static str {
    match level {
        ThinkingLevel::None => "none",
        ThinkingLevel::Minimal => "minimal",
        ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        ThinkingLevel::High => "high",
        ThinkingLevel::Xhigh => "xhigh",
    }
}

/// The command in `text`, if the whole (trimmed, single-line) message is
/// `/name` or `/name args` (`^/(\w+)(\s+(.*))?$`, plus `/?`) and the name
/// is known, case-insensitively. Anything else is a normal message.
pub fn parse_command(text: &str) -> Option<Command> {
    let rest = text.trim().strip_prefix('/')?;
    if rest.contains(['\n', '\r']) {
        return None;
    }
    let name_end = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
    let (name, args) = rest.split_at(name_end);
    let is_word = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !is_word && name != "?" {
        return None;
    }
    let args = args.trim();
    let arg = (!args.is_empty()).then_some(args);
    Some(match name.to_ascii_lowercase().as_str() {
        "new" | "reset" => Command::Reset {
            message: arg.map(String::from),
        },
        "compact" => match arg.map(str::parse::<usize>) {
            None => Command::Compact {
                keep: DEFAULT_COMPACT_KEEP,
            },
            Some(Ok(keep)) if keep > 0 => Command::Compact { keep },
            Some(_) => {
                Command::Usage("Usage: /compact [N] — keep the last N messages (N ≥ 1, default 20)")
            }
        },
        "stop" => Command::Stop,
        "status" => Command::Status,
        "model" => Command::Model(arg.map(parse_model_selector)),
        "think" | "thinking" | "t" => {
            Command::Think(arg.map(|a| ThinkingLevel::parse(a).ok_or_else(|| a.into())))
        }
        // `/start` is what Telegram sends when a person opens the bot.
        "help" | "?" | "start" => Command::Help,
        _ => return None,
    })
}

/// The `/help` reply.
pub const HELP_TEXT: &str = "**Available Commands**

**Session:**
• `/new` or `/reset` - Start a new session (the old one is archived)
• `/compact [N]` - Keep only the last N messages (default 20)
• `/stop` - Stop the current run
• `/status` - Show session info

**Settings:**
• `/model [provider/id]` - Show or set this session's model
• `/think [level]` - Show or set the reasoning level (off, minimal, low, medium, high, xhigh)

**Inline Directives (this message only):**
• `/t:high your message` - Use high reasoning
• `/m:openai/gpt-4.1 your message` - Use another model

**Info:**
• `/help` or `/?` - Show this message";

/// What `/status` reports.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusInfo<'a> {
    pub session_key: &'a str,
    pub message_count: u64,
    pub tokens: &'a TokenCounts,
    /// The model this session uses (its override, else the global one).
    pub model: &'a ModelSelection,
    pub thinking: ThinkingLevel,
    pub reset: &'a ResetPolicy,
}

/// The `/status` reply.
pub fn status_text(s: &StatusInfo) -> String {
    let reset = match *s.reset {
        ResetPolicy::Manual => "manual".to_string(),
        ResetPolicy::Daily { at_hour } => format!("daily at {at_hour:02}:00"),
        ResetPolicy::Idle { idle_minutes } => format!("after {idle_minutes} min idle"),
    };
    let mut usage = String::new();
    if let Some(cache) = s.tokens.cache_text() {
        usage.push_str(&format!("\n• Cache: {cache}"));
    }
    if let Some(cost) = s.tokens.cost_text() {
        usage.push_str(&format!("\n• Cost: {cost} (estimated)"));
    }
    format!(
        "**Session Status**\n• Session: `{}`\n• Messages: {}\n• Tokens: {} in / {} out{usage}\n• Model: {}/{}\n• Thinking: {}\n• Reset: {reset}",
        s.session_key,
        s.message_count,
        s.tokens.input,
        s.tokens.output,
        s.model.provider,
        s.model.id,
        level_name(s.thinking),
    )
}

#[cfg(test)]
mod tests;
