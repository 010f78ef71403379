//! The object's one alarm, set to its earliest deadline: the inbox's next
//! try, typing renewals, and the keep-alive that re-opens the socket after
//! the object was evicted (a linked device must stay online to get its
//! messages; the client's own pings and reconnects run while it lives).

use super::account_do::{now_ms, Inner};
use crate::account::Link;
use std::rc::Rc;
use worker::*;

/// The inbox waits this long after the gateway did not take a call.
pub const INBOX_RETRY_MS: i64 = 5_000;
/// How often a started account checks that its client runs.
pub const KEEPALIVE_MS: i64 = 30_000;
/// WhatsApp shows "typing…" for about 25 s after a `composing`: renewed
/// well before.
pub const TYPING_RENEW_MS: i64 = 10_000;
/// A run that never said it stopped typing stops after this.
pub const TYPING_MAX_MS: i64 = 120_000;

/// Why the object wakes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deadline {
    /// Hand the stored messages to the gateway.
    Inbox,
    /// Make sure the client runs.
    Keepalive,
    /// Renew "typing…" in a chat (its JID).
    Typing(String),
}

impl Deadline {
    pub fn kind(&self) -> String {
        match self {
            Self::Inbox => "inbox".into(),
            Self::Keepalive => "keepalive".into(),
            Self::Typing(jid) => format!("typing:{jid}"),
        }
    }
}

impl Inner {
    /// Runs what is due, then sets the alarm to the next deadline.
    pub async fn run_due(self: &Rc<Self>) {
        let Some(store) = &self.store else {
            return;
        };
        let now = now_ms();
        if matches!(store.due(now, "inbox"), Ok(due) if !due.is_empty()) {
            self.flush().await;
        }
        if let Ok(due) = store.due(now, "typing:") {
            for d in due {
                let jid = d.kind.trim_start_matches("typing:").to_string();
                self.renew_typing(&jid, d.until_ms.is_some_and(|u| u <= now))
                    .await;
            }
        }
        let account = self.current().unwrap_or_default();
        if account.started && matches!(account.link, Link::Linked | Link::Connecting) {
            // Re-opens the socket after an eviction; a running client keeps
            // itself connected.
            self.connect(None).await;
        }
        self.arm().await;
    }

    /// Sets the alarm to the earliest deadline, or clears it. A started
    /// account always has its keep-alive.
    pub async fn arm(&self) {
        let Some(store) = &self.store else {
            return;
        };
        let account = self.current().unwrap_or_default();
        let keepalive = Deadline::Keepalive.kind();
        let kept = match account.started && account.link != Link::LoggedOut {
            true => store.set_deadline(&keepalive, now_ms() + KEEPALIVE_MS, None),
            false => store.clear_deadline(&keepalive),
        };
        if let Err(e) = kept {
            console_error!("whatsapp-web: setting the keep-alive failed: {e}");
        }
        let storage = self.state.storage();
        let set = match store.next_deadline("") {
            Ok(Some(at)) => {
                let date = js_sys::Date::new(&(at as f64).into());
                storage.set_alarm(ScheduledTime::new(date)).await
            }
            Ok(None) => storage.delete_alarm().await,
            Err(e) => Err(e),
        };
        if let Err(e) = set {
            console_error!("whatsapp-web: setting the alarm failed: {e}");
        }
    }
}
