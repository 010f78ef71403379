//! A conversation whose cost is measured, for the prompt-caching tests
//! and the bench's `cost` part: the main session on Anthropic's Messages
//! API (the fake LLM following its caching rules), long-term memory with
//! one memory per topic, and one message per turn about a topic, so recall
//! finds a memory for every message, each answered at a realistic length.

use crate::fake_llm::{FakeLlm, Step, FAKE_API_KEY};
use crate::ws::Client;
use gsv_protocol::{ChatState, Usage};
use serde_json::{json, Value};

/// The topics of the conversation, one memory each.
pub const TOPICS: [&str; 30] = [
    "garden",
    "boat",
    "kitchen",
    "bicycle",
    "passport",
    "dentist",
    "piano",
    "roof",
    "tax",
    "wedding",
    "laptop",
    "insurance",
    "marathon",
    "violin",
    "camera",
    "balcony",
    "library",
    "vaccine",
    "mortgage",
    "festival",
    "glacier",
    "lantern",
    "orchard",
    "harbor",
    "meadow",
    "quartet",
    "saddle",
    "tunnel",
    "vineyard",
    "workshop",
];

/// The model this conversation runs on.
pub const MODEL: &str = "claude-sonnet-4-5";

/// Points the gateway at the fake's Messages API, with prompt caching as
/// `cache_ttl` says (`"off"`, `"5m"`, `"1h"`), and heartbeats off.
pub async fn use_caching_anthropic(c: &mut Client, llm: &FakeLlm, cache_ttl: &str) {
    c.config_set("model", json!({"provider": "anthropic", "id": MODEL}))
        .await;
    c.config_set("apiKeys.anthropic", json!(FAKE_API_KEY)).await;
    c.config_set(
        "providers.anthropic",
        json!({"baseUrl": llm.base_url_anthropic(), "cacheTtl": cache_ttl}),
    )
    .await;
    c.config_set("agents.defaultHeartbeat", json!({"every": "0"}))
        .await;
}

async fn ok(c: &mut Client, method: &str, params: Value) -> Value {
    let res = c.request(method, params).await;
    assert!(res.ok, "{method}: {res:?}");
    res.payload.unwrap_or(Value::Null)
}

/// One memory per topic, the owner's.
pub async fn remember_topics(c: &mut Client) {
    for topic in TOPICS {
        ok(
            c,
            "memory.put",
            json!({
                "category": "events", "title": format!("the {topic} plan"),
                "content": format!("We agreed on the {topic} plan in spring: first the budget, \
                    then a date, then who does what. Keep it simple and write it down."),
                "abstract": format!("The {topic} plan: budget, then date, then owners"),
            }),
        )
        .await;
    }
}

/// Turn `i`'s message (about topic `i` modulo the topics).
pub fn message(i: usize) -> String {
    let topic = TOPICS[i % TOPICS.len()];
    format!("Turn {i}: where are we with the {topic} plan, and what should I do next about the {topic}?")
}

/// Turn `i`'s answer: about 120 words, as a model would answer.
fn answer(i: usize) -> String {
    let topic = TOPICS[i % TOPICS.len()];
    let sentence = format!(
        "For the {topic}, the budget comes first, then we pick a date, then we decide who does what. "
    );
    sentence.repeat(6)
}

/// Talks `turns` turns in `session` and returns each turn's usage (the
/// run's, summed over its model calls, from its `final` event).
pub async fn converse(c: &mut Client, llm: &FakeLlm, session: &str, turns: usize) -> Vec<Usage> {
    let mut usages = Vec::with_capacity(turns);
    for i in 0..turns {
        usages.push(turn(c, llm, session, i).await);
    }
    usages
}

/// Turn `i` of the conversation in `session`.
pub async fn turn(c: &mut Client, llm: &FakeLlm, session: &str, i: usize) -> Usage {
    let text = message(i);
    llm.script(&format!("Turn {i}:"), vec![Step::text(answer(i))]);
    let run = c.chat_send(session, &text).await;
    let events = c.run_events(&run).await;
    let last = events.last().expect("an event");
    assert_eq!(last.state, ChatState::Final, "{events:?}");
    last.usage
        .clone()
        .expect("a final event carries the run's usage")
}

/// Input-equivalent tokens as Anthropic bills them: cache writes at
/// 1.25 × the input price, reads at 0.1 ×.
pub fn billed(u: &Usage) -> f64 {
    u.input as f64 + 1.25 * u.cache_write as f64 + 0.1 * u.cache_read as f64
}

/// The share of a turn's input read from cache.
pub fn cached_share(u: &Usage) -> f64 {
    let all = u.input + u.cache_read + u.cache_write;
    match all {
        0 => 0.0,
        _ => u.cache_read as f64 / all as f64,
    }
}
