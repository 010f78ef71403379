//! What a model call gets of the files in the history. The stored
//! messages name files by R2 key; for each call, `plan` says which files
//! to read (the newest images that fit the provider's limits, text
//! documents), the shell reads them (through the isolate's cache) and
//! `apply` returns the history to send: images as image blocks with their
//! bytes, documents as text, audio as its transcript, video and anything
//! the model cannot take as a note that says what the file is and why.
//! A file that is gone becomes a note too: a model call never fails on a
//! missing file.

use super::cache::Prepared;
use super::mime::{essence, is_text_like};
use super::{image, notes, size_text, MediaType};
use gsv_protocol::{Attachment, ContentBlock, Message, UserContent};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// What one provider's API takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Named in notes ("larger than the 5.0 MB Anthropic takes").
    pub provider: &'static str,
    pub image_types: &'static [&'static str],
    pub max_image_bytes: u64,
    /// The longest side, in pixels.
    pub max_image_side: u32,
    /// Images sent with one request (the newest; older ones become notes).
    pub max_images: usize,
    /// Their bytes together. Each image is held base64 in the cache, in
    /// the history of the call and in its request body, and its request
    /// goes to JS too: 10 MB of images keeps a call within the isolate's
    /// 128 MB beside a full 50 MB cache (and within both APIs' requests).
    pub max_total_image_bytes: u64,
    /// A text document's inlined characters (`tools.maxResultChars`).
    pub max_document_chars: usize,
}

const MB: u64 = 1024 * 1024;

impl Limits {
    /// The limits of the API `api` speaks (`anthropic-messages`, or Chat
    /// Completions for anything else). Anthropic: JPEG/PNG/GIF/WebP of at
    /// most 5 MB and 8000 px a side, requests of at most 32 MB; OpenAI:
    /// 20 MB an image, 50 MB a request (here 10 MB, the call's budget).
    pub fn for_api(api: &str, max_document_chars: usize) -> Self {
        const TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];
        match api {
            "anthropic-messages" => Self {
                provider: "Anthropic",
                image_types: TYPES,
                max_image_bytes: 5 * MB,
                max_image_side: 8000,
                max_images: 20,
                max_total_image_bytes: 10 * MB,
                max_document_chars,
            },
            _ => Self {
                provider: "the model's API",
                image_types: TYPES,
                max_image_bytes: 10 * MB,
                max_image_side: u32::MAX,
                max_images: 20,
                max_total_image_bytes: 10 * MB,
                max_document_chars,
            },
        }
    }
}

/// A file one call reads.
#[derive(Debug, Clone, PartialEq)]
pub struct ToRead {
    pub key: String,
    pub kind: MediaType,
    pub mime: String,
    pub filename: Option<String>,
}

/// The files one call reads, and the images it leaves out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// Images and text documents, newest first.
    pub read: Vec<ToRead>,
    /// Images not sent, with why (too large, or older than the ones sent).
    pub skipped: HashMap<String, String>,
}

/// A file as the shell read it for a call: prepared, absent (`None`), or
/// the read failed (the error).
pub type Loaded = Result<Option<Prepared>, String>;

fn user_blocks(history: &[Message]) -> impl DoubleEndedIterator<Item = &ContentBlock> {
    history.iter().flat_map(|m| match m {
        Message::User(u) => match &u.content {
            UserContent::Blocks(b) => b.as_slice(),
            UserContent::Text(_) => &[],
        },
        Message::ToolResult(r) => r.content.as_slice(),
        Message::Assistant(_) => &[],
    })
}

/// Which files the call needs: the newest images first, while they fit
/// the count and the byte budget (an image known to be too large is not
/// read at all), and every text document.
pub fn plan(history: &[Message], limits: &Limits) -> Plan {
    let mut plan = Plan::default();
    let mut seen = HashSet::new();
    let (mut count, mut total) = (0usize, 0u64);
    for block in user_blocks(history).rev() {
        match block {
            ContentBlock::Image {
                data: None,
                r2_key: Some(key),
                size,
                mime_type,
                filename,
            } => {
                if !seen.insert(key.clone()) {
                    continue;
                }
                let size = size.unwrap_or(0);
                if size > limits.max_image_bytes {
                    plan.skipped.insert(key.clone(), too_large(size, limits));
                } else if count >= limits.max_images {
                    plan.skipped.insert(
                        key.clone(),
                        format!(
                            "sent earlier in the conversation; only the {} most recent images \
                             go with each request",
                            limits.max_images
                        ),
                    );
                } else if total + size > limits.max_total_image_bytes {
                    plan.skipped.insert(
                        key.clone(),
                        "sent earlier in the conversation; the newer images fill this \
                         request's size budget"
                            .to_string(),
                    );
                } else {
                    count += 1;
                    total += size;
                    plan.read.push(ToRead {
                        key: key.clone(),
                        kind: MediaType::Image,
                        mime: mime_type.clone(),
                        filename: filename.clone(),
                    });
                }
            }
            ContentBlock::Attachment(a)
                if a.kind == MediaType::Document
                    && is_text_like(&a.mime_type, a.filename.as_deref())
                    && seen.insert(a.r2_key.clone()) =>
            {
                plan.read.push(ToRead {
                    key: a.r2_key.clone(),
                    kind: a.kind,
                    mime: a.mime_type.clone(),
                    filename: a.filename.clone(),
                });
            }
            _ => {}
        }
    }
    plan
}

fn too_large(size: u64, limits: &Limits) -> String {
    format!(
        "{} is larger than the {} {} takes",
        size_text(size),
        size_text(limits.max_image_bytes),
        limits.provider
    )
}

/// A file's bytes made ready for calls (and for the cache): an image's
/// real type, size and base64; a document's text; or what to say instead.
pub fn prepare(kind: MediaType, mime: &str, filename: Option<&str>, bytes: &[u8]) -> Prepared {
    match kind {
        MediaType::Image => match image::sniff(bytes) {
            Some(real) => Prepared::Image {
                mime: real.to_string(),
                base64: Rc::from(base64_encode(bytes)),
                bytes: bytes.len() as u64,
                pixels: image::dimensions(bytes),
            },
            None => Prepared::Unreadable(Rc::from(format!(
                "its format ({}) is not one models take (JPEG, PNG, GIF, WebP)",
                essence(mime)
            ))),
        },
        _ if is_text_like(mime, filename) => {
            Prepared::Text(Rc::from(String::from_utf8_lossy(bytes).into_owned()))
        }
        _ => Prepared::Unreadable(Rc::from(unreadable_reason(mime))),
    }
}

/// Why a document's content is not given to the model.
pub fn unreadable_reason(mime: &str) -> String {
    match essence(mime).as_str() {
        "application/pdf" => {
            "its text cannot be read here (PDF text extraction is not available in the gateway); \
             ask the sender to paste the part that matters"
                .to_string()
        }
        other => format!(
            "its content cannot be read here ({other} is not a text format); ask the sender \
             for the part that matters as text"
        ),
    }
}

pub fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The history as this call sends it (the stored history is unchanged).
pub fn apply(
    history: &[Message],
    plan: &Plan,
    loaded: &HashMap<String, Loaded>,
    limits: &Limits,
) -> Vec<Message> {
    history
        .iter()
        .map(|m| match m {
            Message::User(u) => match &u.content {
                UserContent::Blocks(blocks) => {
                    let mut u = u.clone();
                    u.content = UserContent::Blocks(
                        blocks
                            .iter()
                            .map(|b| block(b, plan, loaded, limits))
                            .collect(),
                    );
                    Message::User(u)
                }
                UserContent::Text(_) => m.clone(),
            },
            Message::ToolResult(r) => {
                let mut r = r.clone();
                r.content = r
                    .content
                    .iter()
                    .map(|b| block(b, plan, loaded, limits))
                    .collect();
                Message::ToolResult(r)
            }
            Message::Assistant(_) => m.clone(),
        })
        .collect()
}

fn text(text: String) -> ContentBlock {
    ContentBlock::Text { text }
}

fn block(
    b: &ContentBlock,
    plan: &Plan,
    loaded: &HashMap<String, Loaded>,
    limits: &Limits,
) -> ContentBlock {
    match b {
        ContentBlock::Image {
            data: None,
            r2_key: Some(key),
            mime_type,
            filename,
            size,
        } => {
            let name = filename.as_deref();
            if let Some(why) = plan.skipped.get(key) {
                return text(notes::image_not_shown(name, mime_type, *size, why));
            }
            match loaded.get(key) {
                Some(Ok(Some(Prepared::Image {
                    mime,
                    base64,
                    bytes,
                    pixels,
                }))) => {
                    let why = image_refusal(mime, *bytes, *pixels, limits);
                    match why {
                        Some(why) => text(notes::image_not_shown(name, mime, Some(*bytes), &why)),
                        None => ContentBlock::Image {
                            data: Some(base64.to_string()),
                            mime_type: mime.clone(),
                            r2_key: Some(key.clone()),
                            filename: filename.clone(),
                            size: Some(*bytes),
                        },
                    }
                }
                Some(Ok(Some(Prepared::Unreadable(why)))) => {
                    text(notes::image_not_shown(name, mime_type, *size, why))
                }
                Some(Ok(Some(Prepared::Text(_)))) | Some(Ok(None)) => {
                    text(notes::image_unavailable(name))
                }
                Some(Err(e)) => text(notes::unreadable(
                    MediaType::Image,
                    &notes::describe(name, mime_type, *size, None),
                    e,
                )),
                None => text(notes::image_unavailable(name)),
            }
        }
        ContentBlock::Attachment(a) => text(attachment(a, loaded, limits)),
        other => other.clone(),
    }
}

fn image_refusal(
    mime: &str,
    bytes: u64,
    pixels: Option<(u32, u32)>,
    limits: &Limits,
) -> Option<String> {
    if !limits.image_types.contains(&mime) {
        return Some(format!(
            "its format ({mime}) is not one {} takes",
            limits.provider
        ));
    }
    if bytes > limits.max_image_bytes {
        return Some(too_large(bytes, limits));
    }
    match pixels {
        Some((w, h)) if w.max(h) > limits.max_image_side => Some(format!(
            "{w}×{h} pixels is larger than the {side}×{side} {} takes",
            limits.provider,
            side = limits.max_image_side
        )),
        _ => None,
    }
}

fn attachment(a: &Attachment, loaded: &HashMap<String, Loaded>, limits: &Limits) -> String {
    match a.kind {
        MediaType::Audio => notes::audio(a),
        MediaType::Video => notes::video(a),
        // An image kept as an attachment (a format no model takes).
        MediaType::Image => notes::document_unreadable(a, "not an image format models take"),
        MediaType::Document => match loaded.get(&a.r2_key) {
            Some(Ok(Some(Prepared::Text(t)))) => {
                notes::document_text(a, t, limits.max_document_chars)
            }
            Some(Ok(Some(Prepared::Unreadable(why)))) => notes::document_unreadable(a, why),
            Some(Ok(Some(Prepared::Image { .. }))) => {
                notes::document_unreadable(a, "not a text format")
            }
            Some(Ok(None)) => notes::unavailable(a),
            Some(Err(e)) => notes::unreadable(
                MediaType::Document,
                &notes::describe(a.filename.as_deref(), &a.mime_type, a.size, None),
                e,
            ),
            // Not read for this call: a format the model cannot read.
            None => notes::document_unreadable(a, &unreadable_reason(&a.mime_type)),
        },
    }
}

/// Where a transcript is kept: the stored message holding the audio
/// (the Session's store).
pub trait TranscriptStore {
    fn save_transcript(&self, key: &str, outcome: &Result<String, String>) -> Result<(), String>;
}

/// The audio files of the history not yet transcribed (nor failed to be).
pub fn untranscribed(history: &[Message]) -> Vec<Attachment> {
    let mut out: Vec<Attachment> = Vec::new();
    for b in user_blocks(history) {
        if let ContentBlock::Attachment(a) = b {
            let pending = a.kind == MediaType::Audio
                && a.transcript.is_none()
                && a.transcript_error.is_none();
            if pending && !out.iter().any(|o| o.r2_key == a.r2_key) {
                out.push(a.clone());
            }
        }
    }
    out
}

/// Writes a transcription's outcome into the attachment `key` of
/// `message`; false when the message has no such attachment.
pub fn set_transcript(message: &mut Message, key: &str, outcome: &Result<String, String>) -> bool {
    let Message::User(u) = message else {
        return false;
    };
    let UserContent::Blocks(blocks) = &mut u.content else {
        return false;
    };
    let mut found = false;
    for b in blocks.iter_mut() {
        if let ContentBlock::Attachment(a) = b {
            if a.r2_key == key {
                match outcome {
                    Ok(t) => a.transcript = Some(t.clone()),
                    Err(e) => a.transcript_error = Some(e.clone()),
                }
                found = true;
            }
        }
    }
    found
}
