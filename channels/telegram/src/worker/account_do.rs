//! The `TelegramAccount` Durable Object: one per account (by name), plus
//! one named `_accounts` that lists the accounts. An account's object
//! takes its bot's updates (each once: `inbox.rs`), owes them to the
//! gateway until it takes them, polls when there is no webhook
//! (`alarm.rs`), and sends (`sending.rs`); here are its paths, its start
//! and its stop.

use super::bot_client::{self, api_base};
use super::{store, ACCOUNTS};
use crate::account::{plan_start, token_refused, Account, Mode};
use crate::api::{self, Me};
use crate::schedule::Deadline;
use crate::webhook::{new_secret, secret_ok, SECRET_HEADER};
use gsv_channel_worker::internal_post;
use gsv_channel_worker::kept::Kept;
use gsv_channel_worker::status::{ok, refused};
use gsv_channel_worker::tables::Tables;
use gsv_protocol::channels::*;
use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use worker::*;

#[durable_object]
pub struct TelegramAccount {
    pub(super) state: State,
    pub(super) env: Env,
    pub(super) store: Option<Tables>,
    /// The account this object serves and its state, once started.
    pub(super) account: Kept<Account>,
    pub(super) flushing: Cell<bool>,
    pub(super) polling: Cell<bool>,
    /// The idempotency keys of sends waiting for Telegram's answer.
    pub(super) sending: RefCell<HashSet<String>>,
}

pub(super) fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

/// Random bytes from the platform's CSPRNG.
pub(super) fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    if let Err(e) = getrandom::fill(&mut bytes) {
        console_error!("telegram: no random bytes: {e}");
    }
    bytes
}

impl DurableObject for TelegramAccount {
    fn new(state: State, env: Env) -> Self {
        let store = match store::open(state.storage().sql(), now_ms()) {
            Ok(s) => Some(s),
            Err(e) => {
                console_error!("telegram: opening storage failed: {e}");
                None
            }
        };
        let account = Kept::load(store.as_ref());
        Self {
            state,
            env,
            store,
            account,
            flushing: Cell::new(false),
            polling: Cell::new(false),
            sending: RefCell::default(),
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
                store.register(&body)?;
                Response::from_json(&ok())
            }
            "/accounts" => Response::from_json(&store.accounts()?),
            // Telegram's, through the Worker.
            "/webhook" => {
                let presented = req.headers().get(SECRET_HEADER)?;
                let account = self.current().unwrap_or_default();
                if !secret_ok(account.webhook_secret.as_deref(), presented.as_deref()) {
                    return Response::error("Unauthorized", 401);
                }
                self.webhook_update(store, &body).await?;
                Response::ok("")
            }
            // The gateway's, through the Worker.
            "/start" => {
                Response::from_json(&self.start(store, serde_json::from_str(&body)?).await?)
            }
            "/stop" | "/logout" => {
                let p: ChannelStopParams = serde_json::from_str(&body)?;
                Response::from_json(
                    &self
                        .stop(store, &p.account_id, req.path() == "/logout")
                        .await?,
                )
            }
            "/login" => Response::from_json(&ChannelLoginResult {
                ok: false,
                qr_data_url: None,
                qr: None,
                pair_code: None,
                linked: false,
                message: "Telegram bots log in with a bot token from @BotFather: start the \
                          account with --bot-token (or the TELEGRAM_BOT_TOKEN secret)"
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
            _ => Response::error("Not found", 404),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        if let Some(store) = &self.store {
            self.run_due(store).await;
        }
        Response::ok("")
    }
}

impl TelegramAccount {
    pub(super) fn current(&self) -> Option<Account> {
        self.account.current()
    }

    pub(super) fn save(&self, account_id: &str, account: Account) -> Result<()> {
        self.account.save(self.store.as_ref(), account_id, account)
    }

    /// Changes the saved account (when there is one) and saves it.
    pub(super) fn update(&self, change: impl FnOnce(&mut Account)) {
        if let Err(e) = self.account.update(self.store.as_ref(), change) {
            console_error!("telegram: saving the account failed: {e}");
        }
    }

    pub(super) fn env_token(&self) -> Option<String> {
        self.env
            .secret("TELEGRAM_BOT_TOKEN")
            .ok()
            .map(|s| s.to_string())
    }

    /// The token calls use, while the account is started.
    pub(super) fn token(&self) -> Option<String> {
        let account = self.current()?;
        account
            .started
            .then(|| account.token(self.env_token().as_deref()))
            .flatten()
    }

    /// Asks Telegram who the token is (a 401 refuses the start and keeps
    /// nothing), then sets the webhook or begins polling.
    async fn start(&self, store: &Tables, p: ChannelStartParams) -> Result<OkResult> {
        let public_url = self
            .env
            .var("TELEGRAM_PUBLIC_URL")
            .ok()
            .map(|v| v.to_string());
        let env_token = self.env_token();
        let plan = match plan_start(
            &p.account_id,
            &p.config,
            env_token.as_deref(),
            public_url.as_deref(),
        ) {
            Ok(plan) => plan,
            Err(e) => return Ok(refused(e)),
        };
        let base = api_base(&self.env);
        let me: Me = match bot_client::call(&base, &plan.token, &api::get_me()).await {
            Ok(me) => me,
            Err(e) if e.token_refused() => return Ok(refused(token_refused(&e.message))),
            Err(e) => {
                return Ok(refused(format!(
                    "Telegram did not answer getMe: {}",
                    e.message
                )))
            }
        };
        let mut account = self.current().unwrap_or_default();
        let same_bot = account.bot_id == Some(me.id);
        let mode = match &plan.webhook_url {
            Some(url) => {
                // One secret per account, kept across starts: a delivery
                // already under way still carries it.
                let secret = account
                    .webhook_secret
                    .clone()
                    .filter(|_| same_bot)
                    .unwrap_or_else(|| new_secret(&random_bytes::<48>()));
                let set = api::set_webhook(url, &secret);
                if let Err(e) = bot_client::call::<bool>(&base, &plan.token, &set).await {
                    return Ok(refused(format!(
                        "Telegram did not take the webhook {url}: {}",
                        e.message
                    )));
                }
                account.webhook_secret = Some(secret);
                Mode::Webhook
            }
            None => {
                // getUpdates answers 409 while a webhook is set.
                let delete = api::delete_webhook();
                if let Err(e) = bot_client::call::<bool>(&base, &plan.token, &delete).await {
                    return Ok(refused(format!(
                        "Telegram did not drop the bot's webhook (needed to poll): {}",
                        e.message
                    )));
                }
                Mode::Polling
            }
        };
        if !same_bot {
            account.offset = None;
        }
        if plan.given_token.is_some() {
            account.bot_token = plan.given_token;
        }
        account.started = true;
        account.authenticated = true;
        account.error = None;
        account.poll_failures = 0;
        account.bot_id = Some(me.id);
        account.bot_username = me.username;
        account.can_read_all_group_messages = me.can_read_all_group_messages;
        account.mode = Some(mode);
        account.webhook_url = plan.webhook_url;
        self.save(&p.account_id, account)?;
        let poll = Deadline::Poll.kind();
        match mode {
            Mode::Polling => store.set_deadline(&poll, now_ms(), None)?,
            Mode::Webhook => store.clear_deadline(&poll)?,
        }
        self.arm(store).await;
        ACCOUNTS
            .registry(&self.env)?
            .fetch_with_request(internal_post("/register", p.account_id.clone())?)
            .await?;
        Ok(ok())
    }

    /// Stops taking updates (the webhook is dropped, polling ends) and
    /// typing; a logout forgets the token and the webhook's secret too.
    async fn stop(&self, store: &Tables, account_id: &str, logout: bool) -> Result<OkResult> {
        let mut account = self.current().unwrap_or_default();
        if let (true, Some(token)) = (account.started, self.token()) {
            let base = api_base(&self.env);
            if let Err(e) = bot_client::call::<bool>(&base, &token, &api::delete_webhook()).await {
                console_error!(
                    "telegram: {account_id}: dropping the webhook failed: {}",
                    e.message
                );
            }
        }
        account.started = false;
        account.error = None;
        if logout {
            account.bot_token = None;
            account.webhook_secret = None;
            account.authenticated = false;
        }
        self.save(account_id, account)?;
        store.clear_deadline(&Deadline::Poll.kind())?;
        store.clear_deadlines("typing:")?;
        self.arm(store).await;
        Ok(ok())
    }
}
