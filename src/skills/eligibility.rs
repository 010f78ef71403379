//! Whether a skill can be used now:
//! `always` wins; unreadable requirements fail closed; otherwise the
//! connected hosts are narrowed requirement by requirement and at least
//! one must remain, and every `config` path must be truthy.

use super::host::{sorted_hosts, HostInfo};
use super::requires::{Requirements, FIELDS};
use crate::config::Config;
use serde_json::Value;

/// The verdict for one skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Eligibility {
    /// Whether the skill is offered now.
    pub eligible: bool,
    /// Node ids that meet the host requirements (all hosts when there are
    /// none); empty when not eligible.
    pub hosts: Vec<String>,
    /// Why not eligible, one sentence each.
    pub reasons: Vec<String>,
}

/// Evaluates one skill. `problems` are the requirement parse problems;
/// any of them hides the skill unless it is `always`. Skills that only
/// require `config` paths need no connected host.
pub fn evaluate(
    always: bool,
    req: &Requirements,
    problems: &[String],
    hosts: &[HostInfo],
    config: &Config,
) -> Eligibility {
    let sorted = sorted_hosts(hosts);
    let ids = |hs: &[&HostInfo]| hs.iter().map(|h| h.node_id.clone()).collect::<Vec<_>>();
    if always {
        return Eligibility {
            eligible: true,
            hosts: ids(&sorted),
            reasons: Vec::new(),
        };
    }
    let mut reasons: Vec<String> = problems.to_vec();
    if reasons.is_empty() {
        for path in &req.config {
            if !truthy(config.raw(path)) {
                reasons.push(format!(
                    "requires.config: `{path}` is not set in the gateway config"
                ));
            }
        }
    }
    let mut candidates = sorted;
    if reasons.is_empty() && req.needs_host() {
        if candidates.is_empty() {
            reasons.push("no node is connected, and this skill needs a host".into());
        }
        for field in FIELDS.iter().filter(|f| **f != "config") {
            let wanted = req.field(field);
            if wanted.is_empty() || candidates.is_empty() {
                continue;
            }
            let before = ids(&candidates).join(", ");
            candidates.retain(|h| meets(h, field, wanted));
            if candidates.is_empty() {
                reasons.push(format!(
                    "no connected host satisfies requires.{field} ({}); hosts checked: {before}",
                    describe(field, wanted)
                ));
            }
        }
    }
    let eligible = reasons.is_empty();
    Eligibility {
        eligible,
        hosts: if eligible {
            ids(&candidates)
        } else {
            Vec::new()
        },
        reasons,
    }
}

fn meets(h: &HostInfo, field: &str, wanted: &[String]) -> bool {
    match field {
        "hostRoles" => wanted.contains(&h.host_role),
        "capabilities" => wanted.iter().all(|c| h.has_capability(c)),
        "anyCapabilities" => wanted.iter().any(|c| h.has_capability(c)),
        "os" => h
            .host_os
            .as_deref()
            .is_some_and(|os| wanted.iter().any(|w| w.eq_ignore_ascii_case(os))),
        "env" => wanted.iter().all(|e| h.host_env.contains(e)),
        "bins" => wanted.iter().all(|b| h.has_bin(b)),
        "anyBins" => wanted.iter().any(|b| h.has_bin(b)),
        _ => true,
    }
}

fn describe(field: &str, wanted: &[String]) -> String {
    let list = wanted.join(", ");
    match field {
        "hostRoles" => format!("role is one of: {list}"),
        "os" => format!("OS is one of: {list}"),
        "capabilities" => format!("has every capability: {list}"),
        "anyCapabilities" => format!("has a capability among: {list}"),
        "env" => format!("sets every environment variable: {list}"),
        "bins" => format!("has every binary: {list}"),
        "anyBins" => format!("has a binary among: {list}"),
        _ => list,
    }
}

/// JavaScript truthiness, as upstream checks config paths.
fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(_) | Value::Object(_)) => true,
    }
}
