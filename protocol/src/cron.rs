//! Cron jobs, their runs and heartbeats on the wire (reference §1.4,
//! §2.6). The gateway stores [`CronJob`] and [`CronRun`] in these shapes;
//! the decisions over them live in the gateway crate's `schedule` module.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// When a job runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum RunStatus {
    /// Started; the agent's run has not ended yet.
    Running,
    Ok,
    Error,
    Skipped,
}

/// A job's mutable state (all optional on the wire).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
    /// Who made it: its turns run as `system` at the maker's level.
    #[serde(default)]
    pub made_by: JobMaker,
}

/// Who made a job. One made below the owner's level (from a person's or
/// a group's conversation) runs in its own session and answers only in
/// the chat it was made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct JobMaker {
    pub trust: crate::Trust,
    /// The session whose agent made it with `gsv__Cron`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// The chat that session was answering when it made the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat: Option<JobChat>,
}

/// Jobs stored before makers were recorded were made through the owner's
/// RPCs or in conversations that all ran with the owner's tools.
impl Default for JobMaker {
    fn default() -> Self {
        Self {
            trust: crate::Trust::OWNER,
            session_key: None,
            chat: None,
        }
    }
}

/// A chat a job's answer goes to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct JobChat {
    pub channel: String,
    pub account_id: String,
    pub peer: crate::channels::ChannelPeer,
}

/// One run of a job. `id` is [`slots::run_id`]: stable per job and slot,
/// so storing it with "insert or ignore" makes firing idempotent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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

/// `cron.status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CronStatusResult {
    pub enabled: bool,
    pub count: u64,
    pub due_count: u64,
    pub running_count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run_at_ms: Option<i64>,
    pub max_jobs: u64,
    pub max_concurrent_runs: u64,
    /// `userTimezone`, the zone the CLI prints times in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    /// The longest run of the gateway's alarm handler since the gateway
    /// started, in ms (waits on other objects included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_alarm_ms: Option<u64>,
    /// How many times the gateway's alarm has run since the gateway started
    /// (an alarm that comes back without pause shows here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alarm_runs: Option<u64>,
}

/// `cron.list`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CronListParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_disabled: Option<bool>,
    /// Default 200, 1–500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
}

/// One listed job with its schedule and next run in words, in the user's
/// zone (absent from v1 gateways).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CronJobView {
    #[serde(flatten)]
    pub job: CronJob,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_human: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_run_human: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CronListResult {
    pub jobs: Vec<CronJobView>,
    /// All matching jobs, not only this page.
    pub count: u64,
}

/// `cron.add`: `schedule` and `spec` in any form the normalizer reads
/// (`{kind:"at", in:"2h"}`, `{kind:"cron", expr, tz?}`, `{mode:"task",
/// message}`…), so the CLI and the agent's tool write the same things.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CronAddParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_after_run: Option<bool>,
    pub schedule: Value,
    pub spec: Value,
}

/// `cron.add` and `cron.update`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CronJobResult {
    pub ok: bool,
    pub job: CronJob,
}

/// `cron.update`: `patch` has any field of [`CronAddParams`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CronUpdateParams {
    pub id: String,
    pub patch: Value,
}

/// `cron.remove`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CronIdParams {
    pub id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CronRemoveResult {
    pub ok: bool,
    pub removed: bool,
}

/// `cron.run`: `due` (default) fires what is due now; `force` runs job
/// `id` now whatever its schedule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum CronRunMode {
    #[default]
    Due,
    Force,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CronRunParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<CronRunMode>,
}

/// One run `cron.run` started. A run that started is `ok` or `error` only
/// once the agent's turn ended (see `cron.runs`); here `status` is set
/// only when the run ended at once (skipped, or failed to start).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CronRunResult {
    pub job_id: String,
    pub run_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<RunStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CronRunNowResult {
    pub ok: bool,
    pub ran: u64,
    pub results: Vec<CronRunResult>,
}

/// `cron.runs`, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CronRunsParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// Default 200, 1–2000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CronRunsResult {
    pub runs: Vec<CronRun>,
    pub count: u64,
}

/// One agent's heartbeat as `heartbeat.status` shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HeartbeatState {
    pub agent_id: String,
    /// 0: disabled; absent from v1 gateways.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_heartbeat_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_heartbeat_at: Option<i64>,
    /// `ok` (ran), `skipped`, `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_status: Option<RunStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_skip_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// What became of the last answer: `delivered`, `ack`, `empty`,
    /// `duplicate`, `silent` (no target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_outcome: Option<String>,
    /// The agent's last active chat (`channel:peer`; v1 gateways send an
    /// object, read as the same label).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "last_active_label"
    )]
    pub last_active: Option<String>,
}

/// `lastActive` as this gateway sends it (`channel:peer`) or as v1's did
/// (`{channel, peer: {id, …}, …}`).
fn last_active_label<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let v = Option::<serde_json::Value>::deserialize(d)?;
    Ok(match v {
        Some(serde_json::Value::String(s)) => Some(s),
        Some(serde_json::Value::Object(o)) => {
            let channel = o.get("channel").and_then(serde_json::Value::as_str);
            let peer = o
                .get("peer")
                .and_then(|p| p.get("id"))
                .and_then(serde_json::Value::as_str);
            match (channel, peer) {
                (Some(c), Some(p)) => Some(format!("{c}:{p}")),
                _ => None,
            }
        }
        _ => None,
    })
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HeartbeatStatusResult {
    pub agents: BTreeMap<String, HeartbeatState>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HeartbeatStartResult {
    pub message: String,
    pub agents: BTreeMap<String, HeartbeatState>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HeartbeatTriggerParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HeartbeatTriggerResult {
    pub ok: bool,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// The beat's run, when one started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}
