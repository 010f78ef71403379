//! The agent acting on its own: cron jobs, reminders and heartbeats, as
//! pure decisions. Plain data in, decisions out: no I/O and no clock
//! (`now_ms` is always a parameter), and time zones only through
//! [`crate::time::TimeZone`] (the caller resolves IANA names: [`Zones`]).
//! The Gateway DO stores [`CronJob`] and [`CronRun`] (camelCase JSON) and
//! drives them:
//!
//! - `cron.add` / tool "add": [`jobs::new_job`]; `cron.update`:
//!   [`jobs::update_job`] (both normalize loose input, [`tool_input`]);
//! - the alarm: per job [`slots::due`] → [`slots::start`] → insert the run
//!   by its id [`slots::run_id`] (idempotent) → execute →
//!   [`slots::finish`]; then re-arm at [`slots::next_alarm`];
//! - answers: [`human`]; heartbeats: [`heartbeat`].

pub mod alarm;
pub mod cron;
mod cron_error;
pub mod heartbeat;
pub mod human;
pub mod jobs;
pub mod next;
pub mod slots;
pub mod tool;
pub mod tool_input;
pub mod when;

#[cfg(test)]
mod cron_tests;
#[cfg(test)]
mod human_tests;
#[cfg(test)]
mod input_tests;
#[cfg(test)]
mod next_props;
#[cfg(test)]
mod next_tests;
#[cfg(test)]
mod slots_tests;
#[cfg(test)]
mod when_tests;

use crate::time::{TimeZone, Utc};
use serde_json::Value;

pub use cron::{CronError, CronExpr, CronField};

pub use gsv_protocol::cron::{CronJob, CronRun, JobSpec, JobState, RunStatus, Schedule};

/// The `cron` config section, clamped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CronLimits {
    pub enabled: bool,
    /// `cron.add` fails at this many jobs (default 200, at least 1).
    pub max_jobs: usize,
    /// Runs going at once (default 4, 1–100); a due job waits for one to
    /// end (its end sets the alarm again).
    pub max_concurrent_runs: usize,
    /// Runs kept per job (default 200, 1–50,000).
    pub max_runs_per_job_history: usize,
}

impl Default for CronLimits {
    fn default() -> Self {
        Self {
            enabled: true,
            max_jobs: 200,
            max_concurrent_runs: 4,
            max_runs_per_job_history: 200,
        }
    }
}

impl CronLimits {
    /// From the effective config's `cron` object (missing or mistyped
    /// values take the defaults; numbers are clamped).
    pub fn from_config(cron: Option<&Value>) -> Self {
        let d = Self::default();
        let num = |key: &str, default: usize, lo: u64, hi: u64| {
            cron.and_then(|c| c.get(key))
                .and_then(Value::as_u64)
                .map_or(default, |n| n.clamp(lo, hi) as usize)
        };
        Self {
            enabled: cron
                .and_then(|c| c.get("enabled"))
                .and_then(Value::as_bool)
                .unwrap_or(d.enabled),
            max_jobs: num("maxJobs", d.max_jobs, 1, 100_000),
            max_concurrent_runs: num("maxConcurrentRuns", d.max_concurrent_runs, 1, 100),
            max_runs_per_job_history: num(
                "maxRunsPerJobHistory",
                d.max_runs_per_job_history,
                1,
                50_000,
            ),
        }
    }

    /// Whether one more job fits next to `existing` ones.
    pub fn can_add(&self, existing: usize) -> bool {
        existing < self.max_jobs
    }
}

/// Resolves IANA zone names to [`TimeZone`]s. The Worker passes a closure
/// over `IntlTimeZone::new`; tests one over chrono-tz. "UTC" (any case)
/// never reaches it.
pub trait Zones {
    fn zone(&self, name: &str) -> Option<Box<dyn TimeZone>>;
}

impl<F: Fn(&str) -> Option<Box<dyn TimeZone>>> Zones for F {
    fn zone(&self, name: &str) -> Option<Box<dyn TimeZone>> {
        self(name)
    }
}

/// `name` as a zone: UTC by name, else through `zones`; `None` if unknown.
pub fn resolve_zone(zones: &dyn Zones, name: &str) -> Option<Box<dyn TimeZone>> {
    let name = name.trim();
    if ["UTC", "Etc/UTC", "GMT", "Etc/GMT", "Z"]
        .iter()
        .any(|u| u.eq_ignore_ascii_case(name))
    {
        return Some(Box::new(Utc));
    }
    zones.zone(name)
}

#[cfg(test)]
pub(crate) fn test_zones(name: &str) -> Option<Box<dyn TimeZone>> {
    name.parse::<chrono_tz::Tz>()
        .ok()
        .map(|tz| Box::new(crate::time::test_tz::Tz(tz)) as Box<dyn TimeZone>)
}
