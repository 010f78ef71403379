//! Prompt caching through the real gateway, against the fake LLM that
//! follows Anthropic's caching rules (`fake_llm/cache.rs`): a long
//! conversation with memory recall reads most of each turn from cache,
//! the system prompt is the same text on every call until the workspace
//! changes, and a workspace edit costs one write, once.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::cost_rig::{
    billed, cached_share, converse, message, remember_topics, turn, use_caching_anthropic,
};
use gsv_e2e::fake_llm::FakeLlm;
use gsv_e2e::harness::{GatewayOptions, Workerd};
use gsv_e2e::ws::Client;
use gsv_protocol::{Usage, UsageDailyResult};
use serde_json::json;
use std::collections::BTreeSet;

const TOKEN: &str = "test-token";
const MAIN: &str = "agent:main:main";

/// The distinct system prompts the model was sent.
fn systems(llm: &FakeLlm) -> BTreeSet<String> {
    llm.requests()
        .iter()
        .map(|r| r.body["system"].to_string())
        .collect()
}

#[tokio::test]
async fn a_long_conversation_with_recall_is_read_from_cache() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    use_caching_anthropic(&mut c, &llm, "5m").await;
    remember_topics(&mut c).await;

    let usages = converse(&mut c, &llm, MAIN, 30).await;
    // The first turn writes the prefix; from then on each turn reads what
    // the one before wrote and writes only what it added.
    assert_eq!(usages[0].cache_read, 0, "{:?}", usages[0]);
    assert!(usages[0].cache_write > 1024, "{:?}", usages[0]);
    for (i, u) in usages.iter().enumerate().skip(1) {
        assert!(cached_share(u) > 0.8, "turn {i}: {u:?}");
        assert!(billed(u) < 0.25 * (u.input + u.cache_read + u.cache_write) as f64);
    }
    assert_eq!(systems(&llm).len(), 1, "one system prompt for all turns");

    // What it used and cost, as `usage.daily` adds it up: today's bar is
    // the whole conversation, priced as Anthropic prices the model.
    let daily = c.request("usage.daily", json!({"days": 7})).await;
    assert!(daily.ok, "{daily:?}");
    let daily: UsageDailyResult = serde_json::from_value(daily.payload.unwrap()).unwrap();
    assert_eq!(daily.days.len(), 7);
    let today = &daily.days[6].tokens;
    let sum = |f: fn(&Usage) -> u64| usages.iter().map(f).sum::<u64>();
    assert_eq!(
        (
            today.input,
            today.cache_read,
            today.cache_write,
            today.output
        ),
        (
            sum(|u| u.input),
            sum(|u| u.cache_read),
            sum(|u| u.cache_write),
            sum(|u| u.output)
        )
    );
    // Sonnet: $3 a million input, $15 output, reads $0.30, writes $3.75.
    let cost = (3.0 * today.input as f64
        + 15.0 * today.output as f64
        + 0.3 * today.cache_read as f64
        + 3.75 * today.cache_write as f64)
        / 1e6;
    assert!((today.cost.unwrap() - cost).abs() < 1e-9, "{today:?}");
    assert_eq!(daily.sessions.len(), 1);
    assert_eq!(daily.sessions[0].session_key, MAIN);
    assert_eq!(&daily.total, today);

    // Each message went with the memory recalled for it, after its words,
    // as the conversation's last (cached) block.
    let last = llm.requests().last().unwrap().body.clone();
    let sent = last["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(sent["role"], "user");
    let blocks = sent["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 2, "{sent}");
    assert_eq!(blocks[0], json!({"type": "text", "text": message(29)}));
    let recalled = blocks[1]["text"].as_str().unwrap();
    assert!(recalled.starts_with("## Recalled memories\n"), "{recalled}");
    assert!(
        recalled.contains("The workshop plan: budget, then date, then owners"),
        "{recalled}"
    );
    assert_eq!(blocks[1]["cache_control"], json!({"type": "ephemeral"}));
    // An earlier message is sent as it was then: its words and its recall.
    let first = &last["messages"][0]["content"];
    assert_eq!(first[0]["text"], message(0));
    assert!(first[1]["text"]
        .as_str()
        .unwrap()
        .contains("The garden plan"));

    // The owner edits the workspace: the next turn writes the new prompt
    // once, and the one after reads it again.
    let written = c
        .request(
            "workspace.write",
            json!({"path": "SOUL.md", "content": "Be brief, and kind.\n"}),
        )
        .await;
    assert!(written.ok, "{written:?}");
    let edited = turn(&mut c, &llm, MAIN, 30).await;
    let after = turn(&mut c, &llm, MAIN, 31).await;
    assert_eq!(edited.cache_read, 0, "{edited:?}");
    assert!(edited.cache_write > usages[29].cache_read, "{edited:?}");
    assert_eq!(
        after.cache_read, edited.cache_write,
        "{after:?} after {edited:?}"
    );
    assert_eq!(systems(&llm).len(), 2);
}

#[tokio::test]
async fn caching_off_marks_nothing() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    use_caching_anthropic(&mut c, &llm, "off").await;
    let usages = converse(&mut c, &llm, MAIN, 2).await;
    for u in &usages {
        assert_eq!((u.cache_read, u.cache_write), (0, 0), "{u:?}");
    }
    for r in llm.requests() {
        assert!(!r.body.to_string().contains("cache_control"), "{}", r.body);
    }
}

/// OpenAI caches prefixes on its own: each call names its conversation
/// (the session key, hashed), and from the second turn on the shared
/// prefix is read from cache.
#[tokio::test]
async fn openai_calls_name_their_conversation_and_read_its_prefix() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    c.config_set("agents.defaultHeartbeat", json!({"every": "0"}))
        .await;
    let mut usages = Vec::new();
    for text in ["first", "second", "third"] {
        let run = c.chat_send(MAIN, text).await;
        let events = c.run_events(&run).await;
        usages.push(events.last().unwrap().usage.clone().unwrap());
    }
    assert_eq!(usages[0].cache_read, 0, "{:?}", usages[0]);
    for u in &usages[1..] {
        assert!(u.cache_read >= 1024, "{u:?}");
    }
    let keys: BTreeSet<String> = llm
        .requests()
        .iter()
        .map(|r| r.body["prompt_cache_key"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(keys.len(), 1, "{keys:?}");
    let key = keys.into_iter().next().unwrap();
    assert!(key.starts_with("gsv-") && !key.contains("main"), "{key}");
}
