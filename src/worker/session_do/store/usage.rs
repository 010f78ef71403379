//! The session's tokens and their estimated cost per day (`usage_days`),
//! kept across resets: `usage.daily` adds them up over sessions.

use super::{Res, SessionStore};
use gsv_protocol::{DayUsage, TokenCounts, Usage};
use serde::Deserialize;

impl SessionStore {
    /// Adds one model call's `usage` (and its `cost`, when known) to `day`.
    pub fn add_usage_day(&self, day: &str, usage: &Usage, cost: Option<f64>) -> Res<()> {
        let n = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.exec(
            "INSERT INTO usage_days (day, input, output, cache_read, cache_write, total, cost)
             VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (day) DO UPDATE SET input = input + excluded.input,
                 output = output + excluded.output, cache_read = cache_read + excluded.cache_read,
                 cache_write = cache_write + excluded.cache_write, total = total + excluded.total,
                 cost = CASE WHEN excluded.cost IS NULL THEN cost ELSE COALESCE(cost, 0) + excluded.cost END",
            vec![
                day.into(),
                n(usage.input).into(),
                n(usage.output).into(),
                n(usage.cache_read).into(),
                n(usage.cache_write).into(),
                n(usage.total()).into(),
                cost.into(),
            ],
        )
        .map(|_| ())
    }

    /// The days from `from` (`YYYY-MM-DD`) on, oldest first.
    pub fn usage_days(&self, from: &str) -> Res<Vec<DayUsage>> {
        #[derive(Deserialize)]
        struct Row {
            day: String,
            input: i64,
            output: i64,
            cache_read: i64,
            cache_write: i64,
            total: i64,
            cost: Option<f64>,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT day, input, output, cache_read, cache_write, total, cost FROM usage_days WHERE day >= ? ORDER BY day",
            vec![from.into()],
        )?;
        let n = |v: i64| u64::try_from(v).unwrap_or(0);
        Ok(rows
            .into_iter()
            .map(|r| DayUsage {
                day: r.day,
                tokens: TokenCounts {
                    input: n(r.input),
                    output: n(r.output),
                    total: n(r.total),
                    cache_read: n(r.cache_read),
                    cache_write: n(r.cache_write),
                    cost: r.cost,
                },
            })
            .collect())
    }
}
