//! The channel plane: chat-app accounts, inbound ids already taken,
//! pairing, runs answered in a chat, the delivery ledger and each agent's
//! last active chat. Its state and its store are its own; the rest of
//! the Gateway reaches them through the methods here and the request
//! handlers in its files.

mod channels;
mod inbound;
mod outbound;
mod store;

use super::Gateway;
use gsv_protocol::channels::ChannelPeer;
use gsv_protocol::cron::JobChat;
use gsv_protocol::ErrorShape;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use store::ChannelStore;

pub(super) use store::{
    ACTIONS_MIGRATION, MEDIA_MIGRATION, MIGRATION, OUTCOME_CHECK_MIGRATION, RECEIPTS_MIGRATION,
};

/// A chat an answer goes to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ChatTarget {
    pub channel: String,
    pub account_id: String,
    pub peer: ChannelPeer,
}

impl ChatTarget {
    pub fn label(&self) -> String {
        format!("{}:{}", self.channel, self.peer.id)
    }
}

/// The channel plane's state in this instance.
#[derive(Default)]
pub(super) struct ChannelPlane {
    /// Chat queues being sent right now (one pump each).
    pumping: RefCell<HashSet<String>>,
    /// The key channel Workers present (`Gateway::channel_key`).
    key: OnceCell<Option<String>>,
    /// This instance asked after every chat run once (outbound.rs): a
    /// restart may have missed their ends.
    runs_checked: Cell<bool>,
    /// The longest text each channel said one send takes, once asked.
    text_limits: RefCell<HashMap<String, usize>>,
}

/// A queue being pumped; the queue is free again when this is dropped,
/// however the pump ends (a future dropped midway included).
struct Pumping<'a> {
    queues: &'a RefCell<HashSet<String>>,
    dest: String,
}

impl Drop for Pumping<'_> {
    fn drop(&mut self) {
        self.queues.borrow_mut().remove(&self.dest);
    }
}

impl ChannelPlane {
    /// Claims `dest`'s queue for one pump; `None` when one is running.
    fn start_pump(&self, dest: &str) -> Option<Pumping<'_>> {
        self.pumping
            .borrow_mut()
            .insert(dest.to_string())
            .then(|| Pumping {
                queues: &self.pumping,
                dest: dest.to_string(),
            })
    }
}

impl Gateway {
    fn channel_store(&self) -> ChannelStore {
        ChannelStore::new(self.state.storage().sql())
    }

    /// The channel plane's earliest deadline: deliveries, typing
    /// renewals, chat runs to ask after.
    pub(super) fn channel_deadline(&self) -> Option<f64> {
        self.channel_store().next_deadline()
    }

    /// The chat a session answers in, if it is a chat's session.
    pub(super) fn chat_of_session(&self, key: &str) -> Result<Option<JobChat>, ErrorShape> {
        self.channel_store().chat_of_session(key)
    }

    /// The agent replies in a chat whose run started after `since`.
    pub(super) fn chat_replying(&self, agent_id: &str, since: i64) -> Result<bool, ErrorShape> {
        self.channel_store().last_chat_replying(agent_id, since)
    }

    /// Sends `text` to `target` through the delivery ledger; `source_id`
    /// names it so a retry adds nothing. The error says why it failed.
    pub(super) async fn deliver_to(
        &self,
        target: &ChatTarget,
        source_id: &str,
        text: &str,
    ) -> Option<String> {
        match self
            .send_text(
                &target.channel,
                &target.account_id,
                &target.peer,
                source_id,
                text,
                None,
            )
            .await
        {
            Ok(sent) => sent.failed,
            Err(e) => Some(e.message),
        }
    }

    /// The agent's last active chat, if it has one.
    pub(super) fn last_chat(&self, agent_id: &str) -> Option<ChatTarget> {
        let last = self.channel_store().last_active(agent_id).ok()??;
        Some(ChatTarget {
            peer: last.peer().ok()?,
            channel: last.channel,
            account_id: last.account_id,
        })
    }
}
