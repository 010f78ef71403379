//! `MsgSecretStore`: the 32-byte secrets of messages, keyed by chat, sender
//! and message id, with a retention deadline and the parent's event time.

use async_trait::async_trait;
use wacore::store::error::Result;
use wacore::store::traits::{MsgSecretEntry, MsgSecretStore};

use super::sql::Sql;
use super::{tuples, SqlBackend};

/// On a key already stored, the merge of `merge_msg_secret_expiry` (`0`,
/// "never", wins, else the later deadline) and `merge_msg_secret_message_ts`
/// (the later parent time).
const UPSERT: &str = "ON CONFLICT (chat, sender, msg_id) DO UPDATE SET
    secret = excluded.secret,
    expires_at = CASE WHEN wa_msg_secrets.expires_at = 0 OR excluded.expires_at = 0 THEN 0
                      ELSE MAX(wa_msg_secrets.expires_at, excluded.expires_at) END,
    message_ts = MAX(wa_msg_secrets.message_ts, excluded.message_ts)";

#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
impl<S: Sql + Send + Sync> MsgSecretStore for SqlBackend<S> {
    /// Returns the number of entries given, as `InMemoryBackend` does.
    async fn put_msg_secrets(&self, entries: Vec<MsgSecretEntry>) -> Result<usize> {
        self.chunked(
            &[],
            &entries,
            6,
            |n| {
                format!(
                    "INSERT INTO wa_msg_secrets (chat, sender, msg_id, secret, expires_at, message_ts)
                     VALUES {} {UPSERT}",
                    tuples(0, n, 6)
                )
            },
            |e, p| {
                p.extend([
                    (*e.chat).into(),
                    (*e.sender).into(),
                    (*e.msg_id).into(),
                    e.secret.as_slice().into(),
                    e.expires_at.into(),
                    e.message_ts.into(),
                ]);
                Ok(())
            },
        )?;
        Ok(entries.len())
    }

    async fn get_msg_secret(
        &self,
        chat: &str,
        sender: &str,
        msg_id: &str,
    ) -> Result<Option<Vec<u8>>> {
        Ok(self
            .get_msg_secret_with_ts(chat, sender, msg_id)
            .await?
            .map(|(secret, _)| secret))
    }

    async fn get_msg_secret_with_ts(
        &self,
        chat: &str,
        sender: &str,
        msg_id: &str,
    ) -> Result<Option<(Vec<u8>, i64)>> {
        self.first(
            "SELECT secret, message_ts FROM wa_msg_secrets
             WHERE chat = ?1 AND sender = ?2 AND msg_id = ?3",
            &[chat.into(), sender.into(), msg_id.into()],
        )?
        .map(|row| Ok((row.blob(0)?, row.int(1)?)))
        .transpose()
    }

    async fn delete_expired_msg_secrets(&self, cutoff_timestamp: i64) -> Result<u32> {
        self.count(
            "DELETE FROM wa_msg_secrets WHERE expires_at != 0 AND expires_at <= ?1 RETURNING 1",
            &[cutoff_timestamp.into()],
        )
    }
}
