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
            split for the app. Use it to tell the user something on their phone, or to send \
            them files (attachments: workspace paths, or media keys of this conversation as \
            the history names them)."
            .into(),
        input_schema: serde_json::json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "What to send (may be empty when attaching files)"},
                "attachments": {"type": "array", "items": {"type": "string"},
                    "description": "Files to send, at most 10: workspace paths (reports/chart.png) or media keys (media/…)"},
                "channel": {"type": "string", "description": "discord, whatsapp, … (default: the last chat)"},
                "to": {"type": "string", "description": "The chat or person id on that channel (with channel)"},
                "accountId": {"type": "string", "description": "Which bot or number of the channel (default: default)"}
            },
            "required": []
        }),
    }
}

/// The tool's arguments, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageArgs {
    pub text: String,
    /// `None`: the agent's last active chat.
    pub target: Option<Target>,
    /// Workspace paths or media keys (the gateway finds them in R2).
    pub attachments: Vec<String>,
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
        let attachments: Vec<String> = match args.get("attachments") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .ok_or(MessageArgsError("attachments must be a list of file paths"))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(MessageArgsError("attachments must be a list of file paths")),
        };
        if attachments.len() > crate::media::outbound::MAX_ATTACHMENTS {
            return Err(MessageArgsError("at most 10 attachments per message"));
        }
        let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
        if text.trim().is_empty() && attachments.is_empty() {
            return Err(MessageArgsError("text is required (or attachments)"));
        }
        let text = if text.trim().is_empty() { "" } else { text };
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
            attachments,
        })
    }
}

/// What the model reads back (`files` of the `pieces` were attachments).
pub fn result_text(channel: &str, to: &str, pieces: usize, files: usize) -> String {
    let with = match files {
        0 => String::new(),
        1 => " with 1 file".to_string(),
        n => format!(" with {n} files"),
    };
    match pieces {
        1 => format!("Sent to {channel}:{to}{with}."),
        n => format!("Sent to {channel}:{to}{with} as {n} messages."),
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
                target: None,
                attachments: vec![]
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
                }),
                attachments: vec![]
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
            Err(MessageArgsError("text is required (or attachments)"))
        );
        assert_eq!(
            MessageArgs::parse(&json!({"attachments": ["reports/chart.png", " media/k/u.jpg "]})),
            Ok(MessageArgs {
                text: String::new(),
                target: None,
                attachments: vec!["reports/chart.png".into(), "media/k/u.jpg".into()]
            })
        );
        assert_eq!(
            MessageArgs::parse(&json!({"text": "x", "attachments": "a.png"})),
            Err(MessageArgsError("attachments must be a list of file paths"))
        );
        let many: Vec<String> = (0..11).map(|i| format!("f{i}.txt")).collect();
        assert_eq!(
            MessageArgs::parse(&json!({"text": "x", "attachments": many})),
            Err(MessageArgsError("at most 10 attachments per message"))
        );
    }

    #[test]
    fn results_say_where_it_went() {
        assert_eq!(
            result_text("discord", "dm-81", 1, 0),
            "Sent to discord:dm-81."
        );
        assert_eq!(
            result_text("discord", "dm-81", 3, 0),
            "Sent to discord:dm-81 as 3 messages."
        );
        assert_eq!(
            result_text("whatsapp", "+1555", 2, 1),
            "Sent to whatsapp:+1555 with 1 file as 2 messages."
        );
    }
}
