//! The object's SQLite: the tables every channel keeps
//! (`gsv_channel_worker::tables`), the messages received lately (a
//! reply quotes one; the gateway fetches their files), and the linked device's keys (`crate::store`).

use crate::store::MIGRATIONS as KEYS;
use gsv_channel_worker::tables::Tables;
use worker::{SqlStorage, SqlStorageValue};

const MIGRATIONS: &[&str] = &[
    "CREATE TABLE account (id INTEGER PRIMARY KEY CHECK (id = 1), account_id TEXT NOT NULL, state TEXT NOT NULL);
     CREATE TABLE accounts (account_id TEXT PRIMARY KEY);
     CREATE TABLE seen (key TEXT PRIMARY KEY, at INTEGER NOT NULL);
     CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, body TEXT NOT NULL);
     CREATE TABLE sent (key TEXT PRIMARY KEY, message_id TEXT NOT NULL, at INTEGER NOT NULL);
     CREATE TABLE deadlines (kind TEXT PRIMARY KEY, at_ms INTEGER NOT NULL, until_ms INTEGER);
     CREATE TABLE received (chat TEXT NOT NULL, id TEXT NOT NULL, sender TEXT NOT NULL, message BLOB NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (chat, id))",
    KEYS[0],
];

/// A message's id is kept two days (WhatsApp redelivers for less).
pub const SEEN_TTL_MS: i64 = 2 * 86_400_000;
/// A received message is kept a day: its file for the gateway to fetch
/// (within minutes), its text for a reply to quote.
pub const RECEIVED_TTL_MS: i64 = 86_400_000;
/// The gateway retries a piece for minutes; a day is plenty.
pub const SENT_TTL_MS: i64 = 86_400_000;

pub fn open(sql: SqlStorage, now_ms: i64) -> worker::Result<Tables> {
    Tables::open(sql, MIGRATIONS, now_ms)
}

/// Keeps a received message (protobuf-encoded) by its chat and id.
pub fn keep_received(
    t: &Tables,
    chat: &str,
    id: &str,
    sender: &str,
    message: &[u8],
    now: i64,
) -> worker::Result<()> {
    t.exec(
        "DELETE FROM received WHERE at < ?",
        vec![(now - RECEIVED_TTL_MS).into()],
    )?;
    t.exec(
        "INSERT OR REPLACE INTO received (chat, id, sender, message, at) VALUES (?, ?, ?, ?, ?)",
        vec![
            chat.into(),
            id.into(),
            sender.into(),
            SqlStorageValue::Blob(message.to_vec()),
            now.into(),
        ],
    )
}

/// A received message: who sent it and its protobuf bytes.
pub fn received(t: &Tables, chat: &str, id: &str) -> worker::Result<Option<(String, Vec<u8>)>> {
    let rows = t
        .sql()
        .exec(
            "SELECT sender, message FROM received WHERE chat = ? AND id = ?",
            vec![chat.into(), id.into()],
        )?
        .raw()
        .collect::<worker::Result<Vec<_>>>()?;
    let row = rows.into_iter().next().map(|r| {
        let mut values = r.into_iter();
        (values.next(), values.next())
    });
    Ok(match row {
        Some((Some(SqlStorageValue::String(sender)), Some(SqlStorageValue::Blob(bytes)))) => {
            Some((sender, bytes))
        }
        _ => None,
    })
}

/// Forgets the linked device: its keys, sessions and app state.
pub fn forget_keys(t: &Tables) -> worker::Result<()> {
    let names = t
        .sql()
        .exec(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'wa\\_%' ESCAPE '\\'",
            None,
        )?
        .raw()
        .collect::<worker::Result<Vec<_>>>()?;
    for row in names {
        if let Some(worker::SqlStorageValue::String(name)) = row.into_iter().next() {
            t.exec(&format!("DELETE FROM \"{name}\""), vec![])?;
        }
    }
    t.exec("DELETE FROM received", vec![])
}
