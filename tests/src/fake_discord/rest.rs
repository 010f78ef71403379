//! The fake REST API under `/api/v10`: `GET /gateway/bot`,
//! `POST /channels/{id}/messages`, `POST /channels/{id}/typing`.
//!
//! Message bodies are checked against `MessageCreateRequest` of Discord's
//! OpenAPI description (discord/discord-api-spec, `specs/openapi.json`):
//! the property types the channel may send, `message_reference` with its
//! required `message_id`, `nonce` as an integer or a string of at most 25,
//! `allowed_mentions.parse` from `users|roles|everyone` — and the limit
//! that applies to bots, 2000 characters of `content` (the schema's 4000 is
//! for some users only). Refusals use Discord's error shapes (50035
//! "Invalid Form Body", 50006 "Cannot send an empty message").

use super::{RestFailure, RestRecord, Shared, State, BOT_USERNAME, BOT_USER_ID, FAKE_BOT_TOKEN};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use std::convert::Infallible;
use tokio::net::TcpListener;

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

struct Answer {
    status: u16,
    body: Option<Value>,
    headers: Vec<(&'static str, String)>,
}

fn answer(status: u16, body: Value) -> Answer {
    Answer {
        status,
        body: Some(body),
        headers: vec![],
    }
}

async fn handle(
    state: Shared,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let method = req.method().to_string();
    let path = req
        .uri()
        .path()
        .strip_prefix("/api/v10")
        .unwrap_or(req.uri().path())
        .to_string();
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
    let answer = {
        let mut s = state.lock().unwrap();
        let a = route(&mut s, &method, &path, authorization.as_deref(), &body);
        s.rest_log.push(RestRecord {
            method,
            path,
            authorization,
            body,
            status: a.status,
        });
        a
    };
    let mut resp = Response::builder().status(answer.status);
    for (name, value) in &answer.headers {
        resp = resp.header(*name, value);
    }
    let payload = match answer.body {
        Some(v) => {
            resp = resp.header("content-type", "application/json");
            Bytes::from(v.to_string())
        }
        None => Bytes::new(),
    };
    Ok(resp.body(Full::new(payload)).unwrap())
}

fn route(s: &mut State, method: &str, path: &str, auth: Option<&str>, body: &Value) -> Answer {
    if auth != Some(&format!("Bot {FAKE_BOT_TOKEN}")) {
        return answer(401, json!({"message": "401: Unauthorized", "code": 0}));
    }
    if let Some(i) = s
        .failures
        .iter()
        .position(|(suffix, _)| path.ends_with(suffix.as_str()))
    {
        let (_, failure) = s.failures.remove(i);
        return failed(failure);
    }
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (method, parts.as_slice()) {
        ("GET", ["gateway", "bot"]) => answer(
            200,
            json!({
                "url": format!("ws://{}", s.ws_addr.map(|a| a.to_string()).unwrap_or_default()),
                "shards": 1,
                "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 14_400_000, "max_concurrency": 1}
            }),
        ),
        ("POST", ["channels", channel, "messages"]) => create_message(s, channel, body),
        ("POST", ["channels", _, "typing"]) => Answer {
            status: 204,
            body: None,
            headers: vec![],
        },
        _ => answer(404, json!({"message": "404: Not Found", "code": 0})),
    }
}

fn failed(failure: RestFailure) -> Answer {
    match failure {
        RestFailure::RateLimited {
            retry_after,
            global,
        } => Answer {
            status: 429,
            body: Some(json!({
                "message": "You are being rate limited.",
                "retry_after": retry_after,
                "global": global
            })),
            headers: vec![
                ("retry-after", format!("{}", retry_after.ceil() as u64)),
                ("x-ratelimit-limit", "5".into()),
                ("x-ratelimit-remaining", "0".into()),
                ("x-ratelimit-reset-after", format!("{retry_after:.3}")),
                ("x-ratelimit-bucket", "fake-bucket".into()),
                (
                    "x-ratelimit-scope",
                    if global { "global" } else { "user" }.into(),
                ),
                ("x-ratelimit-global", global.to_string()),
            ],
        },
        RestFailure::Status(status) => answer(
            status,
            json!({"message": format!("{status}: scripted failure"), "code": 0}),
        ),
    }
}

fn create_message(s: &mut State, channel: &str, body: &Value) -> Answer {
    if let Err(errors) = validate_message_create(body) {
        return answer(
            400,
            json!({"message": "Invalid Form Body", "code": 50035, "errors": errors}),
        );
    }
    let content = body["content"].as_str().unwrap_or_default();
    if content.is_empty() {
        return answer(
            400,
            json!({"message": "Cannot send an empty message", "code": 50006}),
        );
    }
    let nonce = match &body["nonce"] {
        Value::String(n) => Some(n.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    if body["enforce_nonce"] == true {
        if let Some(existing) = nonce
            .as_ref()
            .and_then(|n| s.nonces.get(&(channel.to_string(), n.clone())))
        {
            return answer(200, existing.clone());
        }
    }
    s.next_id += 1;
    let reference = body.get("message_reference").filter(|r| !r.is_null());
    let message = json!({
        "id": s.next_id.to_string(),
        "type": if reference.is_some() { 19 } else { 0 },
        "channel_id": channel,
        "author": {"id": BOT_USER_ID, "username": BOT_USERNAME, "discriminator": "0",
                   "global_name": null, "avatar": null, "bot": true},
        "content": content,
        "timestamp": "2026-11-24T00:00:00.000000+00:00",
        "edited_timestamp": null,
        "tts": false,
        "mention_everyone": false,
        "mentions": [],
        "mention_roles": [],
        "attachments": [],
        "embeds": [],
        "pinned": false,
        "flags": 0,
        "nonce": body.get("nonce").cloned().unwrap_or(Value::Null),
        "message_reference": reference.map(|r| json!({
            "type": 0, "channel_id": channel, "message_id": r["message_id"]
        })),
    });
    if let Some(n) = nonce {
        s.nonces.insert((channel.to_string(), n), message.clone());
    }
    answer(200, message)
}

/// The subset of `MessageCreateRequest` a text message uses, by the schema.
pub(crate) fn validate_message_create(body: &Value) -> Result<(), Value> {
    let Some(obj) = body.as_object() else {
        return Err(
            json!({"_errors": [{"code": "DICT_TYPE_CONVERT", "message": "Only dictionaries may be used in a DictType"}]}),
        );
    };
    let mut errors = serde_json::Map::new();
    let mut bad = |field: &str, code: &str, message: String| {
        errors.insert(
            field.to_string(),
            json!({"_errors": [{"code": code, "message": message}]}),
        );
    };
    match obj.get("content") {
        None | Some(Value::Null) => {}
        Some(Value::String(c)) if c.chars().count() > 2000 => bad(
            "content",
            "BASE_TYPE_MAX_LENGTH",
            "Must be 2000 or fewer in length.".into(),
        ),
        Some(Value::String(_)) => {}
        Some(_) => bad("content", "BASE_TYPE_STRING", "Must be a string.".into()),
    }
    match obj.get("nonce") {
        None | Some(Value::Null) | Some(Value::Number(_)) => {}
        Some(Value::String(n)) if n.chars().count() <= 25 => {}
        Some(_) => bad(
            "nonce",
            "BASE_TYPE_MAX_LENGTH",
            "Must be an integer or a string of 25 or fewer characters.".into(),
        ),
    }
    for flag in ["enforce_nonce", "tts"] {
        if !matches!(
            obj.get(flag),
            None | Some(Value::Null) | Some(Value::Bool(_))
        ) {
            bad(
                flag,
                "BASE_TYPE_BOOLEAN",
                "Must be either true or false.".into(),
            );
        }
    }
    match obj.get("message_reference") {
        None | Some(Value::Null) => {}
        Some(Value::Object(r)) => {
            let snowflake = r
                .get("message_id")
                .and_then(Value::as_str)
                .is_some_and(|id| !id.is_empty());
            if !snowflake {
                bad(
                    "message_reference",
                    "BASE_TYPE_REQUIRED",
                    "message_id: This field is required".into(),
                );
            }
            if !matches!(
                r.get("fail_if_not_exists"),
                None | Some(Value::Null) | Some(Value::Bool(_))
            ) {
                bad(
                    "message_reference",
                    "BASE_TYPE_BOOLEAN",
                    "fail_if_not_exists: Must be either true or false.".into(),
                );
            }
        }
        Some(_) => bad(
            "message_reference",
            "DICT_TYPE_CONVERT",
            "Only dictionaries may be used in a DictType".into(),
        ),
    }
    match obj.get("allowed_mentions") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            let parse_ok = match m.get("parse") {
                None | Some(Value::Null) => true,
                Some(Value::Array(items)) => items
                    .iter()
                    .all(|i| matches!(i.as_str(), Some("users" | "roles" | "everyone"))),
                Some(_) => false,
            };
            if !parse_ok {
                bad(
                    "allowed_mentions",
                    "ENUM_TYPE_COERCE",
                    "parse: values must be users, roles or everyone".into(),
                );
            }
        }
        Some(_) => bad(
            "allowed_mentions",
            "DICT_TYPE_CONVERT",
            "Only dictionaries may be used in a DictType".into(),
        ),
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Value::Object(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_channel_s_bodies_pass_and_bad_ones_are_refused() {
        let good = json!({"content": "hi", "nonce": "abc", "enforce_nonce": true,
            "allowed_mentions": {"parse": ["users"], "replied_user": true},
            "message_reference": {"message_id": "1", "fail_if_not_exists": false}});
        assert_eq!(validate_message_create(&good), Ok(()));
        let long = json!({"content": "x".repeat(2001)});
        assert_eq!(
            validate_message_create(&long),
            Err(
                json!({"content": {"_errors": [{"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}]}})
            )
        );
        assert!(
            validate_message_create(&json!({"content": "x", "message_reference": {}})).is_err()
        );
        assert!(
            validate_message_create(&json!({"content": "x", "nonce": "x".repeat(26)})).is_err()
        );
        assert!(validate_message_create(&json!({"content": 5})).is_err());
    }
}
