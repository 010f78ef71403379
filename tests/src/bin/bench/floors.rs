//! The floors the gateway is measured against: the echo, one object hop,
//! one model call from an object and the skeleton turn, in JS and in
//! workers-rs; and what a microtask costs workerd.

use super::{ms, percentile, round3, stats, turn_cost};
use gsv_e2e::harness::Workerd;
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::time::Instant;

/// The round trips `echo_floor` makes before it starts timing.
const ECHO_WARM_UP: usize = 50;

/// The floors of one skeleton Worker: the JS one (`tests/support/echo`)
/// or the same written with workers-rs (`tests/support/echo-rs`), which
/// tells how much of the turn is the crate's own.
pub struct Floors {
    pub echo: Vec<f64>,
    pub hop: Vec<f64>,
    pub turn: Vec<f64>,
    pub cpu_ms_per_turn: f64,
    pub report: Value,
}

/// Echo, a `fetch()` hop, the Worker's other hop (`other`: its JSON key
/// and message prefix), a model call from an object, and the skeleton
/// turn with the Worker's CPU time per turn; `n` round trips each (the
/// echo twice as many).
pub async fn skeleton_floors(
    worker: &Workerd,
    model_url: &str,
    n: usize,
    other: (&str, &str),
) -> Floors {
    let url = worker.url();
    let echo = echo_floor(&url, "", n * 2).await;
    let hop = echo_floor(&url, "hop:", n).await;
    let other_hop = echo_floor(&url, other.1, n).await;
    let model_call = echo_floor(&url, &format!("llm:{model_url}"), n).await;
    let cpu = turn_cost::CpuMeter::start(worker.pid().expect("the skeleton worker's process"));
    let turn = echo_floor(&url, &format!("turn:{model_url}"), n).await;
    let cost = cpu.per_turn(n + ECHO_WARM_UP);
    let cpu_ms_per_turn = cost["cpuMsPerTurn"].as_f64().unwrap_or(f64::NAN);
    let mut report = json!({
        "echoFloor": stats(&echo),
        "doFetchHop": stats(&hop),
        "modelCallFromDo": stats(&model_call),
        "skeletonTurn": stats(&turn),
        "skeletonTurnCost": cost,
    });
    report[other.0] = stats(&other_hop);
    Floors {
        echo,
        hop,
        turn,
        cpu_ms_per_turn,
        report,
    }
}

/// Chained microtasks per round of `microtask_costs`.
const MICROTASK_JOBS: usize = 100_000;

/// What one microtask costs workerd queued with `queueMicrotask` and as a
/// promise job, the choice `gsv-worker-start` makes for the Rust Workers'
/// futures: µs per job, the median of five rounds of each, alternating.
pub async fn microtask_costs(worker: &Workerd) -> Value {
    let url = worker.url();
    let mut c = Client::open(&url).await;
    let modes = ["queueMicrotask", "then"];
    let mut us_per_job = [Vec::new(), Vec::new()];
    for _ in 0..5 {
        for (mode, samples) in modes.iter().zip(us_per_job.iter_mut()) {
            let t = Instant::now();
            c.send_text(format!("microtasks:{mode}:{MICROTASK_JOBS}"))
                .await;
            let _ = c.next_text().await;
            samples.push(ms(t.elapsed()) * 1000.0 / MICROTASK_JOBS as f64);
        }
    }
    let [queued, then] = us_per_job.map(|s| percentile(&s, 50.0));
    json!({
        "jobsPerRound": MICROTASK_JOBS,
        "queueMicrotaskUsPerJob": round3(queued),
        "promiseJobUsPerJob": round3(then),
    })
}

/// Round trips through the echo worker; `prefix` picks the path (none, one
/// object-to-object fetch, or one JS RPC call).
pub async fn echo_floor(url: &str, prefix: &str, n: usize) -> Vec<f64> {
    let mut c = Client::open(url).await;
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + ECHO_WARM_UP {
        let took = echo_round_trip(&mut c, prefix, &format!("e{i}")).await;
        if i >= ECHO_WARM_UP {
            samples.push(took);
        }
    }
    samples
}

/// One message to the echo worker (`prefix` says what it does first) and
/// its answer, in milliseconds.
async fn echo_round_trip(c: &mut Client, prefix: &str, id: &str) -> f64 {
    let payload = format!(
        "{prefix}{}",
        json!({"type": "req", "id": id, "method": "echo"})
    );
    let t = Instant::now();
    c.send_text(payload).await;
    let _ = c.next_text().await;
    ms(t.elapsed())
}

/// The skeleton turn timed beside the gateway's turns, one after each:
/// both see the machine as it is at that moment, so their ratio does not
/// take in how its speed drifts between the parts of a run.
pub struct SkeletonBeside {
    client: Client,
    prefix: String,
    sent: usize,
}

impl SkeletonBeside {
    /// On the echo worker at `url`, its model calls going to `model_url`.
    pub async fn open(url: &str, model_url: &str) -> Self {
        Self {
            client: Client::open(url).await,
            prefix: format!("turn:{model_url}"),
            sent: 0,
        }
    }

    /// One skeleton turn, in milliseconds.
    pub async fn turn(&mut self) -> f64 {
        self.sent += 1;
        let id = format!("b{}", self.sent);
        echo_round_trip(&mut self.client, &self.prefix, &id).await
    }
}
