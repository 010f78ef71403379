//! What the model reads in place of a file it cannot see: one bracketed
//! line naming the file (name, type, size, length) and what became of it.
//! Written so the model can tell the person something useful.

use super::{size_text, Attached, MediaType};
use gsv_protocol::Attachment;

/// `photo.jpg (image/jpeg, 1.2 MB, 0:14)`.
pub fn describe(
    filename: Option<&str>,
    mime: &str,
    size: Option<u64>,
    duration: Option<f64>,
) -> String {
    let mut details = vec![mime.to_string()];
    details.extend(size.map(size_text));
    details.extend(duration.map(clock));
    match filename.filter(|n| !n.trim().is_empty()) {
        Some(name) => format!("{name} ({})", details.join(", ")),
        None => format!("({})", details.join(", ")),
    }
}

/// Seconds as `m:ss` (`1:02:03` past an hour).
pub fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s / 3600 {
        0 => format!("{}:{:02}", s / 60, s % 60),
        h => format!("{h}:{:02}:{:02}", (s % 3600) / 60, s % 60),
    }
}

fn noun(kind: MediaType) -> &'static str {
    match kind {
        MediaType::Image => "Image",
        MediaType::Audio => "Audio",
        MediaType::Video => "Video",
        MediaType::Document => "Document",
    }
}

fn describe_attachment(a: &Attachment) -> String {
    describe(a.filename.as_deref(), &a.mime_type, a.size, a.duration)
}

/// A file of an incoming message that was not kept.
pub fn not_kept(a: &Attached) -> String {
    let what = describe(a.filename.as_deref(), &a.mime_type, a.size, a.duration);
    let why = a.refused.as_deref().unwrap_or("it could not be stored");
    format!("[{} attached but not kept: {what}: {why}]", noun(a.kind))
}

/// An image whose file is gone (deleted by a reset, or by hand).
pub fn image_unavailable(filename: Option<&str>) -> String {
    match filename.filter(|n| !n.trim().is_empty()) {
        Some(name) => format!("[Image no longer available: {name}]"),
        None => "[Image no longer available]".to_string(),
    }
}

/// An image kept but not shown to this model, and why.
pub fn image_not_shown(filename: Option<&str>, mime: &str, size: Option<u64>, why: &str) -> String {
    format!(
        "[Image attached but not shown to you: {}: {why}]",
        describe(filename, mime, size, None)
    )
}

/// Any other kept file that is gone.
pub fn unavailable(a: &Attachment) -> String {
    format!(
        "[{} no longer available: {}]",
        noun(a.kind),
        describe_attachment(a)
    )
}

/// A file that could not be read back for this call (R2 failed).
pub fn unreadable(kind: MediaType, what: &str, why: &str) -> String {
    format!(
        "[{} attached but could not be read just now: {what}: {why}]",
        noun(kind)
    )
}

/// Audio, with its transcript or why there is none.
pub fn audio(a: &Attachment) -> String {
    let voice = a.filename.as_deref().is_none_or(|n| n.trim().is_empty());
    match (&a.transcript, voice) {
        (Some(t), true) => format!("[Voice message transcription: {}]", t.trim()),
        (Some(t), false) => format!(
            "[Audio attached: {}, transcription: {}]",
            describe_attachment(a),
            t.trim()
        ),
        (None, _) => {
            let why = a
                .transcript_error
                .as_deref()
                .unwrap_or("no transcription provider is configured");
            let what = if voice { "Voice message" } else { "Audio" };
            format!(
                "[{what} received, transcription unavailable: {}: {why}]",
                describe_attachment(a)
            )
        }
    }
}

/// A video: what it is; the model cannot watch it.
pub fn video(a: &Attachment) -> String {
    format!(
        "[Video attached: {}. You cannot watch videos here; if its content matters, ask the \
         sender to describe it or to send a screenshot.]",
        describe_attachment(a)
    )
}

/// A text document inlined (cut at `limit` characters when longer).
pub fn document_text(a: &Attachment, text: &str, limit: usize) -> String {
    let total = text.chars().count();
    let (body, cut) = match total > limit {
        true => (text.chars().take(limit).collect::<String>(), true),
        false => (text.to_string(), false),
    };
    let mut out = format!(
        "[Document attached: {}]\n<<<document>>>\n{}\n<<<end-document>>>",
        describe_attachment(a),
        body.replace("<<<", "‹‹‹")
    );
    if cut {
        out.push_str(&format!(
            "\n[… cut at {limit} of {total} characters (tools.maxResultChars)]"
        ));
    }
    out
}

/// A document the model cannot read (a PDF, a Word file, a zip…).
pub fn document_unreadable(a: &Attachment, why: &str) -> String {
    format!("[Document attached: {}: {why}]", describe_attachment(a))
}

/// What is said when a block has not been prepared for the model (the
/// shell prepares every block; this is the safe fallback of the bodies).
pub fn unprepared(a: &Attachment) -> String {
    format!("[{} attached: {}]", noun(a.kind), describe_attachment(a))
}

/// A user message as text for a summary or a search: its text, a voice
/// note as its transcript, any other file by name and type (images are
/// left out).
pub fn as_text(content: &gsv_protocol::UserContent) -> String {
    use gsv_protocol::{ContentBlock, UserContent};
    let UserContent::Blocks(blocks) = content else {
        return content.text();
    };
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.clone()),
            ContentBlock::Attachment(a) if a.kind == MediaType::Audio => Some(audio(a)),
            ContentBlock::Attachment(a) => Some(unprepared(a)),
            ContentBlock::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
