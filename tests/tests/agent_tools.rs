//! The agent's tools about its gateway end to end, the fake LLM calling
//! them in a real session under workerd: `gsv__ConfigGet` (secrets masked,
//! by path too), `gsv__LogsGet` (a real `gsv node`'s log),
//! `gsv__SessionsList` (with previews) and `gsv__SessionSend` (waiting
//! for that run's own answer, not waiting, timing out, refusals).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{FakeLlm, Step, FAKE_API_KEY};
use gsv_e2e::harness::{GatewayOptions, Node, Workerd};
use gsv_e2e::ws::Client;
use gsv_protocol::{ChatEvent, ChatState};
use serde_json::{json, Value};
use std::time::Duration;

const TOKEN: &str = "test-token";
const WORK: &str = "agent:main:work";
const RELAY_NOTE: &str = "[Message from your session agent:main:main (gsv__SessionSend). Your answer goes back to that session, not to any chat app.]\n\n";

async fn setup() -> (FakeLlm, Workerd, Client) {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    (llm, gw, c)
}

fn final_text(events: &[ChatEvent]) -> String {
    let last = events.last().unwrap();
    assert_eq!(last.state, ChatState::Final, "{events:?}");
    last.message.as_ref().unwrap().text()
}

async fn chat(c: &mut Client, key: &str, message: &str) -> String {
    let run = c.chat_send(key, message).await;
    final_text(&c.run_events(&run).await)
}

async fn get(c: &mut Client, method: &str, params: Value) -> Value {
    let res = c.request(method, params).await;
    assert!(res.ok, "{method}: {res:?}");
    res.payload.unwrap()
}

/// The text of the result the model got for tool call `id`.
fn tool_result(llm: &FakeLlm, id: &str) -> String {
    llm.requests()
        .iter()
        .rev()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str().map(String::from))
        .unwrap_or_else(|| panic!("no result for {id}"))
}

fn json_result(llm: &FakeLlm, id: &str) -> Value {
    let text = tool_result(llm, id);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{id}: {e}: {text}"))
}

/// The tool names offered in the model request whose last message has `text`.
fn offered(llm: &FakeLlm, text: &str) -> Vec<String> {
    let req = llm
        .requests()
        .into_iter()
        .find(|r| r.body["messages"].to_string().contains(text))
        .unwrap();
    req.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn config_get_masks_secrets_whole_and_by_path() {
    let (llm, _gw, mut c) = setup().await;
    llm.script(
        "show-config",
        vec![
            Step::tool_calls(vec![
                ("g1", "gsv__ConfigGet", json!({})),
                ("g2", "gsv__ConfigGet", json!({"path": "apiKeys.openai"})),
                ("g3", "gsv__ConfigGet", json!({"path": "apiKeys"})),
                ("g4", "gsv__ConfigGet", json!({"path": "model"})),
            ]),
            Step::text("Here it is."),
        ],
    );
    assert_eq!(chat(&mut c, "main", "show-config").await, "Here it is.");
    // The same as config.get answers a client, masked.
    let whole = get(&mut c, "config.get", json!({})).await;
    assert_eq!(whole["config"]["apiKeys"]["openai"], "***");
    assert_eq!(json_result(&llm, "g1"), whole);
    assert_eq!(
        json_result(&llm, "g2"),
        json!({"path": "apiKeys.openai", "value": "***"})
    );
    assert_eq!(
        json_result(&llm, "g3"),
        json!({"path": "apiKeys", "value": {"openai": "***"}})
    );
    assert_eq!(
        json_result(&llm, "g4"),
        json!({"path": "model", "value": {"provider": "openai", "id": "gpt-test", "thinkingLevel": "off"}})
    );
    // The key never reached the model, in any request.
    for r in llm.requests() {
        assert!(!r.body.to_string().contains(FAKE_API_KEY));
    }
}

#[tokio::test]
async fn logs_get_reads_a_real_nodes_log() {
    let (llm, gw, mut c) = setup().await;
    let node = Node::start(&gw.url(), TOKEN, "laptop");
    c.wait_for_tools(&["laptop__Bash"], Duration::from_secs(20))
        .await;
    llm.script(
        "why-slow",
        vec![
            Step::tool_calls(vec![
                ("l1", "gsv__LogsGet", json!({"lines": 1})),
                ("l2", "gsv__LogsGet", json!({"nodeId": "ghost"})),
                ("l3", "gsv__LogsGet", json!({"lines": 9000})),
            ]),
            Step::text("The node looks fine."),
        ],
    );
    assert_eq!(
        chat(&mut c, "main", "why-slow").await,
        "The node looks fine."
    );
    // The line the node sent is the one it had written last before it
    // logged the request.
    let lines: Vec<String> = node.log().lines().map(String::from).collect();
    let at = lines
        .iter()
        .position(|l| l.contains("\"msg\":\"logs.get\""))
        .unwrap();
    assert_eq!(
        json_result(&llm, "l1"),
        json!({"nodeId": "laptop", "lines": [lines[at - 1]], "count": 1, "truncated": true})
    );
    assert_eq!(
        tool_result(&llm, "l2"),
        "Error: Node ghost is not connected; connected: laptop"
    );
    assert_eq!(
        tool_result(&llm, "l3"),
        "Error: lines must be between 1 and 5000, not 9000"
    );
}

#[tokio::test]
async fn sessions_list_and_session_send() {
    let (llm, _gw, mut c) = setup().await;
    // Another session of the agent, with a conversation in it.
    assert_eq!(chat(&mut c, WORK, "hello work").await, "echo: hello work");
    // It is not the main session: the four tools are not offered there.
    let work_tools = offered(&llm, "hello work");
    for name in [
        "gsv__ConfigGet",
        "gsv__LogsGet",
        "gsv__SessionsList",
        "gsv__SessionSend",
    ] {
        assert!(!work_tools.iter().any(|t| t == name), "{name}");
    }

    // gsv__SessionsList: both sessions, newest first, with previews.
    llm.script(
        "list-them",
        vec![
            Step::tool_call("l1", "gsv__SessionsList", json!({"messageLimit": 2})),
            Step::text("Two sessions."),
        ],
    );
    assert_eq!(chat(&mut c, "main", "list-them").await, "Two sessions.");
    let main_tools = offered(&llm, "list-them");
    assert!(main_tools.iter().any(|t| t == "gsv__SessionSend"));
    let registry = get(&mut c, "sessions.list", json!({})).await;
    let main_msgs = get(&mut c, "session.preview", json!({"sessionKey": "main"})).await;
    let work_msgs = get(&mut c, "session.preview", json!({"sessionKey": WORK})).await;
    let ts = |preview: &Value, i: usize| preview["messages"][i]["timestamp"].clone();
    let entry = |key: &str| {
        registry["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["sessionKey"] == key)
            .unwrap()
            .clone()
    };
    let (main, work) = (entry("agent:main:main"), entry(WORK));
    assert_eq!(
        json_result(&llm, "l1"),
        json!({
            "sessions": [
                {"sessionKey": "agent:main:main", "createdAt": main["createdAt"],
                 "lastActiveAt": main["lastActiveAt"], "thisSession": true, "messageCount": 2,
                 "messages": [
                    {"index": 0, "role": "user", "timestamp": ts(&main_msgs, 0), "preview": "list-them"},
                    {"index": 1, "role": "assistant", "timestamp": ts(&main_msgs, 1),
                     "preview": "gsv__SessionsList({\"messageLimit\":2})"}]},
                {"sessionKey": WORK, "createdAt": work["createdAt"],
                 "lastActiveAt": work["lastActiveAt"], "messageCount": 2,
                 "messages": [
                    {"index": 0, "role": "user", "timestamp": ts(&work_msgs, 0), "preview": "hello work"},
                    {"index": 1, "role": "assistant", "timestamp": ts(&work_msgs, 1), "preview": "echo: hello work"}]}
            ],
            "count": 2, "offset": 0, "hasMore": false
        })
    );

    // gsv__SessionSend, waiting: the answer of the run it started, even
    // though that session already had an answer and this one takes a while.
    llm.script("relay-ping", vec![Step::delay(1500, Step::text("four"))]);
    llm.script(
        "ask-work",
        vec![
            Step::tool_call(
                "s1",
                "gsv__SessionSend",
                json!({"sessionKey": WORK, "message": "relay-ping: what is 2+2?"}),
            ),
            Step::text("Work says four."),
        ],
    );
    assert_eq!(chat(&mut c, "main", "ask-work").await, "Work says four.");
    assert_eq!(
        json_result(&llm, "s1"),
        json!({"status": "ok", "sessionKey": WORK, "reply": "four"})
    );
    let work_msgs = get(
        &mut c,
        "session.preview",
        json!({"sessionKey": WORK, "limit": 2}),
    )
    .await;
    let texts: Vec<Value> = work_msgs["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| json!([m["role"], m["content"]]))
        .collect();
    assert_eq!(
        texts,
        [
            json!(["user", format!("{RELAY_NOTE}relay-ping: what is 2+2?")]),
            json!(["assistant", [{"type": "text", "text": "four"}]])
        ]
    );

    // Not waiting: accepted at once; the run goes on in that session.
    llm.script(
        "tell-work",
        vec![
            Step::tool_call(
                "s2",
                "gsv__SessionSend",
                json!({"sessionKey": WORK, "message": "note this", "waitSeconds": 0}),
            ),
            Step::text("Told work."),
        ],
    );
    // The work session's run may end before this one: its events are kept.
    let run = c.chat_send("main", "tell-work").await;
    let told = c.run_events_keeping_others(&run).await;
    assert_eq!(final_text(&told), "Told work.");
    let accepted = json_result(&llm, "s2");
    let run_id = accepted["runId"].as_str().unwrap().to_string();
    assert_eq!(
        accepted,
        json!({"status": "accepted", "sessionKey": WORK, "runId": run_id, "queued": false})
    );
    // This client watches the work session (it wrote to it): the run's
    // answer comes by.
    assert_eq!(
        final_text(&c.run_events(&run_id).await),
        format!("echo: {RELAY_NOTE}note this")
    );

    // Waiting less than the run takes: a timeout, and the run goes on.
    llm.script(
        "slow-relay",
        vec![Step::delay(4000, Step::text("late answer"))],
    );
    llm.script(
        "ask-slow",
        vec![
            Step::tool_call(
                "s3",
                "gsv__SessionSend",
                json!({"sessionKey": WORK, "message": "slow-relay please", "waitSeconds": 1}),
            ),
            Step::text("Work is slow."),
        ],
    );
    assert_eq!(chat(&mut c, "main", "ask-slow").await, "Work is slow.");
    assert_eq!(
        json_result(&llm, "s3"),
        json!({"status": "timeout", "sessionKey": WORK, "waitedSeconds": 1,
               "note": "The run goes on; its answer will be in that session's history (gsv__SessionsList with messageLimit, or session_logs)."})
    );
    loop {
        let evt = c.next_chat().await;
        if evt.session_key == WORK && evt.state == ChatState::Final {
            assert_eq!(evt.message.unwrap().text(), "late answer");
            break;
        }
    }

    // Refused: itself, another agent's session, a wait too long.
    llm.script(
        "bad-sends",
        vec![
            Step::tool_calls(vec![
                (
                    "s4",
                    "gsv__SessionSend",
                    json!({"sessionKey": "main", "message": "hi"}),
                ),
                (
                    "s5",
                    "gsv__SessionSend",
                    json!({"sessionKey": "agent:ops:main", "message": "hi"}),
                ),
                (
                    "s6",
                    "gsv__SessionSend",
                    json!({"sessionKey": WORK, "message": "hi", "waitSeconds": 500}),
                ),
            ]),
            Step::text("None went."),
        ],
    );
    assert_eq!(chat(&mut c, "main", "bad-sends").await, "None went.");
    assert_eq!(
        [
            tool_result(&llm, "s4"),
            tool_result(&llm, "s5"),
            tool_result(&llm, "s6")
        ],
        [
            "Error: agent:main:main is this session: answer here instead of sending to yourself",
            "Error: agent:ops:main is not one of your sessions (agent main): pick a key from gsv__SessionsList",
            "Error: waitSeconds must be between 0 and 120, not 500",
        ]
    );
}
