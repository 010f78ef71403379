//! The human strings of the tool's answers.

use super::human::{current_time, duration, next_run_human, schedule_human};
use super::input_tests::now;
use super::Schedule;
use crate::time::test_tz::{utc, Tz};
use crate::time::{HOUR_MS, MINUTE_MS};

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
