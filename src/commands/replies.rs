//! What the session answers to `/model`, `/think` and inline directives,
//! and the setting each one changes.

use super::{level_name, Command, Directives, InvalidSelector, ModelSelector, UnknownLevel};
use crate::llm::ThinkingLevel;
use gsv_protocol::{ChatDirectives, ModelSelection};

/// A session setting a command changes.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingChange {
    Model(ModelSelection),
    Thinking(ThinkingLevel),
}

/// A command's answer: text for the user or an error, and maybe a change.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandReply {
    pub response: Option<String>,
    pub error: Option<String>,
    pub change: Option<SettingChange>,
}

impl CommandReply {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            response: Some(text.into()),
            error: None,
            change: None,
        }
    }

    pub fn error(text: impl Into<String>) -> Self {
        Self {
            response: None,
            error: Some(text.into()),
            change: None,
        }
    }
}

const LEVELS: &str = "off, minimal, low, medium, high, xhigh";

impl Command {
    /// The name `chat.send` reports for the command.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Reset { .. } => "reset",
            Command::Compact { .. } => "compact",
            Command::Stop => "stop",
            Command::Status => "status",
            Command::Model(_) => "model",
            Command::Think(_) => "think",
            Command::Help => "help",
            Command::Usage(_) => "usage",
        }
    }

    /// Whether it changes the session (its history or its settings): such
    /// commands are the owner's, and a person's in their own session
    /// (`crate::trust::may_change_session`).
    pub fn changes_session(&self) -> bool {
        match self {
            Command::Reset { .. } | Command::Compact { .. } => true,
            Command::Model(arg) => arg.is_some(),
            Command::Think(arg) => arg.is_some(),
            Command::Stop | Command::Status | Command::Help | Command::Usage(_) => false,
        }
    }
}

/// The answer to a session-changing command from someone who may not.
pub const NOT_YOURS: &str =
    "Only the owner can change this conversation (reset, compact, model, thinking).";

/// `/model` shows the session's model; `/model sel` sets it (a bare id
/// keeps the current provider).
pub fn model_command(
    arg: Option<&Result<ModelSelector, InvalidSelector>>,
    current: &ModelSelection,
) -> CommandReply {
    match arg {
        None => CommandReply::text(format!("Model: {}/{}", current.provider, current.id)),
        Some(Ok(sel)) => {
            let m = sel.resolve(&current.provider);
            CommandReply {
                response: Some(format!(
                    "Model set to {}/{} for this session.",
                    m.provider, m.id
                )),
                error: None,
                change: Some(SettingChange::Model(m)),
            }
        }
        Some(Err(InvalidSelector(raw))) => CommandReply::error(format!(
            "Invalid model selector: {raw:?}. Use provider/id (e.g. openai/gpt-4.1) or an id of the current provider."
        )),
    }
}

/// `/think` shows the session's level; `/think level` sets it.
pub fn think_command(
    arg: Option<&Result<ThinkingLevel, UnknownLevel>>,
    current: ThinkingLevel,
) -> CommandReply {
    match arg {
        None => CommandReply::text(format!("Thinking: {}", level_name(current))),
        Some(Ok(level)) => CommandReply {
            response: Some(format!(
                "Thinking set to {} for this session.",
                level_name(*level)
            )),
            error: None,
            change: Some(SettingChange::Thinking(*level)),
        },
        Some(Err(UnknownLevel(raw))) => CommandReply::error(format!(
            "Unknown thinking level: {raw:?}. Use one of: {LEVELS}."
        )),
    }
}

/// The valid directives of a message, as applied to its run (a bare model
/// id resolved against the session's provider); invalid ones are dropped.
pub fn applied_directives(d: &Directives, current: &ModelSelection) -> ChatDirectives {
    ChatDirectives {
        thinking_level: match &d.thinking {
            Some(Ok(level)) => Some(level_name(*level).to_string()),
            _ => None,
        },
        model: match &d.model {
            Some(Ok(sel)) => Some(sel.resolve(&current.provider)),
            _ => None,
        },
    }
}

/// `true` when nothing applies.
pub fn is_empty(d: &ChatDirectives) -> bool {
    d.thinking_level.is_none() && d.model.is_none()
}
