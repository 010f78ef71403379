//! End to end against the real gateway under workerd, with the fake LLM
//! (OpenAI streaming) on loopback. One gateway is shared by these tests;
//! each uses its own session key.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{FakeLlm, Step, FAKE_API_KEY};
use gsv_e2e::harness::{run_gsv, GatewayOptions, Workerd};
use gsv_e2e::ws::{connect_params, streamed_text, Client, Closed};
use gsv_protocol::{ChatState, ContentBlock, Frame, Message, UserContent};
use serde_json::{json, Value};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const TOKEN: &str = "test-token";

struct Shared {
    gw: Workerd,
    llm: FakeLlm,
}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| {
        let llm = FakeLlm::start_blocking();
        let gw = Workerd::start(GatewayOptions::default());
        // First use may happen inside a test's runtime: configure from a thread.
        let (url, base_url) = (gw.url(), llm.base_url_openai());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let mut c = Client::connect(&url, Some(TOKEN)).await;
                c.config_set("model", json!({"provider": "openai", "id": "gpt-test"}))
                    .await;
                c.config_set("apiKeys.openai", json!(FAKE_API_KEY)).await;
                c.config_set("providers.openai.baseUrl", json!(base_url))
                    .await;
                c.close().await;
            })
        })
        .join()
        .unwrap();
        Shared { gw, llm }
    })
}

async fn client() -> Client {
    Client::connect(&shared().gw.url(), Some(TOKEN)).await
}

#[tokio::test]
async fn handshake_advertises_exactly_what_is_implemented() {
    let mut c = Client::open(&shared().gw.url()).await;
    let res = c
        .request("connect", connect_params("hs", Some(TOKEN)))
        .await;
    let mut payload = res.payload.clone().unwrap();
    let conn_id = payload["server"]["connectionId"].take();
    assert!(conn_id.as_str().is_some_and(|s| s.len() == 36), "{conn_id}");
    assert_eq!(
        payload,
        json!({"type": "hello-ok", "protocol": 1,
            "server": {"version": "0.1.0", "connectionId": null},
            "features": {
                "methods": ["connect", "chat.send", "config.get", "config.set", "model.check", "session.get", "session.preview",
                    "sessions.list", "session.stats", "usage.daily", "session.history", "session.patch",
                    "session.compact", "session.reset", "session.transcript", "skills.status", "skills.update", "workspace.list", "workspace.read", "workspace.write", "workspace.delete", "workspace.refresh",
                    "chat.abort", "tools.list", "tool.invoke", "tool.result", "tool.request", "logs.get", "logs.result", "node.exec.event", "node.probe.result", "transfer.status",
                    "channels.list", "channel.inbound", "channel.start", "channel.stop", "channel.status", "channel.login", "channel.logout",
                    "pair.list", "pair.approve", "pair.reject",
                    "cron.status", "cron.list", "cron.add", "cron.update", "cron.remove", "cron.run", "cron.runs",
                    "heartbeat.status", "heartbeat.start", "heartbeat.trigger",
                    "memory.search", "memory.get", "memory.put", "memory.delete", "memory.status", "memory.repair",
                    "trust.explain", "audit.list", "approvals.list", "approvals.decide"],
                "events": ["chat", "tool.invoke", "logs.get", "node.probe", "transfer.send", "transfer.receive", "transfer.end", "transfer.cancel",
                    "channel.outbound", "channel.typing"]}})
    );
    // A second connect on the same socket is refused, the socket stays usable.
    let again = c
        .request("connect", connect_params("hs", Some(TOKEN)))
        .await;
    assert_eq!(again.error.unwrap().message, "Already connected");
    assert!(
        c.request("config.get", json!({"path": "model.id"}))
            .await
            .ok
    );
}

#[tokio::test]
async fn protocol_negotiation_refuses_versions_it_does_not_speak() {
    let mut c = Client::open(&shared().gw.url()).await;
    let mut p = connect_params("v2", Some(TOKEN));
    p["minProtocol"] = json!(2);
    p["maxProtocol"] = json!(3);
    let err = c.request("connect", p).await.error.unwrap();
    assert_eq!(err.code, 102);
    assert_eq!(
        err.message,
        "Unsupported protocol: this gateway speaks version 1, the client offers 2–3"
    );
    // A client offering 1..3 is accepted at version 1.
    let mut p = connect_params("v1-3", Some(TOKEN));
    p["maxProtocol"] = json!(3);
    assert_eq!(
        c.request("connect", p).await.payload.unwrap()["protocol"],
        json!(1)
    );
}

#[tokio::test]
async fn requests_before_connect_are_refused_with_101() {
    let mut c = Client::open(&shared().gw.url()).await;
    let res = c.request("config.get", json!({})).await;
    assert_eq!(
        serde_json::to_value(&res.error).unwrap(),
        json!({"code": 101, "message": "Not connected: send a connect request first"})
    );
}

#[tokio::test]
async fn wrong_token_gets_401_then_close_4001() {
    let mut c = Client::open(&shared().gw.url()).await;
    let res = c
        .request("connect", connect_params("intruder", Some("wrong")))
        .await;
    assert_eq!(
        serde_json::to_value(&res.error).unwrap(),
        json!({"code": 401, "message": "Unauthorized: the token is missing or wrong"})
    );
    assert_eq!(
        c.next_frame().await,
        Err(Closed {
            code: 4001,
            reason: "Unauthorized".into()
        })
    );
    let mut c = Client::open(&shared().gw.url()).await;
    let res = c.request("connect", connect_params("no-token", None)).await;
    assert_eq!(res.error.unwrap().code, 401);
}

#[tokio::test]
async fn malformed_and_oversized_frames_get_error_responses() {
    let mut c = Client::open(&shared().gw.url()).await;
    let mut errors = Vec::new();
    let big = json!({"type": "req", "id": "big", "method": "chat.send",
        "params": {"sessionKey": "x", "message": "a".repeat(1024 * 1024)}})
    .to_string();
    let inputs = [
        "this is not json".to_string(),
        r#"{"type":"rpc","id":"t1"}"#.to_string(),
        r#"{"type":"req","id":"t2"}"#.to_string(),
        r#"{"type":"req","id":"t3","method":"no.such.method"}"#.to_string(),
        big,
    ];
    for input in inputs {
        c.send_text(input).await;
        match c.next_frame().await.unwrap() {
            Frame::Res(res) => errors.push((res.id, res.error.unwrap().code)),
            other => panic!("expected a response, got {other:?}"),
        }
    }
    c.send_binary(vec![0, 1, 2, 3]).await;
    match c.next_frame().await.unwrap() {
        Frame::Res(res) => errors.push((res.id, res.error.unwrap().code)),
        other => panic!("expected a response, got {other:?}"),
    }
    assert_eq!(
        errors,
        vec![
            (String::new(), 400),
            ("t1".into(), 400),
            ("t2".into(), 400),
            ("t3".into(), 101), // not connected yet: refused before routing
            ("big".into(), 413),
            (String::new(), 400),
        ]
    );
    // Nothing crashed: the same socket completes a handshake and works.
    assert!(
        c.request("connect", connect_params("after-garbage", Some(TOKEN)))
            .await
            .ok
    );
    let res = c.request("no.such.method", json!({})).await;
    assert_eq!(res.error.unwrap().message, "Unknown method: no.such.method");
}

#[tokio::test]
async fn methods_are_checked_against_the_connection_mode() {
    let mut node = Client::open(&shared().gw.url()).await;
    let mut p = connect_params("node-x", Some(TOKEN));
    p["client"]["mode"] = json!("node");
    p["tools"] = json!([{"name": "Bash", "description": "run", "inputSchema": {"type": "object"}}]);
    p["nodeRuntime"] = json!({"hostRole": "specialized", "hostCapabilities": ["shell.exec"],
        "toolCapabilities": {"Bash": ["shell.exec"]}});
    assert!(node.request("connect", p).await.ok);
    let res = node
        .request("config.set", json!({"path": "model.id", "value": "evil"}))
        .await;
    assert_eq!(
        serde_json::to_value(&res.error).unwrap(),
        json!({"code": 403, "message": "Method config.set is not allowed for node connections"})
    );
    let mut bad_node = Client::open(&shared().gw.url()).await;
    let mut p = connect_params("node-y", Some(TOKEN));
    p["client"]["mode"] = json!("node");
    let res = bad_node.request("connect", p).await;
    assert_eq!(res.error.unwrap().code, 103);
}

#[tokio::test]
async fn config_validates_and_never_echoes_secrets() {
    let mut c = client().await;
    let res = c
        .request(
            "config.set",
            json!({"path": "timeouts.llmMs", "value": "soon"}),
        )
        .await;
    assert_eq!(
        serde_json::to_value(&res.error).unwrap(),
        json!({"code": 400, "message": "timeouts.llmMs must be an integer from 1000 to 3600000"})
    );
    c.config_set("apiKeys.google", json!("AIza-secret")).await;
    let by_path = c
        .request("config.get", json!({"path": "apiKeys.google"}))
        .await
        .payload
        .unwrap();
    assert_eq!(by_path, json!({"path": "apiKeys.google", "value": "***"}));
    let whole = c.request("config.get", json!({})).await.payload.unwrap();
    assert_eq!(whole["config"]["apiKeys"]["google"], json!("***"));
    assert_eq!(whole["config"]["apiKeys"]["openai"], json!("***"));
    assert!(!whole.to_string().contains("AIza-secret"));
    assert!(!whole.to_string().contains(FAKE_API_KEY));
    assert_eq!(whole["config"]["model"]["provider"], json!("openai"));
}

#[tokio::test]
async fn chat_streams_deltas_then_a_final_and_keeps_history() {
    let mut c = client().await;
    let key = "agent:main:e2e:stream";
    let run_id = c.chat_send(key, "tell me something").await;
    let events = c.run_events(&run_id).await;
    let last = events.last().unwrap();
    assert_eq!(last.state, ChatState::Final, "{events:?}");
    let answer = last.message.as_ref().unwrap();
    assert_eq!(answer.text(), "echo: tell me something");
    assert!(
        events.iter().any(|e| e.state == ChatState::Delta),
        "no delta before the final: {events:?}"
    );
    assert_eq!(streamed_text(&events), "echo: tell me something");
    assert!(last.usage.as_ref().unwrap().input > 0);

    let preview = c
        .request("session.preview", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap();
    let messages: Vec<Message> = serde_json::from_value(preview["messages"].clone()).unwrap();
    assert_eq!(preview["messageCount"], json!(2));
    match &messages[..] {
        [Message::User(u), Message::Assistant(a)] => {
            assert_eq!(u.content, UserContent::Text("tell me something".into()));
            assert_eq!(a, answer);
        }
        other => panic!("unexpected history {other:?}"),
    }
    let info = c
        .request("session.get", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap();
    assert_eq!(info["sessionKey"], json!(key));
    assert_eq!(info["messageCount"], json!(2));
    assert_eq!(info["sessionId"], preview["sessionId"]);
    assert!(info["tokens"]["total"].as_u64().unwrap() > 0);
    // The model received the system prompt and the user's words.
    let sent = shared()
        .llm
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("tell me something"))
        .unwrap();
    assert_eq!(sent.body["messages"][0]["role"], json!("system"));
    assert_eq!(sent.body["stream"], json!(true));
}

/// Sends each `(text, run id)` to session `key` as a `chat.send` frame
/// without waiting, then reads the answers in the order sent: their payloads.
async fn send_at_once(c: &mut Client, key: &str, messages: &[(String, String)]) -> Vec<Value> {
    for (text, run_id) in messages {
        let params = json!({"sessionKey": key, "message": text, "runId": run_id});
        let frame = Frame::request(format!("send-{run_id}"), "chat.send", Some(params));
        c.send_text(frame.to_json()).await;
    }
    let mut answers = Vec::new();
    for (_, run_id) in messages {
        let res = c.response_to(&format!("send-{run_id}")).await;
        answers.push(res.payload.unwrap());
    }
    answers
}

/// The next `n` runs of session `key` to end, as (run id, answer text);
/// none of the runs seen meanwhile fails.
async fn finals(c: &mut Client, key: &str, n: usize) -> Vec<(String, String)> {
    let mut finals = Vec::new();
    while finals.len() < n {
        let evt = c.next_chat().await;
        assert_ne!(evt.state, ChatState::Error, "{evt:?}");
        if evt.session_key == key && evt.state == ChatState::Final {
            finals.push((evt.run_id.unwrap(), evt.message.unwrap().text()));
        }
    }
    finals
}

#[tokio::test]
async fn three_messages_sent_at_once_are_answered_in_order() {
    let mut c = client().await;
    let key = "agent:main:e2e:queue";
    let sent: Vec<_> = (1..=3)
        .map(|i| (format!("queued message {i}"), format!("run-{i}")))
        .collect();
    let answers = send_at_once(&mut c, key, &sent).await;
    assert_eq!(answers[0]["queued"], json!(false));
    assert_eq!(
        finals(&mut c, key, 3).await,
        (1..=3)
            .map(|i| (format!("run-{i}"), format!("echo: queued message {i}")))
            .collect::<Vec<_>>()
    );
    let roles = c.history_roles(key, 20).await;
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ]
    );
}

/// After a first turn the session keeps its event link open and the
/// gateway hands it messages on it: a burst sent then is taken in the
/// order sent, each answered with its place in the queue, and run in turn.
#[tokio::test]
async fn messages_sent_at_once_to_a_busy_link_keep_their_order() {
    let mut c = client().await;
    let key = "agent:main:e2e:link-queue";
    let run = c.chat_send(key, "open the link").await;
    let events = c.run_events(&run).await;
    assert_eq!(events.last().unwrap().state, ChatState::Final, "{events:?}");
    let sent: Vec<_> = (1..=3)
        .map(|i| (format!("linked message {i}"), format!("link-run-{i}")))
        .collect();
    let started: Vec<_> = send_at_once(&mut c, key, &sent)
        .await
        .into_iter()
        .map(|a| {
            (
                a["runId"].clone(),
                a["queued"].clone(),
                a["queuePosition"].clone(),
            )
        })
        .collect();
    assert_eq!(
        started,
        [
            (json!("link-run-1"), json!(false), Value::Null),
            (json!("link-run-2"), json!(true), json!(1)),
            (json!("link-run-3"), json!(true), json!(2)),
        ]
    );
    assert_eq!(
        finals(&mut c, key, 3).await,
        (1..=3)
            .map(|i| (format!("link-run-{i}"), format!("echo: linked message {i}")))
            .collect::<Vec<_>>()
    );
    assert_eq!(c.history_roles(key, 20).await.len(), 8);
}

/// An idle session closes its event link by handshake (its watchdog ticks
/// every 10 s; the link goes once 30 s passed without an event): the next
/// message, sent after that, goes as a request and runs like any other.
#[tokio::test]
async fn a_session_whose_link_closed_when_idle_answers_the_next_message() {
    let mut c = client().await;
    let key = "agent:main:e2e:link-idle";
    let run = c.chat_send(key, "before the quiet").await;
    let events = c.run_events(&run).await;
    assert_eq!(events.last().unwrap().state, ChatState::Final, "{events:?}");
    tokio::time::sleep(Duration::from_secs(45)).await;
    let run = c.chat_send(key, "after the quiet").await;
    let events = c.run_events(&run).await;
    let last = events.last().unwrap();
    assert_eq!(last.state, ChatState::Final, "{events:?}");
    assert_eq!(
        last.message.as_ref().unwrap().text(),
        "echo: after the quiet"
    );
    assert_eq!(
        c.history_roles(key, 20).await,
        ["user", "assistant", "user", "assistant"]
    );
}

#[tokio::test]
async fn rate_limited_call_is_retried_after_retry_after() {
    let s = shared();
    s.llm.script("rl-e2e", vec![Step::rate_limited(1)]);
    let mut c = client().await;
    let started = Instant::now();
    let run_id = c
        .chat_send("agent:main:e2e:ratelimit", "please rl-e2e")
        .await;
    let events = c.run_events(&run_id).await;
    assert_eq!(
        events.last().unwrap().message.as_ref().unwrap().text(),
        "echo: please rl-e2e"
    );
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was not honoured"
    );
    let attempts = s
        .llm
        .requests()
        .iter()
        .filter(|r| r.body.to_string().contains("please rl-e2e"))
        .count();
    assert_eq!(attempts, 2);
}

#[tokio::test]
async fn unknown_tool_calls_get_error_results_and_the_run_continues() {
    let s = shared();
    s.llm.script(
        "tool-e2e",
        vec![Step::tool_call(
            "call_1",
            "ghost__Bash",
            json!({"command": "ls"}),
        )],
    );
    let mut c = client().await;
    let key = "agent:main:e2e:tools";
    let run_id = c.chat_send(key, "use a tool-e2e").await;
    let events = c.run_events(&run_id).await;
    assert_eq!(events.last().unwrap().state, ChatState::Final);
    let preview = c
        .request("session.preview", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap();
    let messages: Vec<Message> = serde_json::from_value(preview["messages"].clone()).unwrap();
    assert_eq!(messages.len(), 4, "{messages:?}");
    match &messages[2] {
        Message::ToolResult(r) => {
            assert_eq!(r.tool_call_id, "call_1");
            assert!(r.is_error);
            assert_eq!(
                r.content,
                vec![ContentBlock::Text {
                    text: "Error: Node ghost is not connected".into()
                }]
            );
        }
        other => panic!("expected a tool result, got {other:?}"),
    }
}

#[test]
fn gsv_chat_one_shot_prints_the_streamed_answer() {
    let s = shared();
    let out = run_gsv(
        &s.gw.url(),
        TOKEN,
        &["chat", "hello from the cli", "-s", "agent:main:e2e:cli"],
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "echo: hello from the cli\n"
    );
    assert!(out.status.success());
}

#[test]
fn gsv_cli_reports_a_wrong_token_plainly() {
    let s = shared();
    let out = run_gsv(&s.gw.url(), "not-the-token", &["config", "get", "model"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: The gateway rejected the token. Set it with `gsv local-config set gateway.token <token>` or --token / GSV_TOKEN.\n"
    );
}

#[test]
fn gsv_config_round_trip_through_the_cli() {
    let s = shared();
    let gsv = |args: &[&str]| run_gsv(&s.gw.url(), TOKEN, args);
    assert!(gsv(&["config", "set", "compaction.reserveTokens", "12345"])
        .status
        .success());
    let out = gsv(&["config", "get", "compaction.reserveTokens"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "12345");
    let value: Value = serde_json::from_slice(&gsv(&["config", "get", "apiKeys"]).stdout).unwrap();
    assert_eq!(value["openai"], json!("***"));
}

/// `sessions.list` (up to 500) and its keys, most recently active first.
async fn registry(c: &mut Client) -> (Value, Vec<String>) {
    let list = c
        .request("sessions.list", json!({"limit": 500}))
        .await
        .payload
        .unwrap();
    let keys = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["sessionKey"].as_str().unwrap().to_string())
        .collect();
    (list, keys)
}

fn position(keys: &[String], key: &str) -> usize {
    keys.iter().position(|k| k == key).unwrap()
}

#[tokio::test]
async fn sessions_are_listed_patched_and_their_settings_apply() {
    let s = shared();
    let mut c = client().await;
    let (a, b) = ("agent:main:e2e:registry-a", "agent:main:e2e:registry-b");
    for key in [a, b] {
        let run = c.chat_send(key, &format!("hello {key}")).await;
        c.run_events(&run).await;
    }
    let (list, keys) = registry(&mut c).await;
    let (ia, ib) = (position(&keys, a), position(&keys, b));
    assert!(ib < ia, "most recently active first: {keys:?}");
    assert!(list["count"].as_u64().unwrap() >= 2);
    // `a` again, within a second of its last write: that activity is kept
    // back from the registry's table, and written before the next listing.
    let run = c.chat_send(a, "hello again").await;
    c.run_events(&run).await;
    let (_, keys) = registry(&mut c).await;
    let (ia, ib) = (position(&keys, a), position(&keys, b));
    assert!(ia < ib, "the latest message counts: {keys:?}");

    let patch = json!({"sessionKey": a, "label": "Kitchen",
        "settings": {"model": {"provider": "openai", "id": "gpt-other"}, "thinkingLevel": "low"},
        "resetPolicy": {"mode": "idle", "idleMinutes": 30}});
    assert_eq!(
        c.request("session.patch", patch).await.payload.unwrap(),
        json!({"ok": true})
    );
    let info = c
        .request("session.get", json!({"sessionKey": a}))
        .await
        .payload
        .unwrap();
    assert_eq!(
        (
            info["label"].clone(),
            info["settings"].clone(),
            info["resetPolicy"].clone()
        ),
        (
            json!("Kitchen"),
            json!({"model": {"provider": "openai", "id": "gpt-other"}, "thinkingLevel": "low"}),
            json!({"mode": "idle", "idleMinutes": 30})
        )
    );
    let (list, _) = registry(&mut c).await;
    let entry = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["sessionKey"] == json!(a))
        .unwrap()
        .clone();
    assert_eq!(entry["label"], json!("Kitchen"));

    let stats = c
        .request("session.stats", json!({"sessionKey": a}))
        .await
        .payload
        .unwrap();
    assert_eq!(
        (
            stats["messageCount"].clone(),
            stats["isProcessing"].clone(),
            stats["queueSize"].clone(),
            stats["sessionId"].clone()
        ),
        (json!(4), json!(false), json!(0), info["sessionId"].clone())
    );
    assert!(stats["tokens"]["total"].as_u64().unwrap() > 0);
    let history = c
        .request("session.history", json!({"sessionKey": a}))
        .await
        .payload
        .unwrap();
    assert_eq!(
        history,
        json!({"sessionKey": a, "currentSessionId": info["sessionId"], "previousSessionIds": []})
    );

    // The session's own model and thinking level reach the provider.
    let run = c.chat_send(a, "which model now?").await;
    c.run_events(&run).await;
    let req = s
        .llm
        .requests()
        .into_iter()
        .rfind(|r| r.body.to_string().contains("which model now?"))
        .unwrap();
    assert_eq!(
        (
            req.body["model"].clone(),
            req.body["reasoning_effort"].clone()
        ),
        (json!("gpt-other"), json!("low"))
    );

    let bad = c
        .request(
            "session.patch",
            json!({"sessionKey": a, "settings": {"thinkingLevel": "lots"}}),
        )
        .await;
    assert_eq!(
        serde_json::to_value(bad.error).unwrap(),
        json!({"code": 400, "message": "settings.thinkingLevel \"lots\" is not one of off, minimal, low, medium, high, xhigh"})
    );
}

#[test]
fn gsv_session_set_and_get_through_the_gateway() {
    let s = shared();
    let gsv = |args: &[&str]| run_gsv(&s.gw.url(), TOKEN, args);
    let key = "agent:main:e2e:cli-session";
    let out = gsv(&["session", "set", key, "resetPolicy.idleMinutes", "45"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = gsv(&["session", "get", key, "--json"]);
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        info["resetPolicy"],
        json!({"mode": "idle", "idleMinutes": 45})
    );
    let out = gsv(&["session", "set", key, "thinkingLevel", "lots"]);
    assert_eq!(out.status.code(), Some(1));
}

#[tokio::test]
async fn compaction_archives_removed_messages_and_never_splits_a_tool_call() {
    let s = shared();
    s.llm.script(
        "compact-tool-e2e",
        vec![Step::tool_call(
            "call_c",
            "ghost__Bash",
            json!({"command": "ls"}),
        )],
    );
    let mut c = client().await;
    let key = "agent:main:e2e:compact";
    for text in ["first words", "compact-tool-e2e please", "last words"] {
        let run = c.chat_send(key, text).await;
        c.run_events(&run).await;
    }
    // user, assistant | user, assistant(tool call), tool result, assistant | user, assistant
    let before: Vec<Value> = c
        .request("session.preview", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap()["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(before.len(), 8);

    // Keeping 4 would leave the tool call behind its result: 5 are kept.
    let res = c
        .request(
            "session.compact",
            json!({"sessionKey": key, "keepMessages": 4}),
        )
        .await
        .payload
        .unwrap();
    let info = c
        .request("session.get", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap();
    let archived_to = res["archivedTo"].as_str().unwrap().to_string();
    assert_eq!(
        (
            res["ok"].clone(),
            res["trimmedMessages"].clone(),
            res["keptMessages"].clone()
        ),
        (json!(true), json!(3), json!(5))
    );
    let prefix = format!(
        "agents/main/sessions/{}-part",
        info["sessionId"].as_str().unwrap()
    );
    assert!(
        archived_to.starts_with(&prefix) && archived_to.ends_with(".jsonl.gz"),
        "{archived_to}"
    );
    let after = c
        .request("session.preview", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap();
    assert_eq!(after["messages"].as_array().unwrap()[..], before[3..]);

    // The archive holds exactly the removed messages, readable back in pages.
    let page1 = c
        .request("session.transcript", json!({"sessionKey": key, "limit": 2}))
        .await
        .payload
        .unwrap();
    assert_eq!(page1["archives"], json!([archived_to]));
    assert_eq!(page1["messages"].as_array().unwrap()[..], before[..2]);
    assert_eq!(page1["nextOffset"], json!(2));
    let page2 = c
        .request(
            "session.transcript",
            json!({"sessionKey": key, "offset": 2}),
        )
        .await
        .payload
        .unwrap();
    assert_eq!(page2["messages"].as_array().unwrap()[..], before[2..3]);
    assert_eq!(page2.get("nextOffset"), None);

    // The conversation goes on with the kept history.
    let run = c.chat_send(key, "still with me?").await;
    assert_eq!(
        c.run_events(&run).await.last().unwrap().state,
        ChatState::Final
    );
    let other = c
        .request(
            "session.transcript",
            json!({"sessionKey": key, "sessionId": "not-mine"}),
        )
        .await;
    assert_eq!(other.error.unwrap().code, 404);
}

#[tokio::test]
async fn reset_archives_everything_then_starts_a_new_session() {
    let mut c = client().await;
    let key = "agent:main:e2e:reset";
    for text in ["remember the lighthouse", "and the harbour"] {
        let run = c.chat_send(key, text).await;
        c.run_events(&run).await;
    }
    let before = c
        .request("session.preview", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap();
    let old_id = before["sessionId"].as_str().unwrap().to_string();
    let tokens = c
        .request("session.get", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap()["tokens"]
        .clone();

    let res = c
        .request("session.reset", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap();
    let new_id = res["newSessionId"].as_str().unwrap().to_string();
    assert_ne!(new_id, old_id);
    assert_eq!(
        res,
        json!({"ok": true, "sessionKey": key, "oldSessionId": old_id, "newSessionId": new_id,
            "archivedMessages": 4, "archivedTo": format!("agents/main/sessions/{old_id}.jsonl.gz"),
            "tokensCleared": tokens, "mediaDeleted": 0})
    );
    let info = c
        .request("session.get", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap();
    assert_eq!(
        (
            info["sessionId"].clone(),
            info["messageCount"].clone(),
            info["tokens"].clone(),
            info["previousSessionIds"].clone()
        ),
        (
            json!(new_id),
            json!(0),
            json!({"input": 0, "output": 0, "total": 0, "cacheRead": 0, "cacheWrite": 0}),
            json!([old_id])
        )
    );
    assert!(info["lastResetAt"].as_i64().is_some());
    // The archive holds exactly the old conversation.
    let old = c
        .request(
            "session.transcript",
            json!({"sessionKey": key, "sessionId": old_id}),
        )
        .await
        .payload
        .unwrap();
    assert_eq!(old["messages"], before["messages"]);
    // The new session starts clean and works.
    let run = c.chat_send(key, "hello again").await;
    assert_eq!(
        c.run_events(&run).await.last().unwrap().state,
        ChatState::Final
    );
    let after = c
        .request("session.preview", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap();
    assert_eq!(after["messageCount"], json!(2));
}

#[tokio::test]
async fn a_client_gets_its_runs_events_under_the_key_it_sent() {
    // GSV v1's CLI sends `agent:main:cli:dm:main` and keeps only the events
    // carrying that key; the session is `agent:main:main` (dmScope main).
    let mut v1 = client().await;
    let mut other = client().await;
    let res = other
        .request("session.get", json!({"sessionKey": "agent:main:main"}))
        .await;
    assert!(res.ok, "{res:?}");
    let run = v1.chat_send("agent:main:cli:dm:main", "hi from v1").await;
    let events = v1.run_events(&run).await;
    assert!(events
        .iter()
        .all(|e| e.session_key == "agent:main:cli:dm:main"));
    let theirs = other.run_events(&run).await;
    assert!(theirs.iter().all(|e| e.session_key == "agent:main:main"));
    assert_eq!(
        events.last().unwrap().message,
        theirs.last().unwrap().message
    );
}
