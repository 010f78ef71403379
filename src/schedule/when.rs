//! Instants written by people and models: `1767000000` (epoch seconds),
//! `1767000000000` (ms), `in 2 hours` / `2h`, `today 9pm`,
//! `tomorrow at 09:30`, `monday at 9`, `2026-11-24T09:00:00Z`,
//! `2026-11-24T09:00+01:00`, and local `2026-11-24 09:00` (read in the
//! user's zone). Hand-parsed: no regex engine in the wasm.

use super::cron::weekday;
use crate::time::{local_date_time, resolve_local, LocalDate, LocalInstant, TimeZone};
use crate::time::{DAY_MS, HOUR_MS, MINUTE_MS};

/// Why a date-time string was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WhenError {
    /// Matches no accepted form.
    Unrecognized(String),
    /// The right form with an impossible value (`2026-02-30`, `25:00`).
    Invalid(String),
}

impl std::fmt::Display for WhenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WhenError::Unrecognized(s) => write!(
                f,
                "cannot read the time \"{s}\": use an ISO date-time (2026-11-24T09:00, read in the \
                 user's time zone, or with Z / +01:00), \"today 9pm\", \"tomorrow at 09:30\", \
                 \"monday at 9\", or \"in 2 hours\""
            ),
            WhenError::Invalid(s) => write!(f, "\"{s}\" is not a valid date or time"),
        }
    }
}

impl std::error::Error for WhenError {}

/// The instant `text` names, relative forms counted from `now_ms`, local
/// forms read in `tz` (a skipped local time means the end of the gap).
pub fn parse_when(text: &str, now_ms: i64, tz: &dyn TimeZone) -> Result<i64, WhenError> {
    let s = text.trim();
    let digits = s.bytes().all(|b| b.is_ascii_digit());
    if digits && s.len() == 10 {
        return s.parse::<i64>().map(|v| v * 1000).map_err(|_| invalid(s));
    }
    if digits && (11..=16).contains(&s.len()) {
        return s.parse().map_err(|_| invalid(s));
    }
    if let Some(ms) = parse_relative(s) {
        return Ok(now_ms.saturating_add(ms));
    }
    if let Some(at) = parse_day_words(s, now_ms, tz)? {
        return Ok(at);
    }
    if let Some(at) = parse_iso(s, tz)? {
        return Ok(at);
    }
    Err(WhenError::Unrecognized(s.to_string()))
}

fn invalid(s: &str) -> WhenError {
    WhenError::Invalid(s.to_string())
}

/// `in 2 hours`, `2h`, `in 1.5 days`, `30 min` → milliseconds.
pub fn parse_relative(text: &str) -> Option<i64> {
    let s = text.trim().to_ascii_lowercase();
    let s = s.strip_prefix("in ").unwrap_or(&s).trim_start();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let amount: f64 = s[..split].parse().ok()?;
    let unit = match s[split..].trim() {
        "ms" | "millisecond" | "milliseconds" => 1,
        "s" | "sec" | "secs" | "second" | "seconds" => 1000,
        "m" | "min" | "mins" | "minute" | "minutes" => MINUTE_MS,
        "h" | "hr" | "hrs" | "hour" | "hours" => HOUR_MS,
        "d" | "day" | "days" => DAY_MS,
        "w" | "week" | "weeks" => 7 * DAY_MS,
        _ => return None,
    };
    let ms = (amount * unit as f64).round();
    (0.0..1e15).contains(&ms).then_some(ms as i64)
}

const WEEKDAYS: [&str; 7] = [
    "sunday",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
];

/// `today|tomorrow|[next] <weekday> [at] H[:MM] [am|pm]` in `tz`. A bare
/// day means midnight (today's has passed: due at once). A weekday is its
/// next occurrence whose time is still ahead (today if it is).
fn parse_day_words(s: &str, now_ms: i64, tz: &dyn TimeZone) -> Result<Option<i64>, WhenError> {
    let lower = s.to_ascii_lowercase();
    let mut words = lower.split_whitespace().peekable();
    if words.peek() == Some(&"next") {
        words.next();
    }
    let Some(day_word) = words.next() else {
        return Ok(None);
    };
    let today = local_date_time(tz, now_ms).date;
    enum Day {
        Offset(i64),
        Weekday(u32),
    }
    let day = match day_word {
        "today" => Day::Offset(0),
        "tomorrow" => Day::Offset(1),
        w => match WEEKDAYS
            .iter()
            .position(|d| *d == w || (w.len() >= 3 && d.starts_with(w)))
        {
            Some(i) => Day::Weekday(i as u32),
            None => return Ok(None),
        },
    };
    let rest: Vec<&str> = words.collect();
    let rest = rest.strip_prefix(&["at"]).unwrap_or(&rest).concat();
    let (hour, minute) = if rest.is_empty() {
        (0, 0)
    } else {
        parse_clock(&rest).ok_or_else(|| invalid(s))?
    };
    let at = |date: LocalDate| match resolve_local(tz, date, hour, minute) {
        LocalInstant::Unique(t) | LocalInstant::Repeated(t, _) | LocalInstant::Skipped(t) => t,
    };
    let shift = |n: i64| LocalDate::from_epoch_days(today.epoch_days() + n);
    Ok(Some(match day {
        Day::Offset(n) => at(shift(n)),
        Day::Weekday(w) => {
            let ahead = i64::from((w + 7 - weekday(today)) % 7);
            let t = at(shift(ahead));
            if t > now_ms {
                t
            } else {
                at(shift(ahead + 7))
            }
        }
    }))
}

/// `9`, `09:30`, `9pm`, `9:30am`, `12am` (midnight) → (hour, minute).
pub fn parse_clock(s: &str) -> Option<(u32, u32)> {
    let s = s.trim().to_ascii_lowercase();
    let (s, meridiem) = match (s.strip_suffix("am"), s.strip_suffix("pm")) {
        (Some(r), _) => (r.trim_end().to_string(), Some(false)),
        (_, Some(r)) => (r.trim_end().to_string(), Some(true)),
        _ => (s, None),
    };
    let (h, m) = s.split_once(':').unwrap_or((&s, "00"));
    if h.is_empty() || h.len() > 2 || m.len() != 2 {
        return None;
    }
    let hour: u32 = h.parse().ok()?;
    let minute: u32 = m.parse().ok()?;
    if minute > 59 {
        return None;
    }
    let hour = match meridiem {
        None if hour <= 23 => hour,
        Some(pm) if (1..=12).contains(&hour) => hour % 12 + if pm { 12 } else { 0 },
        _ => return None,
    };
    Some((hour, minute))
}

/// `YYYY-MM-DD[(T| )HH[:MM[:SS[.fff]]]][Z|±HH[:]MM| UTC| GMT]`; without a
/// zone it is read in `tz`.
fn parse_iso(s: &str, tz: &dyn TimeZone) -> Result<Option<i64>, WhenError> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (Some(year), Some(month), Some(day)) = (num(0..4), num(5..7), num(8..10)) else {
        return Ok(None);
    };
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return Ok(None);
    }
    let date = LocalDate {
        year: i64::from(year),
        month,
        day,
    };
    // A real date survives the round trip through day numbers.
    if !(1..=12).contains(&month) || LocalDate::from_epoch_days(date.epoch_days()) != date {
        return Err(invalid(s));
    }
    let rest = &s[10..];
    let rest = rest.strip_prefix(['T', 't', ' ']).unwrap_or(rest);
    let (clock, offset) = split_zone(rest).ok_or_else(|| invalid(s))?;
    let (hour, minute, second, millis) = parse_hms(clock).ok_or_else(|| invalid(s))?;
    let extra = i64::from(second) * 1000 + i64::from(millis);
    Ok(Some(match offset {
        Some(offset) => {
            date.epoch_days() * DAY_MS
                + i64::from(hour) * HOUR_MS
                + i64::from(minute) * MINUTE_MS
                + extra
                - offset
        }
        None => match resolve_local(tz, date, hour, minute) {
            LocalInstant::Unique(t) | LocalInstant::Repeated(t, _) => t + extra,
            LocalInstant::Skipped(t) => t,
        },
    }))
}

/// The clock part and the explicit offset (ms) if any; `None` if the zone
/// suffix is malformed.
fn split_zone(rest: &str) -> Option<(&str, Option<i64>)> {
    let upper = rest.to_ascii_uppercase();
    for suffix in ["Z", " UTC", "UTC", " GMT", "GMT"] {
        if upper.ends_with(suffix) {
            return Some((rest[..rest.len() - suffix.len()].trim_end(), Some(0)));
        }
    }
    // ±HH:MM or ±HHMM after the clock (never at the start: no clock).
    if let Some(i) = rest.rfind(['+', '-']).filter(|i| *i > 0) {
        let z = rest[i + 1..].replace(':', "");
        if z.len() != 4 || !z.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let (h, m): (i64, i64) = (z[..2].parse().ok()?, z[2..].parse().ok()?);
        if h > 14 || m > 59 {
            return None;
        }
        let sign = if rest.as_bytes()[i] == b'-' { -1 } else { 1 };
        return Some((
            rest[..i].trim_end(),
            Some(sign * (h * HOUR_MS + m * MINUTE_MS)),
        ));
    }
    Some((rest, None))
}

/// `HH[:MM[:SS[.fff]]]` (empty: midnight).
fn parse_hms(clock: &str) -> Option<(u32, u32, u32, u32)> {
    if clock.is_empty() {
        return Some((0, 0, 0, 0));
    }
    let (clock, frac) = clock.split_once('.').unwrap_or((clock, ""));
    let parts: Vec<&str> = clock.split(':').collect();
    let field = |i: usize, max: u32| -> Option<u32> {
        match parts.get(i) {
            None => Some(0),
            Some(p) if (1..=2).contains(&p.len()) && p.bytes().all(|c| c.is_ascii_digit()) => {
                p.parse().ok().filter(|v| *v <= max)
            }
            Some(_) => None,
        }
    };
    if parts.len() > 3 || frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let millis = format!("{frac:0<3}")[..3].parse().ok()?;
    Some((field(0, 23)?, field(1, 59)?, field(2, 59)?, millis))
}
