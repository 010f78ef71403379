//! Every SQL statement of the Session object, as typed methods over its
//! tables (`crate::session::schema`): the history, the meta row (with the config and the
//! node snapshot of the last message), the queue, the current run, its tool
//! calls, the deadlines behind the one alarm, the background-command events
//! already seen and a reset's plan. Nothing else in the object writes SQL.
//! Here the shared parts and the meta row; each other table group has a
//! file of its own (`history`, `runs`, `deadlines`, `reset_plan`).

use super::error::{Res, SessionError};
use crate::config::Config;
use crate::session::compaction::estimate_text_tokens;
use crate::session::internal::NodeSnapshot;
use crate::session::meta::SessionMeta;
use crate::session::reset::ResetPlan;
use crate::session::run_config::RunConfig;
use crate::session::schema::{CURRENT, MIGRATIONS};
use crate::session::tools::PendingCall;
use crate::worker::rpc::{new_id, now_ms};
use gsv_protocol::{ErrorShape, Message, UserMessage};
use gsv_worker_sql::migrate_or_create;
use serde::{de::DeserializeOwned, Deserialize};
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use worker::{SqlStorage, SqlStorageValue};

mod deadlines;
mod history;
pub mod outcomes;
mod reset_plan;
mod runs;
mod usage;

use history::History;

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
    /// `RunPrompt` JSON, kept while the run waits on tools (read from
    /// `kept_prompts` by `prompt_rev`; not filled in once the run is kept
    /// in memory: the Session keeps the prompt itself then).
    pub prompt: Option<String>,
    /// The revision of the prompt kept for the run.
    #[serde(default)]
    pub prompt_rev: Option<String>,
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
    /// `Trust` JSON: who spoke, as the gateway decided.
    #[serde(default)]
    pub trust: Option<String>,
}

impl CurrentRun {
    /// The run's trust (unknown: the least).
    pub fn trust(&self) -> gsv_protocol::Trust {
        read_trust(self.trust.as_deref())
    }
}

/// A stored `Trust` (absent or unreadable: the least, so nothing is
/// granted by a row written before trust was kept).
pub fn read_trust(json: Option<&str>) -> gsv_protocol::Trust {
    json.and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or_default()
}

/// A message as its run will take it: queued, or started at once.
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
    /// Who spoke.
    pub trust: gsv_protocol::Trust,
}

/// A stored message: its index (gaps where messages were compacted) and JSON.
#[derive(Deserialize)]
pub struct MessageRow {
    pub idx: i64,
    pub data: String,
}

/// One tool call of the current turn.
#[derive(Debug, Clone, Deserialize)]
pub struct CallRow {
    pub call_id: String,
    pub name: String,
    pub args: String,
    dispatched: i64,
    result: Option<String>,
    /// The owner approved it (a call of an `ask` tool).
    #[serde(default)]
    pub approved: i64,
}

impl CallRow {
    /// The row as the owner's approval leaves it.
    pub fn approved(&self) -> Self {
        Self {
            approved: 1,
            dispatched: 0,
            ..self.clone()
        }
    }

    pub fn answered(&self) -> bool {
        self.result.is_some()
    }

    /// The call with its result as stored (the history message's JSON).
    pub fn pending(&self) -> PendingCall<String> {
        PendingCall {
            call_id: self.call_id.clone(),
            name: self.name.clone(),
            dispatched: self.dispatched != 0,
            result: self.result.clone(),
        }
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
    /// The current turn's tool calls, in call order (read on each step of
    /// a turn with tool calls: kept, each write mirrored).
    calls: Option<Vec<CallRow>>,
    /// The revision of the prompt in `kept_prompts` (`Some(None)`: none).
    kept_prompt: Option<Option<String>>,
    /// The meta's activity stamp is newer than the stored row: written
    /// with the meta's next write, at the latest when the run ends.
    meta_dirty: bool,
}

pub struct SessionStore {
    sql: SqlStorage,
    kept: RefCell<Kept>,
    /// The generations given to kept histories so far (never reused, even
    /// when everything kept is forgotten: see `HistoryRead::generation`).
    generations: Cell<u64>,
}

impl SessionStore {
    /// Opens the object's database, applying the migrations not yet applied
    /// (a new object's database is made in its current form at once).
    pub fn open(sql: SqlStorage) -> Self {
        if let Err(e) = migrate_or_create(&sql, MIGRATIONS, CURRENT, now_ms()) {
            worker::console_error!("session: migration failed: {e}");
        }
        Self {
            sql,
            kept: RefCell::new(Kept::default()),
            generations: Cell::new(0),
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

    /// The column `text` of the first row `query` finds.
    fn first_text(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Res<Option<String>> {
        #[derive(Deserialize)]
        struct Row {
            text: String,
        }
        let rows: Vec<Row> = self.rows(query, bindings)?;
        Ok(rows.into_iter().next().map(|r| r.text))
    }

    fn count(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Res<i64> {
        self.exec(query, bindings)?
            .one::<Count>()
            .map(|r| r.n)
            .map_err(SessionError::storage)
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

    /// Notes who spoke last on the kept meta (stored with its next write,
    /// as `touch`'s stamp is).
    pub fn note_trust(&self, trust: gsv_protocol::Trust) -> Res<()> {
        let mut meta = self.meta("")?;
        if meta.trust == Some(trust) {
            return Ok(());
        }
        meta.trust = Some(trust);
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

    /// Stores the config that came with a message (what the owner set, over
    /// the defaults), with its revision, and keeps it parsed. Not the
    /// effective JSON: a setting left at its default (the model id, when
    /// a named provider brings its own) must read as unset.
    pub fn save_config(&self, rev: &str, config: &Value) -> Res<()> {
        let json = serde_json::to_string(config).map_err(SessionError::storage)?;
        self.save_snapshot("config", rev, json)?;
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
        let (rev, body) = self.snapshot("config")?.unzip();
        let overrides = body
            .map(|b| serde_json::from_str(&b))
            .transpose()
            .map_err(SessionError::storage)?;
        let entry = (
            rev.unwrap_or_default(),
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
        self.save_snapshot("nodes", rev, data)?;
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
        let entry = match self.snapshot("nodes")? {
            Some((rev, body)) => (
                rev,
                Rc::new(serde_json::from_str(&body).unwrap_or_default()),
            ),
            None => (String::new(), Rc::new(NodeSnapshot::default())),
        };
        self.kept.borrow_mut().nodes = Some(entry.clone());
        Ok(entry)
    }

    /// Stores the config or node snapshot (`kind`) at revision `rev`.
    fn save_snapshot(&self, kind: &str, rev: &str, body: String) -> Res<()> {
        self.exec(
            "INSERT INTO snapshots (kind, rev, body) VALUES (?, ?, ?)
             ON CONFLICT(kind) DO UPDATE SET rev = excluded.rev, body = excluded.body",
            vec![kind.into(), rev.into(), body.into()],
        )?;
        Ok(())
    }

    /// The stored snapshot of `kind`: its revision and JSON.
    fn snapshot(&self, kind: &str) -> Res<Option<(String, String)>> {
        #[derive(Deserialize)]
        struct Row {
            rev: String,
            body: String,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT rev, body FROM snapshots WHERE kind = ?",
            vec![kind.into()],
        )?;
        Ok(rows.into_iter().next().map(|r| (r.rev, r.body)))
    }
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
