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
//!
//! A message with files is `multipart/form-data` as Discord takes it:
//! `payload_json` (the message; its `attachments` name each file by the
//! index `n` of its `files[n]` part) and the `files[n]` parts, each with
//! a file name, at most 10 MiB (40005 "Request entity too large" past it).
//! Attachment URLs on the fake's host are its CDN (no token needed).

use super::{
    RestFailure, RestRecord, Shared, State, Upload, BOT_USERNAME, BOT_USER_ID, FAKE_BOT_TOKEN,
};
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
    let received_at = std::time::Instant::now();
    let method = req.method().to_string();
    let path = req
        .uri()
        .path()
        .strip_prefix("/api/v10")
        .unwrap_or(req.uri().path())
        .to_string();
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let authorization = header("authorization");
    let content_type = header("content-type").unwrap_or_default();
    let bytes = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    // The CDN: files by URL, no token.
    if method == "GET" && path.starts_with("/attachments/") {
        let file = state.lock().unwrap().cdn.get(&path).cloned();
        return Ok(match file {
            Some((mime, data)) => Response::builder()
                .status(200)
                .header("content-type", mime)
                .body(Full::new(Bytes::from(data.as_ref().clone())))
                .unwrap(),
            None => Response::builder()
                .status(404)
                .body(Full::new(Bytes::from_static(b"Not Found")))
                .unwrap(),
        });
    }
    let multipart = content_type.starts_with("multipart/form-data");
    let (body, files) = if multipart {
        match read_multipart(&content_type, &bytes) {
            Ok((payload, files)) => (payload, Some(files)),
            Err(e) => (json!({"_multipart_error": e}), Some(Vec::new())),
        }
    } else if bytes.is_empty() {
        (Value::Null, None)
    } else {
        (
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into())),
            None,
        )
    };
    let answer = {
        let mut s = state.lock().unwrap();
        let a = match &files {
            Some(files) => route_with_files(
                &mut s,
                &method,
                &path,
                authorization.as_deref(),
                &body,
                files,
            ),
            None => route(&mut s, &method, &path, authorization.as_deref(), &body),
        };
        s.rest_log.push(RestRecord {
            method,
            path,
            authorization,
            body,
            status: a.status,
            received_at,
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

/// A file part of an upload: its index `n` (`files[n]`), name, type, bytes.
type FilePartIn = (usize, Option<String>, Option<String>, Vec<u8>);

/// `payload_json` and the `files[n]` parts of an upload.
fn read_multipart(content_type: &str, body: &[u8]) -> Result<(Value, Vec<FilePartIn>), String> {
    let parts = crate::multipart::parse(content_type, body)?;
    let mut payload = Value::Null;
    let mut files = Vec::new();
    for p in parts {
        if p.name == "payload_json" {
            payload = serde_json::from_slice(&p.data)
                .map_err(|e| format!("payload_json is not JSON: {e}"))?;
        } else if let Some(n) = p
            .name
            .strip_prefix("files[")
            .and_then(|r| r.strip_suffix(']'))
            .and_then(|n| n.parse::<usize>().ok())
        {
            files.push((n, p.filename, p.content_type, p.data));
        } else {
            return Err(format!("unexpected form field {:?}", p.name));
        }
    }
    Ok((payload, files))
}

/// A request with files: only a message create takes them.
fn route_with_files(
    s: &mut State,
    method: &str,
    path: &str,
    auth: Option<&str>,
    payload: &Value,
    files: &[FilePartIn],
) -> Answer {
    if auth != Some(&format!("Bot {FAKE_BOT_TOKEN}")) {
        return answer(401, json!({"message": "401: Unauthorized", "code": 0}));
    }
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let ("POST", ["channels", channel, "messages"]) = (method, parts.as_slice()) else {
        return answer(400, json!({"message": "400: Bad Request", "code": 0}));
    };
    let form_error = |field: &str, message: String| {
        answer(
            400,
            json!({"message": "Invalid Form Body", "code": 50035,
            "errors": {field: {"_errors": [{"code": "BASE_TYPE_INVALID", "message": message}]}}}),
        )
    };
    if let Some(e) = payload.get("_multipart_error") {
        return form_error("_multipart", e.as_str().unwrap_or_default().to_string());
    }
    if files.is_empty() || files.len() > 10 {
        return form_error(
            "files",
            format!("Must have 1 to 10 files, not {}", files.len()),
        );
    }
    if files
        .iter()
        .any(|(_, _, _, bytes)| bytes.len() > 10 * 1024 * 1024)
    {
        return answer(
            413,
            json!({"message": "Request entity too large", "code": 40005}),
        );
    }
    let listed = payload["attachments"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (i, a) in listed.iter().enumerate() {
        let id = a["id"]
            .as_u64()
            .or_else(|| a["id"].as_str().and_then(|s| s.parse().ok()));
        let Some(id) = id.map(|i| i as usize) else {
            return form_error(
                &format!("attachments.{i}.id"),
                "This field is required".into(),
            );
        };
        if !files.iter().any(|(n, _, _, _)| *n == id) {
            return form_error(
                &format!("attachments.{i}.id"),
                format!("Unknown attachment {id}: no files[{id}] part"),
            );
        }
    }
    for (n, filename, _, _) in files {
        if filename.as_deref().is_none_or(str::is_empty) {
            return form_error(&format!("files[{n}]"), "A file needs a filename".into());
        }
    }
    let mut body = payload.clone();
    if body.get("content").is_none() {
        body["content"] = json!("");
    }
    let a = create_message_with(s, channel, &body, true);
    if a.status == 200 {
        let message_id = a
            .body
            .as_ref()
            .map(|m| m["id"].as_str().unwrap_or_default().to_string());
        let mut listed_out = Vec::new();
        for (n, filename, content_type, bytes) in files {
            let name = listed
                .iter()
                .find(|l| l["id"].as_u64() == Some(*n as u64))
                .and_then(|l| l["filename"].as_str())
                .map(str::to_string)
                .or_else(|| filename.clone())
                .unwrap_or_default();
            s.uploads.push(Upload {
                channel: channel.to_string(),
                message_id: message_id.clone().unwrap_or_default(),
                filename: name.clone(),
                content_type: content_type.clone(),
                bytes: bytes.clone(),
            });
            listed_out.push(
                json!({"id": n.to_string(), "filename": name, "size": bytes.len(),
                                   "content_type": content_type}),
            );
        }
        let mut a = a;
        if let Some(m) = a.body.as_mut() {
            m["attachments"] = Value::Array(listed_out);
        }
        return a;
    }
    a
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
    create_message_with(s, channel, body, false)
}

/// A message create; `has_files`: the content may be empty.
fn create_message_with(s: &mut State, channel: &str, body: &Value, has_files: bool) -> Answer {
    if let Err(errors) = validate_message_create(body) {
        return answer(
            400,
            json!({"message": "Invalid Form Body", "code": 50035, "errors": errors}),
        );
    }
    let content = body["content"].as_str().unwrap_or_default();
    if content.is_empty() && !has_files {
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
