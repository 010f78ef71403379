//! The object's SQLite. An account's object keeps its state (one row of
//! `Account` as JSON), the ids of what Meta delivered (a redelivery is
//! taken once), the calls still owed to the gateway (oldest first), each
//! chat's last message (what a read receipt and typing point at) and the
//! ids of sent pieces (a retried piece is not sent twice). The registry
//! object (`_accounts`) lists the accounts and their phone-number ids.

use gsv_channel_worker::tables::Tables;
use serde::Deserialize;
use worker::SqlStorage;

const MIGRATIONS: &[&str] = &[
    "CREATE TABLE account (id INTEGER PRIMARY KEY CHECK (id = 1), account_id TEXT NOT NULL, state TEXT NOT NULL);
     CREATE TABLE accounts (account_id TEXT PRIMARY KEY, phone_number_id TEXT UNIQUE);
     CREATE TABLE seen (key TEXT PRIMARY KEY, at INTEGER NOT NULL);
     CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, body TEXT NOT NULL);
     CREATE TABLE peers (peer_id TEXT PRIMARY KEY, message_id TEXT NOT NULL, at INTEGER NOT NULL);
     CREATE TABLE sent (key TEXT PRIMARY KEY, message_id TEXT NOT NULL, at INTEGER NOT NULL)",
    // Sends begun whose outcome is not known yet (Meta may have taken
    // them): written before the call, cleared by its answer or a receipt.
    "CREATE TABLE attempts (key TEXT PRIMARY KEY, at INTEGER NOT NULL)",
];

/// Meta redelivers for up to 7 days; ids are kept a day longer.
const SEEN_TTL_MS: i64 = 8 * 86_400_000;
/// The gateway retries a piece for minutes; a day is plenty.
const SENT_TTL_MS: i64 = 86_400_000;

/// The shared tables (`gsv_channel_worker::tables`) and WhatsApp's own:
/// the registry's phone numbers, each chat's last message, sends whose
/// outcome is unknown.
pub struct Store(Tables);

impl std::ops::Deref for Store {
    type Target = Tables;
    fn deref(&self) -> &Tables {
        &self.0
    }
}

impl Store {
    pub fn open(sql: SqlStorage, now_ms: i64) -> worker::Result<Self> {
        Tables::open(sql, MIGRATIONS, now_ms).map(Self)
    }

    // --- the registry ----------------------------------------------------------

    /// Records `account_id` with its number; the account that already has
    /// the number, if another does.
    pub fn register(
        &self,
        account_id: &str,
        phone_number_id: &str,
    ) -> worker::Result<Option<String>> {
        if let Some(other) = self.route(phone_number_id)?.filter(|o| o != account_id) {
            return Ok(Some(other));
        }
        self.sql().exec(
            "INSERT INTO accounts (account_id, phone_number_id) VALUES (?, ?)
             ON CONFLICT (account_id) DO UPDATE SET phone_number_id = excluded.phone_number_id",
            vec![account_id.into(), phone_number_id.into()],
        )?;
        Ok(None)
    }

    /// The account keeps its place in the list but lets its number go.
    pub fn release(&self, account_id: &str) -> worker::Result<()> {
        self.sql().exec(
            "UPDATE accounts SET phone_number_id = NULL WHERE account_id = ?",
            vec![account_id.into()],
        )?;
        Ok(())
    }

    pub fn route(&self, phone_number_id: &str) -> worker::Result<Option<String>> {
        #[derive(Deserialize)]
        struct Row {
            account_id: String,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT account_id FROM accounts WHERE phone_number_id = ?",
            vec![phone_number_id.into()],
        )?;
        Ok(rows.into_iter().next().map(|r| r.account_id))
    }

    // --- what Meta delivered -----------------------------------------------------

    /// The newest message of a chat (read receipts and typing point at it).
    pub fn note_peer(&self, peer_id: &str, message_id: &str, at: i64) -> worker::Result<()> {
        self.sql().exec(
            "INSERT INTO peers (peer_id, message_id, at) VALUES (?, ?, ?)
             ON CONFLICT (peer_id) DO UPDATE SET message_id = excluded.message_id, at = excluded.at
             WHERE excluded.at >= peers.at",
            vec![peer_id.into(), message_id.into(), at.into()],
        )?;
        Ok(())
    }

    pub fn last_message(&self, peer_id: &str) -> worker::Result<Option<String>> {
        #[derive(Deserialize)]
        struct Row {
            message_id: String,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT message_id FROM peers WHERE peer_id = ?",
            vec![peer_id.into()],
        )?;
        Ok(rows.into_iter().next().map(|r| r.message_id))
    }

    // --- pieces sent ------------------------------------------------------------------

    /// The piece sent under `key`, with its Meta id; the send's outcome is known.
    pub fn remember_sent(&self, key: &str, message_id: &str, now: i64) -> worker::Result<()> {
        self.0.remember_sent(key, message_id, now, SENT_TTL_MS)?;
        self.end_attempt(key)
    }

    /// Records `key` (a message's or receipt's); false when Meta delivered it before.
    pub fn first_sight(&self, key: &str, now: i64) -> worker::Result<bool> {
        self.0.first_sight(key, now, SEEN_TTL_MS)
    }

    // --- sends whose outcome is unknown ------------------------------------------------

    /// When a send of `key` began whose outcome is not known, if one did.
    pub fn attempt_at(&self, key: &str) -> worker::Result<Option<i64>> {
        #[derive(Deserialize)]
        struct Row {
            at: i64,
        }
        let rows: Vec<Row> =
            self.rows("SELECT at FROM attempts WHERE key = ?", vec![key.into()])?;
        Ok(rows.into_iter().next().map(|r| r.at))
    }

    /// A send of `key` is about to be made (stored before the call).
    pub fn begin_attempt(&self, key: &str, now: i64) -> worker::Result<()> {
        self.sql().exec(
            "DELETE FROM attempts WHERE at < ?",
            vec![(now - SENT_TTL_MS).into()],
        )?;
        self.sql().exec(
            "INSERT OR REPLACE INTO attempts (key, at) VALUES (?, ?)",
            vec![key.into(), now.into()],
        )?;
        Ok(())
    }

    /// A receipt named its send by the piece's key (Meta echoes
    /// `biz_opaque_callback_data` to this account's webhook).
    pub fn note_tracked_receipt(&self, now: i64) -> worker::Result<()> {
        self.sql().exec(
            "INSERT OR REPLACE INTO seen (key, at) VALUES ('~tracked-receipt', ?)",
            vec![now.into()],
        )?;
        Ok(())
    }

    /// Whether receipts named their sends here lately (within the time
    /// delivery ids are kept).
    pub fn tracked_receipts_seen(&self, now: i64) -> worker::Result<bool> {
        #[derive(Deserialize)]
        struct Row {
            at: i64,
        }
        let rows: Vec<Row> =
            self.rows("SELECT at FROM seen WHERE key = '~tracked-receipt'", vec![])?;
        Ok(rows.first().is_some_and(|r| now - r.at < SEEN_TTL_MS))
    }

    /// The send's outcome is known (Meta answered, or a receipt came).
    pub fn end_attempt(&self, key: &str) -> worker::Result<()> {
        self.sql()
            .exec("DELETE FROM attempts WHERE key = ?", vec![key.into()])?;
        Ok(())
    }
}
