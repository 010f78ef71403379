//! Cron in the Gateway: the `cron.*` methods and the alarm's share. The
//! decisions are `crate::schedule`'s; here they meet SQLite, the Session
//! objects and the delivery ledger.
//!
//! Firing one slot (see `schedule::slots`): the job is stored already
//! pointing at its next slot, the run is recorded by its id
//! `{jobId}:{slotMs}` (a second alarm for the same slot finds it and does
//! nothing), and only then is the message sent to the session. The run is
//! `ok` when the agent's run ends with an answer, `error` when it fails or
//! passes `timeoutSeconds`.

use super::super::channel_plane::ChatTarget;
use super::agent_runs::{AgentTurn, RunEnd, KIND_CRON};
use super::Gateway;
use crate::commands::parse_model_selector;
use crate::schedule::slots::{self, Due, RunOutcome, STALE_RUNNING_MS};
use crate::schedule::tool_input::InputContext;
use crate::schedule::{human, jobs, resolve_zone, CronLimits, JobSpec, Zones};
use crate::time::{TimeZone, Utc};
use crate::worker::rpc::{internal_error, new_id};
use crate::worker::tz::IntlTimeZone;
use gsv_protocol::channels::{ChannelPeer, PeerKind};
use gsv_protocol::cron::*;
use gsv_protocol::{codes, ChatDirectives, ErrorShape};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

/// How long a run may take when its job sets no `timeoutSeconds`: a run
/// that never ends must not hold its job forever.
const DEFAULT_TIMEOUT_MS: i64 = 10 * 60_000;
/// Answers kept in the run history, in characters.
const SUMMARY_CHARS: usize = 500;

/// The Worker's zones: the runtime's own database through `Intl`.
pub(super) fn zones() -> impl Zones {
    |name: &str| IntlTimeZone::new(name).map(|z| Box::new(z) as Box<dyn TimeZone>)
}

/// What the gateway keeps about a run in flight, to finish it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CronWork {
    run_id: String,
    job_id: String,
    slot_ms: i64,
    late_ms: i64,
    fired_at_ms: i64,
    next_run_at_ms: Option<i64>,
    manual: bool,
    target: Option<ChatTarget>,
}

impl CronWork {
    fn due(&self) -> Due {
        Due {
            job_id: self.job_id.clone(),
            slot_ms: self.slot_ms,
            late_ms: self.late_ms,
            fired_at_ms: self.fired_at_ms,
            run_id: self.run_id.clone(),
            next_run_at_ms: self.next_run_at_ms,
            manual: self.manual,
        }
    }
}

fn bad(e: impl std::fmt::Display) -> ErrorShape {
    ErrorShape::new(codes::BAD_REQUEST, e.to_string())
}

fn not_found(id: &str) -> ErrorShape {
    ErrorShape::new(codes::NOT_FOUND, format!("no cron job {id}"))
}

impl Gateway {
    pub(super) fn cron_limits(&self) -> CronLimits {
        CronLimits::from_config(self.config.borrow().effective().get("cron"))
    }

    pub(super) fn user_zone(&self) -> String {
        self.config
            .borrow()
            .str_at("userTimezone")
            .unwrap_or("UTC")
            .to_string()
    }

    pub(super) fn zone_of(&self, name: &str) -> Box<dyn TimeZone> {
        resolve_zone(&zones(), name).unwrap_or_else(|| Box::new(Utc))
    }

    pub(in crate::worker::gateway_do) fn cron_status(&self) -> Res<CronStatusResult> {
        let store = self.schedule_store();
        let limits = self.cron_limits();
        let now = self.sched_now();
        Ok(CronStatusResult {
            enabled: limits.enabled,
            count: store.job_count()?,
            due_count: store.due_count(now, now - STALE_RUNNING_MS)?,
            running_count: store.running_count(now - STALE_RUNNING_MS)?,
            next_run_at_ms: store.next_deadline(false, 0).map(|at| at as i64),
            max_jobs: limits.max_jobs as u64,
            max_concurrent_runs: limits.max_concurrent_runs as u64,
            timezone: Some(self.user_zone()),
            longest_alarm_ms: Some(self.scheduler.alarm_stats.get().1),
            alarm_runs: Some(self.scheduler.alarm_stats.get().0),
        })
    }

    pub(in crate::worker::gateway_do) fn cron_list(
        &self,
        p: CronListParams,
    ) -> Res<CronListResult> {
        let limit = p.limit.unwrap_or(200).clamp(1, 500);
        let (jobs, count) = self.schedule_store().list(
            p.agent_id.as_deref(),
            p.include_disabled.unwrap_or(true),
            limit,
            p.offset.unwrap_or(0),
        )?;
        let zone = self.user_zone();
        let user_tz = self.zone_of(&zone);
        let now = self.sched_now();
        // One resolved zone per name: a page may hold hundreds of jobs.
        let mut zones: HashMap<String, Box<dyn TimeZone>> = HashMap::new();
        let jobs = jobs
            .into_iter()
            .map(|job| {
                let own = job.schedule.zone_name(&zone).to_string();
                let tz = zones
                    .entry(own.clone())
                    .or_insert_with(|| self.zone_of(&own));
                CronJobView {
                    schedule_human: Some(human::schedule_human(&job.schedule, tz.as_ref(), &own)),
                    next_run_human: Some(human::next_run_human(
                        job.state.next_run_at_ms,
                        user_tz.as_ref(),
                        now,
                    )),
                    job,
                }
            })
            .collect();
        Ok(CronListResult { jobs, count })
    }

    pub(in crate::worker::gateway_do) fn cron_add(
        &self,
        p: CronAddParams,
        made_by: JobMaker,
    ) -> Res<CronJobResult> {
        let store = self.schedule_store();
        if !self.cron_limits().can_add(store.job_count()? as usize) {
            return Err(bad(format!(
                "cron.maxJobs ({}) reached: remove a job first",
                self.cron_limits().max_jobs
            )));
        }
        let raw = serde_json::to_value(&p).map_err(internal_error)?;
        let default_agent = self.routing.borrow().default_agent_id.clone();
        let mut job = self.with_input(|cx| jobs::new_job(&new_id(), &raw, &default_agent, cx))?;
        job.made_by = made_by;
        store.save_job(&job)?;
        Ok(CronJobResult { ok: true, job })
    }

    pub(in crate::worker::gateway_do) fn cron_update(
        &self,
        p: CronUpdateParams,
    ) -> Res<CronJobResult> {
        let store = self.schedule_store();
        let job = store.job(&p.id)?.ok_or_else(|| not_found(&p.id))?;
        let job = self.with_input(|cx| jobs::update_job(&job, &p.patch, cx))?;
        store.save_job(&job)?;
        Ok(CronJobResult { ok: true, job })
    }

    pub(in crate::worker::gateway_do) fn cron_remove(
        &self,
        p: CronIdParams,
    ) -> Res<CronRemoveResult> {
        let removed = self.schedule_store().delete_job(&p.id, true)?;
        Ok(CronRemoveResult { ok: true, removed })
    }

    pub(in crate::worker::gateway_do) fn cron_runs(
        &self,
        p: CronRunsParams,
    ) -> Res<CronRunsResult> {
        let limit = p.limit.unwrap_or(200).clamp(1, 2000);
        let (runs, count) =
            self.schedule_store()
                .runs(p.job_id.as_deref(), limit, p.offset.unwrap_or(0))?;
        Ok(CronRunsResult { runs, count })
    }

    /// `cron.run`: `force` runs job `id` now; `due` fires what is due (of
    /// job `id` only, when given), within `maxConcurrentRuns`.
    pub(in crate::worker::gateway_do) async fn cron_run(
        &self,
        p: CronRunParams,
    ) -> Res<CronRunNowResult> {
        let store = self.schedule_store();
        let now = self.sched_now();
        let results = match (p.mode.unwrap_or_default(), p.id) {
            (CronRunMode::Force, None) => return Err(bad("cron.run mode force needs an id")),
            (CronRunMode::Force, Some(id)) => {
                let job = store.job(&id)?.ok_or_else(|| not_found(&id))?;
                let due = slots::manual(&job, now);
                vec![self.fire(&job, due).await]
            }
            (CronRunMode::Due, id) => self.fire_due(now, id.as_deref()).await?,
        };
        self.schedule_alarm().await;
        Ok(CronRunNowResult {
            ok: true,
            ran: results.len() as u64,
            results,
        })
    }

    /// The alarm's share: what is due, within `maxConcurrentRuns`.
    pub(super) async fn cron_alarm(&self, now: i64) {
        if !self.cron_limits().enabled {
            return;
        }
        if let Err(e) = self.fire_due(now, None).await {
            console_error!("gateway: firing due cron jobs: {}", e.message);
        }
    }

    /// Starts the due jobs (only `only`, when given), earliest slot first,
    /// while fewer than `maxConcurrentRuns` runs go: the rest wait for a
    /// run to end, which sets the alarm again. A slot reached while its
    /// job's previous run goes is recorded as skipped (that takes no room).
    ///
    /// The cap is what keeps a burst of due jobs from crowding out the
    /// clients: every run is a model call and a session's work on the same
    /// runtime (BENCHMARKS.md, "Cron at scale").
    async fn fire_due(&self, now: i64, only: Option<&str>) -> Res<Vec<CronRunResult>> {
        let limits = self.cron_limits();
        let store = self.schedule_store();
        let stale_before = now - STALE_RUNNING_MS;
        let running = store.running_count(stale_before)? as usize;
        let mut room = limits.max_concurrent_runs.saturating_sub(running);
        // Only as many jobs are read as can start: a burst of due jobs
        // starts a few at a time as runs end, each time reading that few.
        let candidates = match only {
            Some(id) => store.job(id)?.into_iter().collect(),
            None => {
                let mut jobs =
                    store.reached(now, stale_before, true, limits.max_concurrent_runs)?;
                jobs.extend(store.reached(now, stale_before, false, room)?);
                jobs
            }
        };
        let mut results = Vec::new();
        let mut fires = Vec::new();
        for job in candidates {
            match self.slot_reached(&job, now) {
                Some((due, true)) => results.push(self.skip_slot(&job, &due)),
                Some((due, false)) if room > 0 => {
                    room -= 1;
                    fires.push((job, due));
                }
                _ => {}
            }
        }
        // Started together, so their session round trips overlap.
        let started = fires.iter().map(|(job, due)| self.fire(job, due.clone()));
        results.extend(futures::future::join_all(started).await);
        Ok(results)
    }

    /// The slot of `job` reached at `now`, and whether it overlaps the
    /// job's previous run (then it is skipped, not run).
    fn slot_reached(&self, job: &CronJob, now: i64) -> Option<(Due, bool)> {
        let tz = self.zone_of(job.schedule.zone_name(&self.user_zone()));
        let reached = slots::overlapped(job, now, tz.as_ref()).and_then(|skipped| match skipped {
            Some(due) => Ok(Some((due, true))),
            None => Ok(slots::due(job, now, tz.as_ref())?.map(|due| (due, false))),
        });
        reached.unwrap_or_else(|e| {
            // A schedule that no longer evaluates stops, with its reason.
            let mut stopped = job.clone();
            stopped.enabled = false;
            stopped.state.next_run_at_ms = None;
            stopped.state.last_error = Some(e.to_string());
            let _ = self.schedule_store().save_job(&stopped);
            None
        })
    }

    fn skip_slot(&self, job: &CronJob, due: &Due) -> CronRunResult {
        let (after, run) = slots::skip(job, due);
        let store = self.schedule_store();
        let saved = store
            .save_job(&after)
            .and_then(|()| store.insert_run(&run))
            .and_then(|_| store.prune_runs(&job.id, self.cron_limits().max_runs_per_job_history));
        if let Err(e) = saved {
            console_error!("gateway: recording a skipped cron slot: {}", e.message);
        }
        CronRunResult {
            job_id: job.id.clone(),
            run_id: run.id,
            status: Some(RunStatus::Skipped),
            error: run.error,
        }
    }

    /// Starts one run of `job` for `due`; a slot already recorded is not
    /// started again.
    async fn fire(&self, job: &CronJob, due: Due) -> CronRunResult {
        let result = |status: Option<RunStatus>, error: Option<String>| CronRunResult {
            job_id: job.id.clone(),
            run_id: due.run_id.clone(),
            status,
            error,
        };
        match self.fire_inner(job, &due).await {
            Ok(None) => result(None, None),
            Ok(Some(skipped)) => result(Some(RunStatus::Skipped), Some(skipped)),
            Err(e) => {
                let outcome = RunOutcome {
                    status: RunStatus::Error,
                    error: Some(e.message.clone()),
                    summary: None,
                };
                if let Err(e) = self.finish_cron(job, &due, outcome) {
                    console_error!("gateway: recording a failed cron run: {}", e.message);
                }
                result(Some(RunStatus::Error), Some(e.message))
            }
        }
    }

    /// `Ok(Some(why))`: not started.
    async fn fire_inner(&self, job: &CronJob, due: &Due) -> Res<Option<String>> {
        let store = self.schedule_store();
        if store.run(&due.run_id)?.is_some() {
            // The slot fired before (an alarm ran twice): the schedule
            // moves on, nothing is sent again.
            let mut moved = slots::start(job, due);
            moved.state.running_at_ms = job.state.running_at_ms;
            store.save_job(&moved)?;
            return Ok(Some("this slot already ran".into()));
        }
        store.save_job(&slots::start(job, due))?;
        let run = CronRun {
            id: due.run_id.clone(),
            job_id: job.id.clone(),
            ts: due.fired_at_ms,
            status: RunStatus::Running,
            error: None,
            summary: None,
            duration_ms: None,
            next_run_at_ms: due.next_run_at_ms,
            late_ms: Some(due.late_ms),
        };
        if !store.insert_run(&run)? {
            return Ok(Some("this slot already ran".into()));
        }
        let (session_key, text, directives, timeout_ms, target) = self.cron_turn(job);
        let work = CronWork {
            run_id: due.run_id.clone(),
            job_id: job.id.clone(),
            slot_ms: due.slot_ms,
            late_ms: due.late_ms,
            fired_at_ms: due.fired_at_ms,
            next_run_at_ms: due.next_run_at_ms,
            manual: due.manual,
            target: target.clone(),
        };
        let note = target.as_ref().map_or(String::new(), |t| {
            format!(
                "\n[Your response will be delivered automatically to {} — reply normally.]",
                t.label()
            )
        });
        let tz = self.zone_of(&self.user_zone());
        let message = format!(
            "[cron · {}] {text}{note}",
            human::date_time(tz.as_ref(), due.fired_at_ms)
        );
        let work = serde_json::to_value(&work).map_err(internal_error)?;
        let chat_run_id = format!("cron:{}", due.run_id);
        let turn = AgentTurn {
            kind: KIND_CRON,
            ref_id: &due.run_id,
            session_key: &session_key,
            chat_run_id: &chat_run_id,
            message,
            directives,
            timeout_ms,
            work: &work,
            trust: gsv_protocol::Trust::system(job.made_by.trust),
        };
        if let Some(answer) = self.start_agent_turn(turn).await? {
            self.cron_run_ended(&work, RunEnd::Answered(answer)).await?;
        }
        Ok(None)
    }

    /// Where a job's message goes and how it runs: session, text, model
    /// and thinking, timeout, and the chat its answer is delivered to.
    fn cron_turn(
        &self,
        job: &CronJob,
    ) -> (
        String,
        String,
        Option<ChatDirectives>,
        i64,
        Option<ChatTarget>,
    ) {
        let main_key = self.routing.borrow().main_key.clone();
        if !job.made_by.trust.is_owner() {
            // Made in a person's or a group's conversation: its own
            // session (no main-session memory), its answer to that chat
            // only, whatever the job names.
            let (text, directives, timeout) = match &job.spec {
                JobSpec::SystemEvent { text } => (text.clone(), None, DEFAULT_TIMEOUT_MS),
                JobSpec::Task {
                    message,
                    timeout_seconds,
                    ..
                } => (
                    message.clone(),
                    None,
                    timeout_seconds.map_or(DEFAULT_TIMEOUT_MS, |s| i64::from(s) * 1000),
                ),
            };
            let target = job.made_by.chat.clone().map(|c| ChatTarget {
                channel: c.channel,
                account_id: c.account_id,
                peer: c.peer,
            });
            return (
                format!("agent:{}:cron:{}", job.agent_id, job.id),
                text,
                directives,
                timeout,
                target,
            );
        }
        match &job.spec {
            JobSpec::SystemEvent { text } => (
                crate::routing::keys::main_session_key(&job.agent_id, &main_key),
                text.clone(),
                None,
                DEFAULT_TIMEOUT_MS,
                self.last_chat(&job.agent_id),
            ),
            JobSpec::Task {
                message,
                model,
                thinking,
                timeout_seconds,
                deliver,
                channel,
                to,
            } => {
                let directives = ChatDirectives {
                    model: model
                        .as_deref()
                        .and_then(|m| parse_model_selector(m).ok())
                        .map(|s| s.resolve(&self.current_provider())),
                    thinking_level: thinking.clone(),
                };
                let target = match deliver {
                    Some(false) => None,
                    _ => self.task_target(&job.agent_id, channel.as_deref(), to.as_deref()),
                };
                let timeout = timeout_seconds.map_or(DEFAULT_TIMEOUT_MS, |s| i64::from(s) * 1000);
                (
                    format!("agent:{}:cron:{}", job.agent_id, job.id),
                    message.clone(),
                    Some(directives),
                    timeout,
                    target,
                )
            }
        }
    }

    fn current_provider(&self) -> String {
        self.config
            .borrow()
            .str_at("model.provider")
            .unwrap_or("anthropic")
            .to_string()
    }

    /// An explicit `{channel, to}` (the account of the last chat on that
    /// channel, else `default`), `to` alone on the last chat's channel,
    /// else the last chat itself.
    fn task_target(
        &self,
        agent: &str,
        channel: Option<&str>,
        to: Option<&str>,
    ) -> Option<ChatTarget> {
        let last = self.last_chat(agent);
        let Some(to) = to else {
            return last.filter(|l| channel.is_none_or(|c| c.eq_ignore_ascii_case(&l.channel)));
        };
        let channel = channel
            .map(str::to_string)
            .or(last.as_ref().map(|l| l.channel.clone()))?;
        let account_id = last
            .filter(|l| l.channel.eq_ignore_ascii_case(&channel))
            .map_or_else(|| "default".to_string(), |l| l.account_id);
        Some(ChatTarget {
            channel,
            account_id,
            peer: ChannelPeer {
                kind: PeerKind::Dm,
                id: to.to_string(),
                name: None,
                handle: None,
                thread_id: None,
            },
        })
    }

    /// A cron run's agent run ended: deliver the answer, then record.
    pub(super) async fn cron_run_ended(&self, work: &Value, end: RunEnd) -> Res<()> {
        let work: CronWork = serde_json::from_value(work.clone()).map_err(internal_error)?;
        let outcome = match end {
            RunEnd::Answered(text) => {
                let failed = match (&work.target, text.trim().is_empty()) {
                    (Some(target), false) => self.deliver_to(target, &work.run_id, &text).await,
                    _ => None,
                };
                RunOutcome {
                    status: if failed.is_some() {
                        RunStatus::Error
                    } else {
                        RunStatus::Ok
                    },
                    error: failed.map(|e| format!("answered, but delivery failed: {e}")),
                    summary: Some(text.chars().take(SUMMARY_CHARS).collect()),
                }
            }
            RunEnd::Failed(error) => RunOutcome {
                status: RunStatus::Error,
                error: Some(error),
                summary: None,
            },
        };
        let store = self.schedule_store();
        match store.job(&work.job_id)? {
            Some(job) => self.finish_cron(&job, &work.due(), outcome),
            // Removed while it ran: only the history is kept.
            None => {
                let mut run = store
                    .run(&work.run_id)?
                    .ok_or_else(|| not_found(&work.run_id))?;
                run.status = outcome.status;
                run.error = outcome.error;
                run.summary = outcome.summary;
                run.duration_ms = Some((self.sched_now() - work.fired_at_ms).max(0));
                store.save_run(&run)
            }
        }
    }

    fn finish_cron(&self, job: &CronJob, due: &Due, outcome: RunOutcome) -> Res<()> {
        let store = self.schedule_store();
        let (after, run) = slots::finish(job, due, outcome, self.sched_now());
        match after {
            slots::AfterRun::Keep(job) => store.save_job(&job)?,
            slots::AfterRun::Delete => {
                store.delete_job(&job.id, false)?;
            }
        }
        store.save_run(&run)?;
        store.prune_runs(&job.id, self.cron_limits().max_runs_per_job_history)
    }

    /// Runs `f` with the normalization context: now, the user's zone.
    fn with_input<T>(
        &self,
        f: impl FnOnce(&InputContext<'_>) -> Result<T, crate::schedule::tool_input::InputError>,
    ) -> Res<T> {
        let zone = self.user_zone();
        let user_tz = self.zone_of(&zone);
        let zones = zones();
        let cx = InputContext {
            now_ms: self.sched_now(),
            user_zone: &zone,
            user_tz: user_tz.as_ref(),
            zones: &zones,
        };
        f(&cx).map_err(bad)
    }
}
