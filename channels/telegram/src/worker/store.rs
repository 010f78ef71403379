//! The object's SQLite: the tables every channel keeps
//! (`gsv_channel_worker::tables`: the account's state, the registry, the
//! updates seen, the calls owed to the gateway, the pieces sent) and the
//! deadlines behind the object's one alarm (`schedule`).

use crate::account::Account;
use gsv_channel_worker::tables::Tables;
use serde::Deserialize;
use worker::SqlStorage;

const MIGRATIONS: &[&str] = &[
    "CREATE TABLE account (id INTEGER PRIMARY KEY CHECK (id = 1), account_id TEXT NOT NULL, state TEXT NOT NULL);
     CREATE TABLE accounts (account_id TEXT PRIMARY KEY);
     CREATE TABLE seen (key TEXT PRIMARY KEY, at INTEGER NOT NULL);
     CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, body TEXT NOT NULL);
     CREATE TABLE sent (key TEXT PRIMARY KEY, message_id TEXT NOT NULL, at INTEGER NOT NULL);
     CREATE TABLE deadlines (kind TEXT PRIMARY KEY, at_ms INTEGER NOT NULL, until_ms INTEGER)",
];

/// Telegram keeps an update for 24 hours; its id is kept for two days.
const SEEN_TTL_MS: i64 = 2 * 86_400_000;
/// The gateway retries a piece for minutes; a day is plenty.
const SENT_TTL_MS: i64 = 86_400_000;

pub struct Store(Tables);

impl std::ops::Deref for Store {
    type Target = Tables;
    fn deref(&self) -> &Tables {
        &self.0
    }
}

/// A deadline that is due: its kind, and until when it lasts (typing).
pub struct Due {
    pub kind: String,
    pub until_ms: Option<i64>,
}

impl Store {
    pub fn open(sql: SqlStorage, now_ms: i64) -> worker::Result<Self> {
        Tables::open(sql, MIGRATIONS, now_ms).map(Self)
    }

    pub fn load(&self) -> worker::Result<Option<(String, Account)>> {
        self.0.load()
    }

    /// Records an update (by its bot and id); false when it came before.
    pub fn first_sight(&self, key: &str, now: i64) -> worker::Result<bool> {
        self.0.first_sight(key, now, SEEN_TTL_MS)
    }

    pub fn remember_sent(&self, key: &str, message_id: &str, now: i64) -> worker::Result<()> {
        self.0.remember_sent(key, message_id, now, SENT_TTL_MS)
    }

    pub fn register(&self, account_id: &str) -> worker::Result<()> {
        self.exec(
            "INSERT OR IGNORE INTO accounts (account_id) VALUES (?)",
            vec![account_id.into()],
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

    /// Clears every deadline whose kind starts with `prefix` (all typing).
    pub fn clear_deadlines(&self, prefix: &str) -> worker::Result<()> {
        self.exec(
            "DELETE FROM deadlines WHERE substr(kind, 1, ?) = ?",
            vec![(prefix.len() as i64).into(), prefix.into()],
        )
    }

    /// The deadlines due at `now` whose kind starts with `prefix`, earliest first.
    pub fn due(&self, now: i64, prefix: &str) -> worker::Result<Vec<Due>> {
        #[derive(Deserialize)]
        struct Row {
            kind: String,
            until_ms: Option<i64>,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT kind, until_ms FROM deadlines
             WHERE at_ms <= ? AND substr(kind, 1, ?) = ? ORDER BY at_ms",
            vec![now.into(), (prefix.len() as i64).into(), prefix.into()],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| Due {
                kind: r.kind,
                until_ms: r.until_ms,
            })
            .collect())
    }

    /// The earliest deadline whose kind starts with `prefix`.
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
