//! The tables every channel's account object keeps in its SQLite, and
//! their queries (a channel's own migrations create them, with these
//! names and columns, beside its own tables):
//!
//! - `account (id = 1, account_id, state)`: the account's state as JSON;
//! - `accounts (account_id, …)`: in the registry object, the accounts;
//! - `seen (key, at)`: what the platform delivered (a redelivery is taken once);
//! - `outbox (id, path, body)`: the calls still owed to the gateway, oldest first;
//! - `sent (key, message_id, at)`: each piece sent by its idempotency key
//!   (a retried piece is answered, not sent twice);
//! - `deadlines (kind, at_ms, until_ms)`: for an object with more than one
//!   reason to wake, each reason's next time (its one alarm goes to the
//!   earliest), and until when a repeating one lasts.

use serde::{Deserialize, Serialize};
use worker::{SqlStorage, SqlStorageValue};

pub struct Tables {
    sql: SqlStorage,
}

impl Tables {
    /// Opens the object's SQLite, bringing it to the channel's schema.
    pub fn open(sql: SqlStorage, migrations: &[&str], now_ms: i64) -> worker::Result<Self> {
        gsv_worker_sql::migrate(&sql, migrations, now_ms)?;
        Ok(Self { sql })
    }

    pub fn sql(&self) -> &SqlStorage {
        &self.sql
    }

    pub fn rows<T: for<'de> Deserialize<'de>>(
        &self,
        query: &str,
        bindings: Vec<SqlStorageValue>,
    ) -> worker::Result<Vec<T>> {
        self.sql.exec(query, bindings)?.to_array()
    }

    pub fn exec(&self, query: &str, bindings: Vec<SqlStorageValue>) -> worker::Result<()> {
        self.sql.exec(query, bindings)?;
        Ok(())
    }

    // --- the account ---------------------------------------------------------

    /// The account this object serves and its state, once it was saved
    /// (a state that no longer reads comes back as its default).
    pub fn load<T: for<'de> Deserialize<'de> + Default>(
        &self,
    ) -> worker::Result<Option<(String, T)>> {
        #[derive(Deserialize)]
        struct Row {
            account_id: String,
            state: String,
        }
        let rows: Vec<Row> =
            self.rows("SELECT account_id, state FROM account WHERE id = 1", vec![])?;
        Ok(rows.into_iter().next().map(|r| {
            let state = serde_json::from_str(&r.state).unwrap_or_default();
            (r.account_id, state)
        }))
    }

    pub fn save<T: Serialize>(&self, account_id: &str, state: &T) -> worker::Result<()> {
        let json = serde_json::to_string(state)?;
        self.exec(
            "INSERT INTO account (id, account_id, state) VALUES (1, ?, ?)
             ON CONFLICT (id) DO UPDATE SET account_id = excluded.account_id, state = excluded.state",
            vec![account_id.into(), json.into()],
        )
    }

    // --- the registry ----------------------------------------------------------

    /// Lists the account (once) in the registry.
    pub fn register(&self, account_id: &str) -> worker::Result<()> {
        self.exec(
            "INSERT OR IGNORE INTO accounts (account_id) VALUES (?)",
            vec![account_id.into()],
        )
    }

    pub fn accounts(&self) -> worker::Result<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            account_id: String,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT account_id FROM accounts ORDER BY account_id",
            vec![],
        )?;
        Ok(rows.into_iter().map(|r| r.account_id).collect())
    }

    // --- what the platform delivered ----------------------------------------------

    /// Records `key`; false when it was seen before (a redelivery). Keys
    /// older than `ttl_ms` are forgotten.
    pub fn first_sight(&self, key: &str, now: i64, ttl_ms: i64) -> worker::Result<bool> {
        self.exec("DELETE FROM seen WHERE at < ?", vec![(now - ttl_ms).into()])?;
        #[derive(Deserialize)]
        struct Row {
            #[allow(dead_code)]
            key: String,
        }
        let inserted: Vec<Row> = self.rows(
            "INSERT INTO seen (key, at) VALUES (?, ?) ON CONFLICT DO NOTHING RETURNING key",
            vec![key.into(), now.into()],
        )?;
        Ok(!inserted.is_empty())
    }

    // --- calls owed to the gateway -------------------------------------------------

    pub fn enqueue(&self, path: &str, body: &str) -> worker::Result<()> {
        self.exec(
            "INSERT INTO outbox (path, body) VALUES (?, ?)",
            vec![path.into(), body.into()],
        )
    }

    /// The oldest call not yet taken: its row id, path and JSON body.
    pub fn oldest(&self) -> worker::Result<Option<(i64, String, String)>> {
        #[derive(Deserialize)]
        struct Row {
            id: i64,
            path: String,
            body: String,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT id, path, body FROM outbox ORDER BY id LIMIT 1",
            vec![],
        )?;
        Ok(rows.into_iter().next().map(|r| (r.id, r.path, r.body)))
    }

    pub fn delivered(&self, id: i64) -> worker::Result<()> {
        self.exec("DELETE FROM outbox WHERE id = ?", vec![id.into()])
    }

    // --- pieces sent ------------------------------------------------------------------

    /// The platform's id of the piece sent under `key`, if one was.
    pub fn sent_id(&self, key: &str) -> worker::Result<Option<String>> {
        #[derive(Deserialize)]
        struct Row {
            message_id: String,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT message_id FROM sent WHERE key = ?",
            vec![key.into()],
        )?;
        Ok(rows.into_iter().next().map(|r| r.message_id))
    }

    /// Records the piece sent under `key`; keys older than `ttl_ms` are forgotten.
    pub fn remember_sent(
        &self,
        key: &str,
        message_id: &str,
        now: i64,
        ttl_ms: i64,
    ) -> worker::Result<()> {
        self.exec("DELETE FROM sent WHERE at < ?", vec![(now - ttl_ms).into()])?;
        self.exec(
            "INSERT OR REPLACE INTO sent (key, message_id, at) VALUES (?, ?, ?)",
            vec![key.into(), message_id.into(), now.into()],
        )
    }

    // --- deadlines (the object's one alarm) --------------------------------

    pub fn set_deadline(
        &self,
        kind: &str,
        at_ms: i64,
        until_ms: Option<i64>,
    ) -> worker::Result<()> {
        self.exec(
            "INSERT INTO deadlines (kind, at_ms, until_ms) VALUES (?, ?, ?)
             ON CONFLICT (kind) DO UPDATE SET at_ms = excluded.at_ms, until_ms = excluded.until_ms",
            vec![kind.into(), at_ms.into(), until_ms.into()],
        )
    }

    pub fn clear_deadline(&self, kind: &str) -> worker::Result<()> {
        self.exec("DELETE FROM deadlines WHERE kind = ?", vec![kind.into()])
    }

    /// Clears every deadline whose kind starts with `prefix`.
    pub fn clear_deadlines(&self, prefix: &str) -> worker::Result<()> {
        self.exec(
            "DELETE FROM deadlines WHERE substr(kind, 1, ?) = ?",
            vec![(prefix.len() as i64).into(), prefix.into()],
        )
    }

    /// The deadlines due at `now` whose kind starts with `prefix`, earliest first.
    pub fn due(&self, now: i64, prefix: &str) -> worker::Result<Vec<Due>> {
        self.rows(
            "SELECT kind, until_ms FROM deadlines
             WHERE at_ms <= ? AND substr(kind, 1, ?) = ? ORDER BY at_ms",
            vec![now.into(), (prefix.len() as i64).into(), prefix.into()],
        )
    }

    /// The earliest deadline whose kind starts with `prefix` (all: "").
    pub fn next_deadline(&self, prefix: &str) -> worker::Result<Option<i64>> {
        #[derive(Deserialize)]
        struct Row {
            at: Option<i64>,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT MIN(at_ms) AS at FROM deadlines WHERE substr(kind, 1, ?) = ?",
            vec![(prefix.len() as i64).into(), prefix.into()],
        )?;
        Ok(rows.into_iter().next().and_then(|r| r.at))
    }
}

/// A deadline that is due: its kind, and until when it lasts (if it repeats).
#[derive(Debug, Deserialize)]
pub struct Due {
    pub kind: String,
    pub until_ms: Option<i64>,
}
