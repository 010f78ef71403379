//! How the CLI words schedules for the gateway and reads its answers.

use super::*;

#[test]
fn durations_in_people_units() {
    let got: Vec<Option<i64>> = ["90s", "20m", "2h", "1d", "3 hours", "soon", "m"]
        .iter()
        .map(|t| duration_ms(t))
        .collect();
    assert_eq!(
        got,
        [
            Some(90_000),
            Some(1_200_000),
            Some(7_200_000),
            Some(86_400_000),
            Some(10_800_000),
            None,
            None
        ]
    );
}

#[test]
fn utc_dates_for_run_history() {
    assert_eq!(dates_utc(0), "1970-01-01 00:00 UTC");
    assert_eq!(dates_utc(1_795_996_800_000), "2026-11-30 00:00 UTC");
}

#[test]
fn runs_say_late_and_answer() {
    let r = CronRunsResult {
        runs: vec![CronRun {
            id: "j:1".into(),
            job_id: "j".into(),
            ts: 0,
            status: RunStatus::Ok,
            error: None,
            summary: Some("Bread is out.\nmore".into()),
            duration_ms: Some(1200),
            next_run_at_ms: None,
            late_ms: Some(180_000),
        }],
        count: 1,
    };
    assert_eq!(
        render_runs(&r),
        "1970-01-01 00:00 UTC  j  ok, 3 min late, took 1200 ms: Bread is out.\n"
    );
}

#[test]
fn heartbeats_from_this_gateway_and_from_v1() {
    let ours: HeartbeatStatusResult = serde_json::from_value(serde_json::json!({"agents": {
        "main": {"agentId": "main", "everyMs": 1_800_000, "nextHeartbeatAt": 1_795_996_800_000i64,
                 "lastStatus": "skipped", "lastSkipReason": "outside active hours",
                 "lastActive": "discord:81"},
        "quiet": {"agentId": "quiet", "everyMs": 0}}}))
    .unwrap();
    assert_eq!(
        ours.agents["main"].last_active.as_deref(),
        Some("discord:81")
    );
    assert_eq!(
        render_heartbeats(&ours.agents),
        "main: every 30 min; next 2026-11-30 00:00 UTC; skipped (outside active hours)\n\
         quiet: off; next -; never ran\n"
    );
    // GSV v1's gateway (9c85870e): no interval, lastActive an object.
    let v1: HeartbeatStatusResult = serde_json::from_value(serde_json::json!({"agents": {
        "main": {"agentId": "main", "lastHeartbeatAt": null, "lastHeartbeatSentAt": null,
                 "lastHeartbeatText": null, "nextHeartbeatAt": 1_795_996_800_000i64,
                 "lastActive": {"channel": "whatsapp", "accountId": "default",
                                "peer": {"kind": "dm", "id": "+4915100000", "name": "Ana"},
                                "timestamp": 1_795_996_000_000i64}}}}))
    .unwrap();
    assert_eq!(v1.agents["main"].every_ms, None);
    assert_eq!(
        v1.agents["main"].last_active.as_deref(),
        Some("whatsapp:+4915100000")
    );
    assert_eq!(
        render_heartbeats(&v1.agents),
        "main: next 2026-11-30 00:00 UTC; never ran\n"
    );
}
