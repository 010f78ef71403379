//! Wall-clock time in the user's time zone (`userTimezone`) without a time
//! zone database in the Worker: a [`TimeZone`] only answers "what is the
//! UTC offset at this instant". The Worker implements it over JS
//! `Intl.DateTimeFormat`; native tests implement it over `chrono-tz`
//! ([`test_tz`]). Everything else — calendar dates, local hours, local
//! midnight and DST gaps — is computed here.

/// Milliseconds per minute / hour / day.
pub const MINUTE_MS: i64 = 60_000;
pub const HOUR_MS: i64 = 60 * MINUTE_MS;
pub const DAY_MS: i64 = 24 * HOUR_MS;

/// A time zone: the offset from UTC (local − UTC, in ms) in force at an
/// instant given as Unix epoch milliseconds.
pub trait TimeZone {
    fn offset_ms(&self, utc_ms: i64) -> i64;
}

impl<T: TimeZone + ?Sized> TimeZone for &T {
    fn offset_ms(&self, utc_ms: i64) -> i64 {
        (**self).offset_ms(utc_ms)
    }
}

/// UTC (also the fallback for an unknown `userTimezone`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Utc;

impl TimeZone for Utc {
    fn offset_ms(&self, _utc_ms: i64) -> i64 {
        0
    }
}

/// A constant offset, e.g. `FixedOffset(5 * HOUR_MS + 30 * MINUTE_MS)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedOffset(pub i64);

impl TimeZone for FixedOffset {
    fn offset_ms(&self, _utc_ms: i64) -> i64 {
        self.0
    }
}

/// A calendar date (proleptic Gregorian).
pub use gsv_protocol::dates::CivilDate as LocalDate;

/// A local wall-clock reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalDateTime {
    pub date: LocalDate,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub millis: u32,
}

/// The wall clock in `tz` at `utc_ms`.
pub fn local_date_time(tz: &dyn TimeZone, utc_ms: i64) -> LocalDateTime {
    let local = utc_ms.saturating_add(tz.offset_ms(utc_ms));
    let ms = local.rem_euclid(DAY_MS);
    LocalDateTime {
        date: LocalDate::from_epoch_days(local.div_euclid(DAY_MS)),
        hour: (ms / HOUR_MS) as u32,
        minute: (ms % HOUR_MS / MINUTE_MS) as u32,
        second: (ms % MINUTE_MS / 1000) as u32,
        millis: (ms % 1000) as u32,
    }
}

/// `YYYY-MM-DD` of `utc_ms` in `tz` (daily memory file names).
pub fn date_string(tz: &dyn TimeZone, utc_ms: i64) -> String {
    local_date_time(tz, utc_ms).date.to_string()
}

/// `(today, yesterday)` as `YYYY-MM-DD` in `tz`: the two daily memory files
/// the prompt loads.
pub fn today_and_yesterday(tz: &dyn TimeZone, now_ms: i64) -> (String, String) {
    let today = local_date_time(tz, now_ms).date;
    (today.to_string(), today.pred().to_string())
}

/// `HH:MM` of `utc_ms` in `tz` (memory section headers).
pub fn hh_mm(tz: &dyn TimeZone, utc_ms: i64) -> String {
    let t = local_date_time(tz, utc_ms);
    format!("{:02}:{:02}", t.hour, t.minute)
}

/// The instant at which the wall clock in `tz` reads `date` `hour:minute`.
/// Like JS `Temporal`'s "compatible" disambiguation: a time skipped by a
/// DST jump is read with the offset before the jump (so it lands just after
/// the gap), a time that occurs twice resolves to the earlier instant.
pub fn local_to_utc(tz: &dyn TimeZone, date: LocalDate, hour: u32, minute: u32) -> i64 {
    let local =
        date.epoch_days() * DAY_MS + i64::from(hour) * HOUR_MS + i64::from(minute) * MINUTE_MS;
    // Offsets change at most once within a day of any instant in practice.
    let before = tz.offset_ms(local - DAY_MS);
    let after = tz.offset_ms(local + DAY_MS);
    let valid = |offset: i64| tz.offset_ms(local - offset) == offset;
    match (valid(before), valid(after)) {
        (true, true) => (local - before).min(local - after),
        (true, false) => local - before,
        (false, true) => local - after,
        // In a gap: the pre-transition offset.
        (false, false) => local - before,
    }
}

/// How a local wall-clock reading maps to instants (see [`resolve_local`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalInstant {
    /// The wall clock shows this time exactly once.
    Unique(i64),
    /// Twice (the clocks went back): both instants, the earlier first.
    Repeated(i64, i64),
    /// Never (the clocks jumped over it): the instant they resumed at,
    /// i.e. the first valid time after the gap.
    Skipped(i64),
}

/// Every instant at which the wall clock in `tz` reads `date` `hour:minute`
/// — unlike [`local_to_utc`], which picks one, this tells schedulers about
/// gaps and repeats so they can decide (cron: run once, after the gap).
pub fn resolve_local(tz: &dyn TimeZone, date: LocalDate, hour: u32, minute: u32) -> LocalInstant {
    let local =
        date.epoch_days() * DAY_MS + i64::from(hour) * HOUR_MS + i64::from(minute) * MINUTE_MS;
    // Offsets change at most once within a day of any instant in practice.
    let before = tz.offset_ms(local - DAY_MS);
    let after = tz.offset_ms(local + DAY_MS);
    let valid = |offset: i64| tz.offset_ms(local - offset) == offset;
    match (valid(before), valid(after)) {
        (true, true) if before != after => {
            let (a, b) = (local - before, local - after);
            LocalInstant::Repeated(a.min(b), a.max(b))
        }
        (true, _) => LocalInstant::Unique(local - before),
        (false, true) => LocalInstant::Unique(local - after),
        (false, false) => {
            let (a, b) = (local - before, local - after);
            LocalInstant::Skipped(first_change_after(tz, a.min(b), a.max(b)))
        }
    }
}

/// The first whole minute after `lo` (up to about `hi`) whose offset
/// differs from `lo`'s: the transition, by bisection (offsets change on
/// whole minutes).
fn first_change_after(tz: &dyn TimeZone, lo: i64, hi: i64) -> i64 {
    let at_lo = tz.offset_ms(lo);
    let (mut same, mut changed) = (0, (hi - lo + MINUTE_MS - 1) / MINUTE_MS);
    while changed - same > 1 {
        let mid = same + (changed - same) / 2;
        if tz.offset_ms(lo + mid * MINUTE_MS) == at_lo {
            same = mid;
        } else {
            changed = mid;
        }
    }
    lo + changed * MINUTE_MS
}

/// Test-only time zones backed by `chrono-tz` (a dev-dependency).
#[cfg(test)]
pub(crate) mod test_tz {
    use chrono::{Offset, TimeZone as _};

    /// An IANA zone from the `chrono-tz` database.
    #[derive(Debug, Clone, Copy)]
    pub struct Tz(pub chrono_tz::Tz);

    impl Tz {
        pub fn named(name: &str) -> Self {
            Self(name.parse().expect("known IANA zone"))
        }
    }

    impl super::TimeZone for Tz {
        fn offset_ms(&self, utc_ms: i64) -> i64 {
            let utc = chrono::DateTime::from_timestamp_millis(utc_ms)
                .expect("in range")
                .naive_utc();
            i64::from(
                self.0
                    .offset_from_utc_datetime(&utc)
                    .fix()
                    .local_minus_utc(),
            ) * 1000
        }
    }

    /// Epoch ms of an ISO-8601 UTC instant such as `2024-03-10T07:00:00Z`.
    pub fn utc(iso: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(iso)
            .expect("RFC 3339")
            .timestamp_millis()
    }
}

#[cfg(test)]
mod tests {
    use super::test_tz::{utc, Tz};
    use super::*;

    fn date(year: i64, month: u32, day: u32) -> LocalDate {
        LocalDate { year, month, day }
    }

    #[test]
    fn civil_dates() {
        assert_eq!(LocalDate::from_epoch_days(0), date(1970, 1, 1));
        assert_eq!(LocalDate::from_epoch_days(-1), date(1969, 12, 31));
        assert_eq!(date(2000, 2, 29).epoch_days(), 11_016);
        assert_eq!(date(2100, 3, 1).pred(), date(2100, 2, 28));
        assert_eq!(date(2024, 3, 1).pred(), date(2024, 2, 29));
        assert_eq!(date(2026, 1, 1).pred().to_string(), "2025-12-31");
        for days in (-800_000..800_000).step_by(997) {
            assert_eq!(LocalDate::from_epoch_days(days).epoch_days(), days);
        }
    }

    #[test]
    fn utc_and_fixed() {
        let t = utc("2026-02-28T23:59:30.250Z");
        assert_eq!(
            local_date_time(&Utc, t),
            LocalDateTime {
                date: date(2026, 2, 28),
                hour: 23,
                minute: 59,
                second: 30,
                millis: 250
            }
        );
        assert_eq!(
            today_and_yesterday(&Utc, t),
            ("2026-02-28".into(), "2026-02-27".into())
        );
        let plus_2 = FixedOffset(2 * HOUR_MS);
        assert_eq!(date_string(&plus_2, t), "2026-03-01");
        assert_eq!(hh_mm(&plus_2, t), "01:59");
        assert_eq!(
            local_to_utc(&plus_2, date(2026, 3, 1), 1, 59),
            utc("2026-02-28T23:59:00Z")
        );
    }

    #[test]
    fn half_hour_zone_kolkata() {
        let tz = Tz::named("Asia/Kolkata");
        let t = utc("2026-05-01T18:45:00Z");
        assert_eq!(hh_mm(&tz, t), "00:15");
        assert_eq!(
            today_and_yesterday(&tz, t),
            ("2026-05-02".into(), "2026-05-01".into())
        );
        assert_eq!(
            local_to_utc(&tz, date(2026, 5, 2), 4, 0),
            utc("2026-05-01T22:30:00Z")
        );
    }

    #[test]
    fn new_york_dst() {
        let tz = Tz::named("America/New_York");
        // Spring forward 2024-03-10 02:00 EST → 03:00 EDT: 02:30 does not exist.
        assert_eq!(
            local_to_utc(&tz, date(2024, 3, 10), 2, 0),
            utc("2024-03-10T07:00:00Z")
        );
        assert_eq!(
            local_to_utc(&tz, date(2024, 3, 10), 2, 30),
            utc("2024-03-10T07:30:00Z")
        );
        assert_eq!(hh_mm(&tz, utc("2024-03-10T07:30:00Z")), "03:30");
        assert_eq!(
            local_to_utc(&tz, date(2024, 3, 10), 4, 0),
            utc("2024-03-10T08:00:00Z")
        );
        // Fall back 2024-11-03 02:00 EDT → 01:00 EST: 01:30 happens twice.
        assert_eq!(
            local_to_utc(&tz, date(2024, 11, 3), 1, 30),
            utc("2024-11-03T05:30:00Z")
        );
        assert_eq!(hh_mm(&tz, utc("2024-11-03T06:30:00Z")), "01:30");
        assert_eq!(
            local_to_utc(&tz, date(2024, 11, 3), 4, 0),
            utc("2024-11-03T09:00:00Z")
        );
        // Late evening local is still "yesterday" in UTC terms.
        assert_eq!(date_string(&tz, utc("2024-11-04T03:00:00Z")), "2024-11-03");
    }

    #[test]
    fn berlin_dst() {
        let tz = Tz::named("Europe/Berlin");
        // 2025-03-30 02:00 CET → 03:00 CEST.
        assert_eq!(
            local_to_utc(&tz, date(2025, 3, 30), 2, 0),
            utc("2025-03-30T01:00:00Z")
        );
        assert_eq!(
            local_to_utc(&tz, date(2025, 3, 30), 4, 0),
            utc("2025-03-30T02:00:00Z")
        );
        // 2025-10-26 03:00 CEST → 02:00 CET: 02:00 happens twice.
        assert_eq!(
            local_to_utc(&tz, date(2025, 10, 26), 2, 0),
            utc("2025-10-26T00:00:00Z")
        );
        assert_eq!(
            local_to_utc(&tz, date(2025, 10, 26), 4, 0),
            utc("2025-10-26T03:00:00Z")
        );
    }

    #[test]
    fn resolve_local_gaps_and_repeats() {
        let ny = Tz::named("America/New_York");
        let berlin = Tz::named("Europe/Berlin");
        let howe = Tz::named("Australia/Lord_Howe");
        let cases: [(&Tz, LocalDate, u32, u32, LocalInstant); 7] = [
            (
                &ny,
                date(2024, 3, 10),
                1,
                59,
                LocalInstant::Unique(utc("2024-03-10T06:59:00Z")),
            ),
            (
                &ny,
                date(2024, 3, 10),
                2,
                30,
                LocalInstant::Skipped(utc("2024-03-10T07:00:00Z")),
            ),
            (
                &ny,
                date(2024, 3, 10),
                3,
                0,
                LocalInstant::Unique(utc("2024-03-10T07:00:00Z")),
            ),
            (
                &ny,
                date(2024, 11, 3),
                1,
                30,
                LocalInstant::Repeated(utc("2024-11-03T05:30:00Z"), utc("2024-11-03T06:30:00Z")),
            ),
            (
                &berlin,
                date(2025, 3, 30),
                2,
                0,
                LocalInstant::Skipped(utc("2025-03-30T01:00:00Z")),
            ),
            (
                &berlin,
                date(2025, 10, 26),
                2,
                59,
                LocalInstant::Repeated(utc("2025-10-26T00:59:00Z"), utc("2025-10-26T01:59:00Z")),
            ),
            (
                &howe,
                date(2025, 10, 5),
                2,
                15,
                LocalInstant::Skipped(utc("2025-10-04T15:30:00Z")),
            ),
        ];
        for (tz, d, h, m, want) in cases {
            assert_eq!(resolve_local(tz, d, h, m), want, "{d} {h}:{m}");
        }
    }

    #[test]
    fn lord_howe_half_hour_dst() {
        let tz = Tz::named("Australia/Lord_Howe");
        // +10:30 in winter, +11 in summer; 2025-10-05 02:00 → 02:30.
        assert_eq!(
            tz.offset_ms(utc("2025-07-01T00:00:00Z")),
            10 * HOUR_MS + 30 * MINUTE_MS
        );
        assert_eq!(tz.offset_ms(utc("2026-01-01T00:00:00Z")), 11 * HOUR_MS);
        assert_eq!(
            local_to_utc(&tz, date(2025, 10, 5), 2, 15),
            utc("2025-10-04T15:45:00Z")
        );
        assert_eq!(hh_mm(&tz, utc("2025-10-04T15:45:00Z")), "02:45");
        // 2026-04-05 02:00 → 01:30: 01:45 happens twice, the earlier wins.
        assert_eq!(
            local_to_utc(&tz, date(2026, 4, 5), 1, 45),
            utc("2026-04-04T14:45:00Z")
        );
        assert_eq!(
            local_to_utc(&tz, date(2026, 4, 5), 4, 0),
            utc("2026-04-04T17:30:00Z")
        );
    }
}
