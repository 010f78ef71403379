//! What a Session's event link carries besides its `chat` events. While a
//! session is busy it keeps a WebSocket open to the Gateway; the Gateway
//! hands it messages on it too (a `fetch()` between objects costs about
//! twice a message each way on an open socket), and the session answers
//! each on the same socket, ahead of that message's run events.
//!
//! Closing is a handshake, so no message is ever sent on a link the session
//! has let go: the session says it is `Closing`, the Gateway stops choosing
//! the link and answers `Closed`, and every message it sent before that
//! reached the session first.

use super::internal::{SessionChatSend, SessionChatSendReply};
use crate::commands::parse_command;
use gsv_protocol::{AckResult, ErrorShape, ToolRequestParams, ToolResultParams};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The header naming the session that opens a link (its canonical key).
pub const LINK_SESSION_HEADER: &str = "x-gsv-session";

/// Gateway → Session on the link. (One lives at a time, for one message:
/// its size does not matter.) Both link enums are externally tagged:
/// read as they stream, with the readers the requests use (`from_slice`),
/// they add no second copy of the messages' decoders to the Worker.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LinkDown<'a> {
    /// A message for the session, answered by a `Reply` with its `call`.
    ChatSend {
        call: u64,
        send: Cow<'a, SessionChatSend>,
    },
    /// A node's answer to one of the session's tool calls, answered by an
    /// `Ack` with its `call`.
    ToolResult {
        call: u64,
        result: Cow<'a, ToolResultParams>,
    },
    /// The Gateway sends no more messages or results on this link (only
    /// `Workspace`): the session may close it.
    Closed,
    /// The Gateway's workspace revision (which a `ChatSend` carries too):
    /// sent first on every link, and again on every link whenever it
    /// changes, so a session that holds a link knows of every workspace
    /// change the Gateway makes or hears of while it runs.
    Workspace { rev: String },
}

/// Session → Gateway on the link, other than `chat` events (which travel
/// as the event's own JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LinkUp<'a> {
    /// The answer to the `ChatSend` numbered `call`.
    #[serde(rename_all = "camelCase")]
    Reply {
        call: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ok: Option<SessionChatSendReply>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<ErrorShape>,
    },
    /// The answer to the `ToolResult` numbered `call`.
    Ack {
        call: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ok: Option<AckResult>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<ErrorShape>,
    },
    /// A node tool call of the session's current turn. Its result comes
    /// later as a `ToolResult` (or as a request); so does the Gateway's
    /// error if it cannot send the call.
    ToolRequest { request: Cow<'a, ToolRequestParams> },
    /// The session is idle and would close the link.
    Closing,
}

/// What came up a link: a `LinkUp` or a `chat` event.
pub enum Up<'a> {
    Link(LinkUp<'static>),
    Event(&'a str),
}

impl LinkUp<'_> {
    /// The text of a message up a link, told apart by its first bytes: a
    /// `LinkUp` is a string or an object keyed by its variant, a `chat`
    /// event an object whose fields have other names.
    pub fn read(text: &str) -> Result<Up<'_>, serde_json::Error> {
        let link = text.starts_with('"')
            || text.starts_with(r#"{"reply":"#)
            || text.starts_with(r#"{"ack":"#)
            || text.starts_with(r#"{"toolRequest":"#);
        match link {
            true => serde_json::from_slice(text.as_bytes()).map(Up::Link),
            false => Ok(Up::Event(text)),
        }
    }

    pub fn reply(call: u64, result: Result<SessionChatSendReply, ErrorShape>) -> Self {
        let (ok, error) = reply_parts(result);
        LinkUp::Reply { call, ok, error }
    }

    pub fn ack(call: u64, result: Result<AckResult, ErrorShape>) -> Self {
        let (ok, error) = reply_parts(result);
        LinkUp::Ack { call, ok, error }
    }
}

impl LinkDown<'_> {
    /// A message down a link (read as requests are).
    pub fn read(text: &str) -> Result<LinkDown<'static>, serde_json::Error> {
        serde_json::from_slice(text.as_bytes())
    }
}

/// An outcome as a `Reply`'s or an `Ack`'s two parts.
fn reply_parts<T>(result: Result<T, ErrorShape>) -> (Option<T>, Option<ErrorShape>) {
    match result {
        Ok(r) => (Some(r), None),
        Err(e) => (None, Some(e)),
    }
}

/// A `Reply`'s or an `Ack`'s outcome; one with neither part is the
/// session's error.
pub fn reply_result<T>(ok: Option<T>, error: Option<ErrorShape>) -> Result<T, ErrorShape> {
    match (ok, error) {
        (_, Some(e)) => Err(e),
        (Some(r), None) => Ok(r),
        (None, None) => Err(ErrorShape::new(
            gsv_protocol::codes::INTERNAL,
            "the session's answer on its link was empty",
        )),
    }
}

/// The largest `ChatSend` sent on a link; a larger one (a whole config or
/// node snapshot can be large) goes as a request, well under the
/// platform's 1 MiB per WebSocket message.
pub const MAX_LINK_MESSAGE: usize = 512 * 1024;

/// The longest session key a link is found by (it becomes the socket's
/// tag, at most 256 characters); a longer one's messages go as requests.
pub const MAX_LINK_KEY: usize = 200;

/// Whether `send` may go on the session's link. A slash command may take
/// its time (`/compact` calls the model) and goes as a request, which
/// waits as long as it needs; a message is answered at once.
pub fn goes_on_link(send: &SessionChatSend) -> bool {
    send.session_key.len() <= MAX_LINK_KEY
        && (send.relay.is_some() || parse_command(&send.message).is_none())
}

/// The tag of the link of the session `key`.
pub fn link_tag(key: &str) -> String {
    format!("link:{key}")
}

/// The tag every link has (the workspace revision goes to all of them).
pub const LINKS_TAG: &str = "links";

/// Whether workspace revision `offered` is older than `held`, so a
/// session keeps `held`. A revision is the Gateway instance's
/// `{instance}.{bumps}.{writes}`, both counts only growing: `offered` is
/// older when it is the same instance's and neither count is higher (a
/// message stamped before a change the link already told of). Another
/// instance's, or one not of that shape, is taken as it comes.
pub fn is_older_workspace_rev(offered: &str, held: &str) -> bool {
    let parts = |rev: &str| {
        let mut it = rev.rsplitn(3, '.');
        let writes: u64 = it.next()?.parse().ok()?;
        let bumps: u64 = it.next()?.parse().ok()?;
        Some((it.next()?.to_string(), bumps, writes))
    };
    match (parts(offered), parts(held)) {
        (Some((oi, ob, ow)), Some((hi, hb, hw))) => {
            oi == hi && ob <= hb && ow <= hw && (ob, ow) != (hb, hw)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gsv_protocol::codes;

    fn send(message: &str) -> SessionChatSend {
        SessionChatSend {
            session_key: "agent:main:main".into(),
            run_id: "r1".into(),
            message: message.into(),
            config: None,
            config_rev: "c1".into(),
            nodes: None,
            nodes_rev: "n1".into(),
            workspace_rev: "w1".into(),
            channel: None,
            directives: None,
            relay: None,
            clock_offset_ms: 0,
            media: vec![],
            trust: gsv_protocol::Trust::OWNER,
            inbound_id: Some("discord:default:m1".into()),
        }
    }

    #[test]
    fn a_chat_send_goes_down_and_back_whole() {
        let down = LinkDown::ChatSend {
            call: 7,
            send: Cow::Owned(send("hello")),
        };
        let text = serde_json::to_string(&down).unwrap();
        assert_eq!(
            text,
            r#"{"chatSend":{"call":7,"send":{"sessionKey":"agent:main:main","runId":"r1","message":"hello","configRev":"c1","nodesRev":"n1","workspaceRev":"w1","trust":{"level":"owner","actsAs":"owner"},"inboundId":"discord:default:m1"}}}"#
        );
        assert_eq!(LinkDown::read(&text).unwrap(), down);
        let closed = serde_json::to_string(&LinkDown::Closed).unwrap();
        assert_eq!(closed, r#""closed""#);
        assert_eq!(LinkDown::read(&closed).unwrap(), LinkDown::Closed);
        let rev = LinkDown::Workspace {
            rev: "i1.2.3".into(),
        };
        let text = serde_json::to_string(&rev).unwrap();
        assert_eq!(text, r#"{"workspace":{"rev":"i1.2.3"}}"#);
        assert_eq!(LinkDown::read(&text).unwrap(), rev);
    }

    #[test]
    fn a_workspace_revision_never_goes_back() {
        let older = |offered, held| is_older_workspace_rev(offered, held);
        assert_eq!(
            [
                older("i1.2.3", "i1.2.4"),
                older("i1.1.4", "i1.2.4"),
                older("i1.2.4", "i1.2.4"),
                older("i1.3.4", "i1.2.4"),
                older("i1.2.5", "i1.2.4"),
                // Counts that moved apart are not comparable: taken.
                older("i1.3.1", "i1.2.4"),
                // Another instance (the Gateway restarted): taken.
                older("i0.9.9", "i1.2.4"),
                older("x.y", "i1.2.4"),
                older("i1.2.3", ""),
            ],
            [true, true, false, false, false, false, false, false, false]
        );
    }

    #[test]
    fn replies_and_events_are_told_apart() {
        let started = SessionChatSendReply::Started {
            queued: false,
            queue_position: 0,
            directives: None,
        };
        let text = serde_json::to_string(&LinkUp::reply(7, Ok(started.clone()))).unwrap();
        assert_eq!(
            text,
            r#"{"reply":{"call":7,"ok":{"kind":"started","queued":false,"queuePosition":0}}}"#
        );
        let Ok(Up::Link(LinkUp::Reply { call, ok, error })) = LinkUp::read(&text) else {
            panic!("not a reply: {text}");
        };
        assert_eq!((call, reply_result(ok, error)), (7, Ok(started)));

        let stale = ErrorShape::new(4090, "no config c1");
        let text = serde_json::to_string(&LinkUp::reply(8, Err(stale.clone()))).unwrap();
        let Ok(Up::Link(LinkUp::Reply { call, ok, error })) = LinkUp::read(&text) else {
            panic!("not a reply: {text}");
        };
        assert_eq!((call, reply_result(ok, error)), (8, Err(stale)));

        let closing = serde_json::to_string(&LinkUp::Closing).unwrap();
        assert_eq!(closing, r#""closing""#);
        assert!(matches!(
            LinkUp::read(&closing),
            Ok(Up::Link(LinkUp::Closing))
        ));

        let event = gsv_protocol::ChatEvent {
            run_id: Some("r1".into()),
            session_key: "agent:main:main".into(),
            state: gsv_protocol::ChatState::Delta,
            delta: Some("hi".into()),
            message: None,
            usage: None,
            error: None,
        };
        let text = serde_json::to_string(&event).unwrap();
        assert!(matches!(LinkUp::read(&text), Ok(Up::Event(t)) if t == text));
        assert!(LinkUp::read(r#""nope""#).is_err());
        assert!(LinkUp::read(r#"{"reply":{}}"#).is_err());
    }

    #[test]
    fn a_tool_result_goes_down_and_its_ack_comes_back() {
        let result = ToolResultParams {
            call_id: "c1".into(),
            result: Some(serde_json::json!("file text")),
            error: None,
        };
        let down = LinkDown::ToolResult {
            call: 9,
            result: Cow::Borrowed(&result),
        };
        let text = serde_json::to_string(&down).unwrap();
        assert_eq!(
            text,
            r#"{"toolResult":{"call":9,"result":{"callId":"c1","result":"file text"}}}"#
        );
        assert_eq!(LinkDown::read(&text).unwrap(), down);

        let dropped = AckResult {
            ok: true,
            dropped: Some(true),
        };
        let text = serde_json::to_string(&LinkUp::ack(9, Ok(dropped.clone()))).unwrap();
        assert_eq!(
            text,
            r#"{"ack":{"call":9,"ok":{"ok":true,"dropped":true}}}"#
        );
        let Ok(Up::Link(LinkUp::Ack { call, ok, error })) = LinkUp::read(&text) else {
            panic!("not an ack: {text}");
        };
        assert_eq!((call, reply_result(ok, error)), (9, Ok(dropped)));
    }

    #[test]
    fn a_tool_request_goes_up_whole_and_is_told_from_events() {
        let request = ToolRequestParams {
            call_id: "c1".into(),
            tool: "laptop__Read".into(),
            args: serde_json::json!({"path": "a.txt"}),
            session_key: "agent:main:main".into(),
        };
        let up = LinkUp::ToolRequest {
            request: Cow::Borrowed(&request),
        };
        let text = serde_json::to_string(&up).unwrap();
        assert_eq!(
            text,
            r#"{"toolRequest":{"request":{"callId":"c1","tool":"laptop__Read","args":{"path":"a.txt"},"sessionKey":"agent:main:main"}}}"#
        );
        let Ok(Up::Link(read)) = LinkUp::read(&text) else {
            panic!("not a link message: {text}");
        };
        assert_eq!(read, up);
    }

    #[test]
    fn an_empty_reply_is_an_error() {
        let empty = reply_result::<AckResult>(None, None);
        assert_eq!(empty.unwrap_err().code, codes::INTERNAL);
    }

    #[test]
    fn commands_and_long_keys_go_as_requests() {
        assert!(goes_on_link(&send("hello")));
        assert!(goes_on_link(&send("/nope is not a command")));
        assert!(!goes_on_link(&send("/compact")));
        assert!(!goes_on_link(&send("/status")));
        // Another session's words are never read as a command.
        let relayed = SessionChatSend {
            relay: Some(crate::agent_tools::session_send::SessionRelay {
                from: "agent:main:other".into(),
                depth: 1,
            }),
            ..send("/compact")
        };
        assert!(goes_on_link(&relayed));
        let long = SessionChatSend {
            session_key: "k".repeat(MAX_LINK_KEY + 1),
            ..send("hello")
        };
        assert!(!goes_on_link(&long));
        assert_eq!(link_tag("agent:main:main"), "link:agent:main:main");
    }
}
