//! Long-term memory at scale, on a gateway of its own: `--memory-nodes`
//! (10 000) memories written through `memory.put` by 8 clients at once
//! (the index object serializes the writes), then searched
//! (`--memory-searches`, 500: latency at the client and the index's round
//! trip as the gateway measured it), recall's cost in a turn (turns whose
//! message matches memories, against the same turns with recall off), and
//! the repair job's scan of every node. workerd's memory is sampled through.

use super::lifecycle::Rss;
use super::{ms, percentile, round2, stats, TOKEN};
use gsv_e2e::fake_llm::FakeLlm;
use gsv_e2e::harness::{GatewayOptions, Workerd};
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::time::Instant;

/// Words the synthetic memories are made of: each search finds a few.
const VOCABULARY: usize = 2_000;
const CATEGORIES: [&str; 6] = [
    "profile",
    "preferences",
    "entities",
    "events",
    "cases",
    "patterns",
];

/// A small deterministic generator (no dependency, same data every run).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }

    fn words(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| format!("w{}", self.next(VOCABULARY)))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

async fn ok(c: &mut Client, method: &str, params: Value) -> Value {
    let res = c.request(method, params).await;
    assert!(res.ok, "{method}: {res:?}");
    res.payload.unwrap_or(Value::Null)
}

pub async fn memory(llm: &FakeLlm, nodes: usize, searches: usize, turns: usize) -> Value {
    let gw = Workerd::start(GatewayOptions {
        token: Some(TOKEN.into()),
        ..Default::default()
    });
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(llm).await;
    c.config_set("agents.defaultHeartbeat", json!({"every": "0"}))
        .await;

    eprintln!("[bench] memory: writing {nodes} memories");
    let rss = Rss::watch(gw.pid());
    let writers = 8;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for w in 0..writers {
        let url = gw.url();
        tasks.push(tokio::spawn(async move {
            let mut c = Client::connect(&url, Some(TOKEN)).await;
            let mut rng = Lcg(w as u64 + 1);
            let mut samples = Vec::new();
            for i in (w..nodes).step_by(writers) {
                let params = json!({
                    "category": CATEGORIES[i % CATEGORIES.len()], "slug": format!("m{i}"),
                    "content": format!("Memory {i}: {}.\n\n{}", rng.words(12), rng.words(40)),
                    "abstract": format!("m{i} {}", rng.words(6)), "tags": [format!("t{}", i % 20)],
                });
                let t = Instant::now();
                ok(&mut c, "memory.put", params).await;
                samples.push(ms(t.elapsed()));
            }
            samples
        }));
    }
    let mut write_samples = Vec::new();
    for t in tasks {
        write_samples.extend(t.await.unwrap_or_default());
    }
    let write_wall = started.elapsed().as_secs_f64();
    let fill_rss = rss.stop();

    eprintln!("[bench] memory: {searches} searches");
    let mut rng = Lcg(99);
    let (mut at_client, mut at_gateway, mut hits) = (Vec::new(), Vec::new(), 0usize);
    for _ in 0..searches {
        let t = Instant::now();
        let r = ok(
            &mut c,
            "memory.search",
            json!({"query": rng.words(3), "limit": 10}),
        )
        .await;
        at_client.push(ms(t.elapsed()));
        at_gateway.push(r["tookMs"].as_f64().unwrap_or_default());
        hits += r["hits"].as_array().map_or(0, Vec::len);
    }

    eprintln!("[bench] memory: {turns} turns with recall, {turns} without");
    let mut with_recall = Vec::new();
    for i in 0..turns {
        with_recall.push(
            super::one_turn_text(
                &mut c,
                "agent:main:bench:recall",
                &format!("turn {i} {}", rng.words(3)),
            )
            .await,
        );
    }
    let status = ok(
        &mut c,
        "session.stats",
        json!({"sessionKey": "agent:main:bench:recall"}),
    )
    .await;
    let recalled_last = status["lastWorkspaceLoad"]["recalled"]
        .as_array()
        .map_or(0, Vec::len);
    c.config_set("memory.recall.enabled", json!(false)).await;
    let mut without_recall = Vec::new();
    for i in 0..turns {
        without_recall.push(
            super::one_turn_text(
                &mut c,
                "agent:main:bench:norecall",
                &format!("turn {i} {}", rng.words(3)),
            )
            .await,
        );
    }

    eprintln!("[bench] memory: the repair job over every node");
    let rss = Rss::watch(gw.pid());
    let t = Instant::now();
    let repair = ok(&mut c, "memory.repair", json!({})).await;
    let repair_ms = ms(t.elapsed());
    let repair_rss = rss.stop();

    let (p50_with, p50_without) = (
        percentile(&with_recall, 50.0),
        percentile(&without_recall, 50.0),
    );
    let search_p50 = percentile(&at_gateway, 50.0);
    let client_p50 = percentile(&at_client, 50.0);
    json!({
        "nodes": nodes,
        "write": {
            "writers": writers, "wallSeconds": round2(write_wall),
            "perSecond": round2(nodes as f64 / write_wall), "latency": stats(&write_samples),
            "workerdRss": fill_rss,
        },
        "search": {
            "count": searches, "hitsPerSearch": round2(hits as f64 / searches.max(1) as f64),
            "indexRoundTripMs": stats(&at_gateway), "throughGatewayMs": stats(&at_client),
        },
        "recall": {
            "turns": turns, "turnWithRecall": stats(&with_recall), "turnWithoutRecall": stats(&without_recall),
            "addedP50Ms": round2(p50_with - p50_without),
            "addedShareOfTurn": round2((p50_with - p50_without) / p50_without),
            "recalledInLastTurn": recalled_last,
        },
        "repair": {
            "ms": round2(repair_ms), "nodesScanned": repair["nodesScanned"], "listPages": repair["listPages"],
            "workerdRss": repair_rss,
        },
        "targets": {
            "searchP50InIndexAtMost10Ms": search_p50 <= 10.0,
            "searchP50ThroughGatewayAtMost25Ms": client_p50 <= 25.0,
            "recallAtMost10PercentOfTurn": (p50_with - p50_without) <= 0.1 * p50_without,
        },
    })
}
