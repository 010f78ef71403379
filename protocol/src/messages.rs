//! Conversation messages, in the shapes of `@mariozechner/pi-ai` that GSV v1
//! stores and archives.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    User(UserMessage),
    Assistant(AssistantMessage),
    ToolResult(ToolResultMessage),
}

impl Message {
    pub fn role(&self) -> &'static str {
        match self {
            Message::User(_) => "user",
            Message::Assistant(_) => "assistant",
            Message::ToolResult(_) => "toolResult",
        }
    }
    pub fn timestamp(&self) -> i64 {
        match self {
            Message::User(m) => m.timestamp,
            Message::Assistant(m) => m.timestamp,
            Message::ToolResult(m) => m.timestamp,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    pub content: UserContent,
    pub timestamp: i64,
    /// What the gateway attached for the model with this message (the
    /// memories recalled for it), sent after `content` in the same turn.
    /// Kept with the message so every later call sends the same bytes (a
    /// provider's prompt cache holds); clients show `content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl UserMessage {
    /// A message of `content` sent at `timestamp`, with nothing attached.
    pub fn new(content: UserContent, timestamp: i64) -> Self {
        Self {
            content,
            timestamp,
            context: None,
        }
    }
}

/// A user message is either plain text or a list of blocks (text, images).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(untagged)]
pub enum UserContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

impl UserContent {
    /// The text of the message, blocks joined by newlines.
    pub fn text(&self) -> String {
        match self {
            UserContent::Text(t) => t.clone(),
            UserContent::Blocks(b) => join_text(b),
        }
    }
}

/// Blocks that user messages and tool results carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    /// v1's image block. A stored message names the image by `r2Key`;
    /// the bytes (`data`) are filled in only for the model call.
    #[serde(rename_all = "camelCase")]
    Image {
        /// Base64 data; absent when the image lives in R2 (`r2Key`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<String>,
        mime_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        r2_key: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        filename: Option<String>,
        /// Bytes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
    },
    /// Audio, video or a document kept in R2 (beyond v1, which stored a
    /// voice note's transcript as text and dropped video): what the model
    /// gets of it is decided at each call (a transcript, the text of a
    /// document, a note).
    Attachment(Attachment),
}

/// A stored file the model reads about rather than sees (see
/// `ContentBlock::Attachment`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    pub kind: crate::channels::MediaType,
    pub mime_type: String,
    pub r2_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// Bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Seconds, for audio and video.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    /// Audio: what was said, once transcribed (written into the stored
    /// message the first time, so it is transcribed once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    /// Audio: why no transcript could be made (not tried again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_error: Option<String>,
}

pub fn join_text(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    pub content: Vec<AssistantBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    pub timestamp: i64,
}

impl AssistantMessage {
    /// A message of `content` alone: no provider details, usage or stop
    /// reason (those are set with struct update syntax where known).
    pub fn new(content: Vec<AssistantBlock>, timestamp: i64) -> Self {
        Self {
            content,
            api: None,
            provider: None,
            model: None,
            usage: None,
            stop_reason: None,
            error_message: None,
            timestamp,
        }
    }

    /// All text blocks concatenated (what a chat client shows).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                AssistantBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("")
    }
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|b| match b {
            AssistantBlock::ToolCall {
                id,
                name,
                arguments,
                ..
            } => Some((id.as_str(), name.as_str(), arguments)),
            _ => None,
        })
    }
    pub fn has_tool_calls(&self) -> bool {
        self.tool_calls().next().is_some()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum AssistantBlock {
    #[serde(rename_all = "camelCase")]
    Text { text: String },
    #[serde(rename_all = "camelCase")]
    Thinking {
        thinking: String,
        /// Anthropic signs thinking blocks; the signature must be sent back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thinking_signature: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    ToolCall {
        id: String,
        name: String,
        arguments: Value,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
    #[serde(default)]
    pub total_tokens: u64,
}

impl Usage {
    /// All tokens of the call: as the provider totalled them, else the sum.
    pub fn total(&self) -> u64 {
        match self.total_tokens {
            0 => self.input + self.output + self.cache_read + self.cache_write,
            total => total,
        }
    }

    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
        self.total_tokens += other.total_tokens;
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    pub tool_call_id: String,
    pub tool_name: String,
    pub content: Vec<ContentBlock>,
    pub is_error: bool,
    pub timestamp: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn archive_lines_round_trip() {
        // A user, an assistant and a tool result line as v1 archives them.
        let lines = [
            json!({"role":"user","content":"Hello","timestamp":1708300000000i64}),
            json!({"role":"assistant","content":[{"type":"text","text":"Hi there!"}],"timestamp":1708300001000i64}),
            json!({"role":"toolResult","toolCallId":"call_abc","toolName":"Bash","content":[{"type":"text","text":"output"}],"isError":false,"timestamp":1708300002000i64}),
        ];
        let parsed: Vec<Message> = lines
            .iter()
            .map(|l| serde_json::from_value(l.clone()).unwrap())
            .collect();
        assert_eq!(
            parsed,
            vec![
                Message::User(UserMessage {
                    content: UserContent::Text("Hello".into()),
                    timestamp: 1708300000000,
                    context: None,
                }),
                Message::Assistant(AssistantMessage::new(
                    vec![AssistantBlock::Text {
                        text: "Hi there!".into()
                    }],
                    1708300001000
                )),
                Message::ToolResult(ToolResultMessage {
                    tool_call_id: "call_abc".into(),
                    tool_name: "Bash".into(),
                    content: vec![ContentBlock::Text {
                        text: "output".into()
                    }],
                    is_error: false,
                    timestamp: 1708300002000
                }),
            ]
        );
        for (line, msg) in lines.iter().zip(&parsed) {
            assert_eq!(&serde_json::to_value(msg).unwrap(), line);
        }
    }

    #[test]
    fn media_blocks_keep_v1s_image_shape() {
        let stored = json!({"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image", "mimeType": "image/jpeg", "r2Key": "media/agent:main:main/u.jpg", "size": 3},
            {"type": "attachment", "kind": "audio", "mimeType": "audio/ogg",
             "r2Key": "media/agent:main:main/v.ogg", "duration": 2.5, "transcript": "buy milk"}
        ], "timestamp": 1});
        let m: Message = serde_json::from_value(stored.clone()).unwrap();
        let Message::User(u) = &m else { panic!() };
        let UserContent::Blocks(blocks) = &u.content else {
            panic!()
        };
        assert_eq!(
            blocks[2],
            ContentBlock::Attachment(Attachment {
                kind: crate::channels::MediaType::Audio,
                mime_type: "audio/ogg".into(),
                r2_key: "media/agent:main:main/v.ogg".into(),
                filename: None,
                size: None,
                duration: Some(2.5),
                transcript: Some("buy milk".into()),
                transcript_error: None,
            })
        );
        assert_eq!(serde_json::to_value(&m).unwrap(), stored);
        // v1's inline image still reads.
        let v1: ContentBlock = serde_json::from_value(
            json!({"type": "image", "data": "aGk=", "mimeType": "image/png"}),
        )
        .unwrap();
        assert!(matches!(v1, ContentBlock::Image { data: Some(_), .. }));
    }

    #[test]
    fn tool_call_block_shape() {
        let m = AssistantMessage {
            content: vec![
                AssistantBlock::Text {
                    text: "Let me look.".into(),
                },
                AssistantBlock::ToolCall {
                    id: "c1".into(),
                    name: "laptop__Bash".into(),
                    arguments: json!({"command":"ls"}),
                },
            ],
            api: Some("openai-completions".into()),
            provider: Some("openai".into()),
            model: Some("gpt-4.1".into()),
            usage: Some(Usage {
                input: 10,
                output: 5,
                total_tokens: 15,
                ..Default::default()
            }),
            stop_reason: Some(StopReason::ToolUse),
            error_message: None,
            timestamp: 1,
        };
        assert_eq!(
            serde_json::to_value(Message::Assistant(m)).unwrap(),
            json!({"role":"assistant","content":[{"type":"text","text":"Let me look."},
                {"type":"toolCall","id":"c1","name":"laptop__Bash","arguments":{"command":"ls"}}],
                "api":"openai-completions","provider":"openai","model":"gpt-4.1",
                "usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15},
                "stopReason":"toolUse","timestamp":1})
        );
    }
}
