//! What the session promised its callers about chat messages: each chat
//! message taken once (`taken_messages`, by the gateway's inbound id, with
//! the answer it was given, so a retry of the hand-over gets the same
//! answer instead of a second run), and the end of each run that came from
//! a chat (`run_outcomes`: its final or error event, stored with the run's
//! end, so an answer whose event the gateway missed can still be asked
//! for). Both are kept for `KEEP_MS`.

use super::{Res, SessionError, SessionStore};
use crate::session::internal::SessionChatSendReply;
use gsv_protocol::ChatEvent;
use serde::Deserialize;

/// How long a taken message and a run's end are remembered: longer than
/// any channel keeps retrying a hand-over, or the gateway asks after a run.
pub const KEEP_MS: i64 = 7 * 24 * 3600 * 1000;

impl SessionStore {
    /// The run and the answer a chat message was taken with, if it was.
    pub fn taken(&self, inbound_id: &str) -> Res<Option<(String, SessionChatSendReply)>> {
        #[derive(Deserialize)]
        struct Row {
            run_id: String,
            reply: String,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT run_id, reply FROM taken_messages WHERE key = ?",
            vec![inbound_id.into()],
        )?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        let reply = serde_json::from_str(&row.reply).map_err(SessionError::storage)?;
        Ok(Some((row.run_id, reply)))
    }

    /// Records that a chat message was taken for `run_id` with `reply`
    /// (in the same synchronous step as what taking it stored).
    pub fn take_message(
        &self,
        inbound_id: &str,
        run_id: &str,
        reply: &SessionChatSendReply,
        now: i64,
    ) -> Res<()> {
        let reply = serde_json::to_string(reply).map_err(SessionError::storage)?;
        self.exec(
            "DELETE FROM taken_messages WHERE taken_at < ?",
            vec![(now - KEEP_MS).into()],
        )?;
        self.exec(
            "INSERT OR REPLACE INTO taken_messages (key, run_id, reply, taken_at) VALUES (?, ?, ?, ?)",
            vec![inbound_id.into(), run_id.into(), reply.into(), now.into()],
        )?;
        Ok(())
    }

    /// Stores how a run from a chat ended (its last event).
    pub fn save_outcome(&self, evt: &ChatEvent, now: i64) -> Res<()> {
        let Some(run_id) = evt.run_id.as_deref() else {
            return Ok(());
        };
        let body = serde_json::to_string(evt).map_err(SessionError::storage)?;
        self.exec(
            "DELETE FROM run_outcomes WHERE ended_at < ?",
            vec![(now - KEEP_MS).into()],
        )?;
        self.exec(
            "INSERT OR REPLACE INTO run_outcomes (run_id, event, ended_at) VALUES (?, ?, ?)",
            vec![run_id.into(), body.into(), now.into()],
        )?;
        Ok(())
    }

    /// How run `run_id` ended, if it did and came from a chat.
    pub fn outcome(&self, run_id: &str) -> Res<Option<ChatEvent>> {
        #[derive(Deserialize)]
        struct Row {
            event: String,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT event FROM run_outcomes WHERE run_id = ?",
            vec![run_id.into()],
        )?;
        rows.into_iter()
            .next()
            .map(|r| serde_json::from_str(&r.event).map_err(SessionError::storage))
            .transpose()
    }

    /// Whether `run_id` waits in the queue.
    pub fn is_queued(&self, run_id: &str) -> Res<bool> {
        Ok(self.count(
            "SELECT COUNT(*) AS n FROM run_queue WHERE run_id = ?",
            vec![run_id.into()],
        )? > 0)
    }
}
