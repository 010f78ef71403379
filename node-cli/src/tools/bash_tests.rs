use std::time::{Duration, Instant};

use gsv_protocol::ExecEventKind;
use serde_json::json;

use super::*;
use crate::tools::tests::toolbox;

/// Drops the fields that vary between runs (checking they are there).
pub fn strip(mut v: Value, keys: &[&str]) -> Value {
    for key in keys {
        let removed = v.as_object_mut().unwrap().remove(*key);
        assert!(removed.is_some(), "missing {key} in {v}");
    }
    v
}

pub const VARYING: &[&str] = &["sessionId", "startedAt", "endedAt", "durationMs"];

/// Whether `pid` runs (a zombie waiting for init to reap it does not).
fn pid_alive(pid: i32) -> bool {
    if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
        return state != Some('Z');
    }
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[tokio::test]
async fn runs_with_merged_output_and_exit_code() {
    let (_dir, tb, _rx) = toolbox();
    let ws = show(tb.workspace());
    let out = tb
        .call(
            "Bash",
            json!({"command": "echo out; echo err >&2; echo out2; exit 3"}),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        strip(out, VARYING),
        json!({
            "status": "failed", "exitCode": 3, "signal": null, "timedOut": false,
            "output": "out\nerr\nout2\n", "tail": "out\nerr\nout2\n", "truncated": false,
            "workdir": ws
        })
    );
    std::fs::create_dir(tb.workspace().join("sub")).unwrap();
    let out = tb
        .call("Bash", json!({"command": "pwd", "workdir": "sub"}), None)
        .await
        .unwrap();
    assert_eq!(out["status"], "completed");
    assert_eq!(out["exitCode"], 0);
    assert_eq!(out["output"], format!("{ws}/sub\n"));
    assert_eq!(out["workdir"], format!("{ws}/sub"));
    // Stdin is closed for foreground commands: `cat` does not hang.
    let out = tb
        .call("Bash", json!({"command": "cat; echo eof"}), None)
        .await
        .unwrap();
    assert_eq!(out["output"], "eof\n");
    let err = tb
        .call("Bash", json!({"command": "true", "workdir": "nope"}), None)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        format!("workdir {ws}/nope is not an existing directory")
    );
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let (_dir, tb, _rx) = toolbox();
    let started = Instant::now();
    let out = tb
        .call(
            "Bash",
            json!({"command": "sleep 30 & echo $!; sleep 30; wait", "timeout": 300}),
            None,
        )
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_millis(1300), "took {elapsed:?}");
    let grandchild: i32 = out["output"].as_str().unwrap().trim().parse().unwrap();
    assert_eq!(
        (
            out["status"].clone(),
            out["timedOut"].clone(),
            out["signal"].clone(),
            out["exitCode"].clone()
        ),
        (json!("failed"), json!(true), json!("SIGTERM"), json!(null))
    );
    let deadline = Instant::now() + Duration::from_secs(1);
    while pid_alive(grandchild) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!pid_alive(grandchild), "grandchild {grandchild} survived");
}

#[tokio::test]
async fn timeout_escalates_to_sigkill() {
    let (_dir, tb, _rx) = toolbox();
    let started = Instant::now();
    let out = tb
        .call(
            "Bash",
            json!({"command": "trap '' TERM; sleep 30 & echo $!; wait", "timeout": 100}),
            None,
        )
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(1100),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(out["signal"], "SIGKILL");
    assert_eq!(out["timedOut"], true);
    let grandchild: i32 = out["output"].as_str().unwrap().trim().parse().unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!pid_alive(grandchild), "grandchild {grandchild} survived");
}

#[tokio::test]
async fn output_cap_keeps_a_utf8_tail() {
    let (_dir, tb, _rx) = toolbox();
    // 200001 lines of 5 characters (13 bytes) and "x": 1000006 characters.
    let out = tb
        .call(
            "Bash",
            json!({"command": "yes '€€€€' | head -n 200001; printf x"}),
            None,
        )
        .await
        .unwrap();
    let expected = format!("€€€\n{}x", "€€€€\n".repeat(39_999));
    assert_eq!(out["output"].as_str().unwrap().chars().count(), 200_000);
    assert!(out["output"] == expected.as_str());
    assert_eq!(out["truncated"], true);
    assert_eq!(out["tail"], format!("€€€\n{}x", "€€€€\n".repeat(799)));
    assert_eq!(out["status"], "completed");
}

#[tokio::test]
async fn background_timeout_reports_timed_out() {
    let (_dir, tb, mut rx) = toolbox();
    let out = tb
        .call(
            "Bash",
            json!({"command": "echo begun; sleep 30", "timeout": 100, "background": true}),
            Some("call-9"),
        )
        .await
        .unwrap();
    assert_eq!(out["status"], "running");
    let id = out["sessionId"].as_str().unwrap().to_string();
    let started = rx.recv().await.unwrap();
    assert_eq!(
        (started.event, started.session_id.as_str()),
        (ExecEventKind::Started, id.as_str())
    );
    assert_eq!(started.call_id.as_deref(), Some("call-9"));
    let ended = tokio::time::timeout(Duration::from_secs(3), rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ended.event, ExecEventKind::TimedOut);
    assert_eq!(ended.signal.as_deref(), Some("SIGTERM"));
    assert_eq!(ended.exit_code, None);
    assert_eq!(ended.output_tail.as_deref(), Some("begun\n"));
    assert_eq!(ended.call_id.as_deref(), Some("call-9"));
    assert!(ended.ended_at.unwrap() >= ended.started_at.unwrap());
    assert_ne!(ended.event_id, started.event_id);
}

#[tokio::test]
async fn yield_returns_finished_commands_in_full() {
    let (_dir, tb, mut rx) = toolbox();
    let out = tb
        .call(
            "Bash",
            json!({"command": "echo quick", "yieldMs": 5000}),
            None,
        )
        .await
        .unwrap();
    assert_eq!(out["status"], "completed");
    assert_eq!(out["output"], "quick\n");
    assert!(rx.try_recv().is_err(), "no events for a foreground command");
}
