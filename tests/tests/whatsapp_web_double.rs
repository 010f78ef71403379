//! The WhatsApp Web double (`gsv_e2e::fake_whatsapp_web`) checked against
//! the real client it stands in for: `whatsapp-rust` 0.7.0, run natively
//! with an in-memory store, a tokio-tungstenite transport pointed at the
//! double's `/ws/chat` and a reqwest HTTP client that takes the CDN's
//! `https://{media_host}` URLs over plain HTTP. Built with
//! `danger-skip-cert-chain-verify`, since the double's chain is rooted in
//! its own key rather than WhatsApp's.

// A failed unwrap here is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

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

    /// The QR codes shown so far, in order, repeats left out.
    fn qr_codes(&self) -> Vec<String> {
        let mut codes: Vec<String> = Vec::new();
        for e in self.events.lock().unwrap().iter() {
            if let Event::PairingQrCode(q) = &**e {
                if !codes.contains(&q.code) {
                    codes.push(q.code.clone());
                }
            }
        }
        codes
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

    /// How many times message `id` was dispatched.
    fn times_seen(&self, id: &str) -> usize {
        self.events
            .lock()
            .unwrap()
            .iter()
            .map(|e| e.messages().filter(|m| m.info.id == id).count())
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
    // The push name the phone's critical_block patch set, and the
    // presence the client sends once it has one.
    let presence = poll::until(secs(30), ms(20), async || {
        let sent = wa.nodes_from_devices("presence");
        sent.first()
            .map(|p| ["type", "name"].map(|k| p.attrs.get(k).map(|v| v.as_str().to_string())))
            .ok_or("no presence yet")
    })
    .await;
    assert_eq!(presence, [Some("available".into()), Some("Owner".into())]);
    let name = dev
        .client
        .persistence_manager()
        .get_device_snapshot()
        .push_name
        .clone();
    assert_eq!(name, "Owner");
    assert_eq!(wa.unserved_iqs(), Vec::<String>::new());
    // The key share and everything else the device was sent are acked.
    blocking(|| wa.wait_all_acked(OWNER, id));
    dev.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fresh_qr_refs_retire_the_shown_ones() {
    let wa = FakeWhatsAppWeb::start();
    wa.add_account(OWNER);
    let dev = Device::start(&wa).await;
    let first = dev.wait_qr().await;
    wa.reissue_qr_refs_every(Some(ms(200)));
    let codes = poll::until(secs(30), ms(20), async || {
        let codes = dev.qr_codes();
        (codes.len() >= 3)
            .then_some(codes.clone())
            .ok_or(codes)
            .map_err(|c| format!("{} QR codes so far", c.len()))
    })
    .await;
    wa.reissue_qr_refs_every(None);
    assert_eq!(codes[0], first);
    // Same device keys, new ref each time.
    let tail = |c: &str| c.split_once(',').map(|(_, t)| t.to_string());
    assert!(codes.iter().all(|c| tail(c) == tail(&first)), "{codes:?}");
    let stale = wa.scan_qr(&first, OWNER).unwrap_err();
    assert!(stale.starts_with("no device is showing ref"), "{stale}");
    let latest = dev.qr_codes().last().cloned().unwrap();
    wa.scan_qr(&latest, OWNER).expect("scan the code on screen");
    dev.wait_connected_n(1).await;
    dev.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_the_device_cannot_open_is_sent_again_on_its_retry_receipt() {
    let (wa, dev, _) = linked().await;
    // A session both ways first, so that Ann's phone sends `msg`, not `pkmsg`.
    let hello = wa.send_text(ANN, OWNER, "hello");
    dev.wait_message(&hello).await;
    dev.client
        .send_message(
            &pn(ANN),
            wa::Message {
                conversation: Some("hi".into()),
                ..Default::default()
            },
        )
        .await
        .expect("send");
    blocking(|| wa.wait_received(ANN, 1));
    wa.garble_next(ANN);
    let broken = wa.send_text(ANN, OWNER, "first try");
    let (msg, _) = dev.wait_message(&broken).await;
    assert_eq!(msg.conversation.as_deref(), Some("first try"));
    let retry = blocking(|| wa.wait_receipt(ANN, |r| r.kind == "retry"));
    assert_eq!(retry.ids, vec![broken.clone()]);
    assert_eq!(dev.times_seen(&broken), 1);
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

/// A small PNG (a 1×1 red pixel).
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x08, 0xd7, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xdd, 0x8d, 0xb0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82,
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn media_goes_both_ways_through_the_cdn() {
    let (wa, dev, id) = linked().await;
    // In: an image and a voice note; the client downloads and decrypts them.
    let image_id = wa.send_image(ANN, OWNER, PNG, "image/png", Some("a red dot"));
    let (msg, _) = dev.wait_message(&image_id).await;
    let image = msg.image_message.as_option().expect("image message");
    assert_eq!(
        (image.mimetype.as_deref(), image.caption.as_deref()),
        (Some("image/png"), Some("a red dot"))
    );
    assert_eq!(dev.client.download(image).await.expect("download"), PNG);
    let ogg: Vec<u8> = b"OggS\0\x02"
        .iter()
        .copied()
        .chain((0..3000u32).map(|i| i as u8))
        .collect();
    let voice_id = wa.send_voice(ANN, OWNER, &ogg, 2);
    let (msg, _) = dev.wait_message(&voice_id).await;
    let audio = msg.audio_message.as_option().expect("audio message");
    assert_eq!(
        (audio.ptt, audio.mimetype.as_deref(), audio.seconds),
        (Some(true), Some("audio/ogg; codecs=opus"), Some(2))
    );
    assert_eq!(dev.client.download(audio).await.expect("download"), ogg);

    // Out: the client uploads an image and sends it; Ann's phone fetches it
    // from the CDN and checks it against the message's hashes.
    let up = dev
        .client
        .upload(
            PNG.to_vec(),
            whatsapp_rust::download::MediaType::Image,
            Default::default(),
        )
        .await
        .expect("upload");
    let out = wa::Message {
        image_message: MessageField::some(wa::message::ImageMessage {
            url: Some(up.url.clone()),
            direct_path: Some(up.direct_path.clone()),
            media_key: Some(up.media_key.to_vec()),
            file_enc_sha256: Some(up.file_enc_sha256.to_vec()),
            file_sha256: Some(up.file_sha256.to_vec()),
            file_length: Some(up.file_length),
            mimetype: Some("image/png".into()),
            caption: Some("back at you".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let sent = dev.client.send_message(&pn(ANN), out).await.expect("send");
    let got = blocking(|| wa.wait_received(ANN, 1));
    let r = &got[0];
    assert_eq!(
        (r.id.as_str(), r.media_error.as_deref()),
        (sent.message_id.as_str(), None)
    );
    assert_eq!(
        r.media,
        Some(gsv_e2e::fake_whatsapp_web::Media {
            kind: "image".into(),
            mimetype: "image/png".into(),
            caption: Some("back at you".into()),
            ptt: false,
            bytes: PNG.to_vec(),
        })
    );
    assert_eq!(r.from, Jid::pn_device(OWNER, id).to_string());
    dev.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_and_read_receipts_reach_the_contact() {
    let (wa, dev, id) = linked().await;
    let hello = wa.send_text(ANN, OWNER, "are you there?");
    dev.wait_message(&hello).await;
    let me = Jid::pn_device(OWNER, id).to_string();
    let delivered = blocking(|| wa.wait_receipt(ANN, |r| r.kind == "delivery"));
    assert_eq!(
        (delivered.ids, delivered.chat, delivered.from.clone()),
        (vec![hello.clone()], pn(ANN).to_string(), me.clone())
    );
    dev.client
        .chatstate()
        .send_composing(&pn(ANN))
        .await
        .expect("composing");
    let typing = blocking(|| wa.wait_chatstate(ANN, "composing"));
    assert_eq!((typing.to, typing.from), (pn(ANN).to_string(), me.clone()));
    dev.client
        .chatstate()
        .send_paused(&pn(ANN))
        .await
        .expect("paused");
    blocking(|| wa.wait_chatstate(ANN, "paused"));
    dev.client
        .mark_as_read(&pn(ANN), None, &[hello.as_str()])
        .await
        .expect("read");
    let read = blocking(|| wa.wait_receipt(ANN, |r| r.kind == "read"));
    assert_eq!(
        (read.ids, read.chat, read.participant, read.from),
        (vec![hello], pn(ANN).to_string(), None, me)
    );
    // And the other way: Ann's phone reads what the device sent.
    let mine = dev
        .client
        .send_message(
            &pn(ANN),
            wa::Message {
                conversation: Some("yes".into()),
                ..Default::default()
            },
        )
        .await
        .expect("send");
    blocking(|| wa.wait_received(ANN, 1));
    wa.read_by_phone(ANN, OWNER, &[mine.message_id.as_str()]);
    let seen = dev
        .wait_event("read receipt", |e| match e {
            Event::Receipt(r) if r.r#type == whatsapp_rust::types::presence::ReceiptType::Read => {
                Some((r.message_ids.clone(), r.source.sender.clone()))
            }
            _ => None,
        })
        .await;
    assert_eq!(seen, (vec![mine.message_id.clone()], pn(ANN)));
    dev.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_is_sent_while_the_socket_is_down_arrives_once_after_an_ik_reconnect() {
    let (wa, dev, id) = linked().await;
    let first = wa.send_text(ANN, OWNER, "before");
    dev.wait_message(&first).await;
    blocking(|| wa.wait_all_acked(OWNER, id));

    wa.drop_socket(OWNER);
    let a = wa.send_text(ANN, OWNER, "while you were away 1");
    let b = wa.send_text(BOB, OWNER, "while you were away 2");
    assert_eq!(wa.unacked(OWNER, id), 2);
    dev.wait_connected_n(2).await;
    let (ma, ia) = dev.wait_message(&a).await;
    let (mb, ib) = dev.wait_message(&b).await;
    assert_eq!(
        (
            ma.conversation.as_deref(),
            ia.is_offline,
            mb.conversation.as_deref(),
            ib.is_offline
        ),
        (
            Some("while you were away 1"),
            true,
            Some("while you were away 2"),
            true
        )
    );
    blocking(|| wa.wait_all_acked(OWNER, id));
    assert_eq!(
        wa.logins(OWNER)
            .iter()
            .map(|l| l.pattern.as_str())
            .collect::<Vec<_>>(),
        vec!["XX", "IK"],
        "paired over XX, resumed over IK with the cached server key"
    );
    // Delivered once each: nothing more comes on a later reconnect.
    wa.drop_socket(OWNER);
    dev.wait_connected_n(3).await;
    let c = wa.send_text(ANN, OWNER, "after");
    dev.wait_message(&c).await;
    assert_eq!(
        (
            dev.times_seen(&first),
            dev.times_seen(&a),
            dev.times_seen(&b)
        ),
        (1, 1, 1)
    );
    dev.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_ik_falls_back_to_xx() {
    let (wa, dev, _) = linked().await;
    wa.refuse_ik(true);
    wa.drop_socket(OWNER);
    dev.wait_connected_n(2).await;
    let hello = wa.send_text(ANN, OWNER, "still here");
    dev.wait_message(&hello).await;
    assert_eq!(
        wa.logins(OWNER)
            .iter()
            .map(|l| l.pattern.as_str())
            .collect::<Vec<_>>(),
        vec!["XX", "XXfallback"]
    );
    dev.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unlinking_from_the_phone_logs_the_device_out_for_good() {
    let wa = FakeWhatsAppWeb::start();
    wa.add_account(OWNER);
    let backend = Arc::new(wacore::store::InMemoryBackend::new());
    let dev = Device::start_with(&wa, backend.clone()).await;
    let qr = dev.wait_qr().await;
    wa.scan_qr(&qr, OWNER).expect("scan");
    dev.wait_connected_n(1).await;

    wa.logout_from_phone(OWNER);
    let out = dev
        .wait_event("LoggedOut", |e| match e {
            Event::LoggedOut(l) => Some((l.on_connect, l.reason)),
            _ => None,
        })
        .await;
    assert_eq!(
        out,
        (
            false,
            whatsapp_rust::types::events::ConnectFailureReason::LoggedOut
        )
    );
    assert_eq!(wa.companions(OWNER), Vec::<u16>::new());
    dev.stop().await;

    // The same credentials are refused at the next login.
    let again = Device::start_with(&wa, backend).await;
    let out = again
        .wait_event("LoggedOut", |e| match e {
            Event::LoggedOut(l) => Some((l.on_connect, l.reason)),
            _ => None,
        })
        .await;
    assert_eq!(
        out,
        (
            true,
            whatsapp_rust::types::events::ConnectFailureReason::LoggedOut
        )
    );
    assert!(!wa.connected(OWNER));
    again.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_messages_with_a_mention_go_both_ways() {
    let (wa, dev, id) = linked().await;
    let group = wa.create_group(ANN, "Trip", &[OWNER, BOB]);
    let gjid: Jid = group.parse().expect("group jid");
    let text = format!("@{OWNER} are you coming?");
    let hi = wa.send_group_text(ANN, &group, &text, &[OWNER]);
    let (msg, info) = dev.wait_message(&hi).await;
    let ext = msg
        .extended_text_message
        .as_option()
        .expect("extended text");
    assert_eq!(
        (
            ext.text.as_deref(),
            ext.context_info
                .as_option()
                .map(|c| c.mentioned_jid.clone()),
            info.source.chat.clone(),
            info.source.sender.clone(),
            info.source.is_group,
        ),
        (
            Some(text.as_str()),
            Some(vec![pn(OWNER).to_string()]),
            gjid.clone(),
            pn(ANN),
            true
        )
    );

    // The client answers in the group: sender key to each member's phone,
    // the message once as skmsg.
    let answer = wa::Message {
        extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
            text: Some(format!("yes @{ANN}")),
            context_info: MessageField::some(wa::ContextInfo {
                mentioned_jid: vec![pn(ANN).to_string()],
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let sent = dev.client.send_message(&gjid, answer).await.expect("send");
    for member in [ANN, BOB] {
        let got = blocking(|| wa.wait_received(member, 1));
        let r = &got[0];
        assert_eq!(
            (
                r.id.as_str(),
                r.chat.as_str(),
                r.from.as_str(),
                r.text.as_deref(),
                r.mentions.clone(),
                r.enc.as_str()
            ),
            (
                sent.message_id.as_str(),
                group.as_str(),
                Jid::pn_device(OWNER, id).to_string().as_str(),
                Some(format!("yes @{ANN}").as_str()),
                vec![pn(ANN).to_string()],
                "skmsg"
            ),
            "{member}"
        );
    }
    // Group notification, messages and receipts: all acked.
    blocking(|| wa.wait_all_acked(OWNER, id));
    dev.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_links_with_a_phone_number_code() {
    let wa = FakeWhatsAppWeb::start();
    wa.add_account(OWNER);
    wa.add_account(ANN);
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let bot = Bot::builder()
        .with_backend(wacore::store::InMemoryBackend::new())
        .with_transport_factory(WsFactory { url: wa.ws_url() })
        .with_http_client(Http {
            media_host: wa.media_host(),
            client: reqwest::Client::new(),
        })
        .with_runtime(TokioRuntime)
        .with_version((2, 3000, 1_023_456_789))
        .with_pair_code(whatsapp_rust::pair_code::PairCodeOptions {
            phone_number: OWNER.into(),
            ..Default::default()
        })
        .on_event(move |event, _client| {
            seen.lock().unwrap().push(event);
            async {}
        })
        .build()
        .await
        .expect("bot");
    let dev = Device {
        client: bot.client(),
        events,
        handle: Some(bot.spawn()),
    };
    let code = dev
        .wait_event("pairing code", |e| match e {
            Event::PairingCode(c) => Some(c.code.clone()),
            _ => None,
        })
        .await;
    // The code is typed once the device has asked for one (its
    // companion_hello reached the server).
    blocking(|| poll::until_blocking(secs(30), ms(20), || wa.link_with_code(OWNER, &code)));
    dev.wait_connected_n(1).await;
    assert_eq!(wa.companions(OWNER).len(), 1);
    let hello = wa.send_text(ANN, OWNER, "linked by code");
    dev.wait_message(&hello).await;
    dev.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pings_both_ways_keep_the_device_connected() {
    let (wa, dev, _) = linked().await;
    // The server's ping is answered.
    let ids = wa.ping(OWNER);
    assert_eq!(ids.len(), 1);
    let attr = |n: &wacore_binary::Node, k: &str| n.attrs.get(k).map(|v| v.as_str().to_string());
    let pong = poll::until(secs(10), ms(20), async || {
        let answers = wa.nodes_from_devices("iq");
        answers
            .iter()
            .find(|n| attr(n, "id") == Some(ids[0].clone()))
            .map(|n| attr(n, "type"))
            .ok_or("no pong yet")
    })
    .await;
    assert_eq!(pong.as_deref(), Some("result"));
    // The client's keepalive (every 15-30 s) is answered, and it stays on
    // the same socket.
    let ping = poll::until(secs(45), ms(100), async || {
        let sent = wa.nodes_from_devices("iq");
        sent.iter()
            .find(|n| attr(n, "xmlns").as_deref() == Some("w:p"))
            .map(|n| {
                (
                    attr(n, "type"),
                    n.children()
                        .map(|c| c.iter().map(|c| c.tag.to_string()).collect::<Vec<_>>()),
                )
            })
            .ok_or("no keepalive yet")
    })
    .await;
    assert_eq!(ping, (Some("get".to_string()), None));
    assert_eq!(wa.logins(OWNER).len(), 1);
    assert!(wa.connected(OWNER));
    dev.stop().await;
}
