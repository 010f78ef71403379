//! Requests between the Gateway and Session objects. They travel as JSON
//! `fetch` calls on paths the public router never forwards; an error comes
//! back as a non-2xx answer whose body is an `ErrorShape`.

use crate::skills::HostInfo;
use gsv_protocol::{NodeExecEventParams, ToolDefinition};
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
    /// Body: `UsageDays`; answers the session's `gsv_protocol::DayUsage`s.
    pub const USAGE_DAYS: &str = "/usage.days";
    /// Session → Gateway: deliver a `chat` event to the session's watchers.
    pub const CHAT_EVENT: &str = "/internal/chat-event";
    /// Session → Gateway: a WebSocket carrying the session's `chat` events
    /// (one text frame per event, in order) while the session is busy, so
    /// streaming costs no object-to-object request per chunk.
    pub const EVENT_LINK: &str = "/internal/event-link";
    /// Session → Gateway: send a node tool call (`gsv_protocol::ToolRequestParams`).
    pub const TOOL_REQUEST: &str = "/internal/tool-request";
    /// A node tool call sent again (see `ToolRequestAgain`).
    pub const TOOL_REQUEST_AGAIN: &str = "/internal/tool-request-again";
    /// Session → Gateway: start a `gsv__Transfer`
    /// (`crate::gateway::transfer::TransferRequest`); its result comes back
    /// later on `TOOL_RESULT`.
    pub const TRANSFER: &str = "/internal/transfer";
    /// Gateway → Session: a node's answer (`gsv_protocol::ToolResultParams`);
    /// answers `gsv_protocol::AckResult`.
    pub const TOOL_RESULT: &str = "/tool.result";
    /// Gateway → Session: the owner's decision on a call that waited for
    /// it (`ApprovalDecided`); answers `gsv_protocol::AckResult`.
    pub const APPROVAL_DECIDED: &str = "/approval.decided";
    /// Session → Gateway: a call of an `ask` tool (`AskApproval`); answers
    /// `AskReply`.
    pub const ASK_APPROVAL: &str = "/internal/ask-approval";
    /// Gateway → Session: a background command ended (`SessionExecEvent`).
    pub const EXEC_EVENT: &str = "/exec.event";
    /// Gateway → Session: cancel the current run (`SessionQuery`).
    pub const ABORT: &str = "/chat.abort";
    /// Session → Gateway: the registry's sessions of one agent
    /// (`AgentSessionsQuery`), most recently active first; answers
    /// `gsv_protocol::SessionsListResult`. `session_logs` finds the
    /// agent's other live sessions with it.
    pub const AGENT_SESSIONS: &str = "/internal/agent-sessions";
    /// Worker (its cron trigger) → Gateway: run what is due, re-arm.
    pub const WAKE: &str = "/internal/wake";
    /// Session → Gateway: `gsv__ConfigGet`, `gsv__LogsGet`,
    /// `gsv__SessionSend` (`crate::agent_tools::GatewayToolCall`); answers
    /// `GatewayToolReply`: the result, or `pending` (it comes later on
    /// `TOOL_RESULT`).
    pub const GATEWAY_TOOL: &str = "/internal/gateway-tool";
    /// Session → Gateway: `gsv__Cron` (`crate::schedule::tool::CronToolRequest`).
    pub const CRON_TOOL: &str = "/internal/cron-tool";
    /// Session → Gateway: a tool call of a turn below the owner, and what
    /// became of it (`AuditRecord`), for the audit log.
    pub const AUDIT: &str = "/internal/audit";
    /// Test harness → Worker → Gateway: move the schedule clock; refused
    /// unless `GSV_TEST_CLOCK=1` (never set in production).
    pub const TEST_CLOCK: &str = "/internal/test/clock";
    /// Gateway → Session: how a chat's run stands (`RunOutcomeQuery`);
    /// answers `RunOutcome`.
    pub const RUN_OUTCOME: &str = "/run.outcome";
    /// Session → Gateway: `gsv__Message` (`ChannelMessageRequest`);
    /// answers `ChannelMessageReply`.
    pub const CHANNEL_MESSAGE: &str = "/internal/channel-message";
    /// Worker → Gateway: the canonical form of a session key
    /// (`CanonicalKey`), for an upload stored under it.
    pub const CANONICAL_KEY: &str = "/internal/canonical-key";
    /// Session → Gateway: a run wrote the agent's workspace
    /// (`WorkspaceChanged`); every session's next run reads it again.
    /// Also MemoryIndex → Gateway: the index got its first memory.
    pub const WORKSPACE_CHANGED: &str = "/internal/workspace-changed";
}

/// A Session's word that its run wrote the workspace (its tools' writes
/// are not the gateway's own, which the gateway counts itself), or a
/// memory index's that it got its first memory (recalled memories are
/// prompt inputs too; see `memory::recall::KnownEmpty`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceChanged {
    /// Empty from a memory index.
    pub session_key: String,
}

/// A session key, as named (`CANONICAL_KEY`'s request) or canonical (its
/// answer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CanonicalKey {
    pub session_key: String,
}

/// `gsv__Message` from a Session: `text` to `target`, else to the agent's
/// last active chat. `call_id` names the text in the delivery ledger, so
/// the call repeated after a restart sends nothing twice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelMessageRequest {
    pub agent_id: String,
    /// The session the call runs in (its media may be attached).
    #[serde(default)]
    pub session_key: String,
    pub call_id: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<crate::channels::message_tool::Target>,
    /// Files to send: workspace paths or this session's media keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<String>,
}

/// Where the message went, or why it did not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelMessageReply {
    pub channel: String,
    pub to: String,
    pub pieces: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Which agent's sessions `path::AGENT_SESSIONS` lists, and how many.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSessionsQuery {
    pub agent_id: String,
    pub limit: u32,
    /// Sessions skipped first (`gsv__SessionsList` pages on).
    #[serde(default)]
    pub offset: u32,
}

/// The node tools and hosts connected when a message arrives; the run
/// offers these tools to the model and names these hosts in its prompt.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSnapshot {
    /// Namespaced `{nodeId}__{Tool}`.
    #[serde(default)]
    pub tools: Vec<ToolDefinition>,
    #[serde(default)]
    pub hosts: Vec<HostInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionExecEvent {
    pub session_key: String,
    pub node_id: String,
    pub event: NodeExecEventParams,
    pub nodes: NodeSnapshot,
    #[serde(default)]
    pub nodes_rev: String,
}

/// A session's answer to a message that named a config or node revision
/// it does not have (it was evicted, or never sent it): send them whole.
pub const STALE_STATE: i64 = 4090;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionChatSend {
    pub session_key: String,
    pub run_id: String,
    pub message: String,
    /// The gateway config's overrides (what the owner set, secrets
    /// included) at the time of the message, when the session may not have
    /// `config_rev` yet; the session resolves its runs from them over the
    /// defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
    /// The config's revision: a session that has it keeps it parsed.
    #[serde(default)]
    pub config_rev: String,
    /// The node tools and hosts, when the session may not have `nodes_rev`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<NodeSnapshot>,
    #[serde(default)]
    pub nodes_rev: String,
    /// The agent's workspace as the gateway knows it: while it and the
    /// rest of a run's inputs are unchanged (and the prompt was checked
    /// against R2 within `workspace.recheckSeconds`), the session's kept
    /// prompt holds without reading R2.
    #[serde(default)]
    pub workspace_rev: String,
    /// Set when the message came from a chat app: the session shows it to
    /// the model in an envelope, the sender's text fenced as data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<ChannelTurn>,
    /// Model and thinking for this message's run only (a cron task's
    /// `model`/`thinking`, a heartbeat's `model`); the message's own
    /// inline directives win over them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directives: Option<gsv_protocol::ChatDirectives>,
    /// Set when another session of the agent sent it (`gsv__SessionSend`):
    /// no commands or directives are read from it, the model reads who
    /// sent it, and its run carries the chain's depth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relay: Option<crate::agent_tools::session_send::SessionRelay>,
    /// The gateway's schedule clock minus real time: 0 but under the test
    /// harness's clock, which the session's dates (daily memory, recall
    /// days) then follow too.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub clock_offset_ms: i64,
    /// Its attachments, already in R2 (or noted as not kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<crate::media::Attached>,
    /// Who is speaking, as the gateway decided it: the tools its run is
    /// offered and may call, and whether it may change the session.
    #[serde(default)]
    pub trust: gsv_protocol::Trust,
    /// A chat message's id as the gateway names it
    /// (`channel:account:messageId`): the session takes each once, and
    /// answers a repeat with what it answered the first time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inbound_id: Option<String>,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// Where a chat-app message came from, as its envelope names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelTurn {
    pub channel: String,
    pub account_id: String,
    /// When it was sent, in the user's time zone (`Tue 24 Nov 14:05`).
    pub time: String,
    pub sender_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_handle: Option<String>,
    /// The group chat's name (or id), for a message said in a group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Who wrote it, as long-term memory knows people (identity links'
    /// name, else `channel:id`); none in a group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub person: Option<String>,
}

impl ChannelTurn {
    /// `text` as the model receives it.
    pub fn envelope(&self, text: &str) -> String {
        use crate::channels::envelope::{envelope, EnvelopeSender};
        let sender = EnvelopeSender {
            handle: self.sender_handle.as_deref(),
            name: self.sender_name.as_deref(),
            id: &self.sender_id,
        };
        envelope(
            &self.channel,
            &self.time,
            &sender,
            self.group.as_deref(),
            text,
        )
    }
}

/// How the session took a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum SessionChatSendReply {
    /// Queued for a run.
    #[serde(rename_all = "camelCase")]
    Started {
        queued: bool,
        /// 0 when the run started at once; otherwise how many runs go first.
        queue_position: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        directives: Option<gsv_protocol::ChatDirectives>,
    },
    /// A slash command, answered without a run (`run_id`: `/new TEXT`).
    #[serde(rename_all = "camelCase")]
    Command {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        response: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run_id: Option<String>,
    },
    /// Directives only: acknowledged, no run.
    #[serde(rename_all = "camelCase")]
    DirectiveOnly {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        response: Option<String>,
        directives: gsv_protocol::ChatDirectives,
    },
    /// A chat message taken before (`inbound_id`): nothing was done again;
    /// `first` is what it was answered then, for run `run_id`.
    #[serde(rename_all = "camelCase")]
    Taken {
        run_id: String,
        first: Box<SessionChatSendReply>,
    },
}

/// Gateway → Session: how a run from a chat stands (its answer may not
/// have reached the gateway).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOutcomeQuery {
    pub session_key: String,
    pub run_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum RunOutcome {
    /// Waiting in the queue.
    Queued,
    /// In progress.
    Running,
    /// Ended: its final or error event, as it was sent.
    Ended { event: Box<gsv_protocol::ChatEvent> },
    /// The session has no such run (never taken, or ended too long ago).
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionQuery {
    pub session_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// The Gateway's answer at `TOOL_REQUEST`: the call went out to its node
/// (`{"status": "sent"}`; the result comes later), as `tool.request`
/// answers on the socket.
pub type ToolRequestReply = gsv_protocol::ToolRequestResult;

/// The Gateway's answer at `TRANSFER`: the copy started
/// (`{"status": "started", "transferId": …}`; the result comes later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum TransferReply {
    #[serde(rename_all = "camelCase")]
    Started { transfer_id: u32 },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gateway_replies_keep_their_shapes() {
        assert_eq!(
            serde_json::to_value(ToolRequestReply::Sent).unwrap(),
            json!({"status": "sent"})
        );
        assert_eq!(
            serde_json::to_value(TransferReply::Started { transfer_id: 7 }).unwrap(),
            json!({"status": "started", "transferId": 7})
        );
    }
}

/// Session → Gateway: one tool call of a turn below the owner, for the
/// audit log (`audit.list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    pub entry: gsv_protocol::AuditEntry,
}

/// Session → Gateway: a call of an `ask` tool, to be approved by the
/// owner (or at once, by a standing "always" approval).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AskApproval {
    pub session_key: String,
    pub call_id: String,
    pub tool: String,
    pub args: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub who: Option<String>,
    pub trust: gsv_protocol::Trust,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum AskReply {
    /// Run it now.
    Approved,
    /// The owner was asked; `ApprovalDecided` comes later.
    Pending,
}

/// Gateway → Session: what the owner decided about call `call_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalDecided {
    pub call_id: String,
    pub approved: bool,
    /// Why not (denied, timed out), for the model.
    #[serde(default)]
    pub reason: String,
}

/// → Session: its tokens per day from `from` (`YYYY-MM-DD`) on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageDays {
    pub from: String,
}
