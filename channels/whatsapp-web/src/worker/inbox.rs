//! What WhatsApp delivered, on its way to the gateway: each decrypted
//! message taken once (by chat, sender and id), stored as a call owed to
//! the gateway, then read-receipted; the owed calls go to the gateway
//! oldest first (`gsv_channel_worker::inbox`), the alarm retrying.
//!
//! The client acks a message to WhatsApp when it has decrypted it, a tick
//! before the event reaches the object's task and the message is stored
//! (no `await` between): a crash in that tick loses it. whatsapp-rust's
//! inbound durability hook, which defers the ack until the consumer has
//! stored the message, cannot be used on wasm32 in 0.7.0: its builder
//! probes the backend with `std::process::id()`, which panics there.

use super::account_do::{now_ms, Inner};
use super::alarm::{Deadline, INBOX_RETRY_MS};
use super::tables::{self, SEEN_TTL_MS};
use crate::inbound::{normalize, Envelope, Me, Normalized};
use crate::CHANNEL_ID;
use gsv_channel_worker::inbox::{self, Flushed};
use gsv_protocol::channels::{ChannelInboundParams, InternalCall};
use std::rc::Rc;
use std::sync::Arc;
use whatsapp_rust::prelude::*;
use whatsapp_rust::waproto::buffa::Message as _;
use worker::{console_error, console_log};

fn envelope(info: &MessageInfo) -> Envelope {
    Envelope {
        id: info.id.to_string(),
        chat: info.source.chat.to_string(),
        sender: info.source.sender.to_string(),
        sender_alt: info.source.sender_alt.as_ref().map(|j| j.to_string()),
        from_me: info.source.is_from_me,
        push_name: info.push_name.clone(),
        timestamp: info.timestamp.timestamp(),
    }
}

impl Inner {
    /// A batch of messages: stored for the gateway, then marked read and
    /// handed over.
    pub fn on_messages(self: &Rc<Self>, client: Arc<Client>, batch: &[InboundMessage]) {
        let taken = match self.take(batch) {
            Ok(taken) => taken,
            Err(e) => {
                console_error!(
                    "whatsapp-web: storing {} message(s) failed: {e}",
                    batch.len()
                );
                return;
            }
        };
        log::debug!("inbox: {} message(s) taken", batch.len());
        // Read receipts: the agent has the messages.
        for (chat, sender, id) in taken {
            let client = client.clone();
            wasm_bindgen_futures::spawn_local(async move {
                let sender = sender.as_ref();
                if let Err(e) = client.mark_as_read(&chat, sender, &[id.as_str()]).await {
                    console_log!("whatsapp-web: a read receipt was not sent: {e}");
                }
            });
        }
        self.flush_taken();
    }

    /// Stores the batch's messages for the gateway (each once); those that
    /// address the agent, to mark read. All of it is written without an `await`, so the
    /// object commits it together.
    fn take(&self, batch: &[InboundMessage]) -> worker::Result<Vec<(Jid, Option<Jid>, String)>> {
        let (Some(store), Some((account_id, account))) = (&self.store, self.account.get()) else {
            return Err(worker::Error::RustError(
                "the account's storage is not open".into(),
            ));
        };
        let me = Me {
            phone: account
                .phone
                .as_deref()
                .map(|p| p.trim_start_matches('+').to_string()),
            lid: account.lid,
        };
        let now = now_ms();
        let mut read = Vec::new();
        let mut stored = 0;
        for m in batch {
            let env = envelope(&m.info);
            let key = format!("{}|{}|{}", env.chat, env.sender, env.id);
            if !store.first_sight(&key, now, SEEN_TTL_MS)? {
                console_log!(
                    "whatsapp-web: message {} came again; taken once already",
                    env.id
                );
                continue;
            }
            let media_ref = format!("{}/{}", env.chat, env.id);
            match normalize(&m.message, &env, &me, &media_ref) {
                Normalized::Skip(why) => console_log!("whatsapp-web: skipped: {why}"),
                Normalized::Message(message) => {
                    // Kept for a reply's quote and the gateway's file fetch.
                    let bytes = m.message.encode_to_vec();
                    tables::keep_received(store, &env.chat, &env.id, &env.sender, &bytes, now)?;
                    stored += 1;
                    let addresses_agent =
                        message.was_mentioned || message.is_reply_to_bot == Some(true);
                    let call = ChannelInboundParams {
                        channel: CHANNEL_ID.into(),
                        account_id: account_id.clone(),
                        message: *message,
                    };
                    store.enqueue(ChannelInboundParams::PATH, &serde_json::to_string(&call)?)?;
                    // The number is the user's own: only what addresses the
                    // agent is marked read (group chatter stays unread on
                    // the user's phone).
                    if addresses_agent {
                        let group_sender =
                            m.info.source.is_group.then(|| m.info.source.sender.clone());
                        read.push((m.info.source.chat.clone(), group_sender, env.id.clone()));
                    }
                }
            }
        }
        if stored > 0 {
            store.set_deadline(&Deadline::Inbox.kind(), now, None)?;
            self.update(|a| a.last_activity = Some(now));
        }
        Ok(read)
    }

    /// Hands the owed calls to the gateway, oldest first; the inbox's
    /// deadline tries again while some remain. Whether that deadline moved
    /// later (a retry), which the alarm must then be set for.
    pub async fn flush(&self) -> bool {
        let Some(store) = &self.store else {
            return false;
        };
        let kind = Deadline::Inbox.kind();
        log::debug!("inbox: handing over to the gateway");
        let flushed = inbox::flush(&self.env, store, &self.flushing, CHANNEL_ID).await;
        log::debug!("inbox: handed over ({flushed:?})");
        let settled = match flushed {
            Flushed::Busy => Ok(false),
            Flushed::Pending => store
                .set_deadline(&kind, now_ms() + INBOX_RETRY_MS, None)
                .map(|()| true),
            Flushed::Empty => store.clear_deadline(&kind).map(|()| false),
        };
        settled.unwrap_or_else(|e| {
            console_error!("whatsapp-web: scheduling the inbox failed: {e}");
            true
        })
    }

    /// Flushes on the object's loop, then sets the alarm (after a connect:
    /// a login starts the account without setting it).
    pub fn flush_soon(self: &Rc<Self>) {
        let inner = self.clone();
        wasm_bindgen_futures::spawn_local(async move {
            inner.flush().await;
            inner.arm().await;
        });
    }

    /// Flushes what a batch stored, on the object's loop, without holding
    /// up the caller (the client's receive pipeline waits on the hook). The
    /// alarm is set again only for a retry: when all was handed over, the
    /// alarm a started account always has (its keep-alive, or an earlier
    /// deadline) stays right, and setting it again cost each message a
    /// storage call and a keep-alive write while the answer was on its way.
    /// A crash before the hand-over leaves the inbox's deadline due, which
    /// that alarm runs.
    fn flush_taken(self: &Rc<Self>) {
        let inner = self.clone();
        wasm_bindgen_futures::spawn_local(async move {
            if inner.flush().await {
                inner.arm().await;
            }
        });
    }
}
