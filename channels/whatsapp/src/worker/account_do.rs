//! The `WhatsAppAccount` Durable Object: one per account (by name), plus
//! one named `_accounts` that lists the accounts and which phone-number id
//! is whose. An account's object takes its number's webhook deliveries
//! (each message and receipt once), owes them to the gateway until it
//! takes them (its alarm retries), and sends through the Graph API.

use super::gateway_client::{self, CallError};
use super::graph_client::{self, api_base};
use super::store::Store;
use super::{internal_post, registry, REGISTRY};
use crate::account::{plan_start, Account};
use crate::graph::{self, mark_read_with_typing, phone_info, send_text, succeeded};
use crate::phone::to_wa_id;
use crate::webhook::Batch;
use crate::CHANNEL_ID;
use gsv_protocol::channels::*;
use serde::{Deserialize, Serialize};
use std::cell::{Cell, RefCell};
use worker::*;

/// How soon the alarm tries again while the gateway owes an answer.
const RETRY_MS: i64 = 10_000;

/// `/register` (to the registry).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Register {
    pub account_id: String,
    pub phone_number_id: String,
}

/// `/accept`: one batch of a webhook delivery.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Accept {
    pub account_id: String,
    pub batch: Batch,
}

#[durable_object]
pub struct WhatsAppAccount {
    state: State,
    env: Env,
    store: Option<Store>,
    /// The account this object serves and its state, once started.
    account: RefCell<Option<(String, Account)>>,
    flushing: Cell<bool>,
}

fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

fn ok() -> Result<Response> {
    Response::from_json(&OkResult {
        ok: true,
        error: None,
    })
}

fn refused(error: String) -> Result<Response> {
    Response::from_json(&OkResult {
        ok: false,
        error: Some(error),
    })
}

fn send_failed(error: String, retryable: bool) -> ChannelSendResult {
    ChannelSendResult {
        ok: false,
        message_id: None,
        error: Some(error),
        retryable: Some(retryable),
    }
}

impl DurableObject for WhatsAppAccount {
    fn new(state: State, env: Env) -> Self {
        let store = match Store::open(state.storage().sql(), now_ms()) {
            Ok(s) => Some(s),
            Err(e) => {
                console_error!("whatsapp: opening storage failed: {e}");
                None
            }
        };
        let account = store.as_ref().and_then(|s| s.load().ok().flatten());
        Self {
            state,
            env,
            store,
            account: RefCell::new(account),
            flushing: Cell::new(false),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let body = req.text().await?;
        let Some(store) = &self.store else {
            return Response::error("the account's storage could not be opened", 500);
        };
        match req.path().as_str() {
            // The registry's paths.
            "/register" => {
                let r: Register = serde_json::from_str(&body)?;
                match store.register(&r.account_id, &r.phone_number_id)? {
                    None => ok(),
                    Some(other) => refused(format!(
                        "phone number id {} already belongs to account {other}: log that one out first",
                        r.phone_number_id
                    )),
                }
            }
            "/release" => {
                store.release(&body)?;
                ok()
            }
            "/route" => Response::from_json(&store.route(&body)?),
            "/accounts" => Response::from_json(&store.accounts()?),
            // An account's paths.
            "/start" => self.start(serde_json::from_str(&body)?).await,
            "/stop" | "/logout" => {
                let p: ChannelStopParams = serde_json::from_str(&body)?;
                let mut account = self.current().unwrap_or_default();
                account.started = false;
                account.error = None;
                if req.path() == "/logout" {
                    // Forget the token and let the number go.
                    account.access_token = None;
                    account.authenticated = false;
                    let release = internal_post("/release", p.account_id.clone())?;
                    registry(&self.env)?.fetch_with_request(release).await?;
                }
                self.save(&p.account_id, account)?;
                ok()
            }
            "/login" => Response::from_json(&ChannelLoginResult {
                ok: false,
                qr_data_url: None,
                message:
                    "WhatsApp Cloud API numbers log in with an access token: start the account \
                          with --access-token (or the WHATSAPP_ACCESS_TOKEN secret)"
                        .into(),
            }),
            "/status" => {
                let q: ChannelStatusQuery = serde_json::from_str(&body).unwrap_or_default();
                let id = q.account_id.unwrap_or_default();
                let account = self.current().unwrap_or_default();
                let has_token = account.token(self.env_token().as_deref()).is_some();
                Response::from_json(&ChannelStatusResult {
                    accounts: vec![account.status(&id, has_token)],
                })
            }
            "/send" => Response::from_json(&self.send(serde_json::from_str(&body)?).await),
            "/typing" => Response::from_json(&self.typing(serde_json::from_str(&body)?).await),
            "/accept" => {
                let a: Accept = serde_json::from_str(&body)?;
                let taken = self.accept(store, a).await?;
                Response::from_json(&taken)
            }
            "/flush" => {
                self.flush(store).await;
                ok()
            }
            _ => Response::error("Not found", 404),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        if let Some(store) = &self.store {
            self.flush(store).await;
        }
        Response::ok("")
    }
}

impl WhatsAppAccount {
    fn current(&self) -> Option<Account> {
        self.account.borrow().as_ref().map(|(_, a)| a.clone())
    }

    fn save(&self, account_id: &str, account: Account) -> Result<()> {
        if let Some(store) = &self.store {
            store.save(account_id, &account)?;
        }
        *self.account.borrow_mut() = Some((account_id.to_string(), account));
        Ok(())
    }

    fn env_token(&self) -> Option<String> {
        self.env
            .secret("WHATSAPP_ACCESS_TOKEN")
            .ok()
            .map(|s| s.to_string())
    }

    /// Settles the number and token, claims the number in the registry and
    /// asks Meta about it (which checks the token).
    async fn start(&self, p: ChannelStartParams) -> Result<Response> {
        let env_phone = self
            .env
            .var("WHATSAPP_PHONE_NUMBER_ID")
            .ok()
            .map(|v| v.to_string());
        let env_token = self.env_token();
        let plan = match plan_start(&p.config, env_phone.as_deref(), env_token.as_deref()) {
            Ok(plan) => plan,
            Err(e) => return refused(e),
        };
        let base = api_base(&self.env);
        let request = graph::phone_number(&plan.phone_number_id);
        let info = match graph_client::call(&base, &plan.token, &request).await {
            Ok((status, body)) => phone_info(status, &body).map_err(|e| e.message),
            Err(e) => Err(e),
        };
        let mut account = self.current().unwrap_or_default();
        account.phone_number_id = Some(plan.phone_number_id.clone());
        // The number is claimed once Meta knows it under this token.
        let info = match info {
            Ok(info) => self
                .claim(&p.account_id, &plan.phone_number_id)
                .await?
                .map_or(Ok(info), Err),
            Err(e) => Err(e),
        };
        let result = match info {
            Ok(info) => {
                if plan.given_token.is_some() {
                    account.access_token = plan.given_token;
                }
                account.started = true;
                account.authenticated = true;
                account.error = None;
                account.display_phone_number = info.display_phone_number;
                account.verified_name = info.verified_name;
                ok()
            }
            Err(e) => {
                account.started = false;
                account.authenticated = false;
                account.error = Some(e.clone());
                refused(e)
            }
        };
        self.save(&p.account_id, account)?;
        result
    }

    /// Claims the number for the account in the registry; why not, when
    /// another account has it.
    async fn claim(&self, account_id: &str, phone_number_id: &str) -> Result<Option<String>> {
        let claim = serde_json::to_string(&Register {
            account_id: account_id.to_string(),
            phone_number_id: phone_number_id.to_string(),
        })?;
        let mut answer = registry(&self.env)?
            .fetch_with_request(internal_post("/register", claim)?)
            .await?;
        let claimed: OkResult = answer.json().await?;
        Ok((!claimed.ok).then(|| claimed.error.unwrap_or_default()))
    }

    async fn send(&self, p: ChannelSendParams) -> ChannelSendResult {
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
    async fn typing(&self, p: ChannelTypingParams) -> OkResult {
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

    fn touch(&self, now: i64) {
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

    /// Stores what is new in a batch as calls owed to the gateway (durable
    /// before Meta gets its 200); a stopped account drops it. How many
    /// messages and receipts were new.
    async fn accept(&self, store: &Store, a: Accept) -> Result<usize> {
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

    /// Hands the owed calls to the gateway, oldest first; stops at the
    /// first it could not take (the alarm tries again).
    async fn flush(&self, store: &Store) {
        // One flush at a time, or two would post the same message.
        if self.flushing.replace(true) {
            return;
        }
        while let Ok(Some((id, path, body))) = store.oldest() {
            match gateway_client::post(&self.env, &path, &body).await {
                Ok(ack) if !ack.ok => console_error!(
                    "whatsapp: the gateway refused a call to {path}: {}",
                    ack.error.unwrap_or_default()
                ),
                Ok(_) => {}
                Err(CallError::Retry(e)) => {
                    console_error!(
                        "whatsapp: the gateway did not take a call to {path}, will retry: {e}"
                    );
                    break;
                }
                // Kept, it would hold back every later call for good.
                Err(CallError::Refused(e)) => {
                    console_error!(
                        "whatsapp: dropping a call to {path} the gateway cannot take: {e}"
                    )
                }
            }
            if let Err(e) = store.delivered(id) {
                console_error!("whatsapp: clearing a delivered call failed: {e}");
                break;
            }
        }
        self.flushing.set(false);
        let pending = matches!(store.oldest(), Ok(Some(_)));
        match pending {
            true => self.set_alarm(now_ms() + RETRY_MS).await,
            false => {
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

/// The registry's name is not an account's.
pub fn is_account_name(id: &str) -> bool {
    !id.is_empty() && id != REGISTRY
}
