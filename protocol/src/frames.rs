//! Request / response / event frames.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Error codes used on the wire.
pub mod codes {
    pub const NOT_CONNECTED: i64 = 101;
    pub const UNSUPPORTED_PROTOCOL: i64 = 102;
    pub const INVALID_CONNECT: i64 = 103;
    pub const BAD_REQUEST: i64 = 400;
    pub const UNAUTHORIZED: i64 = 401;
    pub const FORBIDDEN: i64 = 403;
    pub const NOT_FOUND: i64 = 404;
    pub const CONFLICT: i64 = 409;
    pub const PAYLOAD_TOO_LARGE: i64 = 413;
    pub const INTERNAL: i64 = 500;
    pub const UNAVAILABLE: i64 = 503;
}

/// WebSocket close codes.
pub mod close_codes {
    pub const NORMAL: u16 = 1000;
    pub const UNAUTHORIZED: u16 = 4001;
    /// No auth token is configured on the gateway at all.
    pub const AUTH_NOT_CONFIGURED: u16 = 4003;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "type")]
pub enum Frame {
    #[serde(rename = "req")]
    Req(RequestFrame),
    #[serde(rename = "res")]
    Res(ResponseFrame),
    #[serde(rename = "evt")]
    Evt(EventFrame),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RequestFrame {
    pub id: String,
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ResponseFrame {
    /// The request's id; empty when it could not be read, sent as `null`
    /// (as JSON-RPC does for unparseable requests).
    #[serde(serialize_with = "empty_as_null", deserialize_with = "null_as_empty")]
    #[cfg_attr(feature = "ts", ts(type = "string | null"))]
    pub id: String,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorShape>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EventFrame {
    pub event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ErrorShape {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
}

impl ErrorShape {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: None,
            retryable: None,
        }
    }
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }
    pub fn retryable(mut self, retryable: bool) -> Self {
        self.retryable = Some(retryable);
        self
    }
}

impl std::fmt::Display for ErrorShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorShape {}

impl Frame {
    pub fn request(
        id: impl Into<String>,
        method: impl Into<String>,
        params: Option<Value>,
    ) -> Self {
        Frame::Req(RequestFrame {
            id: id.into(),
            method: method.into(),
            params,
        })
    }
    pub fn ok(id: impl Into<String>, payload: Value) -> Self {
        Frame::Res(ResponseFrame {
            id: id.into(),
            ok: true,
            payload: Some(payload),
            error: None,
        })
    }
    pub fn err(id: impl Into<String>, error: ErrorShape) -> Self {
        Frame::Res(ResponseFrame {
            id: id.into(),
            ok: false,
            payload: None,
            error: Some(error),
        })
    }
    pub fn event(event: impl Into<String>, payload: Value) -> Self {
        Frame::Evt(EventFrame {
            event: event.into(),
            payload: Some(payload),
            seq: None,
        })
    }
    /// The frame as JSON text (its `Display`).
    pub fn to_json(&self) -> String {
        self.to_string()
    }

    /// An event frame's JSON text, its payload written straight from its
    /// type: the value `Frame::event(event, to_value(payload)?)` gives,
    /// without a `Value` tree built and dropped on the way (a chat event
    /// carries a whole message). Keys come in the type's order, not sorted.
    pub fn event_json<P: Serialize + ?Sized>(
        event: &str,
        payload: &P,
    ) -> serde_json::Result<String> {
        #[derive(Serialize)]
        struct Evt<'a, P: ?Sized> {
            #[serde(rename = "type")]
            kind: &'static str,
            event: &'a str,
            payload: &'a P,
        }
        serde_json::to_string(&Evt {
            kind: "evt",
            event,
            payload,
        })
    }

    /// A successful response's JSON text, its payload written straight
    /// from its type: the value `Frame::ok(id, to_value(payload)?)` gives.
    pub fn ok_json<P: Serialize + ?Sized>(id: &str, payload: &P) -> serde_json::Result<String> {
        #[derive(Serialize)]
        struct Res<'a, P: ?Sized> {
            #[serde(rename = "type")]
            kind: &'static str,
            #[serde(serialize_with = "empty_as_null")]
            id: &'a str,
            ok: bool,
            payload: &'a P,
        }
        serde_json::to_string(&Res {
            kind: "res",
            id,
            ok: true,
            payload,
        })
    }
}

/// JSON text, as `serde_json::Value`'s `Display` is: a frame is made of
/// strings, numbers and `Value`s, so serializing it cannot fail.
impl std::fmt::Display for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| std::fmt::Error)?;
        f.write_str(&text)
    }
}

fn empty_as_null<S: serde::Serializer>(id: &str, s: S) -> Result<S::Ok, S::Error> {
    if id.is_empty() {
        s.serialize_none()
    } else {
        s.serialize_str(id)
    }
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AssistantBlock, AssistantMessage, ChatEvent, ChatState, Usage};
    use serde_json::{json, to_value};

    fn read(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn frames_written_from_their_types_read_as_frames_of_values() {
        let event = ChatEvent {
            run_id: Some("r1".into()),
            session_key: "agent:main:main".into(),
            state: ChatState::Final,
            delta: None,
            message: Some(AssistantMessage::new(
                vec![AssistantBlock::Text {
                    text: "Hello \"there\"\n".into(),
                }],
                1_700_000_000_000,
            )),
            usage: Some(Usage {
                input: 12,
                output: 3,
                ..Default::default()
            }),
            error: None,
        };
        let payload = to_value(&event).unwrap();
        assert_eq!(
            read(&Frame::event_json("chat", &event).unwrap()),
            read(&Frame::event("chat", payload.clone()).to_json())
        );
        assert_eq!(
            read(&Frame::ok_json("7", &event).unwrap()),
            read(&Frame::ok("7", payload).to_json())
        );
        // An id that could not be read is sent as null, as before.
        let empty = json!({"queued": false, "note": null});
        assert_eq!(
            read(&Frame::ok_json("", &empty).unwrap()),
            json!({"type": "res", "id": null, "ok": true, "payload": {"queued": false, "note": null}})
        );
    }
}
