//! What a turn costs with a model that caches prompts, as Anthropic bills
//! it: the same 30-turn conversation (`cost_rig`: the main session, memory
//! recall on every message, answers of about 120 words) on two fresh
//! gateways against the fake LLM following Anthropic's caching rules,
//! once with caching (`providers.anthropic.cacheTtl` 5m, the default) and
//! once without (`off`). Billed input-equivalent tokens per turn are the
//! input, plus 1.25 × the cache writes and 0.1 × the cache reads; the
//! target is turns 11–30 at most 0.2 × the uncached figure.

use super::{round2, TOKEN};
use gsv_e2e::cost_rig::{billed, cached_share, converse, remember_topics, use_caching_anthropic};
use gsv_e2e::fake_llm::FakeLlm;
use gsv_e2e::harness::{GatewayOptions, Workerd};
use gsv_e2e::ws::Client;
use gsv_protocol::Usage;
use serde_json::{json, Value};

/// The turns the target is read over (1-based, inclusive).
const FROM_TURN: usize = 11;

pub async fn cost(turns: usize) -> Value {
    let cached = conversation("5m", turns).await;
    let uncached = conversation("off", turns).await;
    let window = |u: &[Usage]| u.iter().skip(FROM_TURN - 1).cloned().collect::<Vec<_>>();
    let mean =
        |u: &[Usage], f: fn(&Usage) -> f64| u.iter().map(f).sum::<f64>() / u.len().max(1) as f64;
    let (c, n) = (window(&cached), window(&uncached));
    let ratio = mean(&c, billed) / mean(&n, billed);
    json!({
        "turns": turns,
        "fromTurn": FROM_TURN,
        "billedPerTurn": {
            "cached": round2(mean(&c, billed)),
            "uncached": round2(mean(&n, billed)),
        },
        "cachedShare": round2(mean(&c, cached_share)),
        "billedCachedOverUncached": round2(ratio),
        "perTurn": {
            "cached": per_turn(&cached),
            "uncached": per_turn(&uncached),
        },
        "targets": {"cachedAtMost0_2xUncached": ratio <= 0.2},
    })
}

/// One gateway, one conversation.
async fn conversation(cache_ttl: &str, turns: usize) -> Vec<Usage> {
    eprintln!("[bench] cost: {turns} turns, cacheTtl {cache_ttl}");
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions {
        token: Some(TOKEN.into()),
        ..Default::default()
    });
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    use_caching_anthropic(&mut c, &llm, cache_ttl).await;
    remember_topics(&mut c).await;
    converse(&mut c, &llm, "agent:main:main", turns).await
}

/// Each turn's `[input, cacheRead, cacheWrite]`.
fn per_turn(usages: &[Usage]) -> Value {
    usages
        .iter()
        .map(|u| json!([u.input, u.cache_read, u.cache_write]))
        .collect()
}
