//! Bin probes: which connected nodes to ask for which
//! binaries, what a node's answer changes in its runtime info, and the
//! `skills.update` answer once every probe has settled. The Gateway DO
//! (`worker::gateway_do::probes`) does the I/O around these decisions.

use super::host::HostInfo;
use gsv_protocol::{
    valid_bin_name, NodeProbeResultParams, NodeRuntimeInfo, SkillProbeError, SkillsUpdateResult,
};

/// A node's bin status is re-probed once it is this old (v1
/// `SKILL_BIN_STATUS_TTL_MS`).
pub const BIN_STATUS_TTL_MS: u64 = 5 * 60 * 1000;
/// How long `skills.update` waits for probes unless told otherwise.
pub const DEFAULT_PROBE_TIMEOUT_MS: u64 = 15_000;
const MIN_PROBE_TIMEOUT_MS: u64 = 1_000;
const MAX_PROBE_TIMEOUT_MS: u64 = 120_000;

/// The probe timeout for a requested one (default 15 s, clamped 1–120 s).
pub fn probe_timeout_ms(requested: Option<u64>) -> u64 {
    requested
        .unwrap_or(DEFAULT_PROBE_TIMEOUT_MS)
        .clamp(MIN_PROBE_TIMEOUT_MS, MAX_PROBE_TIMEOUT_MS)
}

/// The bins worth probing: valid names only (`^[A-Za-z0-9._+-]+$`),
/// sorted, each once.
pub fn sanitize_bins<'a>(bins: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = bins
        .into_iter()
        .filter(|b| valid_bin_name(b))
        .cloned()
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The agents whose skills a newly connected node is probed for: `main`,
/// the default agent and every `agents.list[].id`, sorted, each once.
pub fn agents_to_probe<'a>(
    default_agent: &'a str,
    listed: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let mut agents: Vec<String> = ["main", default_agent]
        .into_iter()
        .chain(listed)
        .map(String::from)
        .collect();
    agents.sort_unstable();
    agents.dedup();
    agents
}

/// Which connected nodes a probe for `bins` goes to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProbePlan {
    /// Nodes to probe, by id.
    pub probe: Vec<String>,
    /// Connected nodes left alone, by id.
    pub skipped: Vec<String>,
}

/// Probes every node that can run one ([`HostInfo::can_probe_bins`]) and whose status is
/// stale for `bins` — never probed, older than [`BIN_STATUS_TTL_MS`], or
/// missing one of `bins` — or every such node when `force`. With no bins
/// there is nothing to ask, so every node is skipped.
pub fn plan_probes(hosts: &[HostInfo], bins: &[String], force: bool, now: u64) -> ProbePlan {
    let mut plan = ProbePlan::default();
    for h in super::host::sorted_hosts(hosts) {
        let can = h.can_probe_bins();
        let wanted = !bins.is_empty() && (force || stale(h, bins, now));
        let list = if can && wanted {
            &mut plan.probe
        } else {
            &mut plan.skipped
        };
        list.push(h.node_id.clone());
    }
    plan
}

fn stale(h: &HostInfo, bins: &[String], now: u64) -> bool {
    let old = h
        .host_bin_status_updated_at
        .is_none_or(|at| now.saturating_sub(at) >= BIN_STATUS_TTL_MS);
    old || bins.iter().any(|b| !h.host_bin_status.contains_key(b))
}

/// How one probe ended, as `skills.update` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// The node answered; its bin status is fresh.
    Updated,
    /// It did not, for this reason (one sentence).
    Failed(String),
}

/// The node did not answer within the probe's timeout.
pub fn timed_out(node_id: &str, timeout_ms: u64) -> ProbeOutcome {
    ProbeOutcome::Failed(format!(
        "node {node_id} did not answer the bin probe within {timeout_ms} ms"
    ))
}

/// The node's connection closed before it answered.
pub fn disconnected(node_id: &str) -> ProbeOutcome {
    ProbeOutcome::Failed(format!(
        "node {node_id} disconnected before answering the bin probe"
    ))
}

/// Applies a node's `node.probe.result` to its runtime info. Only the
/// bins the probe asked for are taken (a node cannot plant others); a
/// requested bin the answer leaves out counts as absent. A failed probe
/// changes nothing.
pub fn apply_probe_result(
    runtime: &mut NodeRuntimeInfo,
    node_id: &str,
    requested: &[String],
    answer: &NodeProbeResultParams,
    now: u64,
) -> ProbeOutcome {
    let reported = match (answer.ok, &answer.bins) {
        (true, Some(bins)) => bins,
        (true, None) => {
            return ProbeOutcome::Failed(format!(
                "node {node_id} answered the bin probe without bins"
            ))
        }
        (false, _) => {
            let why = answer.error.as_deref().unwrap_or("no reason given");
            return ProbeOutcome::Failed(format!("node {node_id} could not probe bins: {why}"));
        }
    };
    let status = runtime.host_bin_status.get_or_insert_with(Default::default);
    for bin in requested {
        status.insert(bin.clone(), reported.get(bin).copied().unwrap_or(false));
    }
    runtime.host_bin_status_updated_at = Some(now as i64);
    ProbeOutcome::Updated
}

/// The `skills.update` answer: `status` re-evaluated after the probes,
/// and what each probe did (`(node id, outcome)`, any order).
pub fn update_result<S>(
    status: S,
    outcomes: &[(String, ProbeOutcome)],
    mut skipped: Vec<String>,
) -> SkillsUpdateResult<S> {
    let mut updated: Vec<String> = Vec::new();
    let mut errors: Vec<SkillProbeError> = Vec::new();
    for (node_id, outcome) in outcomes {
        match outcome {
            ProbeOutcome::Updated => updated.push(node_id.clone()),
            ProbeOutcome::Failed(error) => errors.push(SkillProbeError {
                node_id: node_id.clone(),
                error: error.clone(),
            }),
        }
    }
    updated.sort_unstable();
    updated.dedup();
    errors.sort_by(|a, b| a.node_id.cmp(&b.node_id));
    skipped.sort_unstable();
    SkillsUpdateResult {
        status,
        updated_node_count: updated.len() as u32,
        updated_node_ids: updated,
        skipped_node_ids: skipped,
        errors,
    }
}

#[cfg(test)]
#[path = "probe_tests.rs"]
mod tests;
