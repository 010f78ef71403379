//! The internal calls between the objects as types: each names its path
//! (`session::internal::path`) and its reply, so a caller cannot pair a
//! request with the wrong path or decode the wrong answer. The Worker's
//! typed stubs (`worker/bindings.rs`) send them.
//!
//! A request body used on several paths (`SessionQuery`) is wrapped once
//! per path; the wrapper serializes as the body itself.

use crate::gateway::transfer::TransferRequest;
use crate::session::internal::{
    path, AgentSessionsQuery, SessionChatSend, SessionChatSendReply, SessionExecEvent,
    SessionQuery, ToolRequestReply, TransferReply,
};
use gsv_protocol::{
    AckResult, ChatAbortResult, ChatEvent, SessionCompactParams, SessionCompactResult,
    SessionGetResult, SessionHistoryResult, SessionPatchParams, SessionPreviewResult,
    SessionResetResult, SessionStatsResult, SessionTranscriptParams, SessionTranscriptResult,
    SessionsListResult, ToolRequestParams, ToolResultParams,
};
use serde::{de::DeserializeOwned, Deserialize, Serialize};

/// A request to another object: its body, where it goes, what comes back.
/// (The channel contract has its own, `gsv_protocol::channels::InternalCall`:
/// this crate implements this one for protocol types, which a trait of
/// another crate would not allow.)
pub trait InternalCall: Serialize {
    const PATH: &'static str;
    type Reply: DeserializeOwned;
}

/// Session → Gateway: `gsv__Message`.
impl InternalCall for crate::session::internal::ChannelMessageRequest {
    const PATH: &'static str = path::CHANNEL_MESSAGE;
    type Reply = crate::session::internal::ChannelMessageReply;
}

/// Session → Gateway: `gsv__Cron`.
impl InternalCall for crate::schedule::tool::CronToolRequest {
    const PATH: &'static str = path::CRON_TOOL;
    type Reply = crate::schedule::tool::CronToolReply;
}

/// Session → Gateway: a call of an `ask` tool.
impl InternalCall for crate::session::internal::AskApproval {
    const PATH: &'static str = path::ASK_APPROVAL;
    type Reply = crate::session::internal::AskReply;
}

/// Gateway → Session: the owner's decision on a call.
impl InternalCall for crate::session::internal::ApprovalDecided {
    const PATH: &'static str = path::APPROVAL_DECIDED;
    type Reply = gsv_protocol::AckResult;
}

/// Gateway → Session: how a chat's run stands.
impl InternalCall for crate::session::internal::RunOutcomeQuery {
    const PATH: &'static str = path::RUN_OUTCOME;
    type Reply = crate::session::internal::RunOutcome;
}

/// Session → Gateway: a tool call of a turn below the owner.
impl InternalCall for crate::session::internal::AuditRecord {
    const PATH: &'static str = path::AUDIT;
    type Reply = gsv_protocol::AckResult;
}

/// Worker → Gateway: a session key made canonical (an upload's).
impl InternalCall for crate::session::internal::CanonicalKey {
    const PATH: &'static str = path::CANONICAL_KEY;
    type Reply = crate::session::internal::CanonicalKey;
}

/// Session → Gateway: its run wrote the workspace; MemoryIndex → Gateway:
/// the index got its first memory.
impl InternalCall for crate::session::internal::WorkspaceChanged {
    const PATH: &'static str = path::WORKSPACE_CHANGED;
    type Reply = gsv_protocol::WorkspaceRefreshResult;
}

/// Session → Gateway: the registry's sessions of one agent.
impl InternalCall for AgentSessionsQuery {
    const PATH: &'static str = path::AGENT_SESSIONS;
    type Reply = SessionsListResult;
}

/// → Session: its id, key and size.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Stats(pub SessionQuery);

impl InternalCall for Stats {
    const PATH: &'static str = path::STATS;
    type Reply = SessionStatsResult;
}

/// → Session: its id and history.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Preview(pub SessionQuery);

impl InternalCall for Preview {
    const PATH: &'static str = path::PREVIEW;
    type Reply = SessionPreviewResult;
}

/// → Session: its session reset (archived, a new id).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Reset(pub SessionQuery);

impl InternalCall for Reset {
    const PATH: &'static str = path::RESET;
    type Reply = SessionResetResult;
}

/// Gateway → Session: a message for a run, a command or directives.
impl InternalCall for SessionChatSend {
    const PATH: &'static str = path::CHAT_SEND;
    type Reply = SessionChatSendReply;
}

/// Gateway → Session: settings changed; answers the patched session.
impl InternalCall for SessionPatchParams {
    const PATH: &'static str = path::PATCH;
    type Reply = SessionGetResult;
}

/// Gateway → Session: a node's answer to a tool call.
impl InternalCall for ToolResultParams {
    const PATH: &'static str = path::TOOL_RESULT;
    type Reply = AckResult;
}

/// Gateway → Session: a background command ended.
impl InternalCall for SessionExecEvent {
    const PATH: &'static str = path::EXEC_EVENT;
    type Reply = AckResult;
}

/// Gateway → Session: `session.compact`.
impl InternalCall for SessionCompactParams {
    const PATH: &'static str = path::COMPACT;
    type Reply = SessionCompactResult;
}

/// Gateway → Session: `session.transcript`.
impl InternalCall for SessionTranscriptParams {
    const PATH: &'static str = path::TRANSCRIPT;
    type Reply = SessionTranscriptResult;
}

impl InternalCall for crate::session::internal::UsageDays {
    const PATH: &'static str = path::USAGE_DAYS;
    type Reply = Vec<gsv_protocol::DayUsage>;
}

/// → Session: its id, key, settings and size.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Get(pub SessionQuery);

impl InternalCall for Get {
    const PATH: &'static str = path::GET;
    type Reply = SessionGetResult;
}

/// → Session: its current and previous session ids.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct History(pub SessionQuery);

impl InternalCall for History {
    const PATH: &'static str = path::HISTORY;
    type Reply = SessionHistoryResult;
}

/// → Session: end its run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Abort(pub SessionQuery);

impl InternalCall for Abort {
    const PATH: &'static str = path::ABORT;
    type Reply = ChatAbortResult;
}

/// Session → Gateway: send a node tool call.
impl InternalCall for ToolRequestParams {
    const PATH: &'static str = path::TOOL_REQUEST;
    type Reply = ToolRequestReply;
}

/// Session → Gateway: a node tool call sent again, which the Gateway may
/// have read already (it went on an event link that closed): one whose
/// route is still there is not sent to its node twice.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct ToolRequestAgain(pub ToolRequestParams);

impl InternalCall for ToolRequestAgain {
    const PATH: &'static str = path::TOOL_REQUEST_AGAIN;
    type Reply = ToolRequestReply;
}

/// Session → Gateway: start a `gsv__Transfer`.
impl InternalCall for TransferRequest {
    const PATH: &'static str = path::TRANSFER;
    type Reply = TransferReply;
}

/// How many watchers a `chat` event reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivered {
    pub delivered: u64,
}

/// Session → Gateway: a `chat` event for the session's watchers.
impl InternalCall for ChatEvent {
    const PATH: &'static str = path::CHAT_EVENT;
    type Reply = Delivered;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wrapper is invisible on the wire: the Session reads a
    /// `SessionQuery` body whatever the path.
    #[test]
    fn wrappers_serialize_as_their_body() {
        let q = SessionQuery {
            session_key: "agent:main:main".into(),
            limit: None,
        };
        let plain = serde_json::to_value(&q).unwrap();
        assert_eq!(serde_json::to_value(Stats(q.clone())).unwrap(), plain);
        assert_eq!(serde_json::to_value(Preview(q)).unwrap(), plain);
        assert_eq!(
            [Stats::PATH, Preview::PATH, AgentSessionsQuery::PATH],
            [
                "/session.stats",
                "/session.preview",
                "/internal/agent-sessions"
            ]
        );
    }
}
