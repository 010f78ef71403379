//! Next runs for every kind against a table: DST both ways, odd zones,
//! month ends, leap days, the day rule and names.

use super::next::{first_run, next_after};
use super::Schedule;
use crate::time::test_tz::{utc, Tz};
use crate::time::MINUTE_MS;

/// `schedule | zone | after | next` (instants in UTC, `-` for none).
/// Schedules: `at <iso>`, `every <minutes> from <iso>`, `cron <expr>`.
const TABLE: &str = "
# at: strictly after.
at 2026-11-24T09:00:00Z          | UTC | 2026-11-24T08:00:00Z | 2026-11-24T09:00:00Z
at 2026-11-24T09:00:00Z          | UTC | 2026-11-24T09:00:00Z | -
# every: on the anchor's grid; a future anchor first.
every 30 from 2026-11-24T00:00:00Z   | UTC | 2026-11-24T07:40:00Z | 2026-11-24T08:00:00Z
every 30 from 2026-11-24T00:00:00Z   | UTC | 2026-11-24T08:00:00Z | 2026-11-24T08:30:00Z
every 30 from 2026-11-24T00:10:00Z   | UTC | 2026-11-24T08:00:00Z | 2026-11-24T08:10:00Z
every 30 from 2026-12-01T00:00:00Z   | UTC | 2026-11-24T08:00:00Z | 2026-12-01T00:00:00Z
every 1440 from 2026-11-20T06:00:00Z | UTC | 2026-11-24T07:00:00Z | 2026-11-25T06:00:00Z
every 0 from 2026-11-24T00:00:00Z    | UTC | 2026-11-24T08:00:00Z | -
# cron in UTC.
cron 0 9 * * *      | UTC | 2026-11-24T08:59:59Z | 2026-11-24T09:00:00Z
cron 0 9 * * *      | UTC | 2026-11-24T09:00:00Z | 2026-11-25T09:00:00Z
cron */15 * * * *   | UTC | 2026-11-24T07:41:30Z | 2026-11-24T07:45:00Z
cron * * * * *      | UTC | 2026-11-24T23:59:00Z | 2026-11-25T00:00:00Z
cron 59 23 31 12 *  | UTC | 2026-11-24T00:00:00Z | 2026-12-31T23:59:00Z
# Month ends: day 31 and 30 skip short months.
cron 0 0 31 * *     | UTC | 2026-11-24T00:00:00Z | 2026-12-31T00:00:00Z
cron 0 0 31 * *     | UTC | 2027-01-31T00:00:00Z | 2027-03-31T00:00:00Z
cron 0 0 30 * *     | UTC | 2027-01-30T00:00:00Z | 2027-03-30T00:00:00Z
# Leap day: the next leap year, across 2100 (not one); impossible dates.
cron 0 9 29 2 *     | UTC | 2026-11-24T00:00:00Z | 2028-02-29T09:00:00Z
cron 0 9 29 2 *     | UTC | 2096-03-01T00:00:00Z | 2104-02-29T09:00:00Z
cron 0 0 30 2 *     | UTC | 2026-11-24T00:00:00Z | -
cron 0 0 31 4,6,9,11 * | UTC | 2026-11-24T00:00:00Z | -
# The day rule: OR when both are restricted, else AND.
cron 0 12 1,15 * MON | UTC | 2026-11-24T00:00:00Z | 2026-11-30T12:00:00Z
cron 0 12 13 * FRI  | UTC | 2026-11-14T00:00:00Z | 2026-11-20T12:00:00Z
cron 0 12 * * FRI   | UTC | 2026-11-14T00:00:00Z | 2026-11-20T12:00:00Z
cron 0 12 13 * *    | UTC | 2026-11-14T00:00:00Z | 2026-12-13T12:00:00Z
cron 0 0 13 * 5     | UTC | 2026-11-21T00:00:00Z | 2026-11-27T00:00:00Z
# Names; Sunday as 7.
cron 30 8 * JAN-MAR mon-fri | UTC | 2026-11-24T00:00:00Z | 2027-01-01T08:30:00Z
cron 0 0 1 */3 *    | UTC | 2026-11-24T00:00:00Z | 2027-01-01T00:00:00Z
cron 0 10 * * 7     | UTC | 2026-11-24T00:00:00Z | 2026-11-29T10:00:00Z
# Berlin; DST 2026-03-29 (02:00 → 03:00) and 2026-10-25 (03:00 → 02:00).
cron 0 9 * * *      | Europe/Berlin | 2026-11-24T07:40:00Z | 2026-11-24T08:00:00Z
cron 30 2 * * *     | Europe/Berlin | 2026-03-28T12:00:00Z | 2026-03-29T01:00:00Z
cron 30 2 * * *     | Europe/Berlin | 2026-03-29T01:00:00Z | 2026-03-30T00:30:00Z
cron 30 2 * * *     | Europe/Berlin | 2026-10-24T12:00:00Z | 2026-10-25T00:30:00Z
cron 30 2 * * *     | Europe/Berlin | 2026-10-25T00:30:00Z | 2026-10-26T01:30:00Z
cron 0 2,3 * * *    | Europe/Berlin | 2026-03-28T12:00:00Z | 2026-03-29T01:00:00Z
cron 0 2,3 * * *    | Europe/Berlin | 2026-03-29T01:00:00Z | 2026-03-30T00:00:00Z
# Wildcard jobs keep real-time cadence: repeats run twice, gaps never.
cron 30 * * * *     | Europe/Berlin | 2026-10-25T00:30:00Z | 2026-10-25T01:30:00Z
cron 30 * * * *     | Europe/Berlin | 2026-10-25T01:30:00Z | 2026-10-25T02:30:00Z
cron */30 * * * *   | Europe/Berlin | 2026-03-29T00:45:00Z | 2026-03-29T01:00:00Z
cron 30 * * * *     | Europe/Berlin | 2026-03-29T00:45:00Z | 2026-03-29T01:30:00Z
# New York; DST 2026-03-08 and 2026-11-01.
cron 30 2 * * *     | America/New_York | 2026-03-07T12:00:00Z | 2026-03-08T07:00:00Z
cron 30 2 * * *     | America/New_York | 2026-03-08T07:00:00Z | 2026-03-09T06:30:00Z
cron 30 1 * * *     | America/New_York | 2026-10-31T12:00:00Z | 2026-11-01T05:30:00Z
cron 30 1 * * *     | America/New_York | 2026-11-01T05:30:00Z | 2026-11-02T06:30:00Z
cron */20 1 * * *   | America/New_York | 2026-11-01T05:40:00Z | 2026-11-01T06:00:00Z
cron 0 9 * * MON-FRI | America/New_York | 2026-11-27T15:00:00Z | 2026-11-30T14:00:00Z
cron 0 0 * * *      | America/New_York | 2026-11-24T04:59:00Z | 2026-11-24T05:00:00Z
# Half-hour and 45-minute zones; Lord Howe's half-hour DST.
cron 0 9 * * *      | Asia/Kolkata   | 2026-11-24T00:00:00Z | 2026-11-24T03:30:00Z
cron 0 0 * * *      | Asia/Kathmandu | 2026-11-24T00:00:00Z | 2026-11-24T18:15:00Z
cron 15 2 * * *     | Australia/Lord_Howe | 2025-10-04T00:00:00Z | 2025-10-04T15:30:00Z
cron 45 1 * * *     | Australia/Lord_Howe | 2026-04-04T14:00:00Z | 2026-04-04T14:45:00Z
cron 45 1 * * *     | Australia/Lord_Howe | 2026-04-04T14:45:00Z | 2026-04-05T15:15:00Z
";

fn schedule(text: &str) -> Schedule {
    let (kind, rest) = text.split_once(' ').unwrap();
    match kind {
        "at" => Schedule::At { at_ms: utc(rest) },
        "every" => {
            let (minutes, anchor) = rest.split_once(" from ").unwrap();
            Schedule::Every {
                every_ms: minutes.parse::<i64>().unwrap() * MINUTE_MS,
                anchor_ms: utc(anchor),
            }
        }
        _ => Schedule::Cron {
            expr: rest.into(),
            tz: None,
        },
    }
}

#[test]
fn next_runs() {
    let rows = TABLE
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    for row in rows {
        let cols: Vec<&str> = row.split('|').map(str::trim).collect();
        let [spec, zone, after, want] = cols[..] else {
            panic!("bad row {row}")
        };
        let got = next_after(&schedule(spec), utc(after), &Tz::named(zone)).unwrap();
        let want = (want != "-").then(|| utc(want));
        assert_eq!(got, want, "{row}");
    }
}

#[test]
fn first_runs() {
    let tz = Tz::named("UTC");
    let now = utc("2026-11-24T08:00:00Z");
    // A past `at` is due at once; the others start after now.
    let cases = [
        ("at 2026-11-24T07:00:00Z", Some("2026-11-24T07:00:00Z")),
        (
            "every 30 from 2026-11-24T08:00:00Z",
            Some("2026-11-24T08:30:00Z"),
        ),
        ("cron 0 8 * * *", Some("2026-11-25T08:00:00Z")),
        ("cron 0 0 30 2 *", None),
    ];
    for (spec, want) in cases {
        let got = first_run(&schedule(spec), now, &tz).unwrap();
        assert_eq!(got, want.map(utc), "{spec}");
    }
    assert!(first_run(&schedule("cron 0 0 L * *"), now, &tz).is_err());
}
