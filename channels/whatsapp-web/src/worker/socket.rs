//! The WebSocket to WhatsApp Web's server, opened from the account's
//! object (`fetch` with `Upgrade: websocket`): the crate writes frames to
//! it and reads the server's from a channel this file fills.

use bytes::Bytes;
use futures::StreamExt;
use std::sync::Arc;
use whatsapp_rust::wacore::net::{
    DisconnectReason, Transport, TransportEvent, TransportFactory, WHATSAPP_WEB_ORIGIN,
};
use worker::web_sys;
use worker::{Fetch, Method, Request, WebSocket, WebsocketEvent};

/// Opens a socket to one URL (`wss://web.whatsapp.com/ws/chat`, or a test
/// server's) each time the client connects.
pub struct SocketFactory {
    pub url: String,
}

struct Socket {
    ws: WebSocket,
}

// A Worker has one thread; the socket never leaves it.
unsafe impl Send for Socket {}
unsafe impl Sync for Socket {}

#[async_trait::async_trait(?Send)]
impl Transport for Socket {
    async fn send(&self, data: Bytes) -> anyhow::Result<()> {
        log::debug!("socket: sending {} bytes", data.len());
        self.ws
            .send_with_bytes(&data)
            .map_err(|e| anyhow::anyhow!("sending on the socket: {e}"))
    }

    async fn disconnect(&self) {
        let _ = self.ws.close(Some(1000), Some("closing"));
    }
}

#[async_trait::async_trait(?Send)]
impl TransportFactory for SocketFactory {
    async fn create_transport(
        &self,
    ) -> anyhow::Result<(Arc<dyn Transport>, async_channel::Receiver<TransportEvent>)> {
        let ws = connect(&self.url)
            .await
            .map_err(|e| anyhow::anyhow!("connecting to {}: {e}", self.url))?;
        // WhatsApp speaks in binary frames; workerd hands them over as
        // ArrayBuffers only when asked (otherwise `MessageEvent::bytes`
        // reads them as empty).
        let raw: &web_sys::WebSocket = ws.as_ref();
        let _ = js_sys::Reflect::set(raw, &"binaryType".into(), &"arraybuffer".into());
        ws.accept()
            .map_err(|e| anyhow::anyhow!("accepting the socket: {e}"))?;
        log::debug!("socket to {} open", self.url);
        let (tx, rx) = async_channel::unbounded();
        let _ = tx.try_send(TransportEvent::Connected);
        let reader = ws.clone();
        wasm_bindgen_futures::spawn_local(async move {
            let reason = read(&reader, &tx).await;
            let _ = tx.try_send(TransportEvent::Disconnected(reason));
        });
        Ok((Arc::new(Socket { ws }), rx))
    }
}

/// Opens the socket as WhatsApp Web's page does: a `fetch` upgraded to a
/// WebSocket, with the page's origin (the server checks it).
async fn connect(url: &str) -> worker::Result<WebSocket> {
    let http = match url.split_once("://") {
        Some(("wss", rest)) => format!("https://{rest}"),
        Some(("ws", rest)) => format!("http://{rest}"),
        _ => url.to_string(),
    };
    let mut req = Request::new(&http, Method::Get)?;
    req.headers_mut()?.set("upgrade", "websocket")?;
    req.headers_mut()?.set("origin", WHATSAPP_WEB_ORIGIN)?;
    Fetch::Request(req)
        .send()
        .await?
        .websocket()
        .ok_or_else(|| worker::Error::RustError("the server did not take the socket".into()))
}

/// Hands each binary message to the client until the socket closes.
async fn read(ws: &WebSocket, tx: &async_channel::Sender<TransportEvent>) -> DisconnectReason {
    let mut events = match ws.events() {
        Ok(events) => events,
        Err(e) => return DisconnectReason::ReadError(format!("reading the socket: {e}")),
    };
    while let Some(event) = events.next().await {
        match event {
            Ok(WebsocketEvent::Message(m)) => {
                log::debug!(
                    "socket: got a message ({:?} bytes)",
                    m.bytes().map(|b| b.len())
                );
                if let Some(bytes) = m.bytes() {
                    if tx
                        .try_send(TransportEvent::DataReceived(Bytes::from(bytes)))
                        .is_err()
                    {
                        // The client dropped its end: it is done with this socket.
                        let _ = ws.close(Some(1000), Some("closing"));
                        return DisconnectReason::StreamEnded;
                    }
                }
            }
            Ok(WebsocketEvent::Close(c)) => {
                return DisconnectReason::ServerClose {
                    code: Some(c.code()),
                    reason: c.reason(),
                }
            }
            Err(e) => return DisconnectReason::ReadError(format!("the socket failed: {e}")),
        }
    }
    DisconnectReason::StreamEnded
}
