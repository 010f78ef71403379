//! Every SQL statement of the Session object, as typed methods over its
//! tables (`schema.rs`): the history, the meta row (with the config and the
//! node snapshot of the last message), the queue, the current run, its tool
//! calls, the deadlines behind the one alarm, the background-command events
//! already seen and a reset's plan. Nothing else in the object writes SQL.

use super::error::{Res, SessionError};
use super::schema::MIGRATIONS;
use crate::config::Config;
use crate::session::internal::NodeSnapshot;
use crate::session::meta::SessionMeta;
use crate::session::reset::ResetPlan;
use crate::session::run_config::RunConfig;
use crate::session::tools::PendingCall;
use crate::worker::rpc::{new_id, now_ms};
use gsv_protocol::{ErrorShape, Message, UserMessage};
use gsv_worker_sql::migrate;
use serde::{de::DeserializeOwned, Deserialize};
use serde_json::Value;
use std::cell::RefCell;
use worker::{SqlStorage, SqlStorageValue};

/// The run in progress (one row).
#[derive(Debug, Clone, Deserialize)]
pub struct CurrentRun {
    pub run_id: String,
    /// The index of the run's message: the run's part of the history.
    pub first_idx: i64,
    /// `Usage` JSON summed over the run's model calls.
    pub usage: String,
    pub iterations: i64,
    pub resumes: i64,
    /// `RunPrompt` JSON, kept while the run waits on tools.
    pub prompt: Option<String>,
    /// `ChatDirectives` JSON of the run's message.
    pub overrides: Option<String>,
    /// The chat app the run's message came from.
    pub channel: Option<String>,
    /// Its message's depth in a chain of `gsv__SessionSend` (0: a person's).
    pub send_depth: i64,
    /// Whose long-term memory the run reads and writes besides the agent's.
    pub person: Option<String>,
    /// Its message as written (no chat envelope): what recall searches on.
    pub plain: Option<String>,
}

/// A message for the queue, as its run will take it.
pub struct Queued<'a> {
    pub run_id: &'a str,
    pub text: &'a str,
    pub queued_at: i64,
    /// `ChatDirectives` JSON for its run only.
    pub overrides: Option<String>,
    /// Reset the session before taking it (its reset policy was due).
    pub reset_first: bool,
    /// The chat app it came from.
    pub channel: Option<&'a str>,
    /// Its depth in a chain of `gsv__SessionSend` (0: a person's).
    pub send_depth: u32,
    /// Whose long-term memory its run reads and writes (none in a group).
    pub person: Option<&'a str>,
    /// The text as written, before any envelope.
    pub plain: &'a str,
    /// Its attachments (`crate::media::Attached` JSON), when it has any.
    pub media: Option<String>,
}

/// A stored message: its index (gaps where messages were compacted) and JSON.
#[derive(Deserialize)]
pub struct MessageRow {
    pub idx: i64,
    pub data: String,
}

/// One tool call of the current turn.
#[derive(Debug, Deserialize)]
pub struct CallRow {
    pub call_id: String,
    pub name: String,
    pub args: String,
    dispatched: i64,
    result: Option<String>,
}

impl CallRow {
    pub fn answered(&self) -> bool {
        self.result.is_some()
    }

    pub fn pending(&self) -> Res<PendingCall> {
        let result = match &self.result {
            Some(r) => Some(serde_json::from_str::<Message>(r).map_err(SessionError::storage)?),
            None => None,
        };
        Ok(PendingCall {
            call_id: self.call_id.clone(),
            name: self.name.clone(),
            dispatched: self.dispatched != 0,
            result,
        })
    }
}

#[derive(Deserialize)]
struct Count {
    n: i64,
}

pub struct SessionStore {
    sql: SqlStorage,
    /// The meta row, read once per instance and kept current by every write.
    meta: RefCell<Option<SessionMeta>>,
}

impl SessionStore {
    /// Opens the object's database, applying the migrations not yet applied.
    pub fn open(sql: SqlStorage) -> Self {
        if let Err(e) = migrate(&sql, MIGRATIONS, now_ms()) {
            worker::console_error!("session: migration failed: {e}");
        }
        Self {
            sql,
            meta: RefCell::new(None),
        }
    }

    fn exec(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Res<worker::SqlCursor> {
        self.sql
            .exec(query, bindings)
            .map_err(SessionError::storage)
    }

    fn rows<T: DeserializeOwned>(
        &self,
        query: &str,
        bindings: Vec<SqlStorageValue>,
    ) -> Res<Vec<T>> {
        self.exec(query, bindings)?
            .to_array()
            .map_err(SessionError::storage)
    }

    fn count(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Res<i64> {
        self.exec(query, bindings)?
            .one::<Count>()
            .map(|r| r.n)
            .map_err(SessionError::storage)
    }

    // --- the history ---------------------------------------------------

    pub fn message_count(&self) -> Res<u64> {
        self.count("SELECT COUNT(*) AS n FROM messages", vec![])
            .map(|n| n as u64)
    }

    /// Every stored message in order: its index and its JSON.
    pub fn message_rows(&self) -> Res<Vec<MessageRow>> {
        self.rows("SELECT idx, data FROM messages ORDER BY idx", vec![])
    }

    /// Every stored message's JSON in order, one row at a time (archives
    /// stream it without holding the history).
    pub fn message_data(&self) -> Res<impl Iterator<Item = Res<String>>> {
        #[derive(Deserialize)]
        struct Row {
            data: String,
        }
        let cursor = self.exec("SELECT data FROM messages ORDER BY idx", vec![])?;
        Ok(cursor
            .next::<Row>()
            .map(|r| r.map(|r| r.data).map_err(SessionError::storage)))
    }

    /// Every stored message, parsed.
    pub fn messages(&self) -> Res<Vec<Message>> {
        parse_all(self.rows("SELECT data FROM messages ORDER BY idx", vec![])?)
    }

    /// The last `limit` messages, oldest first.
    pub fn last_messages(&self, limit: u32) -> Res<Vec<Message>> {
        let mut m = parse_all(self.rows(
            "SELECT data FROM messages ORDER BY idx DESC LIMIT ?",
            vec![i64::from(limit).into()],
        )?)?;
        m.reverse();
        Ok(m)
    }

    /// A page of the history, oldest first.
    pub fn message_page(&self, limit: u32, offset: u64) -> Res<Vec<Message>> {
        parse_all(self.rows(
            "SELECT data FROM messages ORDER BY idx LIMIT ? OFFSET ?",
            vec![i64::from(limit).into(), (offset as i64).into()],
        )?)
    }

    /// The whole history, and the part of it from message index `first_idx`
    /// on (an index, not a position: older messages may be compacted away).
    pub fn history_from(&self, first_idx: i64) -> Res<(Vec<Message>, Vec<Message>)> {
        let rows = self.message_rows()?;
        let mut all = Vec::with_capacity(rows.len());
        let mut from = Vec::new();
        for row in rows {
            let message: Message =
                serde_json::from_str(&row.data).map_err(SessionError::storage)?;
            if row.idx >= first_idx {
                from.push(message.clone());
            }
            all.push(message);
        }
        Ok((all, from))
    }

    pub fn append(&self, msg: &Message) -> Res<()> {
        let data = serde_json::to_string(msg).map_err(SessionError::storage)?;
        self.exec(
            "INSERT INTO messages (idx, role, data, timestamp) VALUES ((SELECT COALESCE(MAX(idx), -1) + 1 FROM messages), ?, ?, ?)",
            vec![msg.role().into(), data.into(), msg.timestamp().into()],
        )?;
        Ok(())
    }

    /// Removes the messages before index `idx` (they are archived).
    pub fn delete_messages_before(&self, idx: i64) -> Res<()> {
        self.exec("DELETE FROM messages WHERE idx < ?", vec![idx.into()])?;
        Ok(())
    }

    /// Replaces the messages before `first_kept` by `summary`, at the index
    /// just before it, in one synchronous step.
    pub fn replace_with_summary(&self, first_kept: i64, summary: &Message, at_ms: i64) -> Res<()> {
        let data = serde_json::to_string(summary).map_err(SessionError::storage)?;
        self.delete_messages_before(first_kept)?;
        self.exec(
            "INSERT INTO messages (idx, role, data, timestamp) VALUES (?, 'user', ?, ?)",
            vec![(first_kept - 1).into(), data.into(), at_ms.into()],
        )?;
        Ok(())
    }

    /// Writes a voice note's transcript (or why there is none) into the
    /// stored message that holds it (found by its R2 key, a fresh UUID).
    pub fn save_transcript(&self, key: &str, outcome: &Result<String, String>) -> Res<()> {
        let rows: Vec<MessageRow> = self.rows(
            "SELECT idx, data FROM messages WHERE instr(data, ?) > 0",
            vec![key.into()],
        )?;
        for row in rows {
            let mut message: Message =
                serde_json::from_str(&row.data).map_err(SessionError::storage)?;
            if crate::media::hydrate::set_transcript(&mut message, key, outcome) {
                let data = serde_json::to_string(&message).map_err(SessionError::storage)?;
                self.exec(
                    "UPDATE messages SET data = ? WHERE idx = ?",
                    vec![data.into(), row.idx.into()],
                )?;
            }
        }
        Ok(())
    }

    pub fn clear_messages(&self) -> Res<()> {
        self.exec("DELETE FROM messages", vec![])?;
        Ok(())
    }

    // --- the meta row ----------------------------------------------------

    /// The session's meta, created (and stored at once) on first use.
    pub fn meta(&self, session_key: &str) -> Res<SessionMeta> {
        if let Some(m) = self.meta.borrow().as_ref() {
            return Ok(m.clone());
        }
        #[derive(Deserialize)]
        struct Row {
            data: String,
        }
        let rows: Vec<Row> = self.rows("SELECT data FROM meta WHERE id = 1", vec![])?;
        let meta = match rows.first() {
            Some(row) => serde_json::from_str(&row.data).map_err(SessionError::storage)?,
            None => {
                let meta = SessionMeta::new(new_id(), session_key.to_string(), now_ms());
                self.save_meta(&meta)?;
                meta
            }
        };
        self.meta.replace(Some(meta.clone()));
        Ok(meta)
    }

    /// The session key of the meta this instance has read, if any.
    pub fn known_key(&self) -> Option<String> {
        self.meta.borrow().as_ref().map(|m| m.session_key.clone())
    }

    pub fn save_meta(&self, meta: &SessionMeta) -> Res<()> {
        let data = serde_json::to_string(meta).map_err(SessionError::storage)?;
        self.exec(
            "INSERT INTO meta (id, data, config) VALUES (1, ?, '{}') ON CONFLICT(id) DO UPDATE SET data = excluded.data",
            vec![data.into()],
        )?;
        self.meta.replace(Some(meta.clone()));
        Ok(())
    }

    /// Stores the meta with the config (overrides JSON) that came with a message.
    pub fn save_meta_and_config(&self, meta: &SessionMeta, config: &Value) -> Res<()> {
        let data = serde_json::to_string(meta).map_err(SessionError::storage)?;
        let cfg = serde_json::to_string(config).map_err(SessionError::storage)?;
        self.exec(
            "INSERT INTO meta (id, data, config) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET data = excluded.data, config = excluded.config",
            vec![data.into(), cfg.into()],
        )?;
        self.meta.replace(Some(meta.clone()));
        Ok(())
    }

    /// The config stored with the last message.
    pub fn config(&self) -> Res<Config> {
        #[derive(Deserialize)]
        struct Row {
            config: String,
        }
        let rows: Vec<Row> = self.rows("SELECT config FROM meta WHERE id = 1", vec![])?;
        let overrides = rows
            .first()
            .map(|r| serde_json::from_str(&r.config))
            .transpose()
            .map_err(SessionError::storage)?;
        Ok(Config::from_overrides(overrides.unwrap_or(Value::Null)))
    }

    /// The run settings from the stored config and session settings.
    pub fn run_config(&self) -> Res<RunConfig> {
        let meta = self.meta("")?;
        Ok(RunConfig::resolve(&self.config()?, &meta.settings))
    }

    pub fn save_nodes(&self, nodes: &NodeSnapshot) -> Res<()> {
        let data = serde_json::to_string(nodes).map_err(SessionError::storage)?;
        self.exec("UPDATE meta SET nodes = ? WHERE id = 1", vec![data.into()])?;
        Ok(())
    }

    pub fn nodes(&self) -> Res<NodeSnapshot> {
        #[derive(Deserialize)]
        struct Row {
            nodes: String,
        }
        let rows: Vec<Row> = self.rows("SELECT nodes FROM meta WHERE id = 1", vec![])?;
        Ok(rows
            .first()
            .and_then(|r| serde_json::from_str(&r.nodes).ok())
            .unwrap_or_default())
    }

    // --- the queue and the current run -------------------------------------

    pub fn enqueue(&self, q: Queued<'_>) -> Res<()> {
        self.exec(
            "INSERT INTO run_queue (run_id, message, queued_at, overrides, reset_first, channel, send_depth, person, plain, media) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                q.run_id.into(),
                q.text.into(),
                q.queued_at.into(),
                q.overrides.into(),
                i64::from(q.reset_first).into(),
                q.channel.map(str::to_string).into(),
                i64::from(q.send_depth).into(),
                q.person.map(str::to_string).into(),
                q.plain.into(),
                q.media.into(),
            ],
        )?;
        Ok(())
    }

    pub fn queue_len(&self) -> Res<i64> {
        self.count("SELECT COUNT(*) AS n FROM run_queue", vec![])
    }

    /// Whether the next queued message asks for an automatic reset first.
    pub fn head_resets_first(&self) -> Res<bool> {
        let n = self.count(
            "SELECT COUNT(*) AS n FROM run_queue WHERE seq = (SELECT MIN(seq) FROM run_queue) AND reset_first = 1",
            vec![],
        )?;
        Ok(n > 0)
    }

    /// Saves a reset's plan and clears the queue's reset marks in one
    /// synchronous step: after a crash there is either a plan to resume or
    /// a marked message to start it again.
    pub fn begin_auto_reset(&self, plan: &ResetPlan) -> Res<()> {
        self.save_plan(Some(plan))?;
        self.exec("UPDATE run_queue SET reset_first = 0", vec![])?;
        Ok(())
    }

    pub fn current_run(&self) -> Res<Option<CurrentRun>> {
        let rows: Vec<CurrentRun> = self.rows(
            "SELECT run_id, first_idx, usage, iterations, resumes, prompt, overrides, channel, send_depth, person, plain FROM current_run WHERE id = 1",
            vec![],
        )?;
        Ok(rows.into_iter().next())
    }

    /// Whether `run_id` is still the current run (not cancelled meanwhile).
    pub fn is_current(&self, run_id: &str) -> bool {
        self.current_run()
            .ok()
            .flatten()
            .is_some_and(|r| r.run_id == run_id)
    }

    /// Moves the oldest queued message into the history and makes it the
    /// current run, in one synchronous step (atomic in the object).
    pub fn start_next_run(&self) -> Res<Option<CurrentRun>> {
        #[derive(Deserialize)]
        struct Queued {
            seq: i64,
            run_id: String,
            message: String,
            queued_at: i64,
            overrides: Option<String>,
            channel: Option<String>,
            send_depth: i64,
            person: Option<String>,
            plain: Option<String>,
            media: Option<String>,
        }
        let rows: Vec<Queued> = self.rows(
            "SELECT seq, run_id, message, queued_at, overrides, channel, send_depth, person, plain, media FROM run_queue ORDER BY seq LIMIT 1",
            vec![],
        )?;
        let Some(q) = rows.into_iter().next() else {
            return Ok(None);
        };
        let first_idx = self.count(
            "SELECT COALESCE(MAX(idx), -1) + 1 AS n FROM messages",
            vec![],
        )?;
        let now = now_ms();
        // A message with files is stored with them as blocks, by R2 key.
        let media: Vec<crate::media::Attached> = match q.media.as_deref() {
            Some(json) => serde_json::from_str(json).map_err(SessionError::storage)?,
            None => Vec::new(),
        };
        self.append(&Message::User(UserMessage {
            content: crate::media::message::user_content(&q.message, &media),
            timestamp: q.queued_at,
        }))?;
        self.exec("DELETE FROM run_queue WHERE seq = ?", vec![q.seq.into()])?;
        self.exec(
            "INSERT INTO current_run (id, run_id, first_idx, started_at, usage, overrides, channel, send_depth, person, plain) VALUES (1, ?, ?, ?, '{}', ?, ?, ?, ?, ?)",
            vec![
                q.run_id.into(),
                first_idx.into(),
                now.into(),
                q.overrides.into(),
                q.channel.into(),
                q.send_depth.into(),
                q.person.into(),
                q.plain.into(),
            ],
        )?;
        self.current_run()
    }

    pub fn end_run(&self) -> Res<()> {
        self.exec("DELETE FROM current_run WHERE id = 1", vec![])?;
        Ok(())
    }

    pub fn set_run_iterations(&self, iterations: i64) -> Res<()> {
        self.exec(
            "UPDATE current_run SET iterations = ? WHERE id = 1",
            vec![iterations.into()],
        )?;
        Ok(())
    }

    pub fn set_run_usage(&self, usage_json: String) -> Res<()> {
        self.exec(
            "UPDATE current_run SET usage = ? WHERE id = 1",
            vec![usage_json.into()],
        )?;
        Ok(())
    }

    /// Keeps the run's assembled prompt while it waits on tools.
    pub fn keep_run_prompt(&self, prompt_json: String) -> Res<()> {
        self.exec(
            "UPDATE current_run SET prompt = ? WHERE id = 1",
            vec![prompt_json.into()],
        )?;
        Ok(())
    }

    /// Counts one more resume of an interrupted run.
    pub fn count_resume(&self) -> Res<()> {
        self.exec(
            "UPDATE current_run SET resumes = resumes + 1 WHERE id = 1",
            vec![],
        )?;
        Ok(())
    }

    // --- the current turn's tool calls -------------------------------------

    /// Stores the calls of an assistant turn, in call order.
    pub fn store_calls<'a>(
        &self,
        calls: impl Iterator<Item = (&'a str, &'a str, &'a Value)>,
    ) -> Res<()> {
        for (seq, (id, name, args)) in calls.enumerate() {
            self.exec(
                "INSERT INTO tool_calls (seq, call_id, name, args) VALUES (?, ?, ?, ?)",
                vec![
                    (seq as i64).into(),
                    id.into(),
                    name.into(),
                    args.to_string().into(),
                ],
            )?;
        }
        Ok(())
    }

    pub fn call_rows(&self) -> Res<Vec<CallRow>> {
        self.rows(
            "SELECT call_id, name, args, dispatched, result FROM tool_calls ORDER BY seq",
            vec![],
        )
    }

    pub fn mark_dispatched(&self, call_id: &str) -> Res<()> {
        self.exec(
            "UPDATE tool_calls SET dispatched = 1 WHERE call_id = ?",
            vec![call_id.into()],
        )?;
        Ok(())
    }

    /// Stores a call's result unless it already has one (the first of a
    /// result, a timeout and a cancellation wins).
    pub fn save_call_result(&self, call_id: &str, result: &Message) -> Res<()> {
        let data = serde_json::to_string(result).map_err(SessionError::storage)?;
        self.exec(
            "UPDATE tool_calls SET result = ?, dispatched = 1 WHERE call_id = ? AND result IS NULL",
            vec![data.into(), call_id.into()],
        )?;
        Ok(())
    }

    /// The tool name of call `call_id` if it still waits for its result.
    pub fn open_call(&self, call_id: &str) -> Res<Option<String>> {
        #[derive(Deserialize)]
        struct Open {
            name: String,
        }
        let open: Vec<Open> = self.rows(
            "SELECT name FROM tool_calls WHERE call_id = ? AND result IS NULL",
            vec![call_id.into()],
        )?;
        Ok(open.into_iter().next().map(|o| o.name))
    }

    /// The turn is over: its calls and the deadline of `deadline_kind` go.
    pub fn clear_calls(&self, deadline_kind: &str) -> Res<()> {
        self.exec("DELETE FROM tool_calls", vec![])?;
        self.delete_deadline(deadline_kind)
    }

    // --- deadlines (the object's one alarm) --------------------------------

    pub fn set_deadline(&self, kind: &str, at_ms: i64) -> Res<()> {
        self.exec(
            "INSERT INTO deadlines (kind, at_ms) VALUES (?, ?) ON CONFLICT(kind) DO UPDATE SET at_ms = excluded.at_ms",
            vec![kind.into(), at_ms.into()],
        )?;
        Ok(())
    }

    /// Sets a deadline unless one of `kind` is already set.
    pub fn set_deadline_once(&self, kind: &str, at_ms: i64) -> Res<()> {
        self.exec(
            "INSERT INTO deadlines (kind, at_ms) VALUES (?, ?) ON CONFLICT(kind) DO NOTHING",
            vec![kind.into(), at_ms.into()],
        )?;
        Ok(())
    }

    pub fn deadline(&self, kind: &str) -> Res<Option<i64>> {
        #[derive(Deserialize)]
        struct Row {
            at_ms: i64,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT at_ms FROM deadlines WHERE kind = ?",
            vec![kind.into()],
        )?;
        Ok(rows.first().map(|r| r.at_ms))
    }

    pub fn delete_deadline(&self, kind: &str) -> Res<()> {
        self.exec("DELETE FROM deadlines WHERE kind = ?", vec![kind.into()])?;
        Ok(())
    }

    /// The earliest deadline, if any.
    pub fn next_deadline(&self) -> Option<i64> {
        #[derive(Deserialize)]
        struct Next {
            at: Option<f64>,
        }
        self.sql
            .exec("SELECT MIN(at_ms) AS at FROM deadlines", None)
            .and_then(|c| c.one::<Next>())
            .ok()
            .and_then(|n| n.at)
            .map(|at| at as i64)
    }

    /// Removes and returns the deadlines that are due.
    pub fn take_due_deadlines(&self, now: i64) -> Res<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            kind: String,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT kind FROM deadlines WHERE at_ms <= ?",
            vec![now.into()],
        )?;
        self.exec("DELETE FROM deadlines WHERE at_ms <= ?", vec![now.into()])?;
        Ok(rows.into_iter().map(|r| r.kind).collect())
    }

    // --- background-command events ------------------------------------------

    /// Records `event_id` unless it was seen in the last `ttl_ms`; false
    /// for a repeat.
    pub fn first_sight_of_exec_event(&self, event_id: &str, now: i64, ttl_ms: i64) -> Res<bool> {
        let seen = self.count(
            "SELECT COUNT(*) AS n FROM seen_exec_events WHERE event_id = ?",
            vec![event_id.into()],
        )?;
        if seen > 0 {
            return Ok(false);
        }
        self.exec(
            "DELETE FROM seen_exec_events WHERE seen_at < ?",
            vec![(now - ttl_ms).into()],
        )?;
        self.exec(
            "INSERT INTO seen_exec_events (event_id, seen_at) VALUES (?, ?)",
            vec![event_id.into(), now.into()],
        )?;
        Ok(true)
    }

    // --- a reset in progress ---------------------------------------------

    pub fn load_plan(&self) -> Res<Option<ResetPlan>> {
        #[derive(Deserialize)]
        struct Row {
            plan: String,
        }
        let rows: Vec<Row> = self.rows("SELECT plan FROM reset_plan WHERE id = 1", vec![])?;
        rows.first()
            .map(|r| serde_json::from_str(&r.plan).map_err(SessionError::storage))
            .transpose()
    }

    /// Whether a reset was interrupted and still has steps to run.
    pub fn reset_pending(&self) -> bool {
        matches!(self.load_plan(), Ok(Some(_)))
    }

    pub fn save_plan(&self, plan: Option<&ResetPlan>) -> Res<()> {
        match plan {
            Some(plan) => {
                let json = serde_json::to_string(plan).map_err(SessionError::storage)?;
                self.exec(
                    "INSERT INTO reset_plan (id, plan) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET plan = excluded.plan",
                    vec![json.into()],
                )?;
            }
            None => {
                self.exec("DELETE FROM reset_plan WHERE id = 1", vec![])?;
            }
        }
        Ok(())
    }
}

#[derive(Deserialize)]
struct DataRow {
    data: String,
}

fn parse_all(rows: Vec<DataRow>) -> Res<Vec<Message>> {
    rows.iter()
        .map(|r| serde_json::from_str(&r.data).map_err(SessionError::storage))
        .collect()
}

impl crate::media::hydrate::TranscriptStore for SessionStore {
    fn save_transcript(&self, key: &str, outcome: &Result<String, String>) -> Result<(), String> {
        SessionStore::save_transcript(self, key, outcome).map_err(|e| e.to_string())
    }
}

/// The Session as `session_logs` sees it: its meta, its size and a page
/// of its history.
impl crate::selfreport::logs::ThisSession for SessionStore {
    fn meta(&self) -> Result<SessionMeta, ErrorShape> {
        Ok(SessionStore::meta(self, "")?)
    }

    fn message_count(&self) -> Result<u64, ErrorShape> {
        Ok(SessionStore::message_count(self)?)
    }

    fn messages(&self, start: usize, take: usize) -> Result<Vec<Message>, ErrorShape> {
        Ok(SessionStore::message_page(self, take as u32, start as u64)?)
    }
}
