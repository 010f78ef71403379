//! The trust boundary at the Gateway: `trust.explain` (what a session's
//! speaker may make the agent do, and why) and the audit log of tool
//! calls from turns below the owner (`audit.list`), which sessions
//! report as their calls are decided. The decisions are
//! `crate::trust`'s; this is their I/O.

use super::Gateway;
use crate::calls::Get;
use crate::routing::is_main_session_key;
use crate::session::internal::{AuditRecord, SessionQuery};
use crate::trust::explain::{inferred_trust, landing, verdicts, warnings};
use crate::trust::may_change_session;
use crate::worker::bindings::SessionStub;
use crate::worker::rpc::internal_error;
use gsv_protocol::*;
use serde::Deserialize;

type Res<T> = std::result::Result<T, ErrorShape>;

pub(super) const MIGRATION: &str =
    "CREATE TABLE audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, at_ms INTEGER NOT NULL,
        session_key TEXT NOT NULL, entry TEXT NOT NULL);
     CREATE INDEX audit_by_session ON audit (session_key, seq)";

/// Entries kept: the oldest go past this many.
const AUDIT_KEPT: i64 = 10_000;

impl Gateway {
    /// A session's report of one call.
    pub(super) fn audit_record(&self, r: AuditRecord) -> Res<AckResult> {
        let entry = serde_json::to_string(&r.entry).map_err(internal_error)?;
        let sql = self.sql();
        sql.exec(
            "INSERT INTO audit (at_ms, session_key, entry) VALUES (?, ?, ?)",
            vec![
                r.entry.at_ms.into(),
                r.entry.session_key.as_str().into(),
                entry.into(),
            ],
        )
        .and_then(|_| {
            sql.exec(
                "DELETE FROM audit WHERE seq <= (SELECT MAX(seq) FROM audit) - ?",
                vec![AUDIT_KEPT.into()],
            )
        })
        .map_err(internal_error)?;
        Ok(AckResult {
            ok: true,
            dropped: None,
        })
    }

    /// `audit.list`: newest first.
    pub(super) fn audit_list(&self, p: AuditListParams) -> Res<AuditListResult> {
        #[derive(Deserialize)]
        struct Row {
            entry: String,
        }
        #[derive(Deserialize)]
        struct Count {
            n: i64,
        }
        let limit = i64::from(p.limit.unwrap_or(100).clamp(1, 1000));
        let sql = self.sql();
        let key = p.session_key.as_deref().map(|k| self.canonical_key(k));
        let (rows, count) = match &key {
            Some(k) => (
                sql.exec(
                    "SELECT entry FROM audit WHERE session_key = ? ORDER BY seq DESC LIMIT ?",
                    vec![k.as_str().into(), limit.into()],
                ),
                sql.exec(
                    "SELECT COUNT(*) AS n FROM audit WHERE session_key = ?",
                    vec![k.as_str().into()],
                ),
            ),
            None => (
                sql.exec(
                    "SELECT entry FROM audit ORDER BY seq DESC LIMIT ?",
                    vec![limit.into()],
                ),
                sql.exec("SELECT COUNT(*) AS n FROM audit", None),
            ),
        };
        let rows: Vec<Row> = rows.and_then(|c| c.to_array()).map_err(internal_error)?;
        let count = count
            .and_then(|c| c.one::<Count>())
            .map_err(internal_error)?
            .n;
        Ok(AuditListResult {
            entries: rows
                .iter()
                .filter_map(|r| serde_json::from_str(&r.entry).ok())
                .collect(),
            count: count.max(0) as u64,
        })
    }

    /// `trust.explain`: the level (asked for, the session's last
    /// message's, or its kind's), where such speakers land, and the
    /// verdict on every tool the agent has now.
    pub(super) async fn trust_explain(&self, p: TrustExplainParams) -> Res<TrustExplainResult> {
        let key = self.canonical_key(p.session_key.as_deref().unwrap_or("main"));
        let routing = self.routing.borrow().clone();
        let (trust, source) = match p.level {
            Some(TrustLevel::System) => (
                Trust::system(Trust::OWNER),
                "asked for (a job the owner made)".to_string(),
            ),
            Some(level) => (Trust::of(level), "asked for".to_string()),
            None => match self.last_trust(&key).await? {
                Some(t) => (t, "the session's last message".to_string()),
                None => (
                    inferred_trust(&routing, &key),
                    "the kind of session (no message yet)".to_string(),
                ),
            },
        };
        let is_main = is_main_session_key(&key, &routing);
        let mut tools = crate::selfreport::native_tool_definitions(is_main);
        let nodes = self.known_nodes()?.snapshot;
        tools.extend(nodes.tools.iter().cloned());
        if !nodes.hosts.is_empty() {
            tools.push(crate::gateway::transfer::definition());
        }
        let names: Vec<String> = tools.into_iter().map(|t| t.name).collect();
        let config = self.config.borrow();
        Ok(TrustExplainResult {
            tools: verdicts(&config, &key, trust, &names),
            warnings: warnings(&config, &routing),
            landing: landing(&routing, &key),
            may_change_session: may_change_session(trust, is_main),
            is_main,
            trust,
            trust_source: source,
            session_key: key,
        })
    }

    /// Who spoke last in session `key`, when the gateway has routed to it.
    async fn last_trust(&self, key: &str) -> Res<Option<Trust>> {
        if !self.session_known(key)? {
            return Ok(None);
        }
        let query = SessionQuery {
            session_key: key.to_string(),
            limit: None,
        };
        let got = SessionStub::for_key(&self.env, key)
            .call(&Get(query))
            .await?;
        Ok(got.trust)
    }
}
