//! MESSAGE_CREATE payloads (`d`) as Discord sends them, for injection.

use super::{BOT_USERNAME, BOT_USER_ID};
use serde_json::{json, Value};

pub const USER_ID: &str = "200000000000000002";
pub const USERNAME: &str = "ann";
pub const TIMESTAMP: &str = "2026-11-24T06:35:13.123000+00:00";

fn author() -> Value {
    json!({"id": USER_ID, "username": USERNAME, "discriminator": "0",
           "global_name": "Ann", "avatar": null})
}

fn bot() -> Value {
    json!({"id": BOT_USER_ID, "username": BOT_USERNAME, "discriminator": "0",
           "global_name": null, "avatar": null, "bot": true})
}

fn base(id: &str, channel: &str, content: &str) -> Value {
    json!({
        "id": id, "type": 0, "channel_id": channel, "author": author(), "content": content,
        "timestamp": TIMESTAMP, "edited_timestamp": null, "tts": false,
        "mention_everyone": false, "mentions": [], "mention_roles": [],
        "attachments": [], "embeds": [], "pinned": false, "flags": 0
    })
}

/// A DM (no `guild_id`) in channel `dm-channel`.
pub fn dm(id: &str, content: &str) -> Value {
    base(id, "300000000000000003", content)
}

/// A guild message in channel `channel`, mentioning the bot or not.
pub fn guild(id: &str, channel: &str, content: &str, mention_bot: bool) -> Value {
    let mut m = base(id, channel, content);
    m["guild_id"] = json!("400000000000000004");
    m["member"] =
        json!({"nick": null, "roles": [], "joined_at": TIMESTAMP, "deaf": false, "mute": false});
    if mention_bot {
        m["mentions"] = json!([bot()]);
    }
    m
}

/// A reply (type 19) to the bot's message `to`.
pub fn reply_to_bot(id: &str, channel: &str, content: &str, to: &str, to_text: &str) -> Value {
    let mut m = base(id, channel, content);
    m["type"] = json!(19);
    m["message_reference"] = json!({"type": 0, "message_id": to, "channel_id": channel});
    let mut referenced = base(to, channel, to_text);
    referenced["author"] = bot();
    m["referenced_message"] = referenced;
    m
}

/// Adds an attachment.
pub fn with_attachment(mut m: Value, filename: &str, content_type: &str, size: u64) -> Value {
    let url = format!(
        "https://cdn.discordapp.com/attachments/{}/500/{filename}",
        m["channel_id"].as_str().unwrap_or_default()
    );
    let list = m["attachments"].as_array_mut();
    if let Some(list) = list {
        list.push(
            json!({"id": "500000000000000005", "filename": filename, "size": size,
                         "url": url, "proxy_url": url, "content_type": content_type}),
        );
    }
    m
}

/// A message by another bot (which the channel must ignore).
pub fn from_bot(id: &str, content: &str) -> Value {
    let mut m = dm(id, content);
    m["author"] = json!({"id": "600000000000000006", "username": "otherbot", "discriminator": "0", "bot": true});
    m
}
