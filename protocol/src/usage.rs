//! `usage.daily`: what the agent's sessions used and cost, day by day (the
//! user's days, `userTimezone`) and session by session.

use crate::TokenCounts;
use serde::{Deserialize, Serialize};

/// `usage.daily` params.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UsageDailyParams {
    /// How many days back from today, today included (default 30, at
    /// most 366).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days: Option<u32>,
}

/// One day's tokens (and cost) over all sessions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DayUsage {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub tokens: TokenCounts,
}

/// One session's tokens (and cost) over the days asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionUsage {
    pub session_key: String,
    pub tokens: TokenCounts,
}

/// `usage.daily` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UsageDailyResult {
    /// Every day of the window, oldest first (a day without calls has
    /// zeros).
    pub days: Vec<DayUsage>,
    /// The sessions that made calls in the window, the costliest first
    /// (by tokens where no cost is known).
    pub sessions: Vec<SessionUsage>,
    /// The whole window.
    pub total: TokenCounts,
}

impl TokenCounts {
    /// `self` and `other` added (a cost known on either side is kept).
    pub fn plus(&self, other: &TokenCounts) -> TokenCounts {
        TokenCounts {
            input: self.input + other.input,
            output: self.output + other.output,
            total: self.total + other.total,
            cache_read: self.cache_read + other.cache_read,
            cache_write: self.cache_write + other.cache_write,
            cost: match (self.cost, other.cost) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
            },
        }
    }
}
