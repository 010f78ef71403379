//! The Gateway's channel tables and every statement over them: the channel
//! accounts it has heard of, inbound message ids already taken (chat apps
//! redeliver), senders waiting for pairing, runs whose answer goes back to
//! a chat, the delivery ledger, and each agent's last active chat.

use super::super::sql_store::SqlStore;
use crate::channels::pairing::PendingPair;
use crate::channels::run_check::FIRST_CHECK_MS;
use crate::worker::rpc::internal_error;
use gsv_protocol::channels::{
    ChannelAccountStatus, ChannelAction, ChannelPeer, DeliveryState, OutboundMedia,
};
use gsv_protocol::ErrorShape;
use serde::Deserialize;
use worker::{SqlStorage, SqlStorageValue};

type Res<T> = std::result::Result<T, ErrorShape>;

pub const MIGRATION: &str = "
    CREATE TABLE channel_accounts (channel TEXT NOT NULL, account_id TEXT NOT NULL, status TEXT,
        connected_at INTEGER, last_message_at INTEGER, PRIMARY KEY (channel, account_id));
    CREATE TABLE channel_inbound_seen (channel TEXT NOT NULL, account_id TEXT NOT NULL, message_id TEXT NOT NULL,
        seen_at INTEGER NOT NULL, PRIMARY KEY (channel, account_id, message_id));
    CREATE TABLE pairing_requests (channel TEXT NOT NULL, account_id TEXT NOT NULL, sender_id TEXT NOT NULL,
        sender_name TEXT, peer_id TEXT NOT NULL, code TEXT NOT NULL, created_at INTEGER NOT NULL,
        PRIMARY KEY (channel, account_id, sender_id));
    CREATE TABLE channel_runs (run_id TEXT PRIMARY KEY, channel TEXT NOT NULL, account_id TEXT NOT NULL,
        peer TEXT NOT NULL, reply_to TEXT, session_key TEXT NOT NULL, started_at INTEGER NOT NULL,
        typing_at INTEGER, parts INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE deliveries (key TEXT PRIMARY KEY, dest TEXT NOT NULL, channel TEXT NOT NULL, account_id TEXT NOT NULL,
        peer TEXT NOT NULL, text TEXT NOT NULL, reply_to TEXT, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
        next_at INTEGER NOT NULL, message_id TEXT, error TEXT, created_at INTEGER NOT NULL);
    CREATE INDEX deliveries_pending ON deliveries (status, dest);
    CREATE TABLE last_active (agent_id TEXT PRIMARY KEY, channel TEXT NOT NULL, account_id TEXT NOT NULL,
        peer TEXT NOT NULL, session_key TEXT NOT NULL, at INTEGER NOT NULL)";

/// Delivery receipts (WhatsApp's `statuses`): the best one a piece got
/// and when, found by the platform's message id; and receipts that came
/// before the send's own answer had named the message (a platform may
/// report `delivered` while the gateway still awaits its channel).
pub const RECEIPTS_MIGRATION: &str = "
    ALTER TABLE deliveries ADD COLUMN receipt TEXT;
    ALTER TABLE deliveries ADD COLUMN receipt_at INTEGER;
    CREATE INDEX deliveries_by_message ON deliveries (channel, account_id, message_id);
    CREATE TABLE early_receipts (channel TEXT NOT NULL, account_id TEXT NOT NULL, message_id TEXT NOT NULL,
        receipt TEXT NOT NULL, error TEXT, at INTEGER NOT NULL)";

/// Files going out: a piece may carry files (`OutboundMedia` JSON).
pub const MEDIA_MIGRATION: &str = "ALTER TABLE deliveries ADD COLUMN media TEXT";

/// Buttons on a piece (`ChannelAction` JSON), for a channel that has them.
pub const ACTIONS_MIGRATION: &str = "ALTER TABLE deliveries ADD COLUMN actions TEXT";

/// When the gateway next asks a chat's run's session how it stands
/// (`check_at`): an answer whose event it missed is still delivered.
pub const OUTCOME_CHECK_MIGRATION: &str = "ALTER TABLE channel_runs ADD COLUMN check_at INTEGER";

/// Receipts for messages the ledger does not (yet) know are kept this long.
pub const EARLY_RECEIPT_TTL_MS: i64 = 3_600_000;

/// Inbound ids are remembered this long (platforms redeliver within minutes).
pub const SEEN_TTL_MS: i64 = 24 * 3_600_000;
/// Sent pieces stay in the ledger this long, for retries to find them.
pub const SENT_TTL_MS: i64 = 24 * 3_600_000;

/// The rowids of each queue's head: its oldest pending piece. A queue's
/// deadline is its head's: the pieces behind a head that waits for a retry
/// are "due" but cannot go (counting them made the alarm fire without
/// pause while a head waited).
macro_rules! heads {
    () => {
        "SELECT MIN(rowid) FROM deliveries WHERE status = 'pending' GROUP BY dest"
    };
}

/// A query of `channel_runs` rows as `ChannelRun` reads them, `$rest`
/// after the table (one column list, made at compile time).
macro_rules! run_select {
    ($rest:literal) => {
        concat!(
            "SELECT run_id, channel, account_id, peer, reply_to, started_at, parts, session_key FROM channel_runs ",
            $rest
        )
    };
}

/// A run whose answer goes back to the chat it came from.
#[derive(Debug, Clone, Deserialize)]
pub struct ChannelRun {
    pub run_id: String,
    pub channel: String,
    pub account_id: String,
    peer: String,
    /// The inbound message the first piece answers, until one was sent.
    pub reply_to: Option<String>,
    pub started_at: i64,
    /// Pieces of text sent for the run so far (partial answers included).
    pub parts: i64,
    /// The session the run is in (its media may go with the answer).
    #[serde(default)]
    pub session_key: String,
}

impl ChannelRun {
    pub fn peer(&self) -> Res<ChannelPeer> {
        serde_json::from_str(&self.peer).map_err(internal_error)
    }
}

/// One piece of text in the ledger.
#[derive(Debug, Clone, Deserialize)]
pub struct DeliveryRow {
    pub key: String,
    pub channel: String,
    pub account_id: String,
    peer: String,
    pub text: String,
    pub reply_to: Option<String>,
    pub attempts: i64,
    pub next_at: i64,
    media: Option<String>,
    actions: Option<String>,
}

impl DeliveryRow {
    pub fn peer(&self) -> Res<ChannelPeer> {
        serde_json::from_str(&self.peer).map_err(internal_error)
    }

    /// The files the piece carries.
    pub fn media(&self) -> Res<Vec<OutboundMedia>> {
        match &self.media {
            Some(json) => serde_json::from_str(json).map_err(internal_error),
            None => Ok(Vec::new()),
        }
    }

    /// The buttons the piece carries.
    pub fn actions(&self) -> Res<Vec<ChannelAction>> {
        match &self.actions {
            Some(json) => serde_json::from_str(json).map_err(internal_error),
            None => Ok(Vec::new()),
        }
    }
}

/// A list as stored: JSON, or NULL when empty.
fn json_unless_empty<T: serde::Serialize>(items: &[T]) -> Res<Option<String>> {
    match items.is_empty() {
        true => Ok(None),
        false => serde_json::to_string(items)
            .map(Some)
            .map_err(internal_error),
    }
}

/// `delivered`, `read`, … as stored.
fn state_name(state: DeliveryState) -> String {
    serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A piece the platform took, found by its message id.
#[derive(Debug, Clone, Deserialize)]
pub struct SentPiece {
    pub key: String,
    pub status: String,
    receipt: Option<String>,
}

impl SentPiece {
    pub fn receipt(&self) -> Option<DeliveryState> {
        self.receipt
            .as_deref()
            .and_then(|r| serde_json::from_value(serde_json::Value::String(r.into())).ok())
    }
}

/// Where pieces go, one queue each (pieces to one chat keep their order).
pub fn dest_key(channel: &str, account_id: &str, peer_id: &str) -> String {
    format!("{channel}\u{1f}{account_id}\u{1f}{peer_id}")
}

#[derive(Debug, Clone, Deserialize)]
pub struct AccountRow {
    pub channel: String,
    pub account_id: String,
    status: Option<String>,
    pub connected_at: Option<i64>,
    pub last_message_at: Option<i64>,
}

impl AccountRow {
    pub fn status(&self) -> Option<ChannelAccountStatus> {
        self.status
            .as_deref()
            .and_then(|s| serde_json::from_str(s).ok())
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct LastActive {
    pub channel: String,
    pub account_id: String,
    peer: String,
}

impl LastActive {
    pub fn peer(&self) -> Res<ChannelPeer> {
        serde_json::from_str(&self.peer).map_err(internal_error)
    }
}

#[derive(Deserialize)]
struct PairRow {
    channel: String,
    account_id: String,
    sender_id: String,
    sender_name: Option<String>,
    peer_id: String,
    code: String,
    created_at: i64,
}

pub struct ChannelStore {
    sql: SqlStorage,
}

impl SqlStore for ChannelStore {
    fn sql(&self) -> &SqlStorage {
        &self.sql
    }
}

impl ChannelStore {
    pub fn new(sql: SqlStorage) -> Self {
        Self { sql }
    }

    // --- accounts ----------------------------------------------------------

    pub fn touch_account(&self, channel: &str, account_id: &str, now: i64) -> Res<()> {
        self.exec(
            "INSERT INTO channel_accounts (channel, account_id, last_message_at) VALUES (?, ?, ?)
             ON CONFLICT(channel, account_id) DO UPDATE SET last_message_at = excluded.last_message_at",
            vec![channel.into(), account_id.into(), now.into()],
        )?;
        Ok(())
    }

    /// Records what a channel said of an account; `connected_at` is set
    /// when it turns connected and kept while it stays so.
    pub fn save_status(&self, channel: &str, status: &ChannelAccountStatus, now: i64) -> Res<()> {
        let json = serde_json::to_string(status).map_err(internal_error)?;
        let connected = status.connected.then_some(now);
        self.exec(
            "INSERT INTO channel_accounts (channel, account_id, status, connected_at) VALUES (?, ?, ?, ?)
             ON CONFLICT(channel, account_id) DO UPDATE SET status = excluded.status,
             connected_at = CASE WHEN excluded.connected_at IS NULL THEN NULL
                                 ELSE COALESCE(channel_accounts.connected_at, excluded.connected_at) END",
            vec![channel.into(), status.account_id.as_str().into(), json.into(), connected.into()],
        )?;
        Ok(())
    }

    /// `save_status` for an account the registry holds only: a status asked
    /// of a channel (which may still list accounts it stopped, or one it
    /// refused to start) brings no account back.
    pub fn update_status(&self, channel: &str, status: &ChannelAccountStatus, now: i64) -> Res<()> {
        let json = serde_json::to_string(status).map_err(internal_error)?;
        let connected = status.connected.then_some(now);
        self.exec(
            "UPDATE channel_accounts SET status = ?,
             connected_at = CASE WHEN ? IS NULL THEN NULL ELSE COALESCE(connected_at, ?) END
             WHERE channel = ? AND account_id = ?",
            vec![
                json.into(),
                connected.into(),
                connected.into(),
                channel.into(),
                status.account_id.as_str().into(),
            ],
        )?;
        Ok(())
    }

    pub fn forget_account(&self, channel: &str, account_id: &str) -> Res<()> {
        self.exec(
            "DELETE FROM channel_accounts WHERE channel = ? AND account_id = ?",
            vec![channel.into(), account_id.into()],
        )?;
        Ok(())
    }

    pub fn accounts(&self) -> Res<Vec<AccountRow>> {
        self.rows(
            "SELECT channel, account_id, status, connected_at, last_message_at FROM channel_accounts ORDER BY channel, account_id",
            vec![],
        )
    }

    /// Failed pieces of an account and the last failure's reason.
    pub fn failures(&self, channel: &str, account_id: &str) -> Res<(u64, Option<String>)> {
        #[derive(Deserialize)]
        struct Row {
            n: i64,
            error: Option<String>,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT COUNT(*) AS n, (SELECT error FROM deliveries WHERE channel = ?1 AND account_id = ?2 AND status = 'failed'
                ORDER BY next_at DESC LIMIT 1) AS error
             FROM deliveries WHERE channel = ?1 AND account_id = ?2 AND status = 'failed'",
            vec![channel.into(), account_id.into()],
        )?;
        Ok(rows
            .into_iter()
            .next()
            .map_or((0, None), |r| (r.n as u64, r.error)))
    }

    // --- inbound ids ---------------------------------------------------------

    /// Whether an inbound message was taken already (its session has it,
    /// or it needed no session).
    pub fn was_taken(&self, channel: &str, account_id: &str, message_id: &str) -> Res<bool> {
        Ok(self.count(
            "SELECT COUNT(*) AS n FROM channel_inbound_seen WHERE channel = ? AND account_id = ? AND message_id = ?",
            vec![channel.into(), account_id.into(), message_id.into()],
        )? > 0)
    }

    /// Records an inbound message as taken: only once its session stored
    /// it (or it needed none), so a hand-over that failed is tried again.
    pub fn mark_taken(
        &self,
        channel: &str,
        account_id: &str,
        message_id: &str,
        now: i64,
    ) -> Res<()> {
        self.exec(
            "DELETE FROM channel_inbound_seen WHERE seen_at < ?",
            vec![(now - SEEN_TTL_MS).into()],
        )?;
        self.exec(
            "INSERT INTO channel_inbound_seen (channel, account_id, message_id, seen_at) VALUES (?, ?, ?, ?)
             ON CONFLICT DO NOTHING",
            vec![channel.into(), account_id.into(), message_id.into(), now.into()],
        )?;
        Ok(())
    }

    // --- pairing ---------------------------------------------------------------

    pub fn pending_pairs(&self) -> Res<Vec<PendingPair>> {
        let rows: Vec<PairRow> = self.rows(
            "SELECT channel, account_id, sender_id, sender_name, peer_id, code, created_at FROM pairing_requests ORDER BY created_at",
            vec![],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| PendingPair {
                channel: r.channel,
                account_id: r.account_id,
                sender_id: r.sender_id,
                sender_name: r.sender_name,
                peer_id: r.peer_id,
                code: r.code,
                created_at_ms: r.created_at,
            })
            .collect())
    }

    pub fn drop_expired_pairs(&self, before_ms: i64) -> Res<()> {
        self.exec(
            "DELETE FROM pairing_requests WHERE created_at <= ?",
            vec![before_ms.into()],
        )?;
        Ok(())
    }

    pub fn save_pair(&self, p: &PendingPair) -> Res<()> {
        self.exec(
            "INSERT INTO pairing_requests (channel, account_id, sender_id, sender_name, peer_id, code, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT(channel, account_id, sender_id) DO UPDATE SET code = excluded.code,
             created_at = excluded.created_at, sender_name = excluded.sender_name, peer_id = excluded.peer_id",
            vec![
                p.channel.as_str().into(),
                p.account_id.as_str().into(),
                p.sender_id.as_str().into(),
                p.sender_name.clone().into(),
                p.peer_id.as_str().into(),
                p.code.as_str().into(),
                p.created_at_ms.into(),
            ],
        )?;
        Ok(())
    }

    pub fn delete_pair(&self, p: &PendingPair) -> Res<()> {
        self.exec(
            "DELETE FROM pairing_requests WHERE channel = ? AND account_id = ? AND sender_id = ?",
            vec![
                p.channel.as_str().into(),
                p.account_id.as_str().into(),
                p.sender_id.as_str().into(),
            ],
        )?;
        Ok(())
    }

    // --- runs answered in a chat -----------------------------------------------

    #[allow(clippy::too_many_arguments)]
    pub fn save_run(
        &self,
        run_id: &str,
        channel: &str,
        account_id: &str,
        peer: &ChannelPeer,
        reply_to: Option<&str>,
        session_key: &str,
        now: i64,
        typing_at: Option<i64>,
    ) -> Res<()> {
        let peer = serde_json::to_string(peer).map_err(internal_error)?;
        self.exec(
            "INSERT INTO channel_runs (run_id, channel, account_id, peer, reply_to, session_key, started_at, typing_at, check_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(run_id) DO NOTHING",
            vec![
                run_id.into(),
                channel.into(),
                account_id.into(),
                peer.into(),
                reply_to.map(str::to_string).into(),
                session_key.into(),
                now.into(),
                typing_at.into(),
                (now + FIRST_CHECK_MS).into(),
            ],
        )?;
        Ok(())
    }

    pub fn run(&self, run_id: &str) -> Res<Option<ChannelRun>> {
        let rows: Vec<ChannelRun> =
            self.rows(run_select!("WHERE run_id = ?"), vec![run_id.into()])?;
        Ok(rows.into_iter().next())
    }

    /// The chat session `key` is answering now (its latest channel run),
    /// if it is answering one.
    pub fn chat_of_session(&self, key: &str) -> Res<Option<gsv_protocol::cron::JobChat>> {
        let rows: Vec<ChannelRun> = self.rows(
            run_select!("WHERE session_key = ? ORDER BY started_at DESC LIMIT 1"),
            vec![key.into()],
        )?;
        rows.into_iter()
            .next()
            .map(|r| {
                Ok(gsv_protocol::cron::JobChat {
                    peer: r.peer()?,
                    channel: r.channel,
                    account_id: r.account_id,
                })
            })
            .transpose()
    }

    /// Counts `pieces` sent for the run; the reply target is used up.
    pub fn add_parts(&self, run_id: &str, pieces: i64) -> Res<()> {
        self.exec(
            "UPDATE channel_runs SET parts = parts + ?, reply_to = NULL WHERE run_id = ?",
            vec![pieces.into(), run_id.into()],
        )?;
        Ok(())
    }

    pub fn end_run(&self, run_id: &str) -> Res<()> {
        self.exec(
            "DELETE FROM channel_runs WHERE run_id = ?",
            vec![run_id.into()],
        )?;
        Ok(())
    }

    /// Runs whose session is due to be asked how they stand; with `all`,
    /// every run (after a restart, whatever was missed meanwhile).
    pub fn runs_to_check(&self, now: i64, all: bool) -> Res<Vec<ChannelRun>> {
        self.rows(
            run_select!("WHERE ?2 OR (check_at IS NOT NULL AND check_at <= ?1)"),
            vec![now.into(), i64::from(all).into()],
        )
    }

    /// The session's chat runs begun before `started_at` and not yet let
    /// go (their ends unheard), oldest first.
    pub fn runs_before(
        &self,
        session_key: &str,
        started_at: i64,
        run_id: &str,
    ) -> Res<Vec<ChannelRun>> {
        self.rows(
            run_select!(
                "WHERE session_key = ? AND started_at <= ? AND run_id != ? ORDER BY started_at"
            ),
            vec![session_key.into(), started_at.into(), run_id.into()],
        )
    }

    pub fn set_check_at(&self, run_id: &str, at: i64) -> Res<()> {
        self.exec(
            "UPDATE channel_runs SET check_at = ? WHERE run_id = ?",
            vec![at.into(), run_id.into()],
        )?;
        Ok(())
    }

    /// Answers owed to an account's chats: runs going on or whose end was
    /// not yet delivered.
    pub fn owed_answers(&self, channel: &str, account_id: &str) -> Res<u64> {
        Ok(self.count(
            "SELECT COUNT(*) AS n FROM channel_runs WHERE channel = ? AND account_id = ?",
            vec![channel.into(), account_id.into()],
        )? as u64)
    }

    /// Pieces of an account waiting in the ledger to be sent or retried.
    pub fn pending_pieces(&self, channel: &str, account_id: &str) -> Res<u64> {
        Ok(self.count(
            "SELECT COUNT(*) AS n FROM deliveries WHERE channel = ? AND account_id = ? AND status = 'pending'",
            vec![channel.into(), account_id.into()],
        )? as u64)
    }

    /// Runs whose typing indicator is due for renewal.
    pub fn typing_due(&self, now: i64) -> Res<Vec<ChannelRun>> {
        self.rows(
            run_select!("WHERE typing_at IS NOT NULL AND typing_at <= ?"),
            vec![now.into()],
        )
    }

    pub fn set_typing_at(&self, run_id: &str, at: Option<i64>) -> Res<()> {
        self.exec(
            "UPDATE channel_runs SET typing_at = ? WHERE run_id = ?",
            vec![at.into(), run_id.into()],
        )?;
        Ok(())
    }

    // --- the delivery ledger -----------------------------------------------------

    /// Adds a piece to its chat's queue (in insertion order: the rowid); a
    /// key already there (the same piece again) is left as it is.
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue(
        &self,
        key: &str,
        channel: &str,
        account_id: &str,
        peer: &ChannelPeer,
        text: &str,
        reply_to: Option<&str>,
        media: &[OutboundMedia],
        actions: &[ChannelAction],
        now: i64,
    ) -> Res<()> {
        let peer_json = serde_json::to_string(peer).map_err(internal_error)?;
        let media_json = json_unless_empty(media)?;
        let actions_json = json_unless_empty(actions)?;
        self.exec(
            "INSERT INTO deliveries (key, dest, channel, account_id, peer, text, reply_to, status, next_at, created_at, media, actions)
             VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?) ON CONFLICT(key) DO NOTHING",
            vec![
                key.into(),
                dest_key(channel, account_id, &peer.id).into(),
                channel.into(),
                account_id.into(),
                peer_json.into(),
                text.into(),
                reply_to.map(str::to_string).into(),
                now.into(),
                now.into(),
                media_json.into(),
                actions_json.into(),
            ],
        )?;
        Ok(())
    }

    /// The oldest piece still to send to `dest` (due or not: later pieces
    /// wait for it, so a chat reads them in order).
    pub fn head(&self, dest: &str) -> Res<Option<DeliveryRow>> {
        let rows: Vec<DeliveryRow> = self.rows(
            "SELECT key, channel, account_id, peer, text, reply_to, attempts, next_at, media, actions FROM deliveries
             WHERE dest = ? AND status = 'pending' ORDER BY rowid LIMIT 1",
            vec![dest.into()],
        )?;
        Ok(rows.into_iter().next())
    }

    /// Queues whose head is due now. Only a head counts: the pieces behind
    /// it wait for it, due or not.
    pub fn due_dests(&self, now: i64) -> Res<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            dest: String,
        }
        let rows: Vec<Row> = self.rows(
            concat!(
                "SELECT dest FROM deliveries WHERE rowid IN (",
                heads!(),
                ") AND next_at <= ?"
            ),
            vec![now.into()],
        )?;
        Ok(rows.into_iter().map(|r| r.dest).collect())
    }

    pub fn mark_sent(&self, key: &str, message_id: Option<&str>, now: i64) -> Res<()> {
        self.exec(
            "UPDATE deliveries SET status = 'sent', message_id = ?, attempts = attempts + 1, next_at = ?, error = NULL WHERE key = ?",
            vec![message_id.map(str::to_string).into(), now.into(), key.into()],
        )?;
        self.exec(
            "DELETE FROM deliveries WHERE status = 'sent' AND next_at < ?",
            vec![(now - SENT_TTL_MS).into()],
        )?;
        Ok(())
    }

    /// A failed attempt: tried again at `retry_at`, or failed for good.
    pub fn mark_attempt_failed(
        &self,
        key: &str,
        error: &str,
        retry_at: Option<i64>,
        now: i64,
    ) -> Res<()> {
        let (status, next) = match retry_at {
            Some(at) => ("pending", at),
            None => ("failed", now),
        };
        self.exec(
            "UPDATE deliveries SET status = ?, attempts = attempts + 1, next_at = ?, error = ? WHERE key = ?",
            vec![status.into(), next.into(), error.into(), key.into()],
        )?;
        Ok(())
    }

    /// The piece sent to `channel`/`account_id` as the platform's `message_id`.
    pub fn sent_piece(
        &self,
        channel: &str,
        account_id: &str,
        message_id: &str,
    ) -> Res<Option<SentPiece>> {
        let rows: Vec<SentPiece> = self.rows(
            "SELECT key, status, receipt FROM deliveries WHERE channel = ? AND account_id = ? AND message_id = ?",
            vec![channel.into(), account_id.into(), message_id.into()],
        )?;
        Ok(rows.into_iter().next())
    }

    /// Keeps a receipt for a message the ledger does not know yet.
    pub fn keep_early_receipt(
        &self,
        channel: &str,
        account_id: &str,
        message_id: &str,
        receipt: DeliveryState,
        error: Option<&str>,
        at: i64,
    ) -> Res<()> {
        self.exec(
            "DELETE FROM early_receipts WHERE at < ?",
            vec![(at - EARLY_RECEIPT_TTL_MS).into()],
        )?;
        self.exec(
            "INSERT INTO early_receipts (channel, account_id, message_id, receipt, error, at) VALUES (?, ?, ?, ?, ?, ?)",
            vec![
                channel.into(),
                account_id.into(),
                message_id.into(),
                state_name(receipt).into(),
                error.map(str::to_string).into(),
                at.into(),
            ],
        )?;
        Ok(())
    }

    /// The receipts that came for `message_id` before it was known, in
    /// the order they came; taken out of the table.
    pub fn take_early_receipts(
        &self,
        channel: &str,
        account_id: &str,
        message_id: &str,
    ) -> Res<Vec<(DeliveryState, Option<String>, i64)>> {
        #[derive(Deserialize)]
        struct Row {
            receipt: String,
            error: Option<String>,
            at: i64,
        }
        let bindings = || -> Vec<SqlStorageValue> {
            vec![channel.into(), account_id.into(), message_id.into()]
        };
        let rows: Vec<Row> = self.rows(
            "SELECT receipt, error, at FROM early_receipts WHERE channel = ? AND account_id = ? AND message_id = ? ORDER BY rowid",
            bindings(),
        )?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        self.exec(
            "DELETE FROM early_receipts WHERE channel = ? AND account_id = ? AND message_id = ?",
            bindings(),
        )?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let state = serde_json::from_value(serde_json::Value::String(r.receipt)).ok()?;
                Some((state, r.error, r.at))
            })
            .collect())
    }

    /// The platform delivered the piece (or it was read): it is sent,
    /// whatever an earlier receipt said.
    pub fn set_receipt(&self, key: &str, receipt: DeliveryState, at: i64) -> Res<()> {
        self.exec(
            "UPDATE deliveries SET receipt = ?, receipt_at = ?, status = 'sent', error = NULL WHERE key = ?",
            vec![state_name(receipt).into(), at.into(), key.into()],
        )?;
        Ok(())
    }

    /// The platform gave up on a piece it had accepted.
    pub fn fail_after_send(&self, key: &str, error: &str, now: i64) -> Res<()> {
        self.exec(
            "UPDATE deliveries SET status = 'failed', error = ?, next_at = ? WHERE key = ?",
            vec![error.into(), now.into(), key.into()],
        )?;
        Ok(())
    }

    /// Pieces of an account still in the ledger (the last day) that
    /// reached the person, and of those the ones read.
    pub fn receipts(&self, channel: &str, account_id: &str) -> Res<(u64, u64)> {
        #[derive(Deserialize)]
        struct Row {
            delivered: Option<i64>,
            read: Option<i64>,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT SUM(receipt IN ('delivered', 'read')) AS delivered, SUM(receipt = 'read') AS read
             FROM deliveries WHERE channel = ? AND account_id = ? AND status = 'sent'",
            vec![channel.into(), account_id.into()],
        )?;
        Ok(rows.into_iter().next().map_or((0, 0), |r| {
            (
                r.delivered.unwrap_or(0).max(0) as u64,
                r.read.unwrap_or(0).max(0) as u64,
            )
        }))
    }

    /// A piece's status (`pending`, `sent`, `failed`) and last error.
    pub fn outcome(&self, key: &str) -> Res<Option<(String, Option<String>)>> {
        #[derive(Deserialize)]
        struct Row {
            status: String,
            error: Option<String>,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT status, error FROM deliveries WHERE key = ?",
            vec![key.into()],
        )?;
        Ok(rows.into_iter().next().map(|r| (r.status, r.error)))
    }

    // --- last active chat ------------------------------------------------------

    pub fn save_last_active(
        &self,
        agent_id: &str,
        channel: &str,
        account_id: &str,
        peer: &ChannelPeer,
        session_key: &str,
        now: i64,
    ) -> Res<()> {
        let peer = serde_json::to_string(peer).map_err(internal_error)?;
        self.exec(
            "INSERT INTO last_active (agent_id, channel, account_id, peer, session_key, at) VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT(agent_id) DO UPDATE SET channel = excluded.channel, account_id = excluded.account_id,
             peer = excluded.peer, session_key = excluded.session_key, at = excluded.at",
            vec![agent_id.into(), channel.into(), account_id.into(), peer.into(), session_key.into(), now.into()],
        )?;
        Ok(())
    }

    pub fn last_active(&self, agent_id: &str) -> Res<Option<LastActive>> {
        let rows: Vec<LastActive> = self.rows(
            "SELECT channel, account_id, peer FROM last_active WHERE agent_id = ?",
            vec![agent_id.into()],
        )?;
        Ok(rows.into_iter().next())
    }

    /// Whether a reply in the agent's last active chat is still being
    /// written: a run of that chat's session, started at or after `since`
    /// (an older one is taken to have died with its isolate).
    pub fn last_chat_replying(&self, agent_id: &str, since: i64) -> Res<bool> {
        Ok(self.count(
            "SELECT COUNT(*) AS n FROM channel_runs r JOIN last_active l ON r.session_key = l.session_key
             WHERE l.agent_id = ? AND r.started_at >= ?",
            vec![agent_id.into(), since.into()],
        )? > 0)
    }

    /// The earliest moment the channel plane has work: a piece due, a
    /// typing renewal.
    pub fn next_deadline(&self) -> Option<f64> {
        #[derive(Deserialize)]
        struct Next {
            at: Option<f64>,
        }
        self.sql
            .exec(
                concat!(
                    "SELECT MIN(at) AS at FROM (
                       SELECT MIN(next_at) AS at FROM deliveries WHERE rowid IN (",
                    heads!(),
                    ")
                       UNION ALL SELECT MIN(typing_at) FROM channel_runs
                       UNION ALL SELECT MIN(check_at) FROM channel_runs)"
                ),
                None,
            )
            .and_then(|c| c.one::<Next>())
            .ok()
            .and_then(|n| n.at)
    }
}
