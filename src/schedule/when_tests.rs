//! Date-time strings as people and models write them.

use super::input_tests::now;
use super::when::{parse_clock, parse_when, WhenError};
use crate::time::test_tz::{utc, Tz};
use crate::time::{FixedOffset, HOUR_MS};

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
