//! Every SQL statement of the Session object, as typed methods over its
//! tables (`schema.rs`): the history, the meta row (with the config and the
//! node snapshot of the last message), the queue, the current run, its tool
//! calls, the deadlines behind the one alarm, the background-command events
//! already seen and a reset's plan. Nothing else in the object writes SQL.

use super::error::{Res, SessionError};
use super::schema::MIGRATIONS;
use crate::config::Config;
use crate::session::compaction::estimate_text_tokens;
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
use std::rc::Rc;
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

/// What this instance keeps of its tables while it lives, each read once
/// and kept current by every write here (SQLite stays the truth: a new
/// instance reads them again; a failed write forgets them).
#[derive(Default)]
struct Kept {
    /// The meta row.
    meta: Option<SessionMeta>,
    /// The config stored with the last message, parsed, with its revision.
    config: Option<(String, Rc<Config>)>,
    nodes: Option<(String, Rc<NodeSnapshot>)>,
    /// The current run's row (`Some(None)`: known to be none).
    run: Option<Option<CurrentRun>>,
    /// The history, parsed, while it is small enough to keep.
    history: Option<History>,
    /// How many messages wait in the queue, and how many of them are
    /// marked to reset the session first.
    queued: Option<i64>,
    reset_marks: Option<i64>,
    /// The deadlines table (a few rows: the tick, the tool calls').
    deadlines: Option<Vec<(String, i64)>>,
    /// A reset in progress.
    plan: Option<Option<ResetPlan>>,
    /// Whether the current turn has tool calls stored.
    calls: Option<bool>,
    /// The meta's activity stamp is newer than the stored row: written
    /// with the meta's next write, at the latest when the run ends.
    meta_dirty: bool,
}

/// The stored messages by index, each with its token estimate (of its
/// JSON, as compaction measures), and their JSON's size.
struct History {
    messages: Vec<(i64, Message)>,
    tokens: Vec<u64>,
    bytes: usize,
}

/// A history past this much JSON is read from SQLite for each model call
/// rather than kept (the isolate's memory is shared by its objects).
const KEEP_HISTORY_BYTES: usize = 4 << 20;

pub struct SessionStore {
    sql: SqlStorage,
    kept: RefCell<Kept>,
}

impl SessionStore {
    /// Opens the object's database, applying the migrations not yet applied.
    pub fn open(sql: SqlStorage) -> Self {
        if let Err(e) = migrate(&sql, MIGRATIONS, now_ms()) {
            worker::console_error!("session: migration failed: {e}");
        }
        Self {
            sql,
            kept: RefCell::new(Kept::default()),
        }
    }

    /// After a failed write: nothing kept may be trusted.
    fn forget(&self) {
        *self.kept.borrow_mut() = Kept::default();
    }

    fn exec(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Res<worker::SqlCursor> {
        self.sql.exec(query, bindings).map_err(|e| {
            self.forget();
            SessionError::storage(e)
        })
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
        if let Some(h) = &self.kept.borrow().history {
            return Ok(h.messages.len() as u64);
        }
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
    /// Read from SQLite once per instance and kept while it is small
    /// enough; each model call then costs no read.
    pub fn history_from(&self, first_idx: i64) -> Res<HistoryRead> {
        if self.kept.borrow().history.is_none() {
            let rows = self.message_rows()?;
            let bytes = rows.iter().map(|r| r.data.len()).sum();
            let mut messages = Vec::with_capacity(rows.len());
            let mut tokens = Vec::with_capacity(rows.len());
            for row in rows {
                let message: Message =
                    serde_json::from_str(&row.data).map_err(SessionError::storage)?;
                tokens.push(estimate_text_tokens(&row.data));
                messages.push((row.idx, message));
            }
            let history = History {
                messages,
                tokens,
                bytes,
            };
            if history.bytes > KEEP_HISTORY_BYTES {
                return Ok(split_at(&history, first_idx));
            }
            self.kept.borrow_mut().history = Some(history);
        }
        let kept = self.kept.borrow();
        match kept.history.as_ref() {
            Some(history) => Ok(split_at(history, first_idx)),
            None => Ok(HistoryRead::default()),
        }
    }

    pub fn append(&self, msg: &Message) -> Res<()> {
        let data = serde_json::to_string(msg).map_err(SessionError::storage)?;
        let len = data.len();
        let tokens = estimate_text_tokens(&data);
        // The next index is known when the history is kept.
        let next = self
            .kept
            .borrow()
            .history
            .as_ref()
            .map(|h| h.messages.last().map_or(0, |(idx, _)| idx + 1));
        match next {
            Some(idx) => self.exec(
                "INSERT INTO messages (idx, role, data, timestamp) VALUES (?, ?, ?, ?)",
                vec![idx.into(), msg.role().into(), data.into(), msg.timestamp().into()],
            )?,
            None => self.exec(
                "INSERT INTO messages (idx, role, data, timestamp) VALUES ((SELECT COALESCE(MAX(idx), -1) + 1 FROM messages), ?, ?, ?)",
                vec![msg.role().into(), data.into(), msg.timestamp().into()],
            )?,
        };
        let mut kept = self.kept.borrow_mut();
        if let (Some(idx), Some(h)) = (next, kept.history.as_mut()) {
            h.messages.push((idx, msg.clone()));
            h.tokens.push(tokens);
            h.bytes += len;
            if h.bytes > KEEP_HISTORY_BYTES {
                kept.history = None;
            }
        }
        Ok(())
    }

    /// The index the next appended message gets.
    fn next_idx(&self) -> Res<i64> {
        if let Some(h) = &self.kept.borrow().history {
            return Ok(h.messages.last().map_or(0, |(idx, _)| idx + 1));
        }
        self.count(
            "SELECT COALESCE(MAX(idx), -1) + 1 AS n FROM messages",
            vec![],
        )
    }

    /// The history was rewritten (compaction, a transcript, a reset): it is
    /// read again when next needed.
    fn history_changed(&self) {
        self.kept.borrow_mut().history = None;
    }

    /// Removes the messages before index `idx` (they are archived).
    pub fn delete_messages_before(&self, idx: i64) -> Res<()> {
        self.exec("DELETE FROM messages WHERE idx < ?", vec![idx.into()])?;
        self.history_changed();
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
        self.history_changed();
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
                self.history_changed();
            }
        }
        Ok(())
    }

    pub fn clear_messages(&self) -> Res<()> {
        self.exec("DELETE FROM messages", vec![])?;
        self.history_changed();
        Ok(())
    }

    // --- the meta row ----------------------------------------------------

    /// The session's meta, created (and stored at once) on first use.
    pub fn meta(&self, session_key: &str) -> Res<SessionMeta> {
        if let Some(m) = self.kept.borrow().meta.as_ref() {
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
        self.kept.borrow_mut().meta = Some(meta.clone());
        Ok(meta)
    }

    /// Stamps activity on the kept meta; stored with the meta's next write
    /// (the run's answer, at the latest its end), which saves a write per
    /// message.
    pub fn touch(&self, at_ms: i64) -> Res<()> {
        let mut meta = self.meta("")?;
        meta.updated_at = at_ms;
        let mut kept = self.kept.borrow_mut();
        kept.meta = Some(meta);
        kept.meta_dirty = true;
        Ok(())
    }

    /// Writes a pending activity stamp.
    fn flush_meta(&self) -> Res<()> {
        if !self.kept.borrow().meta_dirty {
            return Ok(());
        }
        let meta = self.meta("")?;
        self.save_meta(&meta)
    }

    /// The session key of the meta this instance has read, if any.
    pub fn known_key(&self) -> Option<String> {
        self.kept
            .borrow()
            .meta
            .as_ref()
            .map(|m| m.session_key.clone())
    }

    pub fn save_meta(&self, meta: &SessionMeta) -> Res<()> {
        let data = serde_json::to_string(meta).map_err(SessionError::storage)?;
        self.exec(
            "INSERT INTO meta (id, data, config) VALUES (1, ?, '{}') ON CONFLICT(id) DO UPDATE SET data = excluded.data",
            vec![data.into()],
        )?;
        let mut kept = self.kept.borrow_mut();
        kept.meta = Some(meta.clone());
        kept.meta_dirty = false;
        Ok(())
    }

    /// Stores the config (the effective JSON) that came with a message,
    /// with its revision, and keeps it parsed.
    pub fn save_config(&self, rev: &str, config: &Value) -> Res<()> {
        let json = serde_json::to_string(config).map_err(SessionError::storage)?;
        self.exec(
            "UPDATE meta SET config = ?, config_rev = ? WHERE id = 1",
            vec![json.into(), rev.into()],
        )?;
        let parsed = Rc::new(Config::from_overrides(config.clone()));
        self.kept.borrow_mut().config = Some((rev.to_string(), parsed));
        Ok(())
    }

    /// Whether the stored config is at revision `rev` (read from SQLite
    /// once per instance).
    pub fn has_config(&self, rev: &str) -> Res<bool> {
        Ok(!rev.is_empty() && self.config_entry()?.0 == rev)
    }

    /// The config stored with the last message.
    pub fn config(&self) -> Res<Rc<Config>> {
        Ok(self.config_entry()?.1)
    }

    pub fn config_entry(&self) -> Res<(String, Rc<Config>)> {
        if let Some(kept) = &self.kept.borrow().config {
            return Ok(kept.clone());
        }
        #[derive(Deserialize)]
        struct Row {
            config: String,
            config_rev: String,
        }
        let rows: Vec<Row> =
            self.rows("SELECT config, config_rev FROM meta WHERE id = 1", vec![])?;
        let overrides = rows
            .first()
            .map(|r| serde_json::from_str(&r.config))
            .transpose()
            .map_err(SessionError::storage)?;
        let rev = rows
            .first()
            .map(|r| r.config_rev.clone())
            .unwrap_or_default();
        let entry = (
            rev,
            Rc::new(Config::from_overrides(overrides.unwrap_or(Value::Null))),
        );
        self.kept.borrow_mut().config = Some(entry.clone());
        Ok(entry)
    }

    /// The run settings from the stored config and session settings.
    pub fn run_config(&self) -> Res<RunConfig> {
        let meta = self.meta("")?;
        Ok(RunConfig::resolve(&*self.config()?, &meta.settings))
    }

    pub fn save_nodes(&self, rev: &str, nodes: &NodeSnapshot) -> Res<()> {
        let data = serde_json::to_string(nodes).map_err(SessionError::storage)?;
        self.exec(
            "UPDATE meta SET nodes = ?, nodes_rev = ? WHERE id = 1",
            vec![data.into(), rev.into()],
        )?;
        self.kept.borrow_mut().nodes = Some((rev.to_string(), Rc::new(nodes.clone())));
        Ok(())
    }

    pub fn has_nodes(&self, rev: &str) -> Res<bool> {
        Ok(!rev.is_empty() && self.nodes_entry()?.0 == rev)
    }

    pub fn nodes_entry(&self) -> Res<(String, Rc<NodeSnapshot>)> {
        if let Some(kept) = &self.kept.borrow().nodes {
            return Ok(kept.clone());
        }
        #[derive(Deserialize)]
        struct Row {
            nodes: String,
            nodes_rev: String,
        }
        let rows: Vec<Row> = self.rows("SELECT nodes, nodes_rev FROM meta WHERE id = 1", vec![])?;
        let entry = match rows.first() {
            Some(r) => (
                r.nodes_rev.clone(),
                Rc::new(serde_json::from_str(&r.nodes).unwrap_or_default()),
            ),
            None => (String::new(), Rc::new(NodeSnapshot::default())),
        };
        self.kept.borrow_mut().nodes = Some(entry.clone());
        Ok(entry)
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
        let mut kept = self.kept.borrow_mut();
        if let Some(n) = kept.queued.as_mut() {
            *n += 1;
        }
        if let Some(n) = kept.reset_marks.as_mut() {
            *n += i64::from(q.reset_first);
        }
        Ok(())
    }

    pub fn queue_len(&self) -> Res<i64> {
        if let Some(n) = self.kept.borrow().queued {
            return Ok(n);
        }
        let n = self.count("SELECT COUNT(*) AS n FROM run_queue", vec![])?;
        self.kept.borrow_mut().queued = Some(n);
        Ok(n)
    }

    /// Whether the next queued message asks for an automatic reset first.
    pub fn head_resets_first(&self) -> Res<bool> {
        if self.queue_len()? == 0 {
            return Ok(false);
        }
        let known = self.kept.borrow().reset_marks;
        let marks = match known {
            Some(n) => n,
            None => {
                let n = self.count(
                    "SELECT COUNT(*) AS n FROM run_queue WHERE reset_first = 1",
                    vec![],
                )?;
                self.kept.borrow_mut().reset_marks = Some(n);
                n
            }
        };
        if marks == 0 {
            return Ok(false);
        }
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
        self.kept.borrow_mut().reset_marks = Some(0);
        Ok(())
    }

    pub fn current_run(&self) -> Res<Option<CurrentRun>> {
        if let Some(run) = &self.kept.borrow().run {
            return Ok(run.clone());
        }
        let rows: Vec<CurrentRun> = self.rows(
            "SELECT run_id, first_idx, usage, iterations, resumes, prompt, overrides, channel, send_depth, person, plain FROM current_run WHERE id = 1",
            vec![],
        )?;
        let run = rows.into_iter().next();
        self.kept.borrow_mut().run = Some(run.clone());
        Ok(run)
    }

    /// Whether `run_id` is still the current run (not cancelled meanwhile).
    pub fn is_current(&self, run_id: &str) -> bool {
        if let Some(run) = &self.kept.borrow().run {
            return run.as_ref().is_some_and(|r| r.run_id == run_id);
        }
        self.current_run()
            .ok()
            .flatten()
            .is_some_and(|r| r.run_id == run_id)
    }

    /// Changes the kept current run the way a statement just changed its row.
    fn kept_run(&self, change: impl FnOnce(&mut CurrentRun)) {
        if let Some(Some(run)) = self.kept.borrow_mut().run.as_mut() {
            change(run);
        }
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
            reset_first: i64,
        }
        let rows: Vec<Queued> = self.rows(
            "SELECT seq, run_id, message, queued_at, overrides, channel, send_depth, person, plain, media, reset_first FROM run_queue ORDER BY seq LIMIT 1",
            vec![],
        )?;
        let Some(q) = rows.into_iter().next() else {
            self.kept.borrow_mut().queued = Some(0);
            return Ok(None);
        };
        let first_idx = self.next_idx()?;
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
        let mut kept = self.kept.borrow_mut();
        if let Some(n) = kept.queued.as_mut() {
            *n -= 1;
        }
        if let Some(n) = kept.reset_marks.as_mut() {
            *n -= q.reset_first.min(1);
        }
        drop(kept);
        self.exec(
            "INSERT INTO current_run (id, run_id, first_idx, started_at, usage, overrides, channel, send_depth, person, plain) VALUES (1, ?, ?, ?, '{}', ?, ?, ?, ?, ?)",
            vec![
                q.run_id.clone().into(),
                first_idx.into(),
                now.into(),
                q.overrides.clone().into(),
                q.channel.clone().into(),
                q.send_depth.into(),
                q.person.clone().into(),
                q.plain.clone().into(),
            ],
        )?;
        let run = CurrentRun {
            run_id: q.run_id,
            first_idx,
            usage: "{}".into(),
            iterations: 0,
            resumes: 0,
            prompt: None,
            overrides: q.overrides,
            channel: q.channel,
            send_depth: q.send_depth,
            person: q.person,
            plain: q.plain,
        };
        self.kept.borrow_mut().run = Some(Some(run.clone()));
        Ok(Some(run))
    }

    pub fn end_run(&self) -> Res<()> {
        self.flush_meta()?;
        self.exec("DELETE FROM current_run WHERE id = 1", vec![])?;
        self.kept.borrow_mut().run = Some(None);
        Ok(())
    }

    pub fn set_run_iterations(&self, iterations: i64) -> Res<()> {
        self.exec(
            "UPDATE current_run SET iterations = ? WHERE id = 1",
            vec![iterations.into()],
        )?;
        self.kept_run(|r| r.iterations = iterations);
        Ok(())
    }

    pub fn set_run_usage(&self, usage_json: String) -> Res<()> {
        self.exec(
            "UPDATE current_run SET usage = ? WHERE id = 1",
            vec![usage_json.clone().into()],
        )?;
        self.kept_run(|r| r.usage = usage_json);
        Ok(())
    }

    /// Keeps the run's assembled prompt while it waits on tools.
    pub fn keep_run_prompt(&self, prompt_json: String) -> Res<()> {
        self.exec(
            "UPDATE current_run SET prompt = ? WHERE id = 1",
            vec![prompt_json.clone().into()],
        )?;
        self.kept_run(|r| r.prompt = Some(prompt_json));
        Ok(())
    }

    /// Counts one more resume of an interrupted run.
    pub fn count_resume(&self) -> Res<()> {
        self.exec(
            "UPDATE current_run SET resumes = resumes + 1 WHERE id = 1",
            vec![],
        )?;
        self.kept_run(|r| r.resumes += 1);
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
        self.kept.borrow_mut().calls = None;
        Ok(())
    }

    pub fn call_rows(&self) -> Res<Vec<CallRow>> {
        if self.kept.borrow().calls == Some(false) {
            return Ok(Vec::new());
        }
        let rows: Vec<CallRow> = self.rows(
            "SELECT call_id, name, args, dispatched, result FROM tool_calls ORDER BY seq",
            vec![],
        )?;
        self.kept.borrow_mut().calls = Some(!rows.is_empty());
        Ok(rows)
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
        if self.kept.borrow().calls != Some(false) {
            self.exec("DELETE FROM tool_calls", vec![])?;
            self.kept.borrow_mut().calls = Some(false);
        }
        self.delete_deadline(deadline_kind)
    }

    // --- deadlines (the object's one alarm) --------------------------------

    /// The deadlines table, read once per instance.
    fn deadlines(&self) -> Res<Vec<(String, i64)>> {
        if let Some(d) = &self.kept.borrow().deadlines {
            return Ok(d.clone());
        }
        #[derive(Deserialize)]
        struct Row {
            kind: String,
            at_ms: i64,
        }
        let rows: Vec<Row> = self.rows("SELECT kind, at_ms FROM deadlines", vec![])?;
        let all: Vec<(String, i64)> = rows.into_iter().map(|r| (r.kind, r.at_ms)).collect();
        self.kept.borrow_mut().deadlines = Some(all.clone());
        Ok(all)
    }

    /// Changes the kept deadlines the way a statement just changed the table.
    fn kept_deadlines(&self, change: impl FnOnce(&mut Vec<(String, i64)>)) {
        if let Some(d) = self.kept.borrow_mut().deadlines.as_mut() {
            change(d);
        }
    }

    pub fn set_deadline(&self, kind: &str, at_ms: i64) -> Res<()> {
        self.exec(
            "INSERT INTO deadlines (kind, at_ms) VALUES (?, ?) ON CONFLICT(kind) DO UPDATE SET at_ms = excluded.at_ms",
            vec![kind.into(), at_ms.into()],
        )?;
        self.kept_deadlines(|d| {
            d.retain(|(k, _)| k != kind);
            d.push((kind.to_string(), at_ms));
        });
        Ok(())
    }

    /// Sets a deadline unless one of `kind` is already set.
    pub fn set_deadline_once(&self, kind: &str, at_ms: i64) -> Res<()> {
        self.exec(
            "INSERT INTO deadlines (kind, at_ms) VALUES (?, ?) ON CONFLICT(kind) DO NOTHING",
            vec![kind.into(), at_ms.into()],
        )?;
        self.kept_deadlines(|d| {
            if !d.iter().any(|(k, _)| k == kind) {
                d.push((kind.to_string(), at_ms));
            }
        });
        Ok(())
    }

    pub fn deadline(&self, kind: &str) -> Res<Option<i64>> {
        Ok(self
            .deadlines()?
            .iter()
            .find(|(k, _)| k == kind)
            .map(|(_, at)| *at))
    }

    pub fn delete_deadline(&self, kind: &str) -> Res<()> {
        if self.deadline(kind)?.is_none() {
            return Ok(());
        }
        self.exec("DELETE FROM deadlines WHERE kind = ?", vec![kind.into()])?;
        self.kept_deadlines(|d| d.retain(|(k, _)| k != kind));
        Ok(())
    }

    /// The earliest deadline, if any.
    pub fn next_deadline(&self) -> Option<i64> {
        let all = self.deadlines().ok()?;
        all.iter().map(|(_, at)| *at).min()
    }

    /// Removes and returns the deadlines that are due.
    pub fn take_due_deadlines(&self, now: i64) -> Res<Vec<String>> {
        let due: Vec<String> = self
            .deadlines()?
            .into_iter()
            .filter(|(_, at)| *at <= now)
            .map(|(k, _)| k)
            .collect();
        if !due.is_empty() {
            self.exec("DELETE FROM deadlines WHERE at_ms <= ?", vec![now.into()])?;
            self.kept_deadlines(|d| d.retain(|(_, at)| *at > now));
        }
        Ok(due)
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
        if let Some(plan) = &self.kept.borrow().plan {
            return Ok(plan.clone());
        }
        #[derive(Deserialize)]
        struct Row {
            plan: String,
        }
        let rows: Vec<Row> = self.rows("SELECT plan FROM reset_plan WHERE id = 1", vec![])?;
        let plan = rows
            .first()
            .map(|r| serde_json::from_str(&r.plan).map_err(SessionError::storage))
            .transpose()?;
        self.kept.borrow_mut().plan = Some(plan.clone());
        Ok(plan)
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
        self.kept.borrow_mut().plan = Some(plan.cloned());
        Ok(())
    }
}

/// A history as a run reads it.
#[derive(Default)]
pub struct HistoryRead {
    /// Every message, oldest first.
    pub all: Vec<Message>,
    /// The messages from the run's first index on.
    pub from: Vec<Message>,
    /// The token estimate of each of `all`.
    pub tokens: Vec<u64>,
}

fn split_at(history: &History, first_idx: i64) -> HistoryRead {
    HistoryRead {
        all: history.messages.iter().map(|(_, m)| m.clone()).collect(),
        from: history
            .messages
            .iter()
            .filter(|(idx, _)| *idx >= first_idx)
            .map(|(_, m)| m.clone())
            .collect(),
        tokens: history.tokens.clone(),
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
