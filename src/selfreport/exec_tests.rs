//! The native tools against a `MemoryStore`: the file tools' whole
//! results, the self-report tools, and `session_logs` over archives in
//! the store with fake live sessions.

use super::*;
use crate::archive::{archive_metadata, ArchiveInfo, ArchiveWriter};
use crate::selfreport::{DELETE_FILE, EDIT_FILE, LIST_FILES, READ_FILE, WRITE_FILE};
use crate::session::meta::SessionMeta;
use crate::storage::MemoryStore;
use futures::executor::block_on;
use gsv_protocol::{
    ErrorShape, Message, SessionPreviewResult, SessionRegistryEntry, SessionStatsResult,
    SessionsListResult, TokenCounts, UserContent, UserMessage,
};
use std::cell::Cell;

fn user(text: &str, ts: i64) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: ts,
        context: None,
    })
}

/// This session, `cur`: two messages.
struct Here;

impl ThisSession for Here {
    fn meta(&self) -> Result<SessionMeta, ErrorShape> {
        Ok(SessionMeta::new(
            "cur".into(),
            "agent:main:main".into(),
            3_000,
        ))
    }
    fn message_count(&self) -> Result<u64, ErrorShape> {
        Ok(2)
    }
    fn messages(&self, start: usize, take: usize) -> Result<Vec<Message>, ErrorShape> {
        let all = [
            user("the lighthouse at dusk", 2_900),
            user("and at dawn", 2_950),
        ];
        Ok(all.into_iter().skip(start).take(take).collect())
    }
}

/// The agent's other live session, `dm`; counts the calls made to it.
#[derive(Default)]
struct Others {
    calls: Cell<u32>,
}

const DM: &str = "agent:main:discord:dm:7";

impl OtherSessions for Others {
    async fn of_agent(
        &self,
        agent_id: &str,
        limit: u32,
        offset: u32,
    ) -> Result<SessionsListResult, ErrorShape> {
        assert_eq!(
            (agent_id, limit, offset),
            ("main", logs::MAX_LIVE_SESSIONS, 0)
        );
        self.calls.set(self.calls.get() + 1);
        let entry = |key: &str| SessionRegistryEntry {
            session_key: key.into(),
            created_at: 0,
            last_active_at: 0,
            label: None,
        };
        Ok(SessionsListResult {
            sessions: vec![entry("agent:main:main"), entry(DM)],
            count: 2,
        })
    }
    async fn stats(&self, session_key: &str) -> Result<SessionStatsResult, ErrorShape> {
        assert_eq!(session_key, DM);
        self.calls.set(self.calls.get() + 1);
        Ok(SessionStatsResult {
            session_key: DM.into(),
            session_id: "dm".into(),
            message_count: 1,
            tokens: TokenCounts::default(),
            created_at: 0,
            updated_at: 2_800,
            uptime: 0,
            is_processing: false,
            queue_size: 0,
            last_workspace_load: None,
            trust: None,
            last_turn: None,
        })
    }
    async fn preview(
        &self,
        session_key: &str,
        limit: Option<u32>,
    ) -> Result<SessionPreviewResult, ErrorShape> {
        assert_eq!((session_key, limit), (DM, None));
        self.calls.set(self.calls.get() + 1);
        Ok(SessionPreviewResult {
            session_key: DM.into(),
            session_id: "dm".into(),
            message_count: 1,
            messages: vec![user("a lighthouse in a DM", 2_700)],
        })
    }
}

fn call<'a>(
    store: &'a MemoryStore,
    others: &'a Others,
    is_main: bool,
) -> NativeCall<'a, MemoryStore, Others> {
    NativeCall {
        store,
        agent_id: "main",
        model: "anthropic/claude",
        is_main,
        this: &Here,
        others,
        max_result_chars: 50_000,
        reuse: None,
    }
}

fn run(
    ctx: &NativeCall<'_, MemoryStore, Others>,
    name: &str,
    args: Value,
) -> Result<Value, String> {
    let text = block_on(execute(ctx, name, &args)).map_err(|e| e.to_string())?;
    Ok(serde_json::from_str(&text).unwrap())
}

#[test]
fn files_written_are_read_edited_listed_and_deleted() {
    let (store, others) = (MemoryStore::new(), Others::default());
    store.set_now(1_234);
    let ctx = call(&store, &others, true);
    let path = "notes/today.md";
    assert_eq!(
        run(
            &ctx,
            WRITE_FILE,
            json!({"path": path, "content": "tea, tea"})
        ),
        Ok(json!({"path": path, "size": 8, "written": true}))
    );
    assert_eq!(
        store.text("agents/main/notes/today.md").as_deref(),
        Some("tea, tea")
    );
    assert_eq!(
        run(&ctx, READ_FILE, json!({"path": path})),
        Ok(json!({"path": path, "content": "tea, tea", "size": 8, "lastModified": 1_234}))
    );
    assert_eq!(
        run(
            &ctx,
            EDIT_FILE,
            json!({"path": path, "oldString": "tea", "newString": "coffee",
            "replaceAll": true})
        ),
        Ok(json!({"path": path, "replacements": 2}))
    );
    assert_eq!(
        store.text("agents/main/notes/today.md").as_deref(),
        Some("coffee, coffee")
    );
    assert_eq!(
        run(&ctx, LIST_FILES, json!({"path": "notes"})),
        Ok(json!({"path": "notes", "files": ["notes/today.md"], "directories": []}))
    );
    assert_eq!(
        run(&ctx, DELETE_FILE, json!({"path": path})),
        Ok(json!({"path": path, "deleted": true}))
    );
    assert_eq!(
        run(&ctx, READ_FILE, json!({"path": path})),
        Err(format!(
            "{path} does not exist in the workspace of agent main"
        ))
    );
    assert_eq!(
        run(
            &ctx,
            EDIT_FILE,
            json!({"path": path, "oldString": "a", "newString": "b"})
        ),
        Err(format!(
            "{path} does not exist; create it with gsv__WriteFile"
        ))
    );
    // The write, the edit and the delete.
    assert_eq!(store.texts().writes(), 3);
}

#[test]
fn a_global_skill_is_read_through_the_skills_view_and_edited_as_an_override() {
    let (store, others) = (MemoryStore::new(), Others::default());
    store.insert("skills/notes/SKILL.md", "Write them down.");
    let ctx = call(&store, &others, true);
    assert_eq!(
        run(&ctx, READ_FILE, json!({"path": "skills/notes/SKILL.md"})),
        Ok(
            json!({"path": "skills/notes/SKILL.md", "content": "Write them down.", "size": 16,
            "lastModified": 0, "resolvedPath": "skills/notes/SKILL.md", "resolvedSource": "global"})
        )
    );
    run(
        &ctx,
        EDIT_FILE,
        json!({"path": "skills/notes/SKILL.md", "oldString": "down",
        "newString": "up"}),
    )
    .unwrap();
    assert_eq!(
        (
            store.text("agents/main/skills/notes/SKILL.md"),
            store.text("skills/notes/SKILL.md")
        ),
        (
            Some("Write them up.".into()),
            Some("Write them down.".into())
        )
    );
}

#[test]
fn self_report_tools_read_the_workspace() {
    let (store, others) = (MemoryStore::new(), Others::default());
    store.insert("agents/main/IDENTITY.md", "- **Name:** Ada\n");
    store.insert(
        "agents/main/MEMORY.md",
        "## Facts\n- likes tea\n- lives in Lisbon\n",
    );
    store.insert("agents/main/sessions/old.jsonl.gz", "");
    store.insert("agents/main/sessions/cur-part1.jsonl.gz", "");
    let ctx = call(&store, &others, true);
    assert_eq!(
        run(&ctx, MY_STATS, json!({})),
        Ok(serde_json::to_value(MyStats {
            sessions_total: 2,
            memories_stored: 2,
            workspace_files_present: vec!["IDENTITY.md".into(), "MEMORY.md".into()],
            ..Default::default()
        })
        .unwrap())
    );
    let who = run(&ctx, WHO_AM_I, json!({})).unwrap();
    assert_eq!(
        who,
        serde_json::to_value(who_am_i(
            "main",
            "anthropic/claude",
            Some("- **Name:** Ada\n"),
            None
        ))
        .unwrap()
    );
    // Not the main session: no memory, no logs.
    let side = call(&store, &others, false);
    for tool in [WHAT_DO_I_KNOW, SESSION_LOGS] {
        assert_eq!(
            run(&side, tool, json!({})),
            Err(format!("{tool} is not a native tool of this session"))
        );
    }
}

#[test]
fn self_report_tools_read_the_files_as_the_prompt_listed_them() {
    use crate::storage::{list_or_reuse, top_level_listing, Reuse};
    let (store, others) = (MemoryStore::new(), Others::default());
    store.insert("agents/main/IDENTITY.md", "- **Name:** Ada\n");
    store.insert("agents/main/MEMORY.md", "## Facts\n- likes tea\n");
    let reuse = |now_ms, workspace_rev| Reuse {
        now_ms,
        within_ms: 60_000,
        workspace_rev,
        writes: store.texts().writes(),
    };
    // A run's prompt read the files and listed the top level at 10 000.
    for key in ["agents/main/IDENTITY.md", "agents/main/MEMORY.md"] {
        block_on(store.read_text(key)).unwrap();
    }
    let root = "agents/main/";
    block_on(list_or_reuse(
        &store,
        Some(&reuse(10_000, "r1")),
        top_level_listing(root),
        store.list_objects(root, Some("/")),
    ))
    .unwrap();
    // Edited outside the gateway since: the run still sees what its
    // prompt saw, and asks R2 nothing (SOUL.md is absent as listed).
    store.insert("agents/main/MEMORY.md", "## Facts\n- likes coffee\n");
    let results = |at, rev| {
        let ctx = NativeCall {
            reuse: Some(reuse(at, rev)),
            ..call(&store, &others, true)
        };
        let gets = store.requests().gets;
        let who = run(&ctx, WHO_AM_I, json!({})).unwrap();
        let knows = run(&ctx, WHAT_DO_I_KNOW, json!({})).unwrap();
        (who, knows, store.requests().gets - gets)
    };
    let who = |soul| {
        serde_json::to_value(who_am_i(
            "main",
            "anthropic/claude",
            Some("- **Name:** Ada\n"),
            soul,
        ))
        .unwrap()
    };
    let knows = |memory| serde_json::to_value(what_do_i_know(Some(memory), None)).unwrap();
    let (tea, coffee) = (
        knows("## Facts\n- likes tea\n"),
        knows("## Facts\n- likes coffee\n"),
    );
    assert_eq!(results(12_000, "r1"), (who(None), tea, 0));
    // Past `workspace.recheckSeconds`, at another revision (a change the
    // gateway made or heard of), or after a write through this isolate, the
    // listing stands for nothing: read.
    assert_eq!(results(70_000, "r1"), (who(None), coffee.clone(), 3));
    assert_eq!(results(12_000, "r2"), (who(None), coffee.clone(), 3));
    block_on(store.write_text("agents/main/TOOLS.md", "Use the tools.")).unwrap();
    assert_eq!(results(12_000, "r1"), (who(None), coffee, 3));
}

/// The reset session `old` archived in the store with two messages.
fn with_archive(store: &MemoryStore) {
    let mut w = ArchiveWriter::new(1 << 20);
    w.push_message(&user("an old lighthouse", 1_000)).unwrap();
    w.push_message(&user("old news", 1_100)).unwrap();
    let info = ArchiveInfo {
        session_key: "agent:main:main",
        session_id: "old",
        agent_id: "main",
        message_count: 2,
        archived_at_ms: 2_000,
    };
    let meta = archive_metadata(&info, &TokenCounts::default());
    let key = "agents/main/sessions/old.jsonl.gz";
    store.insert_with_metadata(key, &w.finish().unwrap(), meta.into_iter().collect());
}

#[test]
fn session_logs_lists_archives_this_session_and_the_others() {
    let (store, others) = (MemoryStore::new(), Others::default());
    with_archive(&store);
    let ctx = call(&store, &others, true);
    assert_eq!(
        run(&ctx, SESSION_LOGS, json!({"action": "list_sessions"})),
        Ok(json!({"ok": true, "total": 3, "sessions": [
            {"sessionId": "cur", "sessionKey": "agent:main:main", "status": "current",
             "messageCount": 2, "archives": 0, "lastActiveAt": 3_000},
            {"sessionId": "dm", "sessionKey": DM, "status": "live",
             "messageCount": 1, "archives": 0, "lastActiveAt": 2_800},
            {"sessionId": "old", "sessionKey": "agent:main:main", "status": "archived",
             "messageCount": 2, "archives": 1, "archivedAt": 2_000},
        ]}))
    );
    // The registry, then the one other session's stats.
    assert_eq!(others.calls.get(), 2);
}

#[test]
fn session_logs_reads_archives_and_searches_every_source() {
    let (store, others) = (MemoryStore::new(), Others::default());
    with_archive(&store);
    let ctx = call(&store, &others, true);
    assert_eq!(
        run(
            &ctx,
            SESSION_LOGS,
            json!({"action": "read_session", "sessionId": "old"})
        ),
        Ok(
            json!({"ok": true, "sessionId": "old", "total": 2, "entries": [
                {"index": 0, "role": "user", "timestamp": 1_000, "preview": "an old lighthouse"},
                {"index": 1, "role": "user", "timestamp": 1_100, "preview": "old news"},
            ]})
        )
    );
    // A reset session's id is not looked for among the live ones.
    assert_eq!(others.calls.get(), 0);

    // This session from its own history, `dm` through its preview, `old`
    // from its archive.
    let hit = |id: &str, preview: &str, ts: i64| json!({"sessionId": id, "index": 0, "role": "user", "timestamp": ts, "preview": preview});
    assert_eq!(
        run(
            &ctx,
            SESSION_LOGS,
            json!({"action": "search", "query": "lighthouse"})
        ),
        Ok(
            json!({"ok": true, "query": "lighthouse", "searchedSessions": 3, "notSearched": [],
            "limitReached": false, "hits": [
                hit("cur", "the lighthouse at dusk", 2_900),
                hit("dm", "a lighthouse in a DM", 2_700),
                hit("old", "an old lighthouse", 1_000),
            ]})
        )
    );
    // The registry, the stats of `dm`, its preview.
    assert_eq!(others.calls.get(), 3);
}

#[test]
fn is_native_names_exactly_the_runs_native_tools() {
    let names = |is_main| -> Vec<String> {
        native_tool_definitions(is_main)
            .into_iter()
            .map(|t| t.name)
            .collect()
    };
    let (main, other) = (names(true), names(false));
    let main_only: Vec<&String> = main.iter().filter(|n| !other.contains(n)).collect();
    assert!(!main_only.is_empty(), "{main:?}");
    for name in &main {
        assert!(is_native(name, true), "{name}");
        assert_eq!(is_native(name, false), other.contains(name), "{name}");
    }
    for name in ["laptop__Read", "gsv__Nope", ""] {
        assert!(!is_native(name, true) && !is_native(name, false), "{name}");
    }
}
