//! The stored user message of a message with attachments (v1's
//! `buildUserMessage`): the text, then one block per file — an image by
//! its R2 key, any other kept file as an attachment block, a file not kept
//! as a note. Without attachments the content stays plain text, as v1
//! stores it.

use super::{notes, Attached, MediaType};
use gsv_protocol::{Attachment, ContentBlock, UserContent};

pub fn user_content(text: &str, media: &[Attached]) -> UserContent {
    if media.is_empty() {
        return UserContent::Text(text.to_string());
    }
    let mut blocks = Vec::new();
    if !text.trim().is_empty() {
        blocks.push(ContentBlock::Text {
            text: text.to_string(),
        });
    }
    for a in media {
        blocks.push(match (&a.r2_key, a.kind) {
            (Some(key), MediaType::Image) => ContentBlock::Image {
                data: None,
                mime_type: a.mime_type.clone(),
                r2_key: Some(key.clone()),
                filename: a.filename.clone(),
                size: a.size,
            },
            (Some(key), kind) => ContentBlock::Attachment(Attachment {
                kind,
                mime_type: a.mime_type.clone(),
                r2_key: key.clone(),
                filename: a.filename.clone(),
                size: a.size,
                duration: a.duration,
                transcript: None,
                transcript_error: None,
            }),
            (None, _) => ContentBlock::Text {
                text: notes::not_kept(a),
            },
        });
    }
    UserContent::Blocks(blocks)
}
