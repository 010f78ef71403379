//! The parts of the Bot API's `Update` the channel reads, with the
//! official field names. Everything else Telegram sends is ignored, and
//! every field the channel can do without is optional, so an update of a
//! newer API version still reads.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
pub struct Update {
    pub update_id: i64,
    #[serde(default)]
    pub message: Option<Message>,
    #[serde(default)]
    pub edited_message: Option<serde_json::Value>,
    #[serde(default)]
    pub callback_query: Option<CallbackQuery>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Message {
    /// Unique within its chat only.
    pub message_id: i64,
    /// The forum topic (or, outside forums, the reply thread).
    #[serde(default)]
    pub message_thread_id: Option<i64>,
    #[serde(default)]
    pub from: Option<User>,
    /// Seconds since the epoch (0 for an inaccessible message).
    #[serde(default)]
    pub date: i64,
    pub chat: Chat,
    /// The message was sent to a forum topic.
    #[serde(default)]
    pub is_topic_message: Option<bool>,
    #[serde(default)]
    pub reply_to_message: Option<Box<Message>>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub entities: Vec<MessageEntity>,
    #[serde(default)]
    pub caption: Option<String>,
    #[serde(default)]
    pub caption_entities: Vec<MessageEntity>,
    /// The sizes of a photo, smallest first.
    #[serde(default)]
    pub photo: Vec<PhotoSize>,
    #[serde(default)]
    pub document: Option<FileInfo>,
    #[serde(default)]
    pub voice: Option<FileInfo>,
    #[serde(default)]
    pub audio: Option<FileInfo>,
    #[serde(default)]
    pub video: Option<FileInfo>,
    /// A topic's first message (a reply "to" it is only being in the topic).
    #[serde(default)]
    pub forum_topic_created: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub id: i64,
    #[serde(default)]
    pub is_bot: bool,
    #[serde(default)]
    pub first_name: String,
    #[serde(default)]
    pub last_name: Option<String>,
    #[serde(default)]
    pub username: Option<String>,
}

impl User {
    /// First and last name.
    pub fn full_name(&self) -> Option<String> {
        let name = match &self.last_name {
            Some(last) if !last.is_empty() => format!("{} {last}", self.first_name),
            _ => self.first_name.clone(),
        };
        let name = name.trim();
        (!name.is_empty()).then(|| name.to_string())
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Chat {
    pub id: i64,
    /// "private", "group", "supergroup" or "channel".
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub username: Option<String>,
}

/// A span of a text: `offset` and `length` count UTF-16 code units.
#[derive(Debug, Clone, Deserialize)]
pub struct MessageEntity {
    #[serde(rename = "type")]
    pub kind: String,
    pub offset: usize,
    pub length: usize,
    /// The person a `text_mention` names.
    #[serde(default)]
    pub user: Option<User>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PhotoSize {
    pub file_id: String,
    #[serde(default)]
    pub width: u32,
    #[serde(default)]
    pub height: u32,
    #[serde(default)]
    pub file_size: Option<u64>,
}

/// What a document, voice note, audio track or video says of its file.
#[derive(Debug, Clone, Deserialize)]
pub struct FileInfo {
    pub file_id: String,
    #[serde(default)]
    pub file_name: Option<String>,
    #[serde(default)]
    pub mime_type: Option<String>,
    #[serde(default)]
    pub file_size: Option<u64>,
    /// Seconds.
    #[serde(default)]
    pub duration: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CallbackQuery {
    pub id: String,
    pub from: User,
    /// The message with the button (possibly only its chat and id, when
    /// it is too old for the bot to see).
    #[serde(default)]
    pub message: Option<Message>,
    #[serde(default)]
    pub data: Option<String>,
}
