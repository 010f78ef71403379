//! A tiny in-process gateway for tests: accepts WebSockets on 127.0.0.1 and
//! runs the test's script on each connection.

use futures_util::{SinkExt, StreamExt};
use gsv_protocol::{ConnectParams, ErrorShape, Frame, RequestFrame};
use serde_json::{json, Value};
use std::future::Future;
use std::sync::{Arc, Mutex};
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
    try_next_request(ws).await.expect("client went away")
}

/// The next request frame, or `None` once the client has gone.
pub async fn try_next_request(ws: &mut ServerSocket) -> Option<RequestFrame> {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(text))) => match serde_json::from_str(&text) {
                Ok(Frame::Req(req)) => return Some(req),
                other => panic!("fake gateway got an unexpected frame: {other:?}"),
            },
            Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return None,
            Some(Ok(_)) => continue,
        }
    }
}

/// What a [`CannedGateway`] answers one request with.
pub type Answer = Result<Value, ErrorShape>;

/// A gateway that accepts `connect`, then answers every request with
/// `answer(method, params)` (params `null` when absent) and records each
/// `(method, params)` it got, across connections, in order.
pub struct CannedGateway {
    pub gateway: FakeGateway,
    requests: Arc<Mutex<Vec<(String, Value)>>>,
}

impl CannedGateway {
    pub async fn start<F>(answer: F) -> Self
    where
        F: Fn(&str, &Value) -> Answer + Send + Sync + 'static,
    {
        let answer = Arc::new(answer);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = requests.clone();
        let gateway = FakeGateway::start(move |mut ws| {
            let (answer, recorded) = (answer.clone(), recorded.clone());
            async move {
                accept_connect(&mut ws).await;
                while let Some(req) = try_next_request(&mut ws).await {
                    let params = req.params.unwrap_or(Value::Null);
                    let frame = match answer(&req.method, &params) {
                        Ok(payload) => Frame::ok(req.id, payload),
                        Err(error) => Frame::err(req.id, error),
                    };
                    recorded.lock().unwrap().push((req.method, params));
                    send(&mut ws, frame).await;
                }
            }
        })
        .await;
        Self { gateway, requests }
    }

    pub fn url(&self) -> &str {
        &self.gateway.url
    }

    /// The requests answered so far (`connect` excluded).
    pub fn requests(&self) -> Vec<(String, Value)> {
        self.requests.lock().unwrap().clone()
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
