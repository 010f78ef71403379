//! The `WhatsAppAccount` Durable Object: one per account (by name), plus
//! one named `_accounts` that lists the accounts and which phone-number id
//! is whose. An account's object takes its number's webhook deliveries
//! (each message and receipt once) and owes them to the gateway until it
//! takes them (`inbox.rs`), and sends through the Graph API
//! (`sending.rs`); here are its paths, its start and its stop.

use super::graph_client::{self, api_base};
use super::store::Store;
use super::ACCOUNTS;
use crate::account::{plan_start, Account};
use crate::graph::{self, phone_info};
use crate::webhook::Batch;
use gsv_channel_worker::internal_post;
use gsv_channel_worker::kept::Kept;
use gsv_channel_worker::status;
use gsv_protocol::channels::*;
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use worker::*;

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
    pub(super) state: State,
    pub(super) env: Env,
    pub(super) store: Option<Store>,
    /// The account this object serves and its state, once started.
    pub(super) account: Kept<Account>,
    pub(super) flushing: Cell<bool>,
}

pub(super) fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

fn ok() -> Result<Response> {
    Response::from_json(&status::ok())
}

fn refused(error: String) -> Result<Response> {
    Response::from_json(&status::refused(error))
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
        let account = Kept::load(store.as_deref());
        Self {
            state,
            env,
            store,
            account,
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
                    ACCOUNTS
                        .registry(&self.env)?
                        .fetch_with_request(release)
                        .await?;
                }
                self.save(&p.account_id, account)?;
                ok()
            }
            "/login" => Response::from_json(&ChannelLoginResult {
                ok: false,
                qr_data_url: None,
                qr: None,
                pair_code: None,
                linked: false,
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
            "/media/fetch" => self.fetch_media(serde_json::from_str(&body)?).await,
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
    pub(super) fn current(&self) -> Option<Account> {
        self.account.current()
    }

    pub(super) fn save(&self, account_id: &str, account: Account) -> Result<()> {
        self.account
            .save(self.store.as_deref(), account_id, account)
    }

    pub(super) fn env_token(&self) -> Option<String> {
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
        let mut answer = ACCOUNTS
            .registry(&self.env)?
            .fetch_with_request(internal_post("/register", claim)?)
            .await?;
        let claimed: OkResult = answer.json().await?;
        Ok((!claimed.ok).then(|| claimed.error.unwrap_or_default()))
    }
}
