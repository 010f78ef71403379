//! Fixtures and snapshot tests of whole prompts (src/prompt/snapshots/).

use super::*;
use crate::selfreport::{native_workspace_tools, self_report_tools};
use crate::workspace::templates::TEMPLATES;
use serde_json::json;
use std::collections::BTreeMap;

pub(super) fn tools() -> Vec<ToolDefinition> {
    let mut t = native_workspace_tools();
    t.extend(self_report_tools(true));
    t.push(ToolDefinition {
        name: "laptop__Bash".into(),
        description: "Run a shell command.\n\nSupports   background jobs and\ttimeouts.".into(),
        input_schema: json!({"type": "object"}),
    });
    t.push(ToolDefinition {
        name: "laptop__Read".into(),
        description: "Read a file on the host. ".repeat(12),
        input_schema: json!({"type": "object"}),
    });
    t
}

pub(super) fn hosts() -> Vec<HostInfo> {
    vec![
        HostInfo {
            node_id: "laptop".into(),
            host_role: "execution".into(),
            host_capabilities: vec![
                "filesystem.list".into(),
                "filesystem.read".into(),
                "filesystem.write".into(),
                "shell.exec".into(),
            ],
            host_os: Some("linux".into()),
            host_env: vec!["GITHUB_TOKEN".into(), "HOME".into()],
            host_bin_status: BTreeMap::from([("gh".into(), true), ("tmux".into(), false)]),
            host_bin_status_updated_at: Some(1),
            no_bin_probes: false,
        },
        HostInfo {
            node_id: "camera".into(),
            host_role: "specialized".into(),
            host_capabilities: vec!["filesystem.read".into()],
            ..Default::default()
        },
    ]
}

pub(super) fn ctx<'a>(
    tools: &'a [ToolDefinition],
    hosts: &'a [HostInfo],
    is_main: bool,
) -> PromptContext<'a> {
    PromptContext {
        agent_id: "main",
        session_key: if is_main {
            "agent:main:main"
        } else {
            "agent:main:whatsapp:dm:+15550001"
        },
        is_main,
        model_provider: "anthropic",
        model_id: "claude-sonnet-4-20250514",
        timezone: "Europe/Berlin",
        tools,
        hosts,
        base_prompt: "You are a helpful AI assistant running inside GSV.",
        heartbeat_prompt: Some(
            "Read HEARTBEAT.md if it exists. If nothing needs attention, reply HEARTBEAT_OK.",
        ),
    }
}

pub(super) fn skill(name: &str, description: &str) -> PromptSkill {
    PromptSkill {
        name: name.into(),
        description: description.into(),
        location: format!("skills/{name}/SKILL.md"),
        read_path: format!("skills/{name}/SKILL.md"),
        always: false,
    }
}

pub(super) fn full() -> Workspace {
    Workspace {
        soul: Some("Be direct. Have opinions.\n".into()),
        identity: Some("- **Name:** Kate\n- **Creature:** octopus\n- **Vibe:** warm but sharp\n- **Emoji:** 🐙\n".into()),
        user: Some("- **Name:** Luis\n- **Timezone:** Europe/Berlin\n".into()),
        agents: Some("Write daily notes.".into()),
        memory: Some("## People\n- Luis prefers Spanish.".into()),
        tools: Some("laptop = daily work".into()),
        heartbeat: Some("# Tasks\n- Check the build.".into()),
        bootstrap: None,
        yesterday: Some(DailyMemory { date: "2026-02-17".into(), content: "Shipped v1.".into() }),
        today: Some(DailyMemory { date: "2026-02-18".into(), content: "Planning v2.".into() }),
        skills: vec![
            PromptSkill { always: true, ..skill("github", "Use gh for <issues> & \"PRs\".") },
            skill("notes", "Take notes."),
        ],
        ineligible_skills: 1,
    }
}

pub(super) fn build(ws: &Workspace, is_main: bool) -> String {
    let (t, h) = (tools(), hosts());
    build_system_prompt(ws, &ctx(&t, &h, is_main), PromptLimits::default())
}

/// The first line of every section.
pub(super) fn titles(prompt: &str) -> Vec<String> {
    prompt
        .split(SECTION_SEPARATOR)
        .map(|s| s.lines().next().unwrap_or("").to_string())
        .collect()
}

pub(super) const SCAFFOLD: [&str; 6] = [
    "You are a helpful AI assistant running inside GSV.",
    "## Tooling",
    "## Tool Call Style",
    "## Safety",
    "## Workspace",
    "## Workspace Files (Injected)",
];

pub(super) fn expect(middle: &[&str]) -> Vec<String> {
    SCAFFOLD
        .iter()
        .chain(middle)
        .chain(["## Chat App Messages", "## Runtime"].iter())
        .map(|s| s.to_string())
        .collect()
}

#[test]
fn snapshot_normal_main_session() {
    let prompt = build(&full(), true);
    assert_eq!(
        titles(&prompt),
        expect(&[
            "## Your Soul",
            "## Your Identity",
            "## About Your Human",
            "## Operating Instructions",
            "## Long-Term Memory",
            "## Recent Context",
            "## Tool Notes",
            "## Heartbeats",
            "## Skills (Mandatory Scan)",
        ])
    );
    insta::assert_snapshot!("normal_main", prompt);
}

#[test]
fn snapshot_non_main_session_has_no_memory() {
    let prompt = build(&full(), false);
    assert_eq!(
        titles(&prompt),
        expect(&[
            "## Your Soul",
            "## Your Identity",
            "## About Your Human",
            "## Operating Instructions",
            "## Recent Context",
            "## Tool Notes",
            "## Heartbeats",
            "## Skills (Mandatory Scan)",
        ])
    );
    assert!(!prompt.contains("Luis prefers Spanish"));
    insta::assert_snapshot!("non_main", prompt);
}

#[test]
fn snapshot_bootstrap() {
    let ws = Workspace {
        bootstrap: Some(TEMPLATES[7].1.into()),
        identity: Some(TEMPLATES[2].1.into()),
        ..full()
    };
    let prompt = build(&ws, true);
    assert_eq!(
        titles(&prompt),
        expect(&[
            "## COMMISSIONING CEREMONY (First Run)",
            "## Current Soul (update during commissioning)",
            "## Current Identity (fill in during commissioning)",
            "## About Your Human",
        ])
    );
    insta::assert_snapshot!("bootstrap", prompt);
}

#[test]
fn snapshot_no_workspace_no_tools_no_hosts() {
    let c = PromptContext {
        tools: &[],
        hosts: &[],
        heartbeat_prompt: None,
        ..ctx(&[], &[], true)
    };
    let prompt = build_system_prompt(&Workspace::default(), &c, PromptLimits::default());
    assert_eq!(titles(&prompt), expect(&[]));
    insta::assert_snapshot!("no_workspace", prompt);
}

#[test]
fn snapshot_truncation() {
    let ws = Workspace {
        soul: Some("S".repeat(50)),
        identity: None,
        user: Some("ü".repeat(30)),
        agents: Some("A".repeat(50)),
        memory: Some("M".repeat(10)),
        ..Workspace::default()
    };
    let (t, h) = (tools(), hosts());
    let limits = PromptLimits {
        max_file_chars: 40,
        max_total_chars: 75,
    };
    let prompt = build_system_prompt(&ws, &ctx(&t, &h, true), limits);
    let body = |title: &str| {
        prompt
            .split(SECTION_SEPARATOR)
            .find(|s| s.starts_with(title))
            .map(|s| s[title.len()..].trim_start().to_string())
    };
    assert_eq!(
        body("## Your Soul"),
        Some(format!("{}\n\n[truncated] Only the first 40 of 50 characters of SOUL.md are shown; read the whole file with gsv__ReadFile.", "S".repeat(40)))
    );
    assert_eq!(body("## About Your Human"), Some("ü".repeat(30)));
    assert_eq!(
        body("## Operating Instructions"),
        Some(format!("{}\n\n[truncated] Only the first 5 of 50 characters of AGENTS.md are shown; read the whole file with gsv__ReadFile.", "A".repeat(5)))
    );
    assert_eq!(
        body("## Long-Term Memory"),
        Some("[truncated] MEMORY.md (10 characters) is left out: the workspace budget is spent. Read it with gsv__ReadFile.".into())
    );
    insta::assert_snapshot!("truncation", prompt);
}
