//! The object's one alarm, set to its earliest deadline (`schedule`): the
//! inbox's next try, typing renewals, and — without a webhook — the next
//! `getUpdates`. A long poll holds the alarm for up to
//! `TELEGRAM_POLL_TIMEOUT` seconds, so typing renewals due meanwhile run
//! beside it, and the alarm is set again at once after each poll.

use super::account_do::{now_ms, TelegramAccount};
use super::bot_client::{self, api_base};
use crate::account::Mode;
use crate::api::{self, get_updates};
use crate::schedule::{next_offset, poll_failed, poll_timeout_s, Deadline};
use futures::future::{select, Either};
use gsv_channel_worker::tables::Tables;
use serde_json::Value;
use worker::*;

/// An empty answer sooner than this was no long poll (a double, or
/// `TELEGRAM_POLL_TIMEOUT = "0"`): the next waits a little, not to spin.
const SHORT_POLL_MS: i64 = 1_000;
const SHORT_POLL_PAUSE_MS: i64 = 500;

impl TelegramAccount {
    /// Runs what is due, then sets the alarm to the next deadline.
    pub(super) async fn run_due(&self, store: &Tables) {
        let now = now_ms();
        if matches!(store.due(now, "inbox"), Ok(due) if !due.is_empty()) {
            self.flush(store).await;
        }
        self.renew_typing(store).await;
        if matches!(store.due(now, "poll"), Ok(due) if !due.is_empty()) {
            self.poll(store).await;
        }
        self.arm(store).await;
    }

    /// Sets the alarm to the earliest deadline, or clears it.
    pub(super) async fn arm(&self, store: &Tables) {
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
            console_error!("telegram: setting the alarm failed: {e}");
        }
    }

    /// One `getUpdates`: what came is taken (stored, then the offset moves
    /// past it) and handed to the gateway; the next poll is due at once,
    /// or after a failure's backoff.
    async fn poll(&self, store: &Tables) {
        let poll = Deadline::Poll.kind();
        if self.polling.replace(true) {
            return;
        }
        let (Some(account), Some(token)) = (self.current(), self.token()) else {
            self.polling.set(false);
            let _ = store.clear_deadline(&poll);
            return;
        };
        if account.mode != Some(Mode::Polling) {
            self.polling.set(false);
            let _ = store.clear_deadline(&poll);
            return;
        }
        let timeout = poll_timeout_s(
            self.env
                .var("TELEGRAM_POLL_TIMEOUT")
                .ok()
                .map(|v| v.to_string())
                .as_deref(),
        );
        let call = get_updates(account.offset, timeout);
        let base = api_base(&self.env);
        let started = now_ms();
        let asked = bot_client::call::<Vec<Value>>(&base, &token, &call);
        let answer = match select(
            Box::pin(asked),
            Box::pin(self.renew_typing_meanwhile(store)),
        )
        .await
        {
            Either::Left((answer, _)) => answer,
            Either::Right(((), _)) => unreachable_poll(),
        };
        self.polling.set(false);
        // Stopped, restarted with a webhook or another bot meanwhile: what
        // came is not taken (nor confirmed: Telegram keeps it).
        let now = self.current().unwrap_or_default();
        if !now.started || now.mode != Some(Mode::Polling) || now.bot_id != account.bot_id {
            return;
        }
        match answer {
            Ok(updates) => {
                let ids: Vec<i64> = updates
                    .iter()
                    .filter_map(|u| u.get("update_id").and_then(Value::as_i64))
                    .collect();
                let empty = updates.is_empty();
                for update in updates {
                    if let Err(e) = self.accept(store, update).await {
                        console_error!("telegram: storing an update failed: {e}");
                        // Not past it: the next poll asks for it again.
                        return self.poll_again(store, 1_000);
                    }
                }
                self.update(|a| {
                    a.offset = next_offset(a.offset, ids);
                    a.poll_failures = 0;
                    a.error = None;
                });
                let quick = now_ms() - started < SHORT_POLL_MS;
                self.poll_again(
                    store,
                    if empty && quick {
                        SHORT_POLL_PAUSE_MS
                    } else {
                        0
                    },
                );
                if !empty {
                    self.flush(store).await;
                }
            }
            Err(e) => {
                let failures = account.poll_failures.saturating_add(1);
                let failure = poll_failed(&e, failures);
                console_error!("telegram: {}", failure.error);
                self.update(|a| {
                    a.poll_failures = failures;
                    a.error = Some(failure.error.clone());
                    a.authenticated &= !e.token_refused();
                });
                match failure.retry_in_ms {
                    Some(ms) => self.poll_again(store, ms),
                    None => {
                        let _ = store.clear_deadline(&poll);
                    }
                }
                if e.token_refused() {
                    self.report_status().await;
                }
            }
        }
    }

    fn poll_again(&self, store: &Tables, in_ms: i64) {
        if let Err(e) = store.set_deadline(&Deadline::Poll.kind(), now_ms() + in_ms, None) {
            console_error!("telegram: scheduling the next poll failed: {e}");
        }
    }
}

/// The typing loop never ends by itself.
fn unreachable_poll() -> Result<Vec<Value>, api::ApiError> {
    Err(api::ApiError::unreached("the poll was dropped".into()))
}
