//! Cron at scale, on a gateway of its own:
//! - a burst: `--cron-burst` (1 000) jobs due in the same second, at most
//!   `--cron-cap` (4, the default) running at once (`cron.maxConcurrentRuns`),
//!   twice: on 50 agents that never ran (`firstBurstNewAgents`: their first
//!   runs write each agent's new workspace), then on the same agents in use
//!   (`burst`, the target's). Measured:
//!   from the due instant until every run is recorded (the run record is
//!   written just before its message goes to the session; seen as no job
//!   due in `cron.status`) and until every run has ended (none running); the longest alarm handler invocation (`cron.status`);
//!   and a client's `config.get` sent every 10 ms during the burst (its
//!   latency p99 must stay under 50 ms: the alarm must not block clients);
//! - a store: `--cron-stored` (10 000) jobs. Measured: `cron.list` of a
//!   500-job page, and `cron.add` (which recomputes the next alarm over
//!   all jobs) against the same on an empty store.

use super::{ms, percentile, round2, stats, TOKEN};
use gsv_e2e::fake_llm::FakeLlm;
use gsv_e2e::harness::{GatewayOptions, Workerd};
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

async fn ok(c: &mut Client, method: &str, params: Value) -> Value {
    let res = c.request(method, params).await;
    assert!(res.ok, "{method}: {res:?}");
    res.payload.unwrap_or(Value::Null)
}

async fn timed(c: &mut Client, method: &str, params: Value) -> f64 {
    let t = Instant::now();
    ok(c, method, params).await;
    ms(t.elapsed())
}

/// Adds `n` jobs of `schedule` (JSON) with systemEvent texts.
async fn add_jobs(c: &mut Client, n: usize, schedule: &Value, agents: usize) {
    for i in 0..n {
        let params = json!({"name": format!("job {i}"), "agentId": format!("a{}", i % agents),
                            "schedule": schedule, "spec": {"kind": "systemEvent", "text": format!("tick {i}")}});
        ok(c, "cron.add", params).await;
    }
}

/// With `profile`, the burst is recorded as `DIR/cron-burst.cpuprofile`.
/// `burst` jobs due at the same instant, run while a second client probes
/// the gateway: the report and the probe's p99.
async fn one_burst(
    c: &mut Client,
    url: &str,
    burst: usize,
    profile: Option<(u16, &std::path::Path)>,
) -> (Value, f64) {
    eprintln!("[bench] cron: {burst} jobs due in the same second");
    // Far enough ahead for the jobs to be added; spread over 50 agents'
    // main sessions (each session runs its messages one after another).
    let due = now_ms() + 5_000 + burst as i64 * 6;
    add_jobs(c, burst, &json!({"kind": "at", "atMs": due}), 50).await;
    let slack = due - now_ms();
    assert!(slack > 0, "adding the jobs took past their due time");
    tokio::time::sleep(Duration::from_millis(slack as u64 - slack.min(500) as u64)).await;

    // A second client, sending a light request every 10 ms through the burst.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let probing = super::spawn_probe(url.to_string(), stop.clone());
    let profiler =
        profile.map(|(port, dir)| super::turn_cost::Profiler::start(port, dir, "cron-burst"));
    // Watched through `cron.status` (counts only): listing 1 000 runs every
    // 50 ms would itself keep the gateway busy and slow the probe.
    let (mut all_recorded, mut all_ended) = (None, None);
    let deadline = Instant::now() + Duration::from_secs(300);
    while all_ended.is_none() && Instant::now() < deadline {
        let s = ok(c, "cron.status", json!({})).await;
        let fired = now_ms() >= due && s["dueCount"] == 0;
        if all_recorded.is_none() && fired {
            all_recorded = Some(now_ms() - due);
        }
        if fired && s["runningCount"] == 0 {
            all_ended = Some(now_ms() - due);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let profile = profiler.map(|p| p.stop());
    // This burst's runs: those that went out at or after its due instant.
    let runs = ok(c, "cron.runs", json!({"limit": 2000})).await;
    let list: Vec<Value> = runs["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["ts"].as_i64().is_some_and(|t| t >= due))
        .cloned()
        .collect();
    let last_ts = list.iter().filter_map(|r| r["ts"].as_i64()).max();
    let ok_runs = list.iter().filter(|r| r["status"] == "ok").count();
    let status = ok(c, "cron.status", json!({})).await;
    let lat = probing.await.unwrap_or_default();
    let cap = status["maxConcurrentRuns"].clone();
    let mut report = json!({
        "jobs": burst,
        "maxConcurrentRuns": cap,
        "dueToLastRunStartedMs": last_ts.map(|t| t - due),
        "dueToAllRunsRecordedMs": all_recorded,
        "dueToAllRunsEndedMs": all_ended,
        "runsOk": ok_runs,
        "longestAlarmInvocationMs": status["longestAlarmMs"],
        "clientRpcDuringBurstMs": stats(&lat),
    });
    if let Some(profile) = profile {
        report["profile"] = profile;
    }
    (report, percentile(&lat, 99.0))
}

pub async fn cron(
    llm: &FakeLlm,
    burst: usize,
    stored: usize,
    cap: usize,
    profile: Option<&std::path::Path>,
) -> Value {
    let (gw, inspector) = super::turn_cost::start_gateway(profile.is_some());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(llm).await;
    c.config_set(
        "cron",
        json!({"maxJobs": 100_000, "maxConcurrentRuns": cap}),
    )
    .await;
    // No beats during the measurement.
    c.config_set("agents.defaultHeartbeat", json!({"every": "0"}))
        .await;

    // Twice: first on 50 agents that never ran (each first run writes its
    // agent's new workspace to R2), then on the same agents in use.
    let (first, _) = one_burst(&mut c, &gw.url(), burst, None).await;
    let (burst_report, rpc_p99) = one_burst(&mut c, &gw.url(), burst, inspector.zip(profile)).await;

    eprintln!("[bench] cron: {stored} stored jobs");
    let empty_gw = Workerd::start(GatewayOptions {
        token: Some(TOKEN.into()),
        ..Default::default()
    });
    let mut e = Client::connect(&empty_gw.url(), Some(TOKEN)).await;
    let daily = json!({"kind": "cron", "expr": "0 9 * * *", "tz": "Europe/Paris"});
    let mut add_empty = Vec::new();
    for i in 0..20 {
        let p =
            json!({"schedule": daily, "spec": {"kind": "systemEvent", "text": format!("e{i}")}});
        add_empty.push(timed(&mut e, "cron.add", p).await);
    }
    drop(empty_gw);
    let t = Instant::now();
    add_jobs(&mut c, stored, &daily, 50).await;
    let fill_secs = t.elapsed().as_secs_f64();
    let mut add_full = Vec::new();
    for i in 0..20 {
        let p =
            json!({"schedule": daily, "spec": {"kind": "systemEvent", "text": format!("f{i}")}});
        add_full.push(timed(&mut c, "cron.add", p).await);
    }
    let mut list = Vec::new();
    for _ in 0..20 {
        list.push(timed(&mut c, "cron.list", json!({"limit": 500})).await);
    }
    let mut status_ms = Vec::new();
    for _ in 0..20 {
        status_ms.push(timed(&mut c, "cron.status", json!({})).await);
    }
    let count = ok(&mut c, "cron.status", json!({})).await["count"].clone();
    json!({
        "firstBurstNewAgents": first,
        "burst": burst_report,
        "stored": {
            "jobs": count,
            "fillSecs": round2(fill_secs),
            "cronList500Ms": stats(&list),
            "cronAddWithNextAlarmMs": stats(&add_full),
            "cronAddOnEmptyStoreMs": stats(&add_empty),
            "cronStatusMs": stats(&status_ms),
        },
        "targets": {"clientRpcP99DuringBurstUnder50Ms": rpc_p99 < 50.0},
    })
}
