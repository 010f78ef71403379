use super::*;
use crate::workspace::paths::WorkspacePath;
use serde_json::json;

#[test]
fn who_am_i_shape() {
    let soul = format!("  {}é tail", "x".repeat(2100));
    let me = who_am_i(
        "kate",
        "anthropic/claude-sonnet-4-20250514",
        Some("- **Name:** Kate\n- **Creature:** octopus\n- **Vibe:** warm but sharp\n- **Emoji:** 🐙\n"),
        Some(&soul),
    );
    assert_eq!(
        serde_json::to_value(&me).unwrap(),
        json!({
            "agent_id": "kate",
            "model": "anthropic/claude-sonnet-4-20250514",
            "workspace_dir": "agents/kate/",
            "identity": {"name": "Kate", "creature": "octopus", "vibe": "warm but sharp", "emoji": "🐙", "avatar": null},
            "identity_line": "name=Kate, emoji=🐙, vibe=warm but sharp",
            "soul_excerpt": format!("{}…", "x".repeat(2047)),
        })
    );
    let blank = who_am_i("main", "m", None, Some(" short soul "));
    assert_eq!(
        blank,
        WhoAmI {
            agent_id: "main".into(),
            model: "m".into(),
            workspace_dir: "agents/main/".into(),
            identity: Default::default(),
            identity_line: None,
            soul_excerpt: Some("short soul".into()),
        }
    );
}

const MEMORY: &str = "# MEMORY.md\n\nIntro text is not a bullet.\n\n- early bullet\n\n## People\n- Luis prefers Spanish but is fine switching to English.\n- Ana uses a Samsung,\n  not an iPhone.\n\n<!-- - hidden -->\n## Dreamed 2026-04-23 03:00 UTC\n1. User's timezone is America/Bogota _(score=0.42)_\n2) Prefers short replies on WhatsApp\n   * nested detail\n\n## Open questions\n\n## Phones\n- What phone carrier does Luis use?\n";

fn section(heading: &str, bullets: &[&str]) -> MemorySection {
    MemorySection {
        heading: heading.into(),
        bullets: bullets.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn memory_is_split_into_sections_of_bullets() {
    assert_eq!(
        memory_sections(MEMORY),
        vec![
            section("MEMORY.md", &["early bullet"]),
            section(
                "People",
                &[
                    "Luis prefers Spanish but is fine switching to English.",
                    "Ana uses a Samsung, not an iPhone."
                ]
            ),
            section(
                "Dreamed 2026-04-23 03:00 UTC",
                &[
                    "User's timezone is America/Bogota _(score=0.42)_",
                    "Prefers short replies on WhatsApp",
                    "nested detail"
                ]
            ),
            section("Phones", &["What phone carrier does Luis use?"]),
        ]
    );
    assert_eq!(count_memories(MEMORY), 7);
}

#[test]
fn filter_matches_headings_whole_or_bullets() {
    assert_eq!(
        what_do_i_know(Some(MEMORY), Some("PEOPLE")),
        Knowledge {
            sections: vec![section(
                "People",
                &[
                    "Luis prefers Spanish but is fine switching to English.",
                    "Ana uses a Samsung, not an iPhone."
                ]
            )],
            truncated: false
        }
    );
    assert_eq!(
        what_do_i_know(Some(MEMORY), Some("luis")),
        Knowledge {
            sections: vec![
                section(
                    "People",
                    &["Luis prefers Spanish but is fine switching to English."]
                ),
                section("Phones", &["What phone carrier does Luis use?"]),
            ],
            truncated: false
        }
    );
    assert_eq!(
        what_do_i_know(None, None),
        Knowledge {
            sections: vec![],
            truncated: false
        }
    );
    assert_eq!(
        what_do_i_know(Some(MEMORY), Some("nothing like this")).sections,
        vec![]
    );
}

#[test]
fn at_most_ten_bullets_per_section() {
    let md: String = (1..=12).map(|i| format!("- fact {i}\n")).collect();
    let k = what_do_i_know(Some(&format!("## Facts\n{md}")), None);
    let want: Vec<String> = (1..=10).map(|i| format!("fact {i}")).collect();
    assert_eq!(
        k,
        Knowledge {
            sections: vec![MemorySection {
                heading: "Facts".into(),
                bullets: want
            }],
            truncated: true
        }
    );
}

#[test]
fn output_stays_under_6144_bytes() {
    let md: String = (0..40)
        .map(|s| {
            let bullets: String = (0..5)
                .map(|b| format!("- {s}.{b} {}\n", "y".repeat(40)))
                .collect();
            format!("## S{s}\n{bullets}")
        })
        .collect();
    let k = what_do_i_know(Some(&md), None);
    let len = serde_json::to_string(&k).unwrap().len();
    // 22 whole sections (≈ 250 bytes each) and 4 of the 23rd's 5 bullets
    // fit; the 5th bullet would cross 6 144 bytes.
    let mut want = memory_sections(&md);
    want.truncate(23);
    want[22].bullets.truncate(4);
    assert_eq!(
        k,
        Knowledge {
            sections: want,
            truncated: true
        }
    );
    assert_eq!(len, 6133);
    assert!(len + 50 > MAX_KNOWLEDGE_BYTES);
}

#[test]
fn edit_semantics() {
    assert_eq!(
        apply_edit("a b a", "b", "c", false),
        Ok(Edited {
            content: "a c a".into(),
            replacements: 1
        })
    );
    assert_eq!(
        apply_edit("a b a", "a", "x", true),
        Ok(Edited {
            content: "x b x".into(),
            replacements: 2
        })
    );
    assert_eq!(
        apply_edit("a b a", "a", "x", false),
        Err(EditError::Ambiguous(2))
    );
    assert_eq!(
        apply_edit("a b a", "z", "x", true),
        Err(EditError::NotFound)
    );
    assert_eq!(
        apply_edit("a", "", "x", false),
        Err(EditError::EmptyOldString)
    );
    assert_eq!(apply_edit("a", "a", "a", false), Err(EditError::Unchanged));
    assert_eq!(
        EditError::Ambiguous(3).to_string(),
        "oldString matches 3 places: include more surrounding text so it matches exactly one, or set replaceAll: true to replace all 3"
    );
    assert_eq!(
        EditError::NotFound.to_string(),
        "oldString was not found (0 matches): it must match the file exactly, including spaces and line breaks; read the file first"
    );
}

#[test]
fn workspace_calls_are_validated() {
    let p = |s: &str| WorkspacePath::file(s).unwrap();
    assert_eq!(
        WorkspaceCall::parse(
            EDIT_FILE,
            &json!({"path": "SOUL.md", "oldString": "a", "newString": "b"})
        ),
        Some(Ok(WorkspaceCall::Edit {
            path: p("SOUL.md"),
            old_string: "a".into(),
            new_string: "b".into(),
            replace_all: false
        }))
    );
    assert_eq!(
        WorkspaceCall::parse(
            WRITE_FILE,
            &json!({"path": "memory/2026-02-18.md", "content": "x"})
        ),
        Some(Ok(WorkspaceCall::Write {
            path: p("memory/2026-02-18.md"),
            content: "x".into()
        }))
    );
    assert_eq!(
        WorkspaceCall::parse(LIST_FILES, &json!({})),
        Some(Ok(WorkspaceCall::List {
            path: WorkspacePath::dir("").unwrap()
        }))
    );
    assert_eq!(
        WorkspaceCall::parse(READ_FILE, &json!({"path": "a.md"})),
        Some(Ok(WorkspaceCall::Read { path: p("a.md") }))
    );
    assert_eq!(
        WorkspaceCall::parse(DELETE_FILE, &json!({"path": "BOOTSTRAP.md"})),
        Some(Ok(WorkspaceCall::Delete {
            path: p("BOOTSTRAP.md")
        }))
    );
    assert_eq!(
        WorkspaceCall::parse(READ_FILE, &json!({"path": "../x"})),
        Some(Err("gsv__ReadFile: invalid workspace path \"../x\": `..` is not allowed; paths cannot leave your workspace".into()))
    );
    assert_eq!(
        WorkspaceCall::parse(WRITE_FILE, &json!({"path": "a.md"})),
        Some(Err("gsv__WriteFile needs `content` (a string)".into()))
    );
    assert_eq!(
        WorkspaceCall::parse(
            EDIT_FILE,
            &json!({"path": "a", "oldString": "a", "newString": "b", "replaceAll": "yes"})
        ),
        Some(Err(
            "gsv__EditFile: `replaceAll` must be true or false".into()
        ))
    );
    assert_eq!(WorkspaceCall::parse("laptop__Bash", &json!({})), None);
}

#[test]
fn content_types() {
    let ct = |s: &str| content_type(&WorkspacePath::file(s).unwrap());
    assert_eq!(
        [
            ct("SOUL.md"),
            ct("a.JSON"),
            ct("x.yml"),
            ct("notes.txt"),
            ct("Makefile")
        ],
        [
            "text/markdown; charset=utf-8",
            "application/json",
            "text/yaml; charset=utf-8",
            "text/plain; charset=utf-8",
            "text/plain; charset=utf-8"
        ]
    );
}

#[test]
fn tool_definitions() {
    let names =
        |v: Vec<gsv_protocol::ToolDefinition>| v.into_iter().map(|t| t.name).collect::<Vec<_>>();
    assert_eq!(
        names(native_workspace_tools()),
        [
            "gsv__ReadFile",
            "gsv__WriteFile",
            "gsv__EditFile",
            "gsv__ListFiles",
            "gsv__DeleteFile"
        ]
    );
    assert_eq!(
        names(self_report_tools(true)),
        ["who_am_i", "what_do_i_know", "my_stats", "session_logs"]
    );
    assert_eq!(names(self_report_tools(false)), ["who_am_i", "my_stats"]);
    let edit = native_workspace_tools()
        .into_iter()
        .find(|t| t.name == EDIT_FILE)
        .unwrap();
    assert_eq!(
        serde_json::to_value(&edit).unwrap(),
        json!({
            "name": "gsv__EditFile",
            "description": "Replace exact text in a workspace file. oldString must match exactly once, whitespace included, unless replaceAll is true. Editing a global skill saves your own copy.",
            "inputSchema": {"type": "object", "properties": {
                "path": {"type": "string", "description": "File path, relative to your workspace root (e.g. MEMORY.md, memory/2026-01-31.md, skills/github/SKILL.md)"},
                "oldString": {"type": "string", "description": "The exact text to replace"},
                "newString": {"type": "string", "description": "The replacement text"},
                "replaceAll": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one (default false)"}
            }, "required": ["path", "oldString", "newString"]}
        })
    );
    for t in native_workspace_tools()
        .into_iter()
        .chain(self_report_tools(true))
    {
        assert!(
            t.description.chars().count() <= crate::prompt::MAX_TOOL_DESCRIPTION,
            "{}",
            t.name
        );
    }
}

#[test]
fn my_stats_shape() {
    let stats = MyStats {
        sessions_total: 3,
        memories_stored: count_memories(MEMORY) as u64,
        workspace_files_present: vec!["SOUL.md".into(), "MEMORY.md".into()],
        ..MyStats::default()
    };
    assert_eq!(
        serde_json::to_value(&stats).unwrap(),
        json!({
            "sessions_total": 3, "memories_stored": 7, "memories_promoted": 0, "last_dream_ts": null,
            "recall_events_7d": 0, "top_concept_tags_7d": [], "workspace_files_present": ["SOUL.md", "MEMORY.md"]
        })
    );
}
