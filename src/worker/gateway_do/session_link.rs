//! Messages to a Session over its event link (`session::link`) instead of a
//! `fetch()`: the link is found by its tag, each message waits in memory
//! for its answer, and a link that closes fails what it owed.

use super::{Attachment, Gateway};
use crate::session::internal::{SessionChatSend, SessionChatSendReply};
use crate::session::link::{
    goes_on_link, link_tag, reply_result, LinkDown, LinkUp, MAX_LINK_KEY, MAX_LINK_MESSAGE,
};
use futures::channel::oneshot;
use futures::future::{select, Either};
use gsv_protocol::{codes, ErrorShape};
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use worker::{console_error, Delay, WebSocket};

type Res<T> = std::result::Result<T, ErrorShape>;
type Waiting = oneshot::Sender<Res<SessionChatSendReply>>;

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
    /// session's messages).
    pub(super) fn accept_link(&self, server: &WebSocket, key: Option<String>) {
        match key.filter(|k| k.len() <= MAX_LINK_KEY) {
            Some(key) => self
                .state
                .accept_websocket_with_tags(server, &[&link_tag(&key)]),
            None => self.state.accept_web_socket(server),
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
        let (ws, conn_id) = self.session_link(&send.session_key)?;
        let call = self.link_calls.next.get() + 1;
        self.link_calls.next.set(call);
        let down = LinkDown::ChatSend {
            call,
            send: Cow::Borrowed(send),
        };
        let text = serde_json::to_string(&down).ok()?;
        if text.len() > MAX_LINK_MESSAGE {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        let calls = &self.link_calls.waiting;
        calls.borrow_mut().insert(call, (conn_id, tx));
        if ws.send_with_str(&text).is_err() {
            calls.borrow_mut().remove(&call);
            return None;
        }
        let timeout = Delay::from(std::time::Duration::from_millis(LINK_REPLY_MS));
        Some(match select(rx, timeout).await {
            Either::Left((Ok(result), _)) => result,
            Either::Left((Err(_), _)) => Err(unanswered(LINK_GONE)),
            Either::Right(_) => {
                calls.borrow_mut().remove(&call);
                Err(unanswered("the session did not answer in time"))
            }
        })
    }

    /// A message up a link that is not a `chat` event: an answer for
    /// whoever waits on it, or the session's wish to close the link.
    pub(super) fn link_up(&self, ws: &WebSocket, att: Option<Attachment>, up: LinkUp) {
        match up {
            LinkUp::Reply { call, ok, error } => {
                let waiting = self.link_calls.waiting.borrow_mut().remove(&call);
                if let Some((_, tx)) = waiting {
                    // Gone only if its wait timed out meanwhile.
                    let _ = tx.send(reply_result(ok, error));
                }
            }
            LinkUp::Closing => {
                // Nothing more is sent on it; the attachment keeps that
                // across hibernation. The answer follows every message
                // sent before it.
                let att = Attachment {
                    closing: true,
                    ..att.unwrap_or_default()
                };
                if let Err(e) = ws.serialize_attachment(&att) {
                    return console_error!("gateway: marking a link closing failed: {e}");
                }
                let closed = serde_json::to_string(&LinkDown::Closed).unwrap_or_default();
                let _ = ws.send_with_str(closed);
            }
        }
    }

    /// A link closed: what waited on it gets an error (the session may
    /// have taken the message, so it is not sent again).
    pub(super) fn link_closed(&self, conn_id: &str) {
        let gone: Vec<Waiting> = self
            .link_calls
            .waiting
            .borrow_mut()
            .extract_if(|_, (conn, _)| conn == conn_id)
            .map(|(_, (_, tx))| tx)
            .collect();
        for tx in gone {
            let _ = tx.send(Err(unanswered(LINK_GONE)));
        }
    }

    /// The open link of session `key` that still takes messages, with its
    /// connection id (the newest, should the session have opened two).
    fn session_link(&self, key: &str) -> Option<(WebSocket, String)> {
        let links = self.state.get_websockets_with_tag(&link_tag(key));
        links.into_iter().rev().find_map(|ws| {
            let att = ws.deserialize_attachment::<Attachment>().ok().flatten()?;
            (att.link && !att.closing).then_some((ws, att.conn_id))
        })
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
