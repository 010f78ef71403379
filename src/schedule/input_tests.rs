//! Loose input → stored shapes: date-time strings, schedules, specs,
//! whole jobs and patches; and the human strings.

use super::human::{current_time, duration, next_run_human, schedule_human};
use super::jobs::{new_job, update_job};
use super::tool_input::{normalize_schedule, normalize_spec, InputContext, InputError};
use super::when::{parse_clock, parse_when, WhenError};
use super::{test_zones, CronError, CronField, JobSpec, Schedule};
use crate::time::test_tz::{utc, Tz};
use crate::time::{FixedOffset, HOUR_MS, MINUTE_MS};
use serde_json::{json, Value};

/// Tue 24 Nov 2026 08:40 in Berlin (CET, UTC+1).
fn now() -> i64 {
    utc("2026-11-24T07:40:00Z")
}

#[test]
fn date_time_strings() {
    let berlin = Tz::named("Europe/Berlin");
    let cases: [(&str, &str); 27] = [
        ("1795507200", "2026-11-24T08:00:00Z"),
        ("1795507200000", "2026-11-24T08:00:00Z"),
        ("in 2 hours", "2026-11-24T09:40:00Z"),
        ("2h", "2026-11-24T09:40:00Z"),
        ("in 90 min", "2026-11-24T09:10:00Z"),
        ("in 1.5 days", "2026-11-25T19:40:00Z"),
        ("in 30s", "2026-11-24T07:40:30Z"),
        ("in 1 week", "2026-12-01T07:40:00Z"),
        ("today 9pm", "2026-11-24T20:00:00Z"),
        ("today at 18:30", "2026-11-24T17:30:00Z"),
        ("tomorrow", "2026-11-24T23:00:00Z"),
        ("Tomorrow at 9", "2026-11-25T08:00:00Z"),
        ("tomorrow 9:15 AM", "2026-11-25T08:15:00Z"),
        ("tomorrow 12am", "2026-11-24T23:00:00Z"),
        ("tomorrow 12pm", "2026-11-25T11:00:00Z"),
        ("monday at 9", "2026-11-30T08:00:00Z"),
        ("next fri 17:00", "2026-11-27T16:00:00Z"),
        // Today's weekday: today if still ahead, else next week.
        ("tuesday 10:00", "2026-11-24T09:00:00Z"),
        ("tue 08:00", "2026-12-01T07:00:00Z"),
        ("2026-11-24T09:00:00Z", "2026-11-24T09:00:00Z"),
        ("2026-11-24T09:00:00.250Z", "2026-11-24T09:00:00.250Z"),
        ("2026-11-24T09:00+05:30", "2026-11-24T03:30:00Z"),
        ("2026-11-24 09:00 -0800", "2026-11-24T17:00:00Z"),
        ("2026-11-24 09:00 UTC", "2026-11-24T09:00:00Z"),
        // Local ISO: the user's zone.
        ("2026-11-24T09:00", "2026-11-24T08:00:00Z"),
        ("2026-07-01 9", "2026-07-01T07:00:00Z"),
        ("2026-12-25", "2026-12-24T23:00:00Z"),
    ];
    for (input, want) in cases {
        assert_eq!(parse_when(input, now(), &berlin), Ok(utc(want)), "{input}");
    }
    // A local time skipped by spring-forward means the end of the gap.
    assert_eq!(
        parse_when("2026-03-29 02:30", now(), &berlin),
        Ok(utc("2026-03-29T01:00:00Z"))
    );
}

#[test]
fn bad_date_time_strings() {
    let tz = FixedOffset(HOUR_MS);
    let unrecognized = [
        "soon",
        "next blursday",
        "in two hours",
        "12345",
        "2026/11/24",
        "",
    ];
    for input in unrecognized {
        assert_eq!(
            parse_when(input, now(), &tz),
            Err(WhenError::Unrecognized(input.into())),
            "{input}"
        );
    }
    let invalid = [
        "2026-02-30",
        "2026-13-01 10:00",
        "2026-11-24T25:00",
        "2026-11-24T09:60",
        "2026-11-24T09:00+15:00",
        "2026-11-24T09:00:00.1234567890Z",
        "today at 13pm",
        "tomorrow 9:5",
    ];
    for input in invalid {
        assert_eq!(
            parse_when(input, now(), &tz),
            Err(WhenError::Invalid(input.into())),
            "{input}"
        );
    }
    assert_eq!(parse_clock("12:30pm"), Some((12, 30)));
    assert_eq!(parse_clock("0am"), None);
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

#[test]
fn schedules() {
    let at = |s: &str| Ok(Schedule::At { at_ms: utc(s) });
    let cases: Vec<(Value, Result<Schedule, InputError>)> = vec![
        (
            json!({"kind": "at", "atMs": 1795507200000i64}),
            at("2026-11-24T08:00:00Z"),
        ),
        (
            json!({"kind": "at", "at": 1795507200000i64}),
            at("2026-11-24T08:00:00Z"),
        ),
        (
            json!({"kind": "at", "inMinutes": 20}),
            at("2026-11-24T08:00:00Z"),
        ),
        (
            json!({"kind": "at", "inSeconds": 30}),
            at("2026-11-24T07:40:30Z"),
        ),
        (
            json!({"kind": "at", "delayMs": 1000}),
            at("2026-11-24T07:40:01Z"),
        ),
        (
            json!({"kind": "at", "inHours": 0.5}),
            at("2026-11-24T08:10:00Z"),
        ),
        (
            json!({"kind": "at", "inDays": 1}),
            at("2026-11-25T07:40:00Z"),
        ),
        (
            json!({"kind": "at", "in": "in 2 hours"}),
            at("2026-11-24T09:40:00Z"),
        ),
        (
            json!({"kind": "at", "in": "2h"}),
            at("2026-11-24T09:40:00Z"),
        ),
        (
            json!({"kind": "at", "at": "tomorrow at 9"}),
            at("2026-11-25T08:00:00Z"),
        ),
        (
            json!({"kind": "at", "when": "2026-11-24T09:00"}),
            at("2026-11-24T08:00:00Z"),
        ),
        (
            json!({"kind": "at", "atIso": "2026-11-24T09:00:00Z"}),
            at("2026-11-24T09:00:00Z"),
        ),
        (
            json!({"kind": "AT", "at": "1795507200"}),
            at("2026-11-24T08:00:00Z"),
        ),
        (json!({"kind": "at"}), Err(InputError::NoTime)),
        (
            json!({"kind": "at", "inMinutes": -5}),
            Err(InputError::Negative("schedule.inMinutes")),
        ),
        (
            json!({"kind": "at", "in": "later"}),
            Err(InputError::When(WhenError::Unrecognized("later".into()))),
        ),
        (
            json!({"kind": "every", "everyMinutes": 30}),
            Ok(Schedule::Every {
                every_ms: 30 * MINUTE_MS,
                anchor_ms: now(),
            }),
        ),
        (
            json!({"kind": "every", "everyHours": 2, "anchorMs": 0}),
            Ok(Schedule::Every {
                every_ms: 2 * HOUR_MS,
                anchor_ms: 0,
            }),
        ),
        (
            json!({"kind": "every", "everyDays": 1, "startAt": "tomorrow 7am"}),
            Ok(Schedule::Every {
                every_ms: 24 * HOUR_MS,
                anchor_ms: utc("2026-11-25T06:00:00Z"),
            }),
        ),
        (
            json!({"kind": "every", "everySeconds": 45, "anchor": 1000}),
            Ok(Schedule::Every {
                every_ms: 45_000,
                anchor_ms: 1000,
            }),
        ),
        (
            json!({"kind": "every", "everyMs": 0}),
            Err(InputError::NoInterval),
        ),
        (json!({"kind": "every"}), Err(InputError::NoInterval)),
        (
            json!({"kind": "every", "everyMs": 1000, "anchorMs": -1}),
            Err(InputError::Negative("schedule.anchorMs")),
        ),
        (
            json!({"kind": "cron", "expr": " 0  9 * * mon-fri "}),
            Ok(Schedule::Cron {
                expr: "0 9 * * mon-fri".into(),
                tz: Some("Europe/Berlin".into()),
            }),
        ),
        (
            json!({"kind": "cron", "expr": "0 9 * * *", "tz": "America/New_York"}),
            Ok(Schedule::Cron {
                expr: "0 9 * * *".into(),
                tz: Some("America/New_York".into()),
            }),
        ),
        (
            json!({"kind": "cron", "expr": "0 9 * * *", "tz": "utc"}),
            Ok(Schedule::Cron {
                expr: "0 9 * * *".into(),
                tz: Some("utc".into()),
            }),
        ),
        (
            json!({"kind": "cron", "expr": "0 9 * * *", "tz": "Europe/Berln"}),
            Err(InputError::UnknownZone("Europe/Berln".into())),
        ),
        (
            json!({"kind": "cron", "expr": "0 9 L * *"}),
            Err(InputError::Cron(CronError::Unsupported {
                field: CronField::DayOfMonth,
                token: "L".into(),
            })),
        ),
        (
            json!({"kind": "cron"}),
            Err(InputError::Missing("schedule.expr")),
        ),
        (
            json!({"kind": "weekly"}),
            Err(InputError::UnknownKind {
                field: "schedule.kind",
                kind: "weekly".into(),
            }),
        ),
        (json!({}), Err(InputError::Missing("schedule.kind"))),
        (json!("0 9 * * *"), Err(InputError::NotAnObject("schedule"))),
        (
            json!({"kind": "cron", "expr": 5}),
            Err(InputError::WrongType {
                field: "expr",
                expected: "a string",
            }),
        ),
    ];
    for (input, want) in cases {
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
            "state": {"nextRunAtMs": utc("2026-11-24T08:00:00Z")}
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

#[test]
fn human_strings() {
    let berlin = Tz::named("Europe/Berlin");
    let ny = Tz::named("America/New_York");
    let kolkata = Tz::named("Asia/Kolkata");
    let cron = |e: &str| Schedule::Cron {
        expr: e.into(),
        tz: None,
    };
    let cases = [
        (cron("0 9 * * *"), "every day at 09:00 (Europe/Berlin)"),
        (
            cron("30 7,19 * * *"),
            "every day at 07:30, 19:30 (Europe/Berlin)",
        ),
        (
            cron("0 9 * * 1-5"),
            "every weekday (Mon–Fri) at 09:00 (Europe/Berlin)",
        ),
        (
            cron("0 10 * * SAT,SUN"),
            "every weekend day at 10:00 (Europe/Berlin)",
        ),
        (
            cron("15 8 * * mon"),
            "every Monday at 08:15 (Europe/Berlin)",
        ),
        (
            cron("0 8 * * 1,3"),
            "every Mon, Wed at 08:00 (Europe/Berlin)",
        ),
        (cron("*/15 * * * *"), "every 15 minutes (Europe/Berlin)"),
        (cron("* * * * *"), "every minute (Europe/Berlin)"),
        (cron("0 * * * *"), "every hour, on the hour (Europe/Berlin)"),
        (cron("45 * * * *"), "every hour at :45 (Europe/Berlin)"),
        (cron("0 9 1 * *"), "cron \"0 9 1 * *\" (Europe/Berlin)"),
        (
            cron("0 9 */2 * MON"),
            "cron \"0 9 */2 * MON\" (Europe/Berlin)",
        ),
        (
            Schedule::Every {
                every_ms: 30 * MINUTE_MS,
                anchor_ms: 0,
            },
            "every 30 minutes",
        ),
        (
            Schedule::Every {
                every_ms: HOUR_MS,
                anchor_ms: 0,
            },
            "every hour",
        ),
        (
            Schedule::Every {
                every_ms: 2 * 86_400_000,
                anchor_ms: 0,
            },
            "every 2 days",
        ),
        (
            Schedule::Every {
                every_ms: 90_000,
                anchor_ms: 0,
            },
            "every 90 seconds",
        ),
        (
            Schedule::Every {
                every_ms: 1500,
                anchor_ms: 0,
            },
            "every 1500 ms",
        ),
        (
            Schedule::At {
                at_ms: utc("2026-11-24T08:00:00Z"),
            },
            "once on Tue 24 Nov 2026 09:00 (Europe/Berlin, UTC+01:00)",
        ),
    ];
    for (schedule, want) in cases {
        assert_eq!(schedule_human(&schedule, &berlin, "Europe/Berlin"), want);
    }
    let summer = Schedule::At {
        at_ms: utc("2026-07-01T13:00:00Z"),
    };
    assert_eq!(
        schedule_human(&summer, &ny, "America/New_York"),
        "once on Wed 1 Jul 2026 09:00 (America/New_York, UTC-04:00)"
    );
    assert_eq!(
        current_time(&kolkata, "Asia/Kolkata", now()),
        "Tue 24 Nov 2026 13:10 (Asia/Kolkata, UTC+05:30)"
    );
    assert_eq!(
        current_time(&crate::time::Utc, "UTC", now()),
        "Tue 24 Nov 2026 07:40 (UTC, UTC)"
    );
    let next = [
        (None, "not scheduled"),
        (Some(now()), "now"),
        (Some(now() - 5 * MINUTE_MS), "now (5m late)"),
        (
            Some(utc("2026-11-25T08:00:00Z")),
            "Wed 25 Nov 2026 09:00 (in 1d)",
        ),
        (
            Some(now() + 2 * HOUR_MS + 15 * MINUTE_MS),
            "Tue 24 Nov 2026 10:55 (in 2h 15m)",
        ),
    ];
    for (t, want) in next {
        assert_eq!(next_run_human(t, &berlin, now()), want);
    }
    assert_eq!(duration(0), "0s");
    assert_eq!(duration(45_000), "45s");
    assert_eq!(duration(3 * 86_400_000 + 4 * HOUR_MS + 59_000), "3d 4h");
}
