//! The Graph API calls the channel makes (relative to `WHATSAPP_API_BASE`,
//! which carries the version) and what each answer means: the sent
//! message's id, or a failure in plain words that says whether trying
//! again may help. The Worker's `graph_client` only performs them.

use gsv_channel_worker::multipart::Form;
use gsv_protocol::channels::{ChannelCapabilities, PeerKind};
use serde::Deserialize;
use serde_json::{json, Value};

/// The Cloud API's limit on a text message's body.
pub const MAX_TEXT_CHARS: usize = 4_096;

pub fn capabilities() -> ChannelCapabilities {
    ChannelCapabilities {
        chat_types: vec![PeerKind::Dm],
        media: true,
        reactions: false,
        threads: false,
        typing: true,
        editing: false,
        deletion: false,
        qr_login: false,
        max_text_length: MAX_TEXT_CHARS,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

/// One Graph call, relative to the API base.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphRequest {
    pub method: Method,
    pub path: String,
    pub body: Option<Value>,
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphError {
    pub message: String,
    /// Trying the same call later may work.
    pub retryable: bool,
    /// Meta refused the access token (the account needs a new one).
    pub token_refused: bool,
}

/// Meta's error object (`{"error": {…}}` of an answer, `errors[]` of a
/// webhook's failed status).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ErrorObject {
    #[serde(default)]
    pub code: Option<i64>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub error_data: Option<ErrorData>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ErrorData {
    #[serde(default)]
    pub details: Option<String>,
}

/// `POST /{phone-number-id}/messages`: a text, as a reply to `reply_to`
/// when given. Longer than the Cloud API takes is refused here (the
/// gateway splits at the channel's `maxTextLength`).
/// Marks a send with the gateway's key for the piece: Meta echoes
/// `biz_opaque_callback_data` in the message's status webhooks, so a send
/// whose answer was lost is still known to have been taken.
pub fn with_tracking(mut request: GraphRequest, key: &str) -> GraphRequest {
    if let Some(body) = request.body.as_mut() {
        body["biz_opaque_callback_data"] = json!(key);
    }
    request
}

pub fn send_text(
    phone_number_id: &str,
    to: &str,
    text: &str,
    reply_to: Option<&str>,
) -> Result<GraphRequest, GraphError> {
    let refuse = |message: String| GraphError {
        message,
        retryable: false,
        token_refused: false,
    };
    let chars = text.chars().count();
    if text.trim().is_empty() {
        return Err(refuse(
            "the message is empty: WhatsApp refuses empty texts".into(),
        ));
    }
    if chars > MAX_TEXT_CHARS {
        return Err(refuse(format!(
            "the message has {chars} characters; WhatsApp takes at most {MAX_TEXT_CHARS} per message (the gateway splits longer text)"
        )));
    }
    if to.is_empty() {
        return Err(refuse("no recipient: the peer id is empty".into()));
    }
    let mut body = json!({
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": "text",
        "text": {"body": text, "preview_url": false},
    });
    if let Some(id) = reply_to.filter(|id| !id.is_empty()) {
        body["context"] = json!({"message_id": id});
    }
    Ok(GraphRequest {
        method: Method::Post,
        path: format!("/{phone_number_id}/messages"),
        body: Some(body),
    })
}

// ---- media ----

const MB: u64 = 1024 * 1024;

/// `GET /{media-id}`: the file's short-lived URL, type and size. The URL
/// is fetched with the same bearer token ([`media_info`]'s `url`).
pub fn media_info(media_id: &str) -> GraphRequest {
    GraphRequest {
        method: Method::Get,
        path: format!("/{media_id}"),
        body: None,
    }
}

/// What `GET /{media-id}` says of a file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct MediaInfo {
    pub url: String,
    #[serde(default)]
    pub mime_type: Option<String>,
    /// A string in Meta's OpenAPI description, a number in its examples.
    #[serde(default, deserialize_with = "number_or_string")]
    pub file_size: Option<u64>,
    #[serde(default)]
    pub sha256: Option<String>,
}

fn number_or_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    })
}

pub fn parse_media_info(status: u16, body: &str) -> Result<MediaInfo, GraphError> {
    answer(status, body)
}

/// How a file goes out: WhatsApp's message type for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendKind {
    Image,
    Audio,
    Video,
    Document,
}

impl SendKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Image => "image",
            Self::Audio => "audio",
            Self::Video => "video",
            Self::Document => "document",
        }
    }
}

/// The largest file the Cloud API takes at all (as a document).
pub const MAX_DOCUMENT_BYTES: u64 = 100 * MB;

/// The message type a file of `mime` and `size` bytes is sent as: an
/// image, audio or video when WhatsApp plays that format at that size
/// (JPEG/PNG ≤ 5 MB; AAC, AMR, MP3, M4A, Ogg ≤ 16 MB; MP4, 3GP ≤ 16 MB),
/// else a document (≤ 100 MB); beyond that, why not.
pub fn send_kind(mime: &str, size: u64) -> Result<SendKind, String> {
    let mime = mime
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let kind = match mime.as_str() {
        "image/jpeg" | "image/png" if size <= 5 * MB => SendKind::Image,
        "audio/aac" | "audio/amr" | "audio/mpeg" | "audio/mp4" | "audio/ogg" if size <= 16 * MB => {
            SendKind::Audio
        }
        "video/mp4" | "video/3gpp" if size <= 16 * MB => SendKind::Video,
        _ => SendKind::Document,
    };
    if size > MAX_DOCUMENT_BYTES {
        return Err(format!(
            "the file is {} MB; WhatsApp takes files up to 100 MB",
            size / MB
        ));
    }
    Ok(kind)
}

/// The type a file is uploaded as: one the Cloud API takes (images
/// JPEG/PNG, audio AAC/AMR/MP3/M4A/Ogg, video MP4/3GP, PDF, Office
/// documents, plain text); text of another type (Markdown, CSV, JSON,
/// code) goes as plain text; anything else cannot be sent.
pub fn upload_type(mime: &str) -> Result<String, String> {
    let mime = mime
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    const TAKEN: &[&str] = &[
        "image/jpeg",
        "image/png",
        "audio/aac",
        "audio/amr",
        "audio/mpeg",
        "audio/mp4",
        "audio/ogg",
        "video/mp4",
        "video/3gpp",
        "text/plain",
        "application/pdf",
        "application/msword",
        "application/vnd.ms-excel",
        "application/vnd.ms-powerpoint",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ];
    if TAKEN.contains(&mime.as_str()) {
        return Ok(mime);
    }
    let text = mime.starts_with("text/")
        || matches!(
            mime.as_str(),
            "application/json" | "application/xml" | "application/yaml" | "application/x-yaml"
        )
        || mime.ends_with("+json")
        || mime.ends_with("+xml");
    match text {
        true => Ok("text/plain".into()),
        false => Err(format!(
            "WhatsApp does not take {mime} files (it takes JPEG and PNG images, audio, MP4 \
             video, PDF, Office documents and text)"
        )),
    }
}

/// `POST /{phone-number-id}/media`: the upload's path, `Content-Type` and
/// `multipart/form-data` body (`messaging_product`, `type`, `file`).
pub fn upload_media(
    phone_number_id: &str,
    boundary: &str,
    mime: &str,
    filename: &str,
    bytes: &[u8],
) -> (String, String, Vec<u8>) {
    let mut form = Form::new(boundary);
    form.field("messaging_product", "whatsapp")
        .field("type", mime)
        .file("file", filename, mime, bytes);
    let (content_type, body) = form.finish();
    (format!("/{phone_number_id}/media"), content_type, body)
}

/// The uploaded file's media id from the upload's answer (`{"id": …}`).
pub fn uploaded_media_id(status: u16, body: &str) -> Result<String, GraphError> {
    #[derive(Deserialize)]
    struct Uploaded {
        id: String,
    }
    answer::<Uploaded>(status, body).map(|u| u.id)
}

/// `POST /{phone-number-id}/messages` of an uploaded file (`media_id`):
/// a document keeps its file name; audio takes no caption.
pub fn send_media(
    phone_number_id: &str,
    to: &str,
    kind: SendKind,
    media_id: &str,
    filename: &str,
    caption: Option<&str>,
    reply_to: Option<&str>,
) -> GraphRequest {
    let mut object = json!({ "id": media_id });
    if kind == SendKind::Document {
        object["filename"] = json!(filename);
    }
    if let Some(c) = caption.filter(|c| !c.trim().is_empty() && kind != SendKind::Audio) {
        object["caption"] = json!(c);
    }
    let mut body = json!({
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": kind.name(),
    });
    body[kind.name()] = object;
    if let Some(id) = reply_to.filter(|id| !id.is_empty()) {
        body["context"] = json!({"message_id": id});
    }
    GraphRequest {
        method: Method::Post,
        path: format!("/{phone_number_id}/messages"),
        body: Some(body),
    }
}

/// Marks `message_id` read (blue ticks) and shows the typing indicator
/// in its chat, until the answer arrives or 25 s pass.
pub fn mark_read_with_typing(phone_number_id: &str, message_id: &str) -> GraphRequest {
    GraphRequest {
        method: Method::Post,
        path: format!("/{phone_number_id}/messages"),
        body: Some(json!({
            "messaging_product": "whatsapp",
            "status": "read",
            "message_id": message_id,
            "typing_indicator": {"type": "text"},
        })),
    }
}

/// `GET /{phone-number-id}`: the number as Meta knows it (and a check of
/// the token).
pub fn phone_number(phone_number_id: &str) -> GraphRequest {
    GraphRequest {
        method: Method::Get,
        path: format!("/{phone_number_id}"),
        body: None,
    }
}

/// What `GET /{phone-number-id}` says.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PhoneInfo {
    #[serde(default)]
    pub display_phone_number: Option<String>,
    #[serde(default)]
    pub verified_name: Option<String>,
}

/// The sent message's id (`messages[0].id`) from a send's answer.
pub fn sent_message_id(status: u16, body: &str) -> Result<String, GraphError> {
    #[derive(Deserialize)]
    struct Sent {
        messages: Vec<SentId>,
    }
    #[derive(Deserialize)]
    struct SentId {
        id: String,
    }
    answer::<Sent>(status, body)?
        .messages
        .into_iter()
        .next()
        .map(|m| m.id)
        .ok_or_else(|| unexpected(status, body))
}

/// A `{"success": true}` answer (read receipts, typing).
pub fn succeeded(status: u16, body: &str) -> Result<(), GraphError> {
    #[derive(Deserialize)]
    struct Success {
        success: bool,
    }
    match answer::<Success>(status, body)?.success {
        true => Ok(()),
        false => Err(unexpected(status, body)),
    }
}

pub fn phone_info(status: u16, body: &str) -> Result<PhoneInfo, GraphError> {
    answer(status, body)
}

/// The answer's body as `T` when it is a success, else the failure.
fn answer<T: for<'de> Deserialize<'de>>(status: u16, body: &str) -> Result<T, GraphError> {
    if !(200..300).contains(&status) {
        return Err(failure(status, body));
    }
    serde_json::from_str(body).map_err(|_| unexpected(status, body))
}

fn unexpected(status: u16, body: &str) -> GraphError {
    GraphError {
        message: format!(
            "WhatsApp answered {status} with something unexpected: {}",
            body.chars().take(200).collect::<String>()
        ),
        retryable: false,
        token_refused: false,
    }
}

/// A failed answer (`status` not 2xx), from Meta's error body when it has one.
pub fn failure(status: u16, body: &str) -> GraphError {
    #[derive(Deserialize)]
    struct Envelope {
        error: ErrorObject,
    }
    match serde_json::from_str::<Envelope>(body) {
        Ok(e) => {
            let (message, retryable) = explain(&e.error);
            GraphError {
                message,
                retryable: retryable || status >= 500,
                token_refused: status == 401 || matches!(e.error.code, Some(190 | 104)),
            }
        }
        Err(_) => GraphError {
            message: match status {
                401 => "WhatsApp refused the access token (401)".to_string(),
                429 => "WhatsApp rate-limited the number (429)".to_string(),
                _ => format!(
                    "WhatsApp answered {status}: {}",
                    body.chars().take(200).collect::<String>()
                ),
            },
            retryable: status == 429 || status >= 500,
            token_refused: status == 401,
        },
    }
}

/// An error in plain words, and whether the same call may pass later.
/// Meta's own code, title and details follow in brackets, for searching
/// its error-code reference.
pub fn explain(e: &ErrorObject) -> (String, bool) {
    let (summary, retryable) = match e.code {
        Some(131047) => (
            "the 24-hour customer-service window is closed: the person has not written in the \
             last 24 hours, and WhatsApp delivers free-form messages only inside that window \
             (they must write again first)",
            false,
        ),
        Some(190) => (
            "WhatsApp refused the access token: give the account a new one",
            false,
        ),
        Some(104) => ("no access token reached WhatsApp", false),
        Some(3 | 10 | 200..=299) => (
            "the access token may not send for this number (it needs the \
             whatsapp_business_messaging permission)",
            false,
        ),
        Some(131030) => (
            "the recipient is not on the test number's list: add them in the Meta app \
             (WhatsApp → API Setup → To)",
            false,
        ),
        Some(131026) => (
            "WhatsApp could not deliver to this number (not on WhatsApp, or their app is too old)",
            false,
        ),
        Some(4 | 80007 | 130429 | 131048 | 131056) => ("WhatsApp rate-limited the number", true),
        Some(1 | 2 | 131000 | 131016 | 133004) => ("WhatsApp is not available at the moment", true),
        Some(100) => ("WhatsApp refused the request as invalid", false),
        _ => ("WhatsApp refused the message", false),
    };
    let title = e
        .title
        .as_deref()
        .or(e.message.as_deref())
        .map(strip_code_prefix)
        .unwrap_or_default();
    let details = e
        .error_data
        .as_ref()
        .and_then(|d| d.details.as_deref())
        .filter(|d| !d.is_empty() && *d != title);
    let mut inner: Vec<String> = e.code.map(|c| c.to_string()).into_iter().collect();
    if !title.is_empty() {
        inner.push(title.to_string());
    }
    let mut inner = inner.join(" ");
    if let Some(d) = details {
        inner.push_str(&format!(": {d}"));
    }
    match inner.is_empty() {
        true => (summary.to_string(), retryable),
        false => (format!("{summary} [{inner}]"), retryable),
    }
}

/// Graph messages start with their code (`(#131047) Re-engagement
/// message`), which the explanation already gives.
fn strip_code_prefix(message: &str) -> &str {
    match message.strip_prefix("(#").and_then(|m| m.split_once(") ")) {
        Some((code, rest)) if code.bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => message,
    }
}

#[cfg(test)]
#[path = "graph_tests.rs"]
mod tests;
