//! Cron jobs, reminders and heartbeats end to end, under workerd with the
//! fake LLM, on short real intervals (slots a few seconds away; `every`
//! jobs anchored so their next slot is near): a reminder reaches the
//! client watching the main session once; an `every` task runs on its
//! grid with its own model and its timeout; a job due while workerd was
//! stopped runs once on restart, marked late; heartbeats skip, deliver and
//! stay silent; and the CLI round-trips `cron.*` and `heartbeat.*`.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::cron_rig::{job, now_ms, rpc, runs_when_done, setup, timeless, TOKEN};
use gsv_e2e::fake_llm::Step;
use gsv_e2e::harness::{run_gsv, Workerd};
use gsv_e2e::poll::{self, ms, secs};
use gsv_e2e::ws::{raw_channel, Client};
use gsv_protocol::ChatState;
use serde_json::{json, Value};
use std::time::Duration;

const MAIN: &str = "agent:main:main";

#[tokio::test]
async fn an_at_reminder_fires_once_and_reaches_the_watching_client() {
    let (_gw, _llm, mut c) = setup().await;
    let run = c.chat_send(MAIN, "hello").await;
    c.run_events(&run).await;
    let added = now_ms();
    let r = rpc(
        &mut c,
        "cron.add",
        json!({"schedule": {"kind": "at", "inSeconds": 2},
               "spec": {"kind": "systemEvent", "text": "take the bread out"}}),
    )
    .await;
    let id = r["job"]["id"].as_str().unwrap().to_string();
    let slot = r["job"]["state"]["nextRunAtMs"].as_i64().unwrap();
    assert!((added + 1500..added + 3000).contains(&slot), "{r}");
    assert_eq!(r["job"]["name"], "take the bread out");
    // The reminder is a run of the main session, which this client watches.
    let evt = loop {
        let evt = c.next_chat_within(Duration::from_secs(20)).await;
        let cron = evt
            .run_id
            .as_deref()
            .is_some_and(|r| r.starts_with("cron:"));
        if cron && evt.state == ChatState::Final {
            break evt;
        }
    };
    assert_eq!(evt.session_key, MAIN);
    assert_eq!(
        evt.run_id.as_deref(),
        Some(format!("cron:{id}:{slot}").as_str())
    );
    let text = evt.message.unwrap().text();
    assert!(text.starts_with("echo: [cron · "), "{text}");
    assert!(text.ends_with("] take the bread out"), "{text}");
    let runs = runs_when_done(&mut c, &id, 1, Duration::from_secs(10)).await;
    assert_eq!(
        runs.into_iter()
            .map(|r| timeless(r, added, 0..3000))
            .collect::<Vec<_>>(),
        [json!({"id": format!("{id}:{slot}"), "jobId": id, "status": "ok", "summary": text})]
    );
    // An `at` job is done: disabled, no next run, and it never fires again.
    let j = job(&mut c, &id).await;
    assert_eq!(
        (j["enabled"].clone(), j["state"].get("nextRunAtMs")),
        (json!(false), None)
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let r = rpc(&mut c, "cron.runs", json!({"jobId": id})).await;
    assert_eq!(r["count"], 1);
}

#[tokio::test]
async fn an_every_task_runs_on_its_grid_with_its_model_and_its_timeout() {
    let (gw, llm, mut c) = setup().await;
    llm.script("the slow task", vec![Step::Hang]);
    let added = now_ms();
    // Anchored so that the next slot of the minute grid is 2.5 s away.
    let anchor = added + 2500 - 60_000;
    let r = rpc(
        &mut c,
        "cron.add",
        json!({"name": "oven", "schedule": {"kind": "every", "everyMs": 60_000, "anchorMs": anchor},
               "spec": {"kind": "task", "message": "check the oven", "model": "openai/gpt-cheap"}}),
    )
    .await;
    let every = r["job"]["id"].as_str().unwrap().to_string();
    assert_eq!(r["job"]["state"]["nextRunAtMs"], anchor + 60_000);
    let r = rpc(
        &mut c,
        "cron.add",
        json!({"schedule": {"kind": "at", "inSeconds": 1},
               "spec": {"kind": "task", "message": "the slow task", "timeoutSeconds": 2}}),
    )
    .await;
    let slow = r["job"]["id"].as_str().unwrap().to_string();
    let slow_slot = r["job"]["state"]["nextRunAtMs"].as_i64().unwrap();

    let runs = runs_when_done(&mut c, &every, 1, Duration::from_secs(20)).await;
    let summary = runs[0]["summary"].as_str().unwrap_or_default().to_string();
    assert!(summary.ends_with("] check the oven"), "{summary}");
    assert_eq!(
        runs.into_iter()
            .map(|r| timeless(r, added, 0..3000))
            .collect::<Vec<_>>(),
        [
            json!({"id": format!("{every}:{}", anchor + 60_000), "jobId": every, "status": "ok",
                "summary": summary, "nextRunAtMs": anchor + 120_000})
        ]
    );
    let j = job(&mut c, &every).await;
    assert_eq!(j["state"]["nextRunAtMs"], anchor + 120_000);
    assert_eq!(j["state"]["lastStatus"], "ok");
    // The slow task is stopped at its timeout and recorded as an error.
    let runs = runs_when_done(&mut c, &slow, 1, Duration::from_secs(20)).await;
    assert_eq!(
        runs.into_iter()
            .map(|r| timeless(r, added, 0..3000))
            .collect::<Vec<_>>(),
        [
            json!({"id": format!("{slow}:{slow_slot}"), "jobId": slow, "status": "error",
                "error": "timed out after 2 s"})
        ]
    );
    // A minute later on the gateway's clock, the next slot runs.
    gw.advance_clock(60_000);
    let runs = runs_when_done(&mut c, &every, 2, Duration::from_secs(20)).await;
    assert_eq!(
        runs.iter().map(|r| r["id"].clone()).collect::<Vec<_>>(),
        [
            json!(format!("{every}:{}", anchor + 120_000)),
            json!(format!("{every}:{}", anchor + 60_000))
        ]
    );
    assert_eq!(runs[0]["nextRunAtMs"], anchor + 180_000);
    // The task ran in its own session, on the job's model.
    let models: Vec<Value> = llm
        .requests()
        .iter()
        .filter(|r| r.body.to_string().contains("check the oven"))
        .map(|r| r.body["model"].clone())
        .collect();
    assert_eq!(models, [json!("gpt-cheap"), json!("gpt-cheap")]);
    let sessions = rpc(&mut c, "sessions.list", json!({})).await;
    assert!(
        sessions
            .to_string()
            .contains(&format!("agent:main:cron:{every}")),
        "{sessions}"
    );
}

#[tokio::test]
async fn the_agent_sets_a_reminder_from_a_plain_conversation() {
    let (gw, llm, mut c) = setup().await;
    let add = json!({"action": "add", "name": "stretch", "schedule": {"kind": "at", "in": "2 minutes"},
                     "spec": {"kind": "systemEvent", "text": "Reminder: stand up and stretch"}});
    llm.script(
        "remind me in 2 minutes",
        vec![
            Step::tool_call("t1", "gsv__Cron", add),
            Step::text("I'll remind you in 2 minutes."),
        ],
    );
    let asked = now_ms();
    let run = c.chat_send(MAIN, "remind me in 2 minutes to stretch").await;
    let end = c.run_events(&run).await.pop().unwrap();
    assert_eq!(end.message.unwrap().text(), "I'll remind you in 2 minutes.");
    // The tool's answer told the model when, in words and in the user's zone.
    let last = llm.requests().pop().unwrap().body;
    let tool = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_string();
    let answer: Value = serde_json::from_str(&tool).unwrap();
    assert_eq!(
        (
            answer["ok"].clone(),
            answer["timezone"].clone(),
            answer["job"]["name"].clone()
        ),
        (json!(true), json!("UTC"), json!("stretch"))
    );
    let next = answer["nextRunHuman"].as_str().unwrap();
    assert!(
        next.contains("(in 1m 5") || next.contains("(in 2m)"),
        "{next}"
    );
    assert!(
        answer["currentTime"].as_str().unwrap().contains("UTC"),
        "{answer}"
    );
    let at = answer["job"]["state"]["nextRunAtMs"].as_i64().unwrap();
    assert!(
        (asked + 120_000..now_ms() + 120_000).contains(&at),
        "{answer}"
    );
    // Two minutes later (on the gateway's clock) the reminder arrives.
    gw.advance_clock(119_000);
    let evt = loop {
        let evt = c.next_chat_within(Duration::from_secs(20)).await;
        let cron = evt
            .run_id
            .as_deref()
            .is_some_and(|r| r.starts_with("cron:"));
        if cron && evt.state == ChatState::Final {
            break evt;
        }
    };
    assert_eq!(evt.session_key, MAIN);
    let text = evt.message.unwrap().text();
    assert!(text.ends_with("] Reminder: stand up and stretch"), "{text}");
}

#[tokio::test]
async fn a_job_due_while_the_gateway_was_down_runs_once_on_restart_marked_late() {
    let (mut gw, _llm, mut c) = setup().await;
    let added = now_ms();
    let anchor = added + 2000 - 60_000;
    let r = rpc(
        &mut c,
        "cron.add",
        json!({"schedule": {"kind": "every", "everyMs": 60_000, "anchorMs": anchor},
               "spec": {"kind": "task", "message": "water the plants"}}),
    )
    .await;
    let every = r["job"]["id"].as_str().unwrap().to_string();
    let r = rpc(
        &mut c,
        "cron.add",
        json!({"schedule": {"kind": "at", "inSeconds": 2},
               "spec": {"kind": "systemEvent", "text": "stand up"}}),
    )
    .await;
    let at = r["job"]["id"].as_str().unwrap().to_string();
    let at_slot = r["job"]["state"]["nextRunAtMs"].as_i64().unwrap();
    drop(c);
    gw.restart_after(Duration::from_secs(5));
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    let every_runs = runs_when_done(&mut c, &every, 1, Duration::from_secs(20)).await;
    let at_runs = runs_when_done(&mut c, &at, 1, Duration::from_secs(20)).await;
    let every_run = every_runs[0].clone();
    assert_eq!(every_runs.len(), 1, "{every_runs:?}");
    assert_eq!(at_runs.len(), 1, "{at_runs:?}");
    // Late by the downtime at least; the grid goes on from now.
    let late = every_run["lateMs"].as_i64().unwrap();
    assert!(late >= 3000, "{every_run}");
    let next = anchor + 60_000 * (1 + (now_ms() - anchor) / 60_000);
    assert_eq!(every_run["nextRunAtMs"], next);
    assert_eq!(every_run["status"], "ok");
    assert_eq!(every_run["id"], format!("{every}:{}", anchor + 60_000));
    let at_run = timeless(at_runs[0].clone(), added, 3000..60_000);
    assert_eq!(at_run["id"], format!("{at}:{at_slot}"));
    assert_eq!(at_run["status"], "ok");
    // Nothing fires twice for the slots it missed.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let all = rpc(&mut c, "cron.runs", json!({})).await;
    assert_eq!(all["count"], 2);
}

#[tokio::test]
async fn heartbeats_skip_an_empty_file_deliver_an_answer_and_keep_quiet_on_ok() {
    let (gw, llm, mut owner) = setup().await;
    let mut discord = raw_channel(&gw.url(), TOKEN, "discord").await;
    owner
        .config_set("channels.discord.dmPolicy", json!("open"))
        .await;
    // Alice speaks with the agent on Discord: her chat is the last active.
    let dm = json!({"channel": "discord", "accountId": "default",
        "message": {"messageId": "m1", "peer": {"kind": "dm", "id": "dm-81"},
                    "sender": {"id": "81", "name": "Alice"}, "text": "hi",
                    "timestamp": 1_795_529_100_000i64}});
    rpc(&mut discord, "channel.inbound", dm).await;
    discord.next_event("channel.outbound").await;

    // A scheduled beat with nothing in HEARTBEAT.md is skipped.
    rpc(
        &mut owner,
        "workspace.write",
        json!({"path": "HEARTBEAT.md", "content": "# Heartbeat\n\n<!-- nothing yet -->\n"}),
    )
    .await;
    owner
        .config_set(
            "agents.defaultHeartbeat",
            json!({"every": "2s", "activeHours": {"start": "00:00", "end": "00:00"}}),
        )
        .await;
    let state = poll::until(secs(15), ms(300), async || {
        let s = rpc(&mut owner, "heartbeat.status", json!({})).await;
        if s["agents"]["main"]["lastStatus"] == "skipped" {
            Ok(s["agents"]["main"].clone())
        } else {
            Err(s)
        }
    })
    .await;
    assert_eq!(state["lastSkipReason"], "HEARTBEAT.md has nothing to do");
    assert_eq!(state["lastActive"], "discord:dm-81");
    // Beats on their own model, with a light context.
    owner
        .config_set(
            "agents.defaultHeartbeat",
            json!({"every": "0", "model": "openai/gpt-beat"}),
        )
        .await;

    // With a task, the answer goes to Alice's chat.
    for (path, content) in [
        ("HEARTBEAT.md", "- Tell Alice the oven is on.\n"),
        ("USER.md", "The human loves tide pools.\n"),
    ] {
        rpc(
            &mut owner,
            "workspace.write",
            json!({"path": path, "content": content}),
        )
        .await;
    }
    let r = rpc(&mut owner, "heartbeat.trigger", json!({})).await;
    assert_eq!(r["message"], "Heartbeat started");
    let out = discord.next_event("channel.outbound").await;
    assert_eq!(out["peer"], json!({"kind": "dm", "id": "dm-81"}));
    let text = out["message"]["text"].as_str().unwrap();
    assert!(text.starts_with("echo: Read HEARTBEAT.md"), "{text}");
    let s = wait_outcome(&mut owner, "delivered").await;
    assert_eq!(s["lastStatus"], "ok");
    let beat = llm
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.body.to_string().contains("Read HEARTBEAT.md"))
        .unwrap()
        .body;
    let prompt = beat["messages"][0]["content"].as_str().unwrap_or_default();
    assert_eq!(beat["model"], "gpt-beat");
    assert!(prompt.contains("Tell Alice the oven is on"), "{prompt}");
    assert!(!prompt.contains("tide pools"), "{prompt}");

    // The same answer within a day is not sent again.
    rpc(&mut owner, "heartbeat.trigger", json!({})).await;
    wait_outcome(&mut owner, "duplicate").await;

    // `HEARTBEAT_OK` stays silent.
    llm.script("Read HEARTBEAT.md", vec![Step::text("HEARTBEAT_OK")]);
    rpc(&mut owner, "heartbeat.trigger", json!({})).await;
    wait_outcome(&mut owner, "ack").await;
    let quiet = tokio::time::timeout(
        Duration::from_secs(1),
        discord.next_event("channel.outbound"),
    )
    .await;
    assert!(quiet.is_err(), "{quiet:?}");
}

/// The main agent's heartbeat state once its last answer's outcome is `o`
/// (each trigger clears it first).
async fn wait_outcome(c: &mut Client, o: &str) -> Value {
    poll::until(secs(15), ms(200), async || {
        let s = rpc(c, "heartbeat.status", json!({})).await;
        let main = s["agents"]["main"].clone();
        if main["lastOutcome"] == o && main["lastStatus"] != "running" {
            Ok(main)
        } else {
            Err(s)
        }
    })
    .await
}

fn gsv(gw: &Workerd, args: &[&str]) -> String {
    let out = run_gsv(&gw.url(), TOKEN, args);
    assert!(
        out.status.success(),
        "gsv {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test]
async fn cron_and_heartbeat_round_trip_through_the_cli() {
    let (gw, _llm, mut c) = setup().await;
    let added = gsv(&gw, &["cron", "add", "--in", "1h", "buy milk"]);
    let id = added
        .strip_prefix("Added ")
        .and_then(|r| r.strip_suffix(" (buy milk).\n"))
        .unwrap_or_else(|| panic!("{added}"))
        .to_string();
    let list = gsv(&gw, &["cron", "list"]);
    assert!(
        list.starts_with(&format!("{id}  buy milk  [main] ")) && list.contains("; next "),
        "{list}"
    );
    assert_eq!(
        gsv(&gw, &["cron", "edit", &id, "--disable"]),
        format!("Updated {id} (buy milk).\n")
    );
    assert!(gsv(&gw, &["cron", "list"]).contains("; disabled; last: never ran"));
    let task = gsv(
        &gw,
        &[
            "cron",
            "add",
            "--cron",
            "0 9 * * 1-5",
            "--tz",
            "Europe/Paris",
            "--task",
            "--name",
            "inbox",
            "summarize",
        ],
    );
    let task_id = task
        .strip_prefix("Added ")
        .and_then(|r| r.strip_suffix(" (inbox).\n"))
        .unwrap_or_else(|| panic!("{task}"))
        .to_string();
    let j = job(&mut c, &task_id).await;
    assert_eq!(
        (j["schedule"].clone(), j["spec"].clone()),
        (
            json!({"kind": "cron", "expr": "0 9 * * 1-5", "tz": "Europe/Paris"}),
            json!({"kind": "task", "message": "summarize"})
        )
    );
    let ran = gsv(&gw, &["cron", "run", &task_id]);
    assert!(
        ran.starts_with(&format!("{task_id}: started (run {task_id}:manual:")),
        "{ran}"
    );
    runs_when_done(&mut c, &task_id, 1, Duration::from_secs(20)).await;
    let runs = gsv(&gw, &["cron", "runs", &task_id]);
    assert!(runs.contains(&format!("  {task_id}  ok, took ")), "{runs}");
    assert!(
        gsv(&gw, &["cron", "status"]).starts_with("cron on: 2 jobs (0 due, 0 running), next run "),
    );
    assert_eq!(gsv(&gw, &["cron", "rm", &id]), format!("Removed {id}.\n"));
    let status = gsv(&gw, &["heartbeat", "status"]);
    assert!(status.starts_with("main: every 30 min; next "), "{status}");
    assert_eq!(gsv(&gw, &["heartbeat", "trigger"]), "Heartbeat started\n");
}
