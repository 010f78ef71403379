//! Performs the machine's actions: opens and reads the socket, sends
//! frames, sets the alarm, stores state, and tells the gateway.

use super::gateway_client;
use super::rest_client;
use super::store::Store;
use crate::gateway::machine::{Action, Clock, ConnectTarget, Input, Machine};
use crate::gateway::payload::connect_url;
use crate::rest::{gateway_bot, GatewayBot};
use crate::CHANNEL_ID;
use futures::StreamExt;
use gsv_protocol::channels::{ChannelInboundParams, ChannelStatusParams};
use std::cell::RefCell;
use std::rc::Rc;
use worker::*;

/// The object's state, shared with the socket's reader task.
pub struct Inner {
    pub state: State,
    pub env: Env,
    pub store: Option<Store>,
    pub account: RefCell<Option<String>>,
    pub machine: RefCell<Machine>,
    /// The open socket and its number.
    pub socket: RefCell<Option<(u64, WebSocket)>>,
    /// An outbox flush is under way.
    pub flushing: std::cell::Cell<bool>,
}

pub fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

/// One input through the machine, then its actions in order.
pub async fn feed(inner: &Rc<Inner>, input: Input<'_>) {
    let clock = Clock {
        now: now_ms(),
        random: js_sys::Math::random(),
    };
    let actions = inner.machine.borrow_mut().step(input, clock);
    for action in actions {
        perform(inner, action).await;
    }
}

async fn perform(inner: &Rc<Inner>, action: Action) {
    match action {
        Action::Connect { conn, target } => {
            let inner = inner.clone();
            // Its own task: the socket's reader outlives this request.
            wasm_bindgen_futures::spawn_local(async move { run_socket(inner, conn, target).await });
        }
        Action::Send(text) => {
            if let Some((_, ws)) = inner.socket.borrow().as_ref() {
                if let Err(e) = ws.send_with_str(&text) {
                    console_error!("discord: sending a frame failed: {e}");
                }
            }
        }
        Action::Close { code } => {
            if let Some((_, ws)) = inner.socket.borrow_mut().take() {
                let _ = ws.close(Some(code), Some("gsv"));
            }
        }
        Action::Alarm(_) => {
            // The current deadline, not the one of the step that asked: a
            // step that ran meanwhile (e.g. HELLO while this request awaited
            // the gateway) may have moved it, and its own Alarm action may
            // already have been performed.
            let at = inner.machine.borrow().alarm_at();
            let storage = inner.state.storage();
            let result = match at {
                Some(at) => {
                    let date = js_sys::Date::new(&(at as f64).into());
                    storage.set_alarm(ScheduledTime::new(date)).await
                }
                None => storage.delete_alarm().await,
            };
            if let Err(e) = result {
                console_error!("discord: setting the alarm failed: {e}");
            }
        }
        Action::Persist => {
            let account = inner.account.borrow().clone();
            if let (Some(store), Some(account)) = (&inner.store, account) {
                let state = inner.machine.borrow().persisted().clone();
                if let Err(e) = store.save(&account, &state) {
                    console_error!("discord: saving state failed: {e}");
                }
            }
        }
        Action::Deliver(message) => {
            let Some(account_id) = inner.account.borrow().clone() else {
                return;
            };
            let params = ChannelInboundParams {
                channel: CHANNEL_ID.into(),
                account_id,
                message: *message,
            };
            let queued = match (&inner.store, serde_json::to_string(&params)) {
                (Some(store), Ok(json)) => store.enqueue(&json),
                _ => Err(Error::RustError("no storage".into())),
            };
            match queued {
                Ok(()) => flush_outbox(inner).await,
                Err(e) => {
                    console_error!("discord: queueing a message failed ({e}); sending it directly");
                    deliver(&inner.env, &params).await;
                }
            }
        }
        Action::Status => {
            let Some(account_id) = inner.account.borrow().clone() else {
                return;
            };
            let status = inner.machine.borrow().status(&account_id);
            let params = ChannelStatusParams {
                channel: CHANNEL_ID.into(),
                account_id,
                status,
            };
            if let Err(e) = gateway_client::call(&inner.env, &params).await {
                console_error!("discord: reporting status failed: {e}");
            }
        }
    }
}

/// Hands the queued inbound messages to the gateway, oldest first; stops at
/// the first that the gateway could not take (the alarm tries again).
pub async fn flush_outbox(inner: &Rc<Inner>) {
    let Some(store) = &inner.store else {
        return;
    };
    // One flush at a time, or two tasks would post the same message.
    if inner.flushing.replace(true) {
        return;
    }
    while let Ok(Some((id, json))) = store.oldest() {
        let Ok(params) = serde_json::from_str::<ChannelInboundParams>(&json) else {
            let _ = store.delivered(id); // unreadable: never deliverable
            continue;
        };
        if !deliver(&inner.env, &params).await {
            break;
        }
        if let Err(e) = store.delivered(id) {
            console_error!("discord: clearing a delivered message failed: {e}");
            break;
        }
    }
    inner.flushing.set(false);
}

/// One inbound message to the gateway; false when it should be tried again.
async fn deliver(env: &Env, params: &ChannelInboundParams) -> bool {
    match gateway_client::call(env, params).await {
        Ok(result) => {
            if !result.ok {
                // The gateway read it and said no (e.g. invalid): retrying will not change that.
                console_error!(
                    "discord: the gateway refused message {}: {}",
                    params.message.message_id,
                    result.error.unwrap_or_default()
                );
            }
            true
        }
        Err(e) if e.worth_retrying() => {
            console_error!(
                "discord: delivering message {} failed, will retry: {e}",
                params.message.message_id
            );
            false
        }
        Err(e) => {
            // Kept, it would hold back every later message for good.
            console_error!(
                "discord: the gateway did not take message {} and retrying cannot help, dropping it: {e}",
                params.message.message_id
            );
            true
        }
    }
}

/// Why a socket could not be opened.
struct OpenError {
    fatal: bool,
    message: String,
}

/// Opens socket `conn` and feeds its frames to the machine until it closes.
async fn run_socket(inner: Rc<Inner>, conn: u64, target: ConnectTarget) {
    let ws = match open(&inner, target).await {
        Ok(ws) => ws,
        Err(e) => {
            let input = Input::ConnectFailed {
                conn,
                fatal: e.fatal,
                error: e.message,
            };
            feed(&inner, input).await;
            return;
        }
    };
    if inner.machine.borrow().conn() != conn {
        // Stopped or moved on while connecting.
        let _ = ws.close(Some(1000), Some("gsv"));
        return;
    }
    // Listen before accepting so no early frame (HELLO) is missed.
    let mut events = match ws.events() {
        Ok(events) => events,
        Err(e) => {
            let input = Input::ConnectFailed {
                conn,
                fatal: false,
                error: e.to_string(),
            };
            feed(&inner, input).await;
            return;
        }
    };
    if let Err(e) = ws.accept() {
        console_error!("discord: accepting the socket failed: {e}");
    }
    *inner.socket.borrow_mut() = Some((conn, ws.clone()));
    while let Some(event) = events.next().await {
        match event {
            Ok(WebsocketEvent::Message(msg)) => {
                if let Some(text) = msg.text() {
                    feed(&inner, Input::Frame { conn, text: &text }).await;
                }
            }
            Ok(WebsocketEvent::Close(close)) => {
                forget_socket(&inner, conn);
                feed(
                    &inner,
                    Input::Closed {
                        conn,
                        code: close.code(),
                    },
                )
                .await;
                return;
            }
            Err(e) => {
                console_error!("discord: socket error: {e}");
                forget_socket(&inner, conn);
                // An abnormal closure: resumable.
                feed(&inner, Input::Closed { conn, code: 1006 }).await;
                return;
            }
        }
    }
}

fn forget_socket(inner: &Inner, conn: u64) {
    let mut socket = inner.socket.borrow_mut();
    if socket.as_ref().is_some_and(|(c, _)| *c == conn) {
        *socket = None;
    }
}

async fn open(inner: &Inner, target: ConnectTarget) -> std::result::Result<WebSocket, OpenError> {
    let url = match target {
        ConnectTarget::Resume(url) => url,
        ConnectTarget::Discover => discover(inner).await?,
    };
    let transient = |message: String| OpenError {
        fatal: false,
        message,
    };
    let parsed = Url::parse(&url).map_err(|e| transient(format!("bad gateway URL {url}: {e}")))?;
    WebSocket::connect(parsed)
        .await
        .map_err(|e| transient(format!("opening {url} failed: {e}")))
}

/// The gateway URL: `DISCORD_GATEWAY_URL` when set, else `GET /gateway/bot`.
async fn discover(inner: &Inner) -> std::result::Result<String, OpenError> {
    if let Some(url) = inner
        .env
        .var("DISCORD_GATEWAY_URL")
        .ok()
        .map(|v| v.to_string())
        .filter(|v| !v.is_empty())
    {
        return Ok(connect_url(&url));
    }
    let token = inner
        .machine
        .borrow()
        .token()
        .map(str::to_string)
        .unwrap_or_default();
    let base = rest_client::api_base(&inner.env);
    let body = rest_client::call(&base, &token, &gateway_bot())
        .await
        .map_err(|e| OpenError {
            // A refused token or a missing permission does not heal by retrying.
            fatal: !e.retryable,
            message: format!("GET /gateway/bot failed: {e}"),
        })?;
    let bot: GatewayBot = serde_json::from_str(&body).map_err(|e| OpenError {
        fatal: false,
        message: format!("GET /gateway/bot answered something unexpected: {e}"),
    })?;
    Ok(connect_url(&bot.url))
}
