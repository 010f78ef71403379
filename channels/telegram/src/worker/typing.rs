//! Typing: "typing…" in a chat (and its forum topic) while the agent
//! works, renewed every 4 s from the object's alarm (a deadline per chat,
//! `schedule`), until the gateway turns it off, an answer goes to the chat,
//! or it runs out. During a long poll, which holds the alarm, the
//! renewals run beside the poll.

use super::account_do::{now_ms, TelegramAccount};
use super::bot_client::{self, api_base};
use crate::api;
use crate::outbound::{self, Target};
use crate::schedule::{typing_next, Deadline, TYPING_MAX_MS, TYPING_RENEW_MS};
use gsv_channel_worker::tables::Tables;
use gsv_protocol::channels::*;
use std::time::Duration;
use worker::*;

impl TelegramAccount {
    /// Typing on: "typing…" now, renewed by the alarm every 4 s until it
    /// is turned off, an answer goes to the chat, or it runs out.
    pub(super) async fn typing(&self, p: ChannelTypingParams) -> OkResult {
        let fail = |e: String| OkResult {
            ok: false,
            error: Some(e),
        };
        let target = match outbound::target(&p.peer, None) {
            Ok(t) => t,
            Err(e) => return fail(e),
        };
        if !p.typing {
            self.stop_typing(&target).await;
            return OkResult {
                ok: true,
                error: None,
            };
        }
        let (Some(token), Some(store)) = (self.token(), &self.store) else {
            return fail("the account is not started".into());
        };
        let now = now_ms();
        let kind = typing_kind(&target);
        if let Err(e) = store.set_deadline(&kind, now + TYPING_RENEW_MS, Some(now + TYPING_MAX_MS))
        {
            return fail(format!("keeping typing's deadline failed: {e}"));
        }
        self.arm(store).await;
        let call = api::typing(&target.chat, target.thread);
        match bot_client::call::<bool>(&api_base(&self.env), &token, &call).await {
            Ok(_) => OkResult {
                ok: true,
                error: None,
            },
            Err(e) => fail(e.message),
        }
    }

    pub(super) async fn stop_typing(&self, target: &Target) {
        if let Some(store) = &self.store {
            if let Err(e) = store.clear_deadline(&typing_kind(target)) {
                console_error!("telegram: clearing typing failed: {e}");
            }
            self.arm(store).await;
        }
    }

    /// "typing…" again in each chat whose renewal is due, until it runs out.
    pub(super) async fn renew_typing(&self, store: &Tables) {
        let now = now_ms();
        let due = match store.due(now, "typing:") {
            Ok(due) => due,
            Err(e) => return console_error!("telegram: reading typing renewals failed: {e}"),
        };
        let token = self.token();
        for d in due {
            let next = typing_next(now, d.until_ms.unwrap_or(now));
            let kept = match next {
                Some(at) => store.set_deadline(&d.kind, at, d.until_ms),
                None => store.clear_deadline(&d.kind),
            };
            if let Err(e) = kept {
                console_error!("telegram: keeping typing's deadline failed: {e}");
            }
            let (Some(Deadline::Typing { chat, thread }), Some(_), Some(token)) =
                (Deadline::parse(&d.kind), next, &token)
            else {
                continue;
            };
            let call = api::typing(&chat, thread);
            if let Err(e) = bot_client::call::<bool>(&api_base(&self.env), token, &call).await {
                console_log!("telegram: typing in {chat} failed: {}", e.message);
            }
        }
    }

    /// Renews typing while a poll waits, until the poll ends (dropped then).
    pub(super) async fn renew_typing_meanwhile(&self, store: &Tables) {
        loop {
            let now = now_ms();
            // Checked every second: a chat may start typing meanwhile.
            let wait = match store.next_deadline("typing:") {
                Ok(Some(at)) => (at - now).clamp(0, 1_000),
                _ => 1_000,
            };
            if wait > 0 {
                Delay::from(Duration::from_millis(wait as u64)).await;
            }
            self.renew_typing(store).await;
        }
    }
}

fn typing_kind(target: &Target) -> String {
    Deadline::Typing {
        chat: target.chat.clone(),
        thread: target.thread,
    }
    .kind()
}
