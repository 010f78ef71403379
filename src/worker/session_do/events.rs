//! The Session's `chat` events on their way to the Gateway: over an event
//! link (a WebSocket to the Gateway, opened on first use and kept while
//! runs go on, so streaming costs no object-to-object request per chunk),
//! else as one request each. The Gateway sends the session's messages on
//! it too while it is open (`session::link`; `link.rs` listens).

use crate::session::internal::path;
use crate::session::link::{LinkUp, LINK_SESSION_HEADER, MAX_LINK_MESSAGE};
use crate::worker::bindings::{self, GatewayStub};
use crate::worker::rpc::now_ms;
use gsv_protocol::{ChatEvent, ToolRequestParams};
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use worker::{console_error, Env, Error, Headers, Request, RequestInit, Result, WebSocket};

/// The event link stays open this long after the last event, for the next run.
pub const LINK_IDLE_MS: i64 = 30_000;
/// A link whose closing the Gateway has not answered in this long is
/// closed anyway.
pub const LINK_CLOSE_GRACE_MS: i64 = 10_000;

#[derive(Default)]
pub struct EventLink {
    ws: RefCell<Option<WebSocket>>,
    /// When the link last carried an event.
    used_at: Cell<i64>,
    /// When this session said it would close the link (`None`: it did not,
    /// or used the link again since).
    closing_at: Cell<Option<i64>>,
    /// The node tool calls sent on the current link: should it close, the
    /// Gateway may not have read them, and those still open go again as
    /// requests (the Gateway does not send a call it still routes twice).
    tool_requests: RefCell<Vec<(WebSocket, ToolRequestParams)>>,
    /// The current link brought the Gateway's workspace revision: every
    /// change of it comes on the link from then on.
    hears_workspace: Cell<bool>,
}

impl EventLink {
    /// Delivers `evt`: over the link (opened on first use), else as a
    /// request. Returns a link it opened, for the caller to listen on.
    pub async fn emit(&self, env: &Env, evt: &ChatEvent) -> Option<WebSocket> {
        let text = match serde_json::to_string(evt) {
            Ok(t) => t,
            Err(e) => {
                console_error!("session: event not serializable: {e}");
                return None;
            }
        };
        let mut opened = None;
        if self.ws.borrow().is_none() {
            match open_link(env, &evt.session_key).await {
                Ok(ws) => {
                    self.ws.replace(Some(ws.clone()));
                    opened = Some(ws);
                }
                Err(e) => console_error!("session: opening the event link failed: {e}"),
            }
        }
        if self.send(&text) {
            self.used_at.set(now_ms());
            // In use again: it stays open (the Gateway sends no more
            // messages on it should it have heard it would close).
            self.closing_at.set(None);
            return opened;
        }
        self.forget_current();
        let r = GatewayStub::get(env).call(evt).await;
        if let Err(e) = r {
            console_error!("session: delivering a chat event failed: {}", e.message);
        }
        None
    }

    /// Sends a node tool call on the link, if one is open; false when none
    /// took it (then it goes as a request). The Gateway answers nothing
    /// unless it could not send the call: then its error comes back as the
    /// call's result.
    pub fn send_tool_request(&self, request: &ToolRequestParams) -> bool {
        let up = LinkUp::ToolRequest {
            request: Cow::Borrowed(request),
        };
        let Some(ws) = self.ws.borrow().clone() else {
            return false;
        };
        let sent = serde_json::to_string(&up)
            .is_ok_and(|text| text.len() <= MAX_LINK_MESSAGE && ws.send_with_str(&text).is_ok());
        if sent {
            self.used_at.set(now_ms());
            self.closing_at.set(None);
            self.tool_requests.borrow_mut().push((ws, request.clone()));
        }
        sent
    }

    /// The turn's calls are settled: none sent so far needs sending again.
    pub fn tool_calls_settled(&self) {
        self.tool_requests.borrow_mut().clear();
    }

    /// Sends `text` on the link (an answer to a message that came on it).
    pub fn send_on(&self, ws: &WebSocket, text: &str) {
        if let Err(e) = ws.send_with_str(text) {
            // The Gateway fails what waited once it sees the link close.
            console_error!("session: answering on the event link failed: {e}");
        }
    }

    pub fn is_open(&self) -> bool {
        self.ws.borrow().is_some()
    }

    /// The Gateway's workspace revision came on `ws`; false (and it is
    /// not taken) when `ws` is not the current link.
    pub fn heard_workspace(&self, ws: &WebSocket) -> bool {
        let current = self.is_current(ws);
        if current {
            self.hears_workspace.set(true);
        }
        current
    }

    /// Whether this session hears of the Gateway's workspace changes as
    /// they happen (it holds a link that brought the revision).
    pub fn hears_workspace(&self) -> bool {
        self.hears_workspace.get() && self.is_open()
    }

    /// Whether the link has carried nothing for `LINK_IDLE_MS` at `now`.
    pub fn idle_at(&self, now: i64) -> bool {
        now - self.used_at.get() >= LINK_IDLE_MS
    }

    /// Once no run is left: says the session would close the link (the
    /// Gateway answers `Closed` once it sends nothing more on it), or
    /// closes it when that answer has not come within the grace. True
    /// while the link stays open.
    pub fn wind_down(&self, now: i64) -> bool {
        match self.closing_at.get() {
            Some(at) if now - at >= LINK_CLOSE_GRACE_MS => {
                self.close();
                false
            }
            Some(_) => true,
            None => {
                let closing = serde_json::to_string(&LinkUp::Closing).unwrap_or_default();
                let sent = self.send(&closing);
                match sent {
                    true => self.closing_at.set(Some(now)),
                    false => self.close(),
                }
                sent
            }
        }
    }

    /// The Gateway sends nothing more on `ws`: it closes, unless it was
    /// used again since the session said it would close it.
    pub fn closed_by_gateway(&self, ws: &WebSocket) {
        if self.closing_at.get().is_some() && self.is_current(ws) {
            self.close();
        }
    }

    /// `ws` closed on the Gateway's side; the tool calls sent on it, which
    /// the Gateway may not have read.
    pub fn gone(&self, ws: &WebSocket) -> Vec<ToolRequestParams> {
        if self.is_current(ws) {
            self.forget_current();
        }
        let mut requests = self.tool_requests.borrow_mut();
        let (on_ws, others): (Vec<_>, Vec<_>) = requests.drain(..).partition(|(w, _)| w == ws);
        *requests = others;
        on_ws.into_iter().map(|(_, r)| r).collect()
    }

    /// Sends `text` on the link if one is open; false when none took it.
    fn send(&self, text: &str) -> bool {
        self.ws
            .borrow()
            .as_ref()
            .is_some_and(|ws| ws.send_with_str(text).is_ok())
    }

    fn is_current(&self, ws: &WebSocket) -> bool {
        self.ws.borrow().as_ref() == Some(ws)
    }

    fn forget_current(&self) {
        self.ws.replace(None);
        self.closing_at.set(None);
        self.hears_workspace.set(false);
    }

    /// Closes the link, so the object can rest (only once no run is left,
    /// so no tool call waits on it).
    pub fn close(&self) {
        if let Some(ws) = self.ws.take() {
            let _ = ws.close(Some(1000), Some("idle"));
        }
        self.closing_at.set(None);
        self.hears_workspace.set(false);
        self.tool_requests.borrow_mut().clear();
    }
}

/// Opens a WebSocket to the Gateway's internal event-link path.
async fn open_link(env: &Env, session_key: &str) -> Result<WebSocket> {
    let stub = bindings::gateway_object(env)?;
    let headers = Headers::new();
    headers.set("Upgrade", "websocket")?;
    // A key a header cannot carry only costs the link its messages.
    let _ = headers.set(LINK_SESSION_HEADER, session_key);
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
