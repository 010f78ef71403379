//! What Meta delivered, on its way to the gateway: each message and
//! receipt stored once (Meta redelivers), then handed over oldest first;
//! the alarm retries while the gateway is away.

use super::account_do::{now_ms, Accept, WhatsAppAccount};
use super::store::Store;
use crate::CHANNEL_ID;
use gsv_channel_worker::inbox::{self, Flushed};
use gsv_protocol::channels::*;
use worker::*;

/// How soon the alarm tries again while the gateway owes an answer.
const RETRY_MS: i64 = 10_000;

impl WhatsAppAccount {
    /// Stores what is new in a batch as calls owed to the gateway (durable
    /// before Meta gets its 200); a stopped account drops it. How many
    /// messages and receipts were new.
    pub(super) async fn accept(&self, store: &Store, a: Accept) -> Result<usize> {
        let account = self.current().unwrap_or_default();
        if !account.started {
            console_log!(
                "whatsapp: account {} is stopped; dropping {} message(s) and {} receipt(s) for {}",
                a.account_id,
                a.batch.messages.len(),
                a.batch.receipts.len(),
                a.batch.phone_number_id
            );
            return Ok(0);
        }
        let now = now_ms();
        let mut taken = 0;
        for message in a.batch.messages {
            if !store.first_sight(&message.message_id, now)? {
                console_log!(
                    "whatsapp: {} was delivered again; taken once already",
                    message.message_id
                );
                continue;
            }
            store.note_peer(
                &message.peer.id,
                &message.message_id,
                message.timestamp.unwrap_or(now),
            )?;
            let call = ChannelInboundParams {
                channel: CHANNEL_ID.into(),
                account_id: a.account_id.clone(),
                message,
            };
            store.enqueue(ChannelInboundParams::PATH, &serde_json::to_string(&call)?)?;
            taken += 1;
        }
        for r in a.batch.receipts {
            // Meta took a piece whose send's answer may have been lost:
            // the gateway's retry of it is answered without a second send.
            if let (Some(key), true) = (&r.tracking, r.state != DeliveryState::Failed) {
                store.remember_sent(key, &r.message_id, now)?;
                store.note_tracked_receipt(now)?;
            }
            let state = serde_json::to_value(r.state)?;
            if !store.first_sight(
                &format!("{}:{}", r.message_id, state.as_str().unwrap_or_default()),
                now,
            )? {
                continue;
            }
            let call = ChannelDeliveryParams {
                channel: CHANNEL_ID.into(),
                account_id: a.account_id.clone(),
                message_id: r.message_id,
                state: r.state,
                timestamp: r.timestamp,
                error: r.error,
            };
            store.enqueue(ChannelDeliveryParams::PATH, &serde_json::to_string(&call)?)?;
            taken += 1;
        }
        if taken > 0 {
            self.touch(now);
            // The backstop, should the flush after Meta's 200 not happen.
            self.set_alarm(now + RETRY_MS).await;
        }
        Ok(taken)
    }

    /// Hands the owed calls to the gateway, oldest first
    /// (`gsv_channel_worker::inbox`); the alarm tries again while some remain.
    pub(super) async fn flush(&self, store: &Store) {
        match inbox::flush(&self.env, store, &self.flushing, CHANNEL_ID).await {
            Flushed::Busy => {}
            Flushed::Pending => self.set_alarm(now_ms() + RETRY_MS).await,
            Flushed::Empty => {
                if let Err(e) = self.state.storage().delete_alarm().await {
                    console_error!("whatsapp: clearing the alarm failed: {e}");
                }
            }
        }
    }

    async fn set_alarm(&self, at: i64) {
        let date = js_sys::Date::new(&(at as f64).into());
        if let Err(e) = self
            .state
            .storage()
            .set_alarm(ScheduledTime::new(date))
            .await
        {
            console_error!("whatsapp: setting the alarm failed: {e}");
        }
    }
}
