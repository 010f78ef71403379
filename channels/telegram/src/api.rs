//! The Bot API calls the channel makes and what each answer means. Every
//! method is `POST {TELEGRAM_API_BASE}/bot{token}/{method}` with a JSON
//! body (a file upload: `multipart/form-data`, `outbound`), answered
//! `{"ok": true, "result": …}` or `{"ok": false, "error_code": N,
//! "description": "…", "parameters": {"retry_after": S}}`. The Worker's
//! `bot_client` only performs them.

use gsv_protocol::channels::{ChannelCapabilities, PeerKind};
use serde::Deserialize;
use serde_json::{json, Value};

/// The updates an account asks for (webhook and polling alike).
pub const ALLOWED_UPDATES: [&str; 3] = ["message", "edited_message", "callback_query"];

/// A text message's limit (characters after entities are parsed).
pub const MAX_TEXT_CHARS: usize = 4_096;

pub fn capabilities() -> ChannelCapabilities {
    ChannelCapabilities {
        chat_types: vec![PeerKind::Dm, PeerKind::Group],
        media: true,
        reactions: false,
        threads: true,
        typing: true,
        editing: false,
        deletion: false,
        qr_login: false,
        max_text_length: MAX_TEXT_CHARS,
    }
}

/// One Bot API call with a JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiCall {
    pub method: &'static str,
    pub body: Value,
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// Telegram's `description` (or what happened, in plain words).
    pub message: String,
    /// Telegram's `error_code`, else the HTTP status; `None`: not reached.
    pub code: Option<u16>,
    /// Trying the same call later may work.
    pub retryable: bool,
    /// When, at the soonest (Telegram's `retry_after`).
    pub retry_after_ms: Option<i64>,
}

impl ApiError {
    /// Telegram was not reached (or its answer was lost): worth another try.
    pub fn unreached(message: String) -> Self {
        Self {
            message,
            code: None,
            retryable: true,
            retry_after_ms: None,
        }
    }

    /// Telegram refused the bot token (revoked at @BotFather, or wrong).
    pub fn token_refused(&self) -> bool {
        matches!(self.code, Some(401 | 404))
    }

    /// The HTML of a text could not be read: the same text may go plain.
    pub fn entities_refused(&self) -> bool {
        self.code == Some(400)
            && self
                .message
                .starts_with("Bad Request: can't parse entities")
    }
}

/// The answer's `result` as `T` when Telegram says `ok`, else the failure.
pub fn answer<T: for<'de> Deserialize<'de>>(status: u16, body: &str) -> Result<T, ApiError> {
    #[derive(Deserialize)]
    struct Envelope {
        ok: bool,
        #[serde(default)]
        result: Option<Value>,
        #[serde(default)]
        error_code: Option<u16>,
        #[serde(default)]
        description: Option<String>,
        #[serde(default)]
        parameters: Option<Parameters>,
    }
    #[derive(Deserialize)]
    struct Parameters {
        #[serde(default)]
        retry_after: Option<i64>,
    }
    let Ok(envelope) = serde_json::from_str::<Envelope>(body) else {
        return Err(failure(status, None, None, body));
    };
    if envelope.ok && (200..300).contains(&status) {
        let result = envelope.result.unwrap_or(Value::Null);
        return serde_json::from_value(result).map_err(|e| ApiError {
            message: format!("Telegram's answer was not understood: {e}"),
            code: Some(status),
            retryable: false,
            retry_after_ms: None,
        });
    }
    let code = envelope.error_code.filter(|c| *c >= 400).unwrap_or(status);
    let retry_after = envelope.parameters.and_then(|p| p.retry_after);
    Err(failure(code, envelope.description, retry_after, body))
}

fn failure(
    code: u16,
    description: Option<String>,
    retry_after: Option<i64>,
    body: &str,
) -> ApiError {
    let message = description
        .filter(|d| !d.trim().is_empty())
        .unwrap_or_else(|| match code {
            401 => "Unauthorized: Telegram refused the bot token".to_string(),
            429 => "Too Many Requests".to_string(),
            _ => format!(
                "Telegram answered {code}: {}",
                body.chars().take(200).collect::<String>()
            ),
        });
    ApiError {
        message,
        code: Some(code),
        retryable: code == 429 || code >= 500 || code == 408,
        retry_after_ms: retry_after.filter(|s| *s >= 0).map(|s| s * 1000),
    }
}

/// A chat id as Telegram takes it: the number, or `@username` text.
pub fn chat_id(id: &str) -> Value {
    match id.trim().parse::<i64>() {
        Ok(n) => json!(n),
        Err(_) => json!(id.trim()),
    }
}

// ---- the bot and its updates ----

/// `getMe`: who the token belongs to (and a check of the token).
pub fn get_me() -> ApiCall {
    ApiCall {
        method: "getMe",
        body: json!({}),
    }
}

/// The bot, as `getMe` describes it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Me {
    pub id: i64,
    #[serde(default)]
    pub first_name: String,
    #[serde(default)]
    pub username: Option<String>,
    /// False while privacy mode is on: in groups the bot sees only
    /// commands, replies to it and mentions of it.
    #[serde(default)]
    pub can_read_all_group_messages: Option<bool>,
}

pub fn set_webhook(url: &str, secret_token: &str) -> ApiCall {
    ApiCall {
        method: "setWebhook",
        body: json!({
            "url": url,
            "secret_token": secret_token,
            "allowed_updates": ALLOWED_UPDATES,
        }),
    }
}

pub fn delete_webhook() -> ApiCall {
    ApiCall {
        method: "deleteWebhook",
        body: json!({}),
    }
}

/// `getUpdates` from `offset` (the last update's id + 1; none before the
/// first), waiting up to `timeout_s` for one.
pub fn get_updates(offset: Option<i64>, timeout_s: u32) -> ApiCall {
    let mut body = json!({"timeout": timeout_s, "allowed_updates": ALLOWED_UPDATES});
    if let Some(offset) = offset {
        body["offset"] = json!(offset);
    }
    ApiCall {
        method: "getUpdates",
        body,
    }
}

pub fn answer_callback_query(id: &str) -> ApiCall {
    ApiCall {
        method: "answerCallbackQuery",
        body: json!({"callback_query_id": id}),
    }
}

/// `sendChatAction typing` in a chat (and its forum topic).
pub fn typing(chat: &str, thread: Option<i64>) -> ApiCall {
    let mut body = json!({"chat_id": chat_id(chat), "action": "typing"});
    if let Some(thread) = thread {
        body["message_thread_id"] = json!(thread);
    }
    ApiCall {
        method: "sendChatAction",
        body,
    }
}

// ---- files ----

/// Telegram lets bots download files of at most 20 MB.
pub const MAX_DOWNLOAD_BYTES: u64 = 20 * 1024 * 1024;

pub fn get_file(file_id: &str) -> ApiCall {
    ApiCall {
        method: "getFile",
        body: json!({"file_id": file_id}),
    }
}

/// What `getFile` says of a file: where to download it from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct File {
    #[serde(default)]
    pub file_size: Option<u64>,
    #[serde(default)]
    pub file_path: Option<String>,
}

/// Why a file someone sent cannot be handed over, in plain words, when
/// it is over Telegram's download limit for bots.
pub fn too_big_to_download(size: Option<u64>) -> Option<String> {
    let size = size.filter(|s| *s > MAX_DOWNLOAD_BYTES)?;
    Some(format!(
        "the file is {:.1} MB, and Telegram lets bots download files of at most 20 MB \
         (send it as a link, or smaller)",
        size as f64 / (1024.0 * 1024.0)
    ))
}

/// A `getFile` refused because the file is over the limit (Telegram says
/// "Bad Request: file is too big"), in the same words.
pub fn explain_get_file(e: ApiError) -> ApiError {
    match e.message.contains("file is too big") {
        true => ApiError {
            message: "Telegram lets bots download files of at most 20 MB, and this one is larger"
                .into(),
            ..e
        },
        false => e,
    }
}

#[cfg(test)]
#[path = "api_tests.rs"]
mod tests;
