//! Workers AI through the gateway's `AI` binding: `model.provider
//! workers-ai` alone answers, with no API key. Locally the binding is
//! `tests/support/ai-binding` (its `run(model, inputs)` over RPC, as the
//! real binding's), which calls Workers AI's REST API on the fake LLM.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{Api, FakeLlm, Step, FAKE_API_KEY};
use gsv_e2e::harness::{
    gateway_dev_config, repo_root, without_services, without_table, GatewayOptions, Workerd,
};
use gsv_e2e::ws::{streamed_text, Client};
use gsv_protocol::ChatState;
use serde_json::json;

const TOKEN: &str = "test-token";
const MODEL: &str = "@cf/moonshotai/kimi-k2.5";

/// The gateway with `AI` bound to the double, which reaches `llm`.
fn start(llm: &FakeLlm) -> Workerd {
    let gateway = without_table(&without_services(&gateway_dev_config()), "[assets]")
        + "\n[[services]]\nbinding = \"AI\"\nservice = \"gsv-ai-binding\"\nentrypoint = \"AiBinding\"\n";
    let dir = repo_root().join("tests").join("support").join("ai-binding");
    let double = std::fs::read_to_string(dir.join("wrangler.toml"))
        .unwrap()
        .replace(
            "main = \"worker.mjs\"",
            &format!("main = {:?}", dir.join("worker.mjs").display().to_string()),
        )
        .replace("http://127.0.0.1:9", &llm.base_url_anthropic());
    Workerd::start_configs(
        &[("wrangler.toml", gateway), ("ai-binding.toml", double)],
        Some(format!("GSV_AUTH_TOKEN={TOKEN}\nGSV_TEST_CLOCK=1\n")),
    )
}

#[tokio::test]
async fn workers_ai_answers_through_the_binding_with_no_key() {
    let llm = FakeLlm::start().await;
    let gw = start(&llm);
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.config_set("model.provider", json!("workers-ai")).await;

    // A tool call and its result go back in Chat Completions form; the
    // answer streams.
    llm.script(
        "sessions",
        vec![
            Step::tool_call("l1", "gsv__SessionsList", json!({"messageLimit": 1})),
            Step::text("You have one session."),
        ],
    );
    let run = c
        .chat_send("agent:main:p:wai", "which sessions do I have?")
        .await;
    let events = c.run_events(&run).await;
    let last = events.last().unwrap();
    assert_eq!(last.state, ChatState::Final, "{events:?}");
    let answer = last.message.as_ref().unwrap();
    assert_eq!(
        (
            answer.text(),
            answer.api.as_deref(),
            answer.provider.as_deref(),
            answer.model.as_deref()
        ),
        (
            "You have one session.".to_string(),
            Some("workers-ai"),
            Some("workers-ai"),
            Some(MODEL)
        )
    );
    assert!(streamed_text(&events).ends_with("You have one session."));
    let asked = llm.requests();
    assert_eq!(
        asked.iter().map(|r| r.api).collect::<Vec<_>>(),
        [Api::WorkersAi, Api::WorkersAi]
    );
    // The gateway has no key: the one presented is the double's own token
    // (a deployed binding needs none).
    assert_eq!(asked[0].api_key.as_deref(), Some(FAKE_API_KEY));
    let second = &asked[1].body;
    assert_eq!(second["model"], json!(MODEL));
    assert_eq!(second["stream"], json!(true));
    let messages = second["messages"].as_array().unwrap();
    let n = messages.len();
    assert_eq!(
        messages[n - 2]["tool_calls"],
        json!([{"id": "l1", "type": "function", "function": {"name": "gsv__SessionsList",
            "arguments": "{\"messageLimit\":1}"}}])
    );
    assert_eq!(
        (&messages[n - 1]["role"], &messages[n - 1]["tool_call_id"]),
        (&json!("tool"), &json!("l1"))
    );

    // Out of capacity (3040, thrown by the binding) is retried, then
    // answered.
    llm.clear_requests();
    llm.script(
        "busy",
        vec![Step::rate_limited(0), Step::text("Now I can.")],
    );
    let run = c.chat_send("agent:main:p:wai", "busy right now?").await;
    let events = c.run_events(&run).await;
    let last = events.last().unwrap();
    assert_eq!(last.state, ChatState::Final, "{events:?}");
    assert_eq!(last.message.as_ref().unwrap().text(), "Now I can.");
    assert_eq!(llm.requests().len(), 2);

    // A model Workers AI does not have is refused at once, in its words.
    c.config_set("model.id", json!("@cf/nobody/nothing")).await;
    llm.script("unknown", vec![Step::status(400)]);
    let run = c.chat_send("agent:main:p:wai", "unknown model").await;
    let events = c.run_events(&run).await;
    assert_eq!(events.last().unwrap().state, ChatState::Error);
    assert_eq!(
        events.last().unwrap().error.as_deref(),
        Some("Model call failed: Workers AI: 5007: No such model or task")
    );
}

#[tokio::test]
async fn without_the_binding_the_error_says_where_it_is() {
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.config_set("model.provider", json!("workers-ai")).await;
    let run = c.chat_send("agent:main:p:wai", "hello").await;
    let events = c.run_events(&run).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].state, ChatState::Error);
    assert_eq!(
        events[0].error.as_deref(),
        Some(
            "Model call failed: workers-ai is reached through the Worker's AI binding, which this gateway does not \
             have: it is there when deployed (wrangler.toml [ai] binding = \"AI\"); a local \
             gateway has none, Workers AI running on Cloudflare"
        )
    );
}
