//! The Session's end of its event link, listened on while it is open: the
//! Gateway sends this session's messages and its node tools' results on
//! it (`session::link`), each answered on the link (a message before its
//! run's first event).

use super::core::Core;
use super::Session;
use crate::calls::ToolRequestAgain;
use crate::session::link::{LinkDown, LinkUp};
use crate::worker::bindings::GatewayStub;
use futures::StreamExt;
use gsv_protocol::{codes, ErrorShape, ToolRequestParams, ToolResultParams};
use std::rc::Rc;
use worker::{console_error, WebSocket, WebsocketEvent};

impl Core {
    /// Sends `evt` to the Gateway; a link opened for it is listened on,
    /// since the Gateway sends this session's messages on it too.
    pub async fn emit(&self, evt: gsv_protocol::ChatEvent) {
        if let Some(opened) = self.link.emit(&self.env, &evt).await {
            if let Some(core) = self.this.upgrade() {
                listen(core, opened);
            }
        }
    }
}

/// Listens on `ws` until it closes. Messages are taken in the order they
/// came: each is queued before the next is looked at, as requests are.
pub fn listen(core: Rc<Core>, ws: WebSocket) {
    let this = Rc::downgrade(&core);
    drop(core);
    wasm_bindgen_futures::spawn_local(async move {
        let Ok(mut events) = ws.events() else {
            return;
        };
        while let Some(Ok(WebsocketEvent::Message(msg))) = events.next().await {
            let Some(core) = this.upgrade() else { return };
            let Some(text) = msg.text() else { continue };
            match LinkDown::read(&text) {
                Ok(LinkDown::ChatSend { call, send }) => {
                    let ws = ws.clone();
                    wasm_bindgen_futures::spawn_local(answer(core, ws, call, send.into_owned()));
                }
                Ok(LinkDown::ToolResult { call, result }) => {
                    let ack = Session::of(core.clone())
                        .tool_result(result.into_owned())
                        .map_err(ErrorShape::from);
                    reply(&core, &ws, &LinkUp::ack(call, ack));
                }
                Ok(LinkDown::Closed) => core.link.closed_by_gateway(&ws),
                Ok(LinkDown::Workspace { rev }) if core.link.heard_workspace(&ws) => {
                    core.take_workspace_rev(&rev);
                }
                // A link this session let go of: what it says is old.
                Ok(LinkDown::Workspace { .. }) => {}
                Err(e) => console_error!("session: bad message on the event link: {e}"),
            }
        }
        if let Some(core) = this.upgrade() {
            let unread = core.link.gone(&ws);
            resend_tool_requests(core, unread).await;
        }
    });
}

/// Sends again, as requests, the node tool calls sent on a link that
/// closed and still open: the Gateway may not have read them, and does
/// not send one it has a route for twice. One it cannot send fails with
/// its error.
async fn resend_tool_requests(core: Rc<Core>, requests: Vec<ToolRequestParams>) {
    for request in requests {
        if !matches!(core.store.open_call(&request.call_id), Ok(Some(_))) {
            continue;
        }
        let again = ToolRequestAgain(request);
        let Err(e) = GatewayStub::get(&core.env).call(&again).await else {
            continue;
        };
        let failed = ToolResultParams::failed(again.0.call_id, e.message);
        if let Err(e) = Session::of(core.clone()).tool_result(failed) {
            console_error!("session: failing a tool call failed: {e}");
        }
    }
}

/// Takes a message as `chat.send` does and answers it on the link.
async fn answer(
    core: Rc<Core>,
    ws: WebSocket,
    call: u64,
    send: crate::session::internal::SessionChatSend,
) {
    // The Gateway found the link by this session's key.
    let known = core.store.known_key().unwrap_or_default();
    let result = match send.session_key == known {
        true => Session::of(core.clone())
            .chat_send(send)
            .await
            .map_err(ErrorShape::from),
        false => Err(ErrorShape::new(
            codes::BAD_REQUEST,
            format!(
                "a message for {} came on the link of {known}",
                send.session_key
            ),
        )),
    };
    reply(&core, &ws, &LinkUp::reply(call, result));
}

fn reply(core: &Core, ws: &WebSocket, up: &LinkUp) {
    match serde_json::to_string(up) {
        Ok(text) => core.link.send_on(ws, &text),
        Err(e) => console_error!("session: answer not serializable: {e}"),
    }
}
