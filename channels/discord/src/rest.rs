//! Discord REST: the requests the channel makes and what to do with each
//! answer (done, wait and retry, or fail with a clear error). The Worker's
//! `rest_client` only performs them.

use gsv_channel_worker::multipart::{clean_filename, Form};
use gsv_protocol::channels::ChannelCapabilities;
use gsv_protocol::channels::PeerKind;
use serde::Deserialize;
use serde_json::{json, Value};
use std::fmt;

/// Bots may send at most this many characters per message (the OpenAPI
/// schema allows 4000, which only applies to some users).
pub const MAX_MESSAGE_CHARS: usize = 2_000;
/// Tries of one request in all (the first and its retries).
pub const MAX_ATTEMPTS: u32 = 4;
/// A rate limit longer than this is not waited out inside one send: the
/// caller gets `retryable` and tries later.
pub const MAX_RETRY_WAIT_MS: i64 = 10_000;

pub fn capabilities() -> ChannelCapabilities {
    ChannelCapabilities {
        chat_types: vec![PeerKind::Dm, PeerKind::Group],
        media: true,
        reactions: false,
        threads: false,
        typing: true,
        editing: false,
        deletion: false,
        qr_login: false,
        max_text_length: MAX_MESSAGE_CHARS,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

/// One REST call, relative to the API base (`DISCORD_API_BASE`).
#[derive(Debug, Clone, PartialEq)]
pub struct RestRequest {
    pub method: Method,
    pub path: String,
    pub body: Option<Value>,
}

/// Why a request failed for good.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestError {
    pub message: String,
    /// Trying the same request later may work.
    pub retryable: bool,
}

impl fmt::Display for RestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RestError {}

/// `POST /channels/{id}/messages`. `nonce` (≤ 25 characters, one per
/// send, the same on its retries) with `enforce_nonce` makes Discord return
/// the first message instead of posting a second when a retry repeats a
/// request that did arrive.
pub fn create_message(
    channel_id: &str,
    text: &str,
    reply_to: Option<&str>,
    nonce: &str,
) -> Result<RestRequest, RestError> {
    let chars = text.chars().count();
    if chars == 0 {
        return Err(RestError {
            message: "the message is empty: Discord refuses messages without content".into(),
            retryable: false,
        });
    }
    if chars > MAX_MESSAGE_CHARS {
        return Err(RestError {
            message: format!(
                "the message has {chars} characters; Discord bots may send at most {MAX_MESSAGE_CHARS} per message (the gateway splits longer text)"
            ),
            retryable: false,
        });
    }
    // Users may be mentioned; @everyone, @here and roles never: the text is
    // the agent's, and it should not be able to ping a whole server.
    let mut body = json!({
        "content": text,
        "allowed_mentions": {"parse": ["users"], "replied_user": true},
        "nonce": nonce,
        "enforce_nonce": true,
    });
    if let Some(id) = reply_to {
        // fail_if_not_exists: false — a reply to a deleted message still goes out.
        body["message_reference"] = json!({"message_id": id, "fail_if_not_exists": false});
    }
    Ok(RestRequest {
        method: Method::Post,
        path: format!("/channels/{channel_id}/messages"),
        body: Some(body),
    })
}

/// The largest file a bot uploads (Discord's limit without server boosts).
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// Files one message takes.
pub const MAX_FILES: usize = 10;

/// A file to upload with a message.
#[derive(Debug, Clone, PartialEq)]
pub struct FilePart {
    pub filename: String,
    pub mime_type: String,
    pub bytes: Vec<u8>,
}

/// A `multipart/form-data` request (a message with files).
#[derive(Debug, Clone, PartialEq)]
pub struct MultipartRequest {
    pub path: String,
    pub content_type: String,
    pub body: Vec<u8>,
}

/// `POST /channels/{id}/messages` with files: `payload_json` (the
/// message, its `attachments` naming each file by index) and one
/// `files[n]` part per file, as Discord takes uploads.
pub fn create_message_with_files(
    channel_id: &str,
    text: &str,
    reply_to: Option<&str>,
    nonce: &str,
    files: &[FilePart],
    boundary: &str,
) -> Result<MultipartRequest, RestError> {
    let refuse = |message: String| RestError {
        message,
        retryable: false,
    };
    if files.is_empty() || files.len() > MAX_FILES {
        return Err(refuse(format!(
            "a message takes 1 to {MAX_FILES} files, not {}",
            files.len()
        )));
    }
    if let Some(big) = files.iter().find(|f| f.bytes.len() as u64 > MAX_FILE_BYTES) {
        return Err(refuse(format!(
            "{} is {:.1} MB; Discord takes files of at most 10 MB from a bot",
            big.filename,
            big.bytes.len() as f64 / (1024.0 * 1024.0)
        )));
    }
    if text.chars().count() > MAX_MESSAGE_CHARS {
        return Err(refuse(format!(
            "the message has {} characters; Discord bots may send at most {MAX_MESSAGE_CHARS}",
            text.chars().count()
        )));
    }
    let mut payload = json!({
        "allowed_mentions": {"parse": ["users"], "replied_user": true},
        "nonce": nonce,
        "enforce_nonce": true,
        "attachments": files.iter().enumerate()
            .map(|(i, f)| json!({"id": i, "filename": clean_filename(&f.filename)}))
            .collect::<Vec<_>>(),
    });
    if !text.is_empty() {
        payload["content"] = json!(text);
    }
    if let Some(id) = reply_to {
        payload["message_reference"] = json!({"message_id": id, "fail_if_not_exists": false});
    }
    let mut form = Form::new(boundary);
    form.typed_field("payload_json", "application/json", &payload.to_string());
    for (i, f) in files.iter().enumerate() {
        form.file(&format!("files[{i}]"), &f.filename, &f.mime_type, &f.bytes);
    }
    let (content_type, body) = form.finish();
    Ok(MultipartRequest {
        path: format!("/channels/{channel_id}/messages"),
        content_type,
        body,
    })
}

/// `scheme://host[:port]` of a URL.
fn origin(url: &str) -> Option<&str> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = &rest[..end];
    (!scheme.is_empty() && !host.is_empty() && !host.contains('@'))
        .then(|| &url[..scheme.len() + 3 + end])
}

/// Whether the channel may download `url` for the gateway: an attachment
/// on Discord's CDN (https), or on the API's own host (a test double).
/// Nothing else: the URL came through the gateway, and the channel must
/// not fetch arbitrary addresses on its behalf.
pub fn attachment_url_allowed(url: &str, api_base: &str) -> bool {
    let Some(origin) = origin(url) else {
        return false;
    };
    matches!(
        origin,
        "https://cdn.discordapp.com" | "https://media.discordapp.net"
    ) || Some(origin) == self::origin(api_base)
}

pub fn trigger_typing(channel_id: &str) -> RestRequest {
    RestRequest {
        method: Method::Post,
        path: format!("/channels/{channel_id}/typing"),
        body: None,
    }
}

pub fn gateway_bot() -> RestRequest {
    RestRequest {
        method: Method::Get,
        path: "/gateway/bot".into(),
        body: None,
    }
}

/// The parts of an answer the decision needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RestResponse {
    pub status: u16,
    /// `Retry-After` (seconds).
    pub retry_after: Option<f64>,
    /// `X-RateLimit-Reset-After` (seconds).
    pub reset_after: Option<f64>,
    /// `X-RateLimit-Global: true`.
    pub global: bool,
    pub body: String,
}

/// The outcome of a failed request (`None` from a network error).
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Done,
    RetryAfterMs(i64),
    Fail(RestError),
}

#[derive(Deserialize)]
struct RateLimitBody {
    retry_after: Option<f64>,
    #[serde(default)]
    global: bool,
}

#[derive(Deserialize)]
struct ErrorBody {
    message: Option<String>,
    code: Option<i64>,
}

/// What to do after attempt number `attempt` (0-based) got `resp` (`None`:
/// the request did not reach Discord).
pub fn decide(resp: Option<&RestResponse>, attempt: u32, random: f64) -> Decision {
    let last = attempt + 1 >= MAX_ATTEMPTS;
    let Some(resp) = resp else {
        return if last {
            fail("Discord could not be reached", true)
        } else {
            Decision::RetryAfterMs(server_backoff_ms(attempt, random))
        };
    };
    match resp.status {
        200..=299 => Decision::Done,
        429 => {
            let body = serde_json::from_str::<RateLimitBody>(&resp.body).ok();
            // The body's retry_after is the precise one; headers are the fallback.
            let secs = body
                .as_ref()
                .and_then(|b| b.retry_after)
                .or(resp.retry_after)
                .or(resp.reset_after)
                .unwrap_or(1.0);
            let global = resp.global || body.is_some_and(|b| b.global);
            let wait = (secs * 1000.0).ceil() as i64;
            let scope = if global { "globally " } else { "" };
            if last || wait > MAX_RETRY_WAIT_MS {
                fail(
                    &format!("Discord rate-limited the bot {scope}for {secs} s"),
                    true,
                )
            } else {
                Decision::RetryAfterMs(wait)
            }
        }
        500..=599 if !last => Decision::RetryAfterMs(server_backoff_ms(attempt, random)),
        status => {
            let detail = serde_json::from_str::<ErrorBody>(&resp.body)
                .ok()
                .and_then(|b| b.message.map(|m| (m, b.code)));
            let detail = match detail {
                Some((m, Some(code))) => format!(": {m} (code {code})"),
                Some((m, None)) => format!(": {m}"),
                None => String::new(),
            };
            let (what, retryable) = match status {
                401 => ("Discord refused the bot token (401)", false),
                403 => (
                    "the bot may not do this here (403: missing access or permissions)",
                    false,
                ),
                404 => ("Discord does not know this channel or message (404)", false),
                400 => ("Discord refused the request (400)", false),
                500..=599 => ("Discord failed to answer", true),
                _ => ("Discord answered with an unexpected status", false),
            };
            let status_note = if (500..=599).contains(&status) {
                format!(" ({status} after {MAX_ATTEMPTS} tries)")
            } else {
                String::new()
            };
            fail(&format!("{what}{status_note}{detail}"), retryable)
        }
    }
}

fn fail(message: &str, retryable: bool) -> Decision {
    Decision::Fail(RestError {
        message: message.to_string(),
        retryable,
    })
}

/// 0.5 s, 1 s, 2 s … with jitter, for server errors and network failures.
fn server_backoff_ms(attempt: u32, random: f64) -> i64 {
    let full = 500.0 * 2f64.powi(attempt.min(8) as i32);
    (full * (0.5 + random / 2.0)) as i64
}

/// `GET /gateway/bot`'s answer.
#[derive(Debug, Deserialize)]
pub struct GatewayBot {
    pub url: String,
}

#[cfg(test)]
#[path = "rest_tests.rs"]
mod tests;
