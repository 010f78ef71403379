//! `session_logs` end to end: the agent reads its own archived and live
//! sessions through the real Session and Gateway objects and R2, and
//! never another agent's.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{GatewayOptions, Workerd};
use gsv_e2e::ws::Client;
use gsv_protocol::ChatState;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const TOKEN: &str = "test-token";
const MAIN: &str = "agent:main:main";
const SIDE: &str = "agent:main:e2e:side";
const WORK: &str = "agent:work:main";

async fn chat(c: &mut Client, key: &str, text: &str) {
    let run = c.chat_send(key, text).await;
    let events = c.run_events(&run).await;
    assert_eq!(events.last().unwrap().state, ChatState::Final, "{events:?}");
}

async fn call(c: &mut Client, method: &str, params: Value) -> Value {
    let res = c.request(method, params.clone()).await;
    res.payload
        .unwrap_or_else(|| panic!("{method} {params} failed: {:?}", res.error))
}

/// The tool results of the model's last request, by call id (JSON
/// results parsed; error texts kept as strings).
fn tool_results(llm: &FakeLlm) -> BTreeMap<String, Value> {
    let last = llm.requests().pop().expect("a model request");
    last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let text = m["content"].as_str().unwrap();
            let value = serde_json::from_str(text).unwrap_or_else(|_| json!(text));
            (m["tool_call_id"].as_str().unwrap().to_string(), value)
        })
        .collect()
}

/// The timestamps of a session's messages, from `messages` of a
/// `session.preview` or `session.transcript` answer.
fn timestamps(answer: &Value) -> Vec<i64> {
    answer["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["timestamp"].as_i64().unwrap())
        .collect()
}

#[tokio::test]
async fn the_agent_lists_searches_and_reads_its_own_sessions() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;

    // A conversation, archived by a reset; then a new one.
    chat(&mut c, MAIN, "remember the lighthouse").await;
    chat(&mut c, MAIN, "and the harbour").await;
    let reset = call(&mut c, "session.reset", json!({"sessionKey": MAIN})).await;
    assert_eq!(reset["archivedMessages"], json!(4));
    let old_id = reset["oldSessionId"].as_str().unwrap().to_string();
    chat(&mut c, MAIN, "hello again").await;
    // Another live session of the agent, and another agent's session that
    // mentions the search word but must stay out of reach.
    chat(&mut c, SIDE, "a quiet side chat").await;
    chat(&mut c, WORK, "the lighthouse keeper works here").await;
    let id_of = |v: Value| v["sessionId"].as_str().unwrap().to_string();
    let new_id = id_of(call(&mut c, "session.get", json!({"sessionKey": MAIN})).await);
    let side_id = id_of(call(&mut c, "session.get", json!({"sessionKey": SIDE})).await);
    let work_id = id_of(call(&mut c, "session.get", json!({"sessionKey": WORK})).await);

    llm.script(
        "logs-e2e",
        vec![
            Step::tool_call("l1", "session_logs", json!({"action": "list_sessions"})),
            Step::tool_call(
                "l2",
                "session_logs",
                json!({"action": "search", "query": "LIGHTHOUSE"}),
            ),
            Step::tool_call(
                "l3",
                "session_logs",
                json!({"action": "read_session", "sessionId": work_id}),
            ),
            Step::tool_call(
                "l4",
                "session_logs",
                json!({"action": "read_session", "sessionId": side_id, "offset": 1}),
            ),
            Step::tool_call(
                "l5",
                "session_logs",
                json!({"action": "recent", "limit": 1, "previewChars": 20}),
            ),
        ],
    );
    chat(&mut c, MAIN, "logs-e2e: what did we talk about?").await;
    let results = tool_results(&llm);

    // What the results are checked against: the stored messages' times.
    let old = call(
        &mut c,
        "session.transcript",
        json!({"sessionKey": MAIN, "sessionId": old_id}),
    )
    .await;
    let old_ts = timestamps(&old);
    let cur_ts = timestamps(&call(&mut c, "session.preview", json!({"sessionKey": MAIN})).await);
    let side_ts = timestamps(&call(&mut c, "session.preview", json!({"sessionKey": SIDE})).await);
    let side_stats = call(&mut c, "session.stats", json!({"sessionKey": SIDE})).await;

    // l1: this session (hello, echo, the trigger, the l1 call), the side
    // session, and the archive; newest first; nothing of agent `work`.
    let listed = &results["l1"];
    let at = |i: usize, field: &str| listed["sessions"][i][field].as_i64().unwrap();
    let (current_at, archived_at) = (at(0, "lastActiveAt"), at(2, "archivedAt"));
    assert!(current_at >= cur_ts[2], "{listed}");
    assert!(
        old_ts[3] <= archived_at && archived_at <= side_ts[0],
        "{listed}"
    );
    assert_eq!(
        *listed,
        json!({"ok": true, "total": 3, "sessions": [
            {"sessionId": new_id, "sessionKey": MAIN, "status": "current", "messageCount": 4,
             "archives": 0, "lastActiveAt": current_at},
            {"sessionId": side_id, "sessionKey": SIDE, "status": "live", "messageCount": 2,
             "archives": 0, "lastActiveAt": side_stats["updatedAt"]},
            {"sessionId": old_id, "sessionKey": MAIN, "status": "archived", "messageCount": 4,
             "archives": 1, "archivedAt": archived_at}
        ]})
    );

    // l2: the word from before the reset, in any case. This session's own
    // search call is not a hit, and agent `work`'s message is not searched.
    assert_eq!(
        results["l2"],
        json!({"ok": true, "query": "LIGHTHOUSE", "searchedSessions": 3, "notSearched": [],
            "limitReached": false, "hits": [
            {"sessionId": old_id, "index": 0, "role": "user", "timestamp": old_ts[0],
             "preview": "remember the lighthouse"},
            {"sessionId": old_id, "index": 1, "role": "assistant", "timestamp": old_ts[1],
             "preview": "echo: remember the lighthouse"}
        ]})
    );

    // l3: another agent's session id is refused.
    assert_eq!(
        results["l3"],
        json!(format!(
            "Error: {work_id} is not one of your sessions (agent main); list_sessions shows \
             the ids you can read, and other agents' sessions are never readable"
        ))
    );

    // l4: another live session of the agent, read from its Session object.
    assert_eq!(
        results["l4"],
        json!({"ok": true, "sessionId": side_id, "total": 2, "entries": [
            {"index": 1, "role": "assistant", "timestamp": side_ts[1],
             "preview": "echo: a quiet side chat"}
        ]})
    );

    // l5: the last entry of this session, its l5 call, cut to 20 characters.
    assert_eq!(
        results["l5"],
        json!({"ok": true, "sessionId": new_id, "total": 12, "entries": [
            {"index": 11, "role": "assistant", "timestamp": cur_ts[11],
             "preview": "session_logs({\"acti…"}
        ]})
    );
}
