//! The few Discord gateway payloads the channel reads and writes (v10, JSON
//! encoding). Own minimal serde types rather than `twilight-model`: the
//! channel reads five events, and a full model of every Discord object would
//! multiply the Worker's wasm for fields nobody reads.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub mod op {
    pub const DISPATCH: u8 = 0;
    pub const HEARTBEAT: u8 = 1;
    pub const IDENTIFY: u8 = 2;
    pub const RESUME: u8 = 6;
    pub const RECONNECT: u8 = 7;
    pub const INVALID_SESSION: u8 = 9;
    pub const HELLO: u8 = 10;
    pub const HEARTBEAT_ACK: u8 = 11;
}

/// Gateway intents the channel asks for by default: guild metadata, guild
/// and DM messages, and their content (a privileged intent).
pub mod intents {
    pub const GUILDS: u64 = 1 << 0;
    pub const GUILD_MESSAGES: u64 = 1 << 9;
    pub const DIRECT_MESSAGES: u64 = 1 << 12;
    pub const MESSAGE_CONTENT: u64 = 1 << 15;
    pub const DEFAULT: u64 = GUILDS | GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT;
}

/// Every gateway payload: `{op, d, s, t}`.
#[derive(Debug, Clone, Deserialize)]
pub struct Frame {
    pub op: u8,
    #[serde(default)]
    pub d: Value,
    #[serde(default)]
    pub s: Option<u64>,
    #[serde(default)]
    pub t: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Hello {
    pub heartbeat_interval: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    pub id: String,
    #[serde(default)]
    pub username: String,
    #[serde(default)]
    pub global_name: Option<String>,
    #[serde(default)]
    pub bot: Option<bool>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Ready {
    pub session_id: String,
    pub resume_gateway_url: String,
    pub user: User,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Attachment {
    pub filename: String,
    #[serde(default)]
    pub content_type: Option<String>,
    #[serde(default)]
    pub size: Option<u64>,
    pub url: String,
    #[serde(default)]
    pub duration_secs: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct MessageReference {
    #[serde(default)]
    pub message_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Member {
    #[serde(default)]
    pub nick: Option<String>,
}

/// A Discord Message object (MESSAGE_CREATE's `d`, also what
/// `POST /channels/{id}/messages` returns).
#[derive(Debug, Clone, Deserialize)]
pub struct Message {
    pub id: String,
    pub channel_id: String,
    #[serde(default)]
    pub guild_id: Option<String>,
    pub author: User,
    #[serde(default)]
    pub member: Option<Member>,
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub timestamp: Option<String>,
    #[serde(default)]
    pub mentions: Vec<User>,
    #[serde(default)]
    pub attachments: Vec<Attachment>,
    #[serde(default)]
    pub message_reference: Option<MessageReference>,
    #[serde(default)]
    pub referenced_message: Option<Box<Message>>,
}

pub fn heartbeat(seq: Option<u64>) -> String {
    json!({"op": op::HEARTBEAT, "d": seq}).to_string()
}

pub fn identify(token: &str, intents: u64) -> String {
    json!({
        "op": op::IDENTIFY,
        "d": {
            "token": token,
            "intents": intents,
            "properties": {"os": "cloudflare", "browser": "gsv", "device": "gsv"}
        }
    })
    .to_string()
}

pub fn resume(token: &str, session_id: &str, seq: Option<u64>) -> String {
    json!({"op": op::RESUME, "d": {"token": token, "session_id": session_id, "seq": seq}})
        .to_string()
}

/// The URL to open: the base Discord gave (`GET /gateway/bot` or a
/// `resume_gateway_url`) with the version and encoding this channel speaks.
pub fn connect_url(base: &str) -> String {
    format!("{}/?v=10&encoding=json", base.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames() {
        let v: Value = serde_json::from_str(&identify("tok", intents::DEFAULT)).unwrap();
        assert_eq!(
            v,
            json!({"op": 2, "d": {"token": "tok", "intents": 37377,
                "properties": {"os": "cloudflare", "browser": "gsv", "device": "gsv"}}})
        );
        let v: Value = serde_json::from_str(&resume("tok", "s1", Some(7))).unwrap();
        assert_eq!(
            v,
            json!({"op": 6, "d": {"token": "tok", "session_id": "s1", "seq": 7}})
        );
        let beat = |seq| serde_json::from_str::<Value>(&heartbeat(seq)).unwrap();
        assert_eq!(beat(None), json!({"op": 1, "d": null}));
        assert_eq!(beat(Some(3)), json!({"op": 1, "d": 3}));
    }

    #[test]
    fn urls() {
        assert_eq!(
            connect_url("wss://gateway.discord.gg"),
            "wss://gateway.discord.gg/?v=10&encoding=json"
        );
        assert_eq!(
            connect_url("ws://127.0.0.1:9/"),
            "ws://127.0.0.1:9/?v=10&encoding=json"
        );
    }
}
