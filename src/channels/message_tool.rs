//! `gsv__Message`: the agent writes to someone in a chat app on its own
//! ("tell me on Discord when the build is done"). Offered in the main
//! session only: a chat with someone else must not be able to make the
//! agent message a third person on the owner's behalf.

use gsv_protocol::ToolDefinition;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const MESSAGE_TOOL: &str = "gsv__Message";

/// The longest message the tool takes (the gateway splits it for the app).
const MAX_TEXT_CHARS: usize = 20_000;

pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: MESSAGE_TOOL.into(),
        description: "Send a message to someone in a chat app (Discord, WhatsApp…). Without \
            channel and to, it goes to the chat you were last talked to from. Long text is \
            split for the app. Use it to tell the user something on their phone."
            .into(),
        input_schema: serde_json::json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "What to send"},
                "channel": {"type": "string", "description": "discord, whatsapp, … (default: the last chat)"},
                "to": {"type": "string", "description": "The chat or person id on that channel (with channel)"},
                "accountId": {"type": "string", "description": "Which bot or number of the channel (default: default)"}
            },
            "required": ["text"]
        }),
    }
}

/// The tool's arguments, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageArgs {
    pub text: String,
    /// `None`: the agent's last active chat.
    pub target: Option<Target>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    pub channel: String,
    pub to: String,
    pub account_id: String,
}

/// Why the arguments were refused, in words the model can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageArgsError(pub &'static str);

impl std::fmt::Display for MessageArgsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl MessageArgs {
    pub fn parse(args: &Value) -> Result<Self, MessageArgsError> {
        let field = |name: &str| {
            args.get(name)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        let text = args
            .get("text")
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
            .ok_or(MessageArgsError("text is required"))?;
        if text.chars().count() > MAX_TEXT_CHARS {
            return Err(MessageArgsError(
                "text is longer than 20000 characters; send it in parts",
            ));
        }
        let target = match (field("channel"), field("to")) {
            (Some(channel), Some(to)) => Some(Target {
                channel: channel.to_ascii_lowercase(),
                to: to.to_string(),
                account_id: field("accountId").unwrap_or("default").to_string(),
            }),
            (None, None) => None,
            _ => {
                return Err(MessageArgsError(
                    "give channel and to together, or neither (the last chat)",
                ))
            }
        };
        Ok(Self {
            text: text.to_string(),
            target,
        })
    }
}

/// What the model reads back.
pub fn result_text(channel: &str, to: &str, pieces: usize) -> String {
    match pieces {
        1 => format!("Sent to {channel}:{to}."),
        n => format!("Sent to {channel}:{to} as {n} messages."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_name_a_chat_or_none() {
        assert_eq!(
            MessageArgs::parse(&json!({"text": "Build done."})),
            Ok(MessageArgs {
                text: "Build done.".into(),
                target: None
            })
        );
        assert_eq!(
            MessageArgs::parse(&json!({"text": "hi", "channel": "Discord", "to": "81"})),
            Ok(MessageArgs {
                text: "hi".into(),
                target: Some(Target {
                    channel: "discord".into(),
                    to: "81".into(),
                    account_id: "default".into()
                })
            })
        );
        assert_eq!(
            MessageArgs::parse(&json!({"text": "hi", "channel": "discord"})),
            Err(MessageArgsError(
                "give channel and to together, or neither (the last chat)"
            ))
        );
        assert_eq!(
            MessageArgs::parse(&json!({"text": "  "})),
            Err(MessageArgsError("text is required"))
        );
    }

    #[test]
    fn results_say_where_it_went() {
        assert_eq!(result_text("discord", "dm-81", 1), "Sent to discord:dm-81.");
        assert_eq!(
            result_text("discord", "dm-81", 3),
            "Sent to discord:dm-81 as 3 messages."
        );
    }
}
