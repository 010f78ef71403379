//! Session lifecycle end to end: slash commands and directives, a reset
//! during a run, automatic resets on the idle policy (real clock), and
//! automatic compaction before the context overflows — each test with its
//! own gateway under workerd and its own fake LLM.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{GatewayOptions, Workerd};
use gsv_e2e::ws::Client;
use gsv_protocol::ChatState;
use serde_json::{json, Value};
use std::time::Duration;

const TOKEN: &str = "test-token";

async fn setup() -> (Workerd, FakeLlm, Client) {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    (gw, llm, c)
}

async fn send(c: &mut Client, key: &str, message: &str) -> Value {
    let res = c
        .request("chat.send", json!({"sessionKey": key, "message": message}))
        .await;
    assert!(res.ok, "chat.send {message:?}: {res:?}");
    res.payload.unwrap()
}

async fn chat(c: &mut Client, key: &str, message: &str) -> String {
    let run = c.chat_send(key, message).await;
    let events = c.run_events(&run).await;
    let last = events.last().unwrap();
    assert_eq!(last.state, ChatState::Final, "{last:?}");
    last.message.as_ref().unwrap().text()
}

async fn get(c: &mut Client, method: &str, params: Value) -> Value {
    let res = c.request(method, params).await;
    assert!(res.ok, "{method}: {res:?}");
    res.payload.unwrap()
}

async fn messages(c: &mut Client, key: &str) -> Vec<Value> {
    get(c, "session.preview", json!({"sessionKey": key})).await["messages"]
        .as_array()
        .unwrap()
        .clone()
}

fn text_of(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        blocks => blocks
            .as_array()
            .map(|b| {
                b.iter()
                    .filter_map(|b| b["text"].as_str())
                    .collect::<String>()
            })
            .unwrap_or_default(),
    }
}

/// Today's daily memory file as the agent's workspace shows it.
async fn daily_memory(c: &mut Client) -> String {
    let today = get(c, "workspace.list", json!({"path": "memory"})).await;
    let name = today["files"]
        .as_array()
        .and_then(|f| f.last())
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no daily memory file: {today}"));
    let file = match name.contains('/') {
        true => name.to_string(),
        false => format!("memory/{name}"),
    };
    let read = get(c, "workspace.read", json!({"path": file})).await;
    read["content"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn slash_commands_and_directives_act_without_a_run() {
    let (_gw, llm, mut c) = setup().await;
    let key = "agent:main:e2e:commands";
    assert_eq!(chat(&mut c, key, "hello").await, "echo: hello");
    let calls = llm.requests().len();

    let help = send(&mut c, key, "/help").await;
    assert_eq!(
        (help["status"].clone(), help["command"].clone()),
        (json!("command"), json!("help"))
    );
    assert!(help["response"]
        .as_str()
        .unwrap()
        .starts_with("**Available Commands**"));

    assert_eq!(
        send(&mut c, key, "/model openai/gpt-other").await,
        json!({"status": "command", "command": "model", "sessionKey": key,
            "response": "Model set to openai/gpt-other for this session."})
    );
    assert_eq!(
        send(&mut c, key, "/think high").await,
        json!({"status": "command", "command": "think", "sessionKey": key,
            "response": "Thinking set to high for this session."})
    );
    assert_eq!(
        send(&mut c, key, "/think loud").await,
        json!({"status": "command", "command": "think", "sessionKey": key,
            "error": "Unknown thinking level: \"loud\". Use one of: off, minimal, low, medium, high, xhigh."})
    );
    // /status shows the session's own model, not the global one.
    assert_eq!(
        send(&mut c, key, "/status").await,
        json!({"status": "command", "command": "status", "sessionKey": key,
            "response": format!("**Session Status**\n• Session: `{key}`\n• Messages: 2\n• Tokens: {} in / {} out\n• Model: openai/gpt-other\n• Thinking: high\n• Reset: daily at 04:00",
                get(&mut c, "session.get", json!({"sessionKey": key})).await["tokens"]["input"],
                get(&mut c, "session.get", json!({"sessionKey": key})).await["tokens"]["output"])})
    );
    assert_eq!(
        send(&mut c, key, "/t:low").await,
        json!({"status": "directive-only", "sessionKey": key, "response": "_Thinking: low_",
            "directives": {"thinkingLevel": "low"}})
    );
    assert_eq!(llm.requests().len(), calls, "no command reached the model");

    // The session's settings apply to its runs...
    assert_eq!(
        chat(&mut c, key, "with settings").await,
        "echo: with settings"
    );
    let body = llm.requests().last().unwrap().body.clone();
    assert_eq!(
        (body["model"].clone(), body["reasoning_effort"].clone()),
        (json!("gpt-other"), json!("high"))
    );
    // Not the main session: the owner's memories and past conversations
    // are not offered to it.
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(tools.contains(&"who_am_i"), "{tools:?}");
    assert!(
        !tools.contains(&"session_logs") && !tools.contains(&"what_do_i_know"),
        "{tools:?}"
    );
    // ...and directives to one message only, stripped from its text.
    let started = send(&mut c, key, "/m:gpt-mini /t:low quick one").await;
    assert_eq!(
        started["directives"],
        json!({"thinkingLevel": "low", "model": {"provider": "openai", "id": "gpt-mini"}})
    );
    let run = started["runId"].as_str().unwrap().to_string();
    let events = c.run_events(&run).await;
    assert_eq!(
        events.last().unwrap().message.as_ref().unwrap().text(),
        "echo: quick one"
    );
    let body = llm.requests().last().unwrap().body.clone();
    assert_eq!(
        (body["model"].clone(), body["reasoning_effort"].clone()),
        (json!("gpt-mini"), json!("low"))
    );
    assert_eq!(
        chat(&mut c, key, "back to normal").await,
        "echo: back to normal"
    );
    let body = llm.requests().last().unwrap().body.clone();
    assert_eq!(body["model"], json!("gpt-other"));

    // An unknown command is a message like any other.
    assert_eq!(chat(&mut c, key, "/nope").await, "echo: /nope");

    // /compact keeps the last N messages; /new TEXT resets and runs TEXT.
    assert_eq!(
        send(&mut c, key, "/compact 2").await,
        json!({"status": "command", "command": "compact", "sessionKey": key,
            "response": "Compacted: archived 8 messages, kept the last 2."})
    );
    let reset = send(&mut c, key, "/new fresh start").await;
    let run = reset["runId"].as_str().unwrap().to_string();
    assert_eq!(
        reset,
        json!({"status": "command", "command": "reset", "sessionKey": key,
            "response": "Session reset. Archived 2 messages.", "runId": run})
    );
    let events = c.run_events(&run).await;
    assert_eq!(
        events.last().unwrap().message.as_ref().unwrap().text(),
        "echo: fresh start"
    );
    let texts: Vec<String> = messages(&mut c, key).await.iter().map(text_of).collect();
    assert_eq!(texts, ["fresh start", "echo: fresh start"]);
}

#[tokio::test]
async fn reset_during_a_run_ends_it_and_keeps_the_queue_for_the_new_session() {
    let (_gw, llm, mut c) = setup().await;
    let key = "agent:main:e2e:reset-run";
    assert_eq!(chat(&mut c, key, "before").await, "echo: before");
    llm.script("slow-one", vec![Step::delay(2_000, Step::text("too late"))]);
    let slow = c.chat_send(key, "slow-one please").await;
    let queued = send(&mut c, key, "after the reset").await;
    assert_eq!(queued["queued"], json!(true));
    // Let the slow call reach the model.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let old_id = get(&mut c, "session.get", json!({"sessionKey": key})).await["sessionId"].clone();

    let reset = send(&mut c, key, "/reset").await;
    assert_eq!(
        reset,
        json!({"status": "command", "command": "reset", "sessionKey": key,
            "response": "Session reset. Archived 3 messages."})
    );
    let events = c.run_events(&slow).await;
    let last = events.last().unwrap();
    assert_eq!(
        (last.state, last.error.as_deref()),
        (ChatState::Error, Some("Run ended: the session was reset"))
    );
    // The queued message runs in the new session; the late answer is dropped.
    let run = queued["runId"].as_str().unwrap().to_string();
    let events = c.run_events(&run).await;
    assert_eq!(
        events.last().unwrap().message.as_ref().unwrap().text(),
        "echo: after the reset"
    );
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    let texts: Vec<String> = messages(&mut c, key).await.iter().map(text_of).collect();
    assert_eq!(texts, ["after the reset", "echo: after the reset"]);
    let old = get(
        &mut c,
        "session.transcript",
        json!({"sessionKey": key, "sessionId": old_id}),
    )
    .await;
    let old_texts: Vec<String> = old["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(text_of)
        .collect();
    assert_eq!(old_texts, ["before", "echo: before", "slow-one please"]);
}

#[tokio::test]
async fn idle_policy_resets_on_the_next_message_and_archives_everything() {
    let (_gw, llm, mut c) = setup().await;
    let key = "agent:main:e2e:idle";
    c.config_set("userTimezone", json!("Asia/Tokyo")).await;
    get(
        &mut c,
        "session.patch",
        json!({"sessionKey": key, "resetPolicy": {"mode": "idle", "idleMinutes": 1}}),
    )
    .await;
    llm.script(
        "List the durable facts",
        vec![Step::text(
            "<memories>\n- The user's boat is called Heron\n</memories>",
        )],
    );
    assert_eq!(
        chat(&mut c, key, "my boat is Heron").await,
        "echo: my boat is Heron"
    );
    assert_eq!(chat(&mut c, key, "it is blue").await, "echo: it is blue");
    let before = get(&mut c, "session.preview", json!({"sessionKey": key})).await;
    let info = get(&mut c, "session.get", json!({"sessionKey": key})).await;
    let old_id = info["sessionId"].as_str().unwrap().to_string();

    // Still within the minute: no reset.
    assert_eq!(chat(&mut c, key, "still here").await, "echo: still here");
    tokio::time::sleep(Duration::from_secs(62)).await;
    let before = {
        let mut all = before["messages"].as_array().unwrap().clone();
        all.extend(messages(&mut c, key).await[4..].iter().cloned());
        all
    };
    assert_eq!(chat(&mut c, key, "new day").await, "echo: new day");

    let info = get(&mut c, "session.get", json!({"sessionKey": key})).await;
    assert_ne!(info["sessionId"], json!(old_id));
    assert_eq!(
        (
            info["previousSessionIds"].clone(),
            info["messageCount"].clone()
        ),
        (json!([old_id]), json!(2))
    );
    // The new session holds only the triggering message and its answer.
    let texts: Vec<String> = messages(&mut c, key).await.iter().map(text_of).collect();
    assert_eq!(texts, ["new day", "echo: new day"]);

    // The archive holds exactly the old conversation, with its metadata.
    let old = get(
        &mut c,
        "session.transcript",
        json!({"sessionKey": key, "sessionId": old_id}),
    )
    .await;
    assert_eq!(old["messages"].as_array().unwrap()[..], before[..]);
    let archive = format!("agents/main/sessions/{old_id}.jsonl.gz");
    assert_eq!(old["archives"], json!([archive]));
    let meta = &old["archiveMetadata"][0];
    let keys: Vec<&str> = meta
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "agentId",
            "archivedAt",
            "inputTokens",
            "messageCount",
            "outputTokens",
            "sessionId",
            "sessionKey",
            "totalTokens"
        ]
    );
    assert_eq!(
        (
            meta["sessionKey"].clone(),
            meta["sessionId"].clone(),
            meta["agentId"].clone(),
            meta["messageCount"].clone()
        ),
        (json!(key), json!(old_id), json!("main"), json!("6"))
    );

    // Memories of the old conversation went to the daily file.
    let memory = daily_memory(&mut c).await;
    assert!(
        memory.contains("### Extracted before session reset (")
            && memory.contains("- The user's boat is called Heron"),
        "{memory}"
    );
}

/// Every tool result follows the assistant message that called it.
fn pairs_intact(messages: &[Value]) -> bool {
    messages.iter().enumerate().all(|(i, m)| {
        m["role"] != json!("toolResult")
            || messages[..i].iter().any(|a| {
                a["role"] == json!("assistant")
                    && a["content"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|b| b["id"] == m["toolCallId"])
            })
    })
}

#[tokio::test]
async fn a_long_conversation_compacts_before_it_overflows() {
    let (_gw, llm, mut c) = setup().await;
    let key = "agent:main:e2e:auto-compact";
    // Learn the prompt's size, then give the model a window that a few
    // long turns overflow.
    assert_eq!(chat(&mut c, key, "hi").await, "echo: hi");
    let system_chars = llm.requests().last().unwrap().body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .len() as u64;
    let system_tokens = system_chars * 3 / 10 + 1;
    c.config_set(
        "providers.openai.contextWindow",
        json!(system_tokens + 3_000),
    )
    .await;
    c.config_set("compaction.reserveTokens", json!(500)).await;
    c.config_set("compaction.keepRecentTokens", json!(900))
        .await;
    // One answer per summarizer chunk (the summary rolls over chunks).
    llm.script(
        "Answer with exactly two sections",
        (0..8)
            .map(|_| {
                Step::text(
                    "<summary>They planned a sailing trip.</summary>\n<memories>\n- Prefers sailing at dawn\n</memories>",
                )
            })
            .collect(),
    );
    llm.script(
        "tool-turn",
        vec![
            Step::tool_call("call_t", "who_am_i", json!({})),
            Step::text("done with the tool"),
        ],
    );
    let filler = "sail ".repeat(400); // ~600 tokens a message
    for i in 0..3 {
        chat(&mut c, key, &format!("turn {i}: {filler}")).await;
    }
    chat(&mut c, key, "tool-turn now").await;
    let mut compacted = false;
    for i in 3..8 {
        chat(&mut c, key, &format!("turn {i}: {filler}")).await;
        let all = messages(&mut c, key).await;
        if text_of(&all[0]).starts_with("[Conversation summary") {
            compacted = true;
            break;
        }
    }
    assert!(compacted, "no compaction happened");
    let all = messages(&mut c, key).await;
    assert_eq!(
        text_of(&all[0]),
        "[Conversation summary from automatic context compaction]\n\nThey planned a sailing trip."
    );
    assert!(pairs_intact(&all), "{all:?}");
    let info = get(&mut c, "session.get", json!({"sessionKey": key})).await;
    let session_id = info["sessionId"].as_str().unwrap().to_string();
    let transcript = get(&mut c, "session.transcript", json!({"sessionKey": key})).await;
    let archive = transcript["archives"][0].as_str().unwrap();
    assert!(
        archive.starts_with(&format!("agents/main/sessions/{session_id}-part")),
        "{archive}"
    );
    let archived = transcript["messages"].as_array().unwrap();
    assert_eq!(texts_of(&archived[..2]), ["hi", "echo: hi"]);
    assert!(pairs_intact(archived));
    let memory = daily_memory(&mut c).await;
    assert!(
        memory.contains("### Extracted from context compaction (")
            && memory.contains("- Prefers sailing at dawn"),
        "{memory}"
    );
    // The summary is what the model sees of the old conversation.
    let body = llm.requests().last().unwrap().body.clone();
    assert!(body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .starts_with("[Conversation summary from automatic context compaction]"));
}

fn texts_of(messages: &[Value]) -> Vec<String> {
    messages.iter().map(text_of).collect()
}

#[tokio::test]
async fn a_context_overflow_compacts_once_and_the_call_is_repeated() {
    let (_gw, llm, mut c) = setup().await;
    let key = "agent:main:e2e:overflow";
    for text in ["one", "two", "three"] {
        chat(&mut c, key, text).await;
    }
    llm.script(
        "Answer with exactly two sections",
        vec![Step::text(
            "<summary>Counting.</summary>\n<memories>\n</memories>",
        )],
    );
    llm.script(
        "too-long",
        vec![Step::ContextOverflow, Step::text("fits now")],
    );
    assert_eq!(chat(&mut c, key, "too-long message").await, "fits now");
    let all = messages(&mut c, key).await;
    assert_eq!(
        text_of(&all[0]),
        "[Conversation summary from automatic context compaction]\n\nCounting."
    );
    assert_eq!(
        texts_of(&all[all.len() - 2..]),
        ["too-long message", "fits now"]
    );
}

#[tokio::test]
async fn stop_ends_a_streaming_answer_and_nothing_more_of_it_arrives() {
    let (_gw, llm, mut c) = setup().await;
    llm.set_token_delay_ms(30);
    let long: Vec<String> = (1..=200).map(|i| format!("w{i}")).collect();
    llm.script("keep talking", vec![Step::text(long.join(" "))]);
    let run = c.chat_send("main", "keep talking").await;
    // The answer is streaming.
    loop {
        let evt = c.next_chat().await;
        if evt.run_id.as_deref() == Some(run.as_str()) && evt.state == ChatState::Delta {
            break;
        }
    }
    let res = c.request("chat.abort", json!({"sessionKey": "main"})).await;
    assert_eq!(res.payload.unwrap()["wasRunning"], json!(true));
    let events = c.run_events(&run).await;
    let last = events.last().unwrap();
    assert_eq!(
        (last.state, last.error.as_deref()),
        (ChatState::Error, Some("Run cancelled by user"))
    );
    // The model would go on for about 6 s: none of it is shown any more.
    let mut after = Vec::new();
    while let Ok(evt) = tokio::time::timeout(Duration::from_secs(2), c.next_chat()).await {
        after.push(evt);
    }
    assert_eq!(after, Vec::new());
    // The session answers the next message at once.
    llm.set_token_delay_ms(0);
    llm.script("still there?", vec![Step::text("Yes.")]);
    assert_eq!(chat(&mut c, "main", "still there?").await, "Yes.");
}
