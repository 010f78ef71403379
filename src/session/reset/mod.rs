//! Session reset: when an
//! automatic reset is due ([`reset_due`]) and the ordered, resumable steps
//! of a reset ([`plan`]).
//!
//! Daily resets happen at `atHour` in the user's time zone (`userTimezone`),
//! not the Worker's UTC clock.

pub mod plan;

pub use plan::{ArchiveCheck, ResetError, ResetInput, ResetPlan, ResetReason, ResetStep};

use crate::config::Config;
use crate::time::{local_date_time, local_to_utc, TimeZone};
use serde_json::{json, Value};

/// Default `atHour` of the daily policy.
pub const DEFAULT_AT_HOUR: u32 = 4;
/// Default `idleMinutes` of the idle policy.
pub const DEFAULT_IDLE_MINUTES: u64 = 60;

/// When a session clears itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetPolicy {
    /// Only on `/reset` or `/new`.
    Manual,
    /// On the first message after `at_hour`:00 local time (0–23).
    Daily { at_hour: u32 },
    /// On the first message after `idle_minutes` without activity.
    Idle { idle_minutes: u64 },
}

impl Default for ResetPolicy {
    /// `{mode: "daily", atHour: 4}`.
    fn default() -> Self {
        ResetPolicy::Daily {
            at_hour: DEFAULT_AT_HOUR,
        }
    }
}

impl ResetPolicy {
    /// Reads `{mode, atHour?, idleMinutes?}`; a missing or out-of-range
    /// parameter takes its default, an unknown mode gives `None`.
    pub fn from_json(v: &Value) -> Option<Self> {
        Some(match v.get("mode")?.as_str()? {
            "manual" => ResetPolicy::Manual,
            "daily" => ResetPolicy::Daily {
                at_hour: v
                    .get("atHour")
                    .and_then(Value::as_u64)
                    .filter(|h| *h < 24)
                    .map_or(DEFAULT_AT_HOUR, |h| h as u32),
            },
            "idle" => ResetPolicy::Idle {
                idle_minutes: v
                    .get("idleMinutes")
                    .and_then(Value::as_u64)
                    .filter(|m| *m > 0)
                    .unwrap_or(DEFAULT_IDLE_MINUTES),
            },
            _ => return None,
        })
    }

    /// The JSON shape stored in session metadata.
    pub fn to_json(&self) -> Value {
        match *self {
            ResetPolicy::Manual => json!({"mode": "manual"}),
            ResetPolicy::Daily { at_hour } => json!({"mode": "daily", "atHour": at_hour}),
            ResetPolicy::Idle { idle_minutes } => {
                json!({"mode": "idle", "idleMinutes": idle_minutes})
            }
        }
    }

    /// `manual`, `daily` or `idle`.
    pub fn mode(&self) -> &'static str {
        match self {
            ResetPolicy::Manual => "manual",
            ResetPolicy::Daily { .. } => "daily",
            ResetPolicy::Idle { .. } => "idle",
        }
    }

    /// `session.defaultResetPolicy`, or daily at 4.
    pub fn default_from_config(config: &Config) -> Self {
        config
            .raw("session.defaultResetPolicy")
            .and_then(Self::from_json)
            .unwrap_or_default()
    }

    /// The session's own policy (`meta.resetPolicy`) if valid, else the
    /// configured default.
    pub fn effective(session_policy: Option<&Value>, config: &Config) -> Self {
        session_policy
            .and_then(Self::from_json)
            .unwrap_or_else(|| Self::default_from_config(config))
    }
}

/// The most recent instant at or before `now_ms` when the wall clock in
/// `tz` read `at_hour`:00 (just after the gap if DST skipped that hour).
pub fn daily_boundary(tz: &dyn TimeZone, now_ms: i64, at_hour: u32) -> i64 {
    let today = local_date_time(tz, now_ms).date;
    let boundary = local_to_utc(tz, today, at_hour, 0);
    if boundary <= now_ms {
        boundary
    } else {
        local_to_utc(tz, today.pred(), at_hour, 0)
    }
}

/// Whether the next inbound message must first reset the session:
/// `daily` when the last activity precedes the latest boundary, `idle` when
/// more than `idleMinutes` passed since it, `manual` never.
pub fn reset_due(
    policy: &ResetPolicy,
    last_activity_ms: i64,
    now_ms: i64,
    tz: &dyn TimeZone,
) -> bool {
    match *policy {
        ResetPolicy::Manual => false,
        ResetPolicy::Daily { at_hour } => last_activity_ms < daily_boundary(tz, now_ms, at_hour),
        ResetPolicy::Idle { idle_minutes } => {
            now_ms.saturating_sub(last_activity_ms) > (idle_minutes as i64).saturating_mul(60_000)
        }
    }
}

#[cfg(test)]
mod tests;
