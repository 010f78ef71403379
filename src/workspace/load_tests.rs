//! A run's prompt assembled from a `MemoryStore` workspace: the whole
//! prompt against one built from the expected `Workspace`, and the whole
//! `WorkspaceLoadStats` of a first start, a cached run and a run after
//! another isolate's edit.

use super::*;
use crate::skills::{SkillFile, SkillSource};
use crate::storage::MemoryStore;
use crate::workspace::methods;
use crate::workspace::templates::TEMPLATES;
use futures::executor::block_on;
use gsv_protocol::{SessionSettings, WorkspaceReadResult};
use serde_json::json;

const MAIN: &str = "agent:main:main";
const DAYS: (&str, &str) = ("2024-05-02", "2024-05-01");
const SKILL: &str = "---\nname: weather\ndescription: Look up the weather.\n---\nUse curl.\n";
const GLOBAL_SKILL: &str = "---\nname: notes\ndescription: Keep notes.\n---\nWrite them down.\n";

fn load(store: &MemoryStore, config: &Config) -> RunPrompt {
    load_for(store, config, MAIN)
}

fn load_for(store: &MemoryStore, config: &Config, session_key: &str) -> RunPrompt {
    let rc = RunConfig::resolve(config, &SessionSettings::default());
    let days = (DAYS.0.to_string(), DAYS.1.to_string());
    let run = RunInputs {
        config,
        rc: &rc,
        session_key,
        nodes: &NodeSnapshot::default(),
        days: &days,
        now_ms: 1_000,
        reuse: None,
        trust: gsv_protocol::Trust::OWNER,
    };
    block_on(assemble(store, run)).unwrap()
}

#[test]
fn a_group_chat_gets_neither_memory_nor_the_owner_profile() {
    let store = workspace();
    // One session per chat (under `main`, every DM is the main session).
    let config = Config::from_overrides(json!({"session": {"dmScope": "per-channel-peer"}}));
    let dm = load_for(&store, &config, "agent:main:discord:dm:81");
    assert!(dm.system_prompt.contains("Ada, in Lisbon."));
    assert!(!dm.system_prompt.contains("likes tea"));
    assert!(dm.system_prompt.contains("## Chat App Messages"));
    let group = load_for(&store, &config, "agent:main:discord:group:chan-7");
    assert!(!group.system_prompt.contains("Ada, in Lisbon."));
    assert!(!group.system_prompt.contains("likes tea"));
    assert!(group.system_prompt.contains("## Chat App Messages"));
}

/// A workspace some runs ago: a few files, today's memory, one skill of
/// the agent's and one global.
fn workspace() -> MemoryStore {
    let store = MemoryStore::new();
    store.insert("agents/main/SOUL.md", "Be brief.");
    store.insert("agents/main/USER.md", "Ada, in Lisbon.");
    store.insert("agents/main/MEMORY.md", "## Facts\n- likes tea\n");
    store.insert("agents/main/memory/2024-05-02.md", "Fixed the boiler.");
    store.insert("agents/main/memory/2024-04-30.md", "Not in the window.");
    store.insert("agents/main/skills/weather/SKILL.md", SKILL);
    store.insert("skills/notes/SKILL.md", GLOBAL_SKILL);
    store
}

#[test]
fn the_prompt_is_the_workspace_as_listed() {
    let store = workspace();
    let config = Config::from_overrides(json!({"userTimezone": "Europe/Lisbon"}));
    let prompt = load(&store, &config);

    let files = [
        SkillFile {
            dir: "weather".into(),
            source: SkillSource::Agent,
            content: SKILL.into(),
        },
        SkillFile {
            dir: "notes".into(),
            source: SkillSource::Global,
            content: GLOBAL_SKILL.into(),
        },
    ];
    let status = skills_status("main", &files, &[], &config, 1_000);
    let ws = Workspace {
        soul: Some("Be brief.".into()),
        user: Some("Ada, in Lisbon.".into()),
        memory: Some("## Facts\n- likes tea\n".into()),
        today: Some(DailyMemory {
            date: DAYS.0.into(),
            content: "Fixed the boiler.".into(),
        }),
        skills: status.prompt_skills(),
        ineligible_skills: status.ineligible_count(),
        ..Default::default()
    };
    let tools = native_tool_definitions(true);
    let rc = RunConfig::resolve(&config, &SessionSettings::default());
    let ctx = PromptContext {
        agent_id: "main",
        session_key: MAIN,
        is_main: true,
        model_provider: &rc.provider,
        model_id: &rc.model,
        timezone: "Europe/Lisbon",
        tools: &tools,
        hosts: &[],
        base_prompt: &rc.system_prompt,
        heartbeat_prompt: config.str_at("agents.defaultHeartbeat.prompt"),
    };
    let expected = build_system_prompt(&ws, &ctx, PromptLimits::from_config(&config));
    assert_eq!(prompt.system_prompt, expected);
    for part in [
        "Be brief.",
        "likes tea",
        "Fixed the boiler.",
        "Look up the weather.",
    ] {
        assert!(prompt.system_prompt.contains(part), "{part}");
    }
    assert!(!prompt.system_prompt.contains("Not in the window."));
    assert_eq!(prompt.tools, tools);
    assert_eq!((prompt.agent_id.as_str(), prompt.is_main), ("main", true));
    // Nothing cached yet: the ten files read with the skills listings,
    // then the two SKILL.md bodies. No template: the workspace exists.
    assert_eq!(
        prompt.load,
        WorkspaceLoadStats {
            r2_gets: 12,
            r2_lists: 2,
            r2_puts: 0,
            batches: 2,
            files_cached: 0,
            skills_read: 2,
            ..Default::default()
        }
    );
    assert_eq!(store.requests().gets, 12);
    assert_eq!(store.requests().lists, 2);
}

#[test]
fn a_first_start_writes_the_templates_then_runs_from_the_cache() {
    let store = MemoryStore::new();
    let config = Config::from_overrides(json!({}));
    let first = load(&store, &config);
    assert_eq!(
        first.load,
        WorkspaceLoadStats {
            r2_gets: 10,
            r2_lists: 2,
            r2_puts: TEMPLATES.len() as u32,
            batches: 2,
            ..Default::default()
        }
    );
    for (name, content) in TEMPLATES {
        assert_eq!(
            store.text(&file_key("main", name)).as_deref(),
            Some(content)
        );
    }
    assert_eq!(store.texts().writes(), TEMPLATES.len() as u64);

    // The next run only lists: the top level, the daily window, the two
    // skills prefixes; every file known from the cache.
    let second = load(&store, &config);
    assert_eq!(second.system_prompt, first.system_prompt);
    assert_eq!(
        second.load,
        WorkspaceLoadStats {
            r2_lists: 4,
            batches: 1,
            files_cached: 10,
            ..Default::default()
        }
    );
}

#[test]
fn a_file_edited_elsewhere_is_read_again() {
    let store = workspace();
    let config = Config::from_overrides(json!({}));
    load(&store, &config);
    store.insert("agents/main/SOUL.md", "Be thorough.");
    let prompt = load(&store, &config);
    assert!(prompt.system_prompt.contains("Be thorough."));
    assert!(!prompt.system_prompt.contains("Be brief."));
    assert_eq!(
        prompt.load,
        WorkspaceLoadStats {
            r2_gets: 1,
            r2_lists: 4,
            batches: 2,
            files_cached: 9,
            skills_cached: 2,
            ..Default::default()
        }
    );
}

/// `load_for` another session, at `now_ms`, with listings reused as a
/// Session does (`workspace.recheckSeconds` 60, revision `rev`).
fn load_reusing(store: &MemoryStore, session_key: &str, now_ms: u64, rev: &str) -> RunPrompt {
    let config = Config::from_overrides(json!({}));
    let rc = RunConfig::resolve(&config, &SessionSettings::default());
    let days = (DAYS.0.to_string(), DAYS.1.to_string());
    let run = RunInputs {
        config: &config,
        rc: &rc,
        session_key,
        nodes: &NodeSnapshot::default(),
        days: &days,
        now_ms,
        reuse: Some(reuse_at(store, now_ms, rev)),
        trust: gsv_protocol::Trust::OWNER,
    };
    block_on(assemble(store, run)).unwrap()
}

/// What a run at `now_ms` and workspace revision `rev` may take from the
/// listings kept: those younger than 60 s, with no write since.
fn reuse_at<'a>(store: &MemoryStore, now_ms: u64, rev: &'a str) -> Reuse<'a> {
    Reuse {
        now_ms,
        within_ms: 60_000,
        workspace_rev: rev,
        writes: store.texts().writes(),
    }
}

/// `workspace.read` of `path` in the agent's own workspace.
fn read_params(path: &str) -> gsv_protocol::WorkspaceReadParams {
    gsv_protocol::WorkspaceReadParams {
        path: path.into(),
        agent_id: None,
    }
}

#[test]
fn another_sessions_listings_stand_within_the_recheck_bound() {
    let store = workspace();
    let listed = |p: &RunPrompt| (p.load.r2_lists, p.load.r2_gets, p.reused_listing_from);
    // The first session reads every file (none was seen) and lists the
    // skills; the second lists the rest and takes those skills' listings.
    let first = load_reusing(&store, "agent:main:a", 10_000, "r1");
    assert_eq!(listed(&first), (2, 12, None));
    let second = load_reusing(&store, "agent:main:b", 11_000, "r1");
    assert_eq!(listed(&second), (2, 0, Some(10_000)));
    // Within 60 s of them, at the same revision and with no write since,
    // a session lists nothing: it was checked when they were taken.
    let third = load_reusing(&store, "agent:main:c", 69_999, "r1");
    assert_eq!(listed(&third), (0, 0, Some(10_000)));
    let fresh = load_for(&store, &Config::from_overrides(json!({})), "agent:main:c");
    assert_eq!(third.system_prompt, fresh.system_prompt);
    // The skills' listings are past the bound, the others not yet.
    let fourth = load_reusing(&store, "agent:main:d", 70_500, "r1");
    assert_eq!(listed(&fourth), (2, 0, Some(11_000)));
    // Edited outside: seen once the listings are past the bound.
    store.insert("agents/main/SOUL.md", "Be thorough.");
    let young = load_reusing(&store, "agent:main:e", 70_900, "r1");
    assert_eq!(listed(&young), (0, 0, Some(11_000)));
    assert!(!young.system_prompt.contains("Be thorough."));
    let past = load_reusing(&store, "agent:main:f", 72_000, "r1");
    assert_eq!(listed(&past), (2, 1, Some(70_500)));
    assert!(past.system_prompt.contains("Be thorough."));
    // Another revision, or a write through this isolate: listed again.
    assert_eq!(
        listed(&load_reusing(&store, "agent:main:g", 72_001, "r2")),
        (4, 0, None)
    );
    block_on(store.write_text("agents/main/TOOLS.md", "Use the tools.")).unwrap();
    let after_write = load_reusing(&store, "agent:main:h", 72_002, "r2");
    assert_eq!(listed(&after_write), (4, 0, None));
    assert!(after_write.system_prompt.contains("Use the tools."));
}

#[test]
fn a_file_a_prompt_was_made_from_is_read_as_its_listing_says() {
    let store = workspace();
    store.set_now(5_000);
    store.insert("agents/main/notes/boiler.md", "Serviced in May.");
    // The first run reads every file, the second lists the top level: its
    // listing (and the skills') are kept, taken at 11 000.
    load_reusing(&store, "agent:main:a", 10_000, "r1");
    load_reusing(&store, "agent:main:b", 11_000, "r1");
    let read = |path: &str, at: u64, rev: &str| {
        let reuse = reuse_at(&store, at, rev);
        let gets = store.requests().gets;
        let listed = block_on(methods::read_as_listed(
            &store,
            "main",
            read_params(path),
            Some(&reuse),
        ));
        let listed_gets = store.requests().gets - gets;
        let read = block_on(methods::read(&store, "main", read_params(path)));
        (
            listed.map_err(|e| e.code),
            listed_gets,
            read.map_err(|e| e.code),
        )
    };
    // Top-level files and skills, present or not: as R2 has them, with no
    // request, while the listing stands.
    for path in [
        "SOUL.md",
        "skills/weather/SKILL.md",
        "skills/notes/SKILL.md",
    ] {
        let (listed, gets, read) = read(path, 12_000, "r1");
        assert_eq!((&listed, gets), (&read, 0), "{path}");
        assert!(listed.is_ok(), "{path}");
    }
    assert_eq!(
        read("NOPE.md", 12_000, "r1"),
        (
            Err(gsv_protocol::codes::NOT_FOUND),
            0,
            Err(gsv_protocol::codes::NOT_FOUND)
        )
    );
    // A file no prompt's listing lists is read.
    let (listed, gets, read_now) = read("notes/boiler.md", 12_000, "r1");
    assert_eq!(
        (listed.map(|r| r.content), gets),
        (Ok("Serviced in May.".into()), 1)
    );
    assert!(read_now.is_ok());
    // Edited outside the gateway: seen as the prompt sees it, once the
    // listing is past `workspace.recheckSeconds`.
    store.insert("agents/main/SOUL.md", "Be thorough.");
    let content = |r: (Result<WorkspaceReadResult, i64>, u32, _)| (r.0.unwrap().content, r.1);
    assert_eq!(
        content(read("SOUL.md", 70_999, "r1")),
        ("Be brief.".into(), 0)
    );
    assert_eq!(
        content(read("SOUL.md", 71_000, "r1")),
        ("Be thorough.".into(), 1)
    );
    // Another revision (a change the gateway made or heard of), or a
    // write through this isolate: read.
    store.insert("agents/main/USER.md", "Ada, in Porto.");
    assert_eq!(
        content(read("USER.md", 12_000, "r2")),
        ("Ada, in Porto.".into(), 1)
    );
    store.insert("agents/main/MEMORY.md", "## Facts\n- likes coffee\n");
    block_on(store.write_text("agents/main/TOOLS.md", "Use the tools.")).unwrap();
    assert_eq!(
        content(read("MEMORY.md", 12_000, "r1")),
        ("## Facts\n- likes coffee\n".into(), 1)
    );
}

#[test]
fn a_file_read_as_listed_has_the_listed_versions_upload_time() {
    let store = workspace();
    store.set_now(5_000);
    store.insert("agents/main/SOUL.md", "Be brief.");
    load_reusing(&store, "agent:main:a", 10_000, "r1");
    // The same text put again outside the gateway: the same etag, so the
    // body held stands, but a new version, uploaded at 20 000.
    store.set_now(20_000);
    store.insert("agents/main/SOUL.md", "Be brief.");
    // A run past the bound lists again; it reads no body.
    let gets = store.requests().gets;
    load_reusing(&store, "agent:main:b", 80_000, "r1");
    let reuse = reuse_at(&store, 80_500, "r1");
    let read = block_on(methods::read_as_listed(
        &store,
        "main",
        read_params("SOUL.md"),
        Some(&reuse),
    ))
    .unwrap();
    assert_eq!(
        (
            read.content,
            read.last_modified,
            store.requests().gets - gets
        ),
        ("Be brief.".to_string(), Some(20_000), 0)
    );
}

#[test]
fn the_listing_of_a_key_is_the_one_a_prompt_takes() {
    assert_eq!(
        [
            "agents/main/SOUL.md",
            "agents/main/skills/weather/SKILL.md",
            "skills/notes/SKILL.md",
            "agents/main/memory/2024-05-02.md",
            "agents/main/notes/boiler.md",
            "agents/main/",
            "agents/other/SOUL.md",
        ]
        .map(|key| listing_of("main", key)),
        [
            Some(top_level_listing("agents/main/")),
            Some(tree_listing("agents/main/skills/")),
            Some(tree_listing("skills/")),
            None,
            None,
            None,
            None,
        ]
    );
}
