//! `gsv skills status|update`: the agent's skills as the gateway evaluates
//! them; `update` first has the connected nodes probed for the binaries
//! the skills require.

use super::GatewayTarget;
use crate::cli::SkillsCommand;
use crate::connection::DEFAULT_REQUEST_TIMEOUT;
use anyhow::Result;
use gsv_protocol::{method, SkillsStatusParams, SkillsUpdateParams, SkillsUpdateResult};
use serde_json::Value;
use std::time::Duration;

/// The gateway waits at most this long for the nodes (v1's clamp)...
const MAX_PROBE_WAIT_MS: u64 = 120_000;
const DEFAULT_PROBE_WAIT_MS: u64 = 15_000;
/// ...and then re-reads the skills; this covers that and the round trip.
const ANSWER_MARGIN: Duration = Duration::from_secs(20);

pub async fn run(target: &GatewayTarget, command: SkillsCommand) -> Result<()> {
    let conn = target.connect().await?;
    match command {
        SkillsCommand::Status { agent, json } => {
            let params = SkillsStatusParams { agent_id: agent };
            let status = conn
                .call_value::<method::SkillsStatus>(&params, DEFAULT_REQUEST_TIMEOUT)
                .await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&status)?);
            } else {
                print!("{}", render(&status));
            }
        }
        SkillsCommand::Update {
            agent,
            agent_flag,
            force,
            timeout_ms,
            json,
        } => {
            let params = SkillsUpdateParams {
                agent_id: agent.or(agent_flag),
                force: force.then_some(true),
                timeout_ms,
            };
            let wait = timeout_ms
                .unwrap_or(DEFAULT_PROBE_WAIT_MS)
                .min(MAX_PROBE_WAIT_MS);
            let limit = Duration::from_millis(wait) + ANSWER_MARGIN;
            if json {
                let answer = conn
                    .call_value::<method::SkillsUpdate>(&params, limit)
                    .await?;
                println!("{}", serde_json::to_string_pretty(&answer)?);
            } else {
                let update = conn
                    .call_with_timeout::<method::SkillsUpdate>(&params, limit)
                    .await?;
                print!("{}", render_update(&update));
            }
        }
    }
    Ok(())
}

/// What the probes did, then the skills as [`render`] shows them.
pub fn render_update(update: &SkillsUpdateResult) -> String {
    let status = Value::Object(update.status.clone());
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let bins = names(&status["requiredBins"]);
    let nodes = status["nodes"].as_array().cloned().unwrap_or_default();
    let mut out = String::new();
    if bins.is_empty() {
        out.push_str("No skill needs a binary, so no node was probed.\n");
    } else if nodes.is_empty() {
        out.push_str(&format!(
            "Binaries the skills need: {}. No node is connected to look for them.\n",
            bins.join(", ")
        ));
    } else {
        out.push_str(&format!("Binaries the skills need: {}.\n", bins.join(", ")));
        if !update.updated_node_ids.is_empty() {
            out.push_str(&format!(
                "  probed: {}\n",
                update.updated_node_ids.join(", ")
            ));
        }
        let skipped: Vec<String> = update
            .skipped_node_ids
            .iter()
            .map(|id| {
                let node = nodes.iter().find(|n| n["nodeId"].as_str() == Some(id));
                let can_probe = node.is_some_and(|n| n["canProbeBins"] == Value::Bool(true));
                if can_probe {
                    format!("{id} (checked in the last 5 minutes; --force checks again)")
                } else {
                    format!("{id} (cannot run commands)")
                }
            })
            .collect();
        if !skipped.is_empty() {
            out.push_str(&format!("  skipped: {}\n", skipped.join(", ")));
        }
        for e in &update.errors {
            out.push_str(&format!("  failed: {} — {}\n", e.node_id, e.error));
        }
    }
    out.push_str(&render(&status));
    out
}

/// One line per skill, eligible ones first:
/// `✓ name (source) — description` or `✗ name (source) — reason; reason`.
pub fn render(status: &Value) -> String {
    let agent = status["agentId"].as_str().unwrap_or("?");
    let skills = status["skills"].as_array().cloned().unwrap_or_default();
    if skills.is_empty() {
        return format!("Agent {agent} has no skills (add one with `gsv workspace put skills/<name>/SKILL.md FILE`).\n");
    }
    let mut out = format!("Skills of agent {agent}:\n");
    let (eligible, other): (Vec<&Value>, Vec<&Value>) = skills
        .iter()
        .partition(|s| s["eligible"].as_bool() == Some(true));
    for s in eligible.into_iter().chain(other) {
        let text = |k: &str| s[k].as_str().unwrap_or_default().to_string();
        let mark = if s["eligible"].as_bool() == Some(true) {
            "✓"
        } else {
            "✗"
        };
        let mut why: Vec<String> = s["reasons"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(e) = s["error"].as_str() {
            why.insert(0, e.to_string());
        }
        let detail = if mark == "✓" || why.is_empty() {
            text("description")
        } else {
            why.join("; ")
        };
        out.push_str(&format!(
            "  {mark} {} ({}) — {detail}\n",
            text("name"),
            text("source")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn eligible_first_then_reasons() {
        let status = json!({"agentId": "main", "skills": [
            {"name": "broken", "source": "agent", "eligible": false, "reasons": [], "error": "frontmatter: bad YAML", "description": ""},
            {"name": "tides", "source": "global", "eligible": true, "reasons": [], "description": "Tide tables."},
            {"name": "gpu", "source": "agent", "eligible": false, "reasons": ["no host has bin nvidia-smi"], "description": "GPU stats."}
        ]});
        assert_eq!(
            render(&status),
            "Skills of agent main:\n  ✓ tides (global) — Tide tables.\n  ✗ broken (agent) — frontmatter: bad YAML\n  ✗ gpu (agent) — no host has bin nvidia-smi\n"
        );
    }

    #[test]
    fn update_says_what_was_probed() {
        let update: SkillsUpdateResult = serde_json::from_value(json!({
            "agentId": "main",
            "requiredBins": ["definitely-not-a-bin-xyz", "sh"],
            "nodes": [
                {"nodeId": "cam", "canProbeBins": false},
                {"nodeId": "laptop", "canProbeBins": true},
                {"nodeId": "mute", "canProbeBins": true},
                {"nodeId": "server", "canProbeBins": true}
            ],
            "skills": [
                {"name": "shell", "source": "agent", "eligible": true, "reasons": [], "description": "Run sh."},
                {"name": "ghost", "source": "agent", "eligible": false, "description": "",
                 "reasons": ["no connected host satisfies requires.bins (has every binary: definitely-not-a-bin-xyz); hosts checked: laptop"]}
            ],
            "updatedNodeCount": 1, "updatedNodeIds": ["laptop"], "skippedNodeIds": ["cam", "server"],
            "errors": [{"nodeId": "mute", "error": "node mute did not answer the bin probe within 1000 ms"}]
        }))
        .unwrap();
        assert_eq!(
            render_update(&update),
            "Binaries the skills need: definitely-not-a-bin-xyz, sh.\n  probed: laptop\n  skipped: cam (cannot run commands), server (checked in the last 5 minutes; --force checks again)\n  failed: mute — node mute did not answer the bin probe within 1000 ms\nSkills of agent main:\n  ✓ shell (agent) — Run sh.\n  ✗ ghost (agent) — no connected host satisfies requires.bins (has every binary: definitely-not-a-bin-xyz); hosts checked: laptop\n"
        );
    }

    #[test]
    fn update_with_nothing_to_probe() {
        let update = |bins: Value, nodes: Value| -> SkillsUpdateResult {
            serde_json::from_value(json!({
                "agentId": "main", "requiredBins": bins, "nodes": nodes, "skills": [],
                "updatedNodeCount": 0, "updatedNodeIds": [], "skippedNodeIds": [], "errors": []
            }))
            .unwrap()
        };
        let tail = "Agent main has no skills (add one with `gsv workspace put skills/<name>/SKILL.md FILE`).\n";
        assert_eq!(
            render_update(&update(json!([]), json!([{"nodeId": "laptop"}]))),
            format!("No skill needs a binary, so no node was probed.\n{tail}")
        );
        assert_eq!(
            render_update(&update(json!(["gh"]), json!([]))),
            format!("Binaries the skills need: gh. No node is connected to look for them.\n{tail}")
        );
    }

    #[test]
    fn no_skills_says_how_to_add_one() {
        assert_eq!(
            render(&json!({"agentId": "work", "skills": []})),
            "Agent work has no skills (add one with `gsv workspace put skills/<name>/SKILL.md FILE`).\n"
        );
    }
}
