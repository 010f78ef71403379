//! The fake Graph API under `/v23.0` (any `/vNN.N` prefix): the phone
//! number, text and media sends, read receipts, media ids (their URLs,
//! the files behind them, uploads), with Meta's answers and errors.

use super::payloads::{self, WINDOW_CLOSED_DETAILS};
use super::{
    deliver_now, hold, next_wamid, GraphRecord, SentMessage, Shared, State, ACCESS_TOKEN,
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
    let at = std::time::Instant::now();
    let method = req.method().to_string();
    let full = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or_default().to_string();
    // `/v23.0/…` → `/…`
    let path = match full.trim_start_matches('/').split_once('/') {
        Some((v, rest)) if v.starts_with('v') => format!("/{rest}"),
        _ => full.clone(),
    };
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
    // A file's short-lived URL: the bytes, with the token.
    if method == "GET" && full == ATTACHMENTS_PATH {
        let (status, file, log) = {
            let mut s = state.lock().unwrap();
            download(&mut s, &query, authorization.as_deref())
        };
        state.lock().unwrap().graph_log.push(GraphRecord {
            method,
            path: full,
            authorization,
            body: Value::Null,
            status,
            response: log,
            at,
        });
        let (content_type, body) = match file {
            Some((mime, data)) => (mime, Bytes::from(data.as_ref().clone())),
            None => (
                "application/json".to_string(),
                Bytes::from(
                    json!({"error": {"message": "unauthorized or unknown media", "code": 190}})
                        .to_string(),
                ),
            ),
        };
        return Ok(Response::builder()
            .status(status)
            .header("content-type", content_type)
            .body(Full::new(body))
            .unwrap());
    }
    let is_upload = method == "POST" && path == format!("/{PHONE_NUMBER_ID}/media");
    let body: Value = if is_upload {
        // Logged as what the upload held, not its bytes.
        Value::Null
    } else if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()))
    };
    let (status, response, after, logged) = {
        let mut s = state.lock().unwrap();
        let (status, response, after, logged) = if is_upload {
            let (status, response, summary) =
                upload(&mut s, authorization.as_deref(), &content_type, &bytes);
            (status, response, After::Nothing, summary)
        } else {
            let (status, response, after) =
                route(&mut s, &method, &path, authorization.as_deref(), &body);
            (status, response, after, body)
        };
        s.graph_log.push(GraphRecord {
            method,
            path,
            authorization,
            body: logged.clone(),
            status,
            response: response.clone(),
            at,
        });
        (status, response, after, logged)
    };
    let _ = logged;
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

/// Where media URLs point (Meta's lookaside path, on the fake's host).
const ATTACHMENTS_PATH: &str = "/whatsapp_business/attachments/";

/// The file a media URL names, for the right token only.
#[allow(clippy::type_complexity)]
fn download(
    s: &mut State,
    query: &str,
    auth: Option<&str>,
) -> (u16, Option<(String, std::sync::Arc<Vec<u8>>)>, Value) {
    if auth.and_then(|a| a.strip_prefix("Bearer ")) != Some(ACCESS_TOKEN) {
        return (401, None, json!("unauthorized"));
    }
    let mid = query
        .split('&')
        .find_map(|p| p.strip_prefix("mid="))
        .unwrap_or_default();
    match s.media.get(mid) {
        Some(m) => (
            200,
            Some((m.mime_type.clone(), m.bytes.clone())),
            json!({"bytes": m.bytes.len()}),
        ),
        None => (404, None, json!("unknown media")),
    }
}

/// What Meta takes as an upload, and at most how large (the Cloud API's
/// supported media types).
fn upload_limit(mime: &str) -> Option<u64> {
    const MB: u64 = 1024 * 1024;
    Some(match mime {
        "image/jpeg" | "image/png" => 5 * MB,
        "image/webp" => 500 * 1024,
        "audio/aac" | "audio/amr" | "audio/mpeg" | "audio/mp4" | "audio/ogg" => 16 * MB,
        "video/mp4" | "video/3gpp" => 16 * MB,
        "text/plain"
        | "application/pdf"
        | "application/msword"
        | "application/vnd.ms-excel"
        | "application/vnd.ms-powerpoint"
        | "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        | "application/vnd.openxmlformats-officedocument.presentationml.presentation"
        | "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => 100 * MB,
        _ => return None,
    })
}

/// `POST /{phone-number-id}/media`: answer, and the upload as logged.
fn upload(
    s: &mut State,
    auth: Option<&str>,
    content_type: &str,
    bytes: &[u8],
) -> (u16, Value, Value) {
    if let Some((status, v, _)) = refuse_token(s, auth) {
        return (status, v, Value::Null);
    }
    let parts = match crate::multipart::parse(content_type, bytes) {
        Ok(p) => p,
        Err(e) => {
            let (status, v, _) =
                invalid(s, &format!("The request body is not valid form data: {e}"));
            return (status, v, Value::Null);
        }
    };
    let field = |name: &str| parts.iter().find(|p| p.name == name);
    if field("messaging_product").map(|p| p.text()) != Some("whatsapp".into()) {
        let (status, v, _) = invalid(s, "The parameter messaging_product is required.");
        return (status, v, Value::Null);
    }
    let Some(file) = field("file").filter(|f| f.filename.is_some()) else {
        let (status, v, _) = invalid(s, "The parameter file is required.");
        return (status, v, Value::Null);
    };
    let Some(kind) = field("type").map(|p| p.text()) else {
        let (status, v, _) = invalid(s, "The parameter type is required.");
        return (status, v, Value::Null);
    };
    let summary = json!({"type": kind, "filename": file.filename, "contentType": file.content_type,
                         "bytes": file.data.len()});
    let media_error = |s: &mut State, details: &str| {
        let (status, v, _) = error(
            s,
            400,
            131053,
            "(#131053) Media upload error",
            Some(details),
        );
        (status, v, summary.clone())
    };
    let Some(limit) = upload_limit(&kind) else {
        return media_error(s, &format!("Unsupported file type: {kind}"));
    };
    if file.data.len() as u64 > limit {
        return media_error(
            s,
            &format!("File size too big: {} bytes for {kind}", file.data.len()),
        );
    }
    let media = hold(s, &kind, file.filename.as_deref(), file.data.clone(), true);
    (200, json!({"id": media.id}), summary)
}

fn refuse_token(s: &mut State, auth: Option<&str>) -> Option<(u16, Value, After)> {
    match auth.and_then(|a| a.strip_prefix("Bearer ")) {
        None => Some(error(
            s,
            401,
            104,
            "An access token is required to request this resource.",
            None,
        )),
        Some(token) if token != ACCESS_TOKEN => Some(error(
            s,
            401,
            190,
            "Invalid OAuth access token - Cannot parse access token",
            None,
        )),
        Some(_) => None,
    }
}

/// Signed status webhooks, one after the other (each `pause`d 100 ms
/// before). One the webhook does not answer 200 is delivered again, as
/// Meta does (here every half second, for a minute).
async fn deliver_statuses(state: Shared, deliveries: Vec<Value>, pause: bool) {
    for payload in deliveries {
        if pause {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        for _ in 0..120 {
            let state = state.clone();
            let body = payload.to_string();
            let status = tokio::task::spawn_blocking(move || {
                let signature =
                    format!("sha256={}", super::sign(super::APP_SECRET, body.as_bytes()));
                deliver_now(&state, &body, Some(&signature))
            })
            .await
            .unwrap_or(0);
            if status == 200 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        }
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
    if let Some(refused) = refuse_token(s, auth) {
        return refused;
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
        ("GET", [id]) if s.media.contains_key(*id) => {
            let m = &s.media[*id];
            (
                200,
                // `file_size` is a string in Meta's OpenAPI description.
                json!({"messaging_product": "whatsapp",
                       "url": format!("{}{ATTACHMENTS_PATH}?mid={id}&ext=1750000000&hash=ATtFakeHash", s.origin),
                       "mime_type": m.mime_type, "sha256": m.sha256,
                       "file_size": m.bytes.len().to_string(), "id": id}),
                After::Nothing,
            )
        }
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
    // Any string up to 512 characters, echoed in the message's statuses.
    match &body["biz_opaque_callback_data"] {
        Value::Null => {}
        Value::String(t) if t.chars().count() <= 512 => {}
        _ => {
            return invalid(
                s,
                "Param biz_opaque_callback_data must be a string of at most 512 characters.",
            )
        }
    }
    if !matches!(body.get("recipient_type"), None | Some(Value::Null))
        && body["recipient_type"] != "individual"
    {
        return invalid(
            s,
            "Param recipient_type must be one of {INDIVIDUAL, GROUP}.",
        );
    }
    let kind = body["type"].as_str().unwrap_or("text");
    match kind {
        "text" => {}
        "image" | "audio" | "video" | "document" | "sticker" => {
            if let Some(refused) = check_media_object(s, kind, &body[kind]) {
                return refused;
            }
            return accept(s, to, body);
        }
        other => panic!("the fake models text and media sends only, not {other:?}"),
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
    accept(s, to, body)
}

/// A media object of a send: an uploaded file's `id` (or a `link`), a
/// caption where the type takes one, a document's file name.
fn check_media_object(s: &mut State, kind: &str, object: &Value) -> Option<(u16, Value, After)> {
    let id = object["id"].as_str();
    let link = object["link"].as_str();
    match (id, link) {
        (Some(id), _) if !s.media.contains_key(id) => {
            return Some(invalid(
                s,
                &format!(
                "Param {kind}['id'] is not a valid WhatsApp Business Account media attachment ID"
            ),
            ))
        }
        (Some(_), _) => {}
        (None, Some(l)) if l.starts_with("http://") || l.starts_with("https://") => {}
        _ => {
            return Some(invalid(
                s,
                &format!("The parameter {kind}['id'] or {kind}['link'] is required."),
            ))
        }
    }
    if object.get("caption").is_some() && matches!(kind, "audio" | "sticker") {
        return Some(invalid(
            s,
            &format!("Param {kind}['caption'] is not allowed for {kind} messages."),
        ));
    }
    if object.get("filename").is_some() && kind != "document" {
        return Some(invalid(
            s,
            &format!("Param {kind}['filename'] is only for documents."),
        ));
    }
    None
}

/// A send the fake takes: inside the window (or failed later, by webhook).
fn accept(s: &mut State, to: &str, body: &Value) -> (u16, Value, After) {
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
    let tracking = body["biz_opaque_callback_data"].as_str();
    let statuses = statuses
        .into_iter()
        .map(|p| payloads::tracked(p, tracking))
        .collect();
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
