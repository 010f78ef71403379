//! A tiny in-process gateway for tests: accepts WebSockets on 127.0.0.1 and
//! runs the test's script on each connection.

use futures_util::{SinkExt, StreamExt};
use gsv_protocol::{ConnectParams, Frame, RequestFrame};
use serde_json::{json, Value};
use std::future::Future;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

pub type ServerSocket = WebSocketStream<TcpStream>;

pub struct FakeGateway {
    pub url: String,
    accept_loop: tokio::task::JoinHandle<()>,
}

impl FakeGateway {
    pub async fn start<Script, Fut>(script: Script) -> Self
    where
        Script: Fn(ServerSocket) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("ws://{}/ws", listener.local_addr().unwrap());
        let accept_loop = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                if let Ok(ws) = tokio_tungstenite::accept_async(tcp).await {
                    tokio::spawn(script(ws));
                }
            }
        });
        Self { url, accept_loop }
    }
}

impl Drop for FakeGateway {
    fn drop(&mut self) {
        self.accept_loop.abort();
    }
}

/// The next request frame; panics if the client closes first.
pub async fn next_request(ws: &mut ServerSocket) -> RequestFrame {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(text))) => match serde_json::from_str(&text) {
                Ok(Frame::Req(req)) => return req,
                other => panic!("fake gateway got an unexpected frame: {other:?}"),
            },
            Some(Ok(_)) => continue,
            other => panic!("client went away: {other:?}"),
        }
    }
}

pub async fn send(ws: &mut ServerSocket, frame: Frame) {
    ws.send(Message::text(frame.to_json())).await.unwrap();
}

pub async fn close(ws: &mut ServerSocket, code: u16, reason: &str) {
    let frame = CloseFrame {
        code: CloseCode::from(code),
        reason: reason.into(),
    };
    let _ = ws.close(Some(frame)).await;
    // Let the close handshake finish so the client sees the frame.
    while let Some(Ok(_)) = ws.next().await {}
}

/// Reads the `connect` request, answers hello-ok, returns its params.
pub async fn accept_connect(ws: &mut ServerSocket) -> ConnectParams {
    let req = next_request(ws).await;
    assert_eq!(req.method, "connect");
    send(ws, Frame::ok(req.id, hello_ok())).await;
    serde_json::from_value(req.params.unwrap()).unwrap()
}

pub fn hello_ok() -> Value {
    json!({
        "type": "hello-ok",
        "protocol": 1,
        "server": {"version": "0.1.0", "connectionId": "conn-1"},
        "features": {"methods": ["chat.send", "config.get", "config.set"], "events": ["chat"]}
    })
}
