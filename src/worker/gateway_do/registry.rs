//! The sessions registry: every session the gateway has routed to, for
//! `sessions.list` and a Session's `session_logs`.

use super::Gateway;
use crate::session::internal::AgentSessionsQuery;
use crate::worker::rpc::{internal_error, now_ms};
use gsv_protocol::*;
use serde::Deserialize;
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

impl Gateway {
    /// Records activity in the session registry; `label` is written only
    /// when `set_label` (a patch may clear it). Activity within a second
    /// of the last written is kept back (`gateway::touches`).
    pub(super) fn touch_session(&self, key: &str, label: Option<&str>, set_label: bool) -> Res<()> {
        let now = now_ms();
        let mut touches = self.touches.borrow_mut();
        if !touches.must_write(key, now, set_label) {
            return Ok(());
        }
        self.state
            .storage()
            .sql()
            .exec(
                "INSERT INTO sessions (session_key, created_at, last_active_at, label) VALUES (?, ?, ?, ?)
                 ON CONFLICT(session_key) DO UPDATE SET last_active_at = excluded.last_active_at,
                 label = CASE WHEN ? THEN excluded.label ELSE sessions.label END",
                vec![key.into(), now.into(), now.into(), label.map(String::from).into(), i64::from(set_label).into()],
            )
            .map_err(internal_error)?;
        touches.wrote(key, now);
        Ok(())
    }

    /// Writes the activity stamps kept back by `touch_session`.
    fn flush_touches(&self) -> Res<()> {
        let pending = self.touches.borrow_mut().take_pending();
        let sql = self.state.storage().sql();
        for (key, at) in pending {
            sql.exec(
                "UPDATE sessions SET last_active_at = ? WHERE session_key = ? AND last_active_at < ?",
                vec![at.into(), key.into(), at.into()],
            )
            .map_err(internal_error)?;
        }
        Ok(())
    }

    /// Whether the gateway has routed to session `key`.
    pub(super) fn session_known(&self, key: &str) -> Res<bool> {
        #[derive(Deserialize)]
        struct N {
            n: i64,
        }
        let n = self
            .state
            .storage()
            .sql()
            .exec(
                "SELECT COUNT(*) AS n FROM sessions WHERE session_key = ?",
                vec![key.into()],
            )
            .and_then(|c| c.one::<N>())
            .map_err(internal_error)?
            .n;
        Ok(n > 0)
    }

    pub(super) fn sessions_list(&self, p: SessionsListParams) -> Res<SessionsListResult> {
        let limit = p.limit.unwrap_or(100).clamp(1, 500);
        self.registry("", vec![], limit, p.offset.unwrap_or(0))
    }

    /// The keys of the sessions active since `since_ms` (`usage.daily`).
    pub(super) fn active_since(&self, since_ms: i64) -> Res<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            session_key: String,
        }
        self.flush_touches()?;
        let rows: Vec<Row> = self
            .state
            .storage()
            .sql()
            .exec(
                "SELECT session_key FROM sessions WHERE last_active_at >= ? ORDER BY session_key",
                vec![since_ms.into()],
            )
            .and_then(|c| c.to_array())
            .map_err(internal_error)?;
        Ok(rows.into_iter().map(|r| r.session_key).collect())
    }

    /// The registry's sessions of one agent (keys `agent:{agentId}:…`),
    /// for a Session's `session_logs`.
    pub(super) fn agent_sessions(&self, q: AgentSessionsQuery) -> Res<SessionsListResult> {
        let prefix = format!("agent:{}:", q.agent_id);
        // An exact prefix comparison: LIKE would read `_` in an agent id
        // as a wildcard.
        let filter = "WHERE substr(session_key, 1, ?) = ?";
        let bindings = vec![(prefix.chars().count() as i64).into(), prefix.into()];
        self.registry(filter, bindings, q.limit.clamp(1, 500), q.offset)
    }

    /// A page of the sessions registry matching `filter` (a `WHERE` clause
    /// over `bindings`, or empty), most recently active first, and how many
    /// match in all.
    fn registry(
        &self,
        filter: &str,
        bindings: Vec<SqlStorageValue>,
        limit: u32,
        offset: u32,
    ) -> Res<SessionsListResult> {
        #[derive(Deserialize)]
        struct Row {
            session_key: String,
            created_at: i64,
            last_active_at: i64,
            label: Option<String>,
        }
        #[derive(Deserialize)]
        struct Count {
            n: i64,
        }
        self.flush_touches()?;
        let sql = self.state.storage().sql();
        let mut page_bindings = bindings.clone();
        page_bindings.extend([i64::from(limit).into(), i64::from(offset).into()]);
        let rows: Vec<Row> = sql
            .exec(
                &format!("SELECT session_key, created_at, last_active_at, label FROM sessions {filter} ORDER BY last_active_at DESC, session_key LIMIT ? OFFSET ?"),
                page_bindings,
            )
            .and_then(|c| c.to_array())
            .map_err(internal_error)?;
        let count = sql
            .exec(
                &format!("SELECT COUNT(*) AS n FROM sessions {filter}"),
                bindings,
            )
            .and_then(|c| c.one::<Count>())
            .map_err(internal_error)?;
        Ok(SessionsListResult {
            sessions: rows
                .into_iter()
                .map(|r| SessionRegistryEntry {
                    session_key: r.session_key,
                    created_at: r.created_at,
                    last_active_at: r.last_active_at,
                    label: r.label,
                })
                .collect(),
            count: count.n as u64,
        })
    }
}
