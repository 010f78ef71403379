//! The agent's tools about its gateway (v1 §5): `gsv__ConfigGet`,
//! `gsv__LogsGet`, `gsv__SessionsList` and `gsv__SessionSend`. Their
//! definitions, their arguments read and checked, and the call a Session
//! hands to the Gateway for the three the Gateway runs. `gsv__SessionsList`
//! runs in the Session ([`sessions_list`]); the decisions of
//! `gsv__SessionSend` are in [`session_send`].
//!
//! All four are offered in the main session only, like `session_logs`:
//! other sessions are conversations with other people, who must not read
//! the owner's configuration, machines' logs or other conversations, nor
//! make the agent write into them.

pub mod session_send;
pub mod sessions_list;

use crate::gateway::logs::{line_count, LOGS_TIMEOUT_MS};
use gsv_protocol::ToolDefinition;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const CONFIG_GET: &str = "gsv__ConfigGet";
pub const LOGS_GET: &str = "gsv__LogsGet";
pub const SESSIONS_LIST: &str = "gsv__SessionsList";
pub const SESSION_SEND: &str = "gsv__SessionSend";

/// The definitions as the model receives them; text, like the other native
/// tools' (`selfreport::tools`), to keep `json!` expansions out of the wasm.
const DEFINITIONS: &str = r#"[
{"name": "gsv__ConfigGet",
 "description": "Read your gateway's configuration: the whole of it, or the value at a dotted path (model, timeouts.toolMs, channels.discord.dmPolicy, agents.list …). Secrets (API keys, tokens, passwords) always read as \"***\", whole or by path. Changing the configuration is your human's to do (`gsv config set`).",
 "inputSchema": {"type": "object", "properties": {
   "path": {"type": "string", "description": "Dotted path, e.g. model or timeouts; omit for the whole configuration"}
 }}},
{"name": "gsv__LogsGet",
 "description": "Read the end of a connected node's own log: the gsv node process on that machine (connections, tool calls and their timing, errors), one JSON object a line, oldest first. Use it to find out why a node tool failed, was slow or a node dropped. nodeId may be left out when exactly one node is connected. The node has 20 s to answer.",
 "inputSchema": {"type": "object", "properties": {
   "nodeId": {"type": "string", "description": "The node, as in its tool names ({nodeId}__Bash); omit when only one node is connected"},
   "lines": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "How many of the last lines (default 100)"}
 }}},
{"name": "gsv__SessionsList",
 "description": "List your sessions (your conversations, each with its own history), most recently active first: sessionKey, label, createdAt and lastActiveAt (ms since the epoch), and whether it is this one. With messageLimit, each also shows its last messages (text cut to 300 characters). Use the keys with gsv__SessionSend; session_logs reads whole conversations.",
 "inputSchema": {"type": "object", "properties": {
   "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Sessions to list (default 20)"},
   "offset": {"type": "integer", "minimum": 0, "description": "Sessions to skip, to page on (default 0)"},
   "messageLimit": {"type": "integer", "minimum": 0, "maximum": 20, "description": "Last messages shown per session (default 0: none)"}
 }}},
{"name": "gsv__SessionSend",
 "description": "Send a message into another of your sessions (a sessionKey from gsv__SessionsList) and start a run there, as if it were a message to that conversation; that session sees who sent it. With waitSeconds (default 30) you get that run's answer: {status:\"ok\", reply}, or {status:\"timeout\"} if it takes longer (the run goes on; its answer stays in that session's history). waitSeconds 0 returns {status:\"accepted\"} at once. The answer is not delivered to any chat app: use gsv__Message for that.",
 "inputSchema": {"type": "object", "properties": {
   "sessionKey": {"type": "string", "description": "The session to write to, e.g. agent:main:discord:dm:123456"},
   "message": {"type": "string", "description": "The message"},
   "waitSeconds": {"type": "integer", "minimum": 0, "maximum": 120, "description": "How long to wait for the answer (default 30; 0: do not wait)"}
 }, "required": ["sessionKey", "message"]}}
]"#;

/// The four definitions (main sessions only; see the module docs).
pub fn definitions(is_main: bool) -> Vec<ToolDefinition> {
    if !is_main {
        return Vec::new();
    }
    crate::selfreport::definitions_in(DEFINITIONS)
}

/// A call the Gateway runs for a session, its arguments checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "tool", rename_all = "camelCase")]
pub enum GatewayTool {
    #[serde(rename_all = "camelCase")]
    ConfigGet {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    LogsGet {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node_id: Option<String>,
        lines: u32,
    },
    /// `target`: the session written to, as the model named it (the
    /// call's own `sessionKey` is the sender).
    #[serde(rename_all = "camelCase")]
    SessionSend {
        target: String,
        message: String,
        wait_seconds: u32,
    },
}

/// Session → Gateway: one call of a tool the Gateway runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayToolCall {
    /// The model's id of the call; its result comes back under it.
    pub call_id: String,
    /// The asking session (canonical key).
    pub session_key: String,
    pub agent_id: String,
    /// The asking run's place in a chain of `gsv__SessionSend`s (0: its
    /// message came from a person).
    pub depth: u32,
    /// The asking run's trust: a message it sends to another session runs
    /// at no more than this.
    #[serde(default)]
    pub trust: gsv_protocol::Trust,
    #[serde(flatten)]
    pub tool: GatewayTool,
}

/// The Gateway's answer: the result now, or later on the Session's
/// `/tool.result` path (a node's log, another session's answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum GatewayToolReply {
    Done { result: Value },
    Pending,
}

impl crate::calls::InternalCall for GatewayToolCall {
    const PATH: &'static str = crate::session::internal::path::GATEWAY_TOOL;
    type Reply = GatewayToolReply;
}

/// The Gateway runs `name` (one of ours but `gsv__SessionsList`).
pub fn runs_on_gateway(name: &str) -> bool {
    matches!(name, CONFIG_GET | LOGS_GET | SESSION_SEND)
}

/// Reads a gateway tool's arguments, in words the model can act on.
pub fn parse(name: &str, args: &Value) -> Result<GatewayTool, String> {
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::trim);
    let int = |key: &str| -> Result<Option<i64>, String> {
        match args.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| format!("{key} must be a whole number")),
        }
    };
    match name {
        CONFIG_GET => Ok(GatewayTool::ConfigGet {
            path: text("path").filter(|p| !p.is_empty()).map(String::from),
        }),
        LOGS_GET => Ok(GatewayTool::LogsGet {
            node_id: text("nodeId").filter(|n| !n.is_empty()).map(String::from),
            lines: line_count(int("lines")?).map_err(|e| e.message)?,
        }),
        SESSION_SEND => {
            let session_key = text("sessionKey")
                .filter(|k| !k.is_empty())
                .ok_or("sessionKey is required")?;
            let message = args
                .get("message")
                .and_then(Value::as_str)
                .filter(|m| !m.trim().is_empty())
                .ok_or("message is required")?;
            let wait_seconds = session_send::wait_seconds(int("waitSeconds")?)?;
            Ok(GatewayTool::SessionSend {
                target: session_key.to_string(),
                message: message.to_string(),
                wait_seconds,
            })
        }
        other => Err(format!("{other} is not run by the gateway")),
    }
}

/// How long a turn may wait for this call: longer than `timeouts.toolMs`
/// for a `gsv__SessionSend` that waits longer, so the Gateway's answer
/// (`timeout` included) always comes first.
pub fn allowance_ms(tool: &GatewayTool) -> u64 {
    match tool {
        GatewayTool::SessionSend { wait_seconds, .. } => (u64::from(*wait_seconds) + 15) * 1000,
        GatewayTool::LogsGet { .. } => LOGS_TIMEOUT_MS as u64 + 5000,
        GatewayTool::ConfigGet { .. } => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn definitions_parse_and_are_for_the_main_session_only() {
        let names: Vec<String> = definitions(true).into_iter().map(|t| t.name).collect();
        assert_eq!(names, [CONFIG_GET, LOGS_GET, SESSIONS_LIST, SESSION_SEND]);
        assert!(definitions(false).is_empty());
        for t in definitions(true) {
            assert_eq!(t.input_schema["type"], "object", "{}", t.name);
            assert!(t.description.len() > 100, "{}", t.name);
        }
        assert!(runs_on_gateway(CONFIG_GET) && !runs_on_gateway(SESSIONS_LIST));
    }

    #[test]
    fn arguments_are_read_with_defaults_and_checked() {
        assert_eq!(
            parse(CONFIG_GET, &json!({"path": " model "})),
            Ok(GatewayTool::ConfigGet {
                path: Some("model".into())
            })
        );
        assert_eq!(
            parse(CONFIG_GET, &json!({"path": ""})),
            Ok(GatewayTool::ConfigGet { path: None })
        );
        assert_eq!(
            parse(LOGS_GET, &json!({})),
            Ok(GatewayTool::LogsGet {
                node_id: None,
                lines: 100
            })
        );
        assert_eq!(
            parse(LOGS_GET, &json!({"nodeId": "laptop", "lines": 7})),
            Ok(GatewayTool::LogsGet {
                node_id: Some("laptop".into()),
                lines: 7
            })
        );
        assert_eq!(
            parse(LOGS_GET, &json!({"lines": 0})),
            Err("lines must be between 1 and 5000, not 0".into())
        );
        assert_eq!(
            parse(LOGS_GET, &json!({"lines": "ten"})),
            Err("lines must be a whole number".into())
        );
        assert_eq!(
            parse(
                SESSION_SEND,
                &json!({"sessionKey": "agent:main:x", "message": "hi"})
            ),
            Ok(GatewayTool::SessionSend {
                target: "agent:main:x".into(),
                message: "hi".into(),
                wait_seconds: 30
            })
        );
        assert_eq!(
            parse(SESSION_SEND, &json!({"message": "hi"})),
            Err("sessionKey is required".into())
        );
        assert_eq!(
            parse(SESSION_SEND, &json!({"sessionKey": "k", "message": " "})),
            Err("message is required".into())
        );
        assert_eq!(
            parse(
                SESSION_SEND,
                &json!({"sessionKey": "k", "message": "m", "waitSeconds": 121})
            ),
            Err("waitSeconds must be between 0 and 120, not 121".into())
        );
    }

    #[test]
    fn calls_travel_as_flat_json() {
        let call = GatewayToolCall {
            call_id: "c1".into(),
            session_key: "agent:main:main".into(),
            agent_id: "main".into(),
            depth: 0,
            trust: gsv_protocol::Trust::OWNER,
            tool: GatewayTool::LogsGet {
                node_id: None,
                lines: 5,
            },
        };
        let wire = json!({"callId": "c1", "sessionKey": "agent:main:main", "agentId": "main",
                          "depth": 0, "trust": {"level": "owner", "actsAs": "owner"},
                          "tool": "logsGet", "lines": 5});
        assert_eq!(serde_json::to_value(&call).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<GatewayToolCall>(wire).unwrap(),
            call
        );
        // The sender's key and the target's do not collide.
        let send = GatewayToolCall {
            depth: 1,
            tool: GatewayTool::SessionSend {
                target: "agent:main:work".into(),
                message: "hi".into(),
                wait_seconds: 0,
            },
            ..call
        };
        let wire = json!({"callId": "c1", "sessionKey": "agent:main:main", "agentId": "main",
                          "depth": 1, "trust": {"level": "owner", "actsAs": "owner"},
                          "tool": "sessionSend", "target": "agent:main:work",
                          "message": "hi", "waitSeconds": 0});
        assert_eq!(serde_json::to_value(&send).unwrap(), wire);
        assert_eq!(
            serde_json::from_value::<GatewayToolCall>(wire).unwrap(),
            send
        );
        assert_eq!(
            serde_json::to_value(GatewayToolReply::Done { result: json!(1) }).unwrap(),
            json!({"status": "done", "result": 1})
        );
        assert_eq!(
            serde_json::to_value(GatewayToolReply::Pending).unwrap(),
            json!({"status": "pending"})
        );
    }

    #[test]
    fn waiting_calls_get_longer_than_the_gateway_waits() {
        let send = |wait_seconds| GatewayTool::SessionSend {
            target: "k".into(),
            message: "m".into(),
            wait_seconds,
        };
        assert_eq!(allowance_ms(&send(120)), 135_000);
        assert_eq!(allowance_ms(&send(0)), 15_000);
        let logs = GatewayTool::LogsGet {
            node_id: None,
            lines: 1,
        };
        assert_eq!(allowance_ms(&logs), 25_000);
    }
}
