//! The node registry's tables and every statement over them: connected
//! nodes and their tools, tool calls out at nodes (who waits for each),
//! background commands a session waits on, skill bin probes and the
//! `skills.update` requests waiting on them, and log calls.

use super::super::sql_store::SqlStore;
use crate::skills::probe::ProbeOutcome;
use crate::worker::rpc::internal_error;
use gsv_protocol::{ErrorShape, NodeRuntimeInfo, ToolDefinition};
use serde::Deserialize;
use worker::{SqlStorage, SqlStorageValue};

type Res<T> = std::result::Result<T, ErrorShape>;

/// Connected nodes and their tools, tool calls out at nodes (who waits
/// for each), and background commands whose end a session waits for.
pub const MIGRATION: &str = "CREATE TABLE nodes (node_id TEXT PRIMARY KEY, conn_id TEXT NOT NULL, tools TEXT NOT NULL,
        runtime TEXT NOT NULL, connected_at INTEGER NOT NULL);
     CREATE TABLE tool_calls (call_id TEXT PRIMARY KEY, node_id TEXT NOT NULL, kind TEXT NOT NULL,
        session_key TEXT, conn_id TEXT, frame_id TEXT, created_at INTEGER NOT NULL, deadline_at INTEGER NOT NULL);
     CREATE INDEX tool_calls_by_node ON tool_calls (node_id);
     CREATE TABLE exec_sessions (node_id TEXT NOT NULL, session_id TEXT NOT NULL, session_key TEXT NOT NULL,
        call_id TEXT NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (node_id, session_id))";

/// Schema version 4 of the Gateway DO: probes out at nodes (`outcome` is
/// NULL while pending, then `updated` or `failed` with `error` until the
/// `skills.update` waiting for them answers) and those waiting updates.
pub const PROBES_MIGRATION: &str = "CREATE TABLE probes (probe_id TEXT PRIMARY KEY, node_id TEXT NOT NULL,
        conn_id TEXT NOT NULL, bins TEXT NOT NULL, update_id TEXT, outcome TEXT, error TEXT,
        timeout_ms INTEGER NOT NULL, deadline_at INTEGER NOT NULL);
     CREATE INDEX probes_by_node ON probes (node_id);
     CREATE INDEX probes_by_update ON probes (update_id);
     CREATE TABLE skill_updates (update_id TEXT PRIMARY KEY, conn_id TEXT NOT NULL, frame_id TEXT NOT NULL,
        agent_id TEXT NOT NULL, skipped TEXT NOT NULL, created_at INTEGER NOT NULL)";

/// Log calls out at nodes: `node_conn` is the connection asked (a newer
/// one of the same node does not answer for it); the asker is a client's
/// frame (`conn_id`, `frame_id`) or a session's tool call (`session_key`,
/// `tool_call_id`).
pub const LOG_CALLS_MIGRATION: &str = "CREATE TABLE log_calls (call_id TEXT PRIMARY KEY, node_id TEXT NOT NULL,
        node_conn TEXT NOT NULL, lines INTEGER NOT NULL, conn_id TEXT, frame_id TEXT, session_key TEXT,
        tool_call_id TEXT, deadline_at INTEGER NOT NULL);
     CREATE INDEX log_calls_by_node ON log_calls (node_id)";

/// Routes to sessions outlive the session's own deadline by this much,
/// then they are forgotten.
pub const ROUTE_GRACE_MS: i64 = 60_000;

#[derive(Debug, Deserialize)]
pub struct NodeRow {
    pub node_id: String,
    pub conn_id: String,
    pub tools: String,
    pub runtime: String,
}

/// Who waits for a tool call: a session (`kind` "session") or a client's
/// frame ("client").
#[derive(Debug, Clone, Deserialize)]
pub struct RouteRow {
    pub call_id: String,
    pub node_id: String,
    pub kind: String,
    pub session_key: Option<String>,
    pub conn_id: Option<String>,
    pub frame_id: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct ProbeRow {
    pub probe_id: String,
    pub node_id: String,
    bins: String,
    pub update_id: Option<String>,
    pub outcome: Option<String>,
    error: Option<String>,
    pub timeout_ms: i64,
}

impl ProbeRow {
    pub fn bins(&self) -> Vec<String> {
        serde_json::from_str(&self.bins).unwrap_or_default()
    }

    /// How it ended; `None` while pending.
    pub fn outcome(&self) -> Option<ProbeOutcome> {
        match self.outcome.as_deref()? {
            "updated" => Some(ProbeOutcome::Updated),
            _ => Some(ProbeOutcome::Failed(self.error.clone().unwrap_or_default())),
        }
    }
}

/// A `skills.update` waiting for its probes.
#[derive(Debug, Deserialize)]
pub struct UpdateRow {
    pub conn_id: String,
    pub frame_id: String,
    pub agent_id: String,
    pub skipped: String,
}

/// A probe to record.
pub struct NewProbe<'a> {
    pub probe_id: &'a str,
    pub node_id: &'a str,
    pub conn_id: &'a str,
    pub bins: &'a [String],
    pub update_id: Option<&'a str>,
    pub timeout_ms: i64,
    pub deadline_at: i64,
}

#[derive(Debug, Deserialize)]
pub struct LogCall {
    pub call_id: String,
    pub node_id: String,
    pub lines: i64,
    pub conn_id: Option<String>,
    pub frame_id: Option<String>,
    pub session_key: Option<String>,
    pub tool_call_id: Option<String>,
}

/// A log call to record; `node_conn` is the connection asked.
pub struct NewLogCall<'a> {
    pub call_id: &'a str,
    pub node_id: &'a str,
    pub node_conn: &'a str,
    pub lines: i64,
    pub conn_id: Option<&'a str>,
    pub frame_id: Option<&'a str>,
    pub session_key: Option<&'a str>,
    pub tool_call_id: Option<&'a str>,
    pub deadline_at: i64,
}

const ROUTE_COLUMNS: &str = "call_id, node_id, kind, session_key, conn_id, frame_id";
const PROBE_COLUMNS: &str = "probe_id, node_id, bins, update_id, outcome, error, timeout_ms";
const LOG_COLUMNS: &str = "call_id, node_id, lines, conn_id, frame_id, session_key, tool_call_id";

fn json<T: serde::Serialize + ?Sized>(v: &T) -> Res<String> {
    serde_json::to_string(v).map_err(internal_error)
}

pub struct NodeStore {
    sql: SqlStorage,
}

impl SqlStore for NodeStore {
    fn sql(&self) -> &SqlStorage {
        &self.sql
    }
}

impl NodeStore {
    pub fn new(sql: SqlStorage) -> Self {
        Self { sql }
    }

    /// The earliest deadline of the registry: tool calls (a session's
    /// after the route's grace), followed background commands, log
    /// calls, pending probes.
    pub fn next_deadline(&self) -> Option<f64> {
        #[derive(Deserialize)]
        struct Next {
            at: Option<f64>,
        }
        self.sql
            .exec(
                &format!(
                    "SELECT MIN(at) AS at FROM (
                       SELECT CASE kind WHEN 'client' THEN deadline_at ELSE deadline_at + {ROUTE_GRACE_MS} END AS at FROM tool_calls
                       UNION ALL SELECT expires_at FROM exec_sessions
                       UNION ALL SELECT deadline_at FROM log_calls
                       UNION ALL SELECT deadline_at FROM probes WHERE outcome IS NULL)"
                ),
                None,
            )
            .and_then(|c| c.one::<Next>())
            .ok()
            .and_then(|n| n.at)
    }

    // --- nodes -----------------------------------------------------------------

    /// Records a node's tools, replacing an earlier registration of its id.
    pub fn save_node(
        &self,
        node_id: &str,
        conn_id: &str,
        tools: &[ToolDefinition],
        runtime: &NodeRuntimeInfo,
        now: i64,
    ) -> Res<()> {
        self.run(
            "INSERT INTO nodes (node_id, conn_id, tools, runtime, connected_at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT(node_id) DO UPDATE SET conn_id = excluded.conn_id, tools = excluded.tools,
             runtime = excluded.runtime, connected_at = excluded.connected_at",
            vec![
                node_id.into(),
                conn_id.into(),
                json(tools)?.into(),
                json(runtime)?.into(),
                now.into(),
            ],
        )
    }

    pub fn nodes(&self) -> Res<Vec<NodeRow>> {
        self.rows(
            "SELECT node_id, conn_id, tools, runtime FROM nodes ORDER BY node_id",
            vec![],
        )
    }

    pub fn node(&self, node_id: &str) -> Res<Option<NodeRow>> {
        self.first(
            "SELECT node_id, conn_id, tools, runtime FROM nodes WHERE node_id = ?",
            vec![node_id.into()],
        )
    }

    pub fn delete_node(&self, node_id: &str) -> Res<()> {
        self.run("DELETE FROM nodes WHERE node_id = ?", vec![node_id.into()])
    }

    pub fn set_runtime(&self, node_id: &str, runtime: &NodeRuntimeInfo) -> Res<()> {
        self.run(
            "UPDATE nodes SET runtime = ? WHERE node_id = ?",
            vec![json(runtime)?.into(), node_id.into()],
        )
    }

    // --- tool calls --------------------------------------------------------------

    fn route_values(route: &RouteRow, now: i64, deadline_at: i64) -> Vec<SqlStorageValue> {
        vec![
            route.call_id.as_str().into(),
            route.node_id.as_str().into(),
            route.kind.as_str().into(),
            route.session_key.clone().into(),
            route.conn_id.clone().into(),
            route.frame_id.clone().into(),
            now.into(),
            deadline_at.into(),
        ]
    }

    /// Records a route unless its call id has one; whether it did.
    pub fn add_route(&self, route: &RouteRow, now: i64, deadline_at: i64) -> Res<bool> {
        let stored = self.exec(
            "INSERT INTO tool_calls (call_id, node_id, kind, session_key, conn_id, frame_id, created_at, deadline_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(call_id) DO NOTHING",
            Self::route_values(route, now, deadline_at),
        )?;
        Ok(stored.rows_written() > 0)
    }

    /// Records a route in place of the one its call id has.
    pub fn replace_route(&self, route: &RouteRow, now: i64, deadline_at: i64) -> Res<()> {
        self.run(
            "INSERT OR REPLACE INTO tool_calls (call_id, node_id, kind, session_key, conn_id, frame_id, created_at, deadline_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            Self::route_values(route, now, deadline_at),
        )
    }

    fn routes(&self, condition: &str, bindings: Vec<SqlStorageValue>) -> Res<Vec<RouteRow>> {
        self.rows(
            &format!("SELECT {ROUTE_COLUMNS} FROM tool_calls WHERE {condition}"),
            bindings,
        )
    }

    pub fn route(&self, call_id: &str) -> Res<Vec<RouteRow>> {
        self.routes("call_id = ?", vec![call_id.into()])
    }

    pub fn routes_of_node(&self, node_id: &str) -> Res<Vec<RouteRow>> {
        self.routes("node_id = ?", vec![node_id.into()])
    }

    /// Clients' calls past their deadline, sessions' past it and the grace.
    pub fn due_routes(&self, now: i64) -> Res<Vec<RouteRow>> {
        self.routes(
            "(kind = 'client' AND deadline_at <= ?) OR deadline_at <= ?",
            vec![now.into(), (now - ROUTE_GRACE_MS).into()],
        )
    }

    pub fn delete_route(&self, call_id: &str) -> Res<()> {
        self.run(
            "DELETE FROM tool_calls WHERE call_id = ?",
            vec![call_id.into()],
        )
    }

    pub fn delete_client_routes(&self, conn_id: &str) -> Res<()> {
        self.run(
            "DELETE FROM tool_calls WHERE kind = 'client' AND conn_id = ?",
            vec![conn_id.into()],
        )
    }

    // --- background commands -------------------------------------------------------

    pub fn follow_exec(
        &self,
        node_id: &str,
        session_id: &str,
        key: &str,
        call_id: &str,
        expires_at: i64,
    ) -> Res<()> {
        self.run(
            "INSERT OR REPLACE INTO exec_sessions (node_id, session_id, session_key, call_id, expires_at) VALUES (?, ?, ?, ?, ?)",
            vec![
                node_id.into(),
                session_id.into(),
                key.into(),
                call_id.into(),
                expires_at.into(),
            ],
        )
    }

    /// The session waiting on a node's background command.
    pub fn exec_session_key(&self, node_id: &str, session_id: &str) -> Res<Option<String>> {
        #[derive(Deserialize)]
        struct Row {
            session_key: String,
        }
        let row: Option<Row> = self.first(
            "SELECT session_key FROM exec_sessions WHERE node_id = ? AND session_id = ?",
            vec![node_id.into(), session_id.into()],
        )?;
        Ok(row.map(|r| r.session_key))
    }

    pub fn delete_exec(&self, node_id: &str, session_id: &str) -> Res<()> {
        self.run(
            "DELETE FROM exec_sessions WHERE node_id = ? AND session_id = ?",
            vec![node_id.into(), session_id.into()],
        )
    }

    pub fn expire_execs(&self, now: i64) -> Res<()> {
        self.run(
            "DELETE FROM exec_sessions WHERE expires_at <= ?",
            vec![now.into()],
        )
    }

    // --- probes and the updates waiting on them ------------------------------------

    fn probes(&self, condition: &str, bindings: Vec<SqlStorageValue>) -> Res<Vec<ProbeRow>> {
        self.rows(
            &format!("SELECT {PROBE_COLUMNS} FROM probes WHERE {condition}"),
            bindings,
        )
    }

    pub fn probe(&self, probe_id: &str) -> Res<Option<ProbeRow>> {
        Ok(self
            .probes("probe_id = ?", vec![probe_id.into()])?
            .into_iter()
            .next())
    }

    pub fn update_pending(&self, update_id: &str) -> Res<bool> {
        Ok(!self
            .probes("update_id = ? AND outcome IS NULL", vec![update_id.into()])?
            .is_empty())
    }

    pub fn probes_of_update(&self, update_id: &str) -> Res<Vec<ProbeRow>> {
        self.probes("update_id = ?", vec![update_id.into()])
    }

    pub fn due_probes(&self, now: i64) -> Res<Vec<ProbeRow>> {
        self.probes("outcome IS NULL AND deadline_at <= ?", vec![now.into()])
    }

    pub fn pending_probes(&self, node_id: &str) -> Res<Vec<ProbeRow>> {
        self.probes("outcome IS NULL AND node_id = ?", vec![node_id.into()])
    }

    /// Pending probes sent to another connection of the node than `conn_id`.
    pub fn probes_of_old_conn(&self, node_id: &str, conn_id: &str) -> Res<Vec<ProbeRow>> {
        self.probes(
            "outcome IS NULL AND node_id = ? AND conn_id != ?",
            vec![node_id.into(), conn_id.into()],
        )
    }

    pub fn add_probe(&self, p: &NewProbe<'_>) -> Res<()> {
        self.run(
            "INSERT INTO probes (probe_id, node_id, conn_id, bins, update_id, timeout_ms, deadline_at)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
            vec![
                p.probe_id.into(),
                p.node_id.into(),
                p.conn_id.into(),
                json(p.bins)?.into(),
                p.update_id.map(String::from).into(),
                p.timeout_ms.into(),
                p.deadline_at.into(),
            ],
        )
    }

    pub fn move_probe(&self, probe_id: &str, conn_id: &str) -> Res<()> {
        self.run(
            "UPDATE probes SET conn_id = ? WHERE probe_id = ?",
            vec![conn_id.into(), probe_id.into()],
        )
    }

    pub fn delete_probe(&self, probe_id: &str) -> Res<()> {
        self.run(
            "DELETE FROM probes WHERE probe_id = ?",
            vec![probe_id.into()],
        )
    }

    /// Marks a probe settled: `updated`, or `failed` with its error.
    pub fn settle_probe(&self, probe_id: &str, outcome: ProbeOutcome) -> Res<()> {
        let (state, error) = match outcome {
            ProbeOutcome::Updated => ("updated", None),
            ProbeOutcome::Failed(e) => ("failed", Some(e)),
        };
        self.run(
            "UPDATE probes SET outcome = ?, error = ? WHERE probe_id = ?",
            vec![state.into(), error.into(), probe_id.into()],
        )
    }

    pub fn delete_probes_of_update(&self, update_id: &str) -> Res<()> {
        self.run(
            "DELETE FROM probes WHERE update_id = ?",
            vec![update_id.into()],
        )
    }

    pub fn add_update(
        &self,
        update_id: &str,
        conn_id: &str,
        frame_id: &str,
        agent_id: &str,
        skipped: &[String],
        now: i64,
    ) -> Res<()> {
        self.run(
            "INSERT INTO skill_updates (update_id, conn_id, frame_id, agent_id, skipped, created_at)
             VALUES (?, ?, ?, ?, ?, ?)",
            vec![
                update_id.into(),
                conn_id.into(),
                frame_id.into(),
                agent_id.into(),
                json(skipped)?.into(),
                now.into(),
            ],
        )
    }

    /// Removes an update; `None` when another caller took it first.
    pub fn take_update(&self, update_id: &str) -> Res<Option<UpdateRow>> {
        self.first(
            "DELETE FROM skill_updates WHERE update_id = ? RETURNING conn_id, frame_id, agent_id, skipped",
            vec![update_id.into()],
        )
    }

    /// A client went away: its updates go; their settled probes with
    /// them, their pending ones stay for nobody.
    pub fn client_updates_gone(&self, conn_id: &str) -> Res<()> {
        self.run(
            "DELETE FROM probes WHERE outcome IS NOT NULL AND update_id IN
               (SELECT update_id FROM skill_updates WHERE conn_id = ?)",
            vec![conn_id.into()],
        )?;
        self.run(
            "UPDATE probes SET update_id = NULL WHERE update_id IN
               (SELECT update_id FROM skill_updates WHERE conn_id = ?)",
            vec![conn_id.into()],
        )?;
        self.run(
            "DELETE FROM skill_updates WHERE conn_id = ?",
            vec![conn_id.into()],
        )
    }

    // --- log calls -----------------------------------------------------------------

    pub fn add_log_call(&self, c: &NewLogCall<'_>) -> Res<()> {
        let owned = |s: Option<&str>| s.map(String::from);
        self.run(
            "INSERT INTO log_calls (call_id, node_id, node_conn, lines, conn_id, frame_id, session_key, tool_call_id, deadline_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                c.call_id.into(),
                c.node_id.into(),
                c.node_conn.into(),
                c.lines.into(),
                owned(c.conn_id).into(),
                owned(c.frame_id).into(),
                owned(c.session_key).into(),
                owned(c.tool_call_id).into(),
                c.deadline_at.into(),
            ],
        )
    }

    fn log_calls(&self, condition: &str, bindings: Vec<SqlStorageValue>) -> Res<Vec<LogCall>> {
        self.rows(
            &format!("SELECT {LOG_COLUMNS} FROM log_calls WHERE {condition}"),
            bindings,
        )
    }

    pub fn log_call(&self, call_id: &str) -> Res<Option<LogCall>> {
        Ok(self
            .log_calls("call_id = ?", vec![call_id.into()])?
            .into_iter()
            .next())
    }

    /// The calls asked of connection `node_conn`.
    pub fn log_calls_of_conn(&self, node_conn: &str) -> Res<Vec<LogCall>> {
        self.log_calls("node_conn = ?", vec![node_conn.into()])
    }

    /// The calls asked of the node's connections other than `node_conn`.
    pub fn log_calls_of_old_conns(&self, node_id: &str, node_conn: &str) -> Res<Vec<LogCall>> {
        self.log_calls(
            "node_id = ? AND node_conn != ?",
            vec![node_id.into(), node_conn.into()],
        )
    }

    pub fn due_log_calls(&self, now: i64) -> Res<Vec<LogCall>> {
        self.log_calls("deadline_at <= ?", vec![now.into()])
    }

    /// Removes a call; `None` when it was settled already (a result and a
    /// timeout racing: the first one takes it).
    pub fn take_log_call(&self, call_id: &str) -> Res<Option<LogCall>> {
        self.first(
            &format!("DELETE FROM log_calls WHERE call_id = ? RETURNING {LOG_COLUMNS}"),
            vec![call_id.into()],
        )
    }

    pub fn delete_client_log_calls(&self, conn_id: &str) -> Res<()> {
        self.run(
            "DELETE FROM log_calls WHERE conn_id = ?",
            vec![conn_id.into()],
        )
    }
}
