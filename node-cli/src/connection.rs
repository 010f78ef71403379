//! One WebSocket connection to the gateway: the v1 `connect` handshake,
//! requests matched to responses by frame id, and a stream of `evt` frames.

mod errors;
#[cfg(test)]
mod tests;

pub use errors::{CloseReason, ConnectError, RequestError};

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use gsv_protocol::method::{self, Method};
use gsv_protocol::{
    AuthParams, ClientInfo, ClientMode, ConnectParams, ErrorShape, EventFrame, Frame,
    HelloOkResult, NodeRuntimeInfo, ResponseFrame, ToolDefinition, PROTOCOL_VERSION,
};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(15);
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Events buffered per subscriber; a chat reply reads them as they come, so
/// this only fills up if the terminal stops accepting output.
const EVENT_BUFFER: usize = 4096;

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub struct Connection {
    hello: Option<HelloOkResult>,
    shared: Arc<Shared>,
    outgoing: mpsc::UnboundedSender<Message>,
    next_id: AtomicU64,
    reader: tokio::task::JoinHandle<()>,
    inbound_rx: Mutex<Option<mpsc::UnboundedReceiver<Inbound>>>,
}

/// What a node connection receives, in order.
#[derive(Debug, Clone)]
pub enum Inbound {
    Event(EventFrame),
    Binary(Vec<u8>),
}

/// Who this connection is to the gateway.
#[derive(Debug, Clone)]
pub enum Identity {
    /// A chat client or admin command (a fresh id per process).
    Client,
    /// A node offering tools.
    Node {
        id: String,
        tools: Vec<ToolDefinition>,
        runtime: NodeRuntimeInfo,
    },
}

/// State the socket tasks and the requesters share.
struct Shared {
    state: Mutex<State>,
    /// When the last frame of any kind (pongs included) arrived.
    last_inbound: Mutex<Instant>,
    /// Events and binary frames in socket order (node connections only:
    /// a transfer's chunks must be seen after the event that announces them).
    inbound: Option<mpsc::UnboundedSender<Inbound>>,
    closed_tx: watch::Sender<Option<CloseReason>>,
    events: broadcast::Sender<EventFrame>,
}

#[derive(Default)]
struct State {
    pending: HashMap<String, oneshot::Sender<ResponseFrame>>,
    closed: Option<CloseReason>,
}

impl Connection {
    /// Opens the socket and performs the v1 handshake as a `client`.
    pub async fn connect(url: &str, token: Option<&str>) -> Result<Self, ConnectError> {
        Self::connect_as(url, token, &Identity::Client).await
    }

    /// Opens the socket and performs the v1 handshake as `identity`.
    pub async fn connect_as(
        url: &str,
        token: Option<&str>,
        identity: &Identity,
    ) -> Result<Self, ConnectError> {
        if !(url.starts_with("ws://") || url.starts_with("wss://")) {
            let reason = "it must start with ws://, wss://, http:// or https://".to_string();
            return Err(ConnectError::InvalidUrl {
                url: url.to_string(),
                reason,
            });
        }
        let opened = tokio::time::timeout(HANDSHAKE_TIMEOUT, tokio_tungstenite::connect_async(url));
        let socket = match opened.await {
            Err(_) => {
                let reason = format!("no answer within {} s", HANDSHAKE_TIMEOUT.as_secs());
                return Err(ConnectError::Unreachable {
                    url: url.to_string(),
                    reason,
                });
            }
            Ok(Err(e)) => return Err(ConnectError::from_ws_error(url, e, token.is_some())),
            Ok(Ok((socket, _response))) => socket,
        };
        let mut connection = Self::start(socket, matches!(identity, Identity::Node { .. }));
        let params = connect_params(token, identity)?;
        let answer = connection
            .call_value::<method::Connect>(&params, HANDSHAKE_TIMEOUT)
            .await
            .map_err(|e| ConnectError::from_handshake_error(url, e, token.is_some()))?;
        // Read here rather than by `call`: a hello that does not fit is a
        // connect error, worded as one.
        let hello: HelloOkResult =
            serde_json::from_value(answer).map_err(|e| ConnectError::BadHello {
                url: url.to_string(),
                detail: e.to_string(),
            })?;
        if hello.protocol != PROTOCOL_VERSION {
            // The type is `hello-ok` (it parsed); shown as on the wire.
            let kind = serde_json::to_string(&hello.kind).unwrap_or_default();
            let detail = format!("type {kind}, protocol {}", hello.protocol);
            return Err(ConnectError::BadHello {
                url: url.to_string(),
                detail,
            });
        }
        connection.hello = Some(hello);
        Ok(connection)
    }

    /// Spawns the reader and writer tasks around an open socket.
    fn start(socket: Socket, ordered: bool) -> Self {
        let (sink, stream) = socket.split();
        let (closed_tx, _) = watch::channel(None);
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let (inbound, inbound_rx) = match ordered {
            true => {
                let (tx, rx) = mpsc::unbounded_channel();
                (Some(tx), Some(rx))
            }
            false => (None, None),
        };
        let shared = Arc::new(Shared {
            inbound,
            state: Mutex::default(),
            last_inbound: Mutex::new(Instant::now()),
            closed_tx,
            events,
        });
        let (outgoing, outgoing_rx) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(sink, outgoing_rx, shared.clone()));
        let reader = tokio::spawn(read_loop(stream, shared.clone()));
        Self {
            hello: None,
            shared,
            outgoing,
            next_id: AtomicU64::new(1),
            reader,
            inbound_rx: Mutex::new(inbound_rx),
        }
    }

    /// The gateway's `hello-ok` answer.
    pub fn hello(&self) -> Option<&HelloOkResult> {
        self.hello.as_ref()
    }

    /// Calls `M` and reads its answer as `M::Result`.
    pub async fn call<M: Method>(&self, params: &M::Params) -> Result<M::Result, RequestError> {
        self.call_with_timeout::<M>(params, DEFAULT_REQUEST_TIMEOUT)
            .await
    }

    /// [`Connection::call`], waiting at most `limit` for the answer.
    pub async fn call_with_timeout<M: Method>(
        &self,
        params: &M::Params,
        limit: Duration,
    ) -> Result<M::Result, RequestError> {
        read_answer::<M>(self.call_value::<M>(params, limit).await?)
    }

    /// Calls `M` and returns its answer as sent (for `--json`, which shows
    /// fields this version does not know).
    pub async fn call_value<M: Method>(
        &self,
        params: &M::Params,
        limit: Duration,
    ) -> Result<Value, RequestError> {
        let params = serde_json::to_value(params).map_err(|e| RequestError::BadParams {
            method: M::NAME.into(),
            detail: e.to_string(),
        })?;
        self.request_with_timeout(M::NAME, params, limit).await
    }

    /// Sends any name, known or not (the tests' unknown methods); the
    /// CLI itself calls only the table's methods, through `call`.
    #[cfg(test)]
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RequestError> {
        self.request_with_timeout(method, params, DEFAULT_REQUEST_TIMEOUT)
            .await
    }

    /// Sends a request and waits for the response with the same frame id.
    /// Any number of requests may be in flight at once.
    async fn request_with_timeout(
        &self,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, RequestError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed).to_string();
        let (answer_tx, answer_rx) = oneshot::channel();
        {
            let mut state = self.shared.lock();
            if let Some(close) = &state.closed {
                return Err(RequestError::Disconnected {
                    method: method.into(),
                    close: close.clone(),
                });
            }
            state.pending.insert(id.clone(), answer_tx);
        }
        // Removes the pending entry however this future ends (timeout, Ctrl-C).
        let _pending = PendingGuard {
            shared: &self.shared,
            id: &id,
        };

        let params = (!params.is_null()).then_some(params);
        let frame = Frame::request(id.as_str(), method, params).to_json();
        // A send error means the writer is gone; the answer channel then
        // reports the disconnect below.
        let _ = self.outgoing.send(Message::text(frame));

        match tokio::time::timeout(limit, answer_rx).await {
            Err(_) => Err(RequestError::Timeout {
                method: method.into(),
                after: limit,
            }),
            Ok(Err(_)) => Err(RequestError::Disconnected {
                method: method.into(),
                close: self
                    .close_reason()
                    .unwrap_or_else(|| CloseReason::Lost("unknown".into())),
            }),
            Ok(Ok(ResponseFrame {
                ok: true, payload, ..
            })) => Ok(payload.unwrap_or(Value::Null)),
            Ok(Ok(ResponseFrame { error, .. })) => {
                Err(RequestError::Gateway(error.unwrap_or_else(|| {
                    ErrorShape::new(
                        gsv_protocol::codes::INTERNAL,
                        "error response without details",
                    )
                })))
            }
        }
    }

    /// Receives every `evt` frame from now on. Subscribe before sending the
    /// request whose events you want, so none slip through in between.
    pub fn events(&self) -> broadcast::Receiver<EventFrame> {
        self.shared.events.subscribe()
    }

    /// Every event and binary frame of a node connection, in socket order,
    /// from the handshake on (handed out once).
    pub fn take_inbound(&self) -> Option<mpsc::UnboundedReceiver<Inbound>> {
        self.inbound_rx.lock().ok()?.take()
    }

    /// Sends a binary frame.
    pub fn send_binary(&self, bytes: Vec<u8>) {
        let _ = self.outgoing.send(Message::binary(bytes));
    }

    /// Sends a WebSocket ping; the answer (or any frame) shows in `idle_for`.
    pub fn ping(&self) {
        let _ = self.outgoing.send(Message::Ping(Default::default()));
    }

    /// How long since the gateway last sent anything.
    pub fn idle_for(&self) -> Duration {
        self.shared
            .last_inbound
            .lock()
            .map(|t| t.elapsed())
            .unwrap_or_default()
    }

    pub fn close_reason(&self) -> Option<CloseReason> {
        self.shared.lock().closed.clone()
    }

    /// Resolves when the socket closes (at once if it already has).
    pub async fn closed(&self) -> CloseReason {
        let mut watcher = self.shared.closed_tx.subscribe();
        let lost = || CloseReason::Lost("the connection ended".into());
        let reason = match watcher.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone(),
            Err(_) => None,
        };
        reason.unwrap_or_else(lost)
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // The writer sees its channel close and sends a close frame; the
        // reader would otherwise wait for the gateway's answer to it.
        self.reader.abort();
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records why the socket closed (first reason wins) and fails every
    /// pending request: dropping their answer senders wakes them.
    fn mark_closed(&self, reason: CloseReason) {
        let pending = {
            let mut state = self.lock();
            if state.closed.is_some() {
                return;
            }
            state.closed = Some(reason.clone());
            std::mem::take(&mut state.pending)
        };
        drop(pending);
        self.closed_tx.send_replace(Some(reason));
    }
}

struct PendingGuard<'a> {
    shared: &'a Shared,
    id: &'a str,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.shared.lock().pending.remove(self.id);
    }
}

fn connect_params(token: Option<&str>, identity: &Identity) -> Result<ConnectParams, ConnectError> {
    let (id, mode, tools, runtime) = match identity {
        Identity::Client => (new_client_id(), ClientMode::Client, None, None),
        Identity::Node { id, tools, runtime } => (
            id.clone(),
            ClientMode::Node,
            Some(tools.clone()),
            Some(
                serde_json::to_value(runtime).map_err(|e| ConnectError::Invalid {
                    reason: format!("node runtime info: {e}"),
                })?,
            ),
        ),
    };
    Ok(ConnectParams {
        min_protocol: PROTOCOL_VERSION,
        max_protocol: PROTOCOL_VERSION,
        client: ClientInfo {
            id,
            version: env!("CARGO_PKG_VERSION").to_string(),
            platform: std::env::consts::OS.to_string(),
            mode,
            channel: None,
            account_id: None,
        },
        tools,
        node_runtime: runtime,
        auth: token.map(|t| AuthParams {
            token: Some(t.to_string()),
        }),
    })
}

/// Reads an answer of `M` (from [`Connection::call_value`]) as its result.
pub fn read_answer<M: Method>(answer: Value) -> Result<M::Result, RequestError> {
    M::Result::deserialize(&answer).map_err(|e| RequestError::BadAnswer {
        method: M::NAME.into(),
        detail: e.to_string(),
        answer,
    })
}

/// `cli-` + 8 hex digits, fresh per process: the gateway closes an older
/// socket with the same client id, so two terminals must not share one.
fn new_client_id() -> String {
    format!("cli-{}", &uuid::Uuid::new_v4().simple().to_string()[..8])
}

async fn read_loop(mut stream: SplitStream<Socket>, shared: Arc<Shared>) {
    loop {
        let next = stream.next().await;
        if let Ok(mut t) = shared.last_inbound.lock() {
            *t = Instant::now();
        }
        match next {
            Some(Ok(Message::Text(text))) => handle_text(&text, &shared),
            // Keep reading after a close frame so tungstenite can answer it.
            Some(Ok(Message::Close(frame))) => shared.mark_closed(CloseReason::from_frame(frame)),
            Some(Ok(Message::Binary(bytes))) => {
                if let Some(inbound) = &shared.inbound {
                    let _ = inbound.send(Inbound::Binary(bytes.to_vec()));
                }
            }
            Some(Ok(_)) => {} // ping, pong: answered by tungstenite
            Some(Err(e)) => return shared.mark_closed(CloseReason::Lost(e.to_string())),
            None => return shared.mark_closed(CloseReason::Lost("the connection ended".into())),
        }
    }
}

fn handle_text(text: &str, shared: &Shared) {
    // Malformed frames are ignored, as the gateway does with ours.
    match serde_json::from_str::<Frame>(text) {
        Ok(Frame::Res(response)) => {
            if let Some(answer_tx) = shared.lock().pending.remove(&response.id) {
                let _ = answer_tx.send(response);
            }
        }
        Ok(Frame::Evt(event)) => {
            if let Some(inbound) = &shared.inbound {
                let _ = inbound.send(Inbound::Event(event.clone()));
            }
            let _ = shared.events.send(event); // Err = nobody is listening
        }
        Ok(Frame::Req(_)) | Err(_) => {}
    }
}

async fn write_loop(
    mut sink: SplitSink<Socket, Message>,
    mut outgoing: mpsc::UnboundedReceiver<Message>,
    shared: Arc<Shared>,
) {
    while let Some(message) = outgoing.recv().await {
        if let Err(e) = sink.send(message).await {
            return shared.mark_closed(CloseReason::Lost(e.to_string()));
        }
    }
    // The Connection was dropped: say goodbye properly.
    let _ = sink.close().await;
}

/// Accepts what people paste: `https://x.workers.dev` becomes
/// `wss://x.workers.dev/ws`, and a URL without a path gets `/ws`.
pub fn normalize_gateway_url(input: &str) -> String {
    let input = input.trim();
    let (scheme, rest) = match input.split_once("://") {
        Some(("http", rest)) => ("ws", rest),
        Some(("https", rest)) => ("wss", rest),
        Some((scheme, rest)) => (scheme, rest),
        None => return input.to_string(), // let the connect error explain it
    };
    match rest.find('/') {
        None => format!("{scheme}://{rest}/ws"),
        Some(slash) if rest[slash..] == *"/" => format!("{scheme}://{}/ws", &rest[..slash]),
        Some(_) => format!("{scheme}://{rest}"),
    }
}
