//! Nodes as the gateway sees them: runtime info checked at connect
//! (every refusal says why), tool names namespaced
//! `{nodeId}__{Tool}`, and the host facts the prompt and skills read.

use crate::skills::HostInfo;
use gsv_protocol::{capability, HostRole, NodeRuntimeInfo, ToolDefinition};
use serde_json::Value;
use std::collections::{BTreeSet, VecDeque};

/// Separates the node id from the tool name.
pub const SEPARATOR: &str = "__";

/// Why a node's connect was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeError {
    /// The node id is not plain (see [`check_node_id`]).
    InvalidId(String),
    NoTools,
    /// A tool name is empty or contains the separator.
    InvalidToolName(String),
    DuplicateTool(String),
    /// A tool's `inputSchema` is not a JSON object.
    SchemaNotObject(String),
    NoRuntime,
    /// `nodeRuntime` does not parse; the parser's words.
    InvalidRuntime(String),
    NoCapabilities,
    UnknownCapability(String),
    /// A tool has no `toolCapabilities` entry.
    MissingToolCapabilities(String),
    /// A tool uses a capability the host does not offer: (tool, capability).
    UndeclaredCapability(String, String),
    /// `toolCapabilities` names a tool that is not registered.
    ExtraToolCapabilities(String),
    /// An execution host lacks these baseline capabilities.
    MissingBaseline(Vec<String>),
}

impl std::fmt::Display for NodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InvalidId(id) => write!(
                f,
                "Invalid node id {id:?}: use 1–64 letters, digits, '-', '.' or '_' (no \"__\"; \"gsv\" is reserved)"
            ),
            Self::NoTools => f.write_str("A node must register at least one tool"),
            Self::InvalidToolName(name) => write!(
                f,
                "Invalid tool name {name:?}: names must be non-empty and must not contain \"__\""
            ),
            Self::DuplicateTool(name) => write!(f, "Tool {name:?} is registered twice"),
            Self::SchemaNotObject(name) => {
                write!(f, "Tool {name:?}: inputSchema must be a JSON object")
            }
            Self::NoRuntime => f.write_str(
                "A node must send nodeRuntime (hostRole, hostCapabilities, toolCapabilities)",
            ),
            Self::InvalidRuntime(e) => write!(f, "Invalid nodeRuntime: {e}"),
            Self::NoCapabilities => f.write_str("nodeRuntime.hostCapabilities must not be empty"),
            Self::UnknownCapability(cap) => write!(
                f,
                "nodeRuntime.hostCapabilities: unknown capability {cap:?} (known: {})",
                capability::ALL.join(", ")
            ),
            Self::MissingToolCapabilities(name) => write!(
                f,
                "nodeRuntime.toolCapabilities has no entry for tool {name:?}"
            ),
            Self::UndeclaredCapability(name, cap) => write!(
                f,
                "nodeRuntime.toolCapabilities.{name}: {cap:?} is not among hostCapabilities"
            ),
            Self::ExtraToolCapabilities(extra) => write!(
                f,
                "nodeRuntime.toolCapabilities names {extra:?}, which is not a registered tool"
            ),
            Self::MissingBaseline(missing) => write!(
                f,
                "An execution host must offer {}; missing {}",
                capability::EXECUTION_BASELINE.join(", "),
                missing.join(", ")
            ),
        }
    }
}

impl std::error::Error for NodeError {}

/// Node ids become tool-name prefixes and R2/SQL keys: keep them plain.
pub fn check_node_id(id: &str) -> Result<(), NodeError> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.' || c == '_')
        && !id.contains(SEPARATOR)
        && id != "gsv";
    if ok {
        Ok(())
    } else {
        Err(NodeError::InvalidId(id.to_string()))
    }
}

/// The node's role: the one it declared, else (the last v1 nodes stopped
/// sending one) `execution` when it offers the execution baseline, else
/// `specialized`.
pub fn host_role(info: &NodeRuntimeInfo) -> HostRole {
    info.host_role.unwrap_or_else(|| {
        let execution = capability::EXECUTION_BASELINE
            .iter()
            .all(|c| info.host_capabilities.iter().any(|h| h == c));
        if execution {
            HostRole::Execution
        } else {
            HostRole::Specialized
        }
    })
}

/// Checks what a node sent at connect and returns its runtime info.
pub fn validate_node(
    node_id: &str,
    tools: &[ToolDefinition],
    runtime: Option<&Value>,
) -> Result<NodeRuntimeInfo, NodeError> {
    check_node_id(node_id)?;
    if tools.is_empty() {
        return Err(NodeError::NoTools);
    }
    let mut names = BTreeSet::new();
    for t in tools {
        if t.name.is_empty() || t.name.contains(SEPARATOR) {
            return Err(NodeError::InvalidToolName(t.name.clone()));
        }
        if !names.insert(t.name.as_str()) {
            return Err(NodeError::DuplicateTool(t.name.clone()));
        }
        if !t.input_schema.is_object() {
            return Err(NodeError::SchemaNotObject(t.name.clone()));
        }
    }
    let runtime = runtime.ok_or(NodeError::NoRuntime)?;
    let info: NodeRuntimeInfo = serde_json::from_value(runtime.clone())
        .map_err(|e| NodeError::InvalidRuntime(e.to_string()))?;
    if info.host_capabilities.is_empty() {
        return Err(NodeError::NoCapabilities);
    }
    for cap in &info.host_capabilities {
        if !capability::ALL.contains(&cap.as_str()) {
            return Err(NodeError::UnknownCapability(cap.clone()));
        }
    }
    for name in &names {
        let caps = info
            .tool_capabilities
            .get(*name)
            .ok_or_else(|| NodeError::MissingToolCapabilities(name.to_string()))?;
        if let Some(cap) = caps.iter().find(|c| !info.host_capabilities.contains(c)) {
            return Err(NodeError::UndeclaredCapability(
                name.to_string(),
                cap.clone(),
            ));
        }
    }
    if let Some(extra) = info
        .tool_capabilities
        .keys()
        .find(|k| !names.contains(k.as_str()))
    {
        return Err(NodeError::ExtraToolCapabilities(extra.clone()));
    }
    if info.host_role == Some(HostRole::Execution) {
        let missing: Vec<String> = capability::EXECUTION_BASELINE
            .iter()
            .filter(|c| !info.host_capabilities.iter().any(|h| h == *c))
            .map(|c| c.to_string())
            .collect();
        if !missing.is_empty() {
            return Err(NodeError::MissingBaseline(missing));
        }
    }
    Ok(NodeRuntimeInfo {
        host_os: info.host_os.map(|o| o.to_lowercase()),
        ..info
    })
}

/// `laptop__Bash` → `("laptop", "Bash")`.
pub fn split_tool_name(name: &str) -> Option<(&str, &str)> {
    let (node, tool) = name.split_once(SEPARATOR)?;
    (!node.is_empty() && !tool.is_empty()).then_some((node, tool))
}

/// The node's tools as the model and clients see them.
pub fn namespaced(node_id: &str, tools: &[ToolDefinition]) -> Vec<ToolDefinition> {
    tools
        .iter()
        .map(|t| ToolDefinition {
            name: format!("{node_id}{SEPARATOR}{}", t.name),
            ..t.clone()
        })
        .collect()
}

/// The node as the prompt's Runtime section and skill eligibility see it.
pub fn host_info(node_id: &str, info: &NodeRuntimeInfo) -> HostInfo {
    HostInfo {
        node_id: node_id.to_string(),
        host_role: match host_role(info) {
            HostRole::Execution => "execution".into(),
            HostRole::Specialized => "specialized".into(),
        },
        host_capabilities: info.host_capabilities.clone(),
        host_os: info.host_os.clone(),
        host_env: info.host_env.clone(),
        host_bin_status: info.host_bin_status.clone().unwrap_or_default(),
        host_bin_status_updated_at: info.host_bin_status_updated_at.map(|t| t.max(0) as u64),
        no_bin_probes: info.host_role.is_none(),
    }
}

/// Who a route waits for: a session (by key) or a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteAsker<'a> {
    Session(&'a str),
    Client,
}

/// What a call id that has a route already is to a call being sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdTaken {
    /// The same session sent it again (`again`: its first went on a link
    /// that closed before it could be known to arrive): it is out, and is
    /// not run twice.
    AlreadyOut,
    /// The same session's new call under its old call's id (some providers
    /// number their calls anew each turn): the old route, outliving its
    /// answer across a restart, gives way.
    Outlived,
    /// Anyone else's: refused, so no answer reaches the wrong asker.
    Refused,
}

/// The call being sent for `asker` (`again`: a second time) meets the
/// route `existing` of the same id (`None`: it went meanwhile).
pub fn id_taken(existing: Option<RouteAsker<'_>>, asker: RouteAsker<'_>, again: bool) -> IdTaken {
    match (existing, asker) {
        (None, _) => IdTaken::Outlived,
        (Some(RouteAsker::Session(a)), RouteAsker::Session(b)) if a == b => match again {
            true => IdTaken::AlreadyOut,
            false => IdTaken::Outlived,
        },
        _ => IdTaken::Refused,
    }
}

/// Sessions' node calls answered lately. A call a session sends again
/// (its link closed before the call's answer could be known to arrive)
/// may meet its route already answered and gone; it is then not run a
/// second time: its answer is on its way. The oldest are forgotten first.
#[derive(Debug, Default)]
pub struct AnsweredCalls {
    /// `(session key, call id)`, oldest first.
    calls: VecDeque<(String, String)>,
}

impl AnsweredCalls {
    /// More than the calls out at once; a call sent again comes right
    /// after its link closed.
    pub const MAX: usize = 256;

    pub fn remember(&mut self, session_key: &str, call_id: &str) {
        if self.contains(session_key, call_id) {
            return;
        }
        if self.calls.len() == Self::MAX {
            self.calls.pop_front();
        }
        self.calls
            .push_back((session_key.to_string(), call_id.to_string()));
    }

    pub fn contains(&self, session_key: &str, call_id: &str) -> bool {
        self.calls
            .iter()
            .any(|(k, id)| k == session_key && id == call_id)
    }
}

#[cfg(test)]
mod tests;
