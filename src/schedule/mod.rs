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

pub mod cron;
mod cron_error;
pub mod heartbeat;
pub mod human;
pub mod jobs;
pub mod next;
pub mod slots;
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
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use cron::{CronError, CronExpr, CronField};

/// When a job runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Schedule {
    /// Once, at `atMs` (already past: due at once).
    #[serde(rename_all = "camelCase")]
    At { at_ms: i64 },
    /// Every `everyMs` on the grid `anchorMs + k·everyMs`.
    #[serde(rename_all = "camelCase")]
    Every { every_ms: i64, anchor_ms: i64 },
    /// A 5-field cron expression in the IANA zone `tz` (absent: the user's
    /// zone at evaluation time; normalization always fills it in).
    Cron {
        expr: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tz: Option<String>,
    },
}

impl Schedule {
    /// The IANA zone the schedule is evaluated in: the cron job's own,
    /// else the user's (`at`/`every` are zone-free; the user's zone only
    /// serves to print them).
    pub fn zone_name<'a>(&'a self, user_zone: &'a str) -> &'a str {
        match self {
            Schedule::Cron { tz: Some(tz), .. } => tz,
            _ => user_zone,
        }
    }
}

/// What a job does when it fires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum JobSpec {
    /// Text injected into the agent's main session.
    SystemEvent { text: String },
    /// A full agent turn in the isolated session `agent:{agentId}:cron:{jobId}`.
    #[serde(rename_all = "camelCase")]
    Task {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        thinking: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_seconds: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deliver: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        channel: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
    },
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RunStatus {
    Ok,
    Error,
    Skipped,
}

/// A job's mutable state (all optional on the wire).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run_at_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_at_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run_at_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status: Option<RunStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_duration_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_late_ms: Option<i64>,
}

/// A stored job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronJob {
    pub id: String,
    pub agent_id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub delete_after_run: bool,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    pub schedule: Schedule,
    pub spec: JobSpec,
    #[serde(default)]
    pub state: JobState,
}

/// One run of a job. `id` is [`slots::run_id`]: stable per job and slot,
/// so storing it with "insert or ignore" makes firing idempotent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronRun {
    pub id: String,
    pub job_id: String,
    /// When the run started.
    pub ts: i64,
    pub status: RunStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run_at_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_ms: Option<i64>,
}

/// The `cron` config section, clamped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CronLimits {
    pub enabled: bool,
    /// `cron.add` fails at this many jobs (default 200, at least 1).
    pub max_jobs: usize,
    /// Due jobs fired per alarm (default 4, 1–100); the rest wait for the
    /// next alarm, which the gateway sets to "now" when any remain due.
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
