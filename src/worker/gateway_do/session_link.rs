//! Messages to a Session over its event link (`session::link`) instead of a
//! `fetch()`: the link is found by its tag, each message waits in memory
//! for its answer, and a link that closes fails what it owed.

use super::{Attachment, Gateway};
use crate::session::internal::{SessionChatSend, SessionChatSendReply};
use crate::session::link::{
    goes_on_link, link_tag, reply_result, LinkDown, LinkUp, LINKS_TAG, MAX_LINK_KEY,
    MAX_LINK_MESSAGE,
};
use crate::worker::bindings::SessionStub;
use futures::channel::oneshot;
use futures::future::{select, Either};
use gsv_protocol::{codes, AckResult, ErrorShape, ToolRequestParams, ToolResultParams};
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use worker::{console_error, Delay, WebSocket};

type Res<T> = std::result::Result<T, ErrorShape>;

/// Who waits for the answer to a message on a link.
enum Waiting {
    Reply(oneshot::Sender<Res<SessionChatSendReply>>),
    Ack(oneshot::Sender<Res<AckResult>>),
}

/// A message sent on a link that got no answer, and why.
struct Unanswered(&'static str);

/// How long a message on a link waits for its answer. A session answers a
/// message at once (commands, which may take long, go as requests); this
/// bounds a session that neither answers nor closes its link.
const LINK_REPLY_MS: u64 = 30_000;

/// The messages sent on links and not answered yet.
#[derive(Default)]
pub(super) struct LinkCalls {
    next: Cell<u64>,
    /// By call number: the link's connection and who waits.
    waiting: RefCell<HashMap<u64, (String, Waiting)>>,
}

impl Gateway {
    /// Accepts a Session's event link, tagged with its session's key when
    /// it names one short enough to be a tag (then it also carries that
    /// session's messages). Its first message is the workspace revision
    /// (`LinkDown::Workspace`).
    pub(super) fn accept_link(&self, server: &WebSocket, key: Option<String>) {
        match key.filter(|k| k.len() <= MAX_LINK_KEY) {
            Some(key) => self
                .state
                .accept_websocket_with_tags(server, &[&link_tag(&key), LINKS_TAG]),
            None => self.state.accept_websocket_with_tags(server, &[LINKS_TAG]),
        }
        let rev = LinkDown::Workspace {
            rev: self.revisions.workspace(),
        };
        send_down(server, &rev);
    }

    /// Tells every link of a workspace revision they were not told of:
    /// called once whatever woke the object is handled.
    pub(super) fn tell_links_of_workspace(&self) {
        let Some(rev) = self.revisions.workspace_untold() else {
            return;
        };
        let down = LinkDown::Workspace { rev };
        for ws in self.state.get_websockets_with_tag(LINKS_TAG) {
            send_down(&ws, &down);
        }
    }

    /// `send` over its session's link when one is open and may carry it,
    /// with the answer; `None` when it was not sent (then it goes as a
    /// request: the session never saw it).
    pub(super) async fn send_on_link(
        &self,
        send: &SessionChatSend,
    ) -> Option<Res<SessionChatSendReply>> {
        if !goes_on_link(send) {
            return None;
        }
        let down = |call| LinkDown::ChatSend {
            call,
            send: Cow::Borrowed(send),
        };
        let sent = self.call_on_link(&send.session_key, Waiting::Reply, down);
        Some(
            sent.await?
                .unwrap_or_else(|Unanswered(why)| Err(unanswered(why))),
        )
    }

    /// A node's `result` for session `key` over its link, with the
    /// session's ack; `None` when it was not sent. A result may be given
    /// twice (the session keeps the first), so one that got no answer is
    /// `None` too and goes again as a request.
    pub(super) async fn tool_result_on_link(
        &self,
        key: &str,
        result: &ToolResultParams,
    ) -> Option<Res<AckResult>> {
        let down = |call| LinkDown::ToolResult {
            call,
            result: Cow::Borrowed(result),
        };
        self.call_on_link(key, Waiting::Ack, down).await?.ok()
    }

    /// A tool call's result for session `key`: on its link when one takes
    /// it, else as a request.
    pub(super) async fn result_to_session(
        &self,
        key: &str,
        result: &ToolResultParams,
    ) -> Res<AckResult> {
        match self.tool_result_on_link(key, result).await {
            Some(ack) => ack,
            None => SessionStub::for_key(&self.env, key).call(result).await,
        }
    }

    /// Sends the message `down` makes (given its call number) on session
    /// `key`'s link and waits for its answer; `None` when it was not sent.
    async fn call_on_link<'a, T>(
        &self,
        key: &str,
        waiting: fn(oneshot::Sender<Res<T>>) -> Waiting,
        down: impl FnOnce(u64) -> LinkDown<'a>,
    ) -> Option<Result<Res<T>, Unanswered>> {
        let (ws, conn_id) = self.session_link(key)?;
        let call = self.link_calls.next.get() + 1;
        self.link_calls.next.set(call);
        let text = serde_json::to_string(&down(call)).ok()?;
        if text.len() > MAX_LINK_MESSAGE {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        let calls = &self.link_calls.waiting;
        calls.borrow_mut().insert(call, (conn_id, waiting(tx)));
        if ws.send_with_str(&text).is_err() {
            calls.borrow_mut().remove(&call);
            return None;
        }
        let timeout = Delay::from(std::time::Duration::from_millis(LINK_REPLY_MS));
        Some(match select(rx, timeout).await {
            Either::Left((Ok(result), _)) => Ok(result),
            // Dropped by `link_closed`.
            Either::Left((Err(_), _)) => Err(Unanswered(LINK_GONE)),
            Either::Right(_) => {
                calls.borrow_mut().remove(&call);
                Err(Unanswered("the session did not answer in time"))
            }
        })
    }

    /// A message up a link that is not a `chat` event: a node tool call,
    /// an answer for whoever waits on it, or the session's wish to close
    /// the link.
    pub(super) async fn link_up(
        &self,
        ws: &WebSocket,
        att: Option<Rc<Attachment>>,
        up: LinkUp<'_>,
    ) {
        match up {
            LinkUp::ToolRequest { request } => self.link_tool_request(request.into_owned()).await,
            // Nobody waits only if the wait timed out meanwhile.
            LinkUp::Reply { call, ok, error } => {
                if let Some(Waiting::Reply(tx)) = self.answered(call) {
                    let _ = tx.send(reply_result(ok, error));
                }
            }
            LinkUp::Ack { call, ok, error } => {
                if let Some(Waiting::Ack(tx)) = self.answered(call) {
                    let _ = tx.send(reply_result(ok, error));
                }
            }
            LinkUp::Closing => {
                // Nothing more is sent on it; the attachment keeps that
                // across hibernation. The answer follows every message
                // sent before it.
                let att = Attachment {
                    closing: true,
                    ..att.map(Rc::unwrap_or_clone).unwrap_or_default()
                };
                if let Err(e) = self.save_attachment(ws, &att) {
                    return console_error!("gateway: marking a link closing failed: {}", e.message);
                }
                let closed = serde_json::to_string(&LinkDown::Closed).unwrap_or_default();
                let _ = ws.send_with_str(closed);
            }
        }
    }

    /// A Session's node tool call on its link. Nothing is answered unless
    /// the call could not be sent: then the error goes back as the call's
    /// result, as a node's would.
    async fn link_tool_request(&self, request: ToolRequestParams) {
        let (key, call_id) = (request.session_key.clone(), request.call_id.clone());
        let Err(e) = self.tool_request(request, false).await else {
            return;
        };
        let failed = ToolResultParams::failed(call_id, e.message);
        if let Err(e) = self.result_to_session(&key, &failed).await {
            console_error!(
                "gateway: failing a session's tool call failed: {}",
                e.message
            );
        }
    }

    fn answered(&self, call: u64) -> Option<Waiting> {
        let waiting = self.link_calls.waiting.borrow_mut().remove(&call);
        waiting.map(|(_, w)| w)
    }

    /// A link closed: what waited on it is dropped, and its waiter learns
    /// the message went unanswered.
    pub(super) fn link_closed(&self, conn_id: &str) {
        let mut waiting = self.link_calls.waiting.borrow_mut();
        waiting.retain(|_, (conn, _)| conn != conn_id);
    }

    /// The open link of session `key` that still takes messages, with its
    /// connection id (the newest, should the session have opened two).
    fn session_link(&self, key: &str) -> Option<(WebSocket, String)> {
        let links = self.state.get_websockets_with_tag(&link_tag(key));
        links.into_iter().rev().find_map(|ws| {
            let att = self.attachments.read(&ws).ok().flatten()?;
            (att.link && !att.closing).then(|| (ws, att.conn_id.clone()))
        })
    }
}

/// Sends `down` on a link; one that is closing or gone misses nothing
/// the session still needs.
fn send_down(ws: &WebSocket, down: &LinkDown) {
    if let Ok(text) = serde_json::to_string(down) {
        let _ = ws.send_with_str(text);
    }
}

const LINK_GONE: &str = "the session's link closed before it answered";

/// A message on a link that got no answer (`why`). The session may have
/// taken it, so it is not sent again; the asker is told how to find out.
fn unanswered(why: &str) -> ErrorShape {
    ErrorShape::new(
        codes::UNAVAILABLE,
        format!(
            "{why}; the message may have been taken: \
             look at the session's history before sending it again"
        ),
    )
}
