//! `gsv skills status`: the agent's skills as the gateway evaluates them.

use super::GatewayTarget;
use crate::cli::SkillsCommand;
use anyhow::Result;
use gsv_protocol::{method, SkillsStatusParams};
use serde_json::Value;

pub async fn run(target: &GatewayTarget, command: SkillsCommand) -> Result<()> {
    let SkillsCommand::Status { agent, json } = command;
    let conn = target.connect().await?;
    let params = serde_json::to_value(SkillsStatusParams { agent_id: agent })?;
    let status = conn.request(method::SKILLS_STATUS, params).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&status)?);
    } else {
        print!("{}", render(&status));
    }
    Ok(())
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
    fn no_skills_says_how_to_add_one() {
        assert_eq!(
            render(&json!({"agentId": "work", "skills": []})),
            "Agent work has no skills (add one with `gsv workspace put skills/<name>/SKILL.md FILE`).\n"
        );
    }
}
