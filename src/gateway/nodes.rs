//! Nodes as the gateway sees them: runtime info checked at connect
//! (reference §2.8, with clearer errors), tool names namespaced
//! `{nodeId}__{Tool}`, and the host facts the prompt and skills read.

use crate::skills::HostInfo;
use gsv_protocol::{capability, HostRole, NodeRuntimeInfo, ToolDefinition};
use serde_json::Value;
use std::collections::BTreeSet;

/// Separates the node id from the tool name.
pub const SEPARATOR: &str = "__";

/// Node ids become tool-name prefixes and R2/SQL keys: keep them plain.
pub fn check_node_id(id: &str) -> Result<(), String> {
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
        Err(format!(
            "Invalid node id {id:?}: use 1–64 letters, digits, '-', '.' or '_' (no \"__\"; \"gsv\" is reserved)"
        ))
    }
}

/// Checks what a node sent at connect and returns its runtime info.
pub fn validate_node(
    node_id: &str,
    tools: &[ToolDefinition],
    runtime: Option<&Value>,
) -> Result<NodeRuntimeInfo, String> {
    check_node_id(node_id)?;
    if tools.is_empty() {
        return Err("A node must register at least one tool".into());
    }
    let mut names = BTreeSet::new();
    for t in tools {
        if t.name.is_empty() || t.name.contains(SEPARATOR) {
            return Err(format!(
                "Invalid tool name {:?}: names must be non-empty and must not contain \"__\"",
                t.name
            ));
        }
        if !names.insert(t.name.as_str()) {
            return Err(format!("Tool {:?} is registered twice", t.name));
        }
        if !t.input_schema.is_object() {
            return Err(format!(
                "Tool {:?}: inputSchema must be a JSON object",
                t.name
            ));
        }
    }
    let runtime = runtime
        .ok_or("A node must send nodeRuntime (hostRole, hostCapabilities, toolCapabilities)")?;
    let info: NodeRuntimeInfo =
        serde_json::from_value(runtime.clone()).map_err(|e| format!("Invalid nodeRuntime: {e}"))?;
    if info.host_capabilities.is_empty() {
        return Err("nodeRuntime.hostCapabilities must not be empty".into());
    }
    for cap in &info.host_capabilities {
        if !capability::ALL.contains(&cap.as_str()) {
            return Err(format!(
                "nodeRuntime.hostCapabilities: unknown capability {cap:?} (known: {})",
                capability::ALL.join(", ")
            ));
        }
    }
    for name in &names {
        let caps = info.tool_capabilities.get(*name).ok_or_else(|| {
            format!("nodeRuntime.toolCapabilities has no entry for tool {name:?}")
        })?;
        if let Some(cap) = caps.iter().find(|c| !info.host_capabilities.contains(c)) {
            return Err(format!(
                "nodeRuntime.toolCapabilities.{name}: {cap:?} is not among hostCapabilities"
            ));
        }
    }
    if let Some(extra) = info
        .tool_capabilities
        .keys()
        .find(|k| !names.contains(k.as_str()))
    {
        return Err(format!(
            "nodeRuntime.toolCapabilities names {extra:?}, which is not a registered tool"
        ));
    }
    if info.host_role == HostRole::Execution {
        let missing: Vec<&str> = capability::EXECUTION_BASELINE
            .iter()
            .copied()
            .filter(|c| !info.host_capabilities.iter().any(|h| h == c))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "An execution host must offer {}; missing {}",
                capability::EXECUTION_BASELINE.join(", "),
                missing.join(", ")
            ));
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
        host_role: match info.host_role {
            HostRole::Execution => "execution".into(),
            HostRole::Specialized => "specialized".into(),
        },
        host_capabilities: info.host_capabilities.clone(),
        host_os: info.host_os.clone(),
        host_env: info.host_env.clone(),
        host_bin_status: info.host_bin_status.clone().unwrap_or_default(),
        host_bin_status_updated_at: info.host_bin_status_updated_at.map(|t| t.max(0) as u64),
    }
}

#[cfg(test)]
mod tests;
