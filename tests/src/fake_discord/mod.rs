//! A fake Discord on loopback, exact to the public API docs where the
//! channel touches it: the gateway WebSocket (v10, JSON: HELLO, IDENTIFY
//! with token and intent checks, READY, rising sequence numbers, heartbeat
//! ACKs, RESUME with replay of missed dispatches, op 7 / op 9 / close codes
//! on demand, 4009 on a missed heartbeat) on one port, and REST
//! (`GET /gateway/bot`, `POST /channels/{id}/messages` validated against
//! `MessageCreateRequest`, `POST /channels/{id}/typing`, scriptable 429s and
//! 5xx, 401 for a bad token) on another. Everything it receives is logged
//! for the tests to read.
//!
//! ```text
//! let discord = FakeDiscord::start();
//! // channel Worker: DISCORD_API_BASE = discord.api_base(), token FAKE_BOT_TOKEN
//! discord.dispatch("MESSAGE_CREATE", messages::dm("m1", "hello"));
//! ```
//!
//! Like the fake LLM it runs on its own runtime thread, so it answers while
//! a test blocks.

mod gateway;
pub mod messages;
mod rest;

use crate::poll::{self, ms};
use serde_json::Value;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

/// The bot token the fake accepts.
pub const FAKE_BOT_TOKEN: &str = "fake-discord-bot-token";
/// The bot's user (READY's `user`, the author of its messages).
pub const BOT_USER_ID: &str = "100000000000000001";
pub const BOT_USERNAME: &str = "gsv-bot";

/// Privileged intents: GUILD_MEMBERS, GUILD_PRESENCES, MESSAGE_CONTENT.
pub const PRIVILEGED_INTENTS: u64 = (1 << 1) | (1 << 8) | (1 << 15);

/// One frame that crossed the gateway socket.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayRecord {
    /// The connection (1, 2, … in order of opening).
    pub conn: u64,
    /// True: the client sent it; false: the fake did.
    pub from_client: bool,
    pub frame: Value,
    /// When the fake received it (client frames) or was about to write it
    /// to the socket (its own), for timing.
    pub at: Instant,
}

/// How a gateway connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionEnd {
    pub conn: u64,
    /// The close code, and whether the fake was the one that closed.
    pub code: Option<u16>,
    pub by_server: bool,
}

/// One REST request.
#[derive(Debug, Clone, PartialEq)]
pub struct RestRecord {
    pub method: String,
    /// Without the `/api/v10` prefix.
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
    /// The status the fake answered.
    pub status: u16,
    /// When the request arrived (its head, before the body was read).
    pub received_at: Instant,
}

/// A scripted REST failure for the next request whose path ends with a suffix.
#[derive(Debug, Clone, PartialEq)]
pub enum RestFailure {
    /// 429 with `retry_after` seconds (body and headers).
    RateLimited { retry_after: f64, global: bool },
    /// Any status with Discord's error body.
    Status(u16),
}

pub(crate) enum Out {
    Frame(Value),
    Close(u16, &'static str),
}

pub(crate) struct Session {
    pub seq: u64,
    /// Every dispatch of the session, for replay on RESUME.
    pub events: Vec<Value>,
    /// The connection dispatches go to; `None` while the client is away.
    pub conn: Option<u64>,
}

pub(crate) struct State {
    pub heartbeat_interval_ms: u64,
    /// How late a heartbeat may be before the fake closes with 4009.
    pub heartbeat_grace_ms: u64,
    pub privileged_allowed: bool,
    /// Whether heartbeats are acknowledged (off: a zombied connection).
    pub acks: bool,
    pub ws_addr: Option<SocketAddr>,
    pub next_conn: u64,
    pub conns: HashMap<u64, UnboundedSender<Out>>,
    pub sessions: HashMap<String, Session>,
    /// The newest session (where injected events go).
    pub live: Option<String>,
    pub gateway_log: Vec<GatewayRecord>,
    pub ends: Vec<ConnectionEnd>,
    pub rest_log: Vec<RestRecord>,
    pub failures: Vec<(String, RestFailure)>,
    pub next_id: u64,
    /// Sent messages by (channel, nonce), for `enforce_nonce`.
    pub nonces: HashMap<(String, String), Value>,
    /// Files on the "CDN", by path (`/attachments/{channel}/{id}/{name}`):
    /// type and bytes.
    pub cdn: HashMap<String, (String, Arc<Vec<u8>>)>,
    /// Files the bot uploaded with its messages.
    pub uploads: Vec<Upload>,
}

/// A file the bot sent with a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Upload {
    pub channel: String,
    /// The message it came with.
    pub message_id: String,
    pub filename: String,
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
}

pub(crate) type Shared = Arc<Mutex<State>>;

pub struct FakeDiscord {
    state: Shared,
    rest_addr: SocketAddr,
    ws_addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for FakeDiscord {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Does not block, so dropping inside an async test is fine.
            runtime.shutdown_background();
        }
    }
}

/// A listener on 127.0.0.1 (binding needs no runtime; registering it needs
/// the fake's, entered by the caller, and works inside an async test).
pub(crate) fn loopback_listener() -> tokio::net::TcpListener {
    let std = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    std.set_nonblocking(true).unwrap();
    tokio::net::TcpListener::from_std(std).unwrap()
}

impl FakeDiscord {
    pub fn start() -> FakeDiscord {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("fake-discord")
            .enable_all()
            .build()
            .expect("fake Discord runtime");
        let state = Arc::new(Mutex::new(State {
            heartbeat_interval_ms: 2_000,
            heartbeat_grace_ms: 3_000,
            privileged_allowed: true,
            acks: true,
            ws_addr: None,
            next_conn: 0,
            conns: HashMap::new(),
            sessions: HashMap::new(),
            live: None,
            gateway_log: Vec::new(),
            ends: Vec::new(),
            rest_log: Vec::new(),
            failures: Vec::new(),
            next_id: 1_300_000_000_000_000_000,
            nonces: HashMap::new(),
            cdn: HashMap::new(),
            uploads: Vec::new(),
        }));
        let (rest, ws) = {
            let _context = runtime.enter();
            (loopback_listener(), loopback_listener())
        };
        let rest_addr = rest.local_addr().unwrap();
        let ws_addr = ws.local_addr().unwrap();
        state.lock().unwrap().ws_addr = Some(ws_addr);
        runtime.spawn(rest::serve(rest, state.clone()));
        runtime.spawn(gateway::serve(ws, state.clone()));
        FakeDiscord {
            state,
            rest_addr,
            ws_addr,
            runtime: Some(runtime),
        }
    }

    /// `http://127.0.0.1:PORT/api/v10`: the channel's `DISCORD_API_BASE`.
    pub fn api_base(&self) -> String {
        format!("http://{}/api/v10", self.rest_addr)
    }

    /// `ws://127.0.0.1:PORT`: what `GET /gateway/bot` answers.
    pub fn gateway_url(&self) -> String {
        format!("ws://{}", self.ws_addr)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    /// Puts a file on the fake's "CDN" and adds it to message `m` as
    /// Discord lists an attachment (its `url` on the fake's host).
    pub fn attach(
        &self,
        mut m: Value,
        filename: &str,
        content_type: &str,
        bytes: Vec<u8>,
    ) -> Value {
        let mut s = self.lock();
        s.next_id += 1;
        let id = s.next_id.to_string();
        let path = format!(
            "/attachments/{}/{id}/{filename}",
            m["channel_id"].as_str().unwrap_or_default()
        );
        let url = format!(
            "http://{}{path}?ex=6750&is=6740&hm=fakehash",
            self.rest_addr
        );
        let size = bytes.len();
        s.cdn
            .insert(path, (content_type.to_string(), Arc::new(bytes)));
        if let Some(list) = m["attachments"].as_array_mut() {
            list.push(
                serde_json::json!({"id": id, "filename": filename, "size": size, "url": url,
                             "proxy_url": url, "content_type": content_type}),
            );
        }
        m
    }

    /// Files the bot uploaded, in order.
    pub fn uploads(&self) -> Vec<Upload> {
        self.lock().uploads.clone()
    }

    /// HELLO's `heartbeat_interval` for new connections (default 2000 ms).
    pub fn set_heartbeat_interval_ms(&self, ms: u64) {
        self.lock().heartbeat_interval_ms = ms;
    }

    /// How late past the interval a heartbeat may come before the fake
    /// closes with 4009 (default 3000 ms).
    pub fn set_heartbeat_grace_ms(&self, ms: u64) {
        self.lock().heartbeat_grace_ms = ms;
    }

    /// Whether heartbeats get their ACK (default yes). Without, the
    /// connection looks zombied to the client.
    pub fn set_acks(&self, on: bool) {
        self.lock().acks = on;
    }

    /// Whether IDENTIFY may ask for privileged intents (default yes);
    /// otherwise it is closed with 4014.
    pub fn set_privileged_intents_allowed(&self, allowed: bool) {
        self.lock().privileged_allowed = allowed;
    }

    /// Dispatches an event in the newest session: sent at once if the
    /// client is connected, else kept for its RESUME. Its sequence number.
    pub fn dispatch(&self, event: &str, d: Value) -> Option<u64> {
        let mut state = self.lock();
        let live = state.live.clone()?;
        Some(gateway::dispatch(&mut state, &live, event, d))
    }

    /// Sends op 7 RECONNECT on the newest session's connection; dispatches
    /// from now on wait for the client's RESUME.
    pub fn send_reconnect(&self) {
        let mut state = self.lock();
        gateway::to_live_connection(&mut state, |_| {
            Some(Out::Frame(serde_json::json!({"op": 7, "d": null})))
        });
    }

    /// Sends op 9 INVALID_SESSION; a non-resumable one ends the session.
    pub fn send_invalid_session(&self, resumable: bool) {
        let mut state = self.lock();
        gateway::to_live_connection(&mut state, |_| {
            Some(Out::Frame(serde_json::json!({"op": 9, "d": resumable})))
        });
        if !resumable {
            if let Some(live) = state.live.take() {
                state.sessions.remove(&live);
            }
        }
    }

    /// Closes the newest session's connection with `code`.
    pub fn close_connection(&self, code: u16) {
        let mut state = self.lock();
        gateway::to_live_connection(&mut state, |_| Some(Out::Close(code, "closed by the test")));
    }

    /// The next REST request whose path ends with `path_suffix` fails so.
    pub fn fail_next(&self, path_suffix: &str, failure: RestFailure) {
        self.lock()
            .failures
            .push((path_suffix.to_string(), failure));
    }

    pub fn gateway_log(&self) -> Vec<GatewayRecord> {
        self.lock().gateway_log.clone()
    }

    /// The frames the client sent with opcode `op`.
    pub fn client_frames(&self, op: u64) -> Vec<(u64, Value)> {
        self.lock()
            .gateway_log
            .iter()
            .filter(|r| r.from_client && r.frame["op"] == op)
            .map(|r| (r.conn, r.frame.clone()))
            .collect()
    }

    pub fn connection_ends(&self) -> Vec<ConnectionEnd> {
        self.lock().ends.clone()
    }

    /// How many gateway connections were opened.
    pub fn connections_opened(&self) -> u64 {
        self.lock().next_conn
    }

    pub fn rest_log(&self) -> Vec<RestRecord> {
        self.lock().rest_log.clone()
    }

    /// How many REST requests were logged so far.
    pub fn rest_log_len(&self) -> usize {
        self.lock().rest_log.len()
    }

    /// The REST requests logged from index `from` on (cheap to poll).
    pub fn rest_log_since(&self, from: usize) -> Vec<RestRecord> {
        self.lock()
            .rest_log
            .get(from..)
            .map(<[RestRecord]>::to_vec)
            .unwrap_or_default()
    }

    /// When the dispatch with sequence number `seq` of the newest session
    /// was written to the client's socket (`None` until it was).
    pub fn dispatched_at(&self, seq: u64) -> Option<Instant> {
        self.lock()
            .gateway_log
            .iter()
            .rev()
            .find(|r| !r.from_client && r.frame["op"] == 0 && r.frame["s"] == seq)
            .map(|r| r.at)
    }

    /// Polls `check` every 50 ms until it gives a value or `within` passes.
    pub fn wait_for<T>(
        &self,
        within: Duration,
        mut check: impl FnMut(&Self) -> Option<T>,
    ) -> Option<T> {
        poll::try_until_blocking(within, ms(50), || check(self).ok_or(())).ok()
    }
}

#[cfg(test)]
mod tests;
