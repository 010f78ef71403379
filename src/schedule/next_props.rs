//! Property tests of cron next runs: always later, on a matching wall
//! clock (or the end of a DST gap), and never passing over a match —
//! for random instants and around DST changes.

use super::cron::CronExpr;
use super::next::{next_after, SEARCH_DAYS};
use super::Schedule;
use crate::time::test_tz::{utc, Tz};
use crate::time::{local_date_time, LocalDate, TimeZone, Utc, DAY_MS, MINUTE_MS};
use proptest::prelude::*;

fn cron(expr: &str) -> Schedule {
    Schedule::Cron {
        expr: expr.into(),
        tz: None,
    }
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

/// Fixed and wildcard jobs in the small hours of DST Sundays.
fn small_hours() -> impl Strategy<Value = String> {
    let pick = |xs: &'static [&'static str]| proptest::sample::select(xs);
    (
        pick(&["0", "30", "5,35", "0-10/5", "59", "*/20"]),
        pick(&["0", "1", "2", "1-3", "0,2", "*"]),
        pick(&["*", "SUN", "0,6"]),
    )
        .prop_map(|(m, h, dow)| format!("{m} {h} * * {dow}"))
}

/// Whether the clocks jumped forward at `t` over a reading `expr` matches.
fn skipped_match(expr: &CronExpr, tz: &dyn TimeZone, t: i64) -> bool {
    let jump = tz.offset_ms(t) - tz.offset_ms(t - MINUTE_MS);
    let resumed = t + tz.offset_ms(t);
    (1..=jump / MINUTE_MS).any(|k| expr.matches(&local_date_time(&Utc, resumed - k * MINUTE_MS)))
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

    #[test]
    fn next_in_dst_small_hours(
        expr in small_hours(),
        change in proptest::sample::select(&CHANGES[..]),
        delta in -240..240i64,
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
        // A fixed-time job runs a repeated wall-clock time once: the first.
        prop_assert!(
            parsed.is_wildcard_time() || !is_repeat(&tz, next),
            "{expr} {zone} {next}"
        );
        // Nothing matching was passed over (checked up to 2 days ahead).
        let mut t = (after.div_euclid(MINUTE_MS) + 1) * MINUTE_MS;
        while t < next.min(after + 2 * DAY_MS) {
            let hit = parsed.matches(&local_date_time(&tz, t))
                && (parsed.is_wildcard_time() || !is_repeat(&tz, t));
            prop_assert!(!hit, "{expr} in {zone}: {t} before {next}");
            // A fixed-time job whose time a jump skipped fires at `t`.
            prop_assert!(
                parsed.is_wildcard_time() || !skipped_match(&parsed, &tz, t),
                "{expr} in {zone}: gap ending {t} before {next}"
            );
            t += MINUTE_MS;
        }
    }
    Ok(())
}
