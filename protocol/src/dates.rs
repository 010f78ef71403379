//! Calendar dates of epoch timestamps (proleptic Gregorian, no time zone):
//! the one routine behind every date the gateway and the CLI print or key
//! files by. Time zones are the gateway's (`time.rs`); this is the calendar.

/// A calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CivilDate {
    pub year: i64,
    pub month: u32,
    pub day: u32,
}

const MS_PER_DAY: i64 = 86_400_000;

impl CivilDate {
    /// The date `days` days after 1970-01-01 (negative: before), by Howard
    /// Hinnant's `civil_from_days`.
    pub fn from_epoch_days(days: i64) -> Self {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        Self { year, month, day }
    }

    /// The UTC date of an instant in milliseconds since the epoch.
    pub fn from_epoch_ms(ms: i64) -> Self {
        Self::from_epoch_days(ms.div_euclid(MS_PER_DAY))
    }

    /// Days since 1970-01-01 (`days_from_civil`).
    pub fn epoch_days(&self) -> i64 {
        let y = self.year - i64::from(self.month <= 2);
        let era = y.div_euclid(400);
        let yoe = y.rem_euclid(400);
        let m = i64::from(self.month);
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(self.day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// The day before.
    pub fn pred(&self) -> Self {
        Self::from_epoch_days(self.epoch_days() - 1)
    }
}

impl std::fmt::Display for CivilDate {
    /// `YYYY-MM-DD`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// Milliseconds since the epoch as `2026-02-18T09:30:05Z` (UTC, seconds).
pub fn iso_utc_seconds(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let rest = secs.rem_euclid(86_400);
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        CivilDate::from_epoch_ms(ms),
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(year: i64, month: u32, day: u32) -> CivilDate {
        CivilDate { year, month, day }
    }

    #[test]
    fn dates_of_instants_and_back() {
        let cases = [
            (0, date(1970, 1, 1)),
            (-1, date(1969, 12, 31)),
            (11_016, date(2000, 2, 29)),
            (11_017, date(2000, 3, 1)),
            (20_512, date(2026, 2, 28)),
            (20_513, date(2026, 3, 1)),
            (-719_468, date(0, 3, 1)),
        ];
        for (days, d) in cases {
            assert_eq!(CivilDate::from_epoch_days(days), d, "{days}");
            assert_eq!(d.epoch_days(), days, "{d}");
        }
        assert_eq!(date(2026, 3, 1).pred(), date(2026, 2, 28));
        assert_eq!(date(2024, 3, 1).pred(), date(2024, 2, 29));
        assert_eq!(CivilDate::from_epoch_ms(-1), date(1969, 12, 31));
    }

    #[test]
    fn formats() {
        assert_eq!(date(2026, 2, 8).to_string(), "2026-02-08");
        assert_eq!(iso_utc_seconds(1_771_407_005_042), "2026-02-18T09:30:05Z");
        assert_eq!(iso_utc_seconds(-1), "1969-12-31T23:59:59Z");
    }
}
