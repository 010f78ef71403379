//! The cron parser: what each expression matches, and every refusal.

use super::cron::{weekday, CronError, CronExpr, CronField};
use crate::time::LocalDate;

fn vals(e: &CronExpr, f: CronField) -> Vec<u32> {
    e.values(f).collect()
}

fn range(a: u32, b: u32) -> Vec<u32> {
    (a..=b).collect()
}

#[test]
fn parses_fields() {
    use CronField::*;
    // (expr, field, values)
    let cases: Vec<(&str, CronField, Vec<u32>)> = vec![
        ("* * * * *", Minute, range(0, 59)),
        ("? * * * *", Minute, range(0, 59)),
        ("* * * * *", DayOfWeek, range(0, 6)),
        ("5 * * * *", Minute, vec![5]),
        ("1,2,30 * * * *", Minute, vec![1, 2, 30]),
        ("10-13 * * * *", Minute, vec![10, 11, 12, 13]),
        ("*/15 * * * *", Minute, vec![0, 15, 30, 45]),
        ("10-30/10 * * * *", Minute, vec![10, 20, 30]),
        ("50/5 * * * *", Minute, vec![50, 55]),
        ("*/90 * * * *", Minute, vec![0]),
        ("0 0-23/6 * * *", Hour, vec![0, 6, 12, 18]),
        ("0 0 1,15,31 * *", DayOfMonth, vec![1, 15, 31]),
        ("0 0 * JAN,jul,Dec *", Month, vec![1, 7, 12]),
        ("0 0 * mar-MAY *", Month, vec![3, 4, 5]),
        ("0 0 * */3 *", Month, vec![1, 4, 7, 10]),
        ("0 0 * * MON-FRI", DayOfWeek, vec![1, 2, 3, 4, 5]),
        ("0 0 * * sun", DayOfWeek, vec![0]),
        ("0 0 * * 7", DayOfWeek, vec![0]),
        ("0 0 * * 0,7", DayOfWeek, vec![0]),
        ("0 0 * * 5-7", DayOfWeek, vec![0, 5, 6]),
        ("0 0 * * FRI-SUN", DayOfWeek, vec![0, 5, 6]),
        ("0 0 * * 1-7/2", DayOfWeek, vec![0, 1, 3, 5]),
        ("0 0 * * */2", DayOfWeek, vec![0, 2, 4, 6]),
        ("0 0 * * WED,thu", DayOfWeek, vec![3, 4]),
    ];
    for (expr, field, want) in cases {
        let e = CronExpr::parse(expr).unwrap_or_else(|err| panic!("{expr}: {err}"));
        assert_eq!(vals(&e, field), want, "{expr} {field:?}");
    }
}

#[test]
fn normalizes_whitespace_and_flags() {
    let e = CronExpr::parse("  0   9\t* *  1-5 ").unwrap();
    assert_eq!(e.to_string(), "0 9 * * 1-5");
    assert!(e.is_star(CronField::DayOfMonth));
    assert!(!e.is_star(CronField::DayOfWeek));
    assert!(!e.is_wildcard_time());
    assert!(CronExpr::parse("*/5 9 * * *").unwrap().is_wildcard_time());
    assert!(CronExpr::parse("30 * * * *").unwrap().is_wildcard_time());
    assert_eq!(
        "0 9 * * *".parse::<CronExpr>(),
        CronExpr::parse("0 9 * * *")
    );
}

#[rustfmt::skip]
fn malformed() -> Vec<(&'static str, CronError)> {
    use CronError::*;
    use CronField::*;
    let s = |t: &str| t.to_string();
    vec![
        ("", FieldCount(0)),
        ("* * * *", FieldCount(4)),
        ("0 * * * * *", FieldCount(6)),
        ("60 * * * *", OutOfRange { field: Minute, value: 60 }),
        ("0 24 * * *", OutOfRange { field: Hour, value: 24 }),
        ("0 0 0 * *", OutOfRange { field: DayOfMonth, value: 0 }),
        ("0 0 32 * *", OutOfRange { field: DayOfMonth, value: 32 }),
        ("0 0 * 13 *", OutOfRange { field: Month, value: 13 }),
        ("0 0 * 0 *", OutOfRange { field: Month, value: 0 }),
        ("0 0 * * 8", OutOfRange { field: DayOfWeek, value: 8 }),
        ("*/0 * * * *", BadStep { field: Minute, token: s("*/0") }),
        ("*/x * * * *", BadStep { field: Minute, token: s("*/x") }),
        ("1-5/ * * * *", BadStep { field: Minute, token: s("1-5/") }),
        ("30-10 * * * *", Reversed { field: Minute, start: 30, end: 10 }),
        ("0 0 * DEC-JAN *", Reversed { field: Month, start: 12, end: 1 }),
        ("1,,2 * * * *", Empty(Minute)),
        ("0 0 * * ,", Empty(DayOfWeek)),
        ("a * * * *", Invalid { field: Minute, token: s("a") }),
        ("-5 * * * *", Invalid { field: Minute, token: s("-5") }),
        ("0 0 * * MONDAY", Invalid { field: DayOfWeek, token: s("MONDAY") }),
        ("0 0 * JAN1 *", Invalid { field: Month, token: s("JAN1") }),
        ("0 0 MON * *", Invalid { field: DayOfMonth, token: s("MON") }),
        ("0 0 * * 1-", Invalid { field: DayOfWeek, token: s("1-") }),
        ("99999999999 * * * *", Invalid { field: Minute, token: s("99999999999") }),
        ("0 0 L * *", Unsupported { field: DayOfMonth, token: s("L") }),
        ("0 0 15W * *", Unsupported { field: DayOfMonth, token: s("15W") }),
        ("0 0 LW * *", Unsupported { field: DayOfMonth, token: s("LW") }),
        ("0 0 * * 5L", Unsupported { field: DayOfWeek, token: s("5L") }),
        ("0 0 * * 1#2", Unsupported { field: DayOfWeek, token: s("1#2") }),
        ("0 0 * * MON#1", Unsupported { field: DayOfWeek, token: s("MON#1") }),
    ]
}

#[test]
fn refuses_malformed() {
    for (expr, want) in malformed() {
        assert_eq!(CronExpr::parse(expr), Err(want), "{expr:?}");
    }
}

#[test]
fn error_texts_name_the_field() {
    let text = |e: &str| CronExpr::parse(e).err().map(|e| e.to_string());
    let cases = [
        (
            "* * *",
            "a cron expression has 5 fields (minute hour day-of-month month day-of-week), found 3",
        ),
        (
            "0 0 L * *",
            "day-of-month: `L` uses L, W or #, which are not supported",
        ),
        (
            "0 0 * * 1#2",
            "day-of-week: `1#2` uses L, W or #, which are not supported",
        ),
        ("0 25 * * *", "hour: 25 is out of range 0-23"),
        ("5-1 * * * *", "minute: range 5-1 is reversed"),
        (
            "*/0 * * * *",
            "minute: bad step in `*/0` (a positive number is needed)",
        ),
        ("x * * * *", "minute: `x` is not a valid value"),
        ("1,,2 * * * *", "minute: empty list item"),
    ];
    for (expr, want) in cases {
        assert_eq!(text(expr).as_deref(), Some(want), "{expr}");
    }
}

fn d(year: i64, month: u32, day: u32) -> LocalDate {
    LocalDate { year, month, day }
}

#[test]
fn weekdays() {
    assert_eq!(weekday(d(1970, 1, 1)), 4);
    assert_eq!(weekday(d(2026, 11, 24)), 2);
    assert_eq!(weekday(d(2026, 11, 29)), 0);
    assert_eq!(weekday(d(1969, 12, 28)), 0);
}

#[test]
fn day_rule_or_when_both_restricted() {
    // 2026-11: Sun 1, Mon 2, Sun 15, Mon 16, Tue 24.
    let cases = [
        // Both restricted: either matches.
        ("0 9 1,15 * MON", d(2026, 11, 1), true),
        ("0 9 1,15 * MON", d(2026, 11, 2), true),
        ("0 9 1,15 * MON", d(2026, 11, 3), false),
        // dow star: dom alone.
        ("0 9 1,15 * *", d(2026, 11, 2), false),
        ("0 9 1,15 * *", d(2026, 11, 15), true),
        // dom star: dow alone.
        ("0 9 * * MON", d(2026, 11, 16), true),
        ("0 9 * * MON", d(2026, 11, 15), false),
        // A star with a step still counts as star (Vixie): AND.
        ("0 9 */2 * MON", d(2026, 11, 2), false),
        ("0 9 */2 * MON", d(2026, 11, 9), true),
        // Month gates both.
        ("0 9 1 DEC MON", d(2026, 11, 2), false),
        ("0 9 1 DEC MON", d(2026, 12, 7), true),
    ];
    for (expr, date, want) in cases {
        let e = CronExpr::parse(expr).unwrap();
        assert_eq!(e.matches_date(date), want, "{expr} on {date}");
    }
}
