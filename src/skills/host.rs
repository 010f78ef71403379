//! What the gateway knows about a connected node: the
//! part of its runtime info that skill eligibility and the prompt's
//! Runtime section read.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Host roles a node may declare.
pub const HOST_ROLES: &[&str] = &["execution", "specialized"];

/// Capability ids a node may declare (the wire crate holds the list).
pub const CAPABILITIES: &[&str] = gsv_protocol::capability::ALL;

/// One connected node's runtime info, as validated at connect time and
/// updated by bin probes. Deserializes from the camelCase wire shape.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostInfo {
    /// The node's id (the prefix of its tool names).
    pub node_id: String,
    /// `execution` or `specialized`.
    pub host_role: String,
    /// Capability ids the node declared.
    #[serde(default)]
    pub host_capabilities: Vec<String>,
    /// Lower-cased OS name (`linux`, `darwin`, `windows`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_os: Option<String>,
    /// Names (never values) of the environment variables set on the host.
    #[serde(default)]
    pub host_env: Vec<String>,
    /// Probed binaries: `true` when found on the host's PATH.
    #[serde(default)]
    pub host_bin_status: BTreeMap<String, bool>,
    /// When the bin status was last probed (epoch ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_bin_status_updated_at: Option<u64>,
    /// The node does not answer bin probes (`node.probe`): the last v1
    /// nodes (6791fd14 on) dropped them along with `hostRole`, so a node
    /// that sends no role is never probed (it would only time out).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_bin_probes: bool,
}

impl HostInfo {
    /// Whether the host declares `capability`.
    pub fn has_capability(&self, capability: &str) -> bool {
        self.host_capabilities.iter().any(|c| c == capability)
    }

    /// Whether a bin probe may be sent: the node answers them and can run
    /// commands (`shell.exec`).
    pub fn can_probe_bins(&self) -> bool {
        !self.no_bin_probes && self.has_capability(gsv_protocol::capability::SHELL_EXEC)
    }

    /// Whether a probe found `bin` on the host (unknown counts as absent).
    pub fn has_bin(&self, bin: &str) -> bool {
        self.host_bin_status.get(bin) == Some(&true)
    }

    /// The bins a probe found, sorted.
    pub fn available_bins(&self) -> Vec<String> {
        self.host_bin_status
            .iter()
            .filter(|(_, ok)| **ok)
            .map(|(b, _)| b.clone())
            .collect()
    }
}

/// The hosts ordered by node id (every listing shows them in this order).
pub fn sorted_hosts(hosts: &[HostInfo]) -> Vec<&HostInfo> {
    let mut sorted: Vec<&HostInfo> = hosts.iter().collect();
    sorted.sort_unstable_by(|a, b| a.node_id.cmp(&b.node_id));
    sorted
}

/// The primary execution host: the lexicographically first connected
/// `execution` node.
pub fn primary_execution_host(hosts: &[HostInfo]) -> Option<&HostInfo> {
    hosts
        .iter()
        .filter(|h| h.host_role == "execution")
        .min_by(|a, b| a.node_id.cmp(&b.node_id))
}
