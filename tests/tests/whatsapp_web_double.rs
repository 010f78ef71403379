//! The WhatsApp Web double (`gsv_e2e::fake_whatsapp_web`) checked against
//! the real client it stands in for: `whatsapp-rust` 0.7.0, run natively
//! with an in-memory store, a tokio-tungstenite transport pointed at the
//! double's `/ws/chat` and a reqwest HTTP client that takes the CDN's
//! `https://{media_host}` URLs over plain HTTP. Built with
//! `danger-skip-cert-chain-verify`, since the double's chain is rooted in
//! its own key rather than WhatsApp's.

use futures::{SinkExt, StreamExt};
use gsv_e2e::fake_whatsapp_web::FakeWhatsAppWeb;
use gsv_e2e::poll::{self, ms, secs};
use std::sync::{Arc, Mutex};
use tokio_tungstenite::tungstenite::Message as WsMessage;
use whatsapp_rust::anyhow;
use whatsapp_rust::async_channel;
use whatsapp_rust::bytes::Bytes;
use whatsapp_rust::http::{HttpClient, HttpRequest, HttpResponse};
use whatsapp_rust::prelude::*;
use whatsapp_rust::transport::{DisconnectReason, Transport, TransportEvent, TransportFactory};

const OWNER: &str = "15550001111";
const ANN: &str = "15550002222";
const BOB: &str = "15550003333";

// ---- the client's plumbing: transport and HTTP ----

type WsSink = futures::stream::SplitSink<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    WsMessage,
>;

struct WsTransport {
    sink: tokio::sync::Mutex<WsSink>,
}

#[whatsapp_rust::async_trait]
impl Transport for WsTransport {
    async fn send(&self, data: Bytes) -> anyhow::Result<()> {
        self.sink
            .lock()
            .await
            .send(WsMessage::binary(data))
            .await
            .map_err(|e| anyhow::anyhow!("send: {e}"))
    }

    async fn disconnect(&self) {
        let _ = self.sink.lock().await.close().await;
    }
}

/// Opens the chat socket at the double's URL.
struct WsFactory {
    url: String,
}

#[whatsapp_rust::async_trait]
impl TransportFactory for WsFactory {
    async fn create_transport(
        &self,
    ) -> anyhow::Result<(Arc<dyn Transport>, async_channel::Receiver<TransportEvent>)> {
        let (ws, _) = tokio_tungstenite::connect_async(&self.url).await?;
        let (sink, mut stream) = ws.split();
        let (tx, rx) = async_channel::unbounded();
        let _ = tx.send(TransportEvent::Connected).await;
        tokio::spawn(async move {
            let reason = loop {
                match stream.next().await {
                    Some(Ok(WsMessage::Binary(b))) => {
                        if tx.send(TransportEvent::DataReceived(b)).await.is_err() {
                            return;
                        }
                    }
                    Some(Ok(WsMessage::Close(f))) => {
                        break DisconnectReason::ServerClose {
                            code: f.as_ref().map(|f| u16::from(f.code)),
                            reason: f.map(|f| f.reason.to_string()).unwrap_or_default(),
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => break DisconnectReason::ReadError(e.to_string()),
                    None => break DisconnectReason::StreamEnded,
                }
            };
            let _ = tx.send(TransportEvent::Disconnected(reason)).await;
        });
        Ok((
            Arc::new(WsTransport {
                sink: tokio::sync::Mutex::new(sink),
            }),
            rx,
        ))
    }
}

/// reqwest, with the CDN's `https://{media_host}` taken over plain HTTP.
struct Http {
    media_host: String,
    client: reqwest::Client,
}

#[whatsapp_rust::async_trait]
impl HttpClient for Http {
    async fn execute(&self, request: HttpRequest) -> anyhow::Result<HttpResponse> {
        let url = request.url.replacen(
            &format!("https://{}", self.media_host),
            &format!("http://{}", self.media_host),
            1,
        );
        let mut r = match request.method.as_str() {
            "POST" => self.client.post(&url),
            _ => self.client.get(&url),
        };
        for (k, v) in &request.headers {
            r = r.header(k, v);
        }
        if let Some(body) = request.body {
            r = r.body(body.to_vec());
        }
        let resp = r.send().await?;
        Ok(HttpResponse {
            status_code: resp.status().as_u16(),
            body: resp.bytes().await?.to_vec(),
        })
    }
}

// ---- a linked device under test ----

/// A whatsapp-rust client and the events it dispatched.
struct Device {
    client: Arc<Client>,
    events: Arc<Mutex<Vec<Arc<Event>>>>,
    handle: Option<BotHandle>,
}

impl Device {
    async fn start(wa: &FakeWhatsAppWeb) -> Device {
        Device::start_with(wa, Arc::new(wacore::store::InMemoryBackend::new())).await
    }

    async fn start_with(
        wa: &FakeWhatsAppWeb,
        backend: Arc<wacore::store::InMemoryBackend>,
    ) -> Device {
        let _ = env_logger::builder().is_test(true).try_init();
        let events = Arc::new(Mutex::new(Vec::new()));
        let seen = events.clone();
        let bot = Bot::builder()
            .with_backend_arc(backend)
            .with_transport_factory(WsFactory { url: wa.ws_url() })
            .with_http_client(Http {
                media_host: wa.media_host(),
                client: reqwest::Client::new(),
            })
            .with_runtime(TokioRuntime)
            .with_version((2, 3000, 1_023_456_789))
            .on_event(move |event, _client| {
                seen.lock().unwrap().push(event);
                async {}
            })
            .build()
            .await
            .expect("bot");
        let client = bot.client();
        Device {
            client,
            events,
            handle: Some(bot.spawn()),
        }
    }

    /// Waits for the first event `pick` maps to something.
    async fn wait_event<T>(&self, what: &str, pick: impl Fn(&Event) -> Option<T>) -> T {
        poll::until(secs(60), ms(20), async || {
            let events = self.events.lock().unwrap();
            events
                .iter()
                .find_map(|e| pick(e))
                .ok_or_else(|| format!("no {what} among {:?}", *events))
        })
        .await
    }

    async fn wait_qr(&self) -> String {
        self.wait_event("QR code", |e| match e {
            Event::PairingQrCode(q) => Some(q.code.clone()),
            _ => None,
        })
        .await
    }

    async fn connected_count(&self) -> usize {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| matches!(***e, Event::Connected(_)))
            .count()
    }

    async fn wait_connected_n(&self, n: usize) {
        poll::until(secs(60), ms(20), async || {
            let c = self.connected_count().await;
            (c >= n)
                .then_some(())
                .ok_or(format!("{c} of {n} Connected events"))
        })
        .await;
    }

    /// Waits for an inbound message with id `id`.
    async fn wait_message(&self, id: &str) -> (Arc<wa::Message>, Arc<MessageInfo>) {
        self.wait_event(&format!("message {id}"), |e| {
            e.messages()
                .find(|m| m.info.id == id)
                .map(|m| (m.message.clone(), m.info.clone()))
        })
        .await
    }

    fn messages_with_id(&self, id: &str) -> usize {
        self.events
            .lock()
            .unwrap()
            .iter()
            .flat_map(|e| {
                e.messages()
                    .filter(|m| m.info.id == id)
                    .count()
                    .checked_sub(0)
            })
            .sum()
    }

    async fn stop(mut self) {
        if let Some(h) = self.handle.take() {
            h.shutdown().await;
        }
    }
}

/// A double with the owner's account and two contacts, the owner's
/// number linked by QR: the double, the device, its device id.
async fn linked() -> (FakeWhatsAppWeb, Device, u16) {
    let wa = FakeWhatsAppWeb::start();
    wa.add_account_named(OWNER, "Owner");
    wa.add_account_named(ANN, "Ann");
    wa.add_account_named(BOB, "Bob");
    let dev = Device::start(&wa).await;
    let qr = dev.wait_qr().await;
    let id = wa.scan_qr(&qr, OWNER).expect("scan");
    dev.wait_connected_n(1).await;
    (wa, dev, id)
}

fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

fn pn(phone: &str) -> Jid {
    Jid::pn(phone)
}

// ---- the tests ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_links_by_qr_and_reaches_connected() {
    let (wa, dev, id) = linked().await;
    assert_eq!(wa.companions(OWNER), vec![id]);
    assert!(wa.connected(OWNER));
    let snapshot = dev.client.persistence_manager().get_device_snapshot();
    assert_eq!(snapshot.pn, Some(Jid::pn_device(OWNER, id)));
    assert_eq!(
        snapshot.lid.as_ref().map(|l| l.user.to_string()),
        Some(wa.lid(OWNER))
    );
    assert_eq!(wa.unserved_iqs(), Vec::<String>::new());
    dev.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_contacts_text_arrives_and_a_quoted_reply_goes_back() {
    let (wa, dev, id) = linked().await;
    let hello = wa.send_text(ANN, OWNER, "hello from Ann");
    let (msg, info) = dev.wait_message(&hello).await;
    assert_eq!(msg.conversation.as_deref(), Some("hello from Ann"));
    assert_eq!(info.source.sender, pn(ANN));
    assert_eq!(info.push_name, "Ann");

    let reply = wa::Message {
        extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
            text: Some("hi Ann".into()),
            context_info: MessageField::some(wa::ContextInfo {
                stanza_id: Some(hello.clone()),
                participant: Some(pn(ANN).to_string()),
                quoted_message: MessageField::some((*msg).clone()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let sent = dev
        .client
        .send_message(&pn(ANN), reply)
        .await
        .expect("send");
    let got = blocking(|| wa.wait_received(ANN, 1));
    assert_eq!(got.len(), 1);
    let r = &got[0];
    assert_eq!(
        (
            r.id.as_str(),
            r.from.as_str(),
            r.chat.as_str(),
            r.text.as_deref(),
            r.quoted_id.as_deref(),
            r.quoted_participant.as_deref(),
        ),
        (
            sent.message_id.as_str(),
            Jid::pn_device(OWNER, id).to_string().as_str(),
            pn(ANN).to_string().as_str(),
            Some("hi Ann"),
            Some(hello.as_str()),
            Some(pn(ANN).to_string().as_str()),
        )
    );
    dev.stop().await;
}
