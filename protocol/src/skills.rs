//! Skill bin probes (`skills.update`, `node.probe.result`, the event
//! `node.probe`): the gateway asks nodes which of the
//! binaries its skills require are on their PATH.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The only probe kind v1 knows.
pub const PROBE_KIND_BINS: &str = "bins";

/// Where a SKILL.md lives: `skills.status` and `workspace.read`'s
/// `resolvedSource` say which copy is in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum SkillSource {
    /// `agents/{agentId}/skills/{dir}/SKILL.md`: overrides a global one.
    Agent,
    /// `skills/{dir}/SKILL.md`.
    Global,
}

/// Whether `name` may be probed: `^[A-Za-z0-9._+-]+$`. Anything else could
/// be a path or a shell word, so neither the gateway nor the node lets it
/// near a filesystem lookup.
pub fn valid_bin_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"._+-".contains(&c))
}

/// Event `node.probe` (gateway → node): report which of `bins` are
/// executable files on the node's PATH, within `timeoutMs`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeProbeEvent {
    pub probe_id: String,
    /// Always [`PROBE_KIND_BINS`].
    pub kind: String,
    pub bins: Vec<String>,
    /// How long the gateway waits for the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// `node.probe.result` params (node → gateway).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeProbeResultParams {
    pub probe_id: String,
    pub ok: bool,
    /// Bin name → found on PATH; present when `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bins: Option<BTreeMap<String, bool>>,
    /// Why the probe failed; present when not `ok`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `skills.update` params: probe the connected nodes for the agent's
/// required bins, then answer with the re-evaluated status.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SkillsUpdateParams {
    /// Default: the default agent (`main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Probe even nodes whose bin status is fresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
    /// How long to wait for the probes (default 15 000, clamped to
    /// 1 000–120 000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// One node whose probe failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SkillProbeError {
    pub node_id: String,
    pub error: String,
}

/// `skills.update` result: every field of the `skills.status` result
/// (`status`, flattened) and what the probes did. `S` is the gateway's
/// typed status; readers that only render it use the default, a JSON map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SkillsUpdateResult<S = Map<String, Value>> {
    #[serde(flatten)]
    pub status: S,
    /// Nodes whose bin status this update refreshed.
    pub updated_node_count: u32,
    /// Their ids (an addition to v1, so clients can say which).
    pub updated_node_ids: Vec<String>,
    /// Connected nodes not probed: no `shell.exec`, status still fresh, or
    /// nothing to probe.
    pub skipped_node_ids: Vec<String>,
    /// Probes that timed out, failed on the node, or lost their node.
    pub errors: Vec<SkillProbeError>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bin_names() {
        let ok = ["sh", "git-lfs", "g++", "python3.12", "a_b"];
        let bad = ["", "a b", "../sh", "/bin/sh", "x;rm", "é", "$(x)"];
        assert_eq!(ok.map(valid_bin_name), [true; 5]);
        assert_eq!(bad.map(valid_bin_name), [false; 7]);
    }

    #[test]
    fn wire_shapes() {
        let evt = NodeProbeEvent {
            probe_id: "p1".into(),
            kind: PROBE_KIND_BINS.into(),
            bins: vec!["gh".into()],
            timeout_ms: Some(15_000),
        };
        assert_eq!(
            serde_json::to_value(&evt).unwrap(),
            json!({"probeId": "p1", "kind": "bins", "bins": ["gh"], "timeoutMs": 15000})
        );
        let res: NodeProbeResultParams =
            serde_json::from_value(json!({"probeId": "p1", "ok": true, "bins": {"gh": false}}))
                .unwrap();
        assert_eq!(
            res,
            NodeProbeResultParams {
                probe_id: "p1".into(),
                ok: true,
                bins: Some(BTreeMap::from([("gh".to_string(), false)])),
                error: None,
            }
        );
        let update = SkillsUpdateResult {
            status: json!({"agentId": "main", "skills": []})
                .as_object()
                .unwrap()
                .clone(),
            updated_node_count: 1,
            updated_node_ids: vec!["laptop".into()],
            skipped_node_ids: vec!["cam".into()],
            errors: vec![SkillProbeError {
                node_id: "mute".into(),
                error: "timed out".into(),
            }],
        };
        let wire = json!({
            "agentId": "main", "skills": [],
            "updatedNodeCount": 1, "updatedNodeIds": ["laptop"], "skippedNodeIds": ["cam"],
            "errors": [{"nodeId": "mute", "error": "timed out"}]
        });
        assert_eq!(serde_json::to_value(&update).unwrap(), wire);
        let back: SkillsUpdateResult = serde_json::from_value(wire).unwrap();
        assert_eq!(back, update);
    }
}
