//! One test per row and condition of the loading-order table.

use super::tests::{build, expect, full, hosts, skill, titles};
use super::*;
use crate::config::Config;
use crate::skills::{skills_status, SkillFile, SkillSource};
use crate::workspace::templates::TEMPLATES;
use serde_json::json;

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
        Some("## Heartbeats\n\nHeartbeat polls arrive as messages carrying the heartbeat prompt. On a poll, do what HEARTBEAT.md asks, and don't infer or repeat old tasks from earlier chats. If nothing needs attention, reply exactly: HEARTBEAT_OK\n\nConfigured heartbeat prompt: Read HEARTBEAT.md if it exists. If nothing needs attention, reply HEARTBEAT_OK.\n\n### HEARTBEAT.md\n\n# Tasks\n\n- Check the build.")
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
    let mut want: String = "Read a file on the host. "
        .repeat(8)
        .chars()
        .take(179)
        .collect();
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
