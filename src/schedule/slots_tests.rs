//! Catch-up: one run per missed stretch, stable run ids, the job after a
//! run, the alarm time; and the stored shapes on the wire.

use super::slots::STALE_RUNNING_MS;
use super::slots::{
    catch_up, due, finish, manual, next_alarm, overlapped, run_id, skip, start, AfterRun, Due,
    RunOutcome, Slot,
};
use super::{CronJob, CronLimits, CronRun, JobSpec, JobState, RunStatus, Schedule};
use crate::time::test_tz::{utc, Tz};
use crate::time::{Utc, HOUR_MS, MINUTE_MS};
use serde_json::json;

fn job(schedule: Schedule, next: Option<&str>) -> CronJob {
    CronJob {
        id: "j1".into(),
        agent_id: "main".into(),
        name: "standup".into(),
        description: None,
        enabled: true,
        delete_after_run: false,
        created_at_ms: utc("2026-11-01T00:00:00Z"),
        updated_at_ms: utc("2026-11-01T00:00:00Z"),
        schedule,
        spec: JobSpec::SystemEvent {
            text: "Standup in 5".into(),
        },
        state: JobState {
            next_run_at_ms: next.map(utc),
            ..JobState::default()
        },
        made_by: Default::default(),
    }
}

fn daily_9() -> Schedule {
    Schedule::Cron {
        expr: "0 9 * * *".into(),
        tz: Some("Europe/Berlin".into()),
    }
}

#[test]
fn missed_slots_fire_once_then_move_to_the_future() {
    let tz = Tz::named("Europe/Berlin");
    // Slept from Monday's 09:00 CET (08:00Z) to Thursday 10:30 CET.
    let j = job(daily_9(), Some("2026-11-23T08:00:00Z"));
    let now = utc("2026-11-26T09:30:00Z");
    let d = due(&j, now, &tz).unwrap();
    assert_eq!(
        d,
        Some(Due {
            job_id: "j1".into(),
            slot_ms: utc("2026-11-23T08:00:00Z"),
            late_ms: 3 * 24 * HOUR_MS + 90 * MINUTE_MS,
            fired_at_ms: now,
            run_id: "j1:1795420800000".into(),
            next_run_at_ms: Some(utc("2026-11-27T08:00:00Z")),
            manual: false,
        })
    );
    let running = start(&j, d.as_ref().unwrap());
    assert_eq!(running.state.running_at_ms, Some(now));
    assert_eq!(
        running.state.next_run_at_ms,
        Some(utc("2026-11-27T08:00:00Z"))
    );
    // Not due again until the next slot; the same slot keeps its run id.
    assert_eq!(due(&running, now + MINUTE_MS, &tz).unwrap(), None);
    assert_eq!(
        run_id("j1", utc("2026-11-23T08:00:00Z")),
        "j1:1795420800000"
    );
}

#[test]
fn not_due_cases() {
    let tz = Utc;
    let now = utc("2026-11-24T08:00:00Z");
    let mut disabled = job(daily_9(), Some("2026-11-24T07:00:00Z"));
    disabled.enabled = false;
    let mut running = job(daily_9(), Some("2026-11-24T07:00:00Z"));
    running.state.running_at_ms = Some(now - HOUR_MS);
    let cases = [
        job(daily_9(), Some("2026-11-24T08:00:01Z")),
        job(daily_9(), None),
        disabled,
        running.clone(),
    ];
    for j in cases {
        assert_eq!(due(&j, now, &tz).unwrap(), None, "{j:?}");
    }
    // A run that started long ago died with its isolate: due again.
    running.state.running_at_ms = Some(now - STALE_RUNNING_MS);
    assert_eq!(
        due(&running, now, &tz).unwrap().map(|d| d.slot_ms),
        Some(utc("2026-11-24T07:00:00Z"))
    );
}

#[test]
fn catch_up_on_plain_data() {
    let tz = Tz::named("America/New_York");
    let now = utc("2026-11-24T15:00:00Z"); // 10:00 EST
    let daily = Schedule::Cron {
        expr: "0 9 * * *".into(),
        tz: None,
    };
    let once = Schedule::At { at_ms: 5 };
    let slot = |slot: &str, late: i64, next: Option<&str>| {
        Some(Slot {
            slot_ms: utc(slot),
            late_ms: late,
            next_run_at_ms: next.map(utc),
        })
    };
    let cases = [
        (
            &daily,
            Some("2026-11-24T15:00:00Z"),
            slot("2026-11-24T15:00:00Z", 0, Some("2026-11-25T14:00:00Z")),
        ),
        (
            &daily,
            Some("2026-11-20T14:00:00Z"),
            slot(
                "2026-11-20T14:00:00Z",
                4 * 24 * HOUR_MS + HOUR_MS,
                Some("2026-11-25T14:00:00Z"),
            ),
        ),
        (&daily, Some("2026-11-25T14:00:00Z"), None),
        (&daily, None, None),
        (
            &once,
            Some("2026-11-24T14:59:00Z"),
            slot("2026-11-24T14:59:00Z", MINUTE_MS, None),
        ),
    ];
    for (schedule, stored, want) in cases {
        assert_eq!(
            catch_up(schedule, stored.map(utc), now, &tz).unwrap(),
            want,
            "{stored:?}"
        );
    }
}

#[test]
fn every_catches_up_on_its_grid() {
    let s = Schedule::Every {
        every_ms: 15 * MINUTE_MS,
        anchor_ms: utc("2026-11-24T00:00:00Z"),
    };
    let j = job(s, Some("2026-11-24T01:00:00Z"));
    let d = due(&j, utc("2026-11-24T03:07:00Z"), &Utc).unwrap().unwrap();
    assert_eq!(
        (d.slot_ms, d.late_ms, d.next_run_at_ms),
        (
            utc("2026-11-24T01:00:00Z"),
            127 * MINUTE_MS,
            Some(utc("2026-11-24T03:15:00Z"))
        )
    );
}

fn ok() -> RunOutcome {
    RunOutcome {
        status: RunStatus::Ok,
        error: None,
        summary: Some("queued".into()),
    }
}

#[test]
fn finish_records_the_run() {
    let j = job(daily_9(), Some("2026-11-24T08:00:00Z"));
    let now = utc("2026-11-24T08:00:30Z");
    let d = due(&j, now, &Tz::named("Europe/Berlin")).unwrap().unwrap();
    let failed = RunOutcome {
        status: RunStatus::Error,
        error: Some("session unavailable".into()),
        summary: None,
    };
    let (after, run) = finish(&start(&j, &d), &d, failed, now + 1500);
    let mut want = j;
    want.updated_at_ms = now + 1500;
    want.state = JobState {
        next_run_at_ms: Some(utc("2026-11-25T08:00:00Z")),
        running_at_ms: None,
        last_run_at_ms: Some(now),
        last_status: Some(RunStatus::Error),
        last_error: Some("session unavailable".into()),
        last_duration_ms: Some(1500),
        last_late_ms: Some(30_000),
    };
    assert_eq!(after, AfterRun::Keep(Box::new(want)));
    assert_eq!(
        run,
        CronRun {
            id: "j1:1795507200000".into(),
            job_id: "j1".into(),
            ts: now,
            status: RunStatus::Error,
            error: Some("session unavailable".into()),
            summary: None,
            duration_ms: Some(1500),
            next_run_at_ms: Some(utc("2026-11-25T08:00:00Z")),
            late_ms: Some(30_000),
        }
    );
}

#[test]
fn at_jobs_run_once() {
    let reminder = || {
        job(
            Schedule::At {
                at_ms: utc("2026-11-24T09:00:00Z"),
            },
            Some("2026-11-24T09:00:00Z"),
        )
    };
    let now = utc("2026-11-24T09:00:05Z");
    let j = reminder();
    let d = due(&j, now, &Utc).unwrap().unwrap();
    assert_eq!(d.next_run_at_ms, None);
    let (after, run) = finish(&j, &d, ok(), now);
    let AfterRun::Keep(kept) = after else {
        panic!("kept")
    };
    assert!(!kept.enabled);
    assert_eq!(kept.state.next_run_at_ms, None);
    assert_eq!(run.next_run_at_ms, None);
    // deleteAfterRun: deleted when ok, kept (disabled) on error.
    let mut once = reminder();
    once.delete_after_run = true;
    assert_eq!(finish(&once, &d, ok(), now).0, AfterRun::Delete);
    let err = RunOutcome {
        status: RunStatus::Error,
        error: Some("x".into()),
        summary: None,
    };
    assert!(matches!(finish(&once, &d, err, now).0, AfterRun::Keep(j) if !j.enabled));
}

#[test]
fn manual_runs_leave_the_schedule_alone() {
    let j = job(daily_9(), Some("2026-11-25T08:00:00Z"));
    let now = utc("2026-11-24T12:00:00Z");
    let d = manual(&j, now);
    assert_eq!(d.run_id, format!("j1:manual:{now}"));
    assert_eq!((d.slot_ms, d.late_ms), (now, 0));
    let (after, run) = finish(&start(&j, &d), &d, ok(), now + 10);
    let AfterRun::Keep(kept) = after else {
        panic!("kept")
    };
    assert_eq!(kept.state.next_run_at_ms, Some(utc("2026-11-25T08:00:00Z")));
    assert_eq!(kept.state.running_at_ms, None);
    assert_eq!(run.ts, now);
}

#[test]
fn alarm_time() {
    let now = utc("2026-11-24T08:00:00Z");
    let a = job(daily_9(), Some("2026-11-24T10:00:00Z"));
    let b = job(daily_9(), Some("2026-11-24T09:00:00Z"));
    let mut off = job(daily_9(), Some("2026-11-24T08:30:00Z"));
    off.enabled = false;
    let mut busy = job(daily_9(), Some("2026-11-24T08:10:00Z"));
    busy.state.running_at_ms = Some(now - HOUR_MS);
    assert_eq!(
        next_alarm([&a, &b, &off], now, 4),
        Some(utc("2026-11-24T09:00:00Z"))
    );
    // A running job's next slot counts too: it is recorded as skipped then.
    assert_eq!(
        next_alarm([&a, &busy], now, 4),
        Some(utc("2026-11-24T08:10:00Z"))
    );
    assert_eq!(next_alarm([&off], now, 4), None);
    // No room for another run: only the running job's slot counts.
    let mut early = job(daily_9(), Some("2026-11-24T08:05:00Z"));
    early.id = "j2".into();
    assert_eq!(
        next_alarm([&a, &early, &busy], now, 1),
        Some(utc("2026-11-24T08:10:00Z"))
    );
    assert_eq!(
        next_alarm([&a, &early], now, 1),
        Some(utc("2026-11-24T08:05:00Z"))
    );
    // A stale run holds no room.
    busy.state.running_at_ms = Some(now - STALE_RUNNING_MS);
    assert_eq!(
        next_alarm([&a, &early, &busy], now, 1),
        Some(utc("2026-11-24T08:05:00Z"))
    );
}

#[test]
fn a_slot_reached_during_a_run_is_skipped_and_the_schedule_moves_on() {
    let tz = Tz::named("Europe/Berlin");
    let mut j = job(daily_9(), Some("2026-11-24T08:00:00Z"));
    let now = utc("2026-11-24T08:00:30Z");
    j.state.running_at_ms = Some(now - 90_000);
    j.state.last_status = Some(RunStatus::Ok);
    // Not due (it runs), but overlapped.
    assert_eq!(due(&j, now, &tz).unwrap(), None);
    let d = overlapped(&j, now, &tz).unwrap().unwrap();
    assert_eq!(
        d,
        Due {
            job_id: "j1".into(),
            slot_ms: utc("2026-11-24T08:00:00Z"),
            late_ms: 30_000,
            fired_at_ms: now,
            run_id: "j1:1795507200000".into(),
            next_run_at_ms: Some(utc("2026-11-25T08:00:00Z")),
            manual: false,
        }
    );
    let (after, run) = skip(&j, &d);
    let mut expected = j.clone();
    expected.state.next_run_at_ms = Some(utc("2026-11-25T08:00:00Z"));
    assert_eq!(after, expected, "the run that goes keeps its state");
    assert_eq!(
        run,
        CronRun {
            id: "j1:1795507200000".into(),
            job_id: "j1".into(),
            ts: now,
            status: RunStatus::Skipped,
            error: Some("the previous run was still going (started 90 s earlier)".into()),
            summary: None,
            duration_ms: Some(0),
            next_run_at_ms: Some(utc("2026-11-25T08:00:00Z")),
            late_ms: Some(30_000),
        }
    );
    // A stale run (its isolate died) no longer holds the job: it is due.
    j.state.running_at_ms = Some(now - STALE_RUNNING_MS);
    assert_eq!(overlapped(&j, now, &tz).unwrap(), None);
    assert!(due(&j, now, &tz).unwrap().is_some());
    // Neither for a slot not reached yet, nor for a job switched off.
    j.state.running_at_ms = Some(now - 1000);
    assert_eq!(
        overlapped(&j, utc("2026-11-24T07:59:00Z"), &tz).unwrap(),
        None
    );
    j.enabled = false;
    assert_eq!(overlapped(&j, now, &tz).unwrap(), None);
}

#[test]
fn a_one_shot_whose_slot_passes_during_a_manual_run_is_done() {
    let at = utc("2026-11-24T08:00:00Z");
    let mut j = job(Schedule::At { at_ms: at }, Some("2026-11-24T08:00:00Z"));
    let now = at + 5_000;
    j.state.running_at_ms = Some(now - 10_000);
    let d = overlapped(&j, now, &Utc).unwrap().unwrap();
    assert_eq!(d.next_run_at_ms, None);
    let (after, run) = skip(&j, &d);
    assert_eq!((after.enabled, after.state.next_run_at_ms), (false, None));
    assert_eq!(
        (run.status, run.error.as_deref()),
        (
            RunStatus::Skipped,
            Some("the previous run was still going (started 10 s earlier)")
        )
    );
}

#[test]
fn wire_shapes() {
    let mut j = job(daily_9(), Some("2026-11-25T08:00:00Z"));
    j.spec = JobSpec::Task {
        message: "Summarize my inbox".into(),
        model: Some("openai/gpt-5-mini".into()),
        thinking: None,
        timeout_seconds: Some(300),
        deliver: Some(true),
        channel: Some("discord".into()),
        to: None,
    };
    j.state.last_status = Some(RunStatus::Skipped);
    let v = serde_json::to_value(&j).unwrap();
    assert_eq!(
        v,
        json!({
            "id": "j1", "agentId": "main", "name": "standup", "enabled": true,
            "createdAtMs": 1793491200000i64, "updatedAtMs": 1793491200000i64,
            "schedule": {"kind": "cron", "expr": "0 9 * * *", "tz": "Europe/Berlin"},
            "spec": {"kind": "task", "message": "Summarize my inbox",
                     "model": "openai/gpt-5-mini", "timeoutSeconds": 300,
                     "deliver": true, "channel": "discord"},
            "state": {"nextRunAtMs": 1795593600000i64, "lastStatus": "skipped"},
            "madeBy": {"trust": {"level": "owner", "actsAs": "owner"}}
        })
    );
    assert_eq!(serde_json::from_value::<CronJob>(v).unwrap(), j);
    let every = json!({"kind": "every", "everyMs": 60000, "anchorMs": 0});
    assert_eq!(
        serde_json::from_value::<Schedule>(every).unwrap(),
        Schedule::Every {
            every_ms: 60_000,
            anchor_ms: 0
        }
    );
    let at = serde_json::to_value(Schedule::At { at_ms: 5 }).unwrap();
    assert_eq!(at, json!({"kind": "at", "atMs": 5}));
    let event = serde_json::to_value(JobSpec::SystemEvent { text: "hi".into() }).unwrap();
    assert_eq!(event, json!({"kind": "systemEvent", "text": "hi"}));
}

#[test]
fn limits_from_config() {
    let cases = [
        (None, CronLimits::default()),
        (
            Some(
                json!({"enabled": false, "maxJobs": 0, "maxConcurrentRuns": 500, "maxRunsPerJobHistory": 90000}),
            ),
            CronLimits {
                enabled: false,
                max_jobs: 1,
                max_concurrent_runs: 100,
                max_runs_per_job_history: 50_000,
            },
        ),
        (
            Some(json!({"maxJobs": "many", "maxRunsPerJobHistory": 10})),
            CronLimits {
                max_runs_per_job_history: 10,
                ..CronLimits::default()
            },
        ),
    ];
    for (cfg, want) in cases {
        assert_eq!(CronLimits::from_config(cfg.as_ref()), want, "{cfg:?}");
    }
    assert_eq!(CronLimits::default().max_jobs, 200);
    assert!(CronLimits::default().can_add(199));
    assert!(!CronLimits::default().can_add(200));
}
