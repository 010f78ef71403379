//! The object's SQLite: one row of session state (`Persisted` as JSON) and,
//! in the registry object, the accounts ever started. Versioned migrations
//! run in the constructor.

use crate::gateway::machine::Persisted;
use serde::Deserialize;
use worker::{SqlStorage, SqlStorageValue};

const MIGRATIONS: &[&str] = &[
    "CREATE TABLE account (id INTEGER PRIMARY KEY CHECK (id = 1), account_id TEXT NOT NULL, state TEXT NOT NULL);
     CREATE TABLE accounts (account_id TEXT PRIMARY KEY)",
    // Inbound messages not yet accepted by the gateway, oldest first: the
    // sequence number already moved past them, so Discord will not send
    // them again.
    "CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, params TEXT NOT NULL)",
];

pub struct Store {
    sql: SqlStorage,
}

impl Store {
    pub fn open(sql: SqlStorage, now_ms: i64) -> worker::Result<Self> {
        gsv_worker_sql::migrate(&sql, MIGRATIONS, now_ms)?;
        Ok(Self { sql })
    }

    /// The account this object serves and its state, once started.
    pub fn load(&self) -> worker::Result<Option<(String, Persisted)>> {
        #[derive(Deserialize)]
        struct Row {
            account_id: String,
            state: String,
        }
        let rows: Vec<Row> = self
            .sql
            .exec("SELECT account_id, state FROM account WHERE id = 1", None)?
            .to_array()?;
        Ok(rows.into_iter().next().map(|r| {
            let state = serde_json::from_str(&r.state).unwrap_or_default();
            (r.account_id, state)
        }))
    }

    pub fn save(&self, account_id: &str, state: &Persisted) -> worker::Result<()> {
        let json = serde_json::to_string(state)?;
        self.sql.exec(
            "INSERT INTO account (id, account_id, state) VALUES (1, ?, ?)
             ON CONFLICT (id) DO UPDATE SET account_id = excluded.account_id, state = excluded.state",
            vec![SqlStorageValue::from(account_id), SqlStorageValue::from(json)],
        )?;
        Ok(())
    }

    pub fn register(&self, account_id: &str) -> worker::Result<()> {
        self.sql.exec(
            "INSERT OR IGNORE INTO accounts (account_id) VALUES (?)",
            vec![SqlStorageValue::from(account_id)],
        )?;
        Ok(())
    }

    pub fn accounts(&self) -> worker::Result<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            account_id: String,
        }
        let rows: Vec<Row> = self
            .sql
            .exec("SELECT account_id FROM accounts ORDER BY account_id", None)?
            .to_array()?;
        Ok(rows.into_iter().map(|r| r.account_id).collect())
    }
}

impl Store {
    pub fn enqueue(&self, params_json: &str) -> worker::Result<()> {
        self.sql.exec(
            "INSERT INTO outbox (params) VALUES (?)",
            vec![SqlStorageValue::from(params_json)],
        )?;
        Ok(())
    }

    /// The oldest undelivered message (its row id and JSON).
    pub fn oldest(&self) -> worker::Result<Option<(i64, String)>> {
        #[derive(Deserialize)]
        struct Row {
            id: i64,
            params: String,
        }
        let rows: Vec<Row> = self
            .sql
            .exec("SELECT id, params FROM outbox ORDER BY id LIMIT 1", None)?
            .to_array()?;
        Ok(rows.into_iter().next().map(|r| (r.id, r.params)))
    }

    pub fn delivered(&self, id: i64) -> worker::Result<()> {
        self.sql.exec(
            "DELETE FROM outbox WHERE id = ?",
            vec![SqlStorageValue::from(id)],
        )?;
        Ok(())
    }
}
