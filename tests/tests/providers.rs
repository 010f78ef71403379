//! Provider behaviour through the real gateway: Anthropic streaming, a
//! missing key, the provider going down and coming back, and the LLM
//! timeout. These change the global model config, so they share one
//! gateway and run one after another.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{Api, FakeLlm, Step, FAKE_API_KEY};
use gsv_e2e::harness::{GatewayOptions, Workerd};
use gsv_e2e::ws::{streamed_text, Client};
use gsv_protocol::ChatState;
use serde_json::json;
use std::time::{Duration, Instant};

const TOKEN: &str = "test-token";

#[tokio::test]
async fn providers_through_the_gateway() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;

    // No key configured: an error event that names the command to set one.
    let run = c.chat_send("agent:main:p:nokey", "hi").await;
    let events = c.run_events(&run).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].state, ChatState::Error);
    assert_eq!(
        events[0].error.as_deref(),
        Some("No API key configured for provider 'anthropic'. Set one with: gsv config set apiKeys.anthropic <key>")
    );

    // Anthropic Messages, streamed.
    c.config_set("apiKeys.anthropic", json!(FAKE_API_KEY)).await;
    c.config_set(
        "providers.anthropic.baseUrl",
        json!(llm.base_url_anthropic()),
    )
    .await;
    c.config_set("systemPrompt", json!("You are the e2e agent."))
        .await;
    let run = c
        .chat_send("agent:main:p:anthropic", "bonjour, ça va? 👋")
        .await;
    let events = c.run_events(&run).await;
    let last = events.last().unwrap();
    assert_eq!(last.state, ChatState::Final, "{events:?}");
    assert_eq!(
        last.message.as_ref().unwrap().text(),
        "echo: bonjour, ça va? 👋"
    );
    assert_eq!(streamed_text(&events), "echo: bonjour, ça va? 👋");
    assert_eq!(
        last.message.as_ref().unwrap().api.as_deref(),
        Some("anthropic-messages")
    );
    let req = llm
        .requests()
        .into_iter()
        .rfind(|r| r.api == Api::Anthropic)
        .unwrap();
    // One text block, marked to be cached (with the tools before it).
    let system = req.body["system"][0]["text"].as_str().unwrap();
    assert!(system.starts_with("You are the e2e agent."), "{system}");
    assert_eq!(
        req.body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(req.body["model"], json!("claude-sonnet-4-20250514"));
    assert_eq!(req.api_key.as_deref(), Some(FAKE_API_KEY));

    // A wrong key: a clear error, no retries.
    c.config_set("apiKeys.anthropic", json!("sk-wrong")).await;
    let run = c.chat_send("agent:main:p:anthropic", "again").await;
    let events = c.run_events(&run).await;
    let err = events.last().unwrap().error.clone().unwrap();
    assert!(err.contains("gsv config set apiKeys.anthropic"), "{err}");
    c.config_set("apiKeys.anthropic", json!(FAKE_API_KEY)).await;

    // The provider goes down: an error event after bounded retries …
    llm.stop();
    let started = Instant::now();
    let run = c.chat_send("agent:main:p:down", "anyone there?").await;
    let events = c.run_events(&run).await;
    assert_eq!(events.last().unwrap().state, ChatState::Error, "{events:?}");
    assert!(started.elapsed() < Duration::from_secs(20));
    // It says where the request went and what to check; the middle is
    // the runtime's own words.
    let err = events.last().unwrap().error.clone().unwrap();
    let reached_for = format!(
        "Model call failed: could not reach anthropic at {}: ",
        llm.base_url_anthropic()
    );
    assert!(
        err.starts_with(&reached_for)
            && err.ends_with(
                ". Check the network, or `providers.anthropic.baseUrl` if it should point elsewhere."
            ),
        "{err}"
    );
    // … and the session works again once it is back.
    llm.restart().unwrap();
    let run = c.chat_send("agent:main:p:down", "back now?").await;
    let events = c.run_events(&run).await;
    assert_eq!(
        events.last().unwrap().message.as_ref().unwrap().text(),
        "echo: back now?"
    );
    let preview = c
        .request(
            "session.preview",
            json!({"sessionKey": "agent:main:p:down"}),
        )
        .await
        .payload
        .unwrap();
    assert_eq!(
        preview["messageCount"],
        json!(3),
        "both user messages and the answer are kept"
    );

    // timeouts.llmMs is enforced.
    c.config_set("timeouts.llmMs", json!(1500)).await;
    llm.script("hang-e2e", vec![Step::Hang]);
    let started = Instant::now();
    let run = c.chat_send("agent:main:p:timeout", "hang-e2e please").await;
    let events = c.run_events(&run).await;
    assert_eq!(
        events.last().unwrap().error.as_deref(),
        Some("Model call failed: anthropic did not answer within 1500 ms (timeouts.llmMs)")
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );

    // Thinking level reaches the API as a budget.
    c.config_set("model.thinkingLevel", json!("low")).await;
    let run = c.chat_send("agent:main:p:think", "think about it").await;
    c.run_events(&run).await;
    let req = llm
        .requests()
        .into_iter()
        .rfind(|r| r.body.to_string().contains("think about it"))
        .unwrap();
    assert_eq!(
        req.body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );

    // A provider that keeps failing hands the call to the next model in
    // `model.fallbacks`, which answers; the answer names the model.
    c.config_set("apiKeys.openai", json!(FAKE_API_KEY)).await;
    c.config_set("providers.openai.baseUrl", json!(llm.base_url_openai()))
        .await;
    c.config_set("model.fallbacks", json!(["openai/gpt-fallback"]))
        .await;
    let overloaded = || Step::Status {
        code: 529,
        retry_after: None,
        body: None,
    };
    llm.script(
        "fall back",
        vec![
            overloaded(),
            overloaded(),
            overloaded(),
            overloaded(),
            Step::text("From the fallback."),
        ],
    );
    let run = c
        .chat_send("agent:main:p:fallback", "fall back, please")
        .await;
    let events = c.run_events(&run).await;
    let last = events.last().unwrap();
    assert_eq!(last.state, ChatState::Final, "{events:?}");
    let answer = last.message.as_ref().unwrap();
    assert_eq!(answer.text(), "From the fallback.");
    assert_eq!(
        (answer.provider.as_deref(), answer.model.as_deref()),
        (Some("openai"), Some("gpt-fallback"))
    );
    let asked: Vec<Api> = llm
        .requests()
        .into_iter()
        .filter(|r| r.body.to_string().contains("fall back, please"))
        .map(|r| r.api)
        .collect();
    assert_eq!(
        asked,
        [
            Api::Anthropic,
            Api::Anthropic,
            Api::Anthropic,
            Api::Anthropic,
            Api::OpenAi
        ]
    );
    // A refusal of the request itself (a wrong key) is not handed over.
    c.config_set("apiKeys.anthropic", json!("sk-wrong")).await;
    let run = c.chat_send("agent:main:p:fallback", "no fallback").await;
    let events = c.run_events(&run).await;
    assert_eq!(events.last().unwrap().state, ChatState::Error);
}

/// OpenAI's Responses API through the real gateway: with
/// `providers.openai.api openai-responses` a turn goes to `/v1/responses`,
/// a tool call and its output pair up by `call_id`, and the conversation
/// names its prompt cache. Its own gateway: the model config is global.
#[tokio::test]
async fn openai_responses_api_through_the_gateway() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.config_set("model", json!({"provider": "openai", "id": "gpt-5"}))
        .await;
    c.config_set("apiKeys.openai", json!(FAKE_API_KEY)).await;
    c.config_set("providers.openai.baseUrl", json!(llm.base_url_openai()))
        .await;
    c.config_set("providers.openai.api", json!("openai-responses"))
        .await;
    llm.script(
        "which api",
        vec![
            Step::tool_call(
                "call_api",
                "gsv__ConfigGet",
                json!({"path": "providers.openai.api"}),
            ),
            Step::text("The Responses API."),
        ],
    );
    let run = c
        .chat_send("agent:main:main", "which api do you use?")
        .await;
    let events = c.run_events(&run).await;
    let last = events.last().unwrap();
    assert_eq!(last.state, ChatState::Final, "{events:?}");
    let answer = last.message.as_ref().unwrap();
    assert_eq!(answer.text(), "The Responses API.");
    assert_eq!(streamed_text(&events), "The Responses API.");
    assert_eq!(
        (answer.api.as_deref(), answer.provider.as_deref()),
        (Some("openai-responses"), Some("openai"))
    );

    let asked: Vec<_> = llm
        .requests()
        .into_iter()
        .filter(|r| r.body.to_string().contains("which api do you use?"))
        .collect();
    assert_eq!(
        asked.iter().map(|r| r.api).collect::<Vec<_>>(),
        [Api::Responses, Api::Responses]
    );
    let question = json!({"role": "user", "content": [
        {"type": "input_text", "text": "which api do you use?"}]});
    assert_eq!(asked[0].body["input"], json!([question]));
    // The call, then its output under the same call_id.
    let body = &asked[1].body;
    let output = body["input"][2]["output"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(output).unwrap(),
        json!({"path": "providers.openai.api", "value": "openai-responses"})
    );
    assert_eq!(
        body["input"],
        json!([
            question,
            {"type": "function_call", "call_id": "call_api", "name": "gsv__ConfigGet",
             "arguments": "{\"path\":\"providers.openai.api\"}"},
            {"type": "function_call_output", "call_id": "call_api", "output": output}
        ])
    );
    // Stateless, one cache per conversation, the system prompt as
    // instructions, flat function tools.
    assert_eq!(
        (&body["model"], &body["stream"], &body["store"]),
        (&json!("gpt-5"), &json!(true), &json!(false))
    );
    assert!(
        body["prompt_cache_key"]
            .as_str()
            .is_some_and(|k| k.starts_with("gsv-")),
        "{body}"
    );
    assert_eq!(body["prompt_cache_key"], asked[0].body["prompt_cache_key"]);
    assert!(body["instructions"].as_str().is_some_and(|s| !s.is_empty()));
    let config_get = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "gsv__ConfigGet")
        .unwrap();
    assert_eq!(
        (&config_get["type"], &config_get["strict"]),
        (&json!("function"), &json!(false))
    );
    assert_eq!(asked[1].api_key.as_deref(), Some(FAKE_API_KEY));
}
