//! 5-field cron expressions: `minute hour day-of-month month day-of-week`.
//!
//! Supported: `*` (and `?` as `*`), numbers, lists `a,b`, ranges `a-b`,
//! steps `*/n`, `a-b/n` and `a/n` (from `a` to the field's end), month
//! names `JAN`–`DEC` and weekday names `SUN`–`SAT` (any case), weekday 0–7
//! with both 0 and 7 meaning Sunday (`FRI-SUN` wraps to 5–7).
//!
//! Day rule (Vixie cron): when both day-of-month and day-of-week are
//! restricted (neither starts with `*`), a day matches if EITHER does;
//! otherwise both must (so `0 9 1,15 * MON` runs on the 1st, the 15th and
//! every Monday, while `0 9 * * MON` runs on Mondays only).
//!
//! Not supported, refused with [`CronError::Unsupported`]: `L` (last),
//! `W` (nearest weekday), `#` (nth weekday) — Quartz extensions whose
//! meaning differs between implementations; a clear error beats a guess.
//! Hand-written rather than a crate: the `cron`/`croner` crates pull in
//! chrono (size in the wasm) and accept syntax we refuse; this is ~200 lines.

use crate::time::{LocalDate, LocalDateTime};

pub use super::cron_error::{CronError, CronField};

/// A parsed expression: one bit set per field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronExpr {
    source: String,
    /// Bit `v` set when value `v` matches; index by [`CronField`] order.
    bits: [u64; 5],
    /// The field's text starts with `*` or `?` (Vixie's "star" flag).
    star: [bool; 5],
}

impl std::str::FromStr for CronExpr {
    type Err = CronError;
    fn from_str(s: &str) -> Result<Self, CronError> {
        CronExpr::parse(s)
    }
}

impl std::fmt::Display for CronExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.source)
    }
}

impl CronExpr {
    pub fn parse(expr: &str) -> Result<Self, CronError> {
        let fields: Vec<&str> = expr.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(CronError::FieldCount(fields.len()));
        }
        let mut bits = [0u64; 5];
        let mut star = [false; 5];
        for (i, (text, field)) in fields.iter().zip(CronField::ALL).enumerate() {
            bits[i] = parse_field(text, field)?;
            star[i] = text.starts_with(['*', '?']);
        }
        // Sunday is both 0 and 7.
        if bits[4] & (1 << 7) != 0 {
            bits[4] = (bits[4] | 1) & !(1 << 7);
        }
        Ok(Self {
            source: fields.join(" "),
            bits,
            star,
        })
    }

    /// Whether `value` of `field` matches (weekday 0 = Sunday).
    pub fn has(&self, field: CronField, value: u32) -> bool {
        value < 64 && self.bits[field as usize] & (1 << value) != 0
    }

    /// The matching values of `field`, ascending.
    pub fn values(&self, field: CronField) -> impl Iterator<Item = u32> + '_ {
        let bits = self.bits[field as usize];
        (0..64).filter(move |v| bits & (1 << v) != 0)
    }

    /// Whether the field's text starts with `*` or `?`.
    pub fn is_star(&self, field: CronField) -> bool {
        self.star[field as usize]
    }

    /// Vixie's "wildcard" jobs (minute or hour starts with `*`): they run
    /// on real time across DST changes, where jobs at fixed times run once
    /// (see `next.rs`).
    pub fn is_wildcard_time(&self) -> bool {
        self.star[0] || self.star[1]
    }

    /// Whether the month and day (by the dom/dow rule) match `date`.
    pub fn matches_date(&self, date: LocalDate) -> bool {
        if !self.has(CronField::Month, date.month) {
            return false;
        }
        let dom = self.has(CronField::DayOfMonth, date.day);
        let dow = self.has(CronField::DayOfWeek, weekday(date));
        if self.is_star(CronField::DayOfMonth) || self.is_star(CronField::DayOfWeek) {
            dom && dow
        } else {
            dom || dow
        }
    }

    /// Whether a local wall-clock reading matches (seconds ignored).
    pub fn matches(&self, t: &LocalDateTime) -> bool {
        self.has(CronField::Minute, t.minute)
            && self.has(CronField::Hour, t.hour)
            && self.matches_date(t.date)
    }
}

/// 0 = Sunday … 6 = Saturday (1970-01-01 was a Thursday).
pub fn weekday(date: LocalDate) -> u32 {
    (date.epoch_days() + 4).rem_euclid(7) as u32
}

fn parse_field(text: &str, field: CronField) -> Result<u64, CronError> {
    let mut bits = 0u64;
    for item in text.split(',') {
        if item.is_empty() {
            return Err(CronError::Empty(field));
        }
        let quartz =
            item.contains('#') || (item.contains(['L', 'l', 'W', 'w']) && !is_name_item(item));
        if quartz {
            return Err(CronError::Unsupported {
                field,
                token: item.to_string(),
            });
        }
        bits |= parse_item(item, field)?;
    }
    Ok(bits)
}

/// Names that contain `L`/`W` (`JUL`, `WED`…) are not the Quartz letters.
fn is_name_item(item: &str) -> bool {
    let names = || {
        CronField::Month
            .names()
            .iter()
            .chain(CronField::DayOfWeek.names())
    };
    item.split(['-', '/'])
        .filter(|part| part.chars().any(|c| c.is_ascii_alphabetic()))
        .all(|part| names().any(|n| n.eq_ignore_ascii_case(part)))
}

fn parse_item(item: &str, field: CronField) -> Result<u64, CronError> {
    let (lo, hi) = field.bounds();
    let (range, step) = match item.split_once('/') {
        Some((range, step)) => {
            let bad = || CronError::BadStep {
                field,
                token: item.to_string(),
            };
            let n: u32 = step.parse().map_err(|_| bad())?;
            if n == 0 {
                return Err(bad());
            }
            (range, Some(n))
        }
        None => (item, None),
    };
    let (start, end) = if range == "*" || range == "?" {
        (lo, if field == CronField::DayOfWeek { 6 } else { hi })
    } else if let Some((a, b)) = range.split_once('-') {
        let (a, b) = (value(a, field, item)?, value(b, field, item)?);
        // `FRI-SUN`: Sunday as a range end is 7.
        let b = if field == CronField::DayOfWeek && b == 0 && a > 0 {
            7
        } else {
            b
        };
        if a > b {
            return Err(CronError::Reversed {
                field,
                start: a,
                end: b,
            });
        }
        (a, b)
    } else {
        let a = value(range, field, item)?;
        // `a/n` runs from `a` to the field's end.
        (a, if step.is_some() { hi } else { a })
    };
    let step = step.unwrap_or(1);
    Ok((start..=end)
        .step_by(step as usize)
        .fold(0, |b, v| b | 1 << v))
}

fn value(token: &str, field: CronField, item: &str) -> Result<u32, CronError> {
    let invalid = || CronError::Invalid {
        field,
        token: item.to_string(),
    };
    let v = if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
        token.parse().map_err(|_| invalid())?
    } else if let Some(i) = field
        .names()
        .iter()
        .position(|n| n.eq_ignore_ascii_case(token))
    {
        // Months count from 1, weekdays from 0.
        i as u32 + u32::from(field == CronField::Month)
    } else {
        return Err(invalid());
    };
    let (lo, hi) = field.bounds();
    if v < lo || v > hi {
        return Err(CronError::OutOfRange { field, value: v });
    }
    Ok(v)
}
