//! Turning a WebSocket text message into a request, or into the error
//! response it deserves. Every request gets an answer: a frame that cannot
//! be parsed is answered with its id when one can be read (JSON-RPC style
//! `null` id otherwise).

use gsv_protocol::{codes, ErrorShape, Frame, RequestFrame, MAX_FRAME_BYTES};
use serde::Deserialize;

#[derive(Debug, PartialEq)]
pub enum Intake {
    Request(RequestFrame),
    /// A response or event sent to the gateway: nothing to answer.
    Ignore,
    /// Answer with this error frame.
    Reject(Frame),
}

#[derive(Deserialize)]
struct IdOnly {
    id: Option<serde_json::Value>,
}

/// The frame's `id` when it can be read, else empty (sent as `null`).
fn readable_id(text: &str) -> String {
    id_text(
        serde_json::from_str::<IdOnly>(text)
            .ok()
            .and_then(|f| f.id)
            .as_ref(),
    )
}

fn id_text(id: Option<&serde_json::Value>) -> String {
    match id {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

pub fn intake_text(text: &str) -> Intake {
    if text.len() > MAX_FRAME_BYTES {
        return Intake::Reject(Frame::err(
            readable_id(text),
            ErrorShape::new(
                codes::PAYLOAD_TOO_LARGE,
                format!(
                    "Frame of {} bytes exceeds the {} byte limit",
                    text.len(),
                    MAX_FRAME_BYTES
                ),
            ),
        ));
    }
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Intake::Reject(Frame::err(
                String::new(),
                ErrorShape::new(codes::BAD_REQUEST, format!("Frame is not valid JSON: {e}")),
            ))
        }
    };
    // From the frame already read, not by reading its text again.
    let id = id_text(value.get("id"));
    match value.get("type").and_then(|t| t.as_str()) {
        Some("res") | Some("evt") => return Intake::Ignore,
        Some("req") => {}
        other => {
            let what = other.map_or("no type".to_string(), |t| format!("unknown type {t:?}"));
            return Intake::Reject(Frame::err(
                id,
                ErrorShape::new(
                    codes::BAD_REQUEST,
                    format!("Frame has {what}: expected \"req\", \"res\" or \"evt\""),
                ),
            ));
        }
    }
    match serde_json::from_value::<RequestFrame>(value) {
        Ok(req) if req.id.is_empty() => Intake::Reject(Frame::err(
            id,
            ErrorShape::new(codes::BAD_REQUEST, "Request frame needs a non-empty id"),
        )),
        Ok(req) => Intake::Request(req),
        Err(e) => Intake::Reject(Frame::err(
            id,
            ErrorShape::new(codes::BAD_REQUEST, format!("Malformed request frame: {e}")),
        )),
    }
}

/// Binary frames carry file transfers only (not supported on this socket yet).
pub fn intake_binary(len: usize) -> Frame {
    Frame::err(
        String::new(),
        ErrorShape::new(
            codes::BAD_REQUEST,
            format!("Unexpected binary frame ({len} bytes): send JSON text frames"),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rejected(text: &str) -> serde_json::Value {
        match intake_text(text) {
            Intake::Reject(f) => serde_json::to_value(f).unwrap(),
            other => panic!("expected a rejection, got {other:?}"),
        }
    }

    #[test]
    fn accepts_requests() {
        assert_eq!(
            intake_text(
                r#"{"type":"req","id":"1","method":"config.get","params":{"path":"model"}}"#
            ),
            Intake::Request(RequestFrame {
                id: "1".into(),
                method: "config.get".into(),
                params: Some(json!({"path":"model"}))
            })
        );
    }

    #[test]
    fn ignores_responses_and_events() {
        assert_eq!(
            intake_text(r#"{"type":"res","id":"1","ok":true}"#),
            Intake::Ignore
        );
        assert_eq!(intake_text(r#"{"type":"evt","event":"x"}"#), Intake::Ignore);
    }

    #[test]
    fn rejects_non_json_with_null_id() {
        let v = rejected("hello there");
        assert_eq!(v["id"], json!(null));
        assert_eq!(v["ok"], json!(false));
        assert_eq!(v["error"]["code"], json!(400));
        assert!(v["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Frame is not valid JSON"));
    }

    #[test]
    fn rejects_unknown_type_keeping_the_id() {
        assert_eq!(
            rejected(r#"{"type":"rpc","id":"9"}"#),
            json!({"type":"res","id":"9","ok":false,"error":{"code":400,
                "message":"Frame has unknown type \"rpc\": expected \"req\", \"res\" or \"evt\""}})
        );
        assert_eq!(
            rejected(r#"{"id":"9"}"#)["error"]["message"],
            json!("Frame has no type: expected \"req\", \"res\" or \"evt\"")
        );
    }

    #[test]
    fn rejects_malformed_request_keeping_the_id() {
        let v = rejected(r#"{"type":"req","id":"5"}"#);
        assert_eq!(v["id"], json!("5"));
        assert_eq!(
            v["error"]["message"],
            json!("Malformed request frame: missing field `method`")
        );
        let v = rejected(r#"{"type":"req","id":7,"method":"x"}"#);
        assert_eq!(v["id"], json!("7"));
    }

    #[test]
    fn rejects_oversized_frames_with_their_id() {
        let big = format!(
            r#"{{"type":"req","id":"big","method":"chat.send","params":{{"message":"{}"}}}}"#,
            "a".repeat(MAX_FRAME_BYTES)
        );
        assert_eq!(
            rejected(&big),
            json!({"type":"res","id":"big","ok":false,"error":{"code":413,
                "message": format!("Frame of {} bytes exceeds the 1048576 byte limit", big.len())}})
        );
    }
}
