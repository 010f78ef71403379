//! Next runs for every kind, DST both ways, odd zones, month ends, leap
//! days, the day rule and names; a property test against the wall clock.

use super::cron::CronExpr;
use super::next::{first_run, next_after, SEARCH_DAYS};
use super::Schedule;
use crate::time::test_tz::{utc, Tz};
use crate::time::{local_date_time, LocalDate, TimeZone, DAY_MS, MINUTE_MS};
use proptest::prelude::*;

fn cron(expr: &str) -> Schedule {
    Schedule::Cron {
        expr: expr.into(),
        tz: None,
    }
}

fn every(every_ms: i64, anchor: &str) -> Schedule {
    Schedule::Every {
        every_ms,
        anchor_ms: utc(anchor),
    }
}

fn at(iso: &str) -> Schedule {
    Schedule::At { at_ms: utc(iso) }
}

/// (schedule, zone, after, expected next) — all instants in UTC.
fn table() -> Vec<(Schedule, &'static str, &'static str, Option<&'static str>)> {
    let m30 = 30 * MINUTE_MS;
    vec![
        // at: strictly after.
        (
            at("2026-11-24T09:00:00Z"),
            "UTC",
            "2026-11-24T08:00:00Z",
            Some("2026-11-24T09:00:00Z"),
        ),
        (
            at("2026-11-24T09:00:00Z"),
            "UTC",
            "2026-11-24T09:00:00Z",
            None,
        ),
        // every: on the anchor's grid; a future anchor first.
        (
            every(m30, "2026-11-24T00:00:00Z"),
            "UTC",
            "2026-11-24T07:40:00Z",
            Some("2026-11-24T08:00:00Z"),
        ),
        (
            every(m30, "2026-11-24T00:00:00Z"),
            "UTC",
            "2026-11-24T08:00:00Z",
            Some("2026-11-24T08:30:00Z"),
        ),
        (
            every(m30, "2026-11-24T00:10:00Z"),
            "UTC",
            "2026-11-24T08:00:00Z",
            Some("2026-11-24T08:10:00Z"),
        ),
        (
            every(m30, "2026-12-01T00:00:00Z"),
            "UTC",
            "2026-11-24T08:00:00Z",
            Some("2026-12-01T00:00:00Z"),
        ),
        (
            every(DAY_MS, "2026-11-20T06:00:00Z"),
            "UTC",
            "2026-11-24T07:00:00Z",
            Some("2026-11-25T06:00:00Z"),
        ),
        (
            every(0, "2026-11-24T00:00:00Z"),
            "UTC",
            "2026-11-24T08:00:00Z",
            None,
        ),
        // cron in UTC.
        (
            cron("0 9 * * *"),
            "UTC",
            "2026-11-24T08:59:59Z",
            Some("2026-11-24T09:00:00Z"),
        ),
        (
            cron("0 9 * * *"),
            "UTC",
            "2026-11-24T09:00:00Z",
            Some("2026-11-25T09:00:00Z"),
        ),
        (
            cron("*/15 * * * *"),
            "UTC",
            "2026-11-24T07:41:30Z",
            Some("2026-11-24T07:45:00Z"),
        ),
        (
            cron("* * * * *"),
            "UTC",
            "2026-11-24T23:59:00Z",
            Some("2026-11-25T00:00:00Z"),
        ),
        (
            cron("59 23 31 12 *"),
            "UTC",
            "2026-11-24T00:00:00Z",
            Some("2026-12-31T23:59:00Z"),
        ),
        // Month ends: dom 31 skips short months.
        (
            cron("0 0 31 * *"),
            "UTC",
            "2026-11-24T00:00:00Z",
            Some("2026-12-31T00:00:00Z"),
        ),
        (
            cron("0 0 31 * *"),
            "UTC",
            "2027-01-31T00:00:00Z",
            Some("2027-03-31T00:00:00Z"),
        ),
        (
            cron("0 0 30 * *"),
            "UTC",
            "2027-01-30T00:00:00Z",
            Some("2027-03-30T00:00:00Z"),
        ),
        // Leap day: the next leap year, across 2100 (no leap year).
        (
            cron("0 9 29 2 *"),
            "UTC",
            "2026-11-24T00:00:00Z",
            Some("2028-02-29T09:00:00Z"),
        ),
        (
            cron("0 9 29 2 *"),
            "UTC",
            "2096-03-01T00:00:00Z",
            Some("2104-02-29T09:00:00Z"),
        ),
        (cron("0 0 30 2 *"), "UTC", "2026-11-24T00:00:00Z", None),
        (
            cron("0 0 31 4,6,9,11 *"),
            "UTC",
            "2026-11-24T00:00:00Z",
            None,
        ),
        // The day rule: OR when both are restricted, AND with a star.
        (
            cron("0 12 1,15 * MON"),
            "UTC",
            "2026-11-24T00:00:00Z",
            Some("2026-11-30T12:00:00Z"),
        ),
        (
            cron("0 12 13 * FRI"),
            "UTC",
            "2026-11-14T00:00:00Z",
            Some("2026-11-20T12:00:00Z"),
        ),
        (
            cron("0 12 * * FRI"),
            "UTC",
            "2026-11-14T00:00:00Z",
            Some("2026-11-20T12:00:00Z"),
        ),
        (
            cron("0 12 13 * *"),
            "UTC",
            "2026-11-14T00:00:00Z",
            Some("2026-12-13T12:00:00Z"),
        ),
        (
            cron("0 0 13 * 5"),
            "UTC",
            "2026-11-21T00:00:00Z",
            Some("2026-11-27T00:00:00Z"),
        ),
        // Names; Sunday as 7.
        (
            cron("30 8 * JAN-MAR mon-fri"),
            "UTC",
            "2026-11-24T00:00:00Z",
            Some("2027-01-01T08:30:00Z"),
        ),
        (
            cron("0 0 1 */3 *"),
            "UTC",
            "2026-11-24T00:00:00Z",
            Some("2027-01-01T00:00:00Z"),
        ),
        (
            cron("0 10 * * 7"),
            "UTC",
            "2026-11-24T00:00:00Z",
            Some("2026-11-29T10:00:00Z"),
        ),
        // Europe/Berlin, plain and across DST (2026-03-29 and 2026-10-25).
        (
            cron("0 9 * * *"),
            "Europe/Berlin",
            "2026-11-24T07:40:00Z",
            Some("2026-11-24T08:00:00Z"),
        ),
        (
            cron("30 2 * * *"),
            "Europe/Berlin",
            "2026-03-28T12:00:00Z",
            Some("2026-03-29T01:00:00Z"),
        ),
        (
            cron("30 2 * * *"),
            "Europe/Berlin",
            "2026-03-29T01:00:00Z",
            Some("2026-03-30T00:30:00Z"),
        ),
        (
            cron("30 2 * * *"),
            "Europe/Berlin",
            "2026-10-24T12:00:00Z",
            Some("2026-10-25T00:30:00Z"),
        ),
        (
            cron("30 2 * * *"),
            "Europe/Berlin",
            "2026-10-25T00:30:00Z",
            Some("2026-10-26T01:30:00Z"),
        ),
        (
            cron("0 2,3 * * *"),
            "Europe/Berlin",
            "2026-03-28T12:00:00Z",
            Some("2026-03-29T01:00:00Z"),
        ),
        (
            cron("0 2,3 * * *"),
            "Europe/Berlin",
            "2026-03-29T01:00:00Z",
            Some("2026-03-30T00:00:00Z"),
        ),
        // Wildcard jobs keep real-time cadence: repeats run twice, gaps not at all.
        (
            cron("30 * * * *"),
            "Europe/Berlin",
            "2026-10-25T00:30:00Z",
            Some("2026-10-25T01:30:00Z"),
        ),
        (
            cron("30 * * * *"),
            "Europe/Berlin",
            "2026-10-25T01:30:00Z",
            Some("2026-10-25T02:30:00Z"),
        ),
        (
            cron("*/30 * * * *"),
            "Europe/Berlin",
            "2026-03-29T00:45:00Z",
            Some("2026-03-29T01:00:00Z"),
        ),
        (
            cron("30 * * * *"),
            "Europe/Berlin",
            "2026-03-29T00:45:00Z",
            Some("2026-03-29T01:30:00Z"),
        ),
        // America/New_York (2026-03-08 and 2026-11-01).
        (
            cron("30 2 * * *"),
            "America/New_York",
            "2026-03-07T12:00:00Z",
            Some("2026-03-08T07:00:00Z"),
        ),
        (
            cron("30 2 * * *"),
            "America/New_York",
            "2026-03-08T07:00:00Z",
            Some("2026-03-09T06:30:00Z"),
        ),
        (
            cron("30 1 * * *"),
            "America/New_York",
            "2026-10-31T12:00:00Z",
            Some("2026-11-01T05:30:00Z"),
        ),
        (
            cron("30 1 * * *"),
            "America/New_York",
            "2026-11-01T05:30:00Z",
            Some("2026-11-02T06:30:00Z"),
        ),
        (
            cron("*/20 1 * * *"),
            "America/New_York",
            "2026-11-01T05:40:00Z",
            Some("2026-11-01T06:00:00Z"),
        ),
        (
            cron("0 9 * * MON-FRI"),
            "America/New_York",
            "2026-11-27T15:00:00Z",
            Some("2026-11-30T14:00:00Z"),
        ),
        (
            cron("0 0 * * *"),
            "America/New_York",
            "2026-11-24T04:59:00Z",
            Some("2026-11-24T05:00:00Z"),
        ),
        // Half-hour and 45-minute zones; Lord Howe's half-hour DST gap.
        (
            cron("0 9 * * *"),
            "Asia/Kolkata",
            "2026-11-24T00:00:00Z",
            Some("2026-11-24T03:30:00Z"),
        ),
        (
            cron("0 0 * * *"),
            "Asia/Kathmandu",
            "2026-11-24T00:00:00Z",
            Some("2026-11-24T18:15:00Z"),
        ),
        (
            cron("15 2 * * *"),
            "Australia/Lord_Howe",
            "2025-10-04T00:00:00Z",
            Some("2025-10-04T15:30:00Z"),
        ),
        (
            cron("45 1 * * *"),
            "Australia/Lord_Howe",
            "2026-04-04T14:00:00Z",
            Some("2026-04-04T14:45:00Z"),
        ),
        (
            cron("45 1 * * *"),
            "Australia/Lord_Howe",
            "2026-04-04T14:45:00Z",
            Some("2026-04-05T15:15:00Z"),
        ),
    ]
}

#[test]
fn next_runs() {
    for (schedule, zone, after, want) in table() {
        let tz = Tz::named(zone);
        let got = next_after(&schedule, utc(after), &tz).unwrap();
        assert_eq!(got, want.map(utc), "{schedule:?} in {zone} after {after}");
    }
}

#[test]
fn first_runs() {
    let tz = Tz::named("UTC");
    let now = utc("2026-11-24T08:00:00Z");
    // A past `at` is due at once; the others start after now.
    let cases = [
        (
            at("2026-11-24T07:00:00Z"),
            Some(utc("2026-11-24T07:00:00Z")),
        ),
        (
            every(30 * MINUTE_MS, "2026-11-24T08:00:00Z"),
            Some(utc("2026-11-24T08:30:00Z")),
        ),
        (cron("0 8 * * *"), Some(utc("2026-11-25T08:00:00Z"))),
        (cron("0 0 30 2 *"), None),
    ];
    for (schedule, want) in cases {
        assert_eq!(
            first_run(&schedule, now, &tz).unwrap(),
            want,
            "{schedule:?}"
        );
    }
    assert!(first_run(&cron("0 0 L * *"), now, &tz).is_err());
}

const ZONES: [&str; 6] = [
    "UTC",
    "America/New_York",
    "Europe/Berlin",
    "Asia/Kolkata",
    "Australia/Lord_Howe",
    "America/Havana",
];

fn fields() -> impl Strategy<Value = String> {
    let pick = |xs: &'static [&'static str]| proptest::sample::select(xs);
    (
        pick(&["*", "0", "30", "*/15", "5,35", "0-10/5", "59"]),
        pick(&["*", "0", "1", "2", "9", "*/6", "1-3", "23"]),
        pick(&["*", "1", "15", "31", "29", "*/10", "28-31"]),
        pick(&["*", "2", "*/2", "JAN-MAR", "11", "3,10"]),
        pick(&["*", "0", "MON-FRI", "6,0", "3", "7"]),
    )
        .prop_map(|(a, b, c, d, e)| format!("{a} {b} {c} {d} {e}"))
}

/// A second reading of a wall-clock time repeated by a fall-back.
fn is_repeat(tz: &dyn TimeZone, t: i64) -> bool {
    let shift = (tz.offset_ms(t - DAY_MS) - tz.offset_ms(t + DAY_MS)).abs();
    shift > 0 && local_date_time(tz, t - shift) == local_date_time(tz, t)
}

/// DST changes (zone, instant) to search around.
const CHANGES: [(&str, &str); 8] = [
    ("America/New_York", "2026-03-08T07:00:00Z"),
    ("America/New_York", "2026-11-01T06:00:00Z"),
    ("Europe/Berlin", "2026-03-29T01:00:00Z"),
    ("Europe/Berlin", "2026-10-25T01:00:00Z"),
    ("Australia/Lord_Howe", "2025-10-04T15:30:00Z"),
    ("Australia/Lord_Howe", "2026-04-04T15:00:00Z"),
    // Havana changes at midnight: days that start at 01:00 or twice.
    ("America/Havana", "2026-03-08T05:00:00Z"),
    ("America/Havana", "2026-11-01T05:00:00Z"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn next_is_later_and_matches(
        expr in fields(),
        zone in proptest::sample::select(&ZONES[..]),
        after in utc("2020-01-01T00:00:00Z")..utc("2035-01-01T00:00:00Z"),
    ) {
        check_next(&expr, zone, after)?;
    }

    #[test]
    fn next_around_dst_changes(
        expr in fields(),
        change in proptest::sample::select(&CHANGES[..]),
        delta in -36 * 60..36 * 60i64,
    ) {
        check_next(&expr, change.0, utc(change.1) + delta * MINUTE_MS)?;
    }
}

/// `next` is later, matches the wall clock (or ends a gap), and nothing
/// that should have fired was passed over.
fn check_next(expr: &str, zone: &str, after: i64) -> Result<(), TestCaseError> {
    {
        let tz = Tz::named(zone);
        let parsed = CronExpr::parse(expr).unwrap();
        let Some(next) = next_after(&cron(expr), after, &tz).unwrap() else {
            // Only impossible dates give up (Feb 31 and the like).
            let first = local_date_time(&tz, after).date.epoch_days();
            let any = (first..first + SEARCH_DAYS)
                .any(|d| parsed.matches_date(LocalDate::from_epoch_days(d)));
            prop_assert!(!any, "{expr} gave up in {zone}");
            return Ok(());
        };
        prop_assert!(next > after);
        let local = local_date_time(&tz, next);
        if !parsed.matches(&local) {
            // Only a fixed-time job after a skipped time, at the gap's end.
            prop_assert!(!parsed.is_wildcard_time());
            prop_assert!(
                tz.offset_ms(next - 1) < tz.offset_ms(next),
                "{expr} {zone} {next}"
            );
        }
        // Nothing matching was passed over (checked up to 2 days ahead).
        let mut t = (after.div_euclid(MINUTE_MS) + 1) * MINUTE_MS;
        while t < next.min(after + 2 * DAY_MS) {
            let hit = parsed.matches(&local_date_time(&tz, t))
                && (parsed.is_wildcard_time() || !is_repeat(&tz, t));
            prop_assert!(!hit, "{expr} in {zone}: {t} before {next}");
            t += MINUTE_MS;
        }
    }
    Ok(())
}
