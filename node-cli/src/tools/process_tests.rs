use std::time::Duration;

use gsv_protocol::{ExecEventKind, NodeExecEventParams};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

use super::*;
use crate::tools::tests::toolbox;
use crate::tools::Toolbox;

async fn process(tb: &Toolbox, args: Value) -> Value {
    tb.call("Process", args, None).await.unwrap()
}

async fn next_event(rx: &mut UnboundedReceiver<NodeExecEventParams>) -> NodeExecEventParams {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .unwrap()
        .unwrap()
}

/// Polls until the accumulated output is `want` (or 5 s pass).
async fn poll_until(tb: &Toolbox, id: &str, want: &str) -> String {
    let mut got = String::new();
    for _ in 0..500 {
        let out = process(tb, json!({"action": "poll", "sessionId": id})).await;
        got.push_str(out["output"].as_str().unwrap());
        if got == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    got
}

#[tokio::test]
async fn background_session_poll_submit_log_and_events() {
    let (_dir, tb, mut rx) = toolbox();
    let command = "echo hi; read line; echo got $line; echo err >&2";
    let out = tb
        .call(
            "Bash",
            json!({"command": command, "background": true}),
            Some("c1"),
        )
        .await
        .unwrap();
    let id = out["sessionId"].as_str().unwrap().to_string();
    assert_eq!(out["status"], "running");
    assert!(out["pid"].as_u64().unwrap() > 1);
    assert_eq!(out["workdir"], show(tb.workspace()));
    assert_eq!(next_event(&mut rx).await.event, ExecEventKind::Started);

    assert_eq!(poll_until(&tb, &id, "hi\n").await, "hi\n");
    let listed = process(&tb, json!({"action": "list"})).await;
    assert_eq!(listed["count"], 1);
    assert_eq!(listed["sessions"][0]["status"], "running");
    assert_eq!(listed["sessions"][0]["command"], command);
    assert!(listed["text"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{id} running ")));

    let sent = process(
        &tb,
        json!({"action": "submit", "sessionId": id, "data": "abc"}),
    )
    .await;
    assert_eq!(
        sent,
        json!({"sessionId": id, "bytes": 4, "stdinClosed": false})
    );
    let ended = next_event(&mut rx).await;
    assert_eq!(
        (
            ended.event,
            ended.exit_code,
            ended.signal.clone(),
            ended.output_tail.as_deref()
        ),
        (
            ExecEventKind::Finished,
            Some(0),
            None,
            Some("hi\ngot abc\nerr\n")
        )
    );
    assert_eq!(ended.call_id.as_deref(), Some("c1"));

    let polled = process(&tb, json!({"action": "poll", "sessionId": id})).await;
    assert_eq!(
        strip_ended(polled),
        json!({"sessionId": id, "output": "got abc\nerr\n", "truncated": false, "status": "completed",
               "exitCode": 0, "signal": null, "timedOut": false})
    );
    let log = process(
        &tb,
        json!({"action": "log", "sessionId": id, "offset": 1, "limit": 1}),
    )
    .await;
    assert_eq!(
        (log["content"].clone(), log["totalLines"].clone()),
        (json!("got abc"), json!(3))
    );
    let log = process(&tb, json!({"action": "log", "sessionId": id, "limit": 2})).await;
    assert_eq!(
        (log["content"].clone(), log["offset"].clone()),
        (json!("got abc\nerr"), json!(1))
    );
    let err = tb
        .call(
            "Process",
            json!({"action": "write", "sessionId": id, "data": "x"}),
            None,
        )
        .await;
    assert_eq!(err.unwrap_err(), format!("session {id} has already ended"));
}

fn strip_ended(mut v: Value) -> Value {
    assert!(v.as_object_mut().unwrap().remove("endedAt").is_some());
    v
}

#[tokio::test]
async fn write_with_eof_and_kill() {
    let (_dir, tb, mut rx) = toolbox();
    let out = tb
        .call("Bash", json!({"command": "cat", "background": true}), None)
        .await
        .unwrap();
    let id = out["sessionId"].as_str().unwrap().to_string();
    next_event(&mut rx).await;
    process(
        &tb,
        json!({"action": "write", "sessionId": id, "data": "a"}),
    )
    .await;
    process(
        &tb,
        json!({"action": "write", "sessionId": id, "data": "b\n", "eof": true}),
    )
    .await;
    let ended = next_event(&mut rx).await;
    assert_eq!(
        (ended.event, ended.output_tail.as_deref()),
        (ExecEventKind::Finished, Some("ab\n"))
    );

    // yieldMs leaves a long command in the background; kill ends its group.
    let out = tb
        .call(
            "Bash",
            json!({"command": "echo start; sleep 30 & sleep 30", "yieldMs": 100}),
            None,
        )
        .await
        .unwrap();
    assert_eq!(out["status"], "running");
    assert_eq!(out["tail"], "start\n");
    let id = out["sessionId"].as_str().unwrap().to_string();
    assert_eq!(next_event(&mut rx).await.event, ExecEventKind::Started);
    let killed = process(&tb, json!({"action": "kill", "sessionId": id})).await;
    assert_eq!(
        strip_ended(killed),
        json!({"sessionId": id, "killed": true, "status": "failed", "exitCode": null,
               "signal": "SIGKILL", "timedOut": false})
    );
    let ended = next_event(&mut rx).await;
    assert_eq!(
        (ended.event, ended.signal.as_deref()),
        (ExecEventKind::Failed, Some("SIGKILL"))
    );
    let again = process(&tb, json!({"action": "kill", "sessionId": id})).await;
    assert_eq!(again["killed"], false);
    assert_eq!(process(&tb, json!({"action": "list"})).await["count"], 2);
}

#[tokio::test]
async fn process_errors() {
    let (_dir, tb, _rx) = toolbox();
    let err = |args: Value| {
        let tb = tb.clone();
        async move { tb.call("Process", args, None).await.unwrap_err() }
    };
    assert_eq!(
        err(json!({"action": "poll", "sessionId": "zz"})).await,
        "no background session \"zz\" (use action \"list\" to see the sessions)"
    );
    assert_eq!(
        err(json!({"action": "poll"})).await,
        "missing required argument `sessionId`"
    );
    assert_eq!(err(json!({})).await, "missing required argument `action`");
    let out = tb
        .call(
            "Bash",
            json!({"command": "sleep 5", "background": true}),
            None,
        )
        .await
        .unwrap();
    let id = out["sessionId"].as_str().unwrap();
    assert_eq!(
        err(json!({"action": "stop", "sessionId": id})).await,
        "argument `action` must be one of list, poll, log, write, submit, kill; got \"stop\""
    );
    assert_eq!(
        process(&tb, json!({"action": "list"})).await["text"]
            .as_str()
            .unwrap()
            .split(' ')
            .nth(1),
        Some("running")
    );
    process(&tb, json!({"action": "kill", "sessionId": id})).await;
    let empty = tb
        .call("Process", json!({"action": "list"}), None)
        .await
        .unwrap();
    assert_eq!(empty["count"], 1);
}

#[tokio::test]
async fn shutdown_ends_running_commands() {
    let (_dir, tb, mut rx) = toolbox();
    let out = tb
        .call(
            "Bash",
            json!({"command": "sleep 30", "background": true}),
            None,
        )
        .await
        .unwrap();
    assert_eq!(next_event(&mut rx).await.event, ExecEventKind::Started);
    let started = std::time::Instant::now();
    tb.shutdown().await;
    assert!(started.elapsed() < Duration::from_secs(1));
    let ended = next_event(&mut rx).await;
    assert_eq!(
        (ended.event, ended.signal.as_deref()),
        (ExecEventKind::Failed, Some("SIGTERM"))
    );
    assert_eq!(ended.session_id, out["sessionId"].as_str().unwrap());
}
