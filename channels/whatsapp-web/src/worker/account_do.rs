//! The `WhatsAppWebAccount` Durable Object: one per linked number (by
//! name), plus one named `_accounts` that lists the accounts. An account's
//! object holds the socket to WhatsApp (`link.rs`), takes each message
//! once and owes it to the gateway (`inbox.rs`), sends (`sending.rs`), and
//! re-opens the socket after an eviction: from its alarm (`alarm.rs`), or
//! sooner when a request needs it (`link.rs`, `wake`).
//!
//! Its state lives in `Inner`, shared with the tasks the client runs (the
//! event loop, the inbound hook), which outlive any one request.

use super::link::Running;
use super::{tables, ACCOUNTS};
use crate::account::{Account, Link};
use gsv_channel_worker::internal_post;
use gsv_channel_worker::kept::Kept;
use gsv_channel_worker::status::ok;
use gsv_channel_worker::tables::Tables;
use gsv_protocol::channels::*;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use worker::*;

pub(super) struct Inner {
    pub state: State,
    pub env: Env,
    pub store: Option<Tables>,
    pub account: Kept<Account>,
    pub flushing: Cell<bool>,
    /// The client, while it runs.
    pub running: RefCell<Option<Running>>,
    /// Starts of the client so far (each start's events are its own).
    pub generation: Cell<u64>,
    /// A client is being built (`link::connect`).
    pub starting: Cell<bool>,
}

#[durable_object]
pub struct WhatsAppWebAccount {
    inner: Rc<Inner>,
}

pub(super) fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

impl DurableObject for WhatsAppWebAccount {
    fn new(state: State, env: Env) -> Self {
        let store = match tables::open(state.storage().sql(), now_ms()) {
            Ok(s) => Some(s),
            Err(e) => {
                console_error!("whatsapp-web: opening storage failed: {e}");
                None
            }
        };
        let account = Kept::load(store.as_ref());
        Self {
            inner: Rc::new(Inner {
                state,
                env,
                store,
                account,
                flushing: Cell::new(false),
                running: RefCell::new(None),
                generation: Cell::new(0),
                starting: Cell::new(false),
            }),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let body = req.text().await?;
        let inner = &self.inner;
        let Some(store) = &inner.store else {
            return Response::error("the account's storage could not be opened", 500);
        };
        match req.path().as_str() {
            // The registry's paths.
            "/register" => {
                store.register(&body)?;
                Response::from_json(&ok())
            }
            "/accounts" => Response::from_json(&store.accounts()?),
            // The gateway's, through the Worker.
            "/start" => {
                let p: ChannelStartParams = serde_json::from_str(&body)?;
                Response::from_json(&inner.start(&p.account_id).await?)
            }
            "/stop" => {
                let p: ChannelStopParams = serde_json::from_str(&body)?;
                Response::from_json(&inner.stop(&p.account_id, false).await?)
            }
            "/logout" => {
                let p: ChannelLogoutParams = serde_json::from_str(&body)?;
                Response::from_json(&inner.stop(&p.account_id, true).await?)
            }
            "/login" => Response::from_json(&inner.login(serde_json::from_str(&body)?).await?),
            "/status" => {
                inner.wake(false).await;
                let q: ChannelStatusQuery = serde_json::from_str(&body).unwrap_or_default();
                let id = q.account_id.unwrap_or_default();
                let account = inner.current().unwrap_or_default();
                Response::from_json(&ChannelStatusResult {
                    accounts: vec![account.status(&id)],
                })
            }
            "/send" => {
                inner.wake(true).await;
                Response::from_json(&inner.send(serde_json::from_str(&body)?).await)
            }
            "/typing" => {
                inner.wake(false).await;
                Response::from_json(&inner.typing(serde_json::from_str(&body)?).await)
            }
            "/media/fetch" => {
                inner.wake(true).await;
                inner.fetch_media(serde_json::from_str(&body)?).await
            }
            _ => Response::error("Not found", 404),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        self.inner.run_due().await;
        Response::ok("")
    }
}

impl Inner {
    pub fn current(&self) -> Option<Account> {
        self.account.current()
    }

    pub fn save(&self, account_id: &str, account: Account) -> Result<()> {
        self.account.save(self.store.as_ref(), account_id, account)
    }

    /// Changes the saved account (when there is one) and saves it.
    pub fn update(&self, change: impl FnOnce(&mut Account)) {
        if let Err(e) = self.account.update(self.store.as_ref(), change) {
            console_error!("whatsapp-web: saving the account failed: {e}");
        }
    }

    /// Starts taking messages: the socket opens (linked), or QR codes are
    /// offered for `gsv channel login` (not linked yet).
    async fn start(self: &Rc<Self>, account_id: &str) -> Result<OkResult> {
        let mut account = self.current().unwrap_or_default();
        account.started = true;
        account.error = None;
        if account.link == Link::LoggedOut {
            account.link = Link::NotLinked;
        }
        let linked = matches!(account.link, Link::Linked | Link::Connecting);
        self.save(account_id, account)?;
        // Without keys there is nothing to connect as: `login` links.
        if linked {
            self.connect(None).await;
        }
        self.arm().await;
        ACCOUNTS
            .registry(&self.env)?
            .fetch_with_request(internal_post("/register", account_id.to_string())?)
            .await?;
        Ok(ok())
    }

    /// Stops (the socket closes, the link stays); a logout also unlinks
    /// the device on WhatsApp's side and forgets its keys.
    async fn stop(self: &Rc<Self>, account_id: &str, logout: bool) -> Result<OkResult> {
        if logout {
            self.unlink().await?;
        } else {
            let running = self.running.borrow_mut().take();
            if let Some(running) = running {
                running.end(false).await;
            }
        }
        let mut account = self.current().unwrap_or_default();
        account.started = false;
        account.error = None;
        account.qr = None;
        account.qr_until = None;
        account.pair_code = None;
        if account.link == Link::Linked {
            account.link = Link::Connecting;
        }
        self.save(account_id, account)?;
        self.arm().await;
        Ok(ok())
    }
}
