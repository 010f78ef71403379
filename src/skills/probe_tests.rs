use super::*;
use crate::config::Config;
use crate::skills::{skills_status, SkillFile, SkillSource};
use gsv_protocol::HostRole;
use serde_json::json;
use std::collections::BTreeMap;

const NOW: u64 = 10_000_000;

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn host(id: &str, shell: bool, bins: &[(&str, bool)], updated_at: Option<u64>) -> HostInfo {
    let mut caps = strings(&["filesystem.read"]);
    if shell {
        caps.push("shell.exec".into());
    }
    HostInfo {
        node_id: id.into(),
        host_role: "execution".into(),
        host_capabilities: caps,
        host_os: Some("linux".into()),
        host_env: vec![],
        host_bin_status: bins.iter().map(|(b, ok)| (b.to_string(), *ok)).collect(),
        host_bin_status_updated_at: updated_at,
        no_bin_probes: false,
    }
}

#[test]
fn timeouts_are_clamped() {
    let got = [None, Some(0), Some(999), Some(5_000), Some(10_000_000)].map(probe_timeout_ms);
    assert_eq!(got, [15_000, 1_000, 1_000, 5_000, 120_000]);
}

#[test]
fn bins_are_sanitized_sorted_and_deduplicated() {
    let raw = strings(&["jq", "bad name", "gh", "../sh", "jq", "g++", ""]);
    assert_eq!(sanitize_bins(&raw), strings(&["g++", "gh", "jq"]));
}

#[test]
fn agents_probed_on_connect() {
    assert_eq!(
        agents_to_probe("work", ["work", "home", "main"]),
        strings(&["home", "main", "work"])
    );
    assert_eq!(agents_to_probe("main", []), strings(&["main"]));
}

#[test]
fn plan_probes_only_stale_nodes_that_can_probe() {
    let fresh = Some(NOW - 1_000);
    let old = Some(NOW - BIN_STATUS_TTL_MS);
    let hosts = [
        host("fresh", true, &[("gh", true), ("jq", false)], fresh),
        host("old", true, &[("gh", true), ("jq", true)], old),
        host("missing-bin", true, &[("gh", true)], fresh),
        host("never", true, &[], None),
        host("cam", false, &[], None),
        // A last-v1 node: it can run commands but answers no probes.
        HostInfo {
            no_bin_probes: true,
            ..host("v1", true, &[], None)
        },
    ];
    let bins = strings(&["gh", "jq"]);
    assert_eq!(
        plan_probes(&hosts, &bins, false, NOW),
        ProbePlan {
            probe: strings(&["missing-bin", "never", "old"]),
            skipped: strings(&["cam", "fresh", "v1"]),
        }
    );
    assert_eq!(
        plan_probes(&hosts, &bins, true, NOW),
        ProbePlan {
            probe: strings(&["fresh", "missing-bin", "never", "old"]),
            skipped: strings(&["cam", "v1"]),
        }
    );
    // Nothing required: nothing to ask anyone, forced or not.
    assert_eq!(
        plan_probes(&hosts, &[], true, NOW),
        ProbePlan {
            probe: vec![],
            skipped: strings(&["cam", "fresh", "missing-bin", "never", "old", "v1"]),
        }
    );
}

fn runtime(bins: Option<&[(&str, bool)]>) -> NodeRuntimeInfo {
    NodeRuntimeInfo {
        host_role: Some(HostRole::Execution),
        host_capabilities: strings(&["shell.exec"]),
        tool_capabilities: BTreeMap::from([("Bash".to_string(), strings(&["shell.exec"]))]),
        host_os: Some("linux".into()),
        host_env: vec![],
        host_bin_status: bins.map(|b| b.iter().map(|(k, v)| (k.to_string(), *v)).collect()),
        host_bin_status_updated_at: bins.map(|_| 5),
    }
}

fn answer(ok: bool, bins: Option<&[(&str, bool)]>, error: Option<&str>) -> NodeProbeResultParams {
    NodeProbeResultParams {
        probe_id: "p1".into(),
        ok,
        bins: bins.map(|b| b.iter().map(|(k, v)| (k.to_string(), *v)).collect()),
        error: error.map(String::from),
    }
}

#[test]
fn results_merge_only_the_requested_bins() {
    let mut rt = runtime(Some(&[("git", true), ("gh", true)]));
    let requested = strings(&["gh", "jq", "sh"]);
    let reply = answer(
        true,
        Some(&[("gh", false), ("sh", true), ("planted", true)]),
        None,
    );
    let outcome = apply_probe_result(&mut rt, "laptop", &requested, &reply, NOW);
    assert_eq!(outcome, ProbeOutcome::Updated);
    let mut want = runtime(Some(&[
        ("git", true),
        ("gh", false),
        ("jq", false),
        ("sh", true),
    ]));
    want.host_bin_status_updated_at = Some(NOW as i64);
    assert_eq!(rt, want);

    // First probe of a node that reported no status at connect.
    let mut rt = runtime(None);
    apply_probe_result(
        &mut rt,
        "laptop",
        &strings(&["sh"]),
        &answer(true, Some(&[("sh", true)]), None),
        NOW,
    );
    let mut want = runtime(Some(&[("sh", true)]));
    want.host_bin_status_updated_at = Some(NOW as i64);
    assert_eq!(rt, want);
}

#[test]
fn failed_probes_change_nothing() {
    let before = runtime(Some(&[("gh", true)]));
    let cases = [
        (
            answer(false, None, Some("invalid bin name \"a b\"")),
            "node laptop could not probe bins: invalid bin name \"a b\"",
        ),
        (
            answer(false, None, None),
            "node laptop could not probe bins: no reason given",
        ),
        (
            answer(true, None, None),
            "node laptop answered the bin probe without bins",
        ),
    ];
    for (reply, why) in cases {
        let mut rt = before.clone();
        let outcome = apply_probe_result(&mut rt, "laptop", &strings(&["gh"]), &reply, NOW);
        assert_eq!(outcome, ProbeOutcome::Failed(why.into()));
        assert_eq!(rt, before);
    }
    assert_eq!(
        [timed_out("mute", 1000), disconnected("gone")],
        [
            ProbeOutcome::Failed("node mute did not answer the bin probe within 1000 ms".into()),
            ProbeOutcome::Failed("node gone disconnected before answering the bin probe".into()),
        ]
    );
}

#[test]
fn update_result_is_the_status_plus_what_the_probes_did() {
    let skill = "---\ndescription: Shell things.\nmetadata:\n  gsv:\n    requires:\n      bins: [sh]\n---\n";
    let files = [SkillFile {
        dir: "shell".into(),
        source: SkillSource::Global,
        content: skill.into(),
    }];
    let hosts = [host("laptop", true, &[("sh", true)], Some(NOW))];
    let status = skills_status("main", &files, &hosts, &Config::default(), NOW);
    let outcomes = [
        ("laptop".to_string(), ProbeOutcome::Updated),
        ("mute".to_string(), timed_out("mute", 1000)),
        ("gone".to_string(), disconnected("gone")),
    ];
    let result = update_result(status, &outcomes, strings(&["cam", "box"]));
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({
            "agentId": "main",
            "refreshedAt": NOW,
            "requiredBins": ["sh"],
            "nodes": [{
                "nodeId": "laptop", "hostRole": "execution",
                "hostCapabilities": ["filesystem.read", "shell.exec"], "hostOs": "linux",
                "hostEnv": [], "hostBins": ["sh"], "hostBinStatusUpdatedAt": NOW, "canProbeBins": true
            }],
            "skills": [{
                "name": "shell", "description": "Shell things.", "location": "skills/shell/SKILL.md",
                "readPath": "skills/shell/SKILL.md", "source": "global", "always": false,
                "eligible": true, "eligibleHosts": ["laptop"], "reasons": [],
                "requirements": {"bins": ["sh"], "anyBins": [], "env": [], "config": [], "os": [],
                                 "hostRoles": [], "capabilities": [], "anyCapabilities": []}
            }],
            "updatedNodeCount": 1,
            "updatedNodeIds": ["laptop"],
            "skippedNodeIds": ["box", "cam"],
            "errors": [
                {"nodeId": "gone", "error": "node gone disconnected before answering the bin probe"},
                {"nodeId": "mute", "error": "node mute did not answer the bin probe within 1000 ms"}
            ]
        })
    );
}
