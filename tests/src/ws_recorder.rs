//! A recording WebSocket proxy: a client connects to it, it opens the
//! gateway's `/ws` for that client, relays every message both ways and
//! keeps each text frame with its connection number and direction. It
//! records what GSV v1's own CLI and node send and receive
//! (tests/fixtures/v1, see tests/tests/v1_clients.rs), without touching
//! either end.

use futures::{SinkExt, StreamExt};
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio_tungstenite::tungstenite::Message;

/// Which way a frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// From the client (CLI, node) to the gateway.
    Sent,
    /// From the gateway to the client.
    Received,
}

impl Dir {
    pub fn as_str(self) -> &'static str {
        match self {
            Dir::Sent => "sent",
            Dir::Received => "received",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The connection, numbered from 0 in the order they were opened.
    pub conn: usize,
    pub dir: Dir,
    /// The frame (a JSON string holding the text if it was not JSON).
    pub frame: Value,
}

pub struct WsRecorder {
    frames: Arc<Mutex<Vec<Recorded>>>,
    addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for WsRecorder {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl WsRecorder {
    /// Relays to `upstream` (`ws://127.0.0.1:PORT/ws`).
    pub fn start(upstream: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ws-recorder")
            .enable_all()
            .build()
            .expect("recorder runtime");
        let frames = Arc::new(Mutex::new(Vec::new()));
        let listener = {
            let _context = runtime.enter();
            crate::fake_discord::loopback_listener()
        };
        let addr = listener.local_addr().unwrap();
        let shared = frames.clone();
        let upstream = upstream.to_string();
        let next_conn = Arc::new(AtomicUsize::new(0));
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let conn = next_conn.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(relay(stream, upstream.clone(), conn, shared.clone()));
            }
        });
        Self {
            frames,
            addr,
            runtime: Some(runtime),
        }
    }

    /// The URL to give the client instead of the gateway's.
    pub fn url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// Every frame so far, in the order the proxy relayed them.
    pub fn frames(&self) -> Vec<Recorded> {
        self.frames.lock().unwrap().clone()
    }
}

async fn relay(
    stream: tokio::net::TcpStream,
    upstream: String,
    conn: usize,
    frames: Arc<Mutex<Vec<Recorded>>>,
) {
    let Ok(client) = tokio_tungstenite::accept_async(stream).await else {
        return;
    };
    let Ok((gateway, _)) = tokio_tungstenite::connect_async(upstream.as_str()).await else {
        return;
    };
    let (mut to_client, mut from_client) = client.split();
    let (mut to_gateway, mut from_gateway) = gateway.split();
    let keep = |dir: Dir, msg: &Message| {
        let frame = match msg {
            Message::Text(text) => serde_json::from_str(text.as_str())
                .unwrap_or_else(|_| Value::String(text.to_string())),
            Message::Close(close) => {
                crate::v1_replay::close_marker(close.as_ref().map(|c| c.code.into()))
            }
            _ => return,
        };
        frames.lock().unwrap().push(Recorded { conn, dir, frame });
    };
    loop {
        tokio::select! {
            msg = from_client.next() => match msg {
                Some(Ok(msg)) => {
                    keep(Dir::Sent, &msg);
                    let close = matches!(msg, Message::Close(_));
                    if to_gateway.send(msg).await.is_err() || close {
                        break;
                    }
                }
                _ => break,
            },
            msg = from_gateway.next() => match msg {
                Some(Ok(msg)) => {
                    keep(Dir::Received, &msg);
                    let close = matches!(msg, Message::Close(_));
                    if to_client.send(msg).await.is_err() || close {
                        break;
                    }
                }
                _ => break,
            },
        }
    }
    let _ = to_gateway.close().await;
    let _ = to_client.close().await;
}
