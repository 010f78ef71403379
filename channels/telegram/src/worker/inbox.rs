//! What Telegram delivered (by webhook or poll), on its way to the
//! gateway: each update taken once (by its bot and `update_id`), stored as
//! a call owed to the gateway before Telegram hears back, then handed over
//! oldest first from the durable inbox (`gsv_channel_worker::inbox`); the
//! alarm retries while the gateway is away.

use super::account_do::{now_ms, TelegramAccount};
use super::bot_client::{self, api_base};
use super::store::SEEN_TTL_MS;
use crate::account::Mode;
use crate::api::answer_callback_query;
use crate::inbound::{handle, Bot, Handled};
use crate::schedule::{Deadline, INBOX_RETRY_MS};
use crate::update::Update;
use crate::CHANNEL_ID;
use gsv_channel_worker::inbox::{self, Flushed};
use gsv_channel_worker::tables::Tables;
use gsv_protocol::channels::*;
use serde_json::Value;
use worker::*;

impl TelegramAccount {
    /// An update by webhook (its secret already checked): stored before
    /// Telegram gets its 200. An account not taking webhooks now (stopped,
    /// or polling) drops it: answered 200 all the same, or Telegram would
    /// send it again and again.
    pub(super) async fn webhook_update(&self, store: &Tables, body: &str) -> Result<()> {
        let account = self.current().unwrap_or_default();
        if !account.started || account.mode != Some(Mode::Webhook) {
            console_log!(
                "telegram: an update came by webhook while the account does not take them; dropped"
            );
            return Ok(());
        }
        let update = match serde_json::from_str::<Value>(body) {
            Ok(u) => u,
            Err(e) => {
                console_error!("telegram: an update that is not JSON was dropped: {e}");
                return Ok(());
            }
        };
        if self.accept(store, update).await? {
            self.arm(store).await;
        }
        Ok(())
    }

    /// Takes one update: a message is stored for the gateway, a pressed
    /// button answered (and its answer stored), an edit counted. Whether
    /// something now waits in the inbox.
    pub(super) async fn accept(&self, store: &Tables, update: Value) -> Result<bool> {
        let account = self.current().unwrap_or_default();
        let (Some(account_id), Some(bot_id)) = (self.account.id(), account.bot_id) else {
            return Ok(false);
        };
        let Some(update_id) = update.get("update_id").and_then(Value::as_i64) else {
            console_error!("telegram: an update without an update_id was dropped");
            return Ok(false);
        };
        let now = now_ms();
        // Update ids count per bot: a new token's bot starts again.
        if !store.first_sight(&format!("{bot_id}:{update_id}"), now, SEEN_TTL_MS)? {
            console_log!("telegram: update {update_id} came again; taken once already");
            return Ok(false);
        }
        let update: Update = match serde_json::from_value(update) {
            Ok(u) => u,
            Err(e) => {
                console_error!("telegram: update {update_id} could not be read: {e}");
                return Ok(false);
            }
        };
        let bot = Bot {
            id: bot_id,
            username: account.bot_username.clone(),
        };
        let (message, query) = match handle(update, &bot, now) {
            Handled::Message(m) => (Some(m), None),
            Handled::Callback { query_id, message } => (message, Some(query_id)),
            Handled::Edited => {
                self.update(|a| a.edited_ignored += 1);
                (None, None)
            }
            Handled::Skip(why) => {
                console_log!("telegram: skipped {why}");
                (None, None)
            }
        };
        // Stored with the update's id, before anything is awaited.
        let stored = match message {
            Some(message) => {
                let call = ChannelInboundParams {
                    channel: CHANNEL_ID.into(),
                    account_id,
                    message: *message,
                };
                store.enqueue(ChannelInboundParams::PATH, &serde_json::to_string(&call)?)?;
                store.set_deadline(&Deadline::Inbox.kind(), now, None)?;
                self.update(|a| a.last_activity = Some(now));
                true
            }
            None => false,
        };
        // Telegram shows a spinner on the button until this answer.
        if let (Some(query), Some(token)) = (query, self.token()) {
            let answer = answer_callback_query(&query);
            if let Err(e) = bot_client::call::<bool>(&api_base(&self.env), &token, &answer).await {
                console_error!(
                    "telegram: answering button press {query} failed: {}",
                    e.message
                );
            }
        }
        Ok(stored)
    }

    /// Hands the owed calls to the gateway, oldest first; the inbox's
    /// deadline tries again while some remain.
    pub(super) async fn flush(&self, store: &Tables) {
        let inbox = Deadline::Inbox.kind();
        let settled = match inbox::flush(&self.env, store, &self.flushing, CHANNEL_ID).await {
            Flushed::Busy => Ok(()),
            Flushed::Pending => store.set_deadline(&inbox, now_ms() + INBOX_RETRY_MS, None),
            Flushed::Empty => store.clear_deadline(&inbox),
        };
        if let Err(e) = settled {
            console_error!("telegram: scheduling the inbox failed: {e}");
        }
    }
}
