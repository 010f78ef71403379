//! The fake Graph API under `/v23.0` (any `/vNN.N` prefix): the phone
//! number, text sends and read receipts, with Meta's answers and errors.

use super::payloads::{self, WINDOW_CLOSED_DETAILS};
use super::{
    deliver_now, next_wamid, GraphRecord, SentMessage, Shared, State, ACCESS_TOKEN,
    DISPLAY_PHONE_NUMBER_FORMATTED, PHONE_NUMBER_ID, VERIFIED_NAME,
};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use std::convert::Infallible;
use tokio::net::TcpListener;

/// The Cloud API's limit on `text.body`.
const MAX_BODY_CHARS: usize = 4096;

pub(crate) async fn serve(listener: TcpListener, state: Shared) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let state = state.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(state.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// What to do once the answer is written: statuses by webhook.
enum After {
    Nothing,
    Statuses(Vec<Value>),
}

async fn handle(
    state: Shared,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().to_string();
    let full = req.uri().path().to_string();
    // `/v23.0/…` → `/…`
    let path = match full.trim_start_matches('/').split_once('/') {
        Some((v, rest)) if v.starts_with('v') => format!("/{rest}"),
        _ => full.clone(),
    };
    let authorization = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let bytes = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let body: Value = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
    };
    let (status, response, after) = {
        let mut s = state.lock().unwrap();
        let (status, response, after) =
            route(&mut s, &method, &path, authorization.as_deref(), &body);
        s.graph_log.push(GraphRecord {
            method,
            path,
            authorization,
            body,
            status,
            response: response.clone(),
        });
        (status, response, after)
    };
    if let After::Statuses(deliveries) = after {
        let early = state.lock().unwrap().statuses_before_answer;
        let statuses = deliver_statuses(state.clone(), deliveries, !early);
        if early {
            // Meta does not order its webhooks after its answers: here
            // they come first, and the answer a moment later.
            statuses.await;
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        } else {
            // After the answer, as they mostly do.
            tokio::spawn(statuses);
        }
    }
    Ok(Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(response.to_string())))
        .unwrap())
}

/// Signed status webhooks, one after the other (each `pause`d 100 ms before).
async fn deliver_statuses(state: Shared, deliveries: Vec<Value>, pause: bool) {
    for payload in deliveries {
        if pause {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let state = state.clone();
        let body = payload.to_string();
        let _ = tokio::task::spawn_blocking(move || {
            let signature = format!("sha256={}", super::sign(super::APP_SECRET, body.as_bytes()));
            deliver_now(&state, &body, Some(&signature))
        })
        .await;
    }
}

fn trace_id(s: &mut State) -> String {
    s.next_id += 1;
    format!("AfakeTrace{:08X}", s.next_id)
}

/// Meta's error body.
fn error(
    s: &mut State,
    status: u16,
    code: i64,
    message: &str,
    details: Option<&str>,
) -> (u16, Value, After) {
    let mut e = json!({"message": message, "type": "OAuthException", "code": code, "fbtrace_id": trace_id(s)});
    if let Some(d) = details {
        e["error_data"] = json!({"messaging_product": "whatsapp", "details": d});
    }
    (status, json!({"error": e}), After::Nothing)
}

fn route(
    s: &mut State,
    method: &str,
    path: &str,
    auth: Option<&str>,
    body: &Value,
) -> (u16, Value, After) {
    match auth.and_then(|a| a.strip_prefix("Bearer ")) {
        None => {
            return error(
                s,
                401,
                104,
                "An access token is required to request this resource.",
                None,
            )
        }
        Some(token) if token != ACCESS_TOKEN => {
            return error(
                s,
                401,
                190,
                "Invalid OAuth access token - Cannot parse access token",
                None,
            )
        }
        Some(_) => {}
    }
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (method, parts.as_slice()) {
        ("GET", [id]) if *id == PHONE_NUMBER_ID => (
            200,
            json!({"verified_name": VERIFIED_NAME, "code_verification_status": "VERIFIED",
                   "display_phone_number": DISPLAY_PHONE_NUMBER_FORMATTED,
                   "quality_rating": "GREEN", "platform_type": "CLOUD_API",
                   "throughput": {"level": "STANDARD"}, "id": PHONE_NUMBER_ID}),
            After::Nothing,
        ),
        ("POST", [id, "messages"]) if *id == PHONE_NUMBER_ID => messages(s, body),
        (_, [id, ..]) => {
            let message = format!(
                "Unsupported {} request. Object with ID '{id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api",
                method.to_ascii_lowercase()
            );
            let (status, mut v, after) = error(s, 400, 100, &message, None);
            v["error"]["type"] = json!("GraphMethodException");
            v["error"]["error_subcode"] = json!(33);
            (status, v, after)
        }
        _ => error(s, 400, 100, "Unknown path components", None),
    }
}

fn invalid(s: &mut State, details: &str) -> (u16, Value, After) {
    error(s, 400, 100, "(#100) Invalid parameter", Some(details))
}

fn messages(s: &mut State, body: &Value) -> (u16, Value, After) {
    if body["messaging_product"] != "whatsapp" {
        return invalid(s, "The parameter messaging_product is required.");
    }
    if body["status"] == "read" {
        return read_receipt(s, body);
    }
    let Some(to) = body["to"].as_str().filter(|t| !t.is_empty()) else {
        return invalid(s, "The parameter to is required.");
    };
    if !matches!(body.get("recipient_type"), None | Some(Value::Null))
        && body["recipient_type"] != "individual"
    {
        return invalid(
            s,
            "Param recipient_type must be one of {INDIVIDUAL, GROUP}.",
        );
    }
    match body["type"].as_str().unwrap_or("text") {
        "text" => {}
        other => panic!("the fake models text sends only, not {other:?}"),
    }
    let Some(text) = body["text"]["body"].as_str() else {
        return invalid(s, "The parameter text['body'] is required.");
    };
    if text.chars().count() > MAX_BODY_CHARS {
        return error(
            s,
            400,
            100,
            "(#100) Param text['body'] must be at most 4096 characters long.",
            None,
        );
    }
    if !matches!(body["text"].get("preview_url"), None | Some(Value::Bool(_))) {
        return invalid(s, "Param text['preview_url'] must be a boolean.");
    }
    if !matches!(body.get("context"), None | Some(Value::Null))
        && !body["context"]["message_id"].is_string()
    {
        return invalid(s, "The parameter context['message_id'] is required.");
    }
    let open = s.windows.get(to).copied().unwrap_or(false);
    if !open && !s.window_failures_async {
        return error(
            s,
            400,
            131047,
            "(#131047) Re-engagement message",
            Some(WINDOW_CLOSED_DETAILS),
        );
    }
    let id = next_wamid(s, to);
    s.sent.push(SentMessage {
        id: id.clone(),
        to: to.to_string(),
        body: body.clone(),
    });
    let statuses = if !open {
        vec![payloads::status(
            &id,
            to,
            "failed",
            Some((131047, "Re-engagement message", WINDOW_CLOSED_DETAILS)),
        )]
    } else if s.auto_statuses {
        vec![
            payloads::status(&id, to, "sent", None),
            payloads::status(&id, to, "delivered", None),
        ]
    } else {
        vec![]
    };
    (
        200,
        json!({"messaging_product": "whatsapp", "contacts": [{"input": to, "wa_id": to}],
               "messages": [{"id": id}]}),
        After::Statuses(statuses),
    )
}

/// `status: read` (+ `typing_indicator`): for a message the user sent.
fn read_receipt(s: &mut State, body: &Value) -> (u16, Value, After) {
    let Some(id) = body["message_id"].as_str() else {
        return invalid(s, "The parameter message_id is required.");
    };
    if !s.inbound_ids.contains(id) {
        return invalid(
            s,
            &format!("Invalid message_id {id}: no such incoming message."),
        );
    }
    if !matches!(body.get("typing_indicator"), None | Some(Value::Null))
        && body["typing_indicator"]["type"] != "text"
    {
        return invalid(s, "Param typing_indicator['type'] must be one of {TEXT}.");
    }
    (200, json!({"success": true}), After::Nothing)
}
