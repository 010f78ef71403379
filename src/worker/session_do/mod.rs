//! The Session Durable Object (one per canonical session key): history in
//! SQLite, a persisted FIFO of messages waiting for their run, and the
//! agent loop. A watchdog deadline (the object's alarm) resumes or ends a
//! run whose loop died with an eviction or restart.

mod archives;
mod chat;
mod compaction;
mod reset;
mod run;
mod summarizer;
mod tools;

use crate::config::Config;
use crate::llm::LlmErrorKind;
use crate::session::coalesce::DeltaCoalescer;
use crate::session::internal::{
    path, NodeSnapshot, SessionChatSend, SessionExecEvent, SessionQuery,
};
use crate::session::meta::SessionMeta;
use crate::session::patch::apply_patch;
use crate::session::run::{next_step, NextStep};
use crate::session::run_config::{with_directives, RunConfig};
use crate::session::tools::{exec_event_message, ToolWait};
use crate::worker::llm_call::{complete, Cancel};
use crate::worker::r2;
use crate::worker::rpc::{call_object, internal_error, new_id, now_ms, read_json, reply};
use crate::worker::sql::migrate;
use crate::worker::workspace::prompt_load;
use gsv_protocol::*;
use run::run_loop;
use serde::Deserialize;
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use tools::{ToolRun, TOOLS_DEADLINE};
use worker::*;

const MIGRATIONS: &[&str] = &["
    CREATE TABLE messages (idx INTEGER PRIMARY KEY, role TEXT NOT NULL, data TEXT NOT NULL, timestamp INTEGER NOT NULL);
    CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 1), data TEXT NOT NULL, config TEXT NOT NULL);
    CREATE TABLE run_queue (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, message TEXT NOT NULL, queued_at INTEGER NOT NULL);
    CREATE TABLE current_run (id INTEGER PRIMARY KEY CHECK (id = 1), run_id TEXT NOT NULL, first_idx INTEGER NOT NULL,
        started_at INTEGER NOT NULL, usage TEXT NOT NULL, iterations INTEGER NOT NULL DEFAULT 0, resumes INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE deadlines (kind TEXT PRIMARY KEY, at_ms INTEGER NOT NULL);
",
    // A reset in progress (one row): its plan, rewritten after every step.
    "CREATE TABLE reset_plan (id INTEGER PRIMARY KEY CHECK (id = 1), plan TEXT NOT NULL)",
    // The current turn's tool calls (results stored as they arrive), the
    // background-command events already queued, and the node tools and
    // hosts known at the last message.
    "CREATE TABLE tool_calls (seq INTEGER PRIMARY KEY, call_id TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
        args TEXT NOT NULL, dispatched INTEGER NOT NULL DEFAULT 0, result TEXT);
     CREATE TABLE seen_exec_events (event_id TEXT PRIMARY KEY, seen_at INTEGER NOT NULL);
     ALTER TABLE meta ADD COLUMN nodes TEXT NOT NULL DEFAULT '{}'",
    // The assembled prompt of a run waiting on tools, so the run resumes
    // with it instead of reading the workspace again.
    "ALTER TABLE current_run ADD COLUMN prompt TEXT",
    // A message's inline directives (for its run only), and the mark of a
    // message that must first reset the session (its reset policy was due).
    "ALTER TABLE run_queue ADD COLUMN overrides TEXT;
     ALTER TABLE run_queue ADD COLUMN reset_first INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE current_run ADD COLUMN overrides TEXT",
];

/// Streamed text is sent to the gateway at most this often.
const DELTA_INTERVAL_MS: i64 = 40;
/// Resumes of one interrupted run before it is ended with an error.
const MAX_RESUMES: i64 = 2;
/// The object's periodic deadline while it has something to watch: a live
/// run proves it is alive at each tick; a run whose loop died with an
/// eviction or restart is resumed at the next one; an idle event link is
/// closed. It is moved only when missing, so a turn costs no alarm write.
const TICK: &str = "tick";
const TICK_MS: i64 = 10_000;
/// The event link stays open this long after the last event, for the next run.
const LINK_IDLE_MS: i64 = 30_000;
/// Background-command events are recognised as repeats for this long.
const SEEN_EXEC_EVENT_MS: i64 = 24 * 3600 * 1000;

#[durable_object]
pub struct Session {
    state: State,
    core: Rc<Core>,
}

/// What the loop shares with the object's handlers.
pub(super) struct Core {
    sql: SqlStorage,
    storage: Storage,
    pub(super) env: Env,
    /// True while a loop runs in this instance (lost, as it should be, on eviction).
    running: Cell<bool>,
    /// True while this instance executes a reset plan: nobody else may.
    pub(super) resetting: Cell<bool>,
    /// True while a request is about to reset: the loop starts no new run.
    pub(super) paused: Cell<bool>,
    meta: RefCell<Option<SessionMeta>>,
    /// The event link to the Gateway, open while runs go on.
    link: RefCell<Option<WebSocket>>,
    /// When the event link last carried an event.
    link_used_at: Cell<i64>,
    /// The alarm time this instance last set (`None`: unknown or none).
    alarm_at: Cell<Option<i64>>,
    /// The last prompt this instance assembled and what from (the next
    /// run's early call; `session.stats` reports its load).
    last_prompt: RefCell<Option<(prompt_load::RunPrompt, run::PromptInputs)>>,
}

#[derive(Debug, Clone, Deserialize)]
pub(super) struct CurrentRun {
    pub(super) run_id: String,
    first_idx: i64,
    usage: String,
    iterations: i64,
    resumes: i64,
    /// `RunPrompt` JSON, kept while the run waits on tools.
    prompt: Option<String>,
    /// `ChatDirectives` JSON of the run's message.
    overrides: Option<String>,
}

impl DurableObject for Session {
    fn new(state: State, env: Env) -> Self {
        let sql = state.storage().sql();
        if let Err(e) = migrate(&sql, MIGRATIONS, now_ms()) {
            console_error!("session: migration failed: {e}");
        }
        let core = Core {
            sql,
            storage: state.storage(),
            env,
            running: Cell::new(false),
            resetting: Cell::new(false),
            paused: Cell::new(false),
            meta: RefCell::new(None),
            link: RefCell::new(None),
            link_used_at: Cell::new(0),
            alarm_at: Cell::new(None),
            last_prompt: RefCell::new(None),
        };
        Self {
            state,
            core: Rc::new(core),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        match req.path().as_str() {
            path::CHAT_SEND => {
                let result = match read_json::<SessionChatSend>(&mut req).await {
                    Ok(send) => self.chat_send(send).await,
                    Err(e) => Err(e),
                };
                reply(result)
            }
            path::GET => reply(match read_json::<SessionQuery>(&mut req).await {
                Ok(q) => self
                    .core
                    .meta(&q.session_key)
                    .and_then(|m| Ok(m.to_result(self.core.message_count()?))),
                Err(e) => Err(e),
            }),
            path::PREVIEW => reply(match read_json::<SessionQuery>(&mut req).await {
                Ok(q) => self.preview(q),
                Err(e) => Err(e),
            }),
            path::STATS => reply(match read_json::<SessionQuery>(&mut req).await {
                Ok(q) => self.stats(q),
                Err(e) => Err(e),
            }),
            path::HISTORY => reply(match read_json::<SessionQuery>(&mut req).await {
                Ok(q) => self
                    .core
                    .meta(&q.session_key)
                    .map(|m| SessionHistoryResult {
                        session_key: m.session_key,
                        current_session_id: m.session_id,
                        previous_session_ids: m.previous_session_ids,
                    }),
                Err(e) => Err(e),
            }),
            path::PATCH => reply(match read_json::<SessionPatchParams>(&mut req).await {
                Ok(p) => self.patch(p),
                Err(e) => Err(e),
            }),
            path::COMPACT => reply(match read_json::<SessionCompactParams>(&mut req).await {
                Ok(p) => archives::compact(&self.core, p).await,
                Err(e) => Err(e),
            }),
            path::RESET => reply(match read_json::<SessionQuery>(&mut req).await {
                Ok(q) => self.reset(q, "Run ended: the session was reset").await,
                Err(e) => Err(e),
            }),
            path::TOOL_RESULT => reply(match read_json::<ToolResultParams>(&mut req).await {
                Ok(p) => self.tool_result(p),
                Err(e) => Err(e),
            }),
            path::EXEC_EVENT => reply(match read_json::<SessionExecEvent>(&mut req).await {
                Ok(ev) => self.exec_event(ev),
                Err(e) => Err(e),
            }),
            path::ABORT => reply(match read_json::<SessionQuery>(&mut req).await {
                Ok(q) => self.abort(q, "Run cancelled by user").await,
                Err(e) => Err(e),
            }),
            path::TRANSCRIPT => reply(match read_json::<SessionTranscriptParams>(&mut req).await {
                Ok(p) => archives::transcript(&self.core, p).await,
                Err(e) => Err(e),
            }),
            _ => Response::error("Not found", 404),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        let core = &self.core;
        let now = now_ms();
        // The alarm that woke us is spent.
        core.alarm_at.set(None);
        let due = core
            .take_due_deadlines(now)
            .map_err(|e| Error::RustError(e.message))?;
        if due.iter().any(|k| k == TOOLS_DEADLINE) {
            // Unanswered calls become timeout errors and the run goes on.
            core.time_out_tools()
                .map_err(|e| Error::RustError(e.message))?;
            if !core.running.get() {
                run_loop(core.clone()).await;
            }
        }
        if due.iter().any(|k| k == TICK) {
            self.tick(now)
                .await
                .map_err(|e| Error::RustError(e.message))?;
        }
        core.schedule().await;
        Response::ok("ok")
    }
}

impl Session {
    async fn tick(&self, now: i64) -> std::result::Result<(), ErrorShape> {
        let core = &self.core;
        if core.running.get() {
            // The loop is alive in this instance: keep watching.
            return core.set_deadline(TICK, now + TICK_MS);
        }
        let waiting = matches!(core.tool_state()?, ToolWait::Waiting);
        if let Some(run) = core.current_run()?.filter(|_| !waiting) {
            if run.resumes >= MAX_RESUMES {
                core.fail_run(&run, "The run was interrupted and could not be resumed")
                    .await;
            } else {
                core.exec(
                    "UPDATE current_run SET resumes = resumes + 1 WHERE id = 1",
                    vec![],
                )?;
            }
        }
        let work_left = (core.current_run()?.is_some() && !waiting)
            || core.count("SELECT COUNT(*) AS n FROM run_queue")? > 0
            || reset::reset_pending(core);
        if work_left {
            // Runs the interrupted run and the queue right here: an alarm
            // handler may take its time.
            run_loop(core.clone()).await;
            return Ok(());
        }
        if core.link.borrow().is_some() {
            if now - core.link_used_at.get() >= LINK_IDLE_MS {
                core.close_link();
            } else {
                core.set_deadline(TICK, now + TICK_MS)?;
            }
        }
        Ok(())
    }

    /// Runs the loop past this request; the watchdog covers its death.
    fn start_loop(&self) {
        if !self.core.running.get() {
            let core = self.core.clone();
            // After a zero timer, so the request that started the loop has
            // answered first: started at once, the loop's first writes and
            // workspace reads ran ahead of the answer, which (chat.send's
            // "started") reached the Gateway only once the prompt was loaded,
            // ~16 ms locally instead of ~2 ms.
            self.state.wait_until(async move {
                Delay::from(std::time::Duration::from_millis(0)).await;
                run_loop(core).await
            });
        }
    }

    /// A message was queued: the watchdog is armed before the request
    /// answers (should this object die before its loop starts, the alarm
    /// runs the queue), then the loop starts.
    async fn start_queued(&self) -> Res<()> {
        if self.core.ensure_tick()? {
            self.core.schedule().await;
        }
        self.start_loop();
        Ok(())
    }

    fn tool_result(&self, p: ToolResultParams) -> std::result::Result<AckResult, ErrorShape> {
        let (ack, complete) = self.core.take_tool_result(p)?;
        if complete {
            self.start_loop();
        }
        Ok(ack)
    }

    /// A background command of this session ended: the agent hears of it
    /// in a run of its own, queued like a message (once per event).
    fn exec_event(&self, ev: SessionExecEvent) -> std::result::Result<AckResult, ErrorShape> {
        let core = &self.core;
        core.meta(&ev.session_key)?;
        let seen = core.count_with(
            "SELECT COUNT(*) AS n FROM seen_exec_events WHERE event_id = ?",
            vec![ev.event.event_id.as_str().into()],
        )?;
        if seen > 0 {
            return Ok(AckResult {
                ok: true,
                dropped: Some(true),
            });
        }
        let now = now_ms();
        core.exec(
            "DELETE FROM seen_exec_events WHERE seen_at < ?",
            vec![(now - SEEN_EXEC_EVENT_MS).into()],
        )?;
        core.exec(
            "INSERT INTO seen_exec_events (event_id, seen_at) VALUES (?, ?)",
            vec![ev.event.event_id.as_str().into(), now.into()],
        )?;
        core.save_nodes(&ev.nodes)?;
        core.exec(
            "INSERT INTO run_queue (run_id, message, queued_at) VALUES (?, ?, ?)",
            vec![
                new_id().into(),
                exec_event_message(&ev.node_id, &ev.event).into(),
                now.into(),
            ],
        )?;
        self.start_loop();
        Ok(AckResult {
            ok: true,
            dropped: None,
        })
    }

    /// Cancels the current run and forgets its outstanding tool calls; a
    /// loop still waiting on the model drops the answer when it comes.
    async fn abort(
        &self,
        q: SessionQuery,
        reason: &str,
    ) -> std::result::Result<ChatAbortResult, ErrorShape> {
        let core = &self.core;
        core.meta(&q.session_key)?;
        let Some(run) = core.current_run()? else {
            return Ok(ChatAbortResult {
                ok: true,
                was_running: false,
                run_id: None,
                pending_tools_cancelled: 0,
            });
        };
        let cancelled = core.cancel_tools()?;
        core.fail_run(&run, reason).await;
        core.schedule().await;
        // The next queued message starts (unless a reset holds the loop).
        self.start_loop();
        Ok(ChatAbortResult {
            ok: true,
            was_running: true,
            run_id: Some(run.run_id),
            pending_tools_cancelled: cancelled,
        })
    }

    fn stats(&self, q: SessionQuery) -> std::result::Result<SessionStatsResult, ErrorShape> {
        let core = &self.core;
        let meta = core.meta(&q.session_key)?;
        let queued = core.count("SELECT COUNT(*) AS n FROM run_queue")?;
        Ok(SessionStatsResult {
            message_count: core.message_count()?,
            uptime: now_ms() - meta.created_at,
            is_processing: core.current_run()?.is_some(),
            queue_size: queued as u64,
            session_key: meta.session_key,
            session_id: meta.session_id,
            tokens: meta.tokens,
            created_at: meta.created_at,
            updated_at: meta.updated_at,
            last_workspace_load: core
                .last_prompt
                .borrow()
                .as_ref()
                .map(|(p, _)| p.load.clone()),
        })
    }

    fn patch(&self, p: SessionPatchParams) -> std::result::Result<SessionGetResult, ErrorShape> {
        let meta = self.core.meta(&p.session_key)?;
        let next = apply_patch(&meta, &p).map_err(|e| ErrorShape::new(codes::BAD_REQUEST, e))?;
        self.core.save_meta(&next, None)?;
        Ok(next.to_result(self.core.message_count()?))
    }

    fn preview(&self, q: SessionQuery) -> std::result::Result<Value, ErrorShape> {
        let meta = self.core.meta(&q.session_key)?;
        let messages = match q.limit {
            Some(limit) => {
                let mut m = self.core.messages(
                    "SELECT data FROM messages ORDER BY idx DESC LIMIT ?",
                    vec![i64::from(limit).into()],
                )?;
                m.reverse();
                m
            }
            None => self
                .core
                .messages("SELECT data FROM messages ORDER BY idx", vec![])?,
        };
        serde_json::to_value(SessionPreviewResult {
            session_key: meta.session_key,
            session_id: meta.session_id,
            message_count: self.core.message_count()?,
            messages,
        })
        .map_err(internal_error)
    }
}

/// Opens a WebSocket to the Gateway's internal event-link path.
async fn open_link(env: &Env) -> Result<WebSocket> {
    let stub = env.durable_object("GATEWAY")?.get_by_name("singleton")?;
    let headers = Headers::new();
    headers.set("Upgrade", "websocket")?;
    let mut init = RequestInit::new();
    init.with_headers(headers);
    let req = Request::new_with_init(
        &format!("https://gateway.internal{}", path::EVENT_LINK),
        &init,
    )?;
    let res = stub.fetch_with_request(req).await?;
    let ws = res
        .websocket()
        .ok_or_else(|| Error::RustError("the gateway refused the event link".into()))?;
    ws.accept()?;
    Ok(ws)
}

pub(super) type Res<T> = std::result::Result<T, ErrorShape>;

/// A stored message: its index (gaps where messages were compacted) and JSON.
#[derive(Deserialize)]
pub(super) struct MessageRow {
    pub(super) idx: i64,
    pub(super) data: String,
}

impl Core {
    /// Points the object's one alarm at its earliest deadline.
    pub(super) async fn schedule(&self) {
        #[derive(Deserialize)]
        struct Next {
            at: Option<f64>,
        }
        let next = self
            .sql
            .exec("SELECT MIN(at_ms) AS at FROM deadlines", None)
            .and_then(|c| c.one::<Next>())
            .ok()
            .and_then(|n| n.at)
            .map(|at| at as i64);
        if next.is_some() && next == self.alarm_at.get() {
            return;
        }
        let result = match next {
            Some(at) => {
                self.storage
                    .set_alarm(ScheduledTime::new(js_sys::Date::new(&(at as f64).into())))
                    .await
            }
            None => self.storage.delete_alarm().await,
        };
        match result {
            Ok(()) => self.alarm_at.set(next),
            Err(e) => console_error!("session: scheduling the alarm failed: {e}"),
        }
    }

    pub(super) fn exec(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Res<SqlCursor> {
        self.sql.exec(query, bindings).map_err(internal_error)
    }

    pub(super) fn count(&self, query: &str) -> Res<i64> {
        self.count_with(query, vec![])
    }

    fn count_with(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Res<i64> {
        #[derive(Deserialize)]
        struct N {
            n: i64,
        }
        self.exec(query, bindings)?
            .one::<N>()
            .map(|r| r.n)
            .map_err(internal_error)
    }

    /// Whether `run` is still the current run (not cancelled meanwhile).
    pub(super) fn is_current(&self, run: &CurrentRun) -> bool {
        self.current_run()
            .ok()
            .flatten()
            .is_some_and(|r| r.run_id == run.run_id)
    }

    pub(super) fn message_count(&self) -> Res<u64> {
        self.count("SELECT COUNT(*) AS n FROM messages")
            .map(|n| n as u64)
    }

    /// Every stored message in order: its index and its JSON.
    pub(super) fn message_rows(&self) -> Res<Vec<MessageRow>> {
        self.exec("SELECT idx, data FROM messages ORDER BY idx", vec![])?
            .to_array()
            .map_err(internal_error)
    }

    /// The whole history, and the part of it from message index `first_idx`
    /// on (an index, not a position: older messages may be compacted away).
    fn history_from(&self, first_idx: i64) -> Res<(Vec<Message>, Vec<Message>)> {
        let rows = self.message_rows()?;
        let mut all = Vec::with_capacity(rows.len());
        let mut from = Vec::new();
        for row in rows {
            let message: Message = serde_json::from_str(&row.data).map_err(internal_error)?;
            if row.idx >= first_idx {
                from.push(message.clone());
            }
            all.push(message);
        }
        Ok((all, from))
    }

    pub(super) fn messages(
        &self,
        query: &str,
        bindings: Vec<SqlStorageValue>,
    ) -> Res<Vec<Message>> {
        #[derive(Deserialize)]
        struct Row {
            data: String,
        }
        let rows: Vec<Row> = self
            .exec(query, bindings)?
            .to_array()
            .map_err(internal_error)?;
        rows.iter()
            .map(|r| serde_json::from_str(&r.data).map_err(internal_error))
            .collect()
    }

    pub(super) fn append(&self, msg: &Message) -> Res<()> {
        let data = serde_json::to_string(msg).map_err(internal_error)?;
        self.exec(
            "INSERT INTO messages (idx, role, data, timestamp) VALUES ((SELECT COALESCE(MAX(idx), -1) + 1 FROM messages), ?, ?, ?)",
            vec![msg.role().into(), data.into(), msg.timestamp().into()],
        )?;
        Ok(())
    }

    /// The session's meta, created (and stored at once) on first use.
    pub(super) fn meta(&self, session_key: &str) -> Res<SessionMeta> {
        if let Some(m) = self.meta.borrow().as_ref() {
            return Ok(m.clone());
        }
        #[derive(Deserialize)]
        struct Row {
            data: String,
        }
        let rows: Vec<Row> = self
            .exec("SELECT data FROM meta WHERE id = 1", vec![])?
            .to_array()
            .map_err(internal_error)?;
        let meta = match rows.first() {
            Some(row) => serde_json::from_str(&row.data).map_err(internal_error)?,
            None => {
                let meta = SessionMeta::new(new_id(), session_key.to_string(), now_ms());
                self.save_meta(&meta, None)?;
                meta
            }
        };
        self.meta.replace(Some(meta.clone()));
        Ok(meta)
    }

    pub(super) fn save_meta(&self, meta: &SessionMeta, config: Option<&Value>) -> Res<()> {
        let data = serde_json::to_string(meta).map_err(internal_error)?;
        match config {
            Some(cfg) => {
                let cfg = serde_json::to_string(cfg).map_err(internal_error)?;
                self.exec(
                    "INSERT INTO meta (id, data, config) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET data = excluded.data, config = excluded.config",
                    vec![data.into(), cfg.into()],
                )?;
            }
            None => {
                self.exec(
                    "INSERT INTO meta (id, data, config) VALUES (1, ?, '{}') ON CONFLICT(id) DO UPDATE SET data = excluded.data",
                    vec![data.into()],
                )?;
            }
        }
        self.meta.replace(Some(meta.clone()));
        Ok(())
    }

    /// The run settings from the stored config and session settings.
    pub(super) fn run_config(&self) -> Res<RunConfig> {
        let meta = self.meta("")?;
        Ok(RunConfig::resolve(&self.config()?, &meta.settings))
    }

    fn save_nodes(&self, nodes: &NodeSnapshot) -> Res<()> {
        let data = serde_json::to_string(nodes).map_err(internal_error)?;
        self.exec("UPDATE meta SET nodes = ? WHERE id = 1", vec![data.into()])?;
        Ok(())
    }

    fn nodes(&self) -> Res<NodeSnapshot> {
        #[derive(Deserialize)]
        struct Row {
            nodes: String,
        }
        let rows: Vec<Row> = self
            .exec("SELECT nodes FROM meta WHERE id = 1", vec![])?
            .to_array()
            .map_err(internal_error)?;
        Ok(rows
            .first()
            .and_then(|r| serde_json::from_str(&r.nodes).ok())
            .unwrap_or_default())
    }

    pub(super) fn config(&self) -> Res<Config> {
        #[derive(Deserialize)]
        struct Row {
            config: String,
        }
        let rows: Vec<Row> = self
            .exec("SELECT config FROM meta WHERE id = 1", vec![])?
            .to_array()
            .map_err(internal_error)?;
        let overrides = rows
            .first()
            .map(|r| serde_json::from_str(&r.config))
            .transpose()
            .map_err(internal_error)?;
        Ok(Config::from_overrides(overrides.unwrap_or(Value::Null)))
    }

    pub(super) fn current_run(&self) -> Res<Option<CurrentRun>> {
        let rows: Vec<CurrentRun> = self
            .exec("SELECT run_id, first_idx, usage, iterations, resumes, prompt, overrides FROM current_run WHERE id = 1", vec![])?
            .to_array()
            .map_err(internal_error)?;
        Ok(rows.into_iter().next())
    }

    /// Moves the oldest queued message into the history and makes it the
    /// current run, in one synchronous step (atomic in the object).
    fn start_next_run(&self) -> Res<Option<CurrentRun>> {
        #[derive(Deserialize)]
        struct Queued {
            seq: i64,
            run_id: String,
            message: String,
            queued_at: i64,
            overrides: Option<String>,
        }
        let rows: Vec<Queued> = self
            .exec(
                "SELECT seq, run_id, message, queued_at, overrides FROM run_queue ORDER BY seq LIMIT 1",
                vec![],
            )?
            .to_array()
            .map_err(internal_error)?;
        let Some(q) = rows.into_iter().next() else {
            return Ok(None);
        };
        let first_idx = self.count("SELECT COALESCE(MAX(idx), -1) + 1 AS n FROM messages")?;
        let now = now_ms();
        self.append(&Message::User(UserMessage {
            content: UserContent::Text(q.message),
            timestamp: q.queued_at,
        }))?;
        self.exec("DELETE FROM run_queue WHERE seq = ?", vec![q.seq.into()])?;
        self.exec(
            "INSERT INTO current_run (id, run_id, first_idx, started_at, usage, overrides) VALUES (1, ?, ?, ?, '{}', ?)",
            vec![q.run_id.into(), first_idx.into(), now.into(), q.overrides.into()],
        )?;
        self.current_run()
    }

    fn set_deadline(&self, kind: &str, at_ms: i64) -> Res<()> {
        self.exec(
            "INSERT INTO deadlines (kind, at_ms) VALUES (?, ?) ON CONFLICT(kind) DO UPDATE SET at_ms = excluded.at_ms",
            vec![kind.into(), at_ms.into()],
        )?;
        Ok(())
    }

    /// Makes sure a tick is pending; true when the deadlines changed.
    fn ensure_tick(&self) -> Res<bool> {
        #[derive(Deserialize)]
        struct Row {
            at_ms: i64,
        }
        let rows: Vec<Row> = self
            .exec(
                "SELECT at_ms FROM deadlines WHERE kind = ?",
                vec![TICK.into()],
            )?
            .to_array()
            .map_err(internal_error)?;
        if rows.first().is_some_and(|r| r.at_ms > now_ms()) {
            return Ok(false);
        }
        self.set_deadline(TICK, now_ms() + TICK_MS)?;
        Ok(true)
    }

    /// Removes and returns the deadlines that are due.
    fn take_due_deadlines(&self, now: i64) -> Res<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            kind: String,
        }
        let rows: Vec<Row> = self
            .exec(
                "SELECT kind FROM deadlines WHERE at_ms <= ?",
                vec![now.into()],
            )?
            .to_array()
            .map_err(internal_error)?;
        self.exec("DELETE FROM deadlines WHERE at_ms <= ?", vec![now.into()])?;
        Ok(rows.into_iter().map(|r| r.kind).collect())
    }

    /// Delivers a `chat` event to the Gateway: over the event link (opened
    /// on first use), else as a request.
    async fn emit(&self, evt: ChatEvent) {
        let text = match serde_json::to_string(&evt) {
            Ok(t) => t,
            Err(e) => return console_error!("session: event not serializable: {e}"),
        };
        if self.link.borrow().is_none() {
            match open_link(&self.env).await {
                Ok(ws) => {
                    self.link.replace(Some(ws));
                }
                Err(e) => console_error!("session: opening the event link failed: {e}"),
            }
        }
        let sent = self
            .link
            .borrow()
            .as_ref()
            .is_some_and(|ws| ws.send_with_str(&text).is_ok());
        if sent {
            self.link_used_at.set(now_ms());
            return;
        }
        self.link.replace(None);
        let r: Res<Value> =
            call_object(&self.env, "GATEWAY", "singleton", path::CHAT_EVENT, &evt).await;
        if let Err(e) = r {
            console_error!("session: delivering a chat event failed: {}", e.message);
        }
    }

    /// Closes the event link once no run is left, so the object can rest.
    fn close_link(&self) {
        if let Some(ws) = self.link.take() {
            let _ = ws.close(Some(1000), Some("idle"));
        }
    }

    fn event(&self, run: &CurrentRun, state: ChatState) -> ChatEvent {
        let key = self
            .meta
            .borrow()
            .as_ref()
            .map(|m| m.session_key.clone())
            .unwrap_or_default();
        ChatEvent {
            run_id: Some(run.run_id.clone()),
            session_key: key,
            state,
            delta: None,
            message: None,
            usage: None,
            error: None,
        }
    }
}
