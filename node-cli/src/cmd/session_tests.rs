use super::*;
use crate::cli::{Cli, Command};
use crate::test_support::CannedGateway;
use clap::Parser;
use gsv_protocol::{ErrorShape, ModelSelection, SessionRegistryEntry, SessionSettings, Trust};

const DEFAULT_KEY: &str = "agent:main:cli:dm:main";
/// 2026-02-18T12:00:00Z.
const NOW: i64 = 1_771_416_000_000;

/// What a command printed, and its error as `main` shows it.
type Ran = (String, Result<(), String>);

/// Runs `gsv session ARGS…` against `gateway`, at `NOW`.
async fn run_against(gateway: &CannedGateway, args: &[&str]) -> Ran {
    let argv = ["gsv", "session"].iter().chain(args);
    let Command::Session(command) = Cli::try_parse_from(argv).unwrap().command else {
        panic!("not a session command")
    };
    let target = GatewayTarget {
        url: gateway.url().to_string(),
        token: None,
    };
    let mut out = Vec::new();
    let result = execute(&target, command, DEFAULT_KEY, NOW, &mut out)
        .await
        .map_err(|e| format!("{e:#}"));
    (String::from_utf8(out).unwrap(), result)
}

fn session_answer() -> Value {
    json!({
        "sessionId": "s-3", "sessionKey": "agent:main:work",
        "createdAt": 1_771_372_800_000i64, "updatedAt": 1_771_415_820_000i64,
        "messageCount": 12, "tokens": {"input": 1200, "output": 340, "total": 1540},
        "settings": {"model": {"provider": "openai", "id": "gpt-4.1"}, "thinkingLevel": "high"},
        "resetPolicy": {"mode": "idle", "idleMinutes": 30},
        "previousSessionIds": ["s-1", "s-2"], "label": "Work",
        "trust": {"level": "approved", "actsAs": "approved"}
    })
}

fn patch_value(key: &str, path: &str, raw: &str) -> Result<Value, String> {
    build_patch(key, path, raw)
        .map(|p| serde_json::to_value(p).unwrap())
        .map_err(|e| e.to_string())
}

// ---- pure parts ----

#[test]
fn set_paths_build_nested_patches() {
    let built: Vec<Value> = [
        ("label", "Kitchen display"),
        ("label", "null"),
        ("model", "openai/gpt-4.1"),
        ("model", "openrouter/meta-llama/llama-4"),
        ("model", "gpt-4.1"),
        ("model", "null"),
        ("model.provider", "anthropic"),
        ("model.id", "claude-sonnet-4-5"),
        ("thinkingLevel", "high"),
        ("systemPrompt", "Be brief."),
        ("systemPrompt", "null"),
        ("maxTokens", "4096"),
        ("maxTokens", "null"),
        ("resetPolicy.mode", "manual"),
        ("resetPolicy.atHour", "4"),
        ("resetPolicy.idleMinutes", "30"),
        ("resetPolicy.idleMinutes", "null"),
    ]
    .iter()
    .map(|(path, raw)| patch_value("k", path, raw).unwrap())
    .collect();
    assert_eq!(
        built,
        vec![
            json!({"sessionKey": "k", "label": "Kitchen display"}),
            json!({"sessionKey": "k", "label": null}),
            json!({"sessionKey": "k", "settings": {"model": {"provider": "openai", "id": "gpt-4.1"}}}),
            json!({"sessionKey": "k", "settings": {"model": {"provider": "openrouter", "id": "meta-llama/llama-4"}}}),
            json!({"sessionKey": "k", "settings": {"model": {"id": "gpt-4.1"}}}),
            json!({"sessionKey": "k", "settings": {"model": null}}),
            json!({"sessionKey": "k", "settings": {"model": {"provider": "anthropic"}}}),
            json!({"sessionKey": "k", "settings": {"model": {"id": "claude-sonnet-4-5"}}}),
            json!({"sessionKey": "k", "settings": {"thinkingLevel": "high"}}),
            json!({"sessionKey": "k", "settings": {"systemPrompt": "Be brief."}}),
            json!({"sessionKey": "k", "settings": {"systemPrompt": null}}),
            json!({"sessionKey": "k", "settings": {"maxTokens": 4096}}),
            json!({"sessionKey": "k", "settings": {"maxTokens": null}}),
            json!({"sessionKey": "k", "resetPolicy": {"mode": "manual"}}),
            json!({"sessionKey": "k", "resetPolicy": {"mode": "daily", "atHour": 4}}),
            json!({"sessionKey": "k", "resetPolicy": {"mode": "idle", "idleMinutes": 30}}),
            json!({"sessionKey": "k", "resetPolicy": {"idleMinutes": null}}),
        ]
    );
}

#[test]
fn bad_set_paths_and_values_are_refused() {
    let refused: Vec<String> = [
        ("settings.model", "x"),
        ("maxTokens", "lots"),
        ("resetPolicy.atHour", "-1"),
        ("model", "openai/"),
        ("model", ""),
        ("model.id", " "),
    ]
    .iter()
    .map(|(path, raw)| patch_value("k", path, raw).unwrap_err())
    .collect();
    assert_eq!(
        refused,
        vec![
            "unknown session setting `settings.model`; use one of: label, model, model.provider, \
             model.id, thinkingLevel, systemPrompt, maxTokens, resetPolicy.mode, \
             resetPolicy.atHour, resetPolicy.idleMinutes",
            "maxTokens must be a whole number (or null to clear it), not `lots`",
            "resetPolicy.atHour must be a whole number (or null to clear it), not `-1`",
            "model must be provider/id or an id, e.g. openai/gpt-4.1, not `openai/`",
            "model must be provider/id or an id, e.g. openai/gpt-4.1, not ``",
            "model.id cannot be empty",
        ]
    );
}

#[test]
fn list_is_a_table_with_relative_times() {
    let entry = |key: &str, ago_ms: i64, label: Option<&str>| SessionRegistryEntry {
        session_key: key.into(),
        created_at: 0,
        last_active_at: NOW - ago_ms,
        label: label.map(String::from),
    };
    let list = SessionsListResult {
        sessions: vec![
            entry("agent:main:cli:dm:main", 20_000, None),
            entry("agent:main:work", 3 * 60_000 + 59_000, Some("Work")),
            entry("agent:main:telegram:dm:42", 5 * 3_600_000, Some("Phone")),
            entry("agent:ops:main", 9 * 86_400_000, None),
        ],
        count: 7,
    };
    assert_eq!(
        render_list(&list, NOW),
        "\
KEY                        LAST ACTIVE  LABEL
agent:main:cli:dm:main     just now
agent:main:work            3m ago       Work
agent:main:telegram:dm:42  5h ago       Phone
agent:ops:main             9d ago
4 of 7 sessions
"
    );
    let empty = SessionsListResult {
        sessions: vec![],
        count: 1,
    };
    assert_eq!(render_list(&empty, NOW), "0 of 1 session\n");
}

#[test]
fn session_shows_settings_policy_and_previous_ids() {
    let full: SessionGetResult = serde_json::from_value(session_answer()).unwrap();
    assert_eq!(
        render_session(&full),
        "\
Session       agent:main:work
Label         Work
Session id    s-3
Created       2026-02-18T00:00:00Z
Updated       2026-02-18T11:57:00Z
Messages      12
Tokens        1200 in, 340 out, 1540 total
Trust         approved (the last message's; `gsv trust explain` shows what it may do)
Model         openai/gpt-4.1
Thinking      high
Reset policy  idle after 30 min
Previous ids  s-1
              s-2
"
    );
    let bare = SessionGetResult {
        label: None,
        settings: SessionSettings {
            model: Some(ModelSelection {
                provider: String::new(),
                id: "gpt-4.1".into(),
            }),
            max_tokens: Some(2048),
            system_prompt: Some("x".repeat(70)),
            thinking_level: None,
        },
        reset_policy: None,
        last_reset_at: Some(1_771_372_800_000),
        previous_session_ids: vec![],
        trust: None,
        ..full
    };
    assert_eq!(
        render_session(&bare),
        format!(
            "\
Session        agent:main:work
Session id     s-3
Created        2026-02-18T00:00:00Z
Updated        2026-02-18T11:57:00Z
Messages       12
Tokens         1200 in, 340 out, 1540 total
Model          gpt-4.1
Max tokens     2048
System prompt  {}…
Reset policy   gateway default
Last reset     2026-02-18T00:00:00Z
Previous ids   none
",
            "x".repeat(59)
        )
    );
}

#[test]
fn reset_policies_read_as_words() {
    let shown: Vec<String> = [
        json!({"mode": "manual"}),
        json!({"mode": "daily", "atHour": 4}),
        json!({"mode": "idle", "idleMinutes": 15}),
        json!({"mode": "weekly"}),
        json!({"mode": "daily"}),
        json!({"atHour": 4}),
    ]
    .iter()
    .map(reset_policy)
    .collect();
    assert_eq!(
        shown,
        vec![
            "manual",
            "daily at 04:00",
            "idle after 15 min",
            "weekly",
            "daily",
            "{\"atHour\":4}"
        ]
    );
}

#[test]
fn stats_and_history() {
    let stats = SessionStatsResult {
        session_key: "agent:main:work".into(),
        session_id: "s-3".into(),
        message_count: 12,
        tokens: TokenCounts {
            input: 10,
            output: 5,
            total: 40_315,
            cache_read: 39_000,
            cache_write: 1_300,
            cost: Some(0.0165),
        },
        last_turn: Some(TokenCounts {
            input: 4,
            output: 2,
            total: 2_006,
            cache_read: 1_900,
            cache_write: 100,
            cost: Some(0.001),
        }),
        created_at: 0,
        updated_at: 951_782_400_000, // 2000-02-29
        uptime: 2 * 3_600_000 + 5 * 60_000 + 9_000,
        is_processing: true,
        queue_size: 1,
        trust: Some(Trust::system(Trust::GROUP)),
        last_workspace_load: Some(WorkspaceLoadStats {
            r2_gets: 1,
            r2_lists: 4,
            r2_puts: 0,
            batches: 2,
            skills_cached: 3,
            skills_read: 0,
            files_cached: 9,
            early_call: Some(EarlyCall::Kept),
            recalled: vec![
                "ctx://default/users/owner/memories/preferences/coffee".into(),
                "ctx://default/agents/main/memories/cases/vpn".into(),
            ],
        }),
    };
    assert_eq!(
        render_stats(&stats),
        "\
Session      agent:main:work
Session id   s-3
Messages     12
Tokens       10 in, 5 out, 40315 total
Cache        39000 read / 1300 written (97% of input)
Cost         ~$0.0165 (estimated)
Last turn    4 in, 2 out; cache 1900 read / 100 written (95% of input); ~$0.0010
Created      1970-01-01T00:00:00Z
Updated      2000-02-29T00:00:00Z
Uptime       2h 5m
Running      yes
Queued       1
Trust        system (as group) (the last message's; `gsv trust explain` shows what it may do)
Last prompt  1 R2 reads, 4 listings in 2 batches (9 files and 3 skills cached, 0 skills read); the model was called alongside, prompt unchanged
Recalled     ctx://default/users/owner/memories/preferences/coffee
             ctx://default/agents/main/memories/cases/vpn
"
    );
    let history = SessionHistoryResult {
        session_key: "agent:main:work".into(),
        current_session_id: "s-3".into(),
        previous_session_ids: vec![],
    };
    assert_eq!(
        render_history(&history),
        "Session       agent:main:work\nCurrent id    s-3\nPrevious ids  none\n"
    );
}

#[test]
fn durations_and_times() {
    let durations: Vec<String> = [0, 45_000, 200_000, 86_400_000 + 4 * 3_600_000]
        .iter()
        .map(|ms| duration(*ms))
        .collect();
    assert_eq!(durations, vec!["0s", "45s", "3m 20s", "1d 4h"]);
    let times: Vec<String> = [NOW + 1, 1_709_251_199_999, -1000]
        .iter()
        .map(|ms| iso_utc(*ms))
        .collect();
    assert_eq!(
        times,
        vec![
            "2026-02-18T12:00:00Z",
            "2024-02-29T23:59:59Z",
            "1969-12-31T23:59:59Z"
        ]
    );
}

#[test]
fn preview_shows_one_block_per_message() {
    let long_args = json!({"path": "notes/".to_string() + &"a".repeat(150)});
    let preview: SessionPreviewResult = serde_json::from_value(json!({
        "sessionKey": "agent:main:work", "sessionId": "s-3", "messageCount": 40,
        "messages": [
            {"role": "user", "content": "What's in MEMORY.md?", "timestamp": 1},
            {"role": "assistant", "timestamp": 2, "stopReason": "toolUse", "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "Let me look."},
                {"type": "toolCall", "id": "c1", "name": "read_file", "arguments": {"path": "MEMORY.md"}},
                {"type": "toolCall", "id": "c2", "name": "read_file", "arguments": long_args}
            ]},
            {"role": "toolResult", "toolCallId": "c1", "toolName": "read_file", "isError": false,
             "timestamp": 3, "content": [{"type": "text", "text": "b".repeat(250)}]},
            {"role": "toolResult", "toolCallId": "c2", "toolName": "read_file", "isError": true,
             "timestamp": 3, "content": [{"type": "text", "text": "no such file"}]},
            {"role": "user", "timestamp": 4, "content": [{"type": "text", "text": "line 1"}, {"type": "text", "text": "line 2"}]},
            {"role": "assistant", "timestamp": 5, "stopReason": "error", "errorMessage": "rate limited", "content": []}
        ]
    }))
    .unwrap();
    let long_call = format!(
        "{{\"path\":\"notes/{}…",
        "a".repeat(120 - "{\"path\":\"notes/".len() - 1)
    );
    assert_eq!(
        render_preview(&preview),
        format!(
            "\
agent:main:work (session s-3): last 6 of 40 messages

user: What's in MEMORY.md?

assistant: Let me look.
→ read_file({{\"path\":\"MEMORY.md\"}})
→ read_file({long_call})

toolResult read_file: {}…

toolResult read_file (error): no such file

user: line 1
line 2

assistant (error):
error: rate limited
",
            "b".repeat(199)
        )
    );
    let empty = SessionPreviewResult {
        messages: vec![],
        message_count: 0,
        ..preview
    };
    assert_eq!(
        render_preview(&empty),
        "agent:main:work (session s-3) has no messages yet\n"
    );
}

// ---- commands against a fake gateway ----

#[tokio::test]
async fn list_sends_limit_and_offset() {
    let gateway = CannedGateway::start(|_, _| {
        Ok(json!({"sessions": [
            {"sessionKey": "agent:main:work", "createdAt": 0, "lastActiveAt": NOW - 180_000, "label": "Work"}
        ], "count": 3}))
    })
    .await;
    let default = run_against(&gateway, &["list"]).await;
    let paged = run_against(&gateway, &["list", "-l", "1", "--offset", "2"]).await;
    let table = "KEY              LAST ACTIVE  LABEL\nagent:main:work  3m ago       Work\n1 of 3 sessions\n";
    assert_eq!(default, (table.to_string(), Ok(())));
    assert_eq!(paged, (table.to_string(), Ok(())));
    assert_eq!(
        gateway.requests(),
        vec![
            ("sessions.list".to_string(), json!({"limit": 50})),
            (
                "sessions.list".to_string(),
                json!({"limit": 1, "offset": 2})
            ),
        ]
    );
}

#[tokio::test]
async fn get_stats_history_use_the_default_key_or_the_given_one() {
    let gateway = CannedGateway::start(|method, params| {
        let key = params["sessionKey"].clone();
        Ok(match method {
            "session.get" => session_answer(),
            "session.stats" => json!({"sessionKey": key, "sessionId": "s-9", "messageCount": 0,
                "tokens": {"input": 0, "output": 0, "total": 0}, "createdAt": NOW, "updatedAt": NOW,
                "uptime": 45_000, "isProcessing": false, "queueSize": 0}),
            _ => {
                json!({"sessionKey": key, "currentSessionId": "s-9", "previousSessionIds": ["s-8"]})
            }
        })
    })
    .await;
    let get = run_against(&gateway, &["get", "agent:main:work"]).await;
    let stats = run_against(&gateway, &["stats"]).await;
    let history = run_against(&gateway, &["history", "agent:ops:main"]).await;
    let history_json = run_against(&gateway, &["history", "--json"]).await;
    assert_eq!(
        get.0.lines().take(2).collect::<Vec<_>>(),
        vec!["Session       agent:main:work", "Label         Work"]
    );
    assert_eq!(
        stats,
        (
            "\
Session     agent:main:cli:dm:main
Session id  s-9
Messages    0
Tokens      0 in, 0 out, 0 total
Created     2026-02-18T12:00:00Z
Updated     2026-02-18T12:00:00Z
Uptime      45s
Running     no
Queued      0
"
            .to_string(),
            Ok(())
        )
    );
    assert_eq!(
        history,
        (
            "Session       agent:ops:main\nCurrent id    s-9\nPrevious ids  s-8\n".to_string(),
            Ok(())
        )
    );
    assert_eq!(
        history_json,
        (
            "{\n  \"currentSessionId\": \"s-9\",\n  \"previousSessionIds\": [\n    \"s-8\"\n  ],\n  \
             \"sessionKey\": \"agent:main:cli:dm:main\"\n}\n"
                .to_string(),
            Ok(())
        )
    );
    let sent: Vec<(String, Value)> = gateway.requests();
    assert_eq!(
        sent,
        vec![
            (
                "session.get".into(),
                json!({"sessionKey": "agent:main:work"})
            ),
            ("session.stats".into(), json!({"sessionKey": DEFAULT_KEY})),
            (
                "session.history".into(),
                json!({"sessionKey": "agent:ops:main"})
            ),
            ("session.history".into(), json!({"sessionKey": DEFAULT_KEY})),
        ]
    );
}

#[tokio::test]
async fn preview_sends_the_limit() {
    let gateway = CannedGateway::start(|_, params| {
        Ok(
            json!({"sessionKey": params["sessionKey"], "sessionId": "s-1", "messageCount": 1,
            "messages": [{"role": "user", "content": "hi", "timestamp": 1}]}),
        )
    })
    .await;
    let ran = run_against(&gateway, &["preview"]).await;
    let limited = run_against(&gateway, &["preview", "agent:x", "--limit", "5"]).await;
    assert_eq!(
        (ran, limited),
        (
            (
                "agent:main:cli:dm:main (session s-1): last 1 of 1 messages\n\nuser: hi\n"
                    .to_string(),
                Ok(())
            ),
            (
                "agent:x (session s-1): last 1 of 1 messages\n\nuser: hi\n".to_string(),
                Ok(())
            )
        )
    );
    assert_eq!(
        gateway.requests(),
        vec![
            (
                "session.preview".to_string(),
                json!({"sessionKey": DEFAULT_KEY, "limit": 20})
            ),
            (
                "session.preview".to_string(),
                json!({"sessionKey": "agent:x", "limit": 5})
            ),
        ]
    );
}

#[tokio::test]
async fn set_patches_the_default_or_given_session() {
    let gateway = CannedGateway::start(|_, _| Ok(json!({"ok": true}))).await;
    let with_default = run_against(&gateway, &["set", "model", "openai/gpt-4.1"]).await;
    let with_key = run_against(
        &gateway,
        &["set", "agent:main:work", "resetPolicy.idleMinutes", "30"],
    )
    .await;
    assert_eq!(
        (with_default, with_key),
        (
            (
                "Set model = openai/gpt-4.1 for agent:main:cli:dm:main\n".to_string(),
                Ok(())
            ),
            (
                "Set resetPolicy.idleMinutes = 30 for agent:main:work\n".to_string(),
                Ok(())
            )
        )
    );
    assert_eq!(
        gateway.requests(),
        vec![
            (
                "session.patch".to_string(),
                json!({"sessionKey": DEFAULT_KEY,
                    "settings": {"model": {"provider": "openai", "id": "gpt-4.1"}}})
            ),
            (
                "session.patch".to_string(),
                json!({"sessionKey": "agent:main:work",
                    "resetPolicy": {"mode": "idle", "idleMinutes": 30}})
            ),
        ]
    );
}

#[tokio::test]
async fn set_refuses_an_unknown_path_without_a_request() {
    let gateway = CannedGateway::start(|_, _| Ok(json!({"ok": true}))).await;
    let ran = run_against(&gateway, &["set", "agent:main:work", "colour", "blue"]).await;
    assert_eq!(
        ran,
        (
            String::new(),
            Err(
                "unknown session setting `colour`; use one of: label, model, model.provider, \
                 model.id, thinkingLevel, systemPrompt, maxTokens, resetPolicy.mode, \
                 resetPolicy.atHour, resetPolicy.idleMinutes"
                    .to_string()
            )
        )
    );
    assert_eq!(gateway.requests(), vec![]);
}

#[tokio::test]
async fn gateway_errors_are_reported() {
    let gateway = CannedGateway::start(|_, _| {
        Err(ErrorShape::new(
            gsv_protocol::codes::BAD_REQUEST,
            "invalid resetPolicy",
        ))
    })
    .await;
    let ran = run_against(&gateway, &["set", "resetPolicy.mode", "weekly"]).await;
    assert_eq!(ran.0, "");
    assert!(
        ran.1.as_ref().unwrap_err().contains("invalid resetPolicy"),
        "{ran:?}"
    );
}

#[test]
fn set_takes_an_optional_key_first() {
    let parse = |args: &[&str]| {
        let argv = ["gsv", "session", "set"].iter().chain(args);
        Cli::try_parse_from(argv).map(|cli| format!("{:?}", cli.command))
    };
    assert_eq!(
        parse(&["label", "-x-"]).unwrap(),
        "Session(Set { args: [\"label\", \"-x-\"] })"
    );
    assert_eq!(
        parse(&["k", "label", "Work"]).unwrap(),
        "Session(Set { args: [\"k\", \"label\", \"Work\"] })"
    );
    assert!(parse(&["label"]).is_err());
    assert!(parse(&["a", "b", "c", "d"]).is_err());
}

#[test]
fn compact_and_transcript_rendering() {
    use gsv_protocol::{SessionCompactResult, SessionTranscriptResult, UserContent, UserMessage};
    let done = SessionCompactResult {
        ok: true,
        trimmed_messages: 3,
        kept_messages: 5,
        archived_to: Some("agents/main/sessions/s1-part9.jsonl.gz".into()),
    };
    assert_eq!(
        render_compact(&done),
        "Archived 3 messages to agents/main/sessions/s1-part9.jsonl.gz; 5 kept\n"
    );
    let nothing = SessionCompactResult {
        ok: true,
        trimmed_messages: 0,
        kept_messages: 4,
        archived_to: None,
    };
    assert_eq!(
        render_compact(&nothing),
        "Nothing to compact: 4 messages kept\n"
    );
    let t = SessionTranscriptResult {
        session_key: "agent:main:main".into(),
        session_id: "s1".into(),
        archives: vec!["agents/main/sessions/s1-part9.jsonl.gz".into()],
        archive_metadata: vec![],
        archive_bytes: vec![],
        messages: vec![gsv_protocol::Message::User(UserMessage {
            content: UserContent::Text("hi".into()),
            timestamp: 1,
            context: None,
        })],
        next_offset: Some(3),
    };
    assert_eq!(
        render_transcript(&t, 2),
        "agent:main:main (session s1): archived messages 3–3\n\nuser: hi\n\n(more: --offset 3)\n"
    );
}

#[test]
fn reset_rendering() {
    use gsv_protocol::{SessionResetResult, TokenCounts};
    let r = SessionResetResult {
        ok: true,
        session_key: "agent:main:main".into(),
        old_session_id: "old".into(),
        new_session_id: "new".into(),
        archived_messages: 4,
        archived_to: Some("agents/main/sessions/old.jsonl.gz".into()),
        tokens_cleared: TokenCounts::default(),
        media_deleted: Some(0),
    };
    assert_eq!(
        render_reset(&r),
        "Session reset. Archived 4 messages to agents/main/sessions/old.jsonl.gz. New session id new (was old).\n"
    );
}

#[test]
fn a_prompt_made_from_another_sessions_listings_requested_nothing() {
    let taken = WorkspaceLoadStats {
        files_cached: 10,
        skills_cached: 2,
        ..Default::default()
    };
    let partly = WorkspaceLoadStats {
        r2_lists: 2,
        batches: 1,
        ..taken.clone()
    };
    assert_eq!(
        [workspace_load(&taken), workspace_load(&partly)],
        [
            "nothing requested from R2: 10 files and 2 skills cached, as another session listed them",
            "0 R2 reads, 2 listings in 1 batch (10 files and 2 skills cached, 0 skills read)",
        ]
    );
}
