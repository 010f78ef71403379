//! What the cron tests share: a gateway with the fake LLM and a client
//! on it, RPC answers unwrapped, and waits on a job's runs.

use crate::fake_llm::FakeLlm;
use crate::harness::{GatewayOptions, Workerd};
use crate::poll::{self, ms};
use crate::ws::Client;
use serde_json::{json, Value};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub const TOKEN: &str = "test-token";

/// A gateway (test clock on), the fake LLM as its model, a client.
pub async fn setup() -> (Workerd, FakeLlm, Client) {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    (gw, llm, c)
}

pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// The payload of a request that must succeed.
pub async fn rpc(c: &mut Client, method: &str, params: Value) -> Value {
    let res = c.request(method, params).await;
    assert!(res.ok, "{method}: {res:?}");
    res.payload.unwrap()
}

/// The runs of `job`, once none is still running and there are `n`.
pub async fn runs_when_done(c: &mut Client, job: &str, n: usize, within: Duration) -> Vec<Value> {
    poll::until(within, ms(200), async || {
        let r = rpc(c, "cron.runs", json!({"jobId": job})).await;
        let runs = r["runs"].as_array().unwrap().clone();
        if runs.len() >= n && runs.iter().all(|r| r["status"] != "running") {
            Ok(runs)
        } else {
            Err(format!("runs of {job}: {runs:?}"))
        }
    })
    .await
}

/// Job `id` as `cron.list` shows it (`null` when it is gone).
pub async fn job(c: &mut Client, id: &str) -> Value {
    let list = rpc(c, "cron.list", json!({})).await;
    list["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["id"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

/// A run with its clock fields checked and taken out: `ts` after
/// `added`, `durationMs` ≥ 0, `lateMs` within `late`.
pub fn timeless(mut run: Value, added: i64, late: std::ops::Range<i64>) -> Value {
    let o = run.as_object_mut().unwrap();
    let ts = o.remove("ts").and_then(|v| v.as_i64()).unwrap();
    assert!(ts >= added, "ts {ts} before {added}");
    let d = o.remove("durationMs").and_then(|v| v.as_i64()).unwrap();
    assert!(d >= 0);
    let l = o.remove("lateMs").and_then(|v| v.as_i64()).unwrap();
    assert!(late.contains(&l), "lateMs {l} not in {late:?}");
    run
}
