//! Plain-English answers for the tool and the CLI, in the user's zone:
//! what a schedule means, when it runs next, what time it is now.

use super::cron::{weekday, CronExpr, CronField};
use super::Schedule;
use crate::time::{local_date_time, TimeZone, DAY_MS, HOUR_MS, MINUTE_MS};

const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const WEEKDAY_NAMES: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `Tue 24 Nov 2026 09:00` in `tz`.
pub fn date_time(tz: &dyn TimeZone, utc_ms: i64) -> String {
    let t = local_date_time(tz, utc_ms);
    format!(
        "{} {} {} {} {:02}:{:02}",
        WEEKDAYS[weekday(t.date) as usize],
        t.date.day,
        MONTHS[(t.date.month as usize + 11) % 12],
        t.date.year,
        t.hour,
        t.minute
    )
}

/// `UTC+01:00`, `UTC-04:00`, `UTC+05:30`, `UTC`.
pub fn offset_label(tz: &dyn TimeZone, utc_ms: i64) -> String {
    let off = tz.offset_ms(utc_ms);
    if off == 0 {
        return "UTC".into();
    }
    let sign = if off < 0 { '-' } else { '+' };
    let m = off.abs() / MINUTE_MS;
    format!("UTC{sign}{:02}:{:02}", m / 60, m % 60)
}

/// `Tue 24 Nov 2026 09:00 (Europe/Berlin, UTC+01:00)`: the tool's
/// `currentTime`.
pub fn current_time(tz: &dyn TimeZone, zone: &str, now_ms: i64) -> String {
    format!(
        "{} ({zone}, {})",
        date_time(tz, now_ms),
        offset_label(tz, now_ms)
    )
}

/// What a schedule means, e.g. `every day at 09:00 (Europe/Berlin)`,
/// `once on Tue 24 Nov 2026 09:00 (Europe/Berlin, UTC+01:00)`,
/// `every 30 minutes`. `tz`/`zone`: the schedule's zone
/// ([`Schedule::zone_name`]).
pub fn schedule_human(schedule: &Schedule, tz: &dyn TimeZone, zone: &str) -> String {
    match schedule {
        Schedule::At { at_ms } => format!("once on {}", current_time(tz, zone, *at_ms)),
        Schedule::Every { every_ms, .. } => format!("every {}", interval(*every_ms)),
        Schedule::Cron { expr, .. } => match CronExpr::parse(expr) {
            Ok(cron) => format!("{} ({zone})", describe_cron(&cron)),
            Err(_) => format!("cron \"{expr}\" (invalid)"),
        },
    }
}

/// `Tue 24 Nov 2026 09:00 (in 2h 15m)`, `now (5m late)`, `not scheduled`.
pub fn next_run_human(next_ms: Option<i64>, tz: &dyn TimeZone, now_ms: i64) -> String {
    match next_ms {
        None => "not scheduled".into(),
        Some(t) if t <= now_ms - MINUTE_MS => format!("now ({} late)", duration(now_ms - t)),
        Some(t) if t <= now_ms => "now".into(),
        Some(t) => format!("{} (in {})", date_time(tz, t), duration(t - now_ms)),
    }
}

/// `2h 15m`, `3d 4h`, `45s`, `0s` (two largest units, rounded down).
pub fn duration(ms: i64) -> String {
    let ms = ms.max(0);
    let parts = [
        (ms / DAY_MS, "d"),
        (ms % DAY_MS / HOUR_MS, "h"),
        (ms % HOUR_MS / MINUTE_MS, "m"),
        (ms % MINUTE_MS / 1000, "s"),
    ];
    let shown: Vec<String> = parts
        .iter()
        .skip_while(|(n, _)| *n == 0)
        .take(2)
        .filter(|(n, _)| *n > 0)
        .map(|(n, u)| format!("{n}{u}"))
        .collect();
    if shown.is_empty() {
        "0s".into()
    } else {
        shown.join(" ")
    }
}

/// `30 minutes`, `hour`, `2 days`, `90 seconds`, `1500 ms`.
fn interval(ms: i64) -> String {
    let units = [
        (DAY_MS, "day"),
        (HOUR_MS, "hour"),
        (MINUTE_MS, "minute"),
        (1000, "second"),
    ];
    for (unit, name) in units {
        if ms >= unit && ms % unit == 0 {
            return match ms / unit {
                1 => name.to_string(),
                n => format!("{n} {name}s"),
            };
        }
    }
    format!("{ms} ms")
}

/// Common shapes in words; anything else as `cron "…"`.
fn describe_cron(cron: &CronExpr) -> String {
    let values = |f| cron.values(f).collect::<Vec<u32>>();
    let (minutes, hours) = (values(CronField::Minute), values(CronField::Hour));
    let literal = format!("cron \"{cron}\"");
    // Only whole months of days, narrowed by weekday at most.
    if values(CronField::DayOfMonth).len() != 31 || values(CronField::Month).len() != 12 {
        return literal;
    }
    let either = !cron.is_star(CronField::DayOfMonth) && !cron.is_star(CronField::DayOfWeek);
    let any_day = either || values(CronField::DayOfWeek).len() == 7;
    let days = match values(CronField::DayOfWeek).as_slice() {
        _ if any_day => "every day".to_string(),
        [1, 2, 3, 4, 5] => "every weekday (Mon–Fri)".to_string(),
        [0, 6] => "every weekend day".to_string(),
        [d] => format!("every {}", WEEKDAY_NAMES[*d as usize]),
        ds => {
            let names: Vec<&str> = ds.iter().map(|d| WEEKDAYS[*d as usize]).collect();
            format!("every {}", names.join(", "))
        }
    };
    match (minutes.as_slice(), hours.len()) {
        ([m], 1..=4) => {
            let times: Vec<String> = hours.iter().map(|h| format!("{h:02}:{m:02}")).collect();
            format!("{days} at {}", times.join(", "))
        }
        ([0], 24) if any_day => "every hour, on the hour".into(),
        ([m], 24) if any_day => format!("every hour at :{m:02}"),
        (ms, 24) if any_day && ms.len() > 1 => match step_of(ms, 60) {
            Some(1) => "every minute".into(),
            Some(step) => format!("every {step} minutes"),
            None => literal,
        },
        _ => literal,
    }
}

/// `n` when `values` are exactly `0, n, 2n, …` below `limit`.
fn step_of(values: &[u32], limit: u32) -> Option<u32> {
    let step = *values.get(1)?;
    let expected: Vec<u32> = (0..limit).step_by(step as usize).collect();
    (values == expected.as_slice()).then_some(step)
}
