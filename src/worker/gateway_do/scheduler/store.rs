//! The scheduler's tables and every statement over them: cron jobs (the
//! whole job as JSON, with the columns the alarm's queries need), their
//! run history, the agent runs the gateway started on its own (a cron
//! run, a heartbeat or a `gsv__SessionSend` that waits, until the agent's
//! run ends), each agent's heartbeat state, and the memory sweep's time.

use super::super::sql_store::SqlStore;
use crate::worker::rpc::internal_error;
use gsv_protocol::cron::{CronJob, CronRun, HeartbeatState};
use gsv_protocol::ErrorShape;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use worker::{SqlStorage, SqlStorageValue};

type Res<T> = std::result::Result<T, ErrorShape>;

pub const MIGRATION: &str = "
    CREATE TABLE cron_jobs (id TEXT PRIMARY KEY, agent_id TEXT NOT NULL, enabled INTEGER NOT NULL,
        next_run_at INTEGER, running_at INTEGER, job TEXT NOT NULL);
    CREATE INDEX cron_jobs_due ON cron_jobs (enabled, next_run_at);
    CREATE TABLE cron_runs (id TEXT PRIMARY KEY, job_id TEXT NOT NULL, ts INTEGER NOT NULL, run TEXT NOT NULL);
    CREATE INDEX cron_runs_by_job ON cron_runs (job_id, ts DESC);
    CREATE TABLE agent_runs (chat_run_id TEXT PRIMARY KEY, kind TEXT NOT NULL, ref_id TEXT NOT NULL,
        session_key TEXT NOT NULL, started_at INTEGER NOT NULL, deadline_at INTEGER NOT NULL, work TEXT NOT NULL);
    CREATE INDEX agent_runs_by_deadline ON agent_runs (deadline_at);
    CREATE TABLE heartbeats (agent_id TEXT PRIMARY KEY, next_at INTEGER, state TEXT NOT NULL,
        last_delivery TEXT)";

/// Runs going, counted whenever the alarm is set (maxConcurrentRuns).
pub const RUNNING_INDEX_MIGRATION: &str =
    "CREATE INDEX cron_jobs_running ON cron_jobs (running_at)";

/// When the nightly memory sweep next runs (schedule clock): one row.
pub const SWEEP_MIGRATION: &str =
    "CREATE TABLE memory_sweep (id INTEGER PRIMARY KEY CHECK (id = 1), next_at INTEGER NOT NULL)";

/// A run the gateway started and waits on: its `work` JSON says what to
/// do when the agent's run ends.
#[derive(Debug, Clone, Deserialize)]
pub struct AgentRun {
    pub chat_run_id: String,
    pub kind: String,
    pub ref_id: String,
    pub session_key: String,
    pub started_at: i64,
    pub deadline_at: i64,
    pub work: String,
}

pub struct ScheduleStore {
    sql: SqlStorage,
}

#[derive(Deserialize)]
struct JobRow {
    job: String,
}

#[derive(Deserialize)]
struct RunRow {
    run: String,
}

#[derive(Deserialize)]
struct Min {
    at: Option<f64>,
}

fn json<T: Serialize>(v: &T) -> Res<String> {
    serde_json::to_string(v).map_err(internal_error)
}

fn parse<T: DeserializeOwned>(s: &str) -> Res<T> {
    serde_json::from_str(s).map_err(internal_error)
}

impl SqlStore for ScheduleStore {
    fn sql(&self) -> &SqlStorage {
        &self.sql
    }
}

impl ScheduleStore {
    pub fn new(sql: SqlStorage) -> Self {
        Self { sql }
    }

    fn count(&self, query: &str, b: Vec<SqlStorageValue>) -> Res<u64> {
        Ok(SqlStore::count(self, query, b)?.max(0) as u64)
    }

    fn jobs(&self, query: &str, b: Vec<SqlStorageValue>) -> Res<Vec<CronJob>> {
        let rows: Vec<JobRow> = self.rows(query, b)?;
        rows.iter().map(|r| parse(&r.job)).collect()
    }

    // --- jobs ----------------------------------------------------------------

    pub fn save_job(&self, job: &CronJob) -> Res<()> {
        self.exec(
            "INSERT INTO cron_jobs (id, agent_id, enabled, next_run_at, running_at, job) VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT(id) DO UPDATE SET agent_id = excluded.agent_id, enabled = excluded.enabled,
             next_run_at = excluded.next_run_at, running_at = excluded.running_at, job = excluded.job",
            vec![
                job.id.as_str().into(),
                job.agent_id.as_str().into(),
                i64::from(job.enabled).into(),
                job.state.next_run_at_ms.into(),
                job.state.running_at_ms.into(),
                json(job)?.into(),
            ],
        )?;
        Ok(())
    }

    pub fn job(&self, id: &str) -> Res<Option<CronJob>> {
        let jobs = self.jobs("SELECT job FROM cron_jobs WHERE id = ?", vec![id.into()])?;
        Ok(jobs.into_iter().next())
    }

    /// Deletes the job and its run history; whether it existed.
    pub fn delete_job(&self, id: &str, with_runs: bool) -> Res<bool> {
        let existed = self.count(
            "SELECT COUNT(*) AS n FROM cron_jobs WHERE id = ?",
            vec![id.into()],
        )?;
        self.exec("DELETE FROM cron_jobs WHERE id = ?", vec![id.into()])?;
        if with_runs {
            self.exec("DELETE FROM cron_runs WHERE job_id = ?", vec![id.into()])?;
        }
        Ok(existed > 0)
    }

    /// One page of jobs ordered by next run (disabled ones last), and how
    /// many match in all.
    pub fn list(
        &self,
        agent: Option<&str>,
        include_disabled: bool,
        limit: u32,
        offset: u32,
    ) -> Res<(Vec<CronJob>, u64)> {
        let filter = "WHERE (?1 IS NULL OR agent_id = ?1) AND (?2 = 1 OR enabled = 1)";
        let b = || -> Vec<SqlStorageValue> {
            vec![
                agent.map(str::to_string).into(),
                i64::from(include_disabled).into(),
            ]
        };
        let count = self.count(
            &format!("SELECT COUNT(*) AS n FROM cron_jobs {filter}"),
            b(),
        )?;
        let mut page = b();
        page.push(i64::from(limit).into());
        page.push(i64::from(offset).into());
        let jobs = self.jobs(
            &format!(
                "SELECT job FROM cron_jobs {filter}
                 ORDER BY enabled DESC, next_run_at IS NULL, next_run_at, id LIMIT ?3 OFFSET ?4"
            ),
            page,
        )?;
        Ok((jobs, count))
    }

    pub fn job_count(&self) -> Res<u64> {
        self.count("SELECT COUNT(*) AS n FROM cron_jobs", vec![])
    }

    /// Enabled jobs whose slot has come, earliest first; a job marked
    /// running since after `stale_before` is left alone.
    /// Enabled jobs whose slot is reached, earliest first: up to `limit`
    /// not running (stale runs count as ended), or up to `limit` running
    /// (`running`: their slots are skipped, `slots::overlapped`).
    pub fn reached(
        &self,
        now: i64,
        stale_before: i64,
        running: bool,
        limit: usize,
    ) -> Res<Vec<CronJob>> {
        let query = if running {
            "SELECT job FROM cron_jobs WHERE enabled = 1 AND next_run_at <= ?
             AND running_at >= ? ORDER BY next_run_at LIMIT ?"
        } else {
            "SELECT job FROM cron_jobs WHERE enabled = 1 AND next_run_at <= ?
             AND (running_at IS NULL OR running_at < ?) ORDER BY next_run_at LIMIT ?"
        };
        self.jobs(
            query,
            vec![now.into(), stale_before.into(), (limit as i64).into()],
        )
    }

    pub fn due_count(&self, now: i64, stale_before: i64) -> Res<u64> {
        self.count(
            "SELECT COUNT(*) AS n FROM cron_jobs WHERE enabled = 1 AND next_run_at <= ?
             AND (running_at IS NULL OR running_at < ?)",
            vec![now.into(), stale_before.into()],
        )
    }

    pub fn running_count(&self, stale_before: i64) -> Res<u64> {
        self.count(
            "SELECT COUNT(*) AS n FROM cron_jobs WHERE running_at >= ?",
            vec![stale_before.into()],
        )
    }

    /// The earliest moment cron has work: the first slot of an enabled
    /// job (`slots::next_alarm`). With no room for another run (`full`),
    /// only the slots of running jobs, which are skipped: the others wait
    /// for a run to end, and its end sets the alarm again.
    pub fn next_deadline(&self, full: bool, stale_before: i64) -> Option<f64> {
        let (query, bindings) = if full {
            (
                // `+enabled`: through the running jobs' index (a few rows),
                // not the due index over every job.
                "SELECT MIN(next_run_at) AS at FROM cron_jobs WHERE +enabled = 1 AND running_at >= ?",
                vec![stale_before.into()],
            )
        } else {
            (
                "SELECT MIN(next_run_at) AS at FROM cron_jobs WHERE enabled = 1",
                vec![],
            )
        };
        self.rows::<Min>(query, bindings).ok()?.first()?.at
    }

    // --- run history -----------------------------------------------------------

    /// Records a run by its id; `false` when that id was already recorded
    /// (the slot fired before: the alarm ran twice).
    pub fn insert_run(&self, run: &CronRun) -> Res<bool> {
        let before = self.count(
            "SELECT COUNT(*) AS n FROM cron_runs WHERE id = ?",
            vec![run.id.as_str().into()],
        )?;
        if before > 0 {
            return Ok(false);
        }
        self.save_run(run)?;
        Ok(true)
    }

    pub fn save_run(&self, run: &CronRun) -> Res<()> {
        self.exec(
            "INSERT INTO cron_runs (id, job_id, ts, run) VALUES (?, ?, ?, ?)
             ON CONFLICT(id) DO UPDATE SET run = excluded.run",
            vec![
                run.id.as_str().into(),
                run.job_id.as_str().into(),
                run.ts.into(),
                json(run)?.into(),
            ],
        )?;
        Ok(())
    }

    pub fn run(&self, id: &str) -> Res<Option<CronRun>> {
        let rows: Vec<RunRow> =
            self.rows("SELECT run FROM cron_runs WHERE id = ?", vec![id.into()])?;
        rows.first().map(|r| parse(&r.run)).transpose()
    }

    /// Keeps the newest `keep` runs of a job.
    pub fn prune_runs(&self, job_id: &str, keep: usize) -> Res<()> {
        // Only the rows past the newest `keep` are visited (by the job's
        // index): a run's end usually finds none.
        self.exec(
            "DELETE FROM cron_runs WHERE id IN
             (SELECT id FROM cron_runs WHERE job_id = ?1 ORDER BY ts DESC, id DESC LIMIT -1 OFFSET ?2)",
            vec![job_id.into(), (keep as i64).into()],
        )?;
        Ok(())
    }

    /// Runs newest first, and how many match.
    pub fn runs(&self, job_id: Option<&str>, limit: u32, offset: u32) -> Res<(Vec<CronRun>, u64)> {
        let job = || -> SqlStorageValue { job_id.map(str::to_string).into() };
        let count = self.count(
            "SELECT COUNT(*) AS n FROM cron_runs WHERE ?1 IS NULL OR job_id = ?1",
            vec![job()],
        )?;
        let rows: Vec<RunRow> = self.rows(
            "SELECT run FROM cron_runs WHERE ?1 IS NULL OR job_id = ?1
             ORDER BY ts DESC, id DESC LIMIT ?2 OFFSET ?3",
            vec![job(), i64::from(limit).into(), i64::from(offset).into()],
        )?;
        let runs = rows
            .iter()
            .map(|r| parse(&r.run))
            .collect::<Res<Vec<_>>>()?;
        Ok((runs, count))
    }

    // --- agent runs the gateway waits on ----------------------------------------

    #[allow(clippy::too_many_arguments)]
    pub fn start_agent_run<W: Serialize>(
        &self,
        chat_run_id: &str,
        kind: &str,
        ref_id: &str,
        session_key: &str,
        now: i64,
        deadline_at: i64,
        work: &W,
    ) -> Res<()> {
        self.exec(
            "INSERT OR REPLACE INTO agent_runs (chat_run_id, kind, ref_id, session_key, started_at, deadline_at, work)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
            vec![
                chat_run_id.into(),
                kind.into(),
                ref_id.into(),
                session_key.into(),
                now.into(),
                deadline_at.into(),
                json(work)?.into(),
            ],
        )?;
        Ok(())
    }

    /// Takes the run out of the table: only the first caller gets it, so
    /// a run's end is handled once even if its final event came twice.
    pub fn take_agent_run(&self, chat_run_id: &str) -> Res<Option<AgentRun>> {
        let rows: Vec<AgentRun> = self.rows(
            "SELECT chat_run_id, kind, ref_id, session_key, started_at, deadline_at, work FROM agent_runs WHERE chat_run_id = ?",
            vec![chat_run_id.into()],
        )?;
        // Most chat runs are no gateway run of its own: no write for them.
        if !rows.is_empty() {
            self.exec(
                "DELETE FROM agent_runs WHERE chat_run_id = ?",
                vec![chat_run_id.into()],
            )?;
        }
        Ok(rows.into_iter().next())
    }

    pub fn overdue_agent_runs(&self, now: i64) -> Res<Vec<AgentRun>> {
        self.rows(
            "SELECT chat_run_id, kind, ref_id, session_key, started_at, deadline_at, work FROM agent_runs WHERE deadline_at <= ?",
            vec![now.into()],
        )
    }

    pub fn agent_runs_deadline(&self) -> Option<f64> {
        self.rows::<Min>("SELECT MIN(deadline_at) AS at FROM agent_runs", vec![])
            .ok()?
            .first()?
            .at
    }

    /// Whether a run of this kind and ref is in flight.
    pub fn agent_run_for(&self, kind: &str, ref_id: &str) -> Res<bool> {
        let n = self.count(
            "SELECT COUNT(*) AS n FROM agent_runs WHERE kind = ? AND ref_id = ?",
            vec![kind.into(), ref_id.into()],
        )?;
        Ok(n > 0)
    }

    // --- heartbeats ---------------------------------------------------------------

    pub fn heartbeat(&self, agent_id: &str) -> Res<Option<(HeartbeatState, Option<String>)>> {
        #[derive(Deserialize)]
        struct Row {
            state: String,
            last_delivery: Option<String>,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT state, last_delivery FROM heartbeats WHERE agent_id = ?",
            vec![agent_id.into()],
        )?;
        rows.into_iter()
            .next()
            .map(|r| Ok((parse(&r.state)?, r.last_delivery)))
            .transpose()
    }

    pub fn save_heartbeat(&self, state: &HeartbeatState) -> Res<()> {
        self.exec(
            "INSERT INTO heartbeats (agent_id, next_at, state) VALUES (?, ?, ?)
             ON CONFLICT(agent_id) DO UPDATE SET next_at = excluded.next_at, state = excluded.state",
            vec![state.agent_id.as_str().into(), state.next_heartbeat_at.into(), json(state)?.into()],
        )?;
        Ok(())
    }

    pub fn save_last_delivery(&self, agent_id: &str, delivery: &str) -> Res<()> {
        self.exec(
            "UPDATE heartbeats SET last_delivery = ? WHERE agent_id = ?",
            vec![delivery.into(), agent_id.into()],
        )?;
        Ok(())
    }

    pub fn heartbeat_agents(&self) -> Res<Vec<HeartbeatState>> {
        #[derive(Deserialize)]
        struct Row {
            state: String,
        }
        let rows: Vec<Row> = self.rows("SELECT state FROM heartbeats ORDER BY agent_id", vec![])?;
        rows.iter().map(|r| parse(&r.state)).collect()
    }

    pub fn forget_heartbeats_except(&self, agents: &[String]) -> Res<()> {
        for state in self.heartbeat_agents()? {
            if !agents.contains(&state.agent_id) {
                self.exec(
                    "DELETE FROM heartbeats WHERE agent_id = ?",
                    vec![state.agent_id.as_str().into()],
                )?;
            }
        }
        Ok(())
    }

    pub fn heartbeats_deadline(&self) -> Option<f64> {
        self.rows::<Min>("SELECT MIN(next_at) AS at FROM heartbeats", vec![])
            .ok()?
            .first()?
            .at
    }

    // --- the memory sweep ------------------------------------------------------

    /// When the sweep next runs (schedule clock), if it is scheduled.
    pub fn sweep_at(&self) -> Option<i64> {
        #[derive(Deserialize)]
        struct Row {
            next_at: i64,
        }
        let rows: Vec<Row> = self
            .rows("SELECT next_at FROM memory_sweep WHERE id = 1", vec![])
            .ok()?;
        rows.into_iter().next().map(|r| r.next_at)
    }

    pub fn set_sweep_at(&self, at: i64) -> Res<()> {
        self.exec(
            "INSERT INTO memory_sweep (id, next_at) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET next_at = excluded.next_at",
            vec![at.into()],
        )?;
        Ok(())
    }

    pub fn drop_sweep(&self) -> Res<()> {
        self.exec("DELETE FROM memory_sweep", vec![])?;
        Ok(())
    }
}
