//! The chat socket: a WebSocket at `/ws/chat` whose binary messages carry
//! the connection intro (optional edge-routing pre-intro, `WA_CONN_HEADER`)
//! and 3-byte frames; the Noise handshake ([`super::noise`]); then each
//! frame one encrypted node (a flag byte, zlib when its bit 2 is set, then
//! wacore-binary's encoding). The `ClientPayload` the handshake carried
//! decides what the socket is: a new device registering (pairing) or a
//! linked device logging in (`<success>`, or `<failure reason="401">` for
//! one that was unlinked or whose Noise key does not match).
//!
//! Delivery to a logged-in device: stanzas wait in its outbox until it acks
//! them. When the device goes active, whatever waits is its offline backlog,
//! delivered as WA Web's offline handler expects (`<ib><offline_preview
//! count/>`, a primer of five, more on each `<ib><offline_batch count/>`,
//! then `<ib><offline count/>`); after that, stanzas go out as they come.

use super::noise::{self, Hello};
use super::wire::{self, node, s};
use super::{Companion, Conn, LoggedNode, Out, Shared, World};
use futures::{SinkExt, StreamExt};
use std::sync::Arc;
use std::time::Instant;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::Message as WsMessage;
use wacore_binary::Node;
use waproto::buffa::Message as _;
use waproto::whatsapp as wa;

/// How many backlog stanzas go out before the client asks for more.
const PRIMER: usize = 5;

/// A device's offline backlog on this connection.
#[derive(Default)]
pub(crate) struct Offline {
    pub total: usize,
    pub sent: usize,
    /// The backlog is out (`<offline count>` sent): stanzas go live.
    pub done: bool,
}

pub(crate) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        // Each stanza goes out when written, as from WhatsApp's servers:
        // with Nagle's algorithm a stanza written right after another waits
        // for the device's delayed ACK (up to 40 ms on Linux).
        let _ = stream.set_nodelay(true);
        tokio::spawn(socket(stream, shared.clone()));
    }
}

type Ws = tokio_tungstenite::WebSocketStream<TcpStream>;

async fn read_more(ws: &mut Ws, buf: &mut Vec<u8>) -> Option<()> {
    loop {
        match ws.next().await? {
            Ok(WsMessage::Binary(b)) => {
                buf.extend_from_slice(&b);
                return Some(());
            }
            Ok(WsMessage::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

async fn next_frame(ws: &mut Ws, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    loop {
        if let Some(f) = noise::take_frame(buf) {
            return Some(f);
        }
        read_more(ws, buf).await?;
    }
}

async fn socket(stream: TcpStream, shared: Arc<Shared>) {
    #[allow(clippy::result_large_err)]
    let check = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        if req.uri().path() == "/ws/chat" {
            Ok(resp)
        } else {
            let mut r = ErrorResponse::new(Some("not found".into()));
            *r.status_mut() = tokio_tungstenite::tungstenite::http::StatusCode::NOT_FOUND;
            Err(r)
        }
    };
    let mut ws = match tokio_tungstenite::accept_hdr_async(stream, check).await {
        Ok(ws) => ws,
        Err(e) => {
            eprintln!("[fake-wa] a socket was refused: {e}");
            return;
        }
    };
    let mut buf = Vec::new();
    // The intro, then the client's hello.
    loop {
        match noise::strip_intro(&buf) {
            Some(Ok(n)) => {
                buf.drain(..n);
                break;
            }
            Some(Err(e)) => {
                eprintln!("[fake-wa] a socket began without WhatsApp's intro: {e:?}");
                return;
            }
            None => {
                if read_more(&mut ws, &mut buf).await.is_none() {
                    eprintln!("[fake-wa] a socket closed before its hello");
                    return;
                }
            }
        }
    }
    let Some(hello) = next_frame(&mut ws, &mut buf).await else {
        eprintln!("[fake-wa] a socket closed before its hello");
        return;
    };
    let answer = {
        let w = shared.lock();
        noise::answer_hello(&w.keys, &hello, w.refuse_ik)
    };
    let (client_static, payload, mut transport, pattern) = match answer {
        Ok(Hello::Resumed {
            server_hello,
            client_static,
            payload,
            transport,
        }) => {
            if ws
                .send(WsMessage::binary(noise::frame(&server_hello)))
                .await
                .is_err()
            {
                return;
            }
            (client_static, payload, transport, "IK")
        }
        Ok(Hello::Full {
            server_hello,
            pending,
            fallback,
        }) => {
            if ws
                .send(WsMessage::binary(noise::frame(&server_hello)))
                .await
                .is_err()
            {
                return;
            }
            let Some(finish) = next_frame(&mut ws, &mut buf).await else {
                return;
            };
            match pending.finish(&finish) {
                Ok(f) => (
                    f.client_static,
                    f.payload,
                    f.transport,
                    if fallback { "XXfallback" } else { "XX" },
                ),
                Err(e) => {
                    eprintln!("[fake-wa] handshake failed: {e}");
                    return;
                }
            }
        }
        Err(e) => {
            eprintln!("[fake-wa] handshake failed: {e}");
            return;
        }
    };
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let id = {
        let mut w = shared.lock();
        w.next_conn += 1;
        let id = w.next_conn;
        w.conns.insert(
            id,
            Conn {
                tx,
                device: None,
                registration: None,
                active: false,
                offline: Offline::default(),
                pattern,
            },
        );
        w.on_payload(id, client_static, &payload);
        id
    };
    loop {
        tokio::select! {
            out = rx.recv() => match out {
                Some(Out::Node(n)) => {
                    let Ok(plain) = wacore_binary::marshal(&n) else { continue };
                    let frame = noise::frame(&transport.encrypt(&plain));
                    if ws.send(WsMessage::binary(frame)).await.is_err() {
                        break;
                    }
                }
                Some(Out::Close) => {
                    let _ = ws.close(None).await;
                    break;
                }
                Some(Out::Drop) | None => break,
            },
            more = read_more(&mut ws, &mut buf) => {
                if more.is_none() {
                    break;
                }
                let mut broken = false;
                while let Some(f) = noise::take_frame(&mut buf) {
                    match decode(&mut transport, &f) {
                        Ok(n) => shared.lock().on_node(id, n),
                        Err(e) => {
                            eprintln!("[fake-wa {id}] bad frame: {e}");
                            broken = true;
                            break;
                        }
                    }
                }
                if broken {
                    break;
                }
            }
        }
    }
    shared.lock().on_closed(id);
}

fn decode(transport: &mut noise::Transport, frame: &[u8]) -> Result<Node, String> {
    let plain = transport.decrypt(frame)?;
    let data = wacore_binary::util::unpack(&plain).map_err(|e| e.to_string())?;
    let n = wacore_binary::marshal::unmarshal_ref(&data).map_err(|e| e.to_string())?;
    Ok(n.to_owned())
}

impl World {
    /// The `ClientPayload` of a finished handshake.
    fn on_payload(&mut self, conn: u64, client_static: [u8; 32], payload: &[u8]) {
        let Ok(p) = wa::ClientPayload::decode_from_slice(payload) else {
            self.close(conn, Out::Drop);
            return;
        };
        if let Some(reg) = p.device_pairing_data.as_option() {
            self.on_registration(conn, client_static, reg);
            return;
        }
        let phone = p.username.map(|u| u.to_string()).unwrap_or_default();
        let device = p.device.unwrap_or(0) as u16;
        let known = self
            .accounts
            .get(&phone)
            .and_then(|a| a.companions.get(&device))
            .is_some_and(|c| !c.removed && c.noise == client_static);
        if !known {
            let n = node(
                "failure",
                &[("reason", s("401")), ("location", s("frc"))],
                vec![],
            );
            self.send(conn, n);
            self.close(conn, Out::Close);
            return;
        }
        // A second socket for the same device replaces the first.
        let old = self.account(&phone).companions[&device].conn;
        if let Some(old) = old.filter(|o| *o != conn && self.conns.contains_key(o)) {
            let n = node(
                "stream:error",
                &[],
                vec![node("conflict", &[("type", s("replaced"))], vec![])],
            );
            self.send(old, n);
            self.close(old, Out::Close);
            if let Some(c) = self.conns.get_mut(&old) {
                c.device = None;
            }
        }
        let pattern = match self.conns.get_mut(&conn) {
            Some(c) => {
                c.device = Some((phone.clone(), device));
                c.pattern
            }
            None => "",
        };
        self.logins.push(super::Login {
            phone: phone.clone(),
            device,
            pattern: pattern.to_string(),
        });
        let a = self.account_mut(&phone);
        a.companions.get_mut(&device).expect("companion").conn = Some(conn);
        let (lid, created) = (a.lid.clone(), a.created);
        let now = noise::now_secs();
        let success = node(
            "success",
            &[
                ("t", s(now.to_string())),
                ("props", s("1")),
                ("abprops", s("1")),
                ("location", s("frc")),
                ("creation", s(created.to_string())),
                ("lid", wire::j(&wire::lid(&lid, device))),
            ],
            vec![],
        );
        self.send(conn, success);
    }

    /// A node from the device on `conn`.
    fn on_node(&mut self, conn: u64, n: Node) {
        let device = self.conns.get(&conn).and_then(|c| c.device.clone());
        if self.trace {
            eprintln!("[fake-wa {conn} <-]\n{}", wire::render(&n));
        }
        self.log.push(LoggedNode {
            incoming: true,
            device,
            node: n.clone(),
            at: Instant::now(),
        });
        self.route(conn, n);
    }

    fn on_closed(&mut self, conn: u64) {
        let Some(c) = self.conns.remove(&conn) else {
            return;
        };
        if let Some((phone, device)) = c.device {
            if let Some(comp) = self
                .accounts
                .get_mut(&phone)
                .and_then(|a| a.companions.get_mut(&device))
            {
                if comp.conn == Some(conn) {
                    comp.conn = None;
                }
            }
        }
    }

    pub(crate) fn companion_mut(&mut self, phone: &str, device: u16) -> Option<&mut Companion> {
        self.accounts
            .get_mut(phone)
            .and_then(|a| a.companions.get_mut(&device))
    }

    /// Queues `node` for the device and sends it if the device is live.
    pub(crate) fn enqueue(&mut self, phone: &str, device: u16, node: Node) {
        let id = wire::attr(&node, "id").unwrap_or_default();
        let from = wire::attr(&node, "from").unwrap_or_default();
        let participant = wire::attr(&node, "participant");
        let Some(c) = self.companion_mut(phone, device) else {
            return;
        };
        if c.removed {
            return;
        }
        c.outbox.push(super::Pending {
            id,
            from,
            participant,
            node,
            sent_on: None,
        });
        self.deliver(phone, device);
    }

    /// Sends what is queued for a live device that has drained its backlog.
    pub(crate) fn deliver(&mut self, phone: &str, device: u16) {
        let Some(conn) = self.companion_mut(phone, device).and_then(|c| c.conn) else {
            return;
        };
        if !self
            .conns
            .get(&conn)
            .is_some_and(|c| c.active && c.offline.done)
        {
            return;
        }
        let c = self.companion_mut(phone, device).expect("companion");
        let mut out = Vec::new();
        for p in c.outbox.iter_mut().filter(|p| p.sent_on != Some(conn)) {
            p.sent_on = Some(conn);
            out.push(p.node.clone());
        }
        for n in out {
            self.send(conn, n);
        }
    }

    /// `<active/>`: the device's backlog starts.
    pub(crate) fn on_active(&mut self, conn: u64) {
        let Some((phone, device)) = self.conns.get(&conn).and_then(|c| c.device.clone()) else {
            return;
        };
        let Some(c) = self.companion_mut(&phone, device) else {
            return;
        };
        let (mut messages, mut receipts, mut notifications) = (0, 0, 0);
        for p in &c.outbox {
            match p.node.tag.as_ref() {
                "message" => messages += 1,
                "receipt" => receipts += 1,
                _ => notifications += 1,
            }
        }
        let total = c.outbox.len();
        let conn_state = self.conns.get_mut(&conn).expect("conn");
        conn_state.active = true;
        conn_state.offline = Offline {
            total,
            sent: 0,
            done: false,
        };
        if total > 0 {
            let n = node(
                "ib",
                &[],
                vec![node(
                    "offline_preview",
                    &[
                        ("count", s(total.to_string())),
                        ("message", s(messages.to_string())),
                        ("receipt", s(receipts.to_string())),
                        ("notification", s(notifications.to_string())),
                        ("call", s("0")),
                        ("appdata", s("0")),
                    ],
                    vec![],
                )],
            );
            self.send(conn, n);
        }
        self.send_backlog(conn, PRIMER);
    }

    /// `<offline_batch count>`: the next part of the backlog.
    pub(crate) fn on_offline_batch(&mut self, conn: u64, count: usize) {
        if self.conns.get(&conn).is_some_and(|c| !c.offline.done) {
            self.send_backlog(conn, count);
        }
    }

    fn send_backlog(&mut self, conn: u64, count: usize) {
        let Some((phone, device)) = self.conns.get(&conn).and_then(|c| c.device.clone()) else {
            return;
        };
        let Some(c) = self.companion_mut(&phone, device) else {
            return;
        };
        let mut out = Vec::new();
        for p in c
            .outbox
            .iter_mut()
            .filter(|p| p.sent_on != Some(conn))
            .take(count)
        {
            p.sent_on = Some(conn);
            let mut n = p.node.clone();
            n.attrs.insert("offline", s("1"));
            out.push(n);
        }
        let sent = out.len();
        for n in out {
            self.send(conn, n);
        }
        let state = self.conns.get_mut(&conn).expect("conn");
        state.offline.sent += sent;
        if state.offline.sent >= state.offline.total {
            state.offline.done = true;
            let total = state.offline.total;
            let n = node(
                "ib",
                &[],
                vec![node("offline", &[("count", s(total.to_string()))], vec![])],
            );
            self.send(conn, n);
            self.deliver(&phone, device);
        }
    }

    /// The device acked a stanza: it leaves the outbox.
    pub(crate) fn on_ack(&mut self, conn: u64, ack: &Node) {
        let Some((phone, device)) = self.conns.get(&conn).and_then(|c| c.device.clone()) else {
            return;
        };
        let id = wire::attr(ack, "id").unwrap_or_default();
        let to = wire::attr(ack, "to").unwrap_or_default();
        let participant = wire::attr(ack, "participant");
        if let Some(c) = self.companion_mut(&phone, device) {
            let hit = c.outbox.iter().position(|p| {
                p.id == id
                    && (to.is_empty() || same_jid(&p.from, &to))
                    && (participant.is_none()
                        || p.participant
                            .as_deref()
                            .zip(participant.as_deref())
                            .is_some_and(|(a, b)| same_jid(a, b)))
            });
            if let Some(i) = hit {
                c.outbox.remove(i);
            }
        }
    }
}

/// Two renderings of a JID name the same address (device 0 may be spelled
/// with or without `:0`).
fn same_jid(a: &str, b: &str) -> bool {
    a == b || a.replace(":0@", "@") == b.replace(":0@", "@")
}
