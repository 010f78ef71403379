//! A protocol v1 WebSocket client for tests and the bench: raw frames in
//! and out, with helpers for the handshake, requests and `chat` events.

use crate::poll::{self, ms};
use futures::{SinkExt, StreamExt};
use gsv_protocol::{ChatEvent, ChatState, Frame, ResponseFrame};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message as WsMessage;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub struct Client {
    ws: Socket,
    next_id: u64,
    /// Events that arrived while waiting for a response.
    pub events: Vec<Frame>,
}

/// What the server did with the socket when it closed.
#[derive(Debug, Clone, PartialEq)]
pub struct Closed {
    pub code: u16,
    pub reason: String,
}

pub const TIMEOUT: Duration = Duration::from_secs(30);

impl Client {
    pub async fn open(url: &str) -> Self {
        let (ws, _) = tokio_tungstenite::connect_async(url)
            .await
            .expect("open websocket");
        Self {
            ws,
            next_id: 0,
            events: Vec::new(),
        }
    }

    /// Opens and completes the v1 handshake as a `client`.
    pub async fn connect(url: &str, token: Option<&str>) -> Self {
        let mut c = Self::open(url).await;
        // Unique ids: a second connection with the same id replaces the first.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = format!("test-{}-{n}", std::process::id());
        let res = c.request("connect", connect_params(&id, token)).await;
        assert!(res.ok, "connect failed: {res:?}");
        c
    }

    pub async fn send_text(&mut self, text: impl Into<String>) {
        self.ws
            .send(WsMessage::text(text.into()))
            .await
            .expect("send");
    }

    pub async fn send_binary(&mut self, bytes: Vec<u8>) {
        self.ws.send(WsMessage::binary(bytes)).await.expect("send");
    }

    /// The next frame, or the close that ended the socket.
    pub async fn next_frame(&mut self) -> Result<Frame, Closed> {
        self.next_frame_within(TIMEOUT).await
    }

    /// [`Self::next_frame`], waiting at most `within` (for long runs).
    pub async fn next_frame_within(&mut self, within: Duration) -> Result<Frame, Closed> {
        loop {
            let msg = tokio::time::timeout(within, self.ws.next())
                .await
                .expect("timed out waiting for a frame");
            match msg {
                Some(Ok(WsMessage::Text(t))) => {
                    return Ok(serde_json::from_str(&t).expect("gateway sent invalid JSON"))
                }
                Some(Ok(WsMessage::Close(frame))) => return Err(closed(frame)),
                Some(Ok(_)) => continue,
                Some(Err(_)) | None => {
                    return Err(Closed {
                        code: 1006,
                        reason: String::new(),
                    })
                }
            }
        }
    }

    /// The next text message, whatever it holds.
    pub async fn next_text(&mut self) -> String {
        loop {
            match tokio::time::timeout(TIMEOUT, self.ws.next())
                .await
                .expect("timed out")
            {
                Some(Ok(WsMessage::Text(t))) => return t.to_string(),
                Some(Ok(_)) => continue,
                other => panic!("socket ended: {other:?}"),
            }
        }
    }

    /// Sends a request and returns its response (events meanwhile are kept).
    pub async fn request(&mut self, method: &str, params: Value) -> ResponseFrame {
        self.next_id += 1;
        let id = format!("r{}", self.next_id);
        let frame = Frame::request(id.clone(), method, Some(params));
        self.send_text(frame.to_json()).await;
        self.response_to(&id).await
    }

    /// The roles of a session's stored messages (`session.preview`, up to
    /// `limit` of the last ones).
    pub async fn history_roles(&mut self, key: &str, limit: u32) -> Vec<String> {
        let res = self
            .request(
                "session.preview",
                serde_json::json!({"sessionKey": key, "limit": limit}),
            )
            .await;
        let preview = res.payload.unwrap_or_else(|| panic!("{:?}", res.error));
        preview["messages"]
            .as_array()
            .unwrap_or_else(|| panic!("no messages in {preview}"))
            .iter()
            .map(|m| m["role"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    pub async fn response_to(&mut self, id: &str) -> ResponseFrame {
        loop {
            match self.next_frame().await {
                Ok(Frame::Res(res)) if res.id == id => return res,
                Ok(other @ Frame::Evt(_)) => self.events.push(other),
                Ok(other) => panic!("unexpected frame while waiting for {id}: {other:?}"),
                Err(closed) => panic!("socket closed while waiting for {id}: {closed:?}"),
            }
        }
    }

    /// The last event (final or error) of `run_id`, waiting up to `within`
    /// for each frame: runs that go quiet for long (the benchmark's).
    pub async fn run_end_within(&mut self, run_id: &str, within: Duration) -> ChatEvent {
        loop {
            let chat = self.next_chat_within(within).await;
            if chat.run_id.as_deref() == Some(run_id)
                && matches!(chat.state, ChatState::Final | ChatState::Error)
            {
                return chat;
            }
        }
    }

    /// The next `chat` event (kept ones first).
    pub async fn next_chat(&mut self) -> ChatEvent {
        self.next_chat_within(TIMEOUT).await
    }

    /// [`Self::next_chat`], waiting at most `within` for each frame.
    pub async fn next_chat_within(&mut self, within: Duration) -> ChatEvent {
        loop {
            let frame = if self.events.is_empty() {
                self.next_frame_within(within)
                    .await
                    .expect("socket closed waiting for a chat event")
            } else {
                self.events.remove(0)
            };
            if let Frame::Evt(evt) = frame {
                if evt.event == "chat" {
                    return serde_json::from_value(evt.payload.unwrap()).expect("chat payload");
                }
            }
        }
    }

    /// The payload of the next event named `name` (kept ones first; other
    /// events are dropped).
    pub async fn next_event(&mut self, name: &str) -> Value {
        loop {
            let frame = if self.events.is_empty() {
                self.next_frame()
                    .await
                    .unwrap_or_else(|c| panic!("socket closed waiting for {name}: {c:?}"))
            } else {
                self.events.remove(0)
            };
            if let Frame::Evt(evt) = frame {
                if evt.event == name {
                    return evt.payload.unwrap_or(Value::Null);
                }
            }
        }
    }

    /// Collects the `chat` events of one run until its final or error.
    pub async fn run_events(&mut self, run_id: &str) -> Vec<ChatEvent> {
        let mut out = Vec::new();
        loop {
            let evt = self.next_chat().await;
            if evt.run_id.as_deref() != Some(run_id) {
                continue;
            }
            let done = matches!(evt.state, ChatState::Final | ChatState::Error);
            out.push(evt);
            if done {
                return out;
            }
        }
    }

    /// [`Self::run_events`], keeping other runs' `chat` events for later
    /// (a run this one started may end first).
    pub async fn run_events_keeping_others(&mut self, run_id: &str) -> Vec<ChatEvent> {
        let (mut out, mut kept) = (Vec::new(), Vec::new());
        loop {
            let evt = self.next_chat().await;
            if evt.run_id.as_deref() != Some(run_id) {
                let payload = serde_json::to_value(&evt).expect("chat event");
                kept.push(Frame::event("chat", payload));
                continue;
            }
            let done = matches!(evt.state, ChatState::Final | ChatState::Error);
            out.push(evt);
            if done {
                self.events.splice(0..0, kept);
                return out;
            }
        }
    }

    pub async fn chat_send(&mut self, session_key: &str, message: &str) -> String {
        let res = self
            .request(
                "chat.send",
                json!({"sessionKey": session_key, "message": message}),
            )
            .await;
        assert!(res.ok, "chat.send failed: {res:?}");
        res.payload.unwrap()["runId"].as_str().unwrap().to_string()
    }

    pub async fn config_set(&mut self, path: &str, value: Value) {
        let res = self
            .request("config.set", json!({"path": path, "value": value}))
            .await;
        assert!(res.ok, "config.set {path} failed: {res:?}");
    }

    /// Points the gateway's model at the fake LLM (OpenAI Chat Completions).
    pub async fn use_fake_openai(&mut self, llm: &crate::fake_llm::FakeLlm) {
        self.config_set("model", json!({"provider": "openai", "id": "gpt-test"}))
            .await;
        self.config_set("apiKeys.openai", json!(crate::fake_llm::FAKE_API_KEY))
            .await;
        self.config_set("providers.openai.baseUrl", json!(llm.base_url_openai()))
            .await;
    }

    /// Waits until `tools.list` names every tool in `names` (nodes that
    /// were just started have connected), at most `within`.
    pub async fn wait_for_tools(&mut self, names: &[&str], within: Duration) {
        poll::until(within, ms(100), async || {
            let list = self.request("tools.list", json!({})).await.payload.unwrap();
            let have: Vec<&str> = list["tools"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|t| t["name"].as_str())
                .collect();
            if names.iter().all(|n| have.contains(n)) {
                Ok(())
            } else {
                Err(format!("tools {names:?} never appeared: {have:?}"))
            }
        })
        .await;
    }

    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

fn closed(frame: Option<CloseFrame>) -> Closed {
    match frame {
        Some(f) => Closed {
            code: f.code.into(),
            reason: f.reason.to_string(),
        },
        None => Closed {
            code: 1005,
            reason: String::new(),
        },
    }
}

/// A node speaking the raw protocol with one tool, `Hang`, that answers
/// only what the test sends itself (calls and probes wait for the test).
pub async fn raw_node(url: &str, token: &str, id: &str) -> Client {
    let mut n = Client::open(url).await;
    let params = json!({
        "minProtocol": 1, "maxProtocol": 1,
        "client": {"id": id, "version": "test", "platform": "linux", "mode": "node"},
        "tools": [{"name": "Hang", "description": "never answers", "inputSchema": {"type": "object"}}],
        "nodeRuntime": {"hostRole": "specialized", "hostCapabilities": ["shell.exec"],
                        "toolCapabilities": {"Hang": ["shell.exec"]}},
        "auth": {"token": token}
    });
    let res = n.request("connect", params).await;
    assert!(res.ok, "{res:?}");
    n
}

/// A channel speaking v1's WebSocket fallback (`mode: "channel"`): the
/// gateway sends it `channel.outbound` and `channel.typing` events.
pub async fn raw_channel(url: &str, token: &str, channel: &str) -> Client {
    let mut c = Client::open(url).await;
    let params = json!({
        "minProtocol": 1, "maxProtocol": 1,
        "client": {"id": format!("{channel}-bridge"), "version": "test", "platform": "linux",
                   "mode": "channel", "channel": channel, "accountId": "default"},
        "auth": {"token": token}
    });
    let res = c.request("connect", params).await;
    assert!(res.ok, "{res:?}");
    c
}

pub fn connect_params(client_id: &str, token: Option<&str>) -> Value {
    let mut p = json!({
        "minProtocol": 1, "maxProtocol": 1,
        "client": {"id": client_id, "version": "test", "platform": "linux", "mode": "client"}
    });
    if let Some(t) = token {
        p["auth"] = json!({"token": t});
    }
    p
}

/// The text a client shows for a run: the deltas joined.
pub fn streamed_text(events: &[ChatEvent]) -> String {
    events.iter().filter_map(|e| e.delta.as_deref()).collect()
}
