//! The link to WhatsApp: the `whatsapp-rust` client built on the
//! object's keys (`store`), socket, HTTP and clock, run on the isolate's
//! loop. Its events come to one task of the object's (`events`): QR codes,
//! pairing, connects and logouts change the account's state; messages are
//! stored for the gateway (`inbox.rs`).

use super::account_do::{now_ms, Inner};
use super::http::FetchClient;
use super::platform::WorkerRuntime;
use super::socket::SocketFactory;
use super::sql::ObjectSql;
use crate::account::{logout_reason, Link};
use crate::inbound::user_of;
use crate::store::SqlBackend;
use gsv_channel_worker::gateway;
use gsv_protocol::channels::{ChannelAccountStatus, ChannelStatusParams};
use std::rc::{Rc, Weak};
use std::sync::Arc;
use std::time::Duration;
use whatsapp_rust::pair_code::PairCodeOptions;
use whatsapp_rust::prelude::*;
use worker::console_error;

/// How long a send or download waits for a client it woke to connect.
const WAKE_WAIT: Duration = Duration::from_secs(10);

/// The running client.
pub(super) struct Running {
    pub client: Arc<Client>,
    handle: BotHandle,
    /// Which start of the client this is: events of an ended one (a
    /// logout asked for, a replaced client) are not this one's.
    generation: u64,
}

impl Running {
    /// Ends the client: a logout first unlinks the device on WhatsApp's side.
    pub async fn end(self, logout: bool) {
        if logout {
            self.client.logout().await;
        }
        self.handle.shutdown().await;
    }
}

/// WhatsApp Web's socket, unless the Worker names another
/// (`WHATSAPP_WEB_URL`, a test server's).
fn socket_url(inner: &Inner) -> String {
    inner
        .env
        .var("WHATSAPP_WEB_URL")
        .map(|v| v.to_string())
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| whatsapp_rust::wacore::net::WHATSAPP_WEB_WS_URL.to_string())
}

/// The WhatsApp Web version to claim (`WHATSAPP_WEB_VERSION`,
/// `2.3000.1012345678`); unset, the client asks web.whatsapp.com daily.
fn version(inner: &Inner) -> Option<(u32, u32, u32)> {
    let v = inner.env.var("WHATSAPP_WEB_VERSION").ok()?.to_string();
    let mut parts = v.split('.').map(|p| p.parse::<u32>().ok());
    match (parts.next()?, parts.next()?, parts.next()?) {
        (Some(a), Some(b), Some(c)) => Some((a, b, c)),
        _ => None,
    }
}

impl Inner {
    pub fn client(&self) -> Option<Arc<Client>> {
        self.running.borrow().as_ref().map(|r| r.client.clone())
    }

    /// A request found the object without its client although the account
    /// is started and linked (evicted, or workerd restarted, and the
    /// keep-alive alarm has not come yet): start it now rather than then.
    /// A send or a download also waits for it to connect (up to
    /// `WAKE_WAIT`), so the first try after an eviction goes through.
    pub async fn wake(self: &Rc<Self>, wait: bool) {
        let account = self.current().unwrap_or_default();
        if !account.started || !matches!(account.link, Link::Linked | Link::Connecting) {
            return;
        }
        self.connect(None).await;
        if let Some(client) = self.client().filter(|_| wait) {
            // Timed out: the caller says "not connected" and the gateway retries.
            let _ = client.wait_for_connected(WAKE_WAIT).await;
        }
    }

    /// Starts the client unless it runs; `pair_phone` asks for a pairing
    /// code for that number (digits) instead of QR codes.
    pub async fn connect(self: &Rc<Self>, pair_phone: Option<String>) {
        let account = self.current().unwrap_or_default();
        if !account.started || self.running.borrow().is_some() || self.starting.get() {
            return;
        }
        // Building awaits: a login and the alarm arriving meanwhile must not
        // start a second client on the same device.
        self.starting.set(true);
        self.start_client(pair_phone).await;
        self.starting.set(false);
    }

    async fn start_client(self: &Rc<Self>, pair_phone: Option<String>) {
        let level = self.env.var("WHATSAPP_WEB_LOG").ok().map(|v| v.to_string());
        super::platform::set_log_level(level.as_deref());
        let backend = SqlBackend::new(ObjectSql(self.state.storage().sql()));
        let (tx, rx) = async_channel::unbounded::<Arc<Event>>();
        let mut builder = Bot::builder()
            .with_backend(backend)
            .with_transport_factory(SocketFactory {
                url: socket_url(self),
            })
            .with_http_client(FetchClient)
            .with_runtime(WorkerRuntime)
            .on_event(move |event, _client| {
                // Handled on the object's own task (events touch its
                // storage, which is not `Send`).
                let _ = tx.try_send(event);
                std::future::ready(())
            })
            .skip_history_sync();
        if let Some(v) = version(self) {
            builder = builder.with_version(v);
        }
        if let Some(phone) = pair_phone {
            builder = builder.with_pair_code(PairCodeOptions {
                phone_number: phone,
                ..PairCodeOptions::default()
            });
        }
        let bot = match builder.build().await {
            Ok(bot) => bot,
            Err(e) => {
                console_error!("whatsapp-web: the client could not be built: {e}");
                self.update(|a| {
                    a.error = Some(format!("the WhatsApp client could not start: {e}"))
                });
                return;
            }
        };
        let handle = bot.spawn();
        let client = handle.client();
        let generation = self.generation.get() + 1;
        self.generation.set(generation);
        *self.running.borrow_mut() = Some(Running {
            client,
            handle,
            generation,
        });
        self.update(|a| {
            if a.link == Link::Linked {
                a.link = Link::Connecting;
            }
        });
        wasm_bindgen_futures::spawn_local(events(Rc::downgrade(self), rx, generation));
    }

    /// The client ended by itself (logged out, QR codes ran out): forget it
    /// so a later start builds a new one.
    fn ended(&self) {
        self.running.borrow_mut().take();
    }

    /// The account's status for the gateway, without what every message
    /// changes (its last activity).
    fn status_seen(&self) -> Option<(String, ChannelAccountStatus)> {
        let (id, account) = self.account.get()?;
        let mut status = account.status(&id);
        status.last_activity = None;
        Some((id, status))
    }

    /// Handles one event, and tells the gateway when it changed how the
    /// account is doing (linked, connecting, logged out and why), as the
    /// other channels do: `channels.list` shows it without asking.
    async fn on_event(self: &Rc<Self>, event: &Event) {
        let before = self.status_seen();
        self.apply_event(event).await;
        let after = self.status_seen();
        if let Some((id, _)) = after.as_ref().filter(|_| after != before) {
            let params = ChannelStatusParams {
                channel: crate::CHANNEL_ID.into(),
                account_id: id.clone(),
                status: self.current().unwrap_or_default().status(id),
            };
            gateway::report_status(&self.env, &params).await;
        }
    }

    async fn apply_event(self: &Rc<Self>, event: &Event) {
        let now = now_ms();
        match event {
            Event::PairingQrCode(qr) => self.update(|a| {
                a.link = Link::WaitingForScan;
                a.qr = Some(qr.code.clone());
                a.qr_until = Some(now + qr.timeout.as_millis() as i64);
                a.error = None;
            }),
            Event::PairingCode(code) => self.update(|a| {
                a.link = Link::WaitingForScan;
                a.pair_code = Some(code.code.clone());
                a.error = None;
            }),
            Event::PairSuccess(p) => self.update(|a| {
                a.link = Link::Connecting;
                a.phone = Some(format!("+{}", user_of(&p.id.to_string())));
                a.device_jid = Some(p.id.to_string());
                a.lid = Some(user_of(&p.lid.to_string()).to_string());
                a.qr = None;
                a.qr_until = None;
                a.pair_code = None;
            }),
            Event::Connected(_) => {
                let client = self.client();
                let (pn, lid) = client.map(|c| (c.pn(), c.lid())).unwrap_or_default();
                self.update(|a| {
                    a.link = Link::Linked;
                    a.connects += 1;
                    a.error = None;
                    a.qr = None;
                    a.qr_until = None;
                    a.pair_code = None;
                    if let Some(pn) = pn {
                        a.phone = Some(format!("+{}", user_of(&pn.to_string())));
                        a.device_jid = Some(pn.to_string());
                    }
                    if let Some(lid) = lid {
                        a.lid = Some(user_of(&lid.to_string()).to_string());
                    }
                });
                self.flush_soon();
            }
            Event::Messages(batch) => {
                if let Some(client) = self.client() {
                    self.on_messages(client, &batch.messages);
                }
            }
            Event::Disconnected(_) => self.update(|a| {
                if a.link == Link::Linked {
                    a.link = Link::Connecting;
                }
            }),
            Event::LoggedOut(out) => {
                let why = logout_reason(&format!("{:?}", out.reason));
                console_error!("whatsapp-web: logged out: {why}");
                self.ended();
                if let Some(store) = &self.store {
                    if let Err(e) = super::tables::forget_keys(store) {
                        console_error!("whatsapp-web: forgetting the keys failed: {e}");
                    }
                }
                self.update(|a| {
                    a.link = Link::LoggedOut;
                    a.error = Some(why);
                    a.qr = None;
                    a.pair_code = None;
                });
            }
            Event::PairingQrCodesExhausted(_) => {
                self.ended();
                self.update(|a| {
                    a.link = Link::NotLinked;
                    a.qr = None;
                    a.qr_until = None;
                    a.error = Some(
                        "no QR code was scanned in time: run `gsv channel login whatsapp-web` again"
                            .into(),
                    );
                });
            }
            Event::PairError(e) => self.update(|a| {
                a.error = Some(format!("linking failed: {}", e.error));
            }),
            Event::ClientOutdated(_) => self.update(|a| {
                a.error = Some(
                    "WhatsApp refused this client's version as outdated: set \
                     WHATSAPP_WEB_VERSION to a current one or unset it"
                        .into(),
                );
            }),
            Event::StreamReplaced(_) => {
                self.ended();
                self.update(|a| {
                    a.error = Some(
                        "another client opened this device's session: restart the account \
                         with `gsv channel start whatsapp-web`"
                            .into(),
                    );
                });
            }
            Event::TemporaryBan(ban) => self.update(|a| {
                a.error = Some(format!(
                    "WhatsApp banned the number for a while: {:?}",
                    ban.code
                ));
            }),
            _ => {}
        }
    }
}

/// The object's event loop for one start of the client: one event at a
/// time, in order, while that client is the running one.
async fn events(inner: Weak<Inner>, rx: async_channel::Receiver<Arc<Event>>, generation: u64) {
    while let Ok(event) = rx.recv().await {
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let current = inner.running.borrow().as_ref().map(|r| r.generation);
        if current != Some(generation) {
            // Ended (a logout or stop asked for, or replaced): what it
            // still says is not the account's state.
            return;
        }
        inner.on_event(&event).await;
    }
}
