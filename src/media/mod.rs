//! Media: the photos, voice notes, videos and documents people send the
//! agent, and the files it sends back. A file is kept once, in R2 at
//! `media/{sessionKey}/{uuid}.{ext}` (at most [`MAX_MEDIA_BYTES`]); the
//! history names it by that key and never holds its bytes. What the model
//! gets of a file is decided at each model call (`hydrate`): an image
//! block in the provider's format, a voice note's transcript (made once
//! and written into the stored message), a document's text, or a note
//! that says what the file is and why the model cannot see it.
//!
//! Everything here is pure; the Worker shells download, stream into R2,
//! read back through the isolate's cache (`cache`) and call the
//! transcription endpoint.

pub mod cache;
pub mod hydrate;
pub mod image;
pub mod key;
pub mod message;
pub mod mime;
pub mod notes;
pub mod outbound;
pub mod transcribe;

#[cfg(test)]
mod tests;

pub use gsv_protocol::channels::MediaType;
use serde::{Deserialize, Serialize};

/// The largest file kept (the seed layout's limit, and Whisper's).
pub const MAX_MEDIA_BYTES: u64 = 25 * 1024 * 1024;

/// An attachment of an incoming message as its session receives it: kept
/// in R2 (`r2_key`), or not kept and why (`refused`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attached {
    pub kind: MediaType,
    pub mime_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// Bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Seconds, for audio and video.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r2_key: Option<String>,
    /// Why it was not kept, in words for the model ("larger than the 25
    /// MB limit"); the sender has been told when it was their file's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// `bytes` for people: `830 B`, `14.2 KB`, `3.1 MB` (binary units).
pub fn size_text(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KB {
        format!("{bytes} B")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else {
        format!("{:.1} MB", b / (KB * KB))
    }
}

/// Why a file over the limit was not kept (for the model's note).
pub fn too_large_reason(size: u64) -> String {
    format!(
        "{} is larger than the {} limit",
        size_text(size),
        size_text(MAX_MEDIA_BYTES)
    )
}

/// What the sender of a file over the limit is told.
pub fn too_large_reply(filename: Option<&str>, size: u64) -> String {
    let name = filename
        .filter(|n| !n.trim().is_empty())
        .map_or("your file".to_string(), |n| n.to_string());
    format!(
        "Sorry, I couldn't take {name}: it is {} and I can take files up to {}.",
        size_text(size),
        size_text(MAX_MEDIA_BYTES)
    )
}
