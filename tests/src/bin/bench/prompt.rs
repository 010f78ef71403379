//! Prompt assembly, natively: 50 skills and a workspace at the caps.

use super::{ms, stats};
use serde_json::{json, Value};
use std::time::Instant;

/// A workspace file past the default per-file cap (14 400 characters, cut
/// to 12 000 in the prompt).
pub fn cap_workspace_file(label: &str) -> String {
    format!(
        "# {label}\n\n{}",
        "Notes about the human and the work. ".repeat(400)
    )
}

/// The SKILL.md of bench skill `i`.
pub fn bench_skill(i: usize) -> String {
    format!(
        "---\nname: skill-{i:02}\ndescription: Does task number {i} well.\nmetadata: {{\"gsv\": {{\"emoji\": \"🔧\"}}}}\n---\n# Skill {i}\n\n{}",
        "Step by step instructions. ".repeat(40)
    )
}

/// Evaluating 50 SKILL.md files and assembling the prompt of a workspace
/// whose files fill the caps (12 000 characters each, 60 000 in all), as
/// the Session does once per run — natively, so the figure is the code's
/// own cost; in the Worker it runs as wasm.
pub fn prompt_assembly(iterations: usize) -> Value {
    use gsv_gateway::config::Config;
    use gsv_gateway::prompt::{
        build_system_prompt, DailyMemory, PromptContext, PromptLimits, Workspace,
    };
    use gsv_gateway::skills::{skills_status, SkillFile, SkillSource};
    let file = cap_workspace_file;
    let skills: Vec<SkillFile> = (0..50)
        .map(|i| SkillFile {
            dir: format!("skill-{i:02}"),
            source: if i % 2 == 0 {
                SkillSource::Agent
            } else {
                SkillSource::Global
            },
            content: bench_skill(i),
        })
        .collect();
    let config = Config::default();
    let mut samples = Vec::with_capacity(iterations);
    let mut prompt_chars = 0;
    for _ in 0..iterations {
        let t = Instant::now();
        let status = skills_status("main", &skills, &[], &config, 0);
        let ws = Workspace {
            soul: Some(file("Soul")),
            identity: Some("- **Name:** Nim\n- **Emoji:** 🦀\n- **Vibe:** calm".into()),
            user: Some(file("User")),
            agents: Some(file("Agents")),
            memory: Some(file("Memory")),
            tools: Some(file("Tools")),
            heartbeat: Some(file("Heartbeat")),
            bootstrap: None,
            yesterday: Some(DailyMemory {
                date: "2026-11-21".into(),
                content: file("Yesterday"),
            }),
            today: Some(DailyMemory {
                date: "2026-11-22".into(),
                content: file("Today"),
            }),
            skills: status.prompt_skills(),
            ineligible_skills: status.ineligible_count(),
        };
        let ctx = PromptContext {
            agent_id: "main",
            session_key: "agent:main:main",
            is_main: true,
            model_provider: "anthropic",
            model_id: "claude-sonnet-4-20250514",
            timezone: "Europe/Berlin",
            tools: &[],
            hosts: &[],
            base_prompt: "You are a helpful AI assistant running inside GSV.",
            heartbeat_prompt: None,
        };
        let prompt = build_system_prompt(&ws, &ctx, PromptLimits::from_config(&config));
        samples.push(ms(t.elapsed()));
        prompt_chars = prompt.chars().count();
    }
    json!({
        "skills": 50,
        "workspaceChars": 60000,
        "promptChars": prompt_chars,
        "time": stats(&samples),
    })
}
