//! Requests between the Gateway and Session objects. They travel as JSON
//! `fetch` calls on paths the public router never forwards; an error comes
//! back as a non-2xx answer whose body is an `ErrorShape`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Gateway → Session paths.
pub mod path {
    pub const CHAT_SEND: &str = "/chat.send";
    pub const GET: &str = "/session.get";
    pub const PREVIEW: &str = "/session.preview";
    pub const STATS: &str = "/session.stats";
    pub const HISTORY: &str = "/session.history";
    /// Body: `gsv_protocol::SessionPatchParams`; answers the patched `SessionGetResult`.
    pub const PATCH: &str = "/session.patch";
    /// Body: `gsv_protocol::SessionCompactParams`.
    pub const COMPACT: &str = "/session.compact";
    /// Body: `SessionQuery`; answers `gsv_protocol::SessionResetResult`.
    pub const RESET: &str = "/session.reset";
    /// Body: `gsv_protocol::SessionTranscriptParams`.
    pub const TRANSCRIPT: &str = "/session.transcript";
    /// Session → Gateway: deliver a `chat` event to the session's watchers.
    pub const CHAT_EVENT: &str = "/internal/chat-event";
    /// Session → Gateway: a WebSocket carrying the session's `chat` events
    /// (one text frame per event, in order) while the session is busy, so
    /// streaming costs no object-to-object request per chunk.
    pub const EVENT_LINK: &str = "/internal/event-link";
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionChatSend {
    pub session_key: String,
    pub run_id: String,
    pub message: String,
    /// The effective gateway config (secrets included) at the time of the
    /// message; the session resolves its run from it.
    pub config: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionChatSendReply {
    pub queued: bool,
    /// 0 when the run started at once; otherwise how many runs go first.
    pub queue_position: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionQuery {
    pub session_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}
