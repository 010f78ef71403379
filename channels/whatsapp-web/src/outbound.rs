//! An answer → the WhatsApp messages that carry it: text (a reply quotes
//! the message it answers), files after their upload, and each piece's
//! message id, made from its idempotency key so a retried piece is the
//! same message to the phone. Pure; `worker` sends what this builds.

use gsv_protocol::channels::{ChannelCapabilities, MediaType, PeerKind};
use sha2::{Digest, Sha256};
use wa::message::{AudioMessage, DocumentMessage, ImageMessage, VideoMessage};
use whatsapp_rust::wacore::download::MediaType as WaMedia;
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

/// WhatsApp takes messages of up to 65 536 characters.
pub const MAX_TEXT_CHARS: usize = 65_536;

pub fn capabilities() -> ChannelCapabilities {
    ChannelCapabilities {
        chat_types: vec![PeerKind::Dm, PeerKind::Group],
        media: true,
        reactions: false,
        threads: false,
        typing: true,
        editing: false,
        deletion: false,
        qr_login: true,
        max_text_length: MAX_TEXT_CHARS,
    }
}

/// The id a piece is sent under: WhatsApp Web's shape (`3EB0` and 18
/// hex digits), from the piece's idempotency key when it has one.
pub fn message_id(idempotency_key: &str) -> String {
    let digest = Sha256::digest(idempotency_key.as_bytes());
    let hex: String = digest[..9].iter().map(|b| format!("{b:02X}")).collect();
    format!("3EB0{hex}")
}

/// The message a reply quotes, as the phone needs it to show the quote.
#[derive(Debug, Clone, PartialEq)]
pub struct Quote {
    pub id: String,
    /// Who wrote it (a JID).
    pub participant: String,
    /// Its content, when the object still has it.
    pub message: Option<wa::Message>,
}

fn context(quote: Option<&Quote>) -> MessageField<wa::ContextInfo> {
    match quote {
        Some(q) => MessageField::some(wa::ContextInfo {
            stanza_id: Some(q.id.clone()),
            participant: Some(q.participant.clone()),
            quoted_message: match &q.message {
                Some(m) => MessageField::some(m.clone()),
                None => MessageField::none(),
            },
            ..Default::default()
        }),
        None => MessageField::none(),
    }
}

/// A text; quoting `quote` when it answers one.
pub fn text(text: &str, quote: Option<&Quote>) -> wa::Message {
    match quote {
        None => wa::Message {
            conversation: Some(text.to_string()),
            ..Default::default()
        },
        Some(_) => wa::Message {
            extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
                text: Some(text.to_string()),
                context_info: context(quote),
                ..Default::default()
            }),
            ..Default::default()
        },
    }
}

/// How a file goes: the upload's kind, and whether audio is a voice note.
pub fn upload_kind(kind: MediaType, mime: &str) -> WaMedia {
    match kind {
        MediaType::Image if mime != "image/gif" => WaMedia::Image,
        MediaType::Video => WaMedia::Video,
        MediaType::Audio => WaMedia::Audio,
        _ => WaMedia::Document,
    }
}

/// Ogg Opus plays as a voice note (a push-to-talk message), as a phone
/// records one; other audio as a track.
pub fn is_voice(mime: &str) -> bool {
    let base = mime.split(';').next().unwrap_or("").trim();
    matches!(base, "audio/ogg" | "audio/opus")
}

/// A file as WhatsApp's CDN took it (the upload's answer, whose own type
/// is `#[non_exhaustive]` and so cannot be made in tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uploaded {
    pub url: String,
    pub direct_path: String,
    pub media_key: [u8; 32],
    pub file_enc_sha256: [u8; 32],
    pub file_sha256: [u8; 32],
    pub file_length: u64,
    pub media_key_timestamp: i64,
    /// Audio and video: what lets the phone seek before it has the whole
    /// file (the upload computes it).
    pub streaming_sidecar: Option<Vec<u8>>,
}

/// A media message of type `$ty` for the file `$up` (the upload's answer)
/// of type `$mime`: the CDN fields every kind carries alike, then the
/// kind's own.
macro_rules! on_cdn {
    ($ty:ident, $up:expr, $mime:expr, { $($field:ident: $value:expr),* $(,)? }) => {
        $ty {
            url: Some($up.url.clone()),
            direct_path: Some($up.direct_path.clone()),
            media_key: Some($up.media_key.to_vec()),
            file_enc_sha256: Some($up.file_enc_sha256.to_vec()),
            file_sha256: Some($up.file_sha256.to_vec()),
            file_length: Some($up.file_length),
            media_key_timestamp: Some($up.media_key_timestamp),
            mimetype: Some($mime.to_string()),
            $($field: $value,)*
            ..Default::default()
        }
    };
}

/// The message that shows an uploaded file.
pub fn file(
    kind: MediaType,
    mime: &str,
    filename: &str,
    up: &Uploaded,
    caption: Option<&str>,
    quote: Option<&Quote>,
) -> wa::Message {
    let caption = caption.filter(|c| !c.is_empty()).map(str::to_string);
    let context_info = context(quote);
    let mut message = wa::Message::default();
    match upload_kind(kind, mime) {
        WaMedia::Image => {
            message.image_message = MessageField::some(on_cdn!(
                ImageMessage, up, mime, { caption: caption, context_info: context_info }
            ));
        }
        WaMedia::Video => {
            message.video_message = MessageField::some(on_cdn!(
                VideoMessage, up, mime, {
                    caption: caption,
                    streaming_sidecar: up.streaming_sidecar.clone(),
                    context_info: context_info,
                }
            ));
        }
        WaMedia::Audio => {
            message.audio_message = MessageField::some(on_cdn!(
                AudioMessage, up, mime, {
                    ptt: Some(is_voice(mime)),
                    streaming_sidecar: up.streaming_sidecar.clone(),
                    context_info: context_info,
                }
            ));
        }
        _ => {
            message.document_message = MessageField::some(on_cdn!(
                DocumentMessage, up, mime, {
                    file_name: Some(filename.to_string()),
                    title: Some(filename.to_string()),
                    caption: caption,
                    context_info: context_info,
                }
            ));
        }
    }
    message
}

#[cfg(test)]
#[path = "outbound_tests.rs"]
mod tests;
