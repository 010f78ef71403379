//! Cron's rules end to end, under workerd with the fake LLM: the job and
//! history limits, a one-shot deleted after its run, a slot reached while
//! the previous run goes recorded as skipped, a due job waiting while
//! `maxConcurrentRuns` go, a task's answer delivered to the chat it names
//! and a reminder's to the last one, the Worker's cron trigger re-arming
//! an alarm that was lost, and a heartbeat holding back while the last
//! chat is being answered.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::cron_rig::{job, now_ms, rpc, runs_when_done, setup, timeless, TOKEN};
use gsv_e2e::fake_llm::Step;
use gsv_e2e::poll::{self, ms, secs};
use gsv_e2e::ws::raw_channel;
use serde_json::{json, Value};
use std::time::Duration;

#[tokio::test]
async fn job_and_history_limits_hold_and_a_one_shot_can_delete_itself() {
    let (_gw, _llm, mut c) = setup().await;
    c.config_set("cron.maxJobs", json!(2)).await;
    c.config_set("cron.maxRunsPerJobHistory", json!(2)).await;
    let r = rpc(
        &mut c,
        "cron.add",
        json!({"name": "ping", "schedule": {"kind": "every", "everyMs": 3_600_000},
               "spec": {"kind": "task", "message": "ping"}}),
    )
    .await;
    let ping = r["job"]["id"].as_str().unwrap().to_string();
    // Three runs; the history keeps the last two.
    let mut ids = Vec::new();
    for n in 1..=3 {
        let r = rpc(&mut c, "cron.run", json!({"id": ping, "mode": "force"})).await;
        ids.push(r["results"][0]["runId"].as_str().unwrap().to_string());
        runs_when_done(&mut c, &ping, n.min(2), Duration::from_secs(20)).await;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let r = rpc(&mut c, "cron.runs", json!({"jobId": ping})).await;
    let kept: Vec<Value> = r["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!([r["id"], r["status"]]))
        .collect();
    assert_eq!(
        (r["count"].clone(), kept),
        (json!(2), vec![json!([ids[2], "ok"]), json!([ids[1], "ok"])])
    );

    let added = now_ms();
    let r = rpc(
        &mut c,
        "cron.add",
        json!({"schedule": {"kind": "at", "inSeconds": 1}, "deleteAfterRun": true,
               "spec": {"kind": "systemEvent", "text": "kettle"}}),
    )
    .await;
    let once = r["job"]["id"].as_str().unwrap().to_string();
    let slot = r["job"]["state"]["nextRunAtMs"].as_i64().unwrap();
    // Two jobs: the third is refused, and says why.
    let refused = c
        .request(
            "cron.add",
            json!({"schedule": {"kind": "every", "everyMs": 60_000},
                   "spec": {"kind": "systemEvent", "text": "one too many"}}),
        )
        .await;
    assert_eq!(
        serde_json::to_value(refused.error).unwrap(),
        json!({"code": 400, "message": "cron.maxJobs (2) reached: remove a job first"})
    );
    // The one-shot runs, then it is gone; its run stays in the history.
    let runs = runs_when_done(&mut c, &once, 1, Duration::from_secs(20)).await;
    let summary = runs[0]["summary"].clone();
    assert_eq!(
        runs.into_iter()
            .map(|r| timeless(r, added, 0..3000))
            .collect::<Vec<_>>(),
        [
            json!({"id": format!("{once}:{slot}"), "jobId": once, "status": "ok", "summary": summary})
        ]
    );
    poll::until(secs(10), ms(200), async || {
        let gone = job(&mut c, &once).await == Value::Null;
        gone.then_some(())
            .ok_or_else(|| format!("{once} still listed"))
    })
    .await;
    let r = rpc(
        &mut c,
        "cron.add",
        json!({"schedule": {"kind": "every", "everyMs": 60_000},
               "spec": {"kind": "systemEvent", "text": "room again"}}),
    )
    .await;
    assert_eq!(r["ok"], true);
}

#[tokio::test]
async fn a_slot_reached_while_the_last_run_goes_is_skipped() {
    let (gw, llm, mut c) = setup().await;
    llm.script("the long task", vec![Step::Hang]);
    let added = now_ms();
    let anchor = added + 2000 - 60_000;
    let r = rpc(
        &mut c,
        "cron.add",
        json!({"schedule": {"kind": "every", "everyMs": 60_000, "anchorMs": anchor},
               "spec": {"kind": "task", "message": "the long task"}}),
    )
    .await;
    let id = r["job"]["id"].as_str().unwrap().to_string();
    let first = anchor + 60_000;
    poll::until(secs(20), ms(200), async || {
        let r = rpc(&mut c, "cron.runs", json!({"jobId": id})).await;
        if r["runs"][0]["status"] == "running" {
            Ok(())
        } else {
            Err(r)
        }
    })
    .await;
    // A minute on: the next slot comes while the first run still goes.
    gw.advance_clock(60_000);
    let runs = poll::until(secs(20), ms(200), async || {
        let r = rpc(&mut c, "cron.runs", json!({"jobId": id})).await;
        if r["count"] == 2 {
            Ok(r["runs"].as_array().unwrap().clone())
        } else {
            Err(r)
        }
    })
    .await;
    let mut skipped = timeless(runs[0].clone(), added, 0..3000);
    let why = skipped["error"].as_str().unwrap().to_string();
    let secs: i64 = why
        .strip_prefix("the previous run was still going (started ")
        .and_then(|r| r.strip_suffix(" s earlier)"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{why}"));
    assert!((60..70).contains(&secs), "{why}");
    skipped.as_object_mut().unwrap().remove("error");
    assert_eq!(
        skipped,
        json!({"id": format!("{id}:{}", first + 60_000), "jobId": id, "status": "skipped",
               "nextRunAtMs": first + 120_000})
    );
    assert_eq!(
        (runs[1]["id"].clone(), runs[1]["status"].clone()),
        (json!(format!("{id}:{first}")), json!("running"))
    );
    // The job still runs its first slot and waits for its third.
    let j = job(&mut c, &id).await;
    assert_eq!(j["state"]["nextRunAtMs"], first + 120_000);
    assert!(j["state"]["runningAtMs"].is_i64(), "{j}");
    assert_eq!(j["state"].get("lastStatus"), None);
}

#[tokio::test]
async fn answers_reach_the_chat_a_task_names_or_the_last_one() {
    let (_gw, _llm, mut c) = setup().await;
    let mut discord = raw_channel(&_gw.url(), TOKEN, "discord").await;
    c.config_set("channels.discord.dmPolicy", json!("open"))
        .await;
    // Alice speaks with the agent on Discord: her chat is the last active.
    let dm = json!({"channel": "discord", "accountId": "default",
        "message": {"messageId": "m1", "peer": {"kind": "dm", "id": "dm-81"},
                    "sender": {"id": "81", "name": "Alice"}, "text": "hi",
                    "timestamp": 1_795_529_100_000i64}});
    rpc(&mut discord, "channel.inbound", dm).await;
    discord.next_event("channel.outbound").await;

    // A task addressed to another chat goes there, with the run's answer.
    let r = rpc(
        &mut c,
        "cron.add",
        json!({"schedule": {"kind": "at", "inSeconds": 1},
               "spec": {"kind": "task", "message": "summarise the news",
                        "channel": "discord", "to": "dm-99"}}),
    )
    .await;
    let task = r["job"]["id"].as_str().unwrap().to_string();
    let out = discord.next_event("channel.outbound").await;
    let text = out["message"]["text"].as_str().unwrap().to_string();
    assert_eq!(
        (out["channel"].clone(), out["peer"].clone()),
        (json!("discord"), json!({"kind": "dm", "id": "dm-99"}))
    );
    assert!(text.starts_with("echo: [cron · "), "{text}");
    assert!(
        text.ends_with(
            "] summarise the news\n[Your response will be delivered automatically to discord:dm-99 — reply normally.]"
        ),
        "{text}"
    );
    let runs = runs_when_done(&mut c, &task, 1, Duration::from_secs(10)).await;
    assert_eq!(
        (runs[0]["status"].clone(), runs[0]["summary"].clone()),
        (json!("ok"), json!(text))
    );

    // A reminder (into the main session) answers in Alice's chat.
    rpc(
        &mut c,
        "cron.add",
        json!({"schedule": {"kind": "at", "inSeconds": 1},
               "spec": {"kind": "systemEvent", "text": "drink water"}}),
    )
    .await;
    let out = discord.next_event("channel.outbound").await;
    let text = out["message"]["text"].as_str().unwrap();
    assert_eq!(out["peer"], json!({"kind": "dm", "id": "dm-81"}));
    assert!(text.contains("] drink water\n[Your response"), "{text}");

    // A silent task answers nobody.
    let r = rpc(
        &mut c,
        "cron.add",
        json!({"schedule": {"kind": "at", "inSeconds": 1},
               "spec": {"kind": "task", "message": "tidy up quietly", "deliver": false}}),
    )
    .await;
    let quiet = r["job"]["id"].as_str().unwrap().to_string();
    let runs = runs_when_done(&mut c, &quiet, 1, Duration::from_secs(10)).await;
    assert_eq!(runs[0]["status"], "ok");
    let nothing = tokio::time::timeout(
        Duration::from_secs(1),
        discord.next_event("channel.outbound"),
    )
    .await;
    assert!(nothing.is_err(), "{nothing:?}");
}

#[tokio::test]
async fn the_cron_trigger_brings_back_a_lost_alarm() {
    let (gw, _llm, mut c) = setup().await;
    c.config_set("agents.defaultHeartbeat", json!({"every": "0"}))
        .await;
    let added = now_ms();
    let r = rpc(
        &mut c,
        "cron.add",
        json!({"schedule": {"kind": "at", "inSeconds": 1},
               "spec": {"kind": "systemEvent", "text": "lost and found"}}),
    )
    .await;
    let id = r["job"]["id"].as_str().unwrap().to_string();
    let slot = r["job"]["state"]["nextRunAtMs"].as_i64().unwrap();
    gw.drop_alarm();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let r = rpc(&mut c, "cron.runs", json!({"jobId": id})).await;
    assert_eq!(r["count"], 0, "nothing runs without the alarm: {r}");
    // The Worker's cron trigger (every few minutes in production) wakes
    // the gateway, which sets its alarm again: the job runs, late.
    gw.trigger_scheduled();
    let runs = runs_when_done(&mut c, &id, 1, Duration::from_secs(10)).await;
    let summary = runs[0]["summary"].clone();
    assert_eq!(
        runs.into_iter()
            .map(|r| timeless(r, added, 2000..10_000))
            .collect::<Vec<_>>(),
        [json!({"id": format!("{id}:{slot}"), "jobId": id, "status": "ok", "summary": summary})]
    );
}

#[tokio::test]
async fn a_heartbeat_keeps_quiet_while_the_last_chat_is_being_answered() {
    let (gw, llm, mut c) = setup().await;
    let mut discord = raw_channel(&gw.url(), TOKEN, "discord").await;
    c.config_set("channels.discord.dmPolicy", json!("open"))
        .await;
    rpc(
        &mut c,
        "workspace.write",
        json!({"path": "HEARTBEAT.md", "content": "- Check the oven.\n"}),
    )
    .await;
    // Alice asks something whose answer takes long.
    llm.script("think it over", vec![Step::Hang]);
    let dm = json!({"channel": "discord", "accountId": "default",
        "message": {"messageId": "m1", "peer": {"kind": "dm", "id": "dm-81"},
                    "sender": {"id": "81", "name": "Alice"}, "text": "think it over",
                    "timestamp": 1_795_529_100_000i64}});
    rpc(&mut discord, "channel.inbound", dm).await;
    c.config_set(
        "agents.defaultHeartbeat",
        json!({"every": "2s", "activeHours": {"start": "00:00", "end": "00:00"}}),
    )
    .await;
    let state = poll::until(secs(15), ms(300), async || {
        let s = rpc(&mut c, "heartbeat.status", json!({})).await;
        if s["agents"]["main"]["lastStatus"] == "skipped" {
            Ok(s["agents"]["main"].clone())
        } else {
            Err(s)
        }
    })
    .await;
    assert_eq!(
        (state["lastSkipReason"].clone(), state["lastActive"].clone()),
        (json!("the target session is busy"), json!("discord:dm-81"))
    );
}

#[tokio::test]
async fn a_due_job_waits_while_max_concurrent_runs_go() {
    let (_gw, llm, mut c) = setup().await;
    c.config_set("cron.maxConcurrentRuns", json!(1)).await;
    llm.script("the slow one", vec![Step::Hang]);
    let added = now_ms();
    let mut ids = Vec::new();
    for (message, secs) in [("the slow one", 1), ("the quick one", 2)] {
        let r = rpc(
            &mut c,
            "cron.add",
            json!({"schedule": {"kind": "at", "inSeconds": secs},
                   "spec": {"kind": "task", "message": message, "timeoutSeconds": 5}}),
        )
        .await;
        ids.push(r["job"]["id"].as_str().unwrap().to_string());
    }
    // While the slow one runs, the quick one is due and waits.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let s = rpc(&mut c, "cron.status", json!({})).await;
    assert_eq!(
        (s["runningCount"].clone(), s["dueCount"].clone()),
        (json!(1), json!(1)),
        "{s}"
    );
    let r = rpc(&mut c, "cron.runs", json!({"jobId": ids[1]})).await;
    assert_eq!(r["count"], 0);
    // The slow one times out; then the quick one runs, late.
    let slow = runs_when_done(&mut c, &ids[0], 1, Duration::from_secs(20)).await;
    assert_eq!(slow[0]["error"], "timed out after 5 s");
    let quick = runs_when_done(&mut c, &ids[1], 1, Duration::from_secs(20)).await;
    let quick = timeless(quick[0].clone(), added, 3500..10_000);
    assert_eq!(quick["status"], "ok");
}
