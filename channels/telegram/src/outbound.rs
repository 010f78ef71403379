//! A piece of an answer, as Bot API calls: where it goes (the chat, its
//! forum topic, the message it answers), its text in Telegram's HTML, its
//! buttons, and a file's upload (`sendPhoto`, `sendVoice`, … as
//! `multipart/form-data`). The sent message's id comes back as
//! `"{chat id}:{message id}"`, the shape inbound ids have (Telegram
//! numbers messages per chat).

use crate::api::{chat_id, ApiCall, ApiError};
use crate::markdown;
use gsv_channel_worker::multipart::Form;
use gsv_protocol::channels::{ChannelAction, ChannelPeer};
use serde::Deserialize;
use serde_json::{json, Value};

/// A caption's limit (characters after entities are parsed).
pub const MAX_CAPTION_CHARS: usize = 1_024;
/// `callback_data`'s limit, in bytes.
pub const MAX_CALLBACK_BYTES: usize = 64;
const MB: u64 = 1024 * 1024;
/// The largest file a bot may upload.
pub const MAX_UPLOAD_BYTES: u64 = 50 * MB;
/// The largest photo `sendPhoto` takes (larger images go as documents).
const MAX_PHOTO_BYTES: u64 = 10 * MB;

/// Where a piece goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub chat: String,
    /// The forum topic (`message_thread_id`).
    pub thread: Option<i64>,
    /// The message answered (its id within the chat).
    pub reply_to: Option<i64>,
}

/// The target of a piece to `peer`, answering `reply_to_id` (an inbound
/// id, `"{chat id}:{message id}"`) when it names a message of that chat.
pub fn target(peer: &ChannelPeer, reply_to_id: Option<&str>) -> Result<Target, String> {
    let chat = peer.id.trim();
    if chat.is_empty() {
        return Err("no chat: the peer id is empty".into());
    }
    let thread = match peer.thread_id.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(t) => Some(
            t.parse::<i64>()
                .map_err(|_| format!("{t:?} is not a Telegram forum topic id"))?,
        ),
    };
    let reply_to = reply_to_id
        .and_then(|id| id.rsplit_once(':'))
        .filter(|(c, _)| *c == chat)
        .and_then(|(_, m)| m.parse::<i64>().ok());
    Ok(Target {
        chat: chat.to_string(),
        thread,
        reply_to,
    })
}

/// The fields every send has, in order: the chat, its topic, the reply
/// and the buttons.
fn common(target: &Target, actions: &[ChannelAction]) -> Vec<(&'static str, Value)> {
    let mut fields = vec![("chat_id", chat_id(&target.chat))];
    if let Some(thread) = target.thread {
        fields.push(("message_thread_id", json!(thread)));
    }
    if let Some(id) = target.reply_to {
        // The message may be gone by now: the answer goes out all the same.
        fields.push((
            "reply_parameters",
            json!({"message_id": id, "allow_sending_without_reply": true}),
        ));
    }
    if let Some(keyboard) = keyboard(actions) {
        fields.push(("reply_markup", keyboard));
    }
    fields
}

/// The buttons as an inline keyboard, one row; a button whose answer is
/// longer than Telegram's `callback_data` takes is left out (its text
/// still says how to answer).
pub fn keyboard(actions: &[ChannelAction]) -> Option<Value> {
    let row: Vec<Value> = actions
        .iter()
        .filter(|a| !a.text.is_empty() && a.text.len() <= MAX_CALLBACK_BYTES)
        .map(|a| json!({"text": a.label, "callback_data": a.text}))
        .collect();
    (!row.is_empty()).then(|| json!({"inline_keyboard": [row]}))
}

/// `sendMessage`: the text as HTML from its Markdown, or `plain` (the
/// fallback when Telegram cannot read the HTML).
pub fn send_message(
    target: &Target,
    text: &str,
    plain: bool,
    actions: &[ChannelAction],
) -> ApiCall {
    let mut body: Value = common(target, actions)
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect::<serde_json::Map<_, _>>()
        .into();
    match plain {
        true => body["text"] = json!(text),
        false => {
            body["text"] = json!(markdown::to_html(text));
            body["parse_mode"] = json!("HTML");
        }
    }
    ApiCall {
        method: "sendMessage",
        body,
    }
}

/// The sent message's id, `"{chat id}:{message id}"`, from a send's answer.
pub fn sent_id(status: u16, body: &str) -> Result<String, ApiError> {
    #[derive(Deserialize)]
    struct Sent {
        message_id: i64,
        chat: Chat,
    }
    #[derive(Deserialize)]
    struct Chat {
        id: i64,
    }
    let sent: Sent = crate::api::answer(status, body)?;
    Ok(format!("{}:{}", sent.chat.id, sent.message_id))
}

// ---- files ----

/// How a file goes out: the method and the name of its file field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileMethod {
    Photo,
    Voice,
    Audio,
    Video,
    Document,
}

impl FileMethod {
    pub fn method(self) -> &'static str {
        match self {
            Self::Photo => "sendPhoto",
            Self::Voice => "sendVoice",
            Self::Audio => "sendAudio",
            Self::Video => "sendVideo",
            Self::Document => "sendDocument",
        }
    }

    pub fn field(self) -> &'static str {
        match self {
            Self::Photo => "photo",
            Self::Voice => "voice",
            Self::Audio => "audio",
            Self::Video => "video",
            Self::Document => "document",
        }
    }
}

/// The method a file of `mime` and `size` bytes goes by: as a photo,
/// voice note, audio track or video where Telegram plays that format at
/// that size (JPEG/PNG/WebP ≤ 10 MB; Ogg Opus; MP3/M4A; MP4), else as a
/// document; over 50 MB, why not.
pub fn file_method(mime: &str, size: u64) -> Result<FileMethod, String> {
    if size > MAX_UPLOAD_BYTES {
        return Err(format!(
            "the file is {:.1} MB; Telegram bots may send files of at most 50 MB",
            size as f64 / MB as f64
        ));
    }
    let mime = mime.to_ascii_lowercase();
    let base = mime.split(';').next().unwrap_or_default().trim();
    Ok(match base {
        "image/jpeg" | "image/png" | "image/webp" if size <= MAX_PHOTO_BYTES => FileMethod::Photo,
        "audio/ogg" | "audio/opus" => FileMethod::Voice,
        "audio/mpeg" | "audio/mp3" | "audio/mp4" | "audio/m4a" | "audio/x-m4a" => FileMethod::Audio,
        "video/mp4" => FileMethod::Video,
        _ => FileMethod::Document,
    })
}

/// Whether a piece's text fits under its file as the caption.
pub fn fits_caption(text: &str) -> bool {
    text.chars().count() <= MAX_CAPTION_CHARS
}

/// A file's upload: the method, `Content-Type` and body, with `caption`
/// (HTML from its Markdown, or `plain`) when given.
pub struct Upload<'a> {
    pub target: &'a Target,
    pub method: FileMethod,
    pub filename: &'a str,
    pub mime: &'a str,
    pub bytes: &'a [u8],
    pub caption: Option<&'a str>,
    pub actions: &'a [ChannelAction],
}

impl Upload<'_> {
    pub fn form(&self, boundary: &str, plain: bool) -> (String, Vec<u8>) {
        let mut form = Form::new(boundary);
        for (name, value) in common(self.target, self.actions) {
            // Objects (reply_parameters, reply_markup) go as JSON text.
            let text = match value {
                Value::String(s) => s,
                other => other.to_string(),
            };
            form.field(name, &text);
        }
        if let Some(caption) = self.caption.filter(|c| !c.trim().is_empty()) {
            match plain {
                true => form.field("caption", caption),
                false => form
                    .field("caption", &markdown::to_html(caption))
                    .field("parse_mode", "HTML"),
            };
        }
        form.file(self.method.field(), self.filename, self.mime, self.bytes);
        form.finish()
    }
}

#[cfg(test)]
#[path = "outbound_tests.rs"]
mod tests;
