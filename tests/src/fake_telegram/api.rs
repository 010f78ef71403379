//! The Bot API's HTTP side: `/bot{token}/{method}` and
//! `/file/bot{token}/{file_path}`, the parameters in any of the four ways
//! the API takes them, each method's checks in the order the server makes
//! them, and its answers and errors in the server's words.

use super::html::{self, Entity};
use super::{
    bot_user, entities_json, hold_file, unix_now, Call, CallbackAnswer, ChatAction, ChatKind,
    SentFile, SentMessage, Shared, State, StoredFile, Webhook, BOT_FIRST_NAME, BOT_ID, BOT_TOKEN,
    BOT_USERNAME, MAX_CALLBACK_DATA_BYTES, MAX_CAPTION_CHARS, MAX_DOWNLOAD_BYTES,
    MAX_PHOTO_UPLOAD_BYTES, MAX_TEXT_CHARS, MAX_UPLOAD_BYTES,
};
use crate::multipart::Part;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;

pub(crate) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(shared.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// A method's answer.
pub(crate) enum Answer {
    Ok(Value, Option<&'static str>),
    Err {
        status: u16,
        description: String,
        retry_after: Option<u64>,
    },
}

fn ok(v: Value) -> Answer {
    Answer::Ok(v, None)
}

fn err(status: u16, description: impl Into<String>) -> Answer {
    Answer::Err {
        status,
        description: description.into(),
        retry_after: None,
    }
}

/// `400 Bad Request: {what}`.
fn bad(what: impl std::fmt::Display) -> Answer {
    err(400, format!("Bad Request: {what}"))
}

fn too_many(retry_after: u64) -> Answer {
    Answer::Err {
        status: 429,
        description: format!("Too Many Requests: retry after {retry_after}"),
        retry_after: Some(retry_after),
    }
}

impl Answer {
    fn status(&self) -> u16 {
        match self {
            Answer::Ok(..) => 200,
            Answer::Err { status, .. } => *status,
        }
    }

    fn body(&self) -> Value {
        match self {
            Answer::Ok(result, description) => {
                let mut v = json!({"ok": true, "result": result});
                if let Some(d) = description {
                    v["description"] = json!(d);
                }
                v
            }
            Answer::Err {
                status,
                description,
                retry_after,
            } => {
                let mut v = json!({"ok": false, "error_code": status, "description": description});
                if let Some(s) = retry_after {
                    v["parameters"] = json!({"retry_after": s});
                }
                v
            }
        }
    }
}

/// A request's parameters: the query string, then the body's.
pub(crate) struct Args {
    map: BTreeMap<String, String>,
    /// For the log: JSON values as sent, strings otherwise.
    logged: Map<String, Value>,
    files: Vec<Part>,
}

impl Args {
    fn get(&self, name: &str) -> Option<&str> {
        self.map.get(name).map(String::as_str)
    }

    fn int(&self, name: &str, default: i64, min: i64, max: i64) -> i64 {
        self.get(name)
            .and_then(|v| v.trim().parse::<i64>().ok())
            .unwrap_or(default)
            .clamp(min, max)
    }

    /// The server's `to_bool`.
    fn flag(&self, name: &str) -> bool {
        matches!(
            self.get(name).map(|v| v.trim().to_lowercase()).as_deref(),
            Some("true" | "yes" | "1")
        )
    }

    fn file(&self, name: &str) -> Option<&Part> {
        self.files
            .iter()
            .find(|p| p.name == name && p.filename.is_some())
    }
}

fn url_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
                {
                    Ok(v) => {
                        out.push(v);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn form_pairs(s: &str) -> Vec<(String, String)> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (url_decode(k), url_decode(v)),
            None => (url_decode(p), String::new()),
        })
        .collect()
}

fn parse_args(query: &str, content_type: &str, body: &[u8]) -> Result<Args, Answer> {
    let mut args = Args {
        map: BTreeMap::new(),
        logged: Map::new(),
        files: Vec::new(),
    };
    let put = |args: &mut Args, k: String, v: Value| {
        let text = match &v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        args.map.insert(k.clone(), text);
        args.logged.insert(k, v);
    };
    for (k, v) in form_pairs(query) {
        put(&mut args, k, Value::String(v));
    }
    let kind = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match kind.as_str() {
        _ if body.is_empty() => {}
        "application/json" => {
            let v: Value = serde_json::from_slice(body)
                .map_err(|_| bad("can't parse JSON encoded request parameters"))?;
            let Value::Object(o) = v else {
                return Err(bad("can't parse JSON encoded request parameters"));
            };
            for (k, v) in o {
                if !v.is_null() {
                    put(&mut args, k, v);
                }
            }
        }
        "application/x-www-form-urlencoded" => {
            for (k, v) in form_pairs(&String::from_utf8_lossy(body)) {
                put(&mut args, k, Value::String(v));
            }
        }
        "multipart/form-data" => {
            let parts = crate::multipart::parse(content_type, body)
                .map_err(|e| bad(format!("can't parse multipart/form-data request: {e}")))?;
            for p in parts {
                if p.filename.is_some() {
                    args.files.push(p);
                } else {
                    put(&mut args, p.name.clone(), Value::String(p.text()));
                }
            }
        }
        // Telegram reads no other body.
        _ => {}
    }
    Ok(args)
}

/// `{id}:{secret}`, as bot tokens are; anything else is no bot path.
fn token_form_ok(token: &str) -> bool {
    match token.split_once(':') {
        Some((id, secret)) => {
            !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_digit())
                && !id.starts_with('0')
                && !secret.is_empty()
        }
        None => false,
    }
}

fn response(answer: &Answer) -> Response<Full<Bytes>> {
    let mut r = Response::builder()
        .status(answer.status())
        .header("content-type", "application/json");
    if let Answer::Err {
        retry_after: Some(s),
        ..
    } = answer
    {
        r = r.header("retry-after", s.to_string());
    }
    r.body(Full::new(Bytes::from(answer.body().to_string())))
        .unwrap()
}

async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let at = Instant::now();
    let http_method = req.method().to_string();
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or_default().to_string();
    let content_type = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    if let Some(rest) = path.strip_prefix("/file/bot") {
        return Ok(download(&shared, &http_method, rest, at));
    }
    let (token, method) = path
        .strip_prefix("/bot")
        .and_then(|r| r.split_once('/'))
        .unwrap_or(("", ""));
    let method = method.to_string();
    let (answer, args) = if !token_form_ok(token) || method.is_empty() {
        (err(404, "Not Found"), None)
    } else if token != BOT_TOKEN {
        (err(401, "Unauthorized"), None)
    } else if body.len() > MAX_UPLOAD_BYTES + (1 << 20) {
        (err(413, "Request Entity Too Large"), None)
    } else {
        match parse_args(&query, &content_type, &body) {
            Err(a) => (a, None),
            Ok(args) => {
                let answer = dispatch(&shared, &method, &args).await;
                (answer, Some(args))
            }
        }
    };
    let (logged, files) = match &args {
        Some(a) => (
            Value::Object(a.logged.clone()),
            a.files
                .iter()
                .map(|p| {
                    json!({"field": p.name, "filename": p.filename, "content_type": p.content_type,
                           "size": p.data.len()})
                })
                .collect(),
        ),
        None => (Value::Null, Vec::new()),
    };
    shared.lock().calls.push(Call {
        http_method,
        method,
        args: logged,
        files,
        content_type,
        status: answer.status(),
        response: answer.body(),
        at,
    });
    Ok(response(&answer))
}

/// `GET /file/bot{token}/{file_path}`: the bytes, for the right token.
fn download(shared: &Shared, http_method: &str, rest: &str, at: Instant) -> Response<Full<Bytes>> {
    let (token, file_path) = rest.split_once('/').unwrap_or((rest, ""));
    let file = {
        let s = shared.lock();
        (token == BOT_TOKEN)
            .then(|| s.files.values().find(|f| f.file_path == file_path).cloned())
            .flatten()
    };
    let status = if file.is_some() { 200 } else { 404 };
    shared.lock().calls.push(Call {
        http_method: http_method.to_string(),
        method: format!("file/{file_path}"),
        args: Value::Null,
        files: Vec::new(),
        content_type: String::new(),
        status,
        response: json!({"bytes": file.as_ref().map(|f| f.bytes.len())}),
        at,
    });
    match file {
        // Telegram's file server names no type: the message says what it is.
        Some(f) => Response::builder()
            .status(200)
            .header("content-type", "application/octet-stream")
            .header("content-length", f.bytes.len())
            .body(Full::new(Bytes::from(f.bytes.as_ref().clone())))
            .unwrap(),
        None => response(&err(404, "Not Found")),
    }
}

/// The methods the fake answers (lowercase, as the server matches them).
const METHODS: &[&str] = &[
    "getme",
    "setwebhook",
    "deletewebhook",
    "getwebhookinfo",
    "getupdates",
    "sendmessage",
    "sendphoto",
    "senddocument",
    "sendvoice",
    "sendaudio",
    "sendvideo",
    "sendchataction",
    "getfile",
    "answercallbackquery",
    "setmycommands",
    "getmycommands",
    "deletemycommands",
    "getchat",
    "deletemessage",
];

async fn dispatch(shared: &Arc<Shared>, method: &str, args: &Args) -> Answer {
    let m = method.to_lowercase();
    if !METHODS.contains(&m.as_str()) {
        return err(404, "Not Found");
    }
    if let Some(refused) = scripted(&mut shared.lock(), &m, args) {
        return refused;
    }
    if m == "getupdates" {
        return get_updates(shared, args).await;
    }
    let answer = {
        let mut s = shared.lock();
        match m.as_str() {
            "getme" => ok(
                json!({"id": BOT_ID, "is_bot": true, "first_name": BOT_FIRST_NAME, "username": BOT_USERNAME,
                       "can_join_groups": true, "can_read_all_group_messages": s.bot_can_read_all,
                       "supports_inline_queries": false, "can_connect_to_business": false,
                       "has_main_web_app": false}),
            ),
            "setwebhook" => set_webhook(&mut s, args, true),
            "deletewebhook" => set_webhook(&mut s, args, false),
            "getwebhookinfo" => webhook_info(&s),
            "sendmessage" => send(&mut s, method, args, None),
            "sendphoto" => send(&mut s, method, args, Some("photo")),
            "senddocument" => send(&mut s, method, args, Some("document")),
            "sendvoice" => send(&mut s, method, args, Some("voice")),
            "sendaudio" => send(&mut s, method, args, Some("audio")),
            "sendvideo" => send(&mut s, method, args, Some("video")),
            "sendchataction" => chat_action(&mut s, args),
            "getfile" => get_file(&s, args),
            "answercallbackquery" => answer_callback(&mut s, args),
            "setmycommands" => {
                match serde_json::from_str::<Value>(args.get("commands").unwrap_or("")) {
                    Ok(v @ Value::Array(_)) => {
                        s.commands = v;
                        ok(json!(true))
                    }
                    _ => bad("can't parse commands JSON object"),
                }
            }
            "getmycommands" => ok(s.commands.clone()),
            "deletemycommands" => {
                s.commands = json!([]);
                ok(json!(true))
            }
            "getchat" => match resolve_chat(&s, args.get("chat_id")) {
                Ok(id) => {
                    let mut c = s.chats[&id].json.clone();
                    c["accent_color_id"] = json!(0);
                    c["max_reaction_count"] = json!(11);
                    ok(c)
                }
                Err(a) => a,
            },
            "deletemessage" => match resolve_chat(&s, args.get("chat_id")) {
                Ok(id) => {
                    let mid = args.int("message_id", 0, 0, i64::MAX);
                    let chat = s.chats.get_mut(&id).unwrap_or_else(|| unreachable!());
                    match chat.messages.remove(&mid) {
                        Some(_) => ok(json!(true)),
                        None => bad("message to delete not found"),
                    }
                }
                Err(a) => a,
            },
            _ => unreachable!("listed in METHODS"),
        }
    };
    // A webhook set or updates confirmed: deliveries and polls move on.
    shared.updates.notify_waiters();
    super::delivery::kick(shared);
    answer
}

/// A scripted failure, or a flood wait a 429 started and that is not over.
fn scripted(s: &mut State, method: &str, args: &Args) -> Option<Answer> {
    let key = args
        .get("chat_id")
        .and_then(|c| c.trim().parse::<i64>().ok())
        .unwrap_or(0);
    let now = Instant::now();
    if let Some(until) = s.flood_until.get(&key).copied() {
        if until > now {
            let left = (until - now).as_millis().div_ceil(1000).max(1) as u64;
            return Some(too_many(left));
        }
        s.flood_until.remove(&key);
    }
    let failure = s
        .failures
        .iter_mut()
        .find(|f| f.method == method && f.left > 0)?;
    failure.left -= 1;
    let f = failure.clone();
    s.failures.retain(|f| f.left > 0);
    Some(match f.retry_after {
        Some(secs) => {
            s.flood_until.insert(key, now + Duration::from_secs(secs));
            too_many(secs)
        }
        None => err(f.status, f.description),
    })
}

// ---- updates ----

fn set_webhook(s: &mut State, args: &Args, set: bool) -> Answer {
    let url = match set {
        true => args.get("url").unwrap_or("").trim().to_string(),
        false => String::new(),
    };
    let now = Instant::now();
    if !url.is_empty() {
        if s.last_set_webhook
            .is_some_and(|t| now < t + Duration::from_secs(1))
        {
            return too_many(1);
        }
        s.last_set_webhook = Some(now);
    }
    let secret = (!url.is_empty())
        .then(|| args.get("secret_token").unwrap_or("").to_string())
        .filter(|t| !t.is_empty());
    let max_connections = match url.is_empty() {
        true => 0,
        false => args.int("max_connections", 40, 1, 100) as u32,
    };
    let drop_pending = args.flag("drop_pending_updates");
    let new = (!url.is_empty()).then(|| Webhook {
        url: url.clone(),
        secret_token: secret.clone(),
        max_connections,
    });
    if let Some(list) = args.get("allowed_updates") {
        match serde_json::from_str::<Vec<String>>(list) {
            Ok(list) => s.allowed_updates = Some(list),
            Err(_) if list.is_empty() => {}
            Err(_) => return bad("can't parse allowed_updates JSON array"),
        }
    }
    if s.webhook == new && !drop_pending {
        return Answer::Ok(
            json!(true),
            Some(match url.is_empty() {
                true => "Webhook is already deleted",
                false => "Webhook is already set",
            }),
        );
    }
    if drop_pending {
        s.pending.clear();
    }
    if let Some(hook) = &new {
        let parsed = hook
            .url
            .strip_prefix("https://")
            .or_else(|| hook.url.strip_prefix("http://"))
            .map(|rest| rest.split(['/', '?', '#']).next().unwrap_or_default());
        if parsed.is_none_or(str::is_empty) {
            return bad("invalid webhook URL specified");
        }
        if let Some(t) = &secret {
            if t.len() > 256 {
                return bad("secret token is too long");
            }
            if !t
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            {
                return bad("secret token contains unallowed characters");
            }
        }
        // A long poll in progress ends.
        if let Some(owner) = s.poll_owner.take() {
            s.poll_ended
                .insert(owner, "Conflict: terminated by setWebhook request");
        }
    }
    let had = s.webhook.is_some();
    s.webhook = new;
    s.webhook_error = None;
    Answer::Ok(
        json!(true),
        Some(match (url.is_empty(), had) {
            (false, _) => "Webhook was set",
            (true, true) => "Webhook was deleted",
            (true, false) => "Webhook is already deleted",
        }),
    )
}

fn webhook_info(s: &State) -> Answer {
    let hook = s.webhook.as_ref();
    let mut v = json!({"url": hook.map(|h| h.url.as_str()).unwrap_or(""),
                       "has_custom_certificate": false,
                       "pending_update_count": s.pending.len()});
    if let Some((date, message)) = &s.webhook_error {
        v["last_error_date"] = json!(date);
        v["last_error_message"] = json!(message);
    }
    if let Some(h) = hook {
        v["max_connections"] = json!(h.max_connections);
        v["ip_address"] = json!("127.0.0.1");
    }
    if let Some(list) = &s.allowed_updates {
        v["allowed_updates"] = json!(list);
    }
    ok(v)
}

/// `getUpdates`: at once when updates wait (or `timeout` is 0), else held
/// until one comes or the timeout passes; 409 while a webhook is set, or
/// when a later `getUpdates` or a `setWebhook` takes over.
async fn get_updates(shared: &Arc<Shared>, args: &Args) -> Answer {
    let (me, deadline) = {
        let mut s = shared.lock();
        if s.webhook.is_some() {
            return err(
                409,
                "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
            );
        }
        let offset = args.int("offset", 0, i64::from(i32::MIN), i64::from(i32::MAX));
        let mut limit = args.int("limit", 100, 1, 100) as usize;
        let mut timeout = args.int("timeout", 0, 0, 50) as u64;
        if let Some(list) = args.get("allowed_updates") {
            if let Ok(list) = serde_json::from_str::<Vec<String>>(list) {
                s.allowed_updates = Some(list);
            }
        }
        // The server's own pacing of a poll that asks again at once.
        let now = Instant::now();
        if let Some((last, when)) = s.last_get_updates {
            if last == offset && timeout < 3 && now < when + Duration::from_secs(3) {
                timeout = 3;
            }
            if last == offset && now < when + Duration::from_millis(500) {
                limit = 1;
            }
        }
        s.last_get_updates = Some((offset, now));
        if offset > 0 {
            s.pending.retain(|p| p.update_id >= offset);
        } else if offset < 0 {
            let keep = offset.unsigned_abs() as usize;
            let drop = s.pending.len().saturating_sub(keep);
            s.pending.drain(..drop);
        }
        if let Some(old) = s.poll_owner.take() {
            s.poll_ended.insert(
                old,
                "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
            );
        }
        if timeout == 0 || !s.pending.is_empty() {
            return ok(updates_json(&s, limit));
        }
        s.poll_counter += 1;
        let me = s.poll_counter;
        s.poll_owner = Some(me);
        (
            (me, limit),
            tokio::time::Instant::now() + Duration::from_secs(timeout),
        )
    };
    shared.updates.notify_waiters();
    let (me, limit) = me;
    loop {
        let notified = shared.updates.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        {
            let mut s = shared.lock();
            if let Some(why) = s.poll_ended.remove(&me) {
                return err(409, why);
            }
            let over = tokio::time::Instant::now() >= deadline;
            if !s.pending.is_empty() || over {
                if s.poll_owner == Some(me) {
                    s.poll_owner = None;
                }
                return ok(updates_json(&s, limit));
            }
        }
        tokio::select! {
            _ = notified => {}
            _ = tokio::time::sleep_until(deadline) => {}
        }
    }
}

fn updates_json(s: &State, limit: usize) -> Value {
    Value::Array(
        s.pending
            .iter()
            .take(limit)
            .map(|p| p.body.clone())
            .collect(),
    )
}

// ---- chats and messages ----

fn resolve_chat(s: &State, raw: Option<&str>) -> Result<i64, Answer> {
    let raw = raw.unwrap_or("").trim();
    if raw.is_empty() {
        return Err(bad("chat_id is empty"));
    }
    let found = match raw.parse::<i64>() {
        Ok(id) => s.chats.contains_key(&id).then_some(id),
        Err(_) => raw.strip_prefix('@').and_then(|name| {
            s.chats
                .iter()
                .find(|(_, c)| {
                    c.json["username"]
                        .as_str()
                        .is_some_and(|u| u.eq_ignore_ascii_case(name))
                        && c.kind != ChatKind::Private
                })
                .map(|(id, _)| *id)
        }),
    };
    found.ok_or_else(|| bad("chat not found"))
}

const BLOCKED: &str = "Forbidden: bot was blocked by the user";

/// A text as Telegram reads it under `parse_mode`: the plain text and its
/// entities, or the refusal.
fn formatted(
    text: &str,
    parse_mode: Option<&str>,
    entities: Option<&str>,
) -> Result<(String, Vec<Entity>), Answer> {
    let mode = parse_mode.unwrap_or("").to_lowercase();
    if text.is_empty() || mode.is_empty() || mode == "none" {
        let given = entities
            .and_then(|e| serde_json::from_str::<Vec<Value>>(e).ok())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|e| {
                let kind = match e["type"].as_str()? {
                    "bold" => "bold",
                    "italic" => "italic",
                    "underline" => "underline",
                    "strikethrough" => "strikethrough",
                    "spoiler" => "spoiler",
                    "code" => "code",
                    "pre" => "pre",
                    "text_link" => "text_link",
                    "blockquote" => "blockquote",
                    "expandable_blockquote" => "expandable_blockquote",
                    _ => return None,
                };
                Some(Entity {
                    kind,
                    offset: e["offset"].as_u64()? as usize,
                    length: e["length"].as_u64()? as usize,
                    url: e["url"].as_str().map(str::to_string),
                    language: e["language"].as_str().map(str::to_string),
                    custom_emoji_id: None,
                })
            })
            .collect();
        return Ok((text.to_string(), given));
    }
    match mode.as_str() {
        "html" => html::parse(text).map_err(|why| bad(format!("can't parse entities: {why}"))),
        "markdown" | "markdownv2" => Err(err(
            500,
            format!("the fake Telegram does not model parse_mode {parse_mode:?}: use HTML"),
        )),
        _ => Err(bad("unsupported parse_mode")),
    }
}

/// `reply_parameters` (or the older `reply_to_message_id`): the message
/// id and whether to send anyway when it is gone.
fn reply_parameters(args: &Args) -> Result<Option<(i64, bool)>, Answer> {
    let Some(raw) = args.get("reply_parameters") else {
        let id = args.int("reply_to_message_id", 0, 0, i64::MAX);
        return Ok((id > 0).then(|| (id, args.flag("allow_sending_without_reply"))));
    };
    if raw.is_empty() {
        return Ok(None);
    }
    let v: Value =
        serde_json::from_str(raw).map_err(|_| bad("can't parse reply parameters JSON object"))?;
    let Some(o) = v.as_object() else {
        return Err(bad("object expected as reply parameters"));
    };
    if o.is_empty() {
        return Ok(None);
    }
    let id = match &o.get("message_id") {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| bad("field \"message_id\" must be a valid Number"))?,
        Some(_) => return Err(bad("field \"message_id\" must be a Number")),
        None => return Err(bad("can't find field \"message_id\"")),
    };
    let allow = match o.get("allow_sending_without_reply") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(bad(
                "field \"allow_sending_without_reply\" must be of type Boolean",
            ))
        }
    };
    Ok((id > 0).then_some((id, allow)))
}

/// `reply_markup`, checked as the server parses it; the inline keyboard's
/// callback data lengths are Telegram's (`BUTTON_DATA_INVALID`), checked
/// when the message goes.
fn reply_markup(args: &Args) -> Result<Option<Value>, Answer> {
    let Some(raw) = args.get("reply_markup").filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let v: Value = serde_json::from_str(raw)
        .map_err(|_| bad("can't parse reply keyboard markup JSON object"))?;
    if !v.is_object() {
        return Err(bad("object expected as reply markup"));
    }
    if let Some(rows) = v.get("inline_keyboard") {
        let Some(rows) = rows.as_array() else {
            return Err(bad("field \"inline_keyboard\" must be of type Array"));
        };
        for row in rows {
            let Some(row) = row.as_array() else {
                return Err(bad(
                    "Field \"inline_keyboard\" of the InlineKeyboardMarkup must be an Array of Arrays",
                ));
            };
            for button in row {
                let why = |w: &str| bad(format!("can't parse inline keyboard button: {w}"));
                if !button.is_object() {
                    return Err(why("InlineKeyboardButton must be an Object"));
                }
                match &button["text"] {
                    Value::String(_) => {}
                    Value::Null => return Err(why("Can't find field \"text\"")),
                    _ => return Err(why("Field \"text\" must be of type String")),
                }
                let kinds = [
                    "url",
                    "callback_data",
                    "web_app",
                    "login_url",
                    "switch_inline_query",
                    "switch_inline_query_current_chat",
                    "switch_inline_query_chosen_chat",
                    "copy_text",
                    "callback_game",
                    "pay",
                ];
                let typed = kinds.iter().any(|k| match &button[*k] {
                    Value::Null => false,
                    Value::String(s) => !s.is_empty() || k.starts_with("switch_inline"),
                    Value::Bool(b) => *b,
                    _ => true,
                });
                if !typed {
                    return Err(why("Text buttons are unallowed in the inline keyboard"));
                }
            }
        }
    }
    Ok(Some(v))
}

/// The file a media send names: an upload, an `attach://` upload, or a
/// `file_id` Telegram holds.
enum Input {
    Upload(Part),
    Held(StoredFile),
}

fn input_file(s: &State, args: &Args, field: &str) -> Result<Input, Answer> {
    if let Some(p) = args.file(field) {
        return Ok(Input::Upload(p.clone()));
    }
    let Some(v) = args.get(field).filter(|v| !v.is_empty()) else {
        return Err(bad(format!("there is no {field} in the request")));
    };
    if let Some(name) = v.strip_prefix("attach://") {
        return args
            .file(name)
            .cloned()
            .map(Input::Upload)
            .ok_or_else(|| bad(format!("there is no {field} in the request")));
    }
    if let Some(f) = s.files.get(v) {
        return Ok(Input::Held(f.clone()));
    }
    if v.starts_with("http://") || v.starts_with("https://") {
        // The fake reaches no other host.
        return Err(bad("failed to get HTTP URL content"));
    }
    Err(bad("wrong file identifier/HTTP URL specified"))
}

fn is_image(b: &[u8]) -> bool {
    b.starts_with(&[0xFF, 0xD8, 0xFF])
        || b.starts_with(b"\x89PNG\r\n\x1a\n")
        || b.starts_with(b"GIF8")
        || (b.len() > 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP")
        || b.starts_with(b"BM")
}

fn mime_of(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "jpg" | "jpeg" => "image/jpeg",
        "png" => "image/png",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        "txt" | "md" | "log" => "text/plain",
        "json" => "application/json",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "zip" => "application/zip",
        "ogg" | "oga" | "opus" => "audio/ogg",
        "mp3" => "audio/mpeg",
        "m4a" => "audio/mp4",
        "wav" => "audio/x-wav",
        "mp4" => "video/mp4",
        "mov" => "video/quicktime",
        "webm" => "video/webm",
        _ => "application/octet-stream",
    }
}

/// `sendMessage` (`media` None) and the uploads (`media` the field:
/// `photo`, `document`, `voice`, `audio`, `video`).
fn send(s: &mut State, method: &str, args: &Args, media: Option<&str>) -> Answer {
    match try_send(s, method, args, media) {
        Ok(a) | Err(a) => a,
    }
}

fn try_send(
    s: &mut State,
    method: &str,
    args: &Args,
    media: Option<&str>,
) -> Result<Answer, Answer> {
    let input = match media {
        Some(field) => Some(input_file(s, args, field)?),
        None => None,
    };
    let text_key = if media.is_some() { "caption" } else { "text" };
    let raw = args.get(text_key).unwrap_or("").to_string();
    if media.is_none() && raw.is_empty() {
        return Err(bad("message text is empty"));
    }
    let entities_key = if media.is_some() {
        "caption_entities"
    } else {
        "entities"
    };
    let (plain, entities) = formatted(&raw, args.get("parse_mode"), args.get(entities_key))?;
    let reply = reply_parameters(args)?;
    let markup = reply_markup(args)?;
    let chat_id = resolve_chat(s, args.get("chat_id"))?;
    let chat = &s.chats[&chat_id];
    let mut thread = match args.int("message_thread_id", 0, 0, i64::MAX) {
        0 => None,
        t if chat.forum && !chat.topics.contains_key(&t) => {
            return Err(bad("message thread not found"))
        }
        t if chat.kind != ChatKind::Private && !chat.messages.contains_key(&t) => {
            return Err(bad("message thread not found"))
        }
        t => Some(t),
    };
    let replied = match reply {
        Some((id, allow)) => match chat.messages.get(&id) {
            Some(m) => Some(m.clone()),
            None if allow => None,
            None => return Err(bad("message to be replied not found")),
        },
        None => None,
    };
    if thread.is_none() {
        // A reply in a topic is said in that topic.
        thread = replied
            .as_ref()
            .and_then(|m| m["message_thread_id"].as_i64());
    }
    let finished = html::finish(&plain, entities);
    let (text, entities) = match (finished, media) {
        (Some(f), _) => (Some(f.0), f.1),
        (None, None) => return Err(bad("text must be non-empty")),
        (None, Some(_)) => (None, Vec::new()),
    };
    let limit = if media.is_some() {
        MAX_CAPTION_CHARS
    } else {
        MAX_TEXT_CHARS
    };
    // Characters (Unicode scalars): an emoji is one here, though two in
    // the UTF-16 offsets of entities.
    if text.as_deref().map(|t| t.chars().count()).unwrap_or(0) > limit {
        return Err(bad(match media {
            Some(_) => "message caption is too long",
            None => "message is too long",
        }));
    }
    if let Some(rows) = markup
        .as_ref()
        .and_then(|m| m["inline_keyboard"].as_array())
    {
        let too_long = rows
            .iter()
            .flat_map(|r| r.as_array().cloned().unwrap_or_default())
            .any(|b| {
                b["callback_data"]
                    .as_str()
                    .is_some_and(|d| d.len() > MAX_CALLBACK_DATA_BYTES)
            });
        if too_long {
            return Err(bad("BUTTON_DATA_INVALID"));
        }
    }
    if chat.kind == ChatKind::Private && s.blocked.contains(&chat_id) {
        return Err(err(403, BLOCKED));
    }
    // The file, checked and held.
    let (media_json, sent_file) = match (media, input) {
        (Some(field), Some(input)) => {
            let (json, file) = store_media(s, field, input, args)?;
            (Some((field, json)), Some(file))
        }
        _ => (None, None),
    };
    // The message.
    let chat = s.chats.get_mut(&chat_id).unwrap_or_else(|| unreachable!());
    let id = chat.next_message_id;
    chat.next_message_id += 1;
    let mut m =
        json!({"message_id": id, "from": bot_user(), "chat": chat.json, "date": unix_now()});
    if chat.forum {
        if let Some(t) = thread {
            m["message_thread_id"] = json!(t);
            m["is_topic_message"] = json!(true);
        }
    }
    let replied = replied.or_else(|| {
        // In a topic, Telegram names the topic's first message.
        thread
            .filter(|_| chat.forum)
            .and_then(|t| chat.messages.get(&t).cloned())
    });
    if let Some(mut r) = replied.clone() {
        if let Some(o) = r.as_object_mut() {
            o.remove("reply_to_message");
        }
        m["reply_to_message"] = r;
    }
    let (text_field, entities_field) = match media {
        Some(_) => ("caption", "caption_entities"),
        None => ("text", "entities"),
    };
    if let Some(t) = &text {
        m[text_field] = json!(t);
    }
    if !entities.is_empty() {
        m[entities_field] = entities_json(&entities);
    }
    if let Some((field, v)) = &media_json {
        m[*field] = v.clone();
    }
    if let Some(k) = markup
        .as_ref()
        .filter(|k| k.get("inline_keyboard").is_some())
    {
        m["reply_markup"] = json!({"inline_keyboard": k["inline_keyboard"]});
    }
    chat.messages.insert(id, m.clone());
    let reply_to = reply
        .filter(|_| {
            replied
                .as_ref()
                .is_some_and(|r| r.get("forum_topic_created").is_none())
        })
        .map(|(id, _)| id);
    s.sent.push(SentMessage {
        method: method.to_string(),
        chat_id,
        message_id: id,
        thread_id: m["message_thread_id"].as_i64(),
        parse_mode: args.get("parse_mode").map(str::to_string),
        raw_text: args.get(text_key).map(str::to_string),
        text,
        entities: entities.iter().map(Entity::json).collect(),
        reply_to,
        reply_markup: markup,
        file: sent_file,
        message: m.clone(),
    });
    Ok(ok(m))
}

/// Checks an upload (or reuses a held file) and makes the message field.
fn store_media(
    s: &mut State,
    field: &str,
    input: Input,
    args: &Args,
) -> Result<(Value, SentFile), Answer> {
    let (held, filename, content_type) = match input {
        Input::Held(f) => (f, None, None),
        Input::Upload(p) => {
            if p.data.is_empty() {
                return Err(bad("file must be non-empty"));
            }
            if p.data.len() > MAX_UPLOAD_BYTES {
                return Err(err(413, "Request Entity Too Large"));
            }
            if field == "photo" {
                if p.data.len() > MAX_PHOTO_UPLOAD_BYTES {
                    return Err(bad("PHOTO_SAVE_FILE_INVALID"));
                }
                if !is_image(&p.data) {
                    return Err(bad("IMAGE_PROCESS_FAILED"));
                }
            }
            let name = p.filename.clone().unwrap_or_default();
            let declared = p
                .content_type
                .clone()
                .filter(|t| t != "application/octet-stream");
            let mime = declared.unwrap_or_else(|| mime_of(&name).to_string());
            let (folder, ext, stored_mime) = match field {
                "photo" => ("photos", "jpg".to_string(), None),
                "voice" => ("voice", "oga".to_string(), Some("audio/ogg".to_string())),
                "audio" => ("music", ext_of(&name, "mp3"), Some(mime)),
                "video" => ("videos", ext_of(&name, "mp4"), Some(mime)),
                _ => ("documents", ext_of(&name, "bin"), Some(mime)),
            };
            let keep_name =
                matches!(field, "document" | "audio" | "video").then_some(name.as_str());
            let f = hold_file(
                s,
                folder,
                &ext,
                p.data.clone(),
                stored_mime.as_deref(),
                keep_name.filter(|n| !n.is_empty()),
            );
            (f, p.filename.clone(), p.content_type)
        }
    };
    let file = |f: &StoredFile| json!({"file_id": f.file_id, "file_unique_id": f.file_unique_id, "file_size": f.bytes.len()});
    let duration = args.int("duration", 0, 0, i64::from(i32::MAX));
    let json = match field {
        "photo" => {
            let mut v = file(&held);
            v["width"] = json!(1280);
            v["height"] = json!(960);
            json!([v])
        }
        "voice" => {
            let mut v = file(&held);
            v["duration"] = json!(duration);
            v["mime_type"] = json!("audio/ogg");
            v
        }
        _ => {
            let mut v = file(&held);
            if field == "video" {
                v["width"] = json!(args.int("width", 640, 0, 10_000));
                v["height"] = json!(args.int("height", 360, 0, 10_000));
            }
            if matches!(field, "audio" | "video") {
                v["duration"] = json!(duration);
            }
            if let Some(n) = &held.file_name {
                v["file_name"] = json!(n);
            }
            if let Some(t) = &held.mime_type {
                v["mime_type"] = json!(t);
            }
            v
        }
    };
    let sent = SentFile {
        kind: field.to_string(),
        file_id: held.file_id.clone(),
        filename,
        content_type,
        bytes: held.bytes,
    };
    Ok((json, sent))
}

fn ext_of(name: &str, default: &str) -> String {
    name.rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .filter(|e| !e.is_empty() && e.len() <= 5)
        .unwrap_or_else(|| default.to_string())
}

const ACTIONS: &[&str] = &[
    "cancel",
    "typing",
    "record_video",
    "upload_video",
    "record_audio",
    "record_voice",
    "upload_audio",
    "upload_voice",
    "upload_photo",
    "upload_document",
    "choose_sticker",
    "pick_up_location",
    "find_location",
    "record_video_note",
    "upload_video_note",
];

fn chat_action(s: &mut State, args: &Args) -> Answer {
    let action = args.get("action").unwrap_or("").to_lowercase();
    if !ACTIONS.contains(&action.as_str()) {
        return bad("wrong parameter action in request");
    }
    let chat_id = match resolve_chat(s, args.get("chat_id")) {
        Ok(id) => id,
        Err(a) => return a,
    };
    let chat = &s.chats[&chat_id];
    let thread = match args.int("message_thread_id", 0, 0, i64::MAX) {
        0 => None,
        t if chat.forum && !chat.topics.contains_key(&t) => return bad("message thread not found"),
        t => Some(t),
    };
    if chat.kind == ChatKind::Private && s.blocked.contains(&chat_id) {
        return err(403, BLOCKED);
    }
    s.actions.push(ChatAction {
        chat_id,
        thread_id: thread,
        action,
        at: Instant::now(),
    });
    ok(json!(true))
}

fn get_file(s: &State, args: &Args) -> Answer {
    let id = args.get("file_id").unwrap_or("").trim();
    if id.is_empty() {
        return bad("file_id not specified");
    }
    let Some(f) = s.files.get(id) else {
        return bad("invalid file_id");
    };
    if f.bytes.len() > MAX_DOWNLOAD_BYTES {
        return bad("file is too big");
    }
    ok(
        json!({"file_id": f.file_id, "file_unique_id": f.file_unique_id, "file_size": f.bytes.len(),
               "file_path": f.file_path}),
    )
}

fn answer_callback(s: &mut State, args: &Args) -> Answer {
    let id = args
        .get("callback_query_id")
        .unwrap_or("")
        .trim()
        .to_string();
    match s.callback_queries.get_mut(&id) {
        Some(q) if !q.answered => {
            q.answered = true;
            s.answers.push(CallbackAnswer {
                callback_query_id: id,
                text: args
                    .get("text")
                    .filter(|t| !t.is_empty())
                    .map(str::to_string),
                show_alert: args.flag("show_alert"),
            });
            ok(json!(true))
        }
        _ => bad("query is too old and response timeout expired or query ID is invalid"),
    }
}
