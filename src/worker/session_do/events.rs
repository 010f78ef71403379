//! The Session's `chat` events on their way to the Gateway: over an event
//! link (a WebSocket to the Gateway, opened on first use and kept while
//! runs go on, so streaming costs no object-to-object request per chunk),
//! else as one request each.

use crate::session::internal::path;
use crate::worker::bindings::{self, GatewayStub};
use crate::worker::rpc::now_ms;
use gsv_protocol::ChatEvent;
use std::cell::{Cell, RefCell};
use worker::{console_error, Env, Error, Headers, Request, RequestInit, Result, WebSocket};

/// The event link stays open this long after the last event, for the next run.
pub const LINK_IDLE_MS: i64 = 30_000;

#[derive(Default)]
pub struct EventLink {
    ws: RefCell<Option<WebSocket>>,
    /// When the link last carried an event.
    used_at: Cell<i64>,
}

impl EventLink {
    /// Delivers `evt`: over the link (opened on first use), else as a request.
    pub async fn emit(&self, env: &Env, evt: &ChatEvent) {
        let text = match serde_json::to_string(evt) {
            Ok(t) => t,
            Err(e) => return console_error!("session: event not serializable: {e}"),
        };
        if self.ws.borrow().is_none() {
            match open_link(env).await {
                Ok(ws) => {
                    self.ws.replace(Some(ws));
                }
                Err(e) => console_error!("session: opening the event link failed: {e}"),
            }
        }
        let sent = self
            .ws
            .borrow()
            .as_ref()
            .is_some_and(|ws| ws.send_with_str(&text).is_ok());
        if sent {
            self.used_at.set(now_ms());
            return;
        }
        self.ws.replace(None);
        let r = GatewayStub::get(env).call(evt).await;
        if let Err(e) = r {
            console_error!("session: delivering a chat event failed: {}", e.message);
        }
    }

    pub fn is_open(&self) -> bool {
        self.ws.borrow().is_some()
    }

    /// Whether the link has carried nothing for `LINK_IDLE_MS` at `now`.
    pub fn idle_at(&self, now: i64) -> bool {
        now - self.used_at.get() >= LINK_IDLE_MS
    }

    /// Closes the link once no run is left, so the object can rest.
    pub fn close(&self) {
        if let Some(ws) = self.ws.take() {
            let _ = ws.close(Some(1000), Some("idle"));
        }
    }
}

/// Opens a WebSocket to the Gateway's internal event-link path.
async fn open_link(env: &Env) -> Result<WebSocket> {
    let stub = bindings::gateway_object(env)?;
    let headers = Headers::new();
    headers.set("Upgrade", "websocket")?;
    let mut init = RequestInit::new();
    init.with_headers(headers);
    let req = Request::new_with_init(
        &format!("https://gateway.internal{}", path::EVENT_LINK),
        &init,
    )?;
    let res = stub.fetch_with_request(req).await?;
    let ws = res
        .websocket()
        .ok_or_else(|| Error::RustError("the gateway refused the event link".into()))?;
    ws.accept()?;
    Ok(ws)
}
