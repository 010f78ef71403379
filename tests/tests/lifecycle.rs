//! Gateway lifecycle: state survives a workerd restart, and a gateway with
//! no token configured refuses connections with instructions.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{GatewayOptions, Workerd};
use gsv_e2e::poll::{self, ms, secs};
use gsv_e2e::ws::{connect_params, Client, Closed};
use gsv_protocol::ChatState;
use serde_json::json;

#[tokio::test]
async fn history_and_config_survive_a_workerd_restart() {
    let llm = FakeLlm::start().await;
    let mut gw = Workerd::start(GatewayOptions::default());
    let key = "agent:main:restart";
    let session_id = {
        let mut c = Client::connect(&gw.url(), Some("test-token")).await;
        c.use_fake_openai(&llm).await;
        let run = c.chat_send(key, "remember me").await;
        assert_eq!(
            c.run_events(&run).await.last().unwrap().state,
            ChatState::Final
        );
        let info = c
            .request("session.get", json!({"sessionKey": key}))
            .await
            .payload
            .unwrap();
        info["sessionId"].clone()
    };

    gw.restart();

    let mut c = Client::connect(&gw.url(), Some("test-token")).await;
    let preview = c
        .request("session.preview", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap();
    assert_eq!(
        preview["sessionId"], session_id,
        "the session id is stable across restarts"
    );
    let texts: Vec<String> = preview["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| match &m["content"] {
            serde_json::Value::String(s) => s.clone(),
            blocks => blocks[0]["text"].as_str().unwrap().to_string(),
        })
        .collect();
    assert_eq!(texts, ["remember me", "echo: remember me"]);
    // Config survived too: the next turn reaches the same fake model.
    let run = c.chat_send(key, "still there?").await;
    let events = c.run_events(&run).await;
    assert_eq!(
        events.last().unwrap().message.as_ref().unwrap().text(),
        "echo: still there?"
    );
    let sent = llm.requests().last().unwrap().body.clone();
    assert_eq!(
        sent["messages"].as_array().unwrap().len(),
        4,
        "system + history + new message: {sent}"
    );
}

#[tokio::test]
async fn a_gateway_without_a_token_refuses_connections_and_says_how_to_set_one() {
    let gw = Workerd::start(GatewayOptions {
        token: None,
        ..Default::default()
    });
    let mut c = Client::open(&gw.url()).await;
    let res = c
        .request("connect", connect_params("anyone", Some("guess")))
        .await;
    let err = res.error.unwrap();
    assert_eq!(err.code, 503);
    assert!(
        err.message.contains("wrangler secret put GSV_AUTH_TOKEN"),
        "{}",
        err.message
    );
    assert!(err.message.contains(".dev.vars"), "{}", err.message);
    assert_eq!(
        c.next_frame().await,
        Err(Closed {
            code: 4003,
            reason: "No auth token configured on the gateway".into()
        })
    );
    // The CLI passes the gateway's instructions on instead of asking for
    // another token.
    let out = gsv_e2e::harness::run_gsv(&gw.url(), "anything", &["chat", "hello"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("wrangler secret put GSV_AUTH_TOKEN"),
        "{stderr}"
    );
    assert!(!stderr.contains("rejected the token"), "{stderr}");
}

#[tokio::test]
async fn a_run_interrupted_by_a_restart_is_resumed_by_the_watchdog() {
    let llm = FakeLlm::start().await;
    // The first call never finishes: workerd is killed while it waits.
    llm.script("interrupt-e2e", vec![gsv_e2e::fake_llm::Step::Hang]);
    let mut gw = Workerd::start(GatewayOptions::default());
    let key = "agent:main:interrupted";
    let run_id = {
        let mut c = Client::connect(&gw.url(), Some("test-token")).await;
        c.use_fake_openai(&llm).await;
        let run_id = c.chat_send(key, "interrupt-e2e: are you there?").await;
        poll::until(secs(20), ms(50), async || {
            llm.requests()
                .iter()
                .any(|r| r.body.to_string().contains("interrupt-e2e"))
                .then_some(())
                .ok_or("the model was never called")
        })
        .await;
        run_id
    };

    gw.restart();

    // Nobody sends anything: the watchdog alone must finish the run.
    let mut c = finished_by_the_watchdog(
        &gw,
        (key, &run_id),
        (1, "the user message was stored before the model call"),
        "echo: interrupt-e2e: are you there?",
    )
    .await;
    let preview = c
        .request("session.preview", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap();
    assert_eq!(preview["messageCount"], json!(2));
}

#[tokio::test]
async fn a_session_evicted_between_turns_answers_with_its_whole_history() {
    let llm = FakeLlm::start().await;
    let mut gw = Workerd::start(GatewayOptions::default());
    let key = "agent:main:evicted";
    {
        let mut c = Client::connect(&gw.url(), Some("test-token")).await;
        c.use_fake_openai(&llm).await;
        for text in ["one", "two", "three"] {
            let run = c.chat_send(key, text).await;
            let events = c.run_events(&run).await;
            assert_eq!(events.last().unwrap().state, ChatState::Final);
        }
    }
    // Every object and the gateway lose what they kept in memory (the
    // history, the config and nodes by revision, the prompt).
    gw.restart();
    let mut c = Client::connect(&gw.url(), Some("test-token")).await;
    let run = c.chat_send(key, "four").await;
    let events = c.run_events(&run).await;
    assert_eq!(
        events.last().unwrap().message.as_ref().unwrap().text(),
        "echo: four"
    );
    let sent = llm.requests().last().unwrap().body.clone();
    let texts: Vec<(String, String)> = sent["messages"].as_array().unwrap()[1..]
        .iter()
        .map(|m| {
            let text = match &m["content"] {
                serde_json::Value::String(s) => s.clone(),
                blocks => blocks[0]["text"].as_str().unwrap_or_default().to_string(),
            };
            (m["role"].as_str().unwrap().to_string(), text)
        })
        .collect();
    let expected: Vec<(String, String)> = ["one", "two", "three"]
        .iter()
        .flat_map(|t| [("user", t.to_string()), ("assistant", format!("echo: {t}"))])
        .chain([("user", "four".to_string())])
        .map(|(r, t)| (r.to_string(), t))
        .collect();
    assert_eq!(texts, expected);
}

#[tokio::test]
async fn a_run_cut_off_in_a_tool_the_session_runs_itself_is_resumed_by_the_watchdog() {
    let llm = FakeLlm::start().await;
    let mut gw = Workerd::start(GatewayOptions::default());
    let key = "agent:main:cut-in-tool";
    let search = (
        "call_search",
        "gsv__MemorySearch",
        json!({"query": "coffee"}),
    );
    let run_id = {
        let mut c = Client::connect(&gw.url(), Some("test-token")).await;
        c.use_fake_openai(&llm).await;
        c.config_set(
            "memory.embeddings",
            json!({"url": format!("{}/embeddings", llm.base_url_openai()),
                   "model": "text-embedding-3-small", "apiKey": gsv_e2e::fake_llm::FAKE_API_KEY}),
        )
        .await;
        // Recall would embed the message before the model is called.
        c.config_set("memory.recall.enabled", json!(false)).await;
        let put = c
            .request(
                "memory.put",
                json!({"category": "preferences", "title": "coffee",
                       "content": "Takes coffee black.", "abstract": "Takes coffee black"}),
            )
            .await;
        assert!(put.ok, "{put:?}");
        // The search the session runs itself (no node, no Gateway) waits on
        // the embeddings service when workerd is killed.
        llm.set_embeddings_hanging(true);
        llm.script(
            "cut-in-tool",
            vec![Step::ToolCalls {
                text: String::new(),
                calls: vec![(search.0.into(), search.1.into(), search.2.clone())],
            }],
        );
        let run_id = c.chat_send(key, "cut-in-tool: how do I take it?").await;
        poll::until(secs(20), ms(50), async || {
            (llm.embeddings_held() > 0)
                .then_some(())
                .ok_or("the search never reached the embeddings service")
        })
        .await;
        run_id
    };

    // Answered from now on: the resumed search may come as soon as workerd
    // is up (its tick may be due by then).
    llm.set_embeddings_hanging(false);
    gw.restart();

    // Nobody sends anything: the watchdog runs the call again and the run
    // goes on to its answer.
    finished_by_the_watchdog(
        &gw,
        (key, &run_id),
        (
            2,
            "the message and the model's call were stored before the call ran",
        ),
        "echo: cut-in-tool: how do I take it?",
    )
    .await;
    let sent = llm.requests().last().unwrap().body.clone();
    let result = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned();
    assert_eq!(
        result,
        Some(json!({
            "role": "tool",
            "tool_call_id": search.0,
            "content": "- ctx://default/users/owner/memories/preferences/coffee [preferences] \
                        Takes coffee black\n  matched: Takes coffee black"
        }))
    );
    // The put's embedding and the search run again; the cut one never ended.
    assert_eq!((llm.embeddings_held(), llm.embedding_calls()), (1, 2));
}

/// After a restart: session `key` holds `stored` messages (the count, and
/// why), and the watchdog alone ends run `run_id` with `answer`. Asking
/// for the session makes the new client hear its events.
async fn finished_by_the_watchdog(
    gw: &Workerd,
    (key, run_id): (&str, &str),
    stored: (u64, &str),
    answer: &str,
) -> Client {
    let mut c = Client::connect(&gw.url(), Some("test-token")).await;
    let before = c
        .request("session.get", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap();
    assert_eq!(before["messageCount"], json!(stored.0), "{}", stored.1);
    let events = tokio::time::timeout(std::time::Duration::from_secs(60), c.run_events(run_id))
        .await
        .expect("the interrupted run was never resumed");
    let last = events.last().unwrap();
    assert_eq!(last.state, ChatState::Final, "{events:?}");
    assert_eq!(last.message.as_ref().unwrap().text(), answer);
    c
}
