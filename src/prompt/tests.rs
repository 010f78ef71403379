use super::*;
use crate::config::Config;
use crate::selfreport::{native_workspace_tools, self_report_tools};
use crate::skills::{skills_status, SkillFile, SkillSource};
use crate::workspace::templates::TEMPLATES;
use serde_json::json;
use std::collections::BTreeMap;

fn tools() -> Vec<ToolDefinition> {
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

fn hosts() -> Vec<HostInfo> {
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
        },
        HostInfo {
            node_id: "camera".into(),
            host_role: "specialized".into(),
            host_capabilities: vec!["filesystem.read".into()],
            ..Default::default()
        },
    ]
}

fn ctx<'a>(tools: &'a [ToolDefinition], hosts: &'a [HostInfo], is_main: bool) -> PromptContext<'a> {
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
        channel: if is_main { None } else { Some("whatsapp") },
        tools,
        hosts,
        base_prompt: "You are a helpful AI assistant running inside GSV.",
        heartbeat_prompt: Some(
            "Read HEARTBEAT.md if it exists. If nothing needs attention, reply HEARTBEAT_OK.",
        ),
    }
}

fn skill(name: &str, description: &str) -> PromptSkill {
    PromptSkill {
        name: name.into(),
        description: description.into(),
        location: format!("skills/{name}/SKILL.md"),
        read_path: format!("skills/{name}/SKILL.md"),
        always: false,
    }
}

fn full() -> Workspace {
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

fn build(ws: &Workspace, is_main: bool) -> String {
    let (t, h) = (tools(), hosts());
    build_system_prompt(ws, &ctx(&t, &h, is_main), PromptLimits::default())
}

/// The first line of every section.
fn titles(prompt: &str) -> Vec<String> {
    prompt
        .split(SECTION_SEPARATOR)
        .map(|s| s.lines().next().unwrap_or("").to_string())
        .collect()
}

const SCAFFOLD: [&str; 6] = [
    "You are a helpful AI assistant running inside GSV.",
    "## Tooling",
    "## Tool Call Style",
    "## Safety",
    "## Workspace",
    "## Workspace Files (Injected)",
];

fn expect(middle: &[&str]) -> Vec<String> {
    SCAFFOLD
        .iter()
        .chain(middle)
        .chain(["## Runtime"].iter())
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

#[test]
fn each_file_row_adds_its_section_alone() {
    type Set = fn(&mut Workspace);
    let rows: [(Set, &str); 8] = [
        (|w| w.soul = Some("x".into()), "## Your Soul"),
        (
            |w| w.identity = Some("- **Name:** Kate".into()),
            "## Your Identity",
        ),
        (|w| w.user = Some("x".into()), "## About Your Human"),
        (|w| w.agents = Some("x".into()), "## Operating Instructions"),
        (|w| w.memory = Some("x".into()), "## Long-Term Memory"),
        (
            |w| {
                w.today = Some(DailyMemory {
                    date: "2026-02-18".into(),
                    content: "x".into(),
                })
            },
            "## Recent Context",
        ),
        (|w| w.tools = Some("x".into()), "## Tool Notes"),
        (
            |w| w.skills = vec![skill("notes", "Take notes.")],
            "## Skills (Mandatory Scan)",
        ),
    ];
    for (set, title) in rows {
        let mut ws = Workspace::default();
        set(&mut ws);
        assert_eq!(titles(&build(&ws, true)), expect(&[title]), "{title}");
    }
}

#[test]
fn blank_files_and_unfilled_identity_add_nothing() {
    let ws = Workspace {
        soul: Some("  \n".into()),
        identity: Some(TEMPLATES[2].1.into()),
        ..Workspace::default()
    };
    assert_eq!(titles(&build(&ws, true)), expect(&[]));
}

#[test]
fn identity_is_the_single_line() {
    let prompt = build(&full(), true);
    let section = prompt
        .split(SECTION_SEPARATOR)
        .find(|s| s.starts_with("## Your Identity"));
    assert_eq!(
        section,
        Some("## Your Identity\n\nname=Kate, emoji=🐙, vibe=warm but sharp")
    );
}

#[test]
fn recent_context_yesterday_then_today() {
    let only_yesterday = Workspace {
        yesterday: Some(DailyMemory {
            date: "2026-02-17".into(),
            content: "Old.".into(),
        }),
        ..Workspace::default()
    };
    let prompt = build(&only_yesterday, true);
    let section = prompt
        .split(SECTION_SEPARATOR)
        .find(|s| s.starts_with("## Recent Context"));
    assert_eq!(
        section,
        Some("## Recent Context\n\n### Yesterday (2026-02-17)\n\nOld.")
    );
    let both = build(&full(), true);
    let section = both
        .split(SECTION_SEPARATOR)
        .find(|s| s.starts_with("## Recent Context"));
    assert_eq!(
        section,
        Some("## Recent Context\n\n### Yesterday (2026-02-17)\n\nShipped v1.\n\n### Today (2026-02-18)\n\nPlanning v2.")
    );
}

#[test]
fn heartbeat_section_only_when_meaningful() {
    let empty = [
        ("missing", None),
        ("whitespace", Some(" \n\t\n")),
        ("headers only", Some("# HEARTBEAT\n\n## Tasks\n")),
        ("html comment", Some("<!-- add tasks here -->\n")),
        ("horizontal rules", Some("---\n* * *\n___\n")),
        ("template", Some(TEMPLATES[6].1)),
    ];
    for (case, hb) in empty {
        let ws = Workspace {
            heartbeat: hb.map(String::from),
            ..Workspace::default()
        };
        assert_eq!(titles(&build(&ws, true)), expect(&[]), "{case}");
    }
    let ws = Workspace {
        heartbeat: Some("# Tasks\n<!-- c -->\n- Check the build.".into()),
        ..Workspace::default()
    };
    let prompt = build(&ws, true);
    assert_eq!(titles(&prompt), expect(&["## Heartbeats"]));
    let section = prompt
        .split(SECTION_SEPARATOR)
        .find(|s| s.starts_with("## Heartbeats"));
    assert_eq!(
        section,
        Some("## Heartbeats\n\nHeartbeat polls arrive as messages carrying the heartbeat prompt. On a poll, do what HEARTBEAT.md asks, and don't infer or repeat old tasks from earlier chats. If nothing needs attention, reply exactly: HEARTBEAT_OK\n\nConfigured heartbeat prompt: Read HEARTBEAT.md if it exists. If nothing needs attention, reply HEARTBEAT_OK.\n\n### HEARTBEAT.md\n\n# Tasks\n<!-- c -->\n- Check the build.")
    );
}

#[test]
fn memory_only_in_the_main_session() {
    let ws = Workspace {
        memory: Some("- fact".into()),
        ..Workspace::default()
    };
    assert_eq!(titles(&build(&ws, true)), expect(&["## Long-Term Memory"]));
    assert_eq!(titles(&build(&ws, false)), expect(&[]));
}

#[test]
fn bootstrap_skips_everything_but_soul_identity_user() {
    let ws = Workspace {
        bootstrap: Some("Run the ceremony.".into()),
        user: None,
        ..full()
    };
    assert_eq!(
        titles(&build(&ws, false)),
        expect(&[
            "## COMMISSIONING CEREMONY (First Run)",
            "## Current Soul (update during commissioning)",
            "## Current Identity (fill in during commissioning)",
        ])
    );
    // A blank BOOTSTRAP.md does not switch modes.
    let blank = Workspace {
        bootstrap: Some("\n".into()),
        ..Workspace::default()
    };
    assert_eq!(titles(&build(&blank, true)), expect(&[]));
}

#[test]
fn agent_skill_shadows_global_in_the_prompt() {
    let files = [
        SkillFile {
            dir: "github".into(),
            source: SkillSource::Global,
            content: "---\ndescription: Global GitHub.\n---\n".into(),
        },
        SkillFile {
            dir: "github".into(),
            source: SkillSource::Agent,
            content: "---\ndescription: My GitHub.\n---\n".into(),
        },
        SkillFile {
            dir: "tmux".into(),
            source: SkillSource::Global,
            content: "---\nmetadata:\n  gsv:\n    requires:\n      bins: [tmux]\n---\n".into(),
        },
    ];
    let status = skills_status("main", &files, &hosts(), &Config::default(), 0);
    let ws = Workspace {
        skills: status.prompt_skills(),
        ineligible_skills: status.ineligible_count(),
        ..Workspace::default()
    };
    let prompt = build(&ws, true);
    let section = prompt
        .split(SECTION_SEPARATOR)
        .find(|s| s.starts_with("## Skills"));
    assert_eq!(
        section,
        Some("## Skills (Mandatory Scan)\n\nBefore you reply, scan <available_skills>.\n- If exactly one skill clearly applies, read its <read_path> with gsv__ReadFile, then follow it.\n- If several apply, choose the most specific and read only that one.\n- If none applies, read none.\nRead at most one skill up front; read another only when the task turns out to need it.\n\n<available_skills>\n<skill name=\"github\">\n<description>My GitHub.</description>\n<location>agents/main/skills/github/SKILL.md</location>\n<read_path>skills/github/SKILL.md</read_path>\n</skill>\n</available_skills>\n\n1 more installed skill is not listed because the connected hosts don't meet its requirements.")
    );
}

#[test]
fn tool_list_is_one_line_per_tool() {
    let prompt = build(&Workspace::default(), true);
    let tooling = prompt.split(SECTION_SEPARATOR).nth(1).unwrap();
    let bash = tooling
        .lines()
        .find(|l| l.starts_with("- laptop__Bash"))
        .unwrap();
    assert_eq!(
        bash,
        "- laptop__Bash: Run a shell command. Supports background jobs and timeouts."
    );
    let read = tooling
        .lines()
        .find(|l| l.starts_with("- laptop__Read: "))
        .unwrap();
    let desc = read.trim_start_matches("- laptop__Read: ");
    let mut want: String = "Read a file on the host. ".repeat(8).chars().take(179).collect();
    want.push('…');
    assert_eq!(desc, want);
    assert_eq!(desc.chars().count(), MAX_TOOL_DESCRIPTION);
}

#[test]
fn limits_come_from_config() {
    assert_eq!(
        PromptLimits::from_config(&Config::default()),
        PromptLimits::default()
    );
    let mut c = Config::default();
    c.set("workspace.maxFileChars", json!(500)).unwrap();
    c.set("workspace.maxTotalChars", json!(2000)).unwrap();
    assert_eq!(
        PromptLimits::from_config(&c),
        PromptLimits {
            max_file_chars: 500,
            max_total_chars: 2000
        }
    );
    assert!(c.set("workspace.maxFileChars", json!(0)).is_err());
}
