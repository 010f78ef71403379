//! R2 requests per run: an agent whose workspace files fill the caps and
//! which has 50 skills of its own, chatted with through the real gateway. Each run's counts come
//! from `session.stats` (`lastWorkspaceLoad`, counted where the Session
//! issues the requests): the first run after the skills were written, then
//! every later run of that session, then a second session's first run.
//! The files are written through the gateway, whose writes keep the
//! isolate's text cache current, so even the first run reads only what it
//! has never seen (BOOTSTRAP.md and the daily files, found absent).

use super::prompt::{bench_skill, cap_workspace_file};
use super::{one_turn, percentile, round2, stats, TOKEN};
use gsv_e2e::fake_llm::FakeLlm;
use gsv_e2e::harness::Workerd;
use gsv_e2e::ws::Client;
use serde_json::{json, Value};

const AGENT: &str = "benchreads";

pub async fn workspace_reads(gw: &Workerd, llm: &FakeLlm, runs: usize) -> Value {
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(llm).await;
    let files = [
        "SOUL.md",
        "USER.md",
        "AGENTS.md",
        "MEMORY.md",
        "TOOLS.md",
        "HEARTBEAT.md",
    ];
    for name in files {
        write(&mut c, name, &cap_workspace_file(name)).await;
    }
    write(&mut c, "IDENTITY.md", "- **Name:** Nim\n- **Emoji:** 🦀\n").await;
    for i in 0..50 {
        write(
            &mut c,
            &format!("skills/skill-{i:02}/SKILL.md"),
            &bench_skill(i),
        )
        .await;
    }

    let key = format!("agent:{AGENT}:reads:0");
    let first_ms = one_turn(&mut c, &key, 0).await;
    let first = load(&mut c, &key).await;
    let mut later = Vec::new();
    let mut later_ms = Vec::new();
    for i in 1..=runs {
        later_ms.push(one_turn(&mut c, &key, i).await);
        later.push(load(&mut c, &key).await);
    }
    let distinct: Vec<Value> = later.iter().fold(Vec::new(), |mut acc, l| {
        if !acc.contains(l) {
            acc.push(l.clone());
        }
        acc
    });
    let other = format!("agent:{AGENT}:reads:1");
    one_turn(&mut c, &other, 0).await;
    let other_first = load(&mut c, &other).await;
    let batches_max = later.iter().filter_map(|l| l["batches"].as_u64()).max();
    json!({
        "skills": 50,
        "firstRunAfterWritingSkills": {"load": first, "turnMs": round2(first_ms)},
        "laterRuns": {
            "runs": runs,
            "distinctLoads": distinct,
            "turn": stats(&later_ms),
        },
        "secondSessionFirstRun": other_first,
        // At most one: a run whose prompt stood as it was requests nothing.
        "laterRunsOneBatch": matches!(batches_max, Some(0 | 1)),
        "turnP50Ms": round2(percentile(&later_ms, 50.0)),
    })
}

async fn write(c: &mut Client, path: &str, content: &str) {
    let res = c
        .request(
            "workspace.write",
            json!({"agentId": AGENT, "path": path, "content": content}),
        )
        .await;
    assert!(res.ok, "workspace.write {path}: {:?}", res.error);
}

async fn load(c: &mut Client, key: &str) -> Value {
    let res = c.request("session.stats", json!({"sessionKey": key})).await;
    let stats = res.payload.unwrap_or_else(|| panic!("{:?}", res.error));
    stats["lastWorkspaceLoad"].clone()
}
