//! Loose input → stored shapes: schedules, specs, whole jobs and patches.

use super::jobs::{new_job, update_job};
use super::tool_input::{normalize_schedule, normalize_spec, InputContext, InputError};
use super::when::WhenError;
use super::{test_zones, CronError, CronField, JobSpec, Schedule};
use crate::time::test_tz::{utc, Tz};
use crate::time::{HOUR_MS, MINUTE_MS};
use serde_json::{json, Value};

/// Tue 24 Nov 2026 08:40 in Berlin (CET, UTC+1).
pub(super) fn now() -> i64 {
    utc("2026-11-24T07:40:00Z")
}

fn with_cx<T>(f: impl FnOnce(&InputContext<'_>) -> T) -> T {
    let berlin = Tz::named("Europe/Berlin");
    let cx = InputContext {
        now_ms: now(),
        user_zone: "Europe/Berlin",
        user_tz: &berlin,
        zones: &test_zones,
    };
    f(&cx)
}

#[rustfmt::skip]
fn schedule_cases() -> Vec<(Value, Result<Schedule, InputError>)> {
    let at = |s: &str| Ok(Schedule::At { at_ms: utc(s) });
    let every = |every_ms, anchor_ms| Ok(Schedule::Every { every_ms, anchor_ms });
    let cron = |expr: &str, tz: &str| Ok(Schedule::Cron { expr: expr.into(), tz: Some(tz.into()) });
    let unrecognized = |s: &str| Err(InputError::When(WhenError::Unrecognized(s.into())));
    let berlin = "Europe/Berlin";
    vec![
        (json!({"kind": "at", "atMs": 1795507200000i64}), at("2026-11-24T08:00:00Z")),
        (json!({"kind": "at", "at": 1795507200000i64}), at("2026-11-24T08:00:00Z")),
        (json!({"kind": "at", "at": 1795507200}), at("2026-11-24T08:00:00Z")),
        (json!({"kind": "at", "inMinutes": 20}), at("2026-11-24T08:00:00Z")),
        (json!({"kind": "at", "inSeconds": 30}), at("2026-11-24T07:40:30Z")),
        (json!({"kind": "at", "delayMs": 1000}), at("2026-11-24T07:40:01Z")),
        (json!({"kind": "at", "inHours": 0.5}), at("2026-11-24T08:10:00Z")),
        (json!({"kind": "at", "inDays": 1}), at("2026-11-25T07:40:00Z")),
        (json!({"kind": "at", "in": "in 2 hours"}), at("2026-11-24T09:40:00Z")),
        (json!({"kind": "at", "in": "2h"}), at("2026-11-24T09:40:00Z")),
        (json!({"kind": "at", "at": "tomorrow at 9"}), at("2026-11-25T08:00:00Z")),
        (json!({"kind": "at", "when": "2026-11-24T09:00"}), at("2026-11-24T08:00:00Z")),
        (json!({"kind": "at", "atIso": "2026-11-24T09:00:00Z"}), at("2026-11-24T09:00:00Z")),
        (json!({"kind": "at", "atMs": "1795507200000"}), at("2026-11-24T08:00:00Z")),
        (json!({"kind": "AT", "at": "1795507200"}), at("2026-11-24T08:00:00Z")),
        (json!({"kind": "at"}), Err(InputError::NoTime)),
        (json!({"kind": "at", "inMinutes": -5}), Err(InputError::Negative("schedule.inMinutes"))),
        (json!({"kind": "at", "inMinutes": "5"}), Err(InputError::WrongType { field: "schedule.inMinutes", expected: "a number" })),
        (json!({"kind": "at", "in": "later"}), unrecognized("later")),
        (json!({"kind": "every", "everyMinutes": 30}), every(30 * MINUTE_MS, now())),
        (json!({"kind": "every", "everyHours": 2, "anchorMs": 0}), every(2 * HOUR_MS, 0)),
        (json!({"kind": "every", "everyDays": 1, "startAt": "tomorrow 7am"}), every(24 * HOUR_MS, utc("2026-11-25T06:00:00Z"))),
        (json!({"kind": "every", "everySeconds": 90, "anchor": 1000}), every(90_000, 1000)),
        (json!({"kind": "every", "everySeconds": 45}), Err(InputError::IntervalTooShort)),
        (json!({"kind": "every", "everyMs": 0}), Err(InputError::NoInterval)),
        (json!({"kind": "every"}), Err(InputError::NoInterval)),
        (json!({"kind": "every", "everyMs": 60000, "anchorMs": -1}), Err(InputError::Negative("schedule.anchorMs"))),
        (json!({"kind": "cron", "expr": " 0  9 * * mon-fri "}), cron("0 9 * * mon-fri", berlin)),
        (json!({"kind": "cron", "expr": "0 9 * * *", "tz": "America/New_York"}), cron("0 9 * * *", "America/New_York")),
        (json!({"kind": "cron", "expr": "0 9 * * *", "tz": "utc"}), cron("0 9 * * *", "utc")),
        (json!({"kind": "cron", "expr": "0 9 * * *", "tz": "Europe/Berln"}), Err(InputError::UnknownZone("Europe/Berln".into()))),
        (json!({"kind": "cron", "expr": "0 9 L * *"}), Err(InputError::Cron(CronError::Unsupported { field: CronField::DayOfMonth, token: "L".into() }))),
        (json!({"kind": "cron"}), Err(InputError::Missing("schedule.expr"))),
        (json!({"kind": "cron", "expr": 5}), Err(InputError::WrongType { field: "expr", expected: "a string" })),
        (json!({"kind": "weekly"}), Err(InputError::UnknownKind { field: "schedule.kind", kind: "weekly".into() })),
        (json!({}), Err(InputError::Missing("schedule.kind"))),
        (json!("0 9 * * *"), Err(InputError::NotAnObject("schedule"))),
    ]
}

#[test]
fn schedules() {
    for (input, want) in schedule_cases() {
        assert_eq!(
            with_cx(|cx| normalize_schedule(&input, cx)),
            want,
            "{input}"
        );
    }
}

#[test]
fn specs() {
    let cases: Vec<(Value, Result<JobSpec, InputError>)> = vec![
        (
            json!({"kind": "systemEvent", "text": " Stand up! "}),
            Ok(JobSpec::SystemEvent {
                text: "Stand up!".into(),
            }),
        ),
        (
            json!({"mode": "task", "message": "Inbox digest", "timeoutSeconds": 120, "deliver": false}),
            Ok(JobSpec::Task {
                message: "Inbox digest".into(),
                model: None,
                thinking: None,
                timeout_seconds: Some(120),
                deliver: Some(false),
                channel: None,
                to: None,
            }),
        ),
        (
            json!({"kind": "task"}),
            Err(InputError::Missing("spec.message")),
        ),
        (json!({"text": "x"}), Err(InputError::Missing("spec.kind"))),
        (
            json!({"kind": "task", "message": "m", "deliver": "yes"}),
            Err(InputError::WrongType {
                field: "spec.deliver",
                expected: "true or false",
            }),
        ),
        (
            json!({"kind": "shell", "command": "ls"}),
            Err(InputError::UnknownKind {
                field: "spec.kind",
                kind: "shell".into(),
            }),
        ),
    ];
    for (input, want) in cases {
        assert_eq!(normalize_spec(&input), want, "{input}");
    }
}

#[test]
fn new_jobs_and_patches() {
    let raw = json!({
        "schedule": {"kind": "cron", "expr": "0 9 * * *"},
        "spec": {"kind": "systemEvent", "text": "Drink water and check the calendar for today, please\nsecond line"}
    });
    let job = with_cx(|cx| new_job("uuid-1", &raw, "main", cx)).unwrap();
    let wire = serde_json::to_value(&job).unwrap();
    assert_eq!(
        wire,
        json!({
            "id": "uuid-1", "agentId": "main",
            "name": "Drink water and check the calendar for t…",
            "enabled": true, "createdAtMs": now(), "updatedAtMs": now(),
            "schedule": {"kind": "cron", "expr": "0 9 * * *", "tz": "Europe/Berlin"},
            "spec": {"kind": "systemEvent", "text": "Drink water and check the calendar for today, please\nsecond line"},
            "state": {"nextRunAtMs": utc("2026-11-24T08:00:00Z")},
            "madeBy": {"trust": {"level": "owner", "actsAs": "owner"}}
        })
    );
    let never = json!({"schedule": {"kind": "cron", "expr": "0 0 30 2 *"}, "spec": {"kind": "systemEvent", "text": "x"}});
    assert_eq!(
        with_cx(|cx| new_job("u", &never, "main", cx)),
        Err(InputError::NeverRuns)
    );

    // Disable: no next run. Re-enable with a new schedule: computed afresh.
    let off = with_cx(|cx| update_job(&job, &json!({"enabled": false}), cx)).unwrap();
    assert_eq!((off.enabled, off.state.next_run_at_ms), (false, None));
    let patch = json!({"enabled": true, "schedule": {"kind": "at", "in": "10m"}, "name": "soon", "description": "d"});
    let on = with_cx(|cx| update_job(&off, &patch, cx)).unwrap();
    assert_eq!(on.state.next_run_at_ms, Some(now() + 10 * MINUTE_MS));
    assert_eq!(
        (on.name.as_str(), on.description.as_deref()),
        ("soon", Some("d"))
    );
    let cleared = with_cx(|cx| update_job(&on, &json!({"description": null}), cx)).unwrap();
    assert_eq!(cleared.description, None);
    // A spec patch of the same kind merges; another kind replaces.
    let merged = with_cx(|cx| update_job(&job, &json!({"spec": {"text": "Tea"}}), cx)).unwrap();
    assert_eq!(merged.spec, JobSpec::SystemEvent { text: "Tea".into() });
    let task = json!({"spec": {"mode": "task", "message": "Report"}});
    let replaced = with_cx(|cx| update_job(&job, &task, cx)).unwrap();
    assert!(matches!(replaced.spec, JobSpec::Task { ref message, .. } if message == "Report"));
    // Untouched schedule, still enabled: the stored next run stays.
    assert_eq!(merged.state.next_run_at_ms, job.state.next_run_at_ms);
}
