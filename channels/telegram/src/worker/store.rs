//! The object's SQLite: the tables every channel keeps
//! (`gsv_channel_worker::tables`: the account's state, the registry, the
//! updates seen, the calls owed to the gateway, the pieces sent, and the
//! deadlines behind the object's one alarm, `schedule`).

use gsv_channel_worker::tables::Tables;
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
pub const SEEN_TTL_MS: i64 = 2 * 86_400_000;
/// The gateway retries a piece for minutes; a day is plenty.
pub const SENT_TTL_MS: i64 = 86_400_000;

pub fn open(sql: SqlStorage, now_ms: i64) -> worker::Result<Tables> {
    Tables::open(sql, MIGRATIONS, now_ms)
}
