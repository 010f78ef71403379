//! Nodes and their tools: runtime info sent at connect, tool calls in both
//! directions, background-exec events and file transfers.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ToolDefinition;

/// What a node host is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostRole {
    /// A general machine: files and a shell.
    Execution,
    /// A host offering only some capabilities.
    Specialized,
}

/// Capability ids a node may declare.
pub mod capability {
    pub const FILESYSTEM_LIST: &str = "filesystem.list";
    pub const FILESYSTEM_READ: &str = "filesystem.read";
    pub const FILESYSTEM_WRITE: &str = "filesystem.write";
    pub const FILESYSTEM_EDIT: &str = "filesystem.edit";
    pub const TEXT_SEARCH: &str = "text.search";
    pub const SHELL_EXEC: &str = "shell.exec";

    pub const ALL: &[&str] = &[
        FILESYSTEM_LIST,
        FILESYSTEM_READ,
        FILESYSTEM_WRITE,
        FILESYSTEM_EDIT,
        TEXT_SEARCH,
        SHELL_EXEC,
    ];
    /// What an `execution` host must offer.
    pub const EXECUTION_BASELINE: &[&str] = &[
        FILESYSTEM_LIST,
        FILESYSTEM_READ,
        FILESYSTEM_WRITE,
        SHELL_EXEC,
    ];
}

/// `connect.nodeRuntime`: what the node host is and can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeRuntimeInfo {
    /// Absent from the last v1 nodes (6791fd14 on), which also stopped
    /// answering bin probes; the gateway reads such a node's role from its
    /// capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_role: Option<HostRole>,
    pub host_capabilities: Vec<String>,
    /// Tool name (un-namespaced) → the capabilities it uses.
    pub tool_capabilities: std::collections::BTreeMap<String, Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_os: Option<String>,
    /// Names (never values) of the node's environment variables.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub host_env: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_bin_status: Option<std::collections::BTreeMap<String, bool>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_bin_status_updated_at: Option<i64>,
}

/// `tools.list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ToolsListResult {
    pub tools: Vec<ToolDefinition>,
}

/// `tool.invoke` params (client → gateway): `tool` is namespaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ToolInvokeParams {
    pub tool: String,
    #[serde(default)]
    pub args: Value,
}

/// `tool.invoke` result, sent when the node answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ToolInvokeResult {
    pub result: Value,
}

/// `tool.invoke` event (gateway → node): `tool` is un-namespaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolInvokeEvent {
    pub call_id: String,
    pub tool: String,
    #[serde(default)]
    pub args: Value,
}

/// `tool.result` params (node → gateway).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultParams {
    pub call_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ToolResultParams {
    /// Call `call_id`'s answer: its result, or the error it failed with.
    pub fn answer(call_id: impl Into<String>, outcome: Result<Value, String>) -> Self {
        let (result, error) = match outcome {
            Ok(v) => (Some(v), None),
            Err(e) => (None, Some(e)),
        };
        Self {
            call_id: call_id.into(),
            result,
            error,
        }
    }

    /// Call `call_id` failed with `error`.
    pub fn failed(call_id: impl Into<String>, error: impl Into<String>) -> Self {
        Self::answer(call_id, Err(error.into()))
    }
}

/// `tool.result` / `node.exec.event` answer; `dropped` when nobody waited.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AckResult {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<bool>,
}

/// `tool.request` params: a node tool call whose result goes to a
/// session (a Session's own calls take the internal path; v1 clients may
/// send it on the socket).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolRequestParams {
    pub call_id: String,
    pub tool: String,
    #[serde(default)]
    pub args: Value,
    pub session_key: String,
}

/// `tool.request` result: the call went out to its node
/// (`{"status": "sent"}`; the result goes to the session later).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum ToolRequestResult {
    Sent,
}

/// What happened to a background command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecEventKind {
    Started,
    Finished,
    Failed,
    TimedOut,
}

impl ExecEventKind {
    pub fn is_terminal(self) -> bool {
        !matches!(self, ExecEventKind::Started)
    }
}

/// `node.exec.event` params (node → gateway).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeExecEventParams {
    pub event_id: String,
    pub session_id: String,
    pub event: ExecEventKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<i64>,
}

/// `chat.abort` params: cancel the session's current run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChatAbortParams {
    pub session_key: String,
}

/// `chat.abort` result (v1 `Session.abort` shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChatAbortResult {
    pub ok: bool,
    pub was_running: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub pending_tools_cancelled: u32,
}

/// File transfers (`gsv__Transfer`): bytes travel as binary WebSocket
/// frames, each a 4-byte big-endian transfer id then a chunk of the file,
/// alongside these JSON messages.
pub mod transfer {
    use serde::{Deserialize, Serialize};

    /// Bytes per binary frame.
    pub const CHUNK_BYTES: usize = 64 * 1024;

    /// A checksum as it travels: lower-case hex of the SHA-256 digest.
    pub fn hex(digest: &[u8]) -> String {
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Splits a binary frame into its transfer id and chunk.
    pub fn split_frame(frame: &[u8]) -> Option<(u32, &[u8])> {
        let (id, chunk) = frame.split_first_chunk::<4>()?;
        Some((u32::from_be_bytes(*id), chunk))
    }

    /// A binary frame carrying `chunk` of transfer `id`.
    pub fn frame(id: u32, chunk: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 + chunk.len());
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(chunk);
        out
    }

    /// Event `transfer.send` (gateway → source node): send this file.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct TransferSendEvent {
        pub transfer_id: u32,
        pub path: String,
        /// Files larger than this are refused before any byte moves.
        pub max_bytes: u64,
    }

    /// Event `transfer.receive` (gateway → destination node): `size`
    /// bytes for `path` follow as binary frames, then `transfer.end`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct TransferReceiveEvent {
        pub transfer_id: u32,
        pub path: String,
        pub size: u64,
    }

    /// Event `transfer.end` (gateway → destination node): every chunk was
    /// sent; keep the file only if it has this size and SHA-256 (hex).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct TransferEndEvent {
        pub transfer_id: u32,
        pub sha256: String,
    }

    /// Event `transfer.cancel` (gateway → node): drop what was received.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct TransferCancelEvent {
        pub transfer_id: u32,
        pub reason: String,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum TransferState {
        /// Source: `size` bytes follow.
        Sending,
        /// Source: all bytes sent; `sha256` is their checksum.
        Sent,
        /// Destination: the file is in place.
        Done,
        /// Either side: the transfer failed (`error`).
        Failed,
    }

    /// `transfer.status` params (node → gateway).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct TransferStatusParams {
        pub transfer_id: u32,
        pub state: TransferState,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub size: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub sha256: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub error: Option<String>,
    }
}

#[cfg(test)]
mod tests {
    use super::transfer::*;

    #[test]
    fn transfer_frames_and_checksums() {
        assert_eq!(hex(&[0, 15, 255]), "000fff");
        let f = frame(0x0102_0304, b"abc");
        assert_eq!(f, [1, 2, 3, 4, b'a', b'b', b'c']);
        assert_eq!(split_frame(&f), Some((0x0102_0304, &b"abc"[..])));
        assert_eq!(split_frame(&[1, 2, 3]), None);
    }

    #[test]
    fn a_tool_result_is_its_result_or_its_error() {
        use super::ToolResultParams;
        use serde_json::json;
        let wire = |p: ToolResultParams| serde_json::to_value(p).unwrap();
        assert_eq!(
            wire(ToolResultParams::answer("c1", Ok(json!({"ok": true})))),
            json!({"callId": "c1", "result": {"ok": true}})
        );
        assert_eq!(
            wire(ToolResultParams::answer("c2", Err("no such file".into()))),
            json!({"callId": "c2", "error": "no such file"})
        );
        assert_eq!(
            ToolResultParams::failed("c2", "no such file"),
            ToolResultParams::answer("c2", Err("no such file".into()))
        );
    }
}
