//! Catch-up decisions for the gateway's alarm: is a job due, for which
//! slot, how late, and where it goes next.
//!
//! A job that missed several slots (the gateway was asleep or down) fires
//! ONCE, for its stored `nextRunAtMs`, then moves to the first slot after
//! now: no burst of stale runs. The run id `{jobId}:{slotMs}` is the same
//! however often the alarm retries a slot, so storing runs with "insert or
//! ignore" makes firing idempotent.
//!
//! A slot reached while the job's previous run still goes is not run but
//! recorded as skipped ([`overlapped`], [`skip`]): runs never overlap.
//!
//! The alarm's order: [`due`] → [`start`] (store it: `nextRunAtMs` already
//! moves on, so a crash mid-run cannot fire the slot again) → insert the
//! run row by id (skip if it exists) → execute → [`finish`] (store the job
//! or delete it, and the run).

use super::next::next_after;
use super::{CronError, CronJob, CronRun, RunStatus, Schedule};
use crate::time::{TimeZone, HOUR_MS};

/// A run that started longer ago than this is taken to have died with
/// its isolate: the job may fire again.
pub const STALE_RUNNING_MS: i64 = 2 * HOUR_MS;

/// A job due now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Due {
    pub job_id: String,
    /// The `nextRunAtMs` this run fires for (for a manual run: now).
    pub slot_ms: i64,
    /// `now − slot` (0 for a manual run).
    pub late_ms: i64,
    /// When the run starts (the `now_ms` given).
    pub fired_at_ms: i64,
    /// [`run_id`] of job and slot.
    pub run_id: String,
    /// The job's next slot after now (`None` for `at` jobs); a manual run
    /// leaves the stored one unchanged.
    pub next_run_at_ms: Option<i64>,
    /// Run by `cron.run` (force), not by the schedule.
    pub manual: bool,
}

/// The stable id of a job's run for a slot.
pub fn run_id(job_id: &str, slot_ms: i64) -> String {
    format!("{job_id}:{slot_ms}")
}

/// A reached slot: the one run it gets, and where the schedule goes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// The stored `nextRunAtMs` (however many slots passed since).
    pub slot_ms: i64,
    /// `now − slot`.
    pub late_ms: i64,
    /// The first slot strictly after now; `None` for `at` (runs once).
    pub next_run_at_ms: Option<i64>,
}

/// The catch-up rule alone, on plain data: whether a schedule whose
/// stored next run is `next_run_at_ms` has a slot due at `now_ms`.
pub fn catch_up(
    schedule: &Schedule,
    next_run_at_ms: Option<i64>,
    now_ms: i64,
    tz: &dyn TimeZone,
) -> Result<Option<Slot>, CronError> {
    let Some(slot_ms) = next_run_at_ms.filter(|s| *s <= now_ms) else {
        return Ok(None);
    };
    let next_run_at_ms = match schedule {
        Schedule::At { .. } => None,
        _ => next_after(schedule, now_ms, tz)?,
    };
    Ok(Some(Slot {
        slot_ms,
        late_ms: now_ms - slot_ms,
        next_run_at_ms,
    }))
}

/// Whether `job` is due at `now_ms` (enabled, not running, its slot
/// reached: [`catch_up`]), and with what. `tz`: the zone named by
/// `job.schedule.zone_name(user_zone)`.
pub fn due(job: &CronJob, now_ms: i64, tz: &dyn TimeZone) -> Result<Option<Due>, CronError> {
    if !job.enabled || is_running(job, now_ms) {
        return Ok(None);
    }
    reached(job, now_ms, tz)
}

/// A slot reached while the job's previous run still goes (and has not
/// turned stale). Runs of one job never overlap, and a slow run must not
/// leave a pile of late slots behind it: the slot does not run, it is
/// recorded as skipped ([`skip`]) and the schedule moves on.
pub fn overlapped(job: &CronJob, now_ms: i64, tz: &dyn TimeZone) -> Result<Option<Due>, CronError> {
    if !job.enabled || !is_running(job, now_ms) {
        return Ok(None);
    }
    reached(job, now_ms, tz)
}

fn is_running(job: &CronJob, now_ms: i64) -> bool {
    job.state
        .running_at_ms
        .is_some_and(|t| now_ms - t < STALE_RUNNING_MS)
}

fn reached(job: &CronJob, now_ms: i64, tz: &dyn TimeZone) -> Result<Option<Due>, CronError> {
    let slot = catch_up(&job.schedule, job.state.next_run_at_ms, now_ms, tz)?;
    Ok(slot.map(|s| Due {
        job_id: job.id.clone(),
        slot_ms: s.slot_ms,
        late_ms: s.late_ms,
        fired_at_ms: now_ms,
        run_id: run_id(&job.id, s.slot_ms),
        next_run_at_ms: s.next_run_at_ms,
        manual: false,
    }))
}

/// The job and the run record for an [`overlapped`] slot: the run that
/// goes keeps its state, the schedule moves to its next slot (a one-shot
/// `at` job has none: it is done), and the history says why.
pub fn skip(job: &CronJob, due: &Due) -> (CronJob, CronRun) {
    let mut job = job.clone();
    job.state.next_run_at_ms = due.next_run_at_ms;
    if matches!(job.schedule, Schedule::At { .. }) {
        job.enabled = false;
    }
    let since = job.state.running_at_ms.unwrap_or(due.fired_at_ms);
    let run = CronRun {
        id: due.run_id.clone(),
        job_id: due.job_id.clone(),
        ts: due.fired_at_ms,
        status: RunStatus::Skipped,
        error: Some(format!(
            "the previous run was still going (started {} s earlier)",
            (due.fired_at_ms - since).max(0) / 1000
        )),
        summary: None,
        duration_ms: Some(0),
        next_run_at_ms: job.state.next_run_at_ms,
        late_ms: Some(due.late_ms),
    };
    (job, run)
}

/// A forced run now (`cron.run`), whatever the schedule says; its id
/// `{jobId}:manual:{now}` never collides with a slot's.
pub fn manual(job: &CronJob, now_ms: i64) -> Due {
    Due {
        job_id: job.id.clone(),
        slot_ms: now_ms,
        late_ms: 0,
        fired_at_ms: now_ms,
        run_id: format!("{}:manual:{now_ms}", job.id),
        next_run_at_ms: job.state.next_run_at_ms,
        manual: true,
    }
}

/// The job as stored while its run goes: running, and already pointing
/// at its next slot.
pub fn start(job: &CronJob, due: &Due) -> CronJob {
    let mut job = job.clone();
    job.state.running_at_ms = Some(due.fired_at_ms);
    if !due.manual {
        job.state.next_run_at_ms = due.next_run_at_ms;
    }
    job
}

/// How a run went, as the executor reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutcome {
    pub status: RunStatus,
    pub error: Option<String>,
    pub summary: Option<String>,
}

/// What to store after a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterRun {
    /// The job, updated.
    Keep(Box<CronJob>),
    /// An `at` job with `deleteAfterRun` that ran ok: delete the row (the
    /// run history stays).
    Delete,
}

/// The job and the run record once a run ended at `now_ms`. A scheduled
/// `at` job is disabled after its run (deleted with `deleteAfterRun` if
/// ok); a manual run changes nothing about the schedule.
pub fn finish(job: &CronJob, due: &Due, outcome: RunOutcome, now_ms: i64) -> (AfterRun, CronRun) {
    let duration = (now_ms - due.fired_at_ms).max(0);
    let once = matches!(job.schedule, Schedule::At { .. }) && !due.manual;
    let mut job = job.clone();
    let state = &mut job.state;
    state.running_at_ms = None;
    state.last_run_at_ms = Some(due.fired_at_ms);
    state.last_status = Some(outcome.status);
    state.last_error.clone_from(&outcome.error);
    state.last_duration_ms = Some(duration);
    state.last_late_ms = Some(due.late_ms);
    if !due.manual {
        state.next_run_at_ms = due.next_run_at_ms;
    }
    if once {
        job.enabled = false;
        job.state.next_run_at_ms = None;
    }
    job.updated_at_ms = now_ms;
    let run = CronRun {
        id: due.run_id.clone(),
        job_id: due.job_id.clone(),
        ts: due.fired_at_ms,
        status: outcome.status,
        error: outcome.error,
        summary: outcome.summary,
        duration_ms: Some(duration),
        next_run_at_ms: job.state.next_run_at_ms,
        late_ms: Some(due.late_ms),
    };
    let after = if once && job.delete_after_run && outcome.status == RunStatus::Ok {
        AfterRun::Delete
    } else {
        AfterRun::Keep(Box::new(job))
    };
    (after, run)
}

/// The alarm time cron asks for: the earliest slot of the enabled jobs,
/// running or not (a slot reached during a run is recorded as skipped,
/// see [`overlapped`]). With `max_running` runs going there is no room for
/// another: only running jobs' slots count, the rest wait for a run to end.
/// A time ≤ now means "again at once".
pub fn next_alarm<'a>(
    jobs: impl IntoIterator<Item = &'a CronJob> + Clone,
    now_ms: i64,
    max_running: usize,
) -> Option<i64> {
    let running = jobs
        .clone()
        .into_iter()
        .filter(|j| is_running(j, now_ms))
        .count();
    let full = running >= max_running;
    jobs.into_iter()
        .filter(|j| j.enabled && (!full || is_running(j, now_ms)))
        .filter_map(|j| j.state.next_run_at_ms)
        .min()
}
