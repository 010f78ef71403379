//! When a schedule fires next, strictly after a given instant.
//!
//! Cron expressions are read on the wall clock of the job's zone. Across
//! DST changes (Vixie cron's rule, see [`CronExpr::is_wildcard_time`]):
//! - a job at a fixed time (`30 2 * * *`) whose time is skipped by a
//!   spring-forward runs once, at the first valid minute after the gap
//!   (03:00); on a fall-back its repeated time runs once, the first time;
//! - a wildcard job (`*/15 * * * *`, `30 * * * *`) keeps real-time
//!   cadence: skipped minutes simply do not happen, repeated ones run twice.

use super::cron::{CronError, CronExpr, CronField};
use super::Schedule;
use crate::time::{local_date_time, resolve_local, LocalDate, LocalInstant, TimeZone, DAY_MS};
use crate::time::{HOUR_MS, MINUTE_MS};

/// How far ahead a cron search looks: a bit over 8 years, so a
/// `0 9 29 2 *` job still finds 2104-02-29 from 2096 (2100 is no leap year).
pub const SEARCH_DAYS: i64 = 3000;

/// The first run of a new (or re-enabled, or rescheduled) job: `at` fires
/// at `atMs` even if that is past (due at once); the others at their first
/// slot strictly after `now_ms`. `None`: the schedule never fires.
pub fn first_run(
    schedule: &Schedule,
    now_ms: i64,
    tz: &dyn TimeZone,
) -> Result<Option<i64>, CronError> {
    match schedule {
        Schedule::At { at_ms } => Ok(Some(*at_ms)),
        _ => next_after(schedule, now_ms, tz),
    }
}

/// The first slot strictly after `after_ms` (`tz`: the zone named by
/// [`Schedule::zone_name`]; only cron uses it).
pub fn next_after(
    schedule: &Schedule,
    after_ms: i64,
    tz: &dyn TimeZone,
) -> Result<Option<i64>, CronError> {
    Ok(match schedule {
        Schedule::At { at_ms } => (*at_ms > after_ms).then_some(*at_ms),
        Schedule::Every {
            every_ms,
            anchor_ms,
        } => next_every(*every_ms, *anchor_ms, after_ms),
        Schedule::Cron { expr, .. } => next_cron(&CronExpr::parse(expr)?, tz, after_ms),
    })
}

/// `anchor + (⌊(after − anchor)/every⌋ + 1)·every`; the anchor itself
/// while it is still ahead (a start time in the future).
pub fn next_every(every_ms: i64, anchor_ms: i64, after_ms: i64) -> Option<i64> {
    if every_ms <= 0 {
        return None;
    }
    if after_ms < anchor_ms {
        return Some(anchor_ms);
    }
    let periods = (after_ms - anchor_ms) / every_ms + 1;
    anchor_ms.checked_add(periods.checked_mul(every_ms)?)
}

/// The first instant strictly after `after_ms` whose wall clock in `tz`
/// matches `expr` (with the DST rule above); `None` beyond [`SEARCH_DAYS`].
///
/// Walks local dates, skipping months and days that cannot match, and
/// within a matching day only the matching hours and minutes. Candidates
/// come in local order; an instant lies within the day's offset range of
/// its local reading, which bounds both what can be skipped and when the
/// best candidate so far can no longer be beaten (folds reorder instants).
pub fn next_cron(expr: &CronExpr, tz: &dyn TimeZone, after_ms: i64) -> Option<i64> {
    let wildcard = expr.is_wildcard_time();
    // From the day before: a fold may put its readings after `after_ms`.
    let first = local_date_time(tz, after_ms).date.epoch_days() - 1;
    let mut best: Option<i64> = None;
    let mut day = first;
    while day <= first + SEARCH_DAYS {
        let date = LocalDate::from_epoch_days(day);
        if !expr.has(CronField::Month, date.month) {
            day = first_of_next_month(date).epoch_days();
            continue;
        }
        if !expr.matches_date(date) {
            day += 1;
            continue;
        }
        let local_day = day * DAY_MS;
        let (lo, hi) = offset_range(tz, local_day);
        // Readings in this day resolve within [L − hi, L − lo].
        if best.is_some_and(|b| local_day - hi > b) {
            break;
        }
        for hour in expr.values(CronField::Hour) {
            let local_hour = local_day + i64::from(hour) * HOUR_MS;
            if local_hour + HOUR_MS - lo <= after_ms {
                continue;
            }
            for minute in expr.values(CronField::Minute) {
                let local = local_hour + i64::from(minute) * MINUTE_MS;
                if local - lo <= after_ms {
                    continue;
                }
                if best.is_some_and(|b| local - hi > b) {
                    return best;
                }
                let (a, b) = candidates(resolve_local(tz, date, hour, minute), wildcard);
                for t in [a, b].into_iter().flatten() {
                    if t > after_ms && best.is_none_or(|b| t < b) {
                        best = Some(t);
                    }
                }
            }
        }
        day += 1;
    }
    best
}

/// The instants a reading fires at: a fixed-time job once (the first
/// occurrence, or the end of a gap), a wildcard job at each occurrence.
fn candidates(instant: LocalInstant, wildcard: bool) -> (Option<i64>, Option<i64>) {
    match instant {
        LocalInstant::Unique(t) => (Some(t), None),
        LocalInstant::Repeated(a, b) => (Some(a), wildcard.then_some(b)),
        LocalInstant::Skipped(resume) => ((!wildcard).then_some(resume), None),
    }
}

/// The smallest and largest offset in force around a local day.
fn offset_range(tz: &dyn TimeZone, local_day: i64) -> (i64, i64) {
    let a = tz.offset_ms(local_day - DAY_MS);
    let b = tz.offset_ms(local_day + 2 * DAY_MS);
    (a.min(b), a.max(b))
}

fn first_of_next_month(date: LocalDate) -> LocalDate {
    let (year, month) = if date.month == 12 {
        (date.year + 1, 1)
    } else {
        (date.year, date.month + 1)
    };
    LocalDate {
        year,
        month,
        day: 1,
    }
}
