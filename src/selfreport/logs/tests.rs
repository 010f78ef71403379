use super::*;
use gsv_protocol::{
    AssistantBlock, AssistantMessage, ContentBlock, ToolResultMessage, UserContent, UserMessage,
};
use serde_json::json;
use std::collections::BTreeMap;

fn user(text: &str, ts: i64) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: ts,
        context: None,
    })
}

fn assistant(blocks: Vec<AssistantBlock>, ts: i64) -> Message {
    Message::Assistant(AssistantMessage::new(blocks, ts))
}

fn said(text: &str, ts: i64) -> Message {
    assistant(vec![AssistantBlock::Text { text: text.into() }], ts)
}

fn tool_result(name: &str, text: &str, is_error: bool, ts: i64) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: "c1".into(),
        tool_name: name.into(),
        content: vec![ContentBlock::Text { text: text.into() }],
        is_error,
        timestamp: ts,
    })
}

fn object(key: &str, meta: &[(&str, &str)]) -> ArchiveObject {
    ArchiveObject {
        key: key.into(),
        metadata: meta
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
    }
}

fn live(id: &str, key: &str, count: u64, at: i64, current: bool) -> LiveSession {
    LiveSession {
        session_id: id.into(),
        session_key: key.into(),
        message_count: count,
        last_active_at: at,
        current,
    }
}

const PREFIX: &str = "agents/main/sessions/";

/// Session `old` (reset, with one compaction part), `cur` (this session,
/// one compaction part), `dm` (another live session) and a stray file.
fn agent_sessions() -> Vec<SessionSources> {
    let key = |name: &str| format!("{PREFIX}{name}");
    let main = ("sessionKey", "agent:main:main");
    let objects = [
        object(
            &key("old.jsonl.gz"),
            &[main, ("messageCount", "4"), ("archivedAt", "2000")],
        ),
        object(
            &key("old-part1500.jsonl.gz"),
            &[main, ("messageCount", "3"), ("archivedAt", "1500")],
        ),
        object(
            &key("cur-part2500.jsonl.gz"),
            &[main, ("messageCount", "2"), ("archivedAt", "2500")],
        ),
        object(&key("notes.txt"), &[]),
    ];
    group_sessions(
        &objects,
        vec![
            live("cur", "agent:main:main", 5, 3000, true),
            live("dm", "agent:main:discord:dm:7", 2, 2800, false),
        ],
    )
}

#[test]
fn arguments_are_read_with_defaults_and_clamped() {
    assert_eq!(
        SessionLogsRequest::parse(&json!({"action": "recent"})),
        Ok(SessionLogsRequest {
            action: SessionLogsAction::Recent,
            session_id: None,
            query: None,
            offset: 0,
            limit: 50,
            preview_chars: 200
        })
    );
    assert_eq!(
        SessionLogsRequest::parse(&json!({"action": "read_session", "sessionId": " 9b1d-e2 ",
            "offset": 40, "limit": 9999, "previewChars": 0})),
        Ok(SessionLogsRequest {
            action: SessionLogsAction::ReadSession,
            session_id: Some("9b1d-e2".into()),
            query: None,
            offset: 40,
            limit: 500,
            preview_chars: 20
        })
    );
    assert_eq!(
        SessionLogsRequest::parse(
            &json!({"action": "search", "query": "carrier", "previewChars": 9999})
        )
        .map(|r| (r.query, r.preview_chars)),
        Ok((Some("carrier".into()), 4000))
    );
}

#[test]
fn bad_arguments_say_what_to_do() {
    let err = |args| SessionLogsRequest::parse(&args).unwrap_err().to_string();
    assert_eq!(
        [
            err(json!({})),
            err(json!({"action": "read_session"})),
            err(json!({"action": "search", "query": "  "})),
            err(json!({"action": "recent", "sessionId": "../work/sessions/x"})),
        ],
        [
            "session_logs needs `action`: one of list_sessions, read_session, search, recent",
            "session_logs read_session needs `sessionId` (see list_sessions)",
            "session_logs search needs `query`",
            "session_logs: \"../work/sessions/x\" is not a session id; use a sessionId from list_sessions",
        ]
    );
}

#[test]
fn entry_text_is_one_line_with_tool_calls_and_images() {
    let call = assistant(
        vec![
            AssistantBlock::Thinking {
                thinking: "private scratch".into(),
                thinking_signature: None,
            },
            AssistantBlock::Text {
                text: "Let me\n\n  check.".into(),
            },
            AssistantBlock::ToolCall {
                id: "c1".into(),
                name: "laptop__Bash".into(),
                arguments: json!({"command": "ls -la"}),
            },
        ],
        1,
    );
    let photo = Message::User(UserMessage {
        content: UserContent::Blocks(vec![
            ContentBlock::Text {
                text: "look:".into(),
            },
            ContentBlock::Image {
                data: None,
                mime_type: "image/png".into(),
                r2_key: Some("media/x.png".into()),
                filename: None,
                size: None,
            },
        ]),
        timestamp: 2,
        context: None,
    });
    assert_eq!(
        [entry_text(&call), entry_text(&photo)],
        [
            r#"Let me check. laptop__Bash({"command":"ls -la"})"#,
            "look: [image]"
        ]
    );
}

#[test]
fn entries_carry_role_time_tool_and_a_capped_preview() {
    let failed = tool_result("laptop__Bash", "exit 1: no such file", true, 7);
    assert_eq!(
        serde_json::to_value(entry(3, &failed, 19)).unwrap(),
        json!({"index": 3, "role": "toolResult", "timestamp": 7, "toolName": "laptop__Bash",
            "isError": true, "preview": "exit 1: no such fi…"})
    );
    assert_eq!(
        serde_json::to_value(entry(0, &user("héllo 🦀 wörld", 5), 8)).unwrap(),
        json!({"index": 0, "role": "user", "timestamp": 5, "preview": "héllo 🦀…"})
    );
}

#[test]
fn previews_cut_on_characters() {
    assert_eq!(preview("short", 5), "short");
    assert_eq!(preview("ééééé", 4), "ééé…");
    let text = "0123456789abcdefghijKEY0123456789abcdefghij";
    let (start, len) = find_match(text, "key").unwrap();
    assert_eq!((start, len), (20, 3));
    assert_eq!(preview_around(text, start, len, 11), "…hijKEY012…");
    // Near an end, the window stops there and needs no mark on that side.
    assert_eq!(preview_around(text, 0, 3, 11), "012345678…");
    assert_eq!(preview_around(text, 41, 2, 11), "…bcdefghij");
    // A match wider than the window shows from its start.
    assert_eq!(preview_around(text, 5, 30, 7), "…56789…");
    assert_eq!(preview_around("fits", 0, 4, 11), "fits");
}

#[test]
fn matching_ignores_case_even_when_folding_changes_length() {
    // `İ` folds to two characters; the match still maps onto the text.
    assert_eq!(
        find_match("İstanbul LIGHTHOUSE", "lighthouse"),
        Some((9, 10))
    );
    assert_eq!(find_match("İstanbul", "i\u{307}stan"), Some((0, 5)));
    assert_eq!(find_match("the old  lighthouse", "old \n lighthouse"), None);
    assert_eq!(
        find_match(
            &entry_text(&user("the old\n\nlighthouse", 0)),
            "OLD  LIGHTHOUSE"
        ),
        Some((4, 14))
    );
    assert_eq!(find_match("anything", " "), None);
}

#[test]
fn archives_and_live_histories_group_into_sessions_newest_first() {
    let sessions = agent_sessions();
    let summaries: Vec<_> = sessions.iter().map(SessionSources::summary).collect();
    assert_eq!(
        serde_json::to_value(&summaries).unwrap(),
        json!([
            {"sessionId": "cur", "sessionKey": "agent:main:main", "status": "current",
             "messageCount": 7, "archives": 1, "archivedAt": 2500, "lastActiveAt": 3000},
            {"sessionId": "dm", "sessionKey": "agent:main:discord:dm:7", "status": "live",
             "messageCount": 2, "archives": 0, "lastActiveAt": 2800},
            {"sessionId": "old", "sessionKey": "agent:main:main", "status": "archived",
             "messageCount": 7, "archives": 2, "archivedAt": 2000}
        ])
    );
    let old = &sessions[2];
    assert_eq!(
        old.archives
            .iter()
            .map(|a| a.key.trim_start_matches(PREFIX))
            .collect::<Vec<_>>(),
        ["old-part1500.jsonl.gz", "old.jsonl.gz"]
    );
    assert_eq!(
        sessions
            .iter()
            .map(SessionSources::is_reset)
            .collect::<Vec<_>>(),
        [false, false, true]
    );
    // Entries 1..5 of `cur`: the rest of its part, then its live history.
    assert_eq!(sessions[0].page(1, 4), vec![(0, 1, 1), (1, 0, 3)]);
}

#[test]
fn search_reads_newest_sessions_within_the_budget() {
    let sessions = agent_sessions();
    // (searched, not searched)
    fn ids(plan: SearchPlan<'_>) -> (Vec<&str>, Vec<String>) {
        let searched = plan.sessions.iter().map(|s| s.session_id.as_str());
        (searched.collect(), plan.not_searched)
    }
    // cur: its part (its live history is local); dm: its history; old: 2 parts.
    let costs: Vec<usize> = sessions.iter().map(SessionSources::read_cost).collect();
    assert_eq!(costs, [1, 1, 2]);
    assert_eq!(
        ids(plan_search(&sessions, 4)),
        (vec!["cur", "dm", "old"], vec![])
    );
    assert_eq!(
        ids(plan_search(&sessions, 3)),
        (vec!["cur", "dm"], vec!["old".to_string()])
    );
    // A session too big for what is left does not hide smaller later ones.
    let old_then_dm = [sessions[2].clone(), sessions[1].clone()];
    assert_eq!(
        ids(plan_search(&old_then_dm, 1)),
        (vec!["dm"], vec!["old".to_string()])
    );
}

#[test]
fn a_search_stops_at_its_limit_and_says_what_it_did_not_read() {
    let old = [
        user("Remember the lighthouse?", 10),
        said("echo: Remember the lighthouse?", 11),
        tool_result("web_search", "Lighthouse hours: 9-5", false, 12),
    ];
    let mut s = Search::new("LIGHTHOUSE", 20, 2, vec!["huge".into()]);
    s.add("cur", &[user("hello", 20), said("hi", 21)]);
    assert!(s.wants_more());
    s.add("old", &old);
    assert!(!s.wants_more());
    s.skip("older");
    assert_eq!(
        serde_json::to_value(s.clone().finish(10_000)).unwrap(),
        json!({"ok": true, "query": "LIGHTHOUSE", "searchedSessions": 2,
            "notSearched": ["huge", "older"], "limitReached": true, "hits": [
            {"sessionId": "old", "index": 0, "role": "user", "timestamp": 10,
             "preview": "…er the lighthouse?"},
            {"sessionId": "old", "index": 1, "role": "assistant", "timestamp": 11,
             "preview": "…er the lighthouse?"}
        ]})
    );
    // Hits that would not fit in the result are dropped, and that is said.
    let one = s.finish(50);
    assert_eq!((one.hits.len(), one.limit_reached), (1, true));

    let mut all = Search::new("hours", 200, 5, vec![]);
    all.add("old", &old);
    assert_eq!(
        serde_json::to_value(all.finish(10_000)).unwrap(),
        json!({"ok": true, "query": "hours", "searchedSessions": 1, "notSearched": [],
            "limitReached": false, "hits": [
            {"sessionId": "old", "index": 2, "role": "toolResult", "timestamp": 12,
             "toolName": "web_search", "preview": "Lighthouse hours: 9-5"}
        ]})
    );
}

#[test]
fn reading_pages_and_recent_entries() {
    let sessions = agent_sessions();
    let cur = &sessions[0];
    let messages = [user("one", 1), said("two", 2), user("three", 3)];
    assert_eq!(
        serde_json::to_value(read_result(cur, 2, &messages, 200, 10_000)).unwrap(),
        json!({"ok": true, "sessionId": "cur", "total": 7, "nextOffset": 5, "entries": [
            {"index": 2, "role": "user", "timestamp": 1, "preview": "one"},
            {"index": 3, "role": "assistant", "timestamp": 2, "preview": "two"},
            {"index": 4, "role": "user", "timestamp": 3, "preview": "three"}
        ]})
    );
    // The last page has no nextOffset; a tight budget ends the page early.
    assert_eq!(
        read_result(cur, 4, &messages, 200, 10_000).next_offset,
        None
    );
    let tight = read_result(cur, 2, &messages, 200, 120);
    assert_eq!((tight.entries.len(), tight.next_offset), (2, Some(4)));
    // `recent` keeps the newest entries when not all fit.
    let recent = recent_result(cur, 4, &messages, 200, 120);
    assert_eq!(
        serde_json::to_value(recent).unwrap(),
        json!({"ok": true, "sessionId": "cur", "total": 7, "entries": [
            {"index": 5, "role": "assistant", "timestamp": 2, "preview": "two"},
            {"index": 6, "role": "user", "timestamp": 3, "preview": "three"}
        ]})
    );
}

#[test]
fn session_lists_are_limited() {
    let sessions = agent_sessions();
    let list = session_list(&sessions, 1, 10_000);
    assert_eq!(
        serde_json::to_value(list).unwrap(),
        json!({"ok": true, "total": 3, "sessions": [
            {"sessionId": "cur", "sessionKey": "agent:main:main", "status": "current",
             "messageCount": 7, "archives": 1, "archivedAt": 2500, "lastActiveAt": 3000}
        ]})
    );
    assert_eq!(session_list(&sessions, 50, 10_000).sessions.len(), 3);
}

#[test]
fn searches_skip_session_logs_calls_and_results() {
    let call = assistant(
        vec![
            AssistantBlock::Text {
                text: "Looking for the lighthouse.".into(),
            },
            AssistantBlock::ToolCall {
                id: "c1".into(),
                name: "session_logs".into(),
                arguments: json!({"action": "search", "query": "lighthouse"}),
            },
        ],
        1,
    );
    let found = tool_result("session_logs", r#"{"preview":"the lighthouse"}"#, false, 2);
    assert_eq!(
        [search_text(&call), search_text(&found)],
        [Some("Looking for the lighthouse.".to_string()), None]
    );
    // Reading shows them all the same.
    assert_eq!(
        entry_text(&call),
        r#"Looking for the lighthouse. session_logs({"action":"search","query":"lighthouse"})"#
    );
    let hits = search(
        "s",
        &[call, found, user("lighthouse", 3)],
        "lighthouse",
        200,
        10,
    );
    assert_eq!(
        serde_json::to_value(hits).unwrap(),
        json!([
            {"sessionId": "s", "index": 0, "role": "assistant", "timestamp": 1,
             "preview": "Looking for the lighthouse."},
            {"sessionId": "s", "index": 2, "role": "user", "timestamp": 3, "preview": "lighthouse"}
        ])
    );
}
