//! The `DiscordGateway` Durable Object: one per bot account (by name), plus
//! one named `_accounts` that only lists the accounts. It holds the
//! outbound gateway WebSocket; its alarm drives the heartbeats and is the
//! watchdog that reconnects after an eviction or a lost socket.

use super::driver::{feed, flush_outbox, now_ms, Inner};
use super::gateway_client;
use super::rest_client;
use super::store::Store;
use crate::gateway::machine::{Input, Machine, Persisted};
use crate::rest::{create_message, create_message_with_files, trigger_typing, FilePart};
use gsv_protocol::channels::{
    ChannelLoginResult, ChannelPeer, ChannelSendParams, ChannelSendResult, ChannelStartParams,
    ChannelStatusQuery, ChannelStatusResult, ChannelTypingParams, OkResult,
};
use std::cell::RefCell;
use std::rc::Rc;
use worker::*;

#[durable_object]
pub struct DiscordGateway {
    inner: Rc<Inner>,
}

impl DurableObject for DiscordGateway {
    fn new(state: State, env: Env) -> Self {
        let now = now_ms();
        let store = match Store::open(state.storage().sql(), now) {
            Ok(s) => Some(s),
            Err(e) => {
                console_error!("discord: opening storage failed: {e}");
                None
            }
        };
        let loaded = store.as_ref().and_then(|s| match s.load() {
            Ok(row) => row,
            Err(e) => {
                console_error!("discord: loading state failed: {e}");
                None
            }
        });
        let (account, persisted) = match loaded {
            Some((a, p)) => (Some(a), p),
            None => (None, Persisted::default()),
        };
        Self {
            inner: Rc::new(Inner {
                state,
                env,
                store,
                account: RefCell::new(account),
                machine: RefCell::new(Machine::restore(persisted, now)),
                socket: RefCell::new(None),
                flushing: Default::default(),
            }),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let body = req.text().await?;
        let inner = &self.inner;
        match req.path().as_str() {
            "/register" => {
                if let Some(store) = &inner.store {
                    store.register(&body)?;
                }
                Response::from_json(&OkResult {
                    ok: true,
                    error: None,
                })
            }
            "/accounts" => {
                let ids = match &inner.store {
                    Some(store) => store.accounts()?,
                    None => Vec::new(),
                };
                Response::from_json(&ids)
            }
            "/start" => {
                let params: ChannelStartParams = serde_json::from_str(&body)?;
                *inner.account.borrow_mut() = Some(params.account_id);
                // The start config's token first, else the Worker secret.
                let token = params.config.bot_token.filter(|t| !t.is_empty()).or_else(|| {
                    inner
                        .env
                        .secret("DISCORD_BOT_TOKEN")
                        .ok()
                        .map(|s| s.to_string())
                });
                let intents = params.config.intents;
                feed(inner, Input::Start { token, intents }).await;
                let error = inner.machine.borrow().persisted().error.clone();
                Response::from_json(&OkResult {
                    ok: error.is_none(),
                    error,
                })
            }
            "/stop" => {
                feed(inner, Input::Stop).await;
                Response::from_json(&OkResult {
                    ok: true,
                    error: None,
                })
            }
            "/logout" => {
                // Forget the token too: the account stays idle until started again.
                feed(inner, Input::Stop).await;
                let start = Input::Start {
                    token: None,
                    intents: None,
                };
                feed(inner, start).await;
                Response::from_json(&OkResult {
                    ok: true,
                    error: None,
                })
            }
            "/login" => Response::from_json(&ChannelLoginResult {
                ok: false,
                qr_data_url: None,
                qr: None,
                pair_code: None,
                linked: false,
                message: "Discord bots log in with a bot token: start the account with config.botToken (or the DISCORD_BOT_TOKEN secret)".into(),
            }),
            "/status" => {
                let query: ChannelStatusQuery = serde_json::from_str(&body).unwrap_or_default();
                let id = query.account_id.unwrap_or_default();
                let mut status = inner.machine.borrow().status(&id);
                if inner.account.borrow().is_none() {
                    status.error = Some("not started".into());
                }
                Response::from_json(&ChannelStatusResult {
                    accounts: vec![status],
                })
            }
            "/send" => {
                let params: ChannelSendParams = serde_json::from_str(&body)?;
                Response::from_json(&self.send(params).await)
            }
            "/typing" => {
                let params: ChannelTypingParams = serde_json::from_str(&body)?;
                Response::from_json(&self.typing(params).await)
            }
            _ => Response::error("Not found", 404),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        // The heartbeat first, so a slow gateway cannot make it late; then
        // the messages the gateway could not take yet get another try.
        feed(&self.inner, Input::Alarm).await;
        flush_outbox(&self.inner).await;
        Response::ok("")
    }
}

impl DiscordGateway {
    fn token(&self) -> Option<String> {
        let token = self.inner.machine.borrow().token().map(str::to_string);
        token.or_else(|| {
            self.inner
                .env
                .secret("DISCORD_BOT_TOKEN")
                .ok()
                .map(|s| s.to_string())
        })
    }

    async fn send(&self, params: ChannelSendParams) -> ChannelSendResult {
        let failed = |error: String, retryable: bool| ChannelSendResult {
            ok: false,
            message_id: None,
            error: Some(error),
            retryable: Some(retryable),
            retry_after_ms: None,
        };
        let Some(token) = self.token() else {
            return failed("the account has no bot token".into(), false);
        };
        let msg = &params.message;
        // The gateway's idempotency key makes its own retries of this piece
        // idempotent too; without one, a nonce covers this call's retries.
        let nonce = msg
            .idempotency_key
            .clone()
            .filter(|k| !k.is_empty() && k.chars().count() <= 25)
            .unwrap_or_else(nonce);
        let base = rest_client::api_base(&self.inner.env);
        let sent = if msg.media.is_empty() {
            let request = match create_message(
                target_channel(&msg.peer),
                &msg.text,
                msg.reply_to_id.as_deref(),
                &nonce,
            ) {
                Ok(r) => r,
                Err(e) => return failed(e.message, e.retryable),
            };
            rest_client::call(&base, &token, &request).await
        } else {
            // Each file is read from the gateway, then all go in one upload.
            let mut files = Vec::with_capacity(msg.media.len());
            for m in &msg.media {
                if m.size > crate::rest::MAX_FILE_BYTES {
                    return failed(
                        format!(
                            "{} is {:.1} MB; Discord takes files of at most 10 MB from a bot",
                            m.filename,
                            m.size as f64 / (1024.0 * 1024.0)
                        ),
                        false,
                    );
                }
                match gateway_client::read_media(&self.inner.env, &m.key).await {
                    Ok(bytes) => files.push(FilePart {
                        filename: m.filename.clone(),
                        mime_type: m.mime_type.clone(),
                        bytes,
                    }),
                    Err(e) => {
                        return failed(format!("reading {}: {e}", m.filename), e.worth_retrying())
                    }
                }
            }
            let boundary = format!("gsv{}", self::nonce());
            let request = match create_message_with_files(
                target_channel(&msg.peer),
                &msg.text,
                msg.reply_to_id.as_deref(),
                &nonce,
                &files,
                &boundary,
            ) {
                Ok(r) => r,
                Err(e) => return failed(e.message, e.retryable),
            };
            rest_client::call_multipart(&base, &token, &request).await
        };
        let env = &self.inner.env;
        gsv_channel_worker::fault::stop_at(env, gsv_protocol::fault::PLATFORM_CALLED).await;
        match sent {
            Ok(body) => {
                #[derive(serde::Deserialize)]
                struct Created {
                    id: String,
                }
                let id = serde_json::from_str::<Created>(&body).ok().map(|c| c.id);
                // A retry of this piece carries the same nonce: Discord
                // answers it with this message instead of a second one.
                gsv_channel_worker::fault::stop_at(env, gsv_protocol::fault::PLATFORM_ANSWERED)
                    .await;
                ChannelSendResult {
                    ok: true,
                    message_id: id,
                    error: None,
                    retryable: None,
                    retry_after_ms: None,
                }
            }
            Err(e) => failed(e.message, e.retryable),
        }
    }

    /// Discord's typing indicator lasts about 10 s and cannot be cleared:
    /// `typing: false` is a no-op, and the gateway repeats `true` while it works.
    async fn typing(&self, params: ChannelTypingParams) -> OkResult {
        if !params.typing {
            return OkResult {
                ok: true,
                error: None,
            };
        }
        let Some(token) = self.token() else {
            return OkResult {
                ok: false,
                error: Some("the account has no bot token".into()),
            };
        };
        let base = rest_client::api_base(&self.inner.env);
        let request = trigger_typing(target_channel(&params.peer));
        match rest_client::call(&base, &token, &request).await {
            Ok(_) => OkResult {
                ok: true,
                error: None,
            },
            Err(e) => OkResult {
                ok: false,
                error: Some(e.message),
            },
        }
    }
}

/// Where a message to `peer` goes: a thread is a channel of its own in Discord.
fn target_channel(peer: &ChannelPeer) -> &str {
    peer.thread_id.as_deref().unwrap_or(&peer.id)
}

/// A message nonce (≤ 25 characters), one per send and the same on its
/// retries, so Discord posts a retried message once.
fn nonce() -> String {
    let a = (js_sys::Math::random() * 1e15) as u64;
    let b = now_ms() as u64;
    format!("{b:x}{a:x}").chars().take(25).collect()
}
