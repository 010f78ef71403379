//! The account's sends: text through the Graph API (once per idempotency
//! key), the read receipt with typing, and what a refused token does to
//! the account.

use super::account_do::{now_ms, WhatsAppAccount};
use super::gateway_client;
use super::graph_client::{self, api_base};
use crate::graph::{self, mark_read_with_typing, send_text, succeeded};
use crate::phone::to_wa_id;
use crate::CHANNEL_ID;
use gsv_protocol::channels::*;
use worker::*;

fn send_failed(error: String, retryable: bool) -> ChannelSendResult {
    ChannelSendResult {
        ok: false,
        message_id: None,
        error: Some(error),
        retryable: Some(retryable),
    }
}

impl WhatsAppAccount {
    /// One text to a DM: Meta's message id, or why not in plain words.
    pub(super) async fn send(&self, p: ChannelSendParams) -> ChannelSendResult {
        let Some((account_id, account)) = self.account.borrow().clone() else {
            return send_failed(
                "the account is not started: gsv channel start whatsapp".into(),
                false,
            );
        };
        if !account.started {
            return send_failed(
                format!("the account {account_id} is stopped: gsv channel start whatsapp --account {account_id}"),
                false,
            );
        }
        let msg = &p.message;
        if msg.peer.kind != PeerKind::Dm {
            return send_failed("WhatsApp groups are not handled: only DMs".into(), false);
        }
        let (Some(phone), Some(token)) = (
            account.phone_number_id.clone(),
            account.token(self.env_token().as_deref()),
        ) else {
            return send_failed(
                "the account has no phone number id or access token".into(),
                false,
            );
        };
        let key = msg.idempotency_key.as_deref().filter(|k| !k.is_empty());
        // A retry of a piece Meta already took: the same answer, not a second message.
        if let (Some(store), Some(key)) = (&self.store, key) {
            if let Ok(Some(id)) = store.sent_id(key) {
                return ChannelSendResult {
                    ok: true,
                    message_id: Some(id),
                    error: None,
                    retryable: None,
                };
            }
        }
        let request = match send_text(
            &phone,
            &to_wa_id(&msg.peer.id),
            &msg.text,
            msg.reply_to_id.as_deref(),
        ) {
            Ok(r) => r,
            Err(e) => return send_failed(e.message, e.retryable),
        };
        let answer = match graph_client::call(&api_base(&self.env), &token, &request).await {
            Ok((status, body)) => graph::sent_message_id(status, &body),
            Err(e) => return send_failed(e, true),
        };
        match answer {
            Ok(id) => {
                let now = now_ms();
                if let (Some(store), Some(key)) = (&self.store, key) {
                    if let Err(e) = store.remember_sent(key, &id, now) {
                        console_error!("whatsapp: remembering sent {id} failed: {e}");
                    }
                }
                self.touch(now);
                ChannelSendResult {
                    ok: true,
                    message_id: Some(id),
                    error: None,
                    retryable: None,
                }
            }
            Err(e) => {
                if e.token_refused {
                    self.token_refused(&e.message).await;
                }
                send_failed(e.message, e.retryable)
            }
        }
    }

    /// Typing on: the chat's last message is marked read and the typing
    /// indicator shows (until the answer, or 25 s). Off is a no-op: the
    /// answer clears it.
    pub(super) async fn typing(&self, p: ChannelTypingParams) -> OkResult {
        let fail = |e: String| OkResult {
            ok: false,
            error: Some(e),
        };
        if !p.typing {
            return OkResult {
                ok: true,
                error: None,
            };
        }
        let account = self.current().unwrap_or_default();
        let (Some(phone), Some(token), true) = (
            account.phone_number_id.clone(),
            account.token(self.env_token().as_deref()),
            account.started,
        ) else {
            return fail("the account is not started".into());
        };
        let last = self
            .store
            .as_ref()
            .and_then(|s| s.last_message(&p.peer.id).ok().flatten());
        let Some(message_id) = last else {
            return fail(
                "WhatsApp shows typing only in answer to a message, and this chat has none".into(),
            );
        };
        let request = mark_read_with_typing(&phone, &message_id);
        match graph_client::call(&api_base(&self.env), &token, &request).await {
            Ok((status, body)) => match succeeded(status, &body) {
                Ok(()) => OkResult {
                    ok: true,
                    error: None,
                },
                Err(e) => fail(e.message),
            },
            Err(e) => fail(e),
        }
    }

    pub(super) fn touch(&self, now: i64) {
        // Cloned first: `save` borrows the cell mutably.
        let current = self.account.borrow().clone();
        if let Some((id, mut account)) = current {
            account.last_activity = Some(now);
            if let Err(e) = self.save(&id, account) {
                console_error!("whatsapp: saving the account failed: {e}");
            }
        }
    }

    /// Meta refused the token mid-flight: the account says so, and the
    /// gateway hears it.
    async fn token_refused(&self, error: &str) {
        let current = self.account.borrow().clone();
        let Some((id, mut account)) = current else {
            return;
        };
        account.authenticated = false;
        account.error = Some(error.to_string());
        let has_token = account.token(self.env_token().as_deref()).is_some();
        let status = account.status(&id, has_token);
        if let Err(e) = self.save(&id, account) {
            console_error!("whatsapp: saving the account failed: {e}");
        }
        let params = ChannelStatusParams {
            channel: CHANNEL_ID.into(),
            account_id: id,
            status,
        };
        gateway_client::report_status(&self.env, &params).await;
    }
}
