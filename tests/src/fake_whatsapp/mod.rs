//! A fake WhatsApp Business Cloud API on loopback, exact to Meta's public
//! docs (the Graph API's OpenAPI description, v23, and the webhook
//! reference) where the channel touches it:
//!
//! - Graph (`http://127.0.0.1:PORT/v23.0`): `GET /{phone-number-id}`,
//!   `POST /{phone-number-id}/messages` (text sends, checked against the
//!   schema and the 4 096-character limit, answered with `contacts` and
//!   `messages[0].id`; read receipts with `typing_indicator`, answered
//!   `{"success": true}`); Meta's error bodies for a bad or missing token
//!   (401, codes 190/104), an unknown number (100), an invalid parameter
//!   (100) and the closed 24-hour window (131047).
//! - Webhooks: every user message and every status (`sent`, `delivered`,
//!   `read`, `failed`) is POSTed to the channel's webhook as Meta does,
//!   signed with `X-Hub-Signature-256` (HMAC-SHA256 of the body with the
//!   app secret); a delivery can be repeated as Meta redelivers.
//!
//! - Media: files people send are held by id (`GET /{media-id}` answers
//!   a URL, its type, size and sha256; the URL gives the bytes with the
//!   bearer token, 401 without); `POST /{phone-number-id}/media` takes a
//!   `multipart/form-data` upload (`messaging_product`, `type`, `file`)
//!   of a type Meta accepts within its size, answering its media id, which
//!   an image, audio, video or document message then names.
//!
//! The 24-hour customer-service window opens when a user writes and closes
//! when the test says (as if a day had passed). A send to a closed window
//! is refused at once (HTTP 400, 131047) or, like Meta does for some sends,
//! accepted and then reported `failed` with 131047 in a status webhook.
//!
//! ```text
//! let wa = FakeWhatsApp::start();
//! // channel Worker: WHATSAPP_API_BASE = wa.api_base(), its secrets the fake's
//! wa.set_webhook_url(&format!("{channel_url}/webhook"));
//! let msg = wa.user_says(ANN, "Ann", "hello");
//! ```

mod graph;
pub mod payloads;

use crate::poll::{self, ms};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The Meta app's secret: the webhook signature's key.
pub const APP_SECRET: &str = "fake-whatsapp-app-secret";
/// What the webhook's subscription handshake must present.
pub const VERIFY_TOKEN: &str = "fake-whatsapp-verify-token";
/// The access token the Graph API accepts.
pub const ACCESS_TOKEN: &str = "EAAGfakeWhatsAppAccessToken";
/// The business phone number: its id, its number, its name.
pub const PHONE_NUMBER_ID: &str = "106540352242922";
pub const DISPLAY_PHONE_NUMBER: &str = "15550783881";
/// The same as `GET /{phone-number-id}` writes it.
pub const DISPLAY_PHONE_NUMBER_FORMATTED: &str = "+1 555-078-3881";
pub const VERIFIED_NAME: &str = "gsv test number";
/// The WhatsApp Business Account (the webhook's `entry[].id`).
pub const WABA_ID: &str = "102290129340398";
pub const API_VERSION: &str = "v23.0";

/// One Graph API request and the fake's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphRecord {
    pub method: String,
    /// Without the version prefix (`/106540352242922/messages`).
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
    pub status: u16,
    pub response: Value,
    /// When the request arrived (its head, before the body was read).
    pub at: Instant,
}

/// A message the business sent that Meta accepted.
#[derive(Debug, Clone, PartialEq)]
pub struct SentMessage {
    /// Its `wamid.…`.
    pub id: String,
    pub to: String,
    /// The request's body.
    pub body: Value,
}

/// A file Meta holds: one a user sent, or one the business uploaded.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMedia {
    pub id: String,
    pub mime_type: String,
    pub filename: Option<String>,
    pub bytes: std::sync::Arc<Vec<u8>>,
    /// Base64 SHA-256 of the bytes, as Meta gives it.
    pub sha256: String,
    /// Uploaded by the business (not sent by a user).
    pub uploaded: bool,
}

/// One webhook delivery to the channel.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookRecord {
    pub body: Value,
    /// The `X-Hub-Signature-256` header sent.
    pub signature: Option<String>,
    /// What the channel answered (0: not reached).
    pub status: u16,
}

/// A user's message as the fake delivered it.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivered {
    /// The message's `wamid.…`.
    pub id: String,
    /// What the channel's webhook answered.
    pub status: u16,
}

pub(crate) struct State {
    pub webhook_url: Option<String>,
    pub graph_log: Vec<GraphRecord>,
    pub webhook_log: Vec<WebhookRecord>,
    pub sent: Vec<SentMessage>,
    /// wa_id → whether their 24-hour window is open.
    pub windows: HashMap<String, bool>,
    /// Sends to a closed window are accepted, then reported failed.
    pub window_failures_async: bool,
    /// `sent` and `delivered` statuses follow every accepted message.
    pub auto_statuses: bool,
    /// A send's statuses come before its answer.
    pub statuses_before_answer: bool,
    /// Ids of the users' messages (what read receipts may point at).
    pub inbound_ids: HashSet<String>,
    pub next_id: u64,
    /// The last delivery's body and signature, for a redelivery.
    pub last_delivery: Option<(String, String)>,
    /// Files by media id.
    pub media: HashMap<String, StoredMedia>,
    /// `http://127.0.0.1:PORT`, where the media URLs point.
    pub origin: String,
}

pub(crate) type Shared = Arc<Mutex<State>>;

pub struct FakeWhatsApp {
    state: Shared,
    addr: SocketAddr,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for FakeWhatsApp {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl FakeWhatsApp {
    pub fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("fake-whatsapp")
            .enable_all()
            .build()
            .expect("fake WhatsApp runtime");
        let state = Arc::new(Mutex::new(State {
            webhook_url: None,
            graph_log: Vec::new(),
            webhook_log: Vec::new(),
            sent: Vec::new(),
            windows: HashMap::new(),
            window_failures_async: false,
            auto_statuses: true,
            statuses_before_answer: false,
            inbound_ids: HashSet::new(),
            next_id: 1,
            last_delivery: None,
            media: HashMap::new(),
            origin: String::new(),
        }));
        let listener = {
            let _context = runtime.enter();
            crate::fake_discord::loopback_listener()
        };
        let addr = listener.local_addr().unwrap();
        state.lock().unwrap().origin = format!("http://{addr}");
        runtime.spawn(graph::serve(listener, state.clone()));
        Self {
            state,
            addr,
            runtime: Some(runtime),
        }
    }

    /// `http://127.0.0.1:PORT/v23.0`: the channel's `WHATSAPP_API_BASE`.
    pub fn api_base(&self) -> String {
        format!("http://{}/{API_VERSION}", self.addr)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    /// Where the webhooks go (the channel's `…/webhook`).
    pub fn set_webhook_url(&self, url: &str) {
        self.lock().webhook_url = Some(url.to_string());
    }

    /// As if a day passed since `wa_id` last wrote: free-form sends to
    /// them are refused until they write again.
    pub fn close_window(&self, wa_id: &str) {
        self.lock().windows.insert(wa_id.to_string(), false);
    }

    /// Whether a send to a closed window is accepted and then reported
    /// `failed` by webhook (default: refused at once with HTTP 400).
    pub fn set_window_failures_async(&self, on: bool) {
        self.lock().window_failures_async = on;
    }

    /// Whether `sent` and `delivered` follow each accepted message
    /// (default yes, as on a phone that is online).
    pub fn set_auto_statuses(&self, on: bool) {
        self.lock().auto_statuses = on;
    }

    /// Whether a send's statuses are delivered before its answer (Meta
    /// does not order them; default: after).
    pub fn set_statuses_before_answer(&self, on: bool) {
        self.lock().statuses_before_answer = on;
    }

    /// `wa_id` (named `name`) writes `text`: a signed delivery to the channel.
    pub fn user_says(&self, wa_id: &str, name: &str, text: &str) -> Delivered {
        self.user_sends(wa_id, name, payloads::text(text))
    }

    /// `wa_id` sends a message of any type: `content` is the message
    /// object without `from`, `id` and `timestamp` (see `payloads`).
    pub fn user_sends(&self, wa_id: &str, name: &str, content: Value) -> Delivered {
        let id = {
            let mut s = self.lock();
            let id = next_wamid(&mut s, wa_id);
            s.inbound_ids.insert(id.clone());
            s.windows.insert(wa_id.to_string(), true);
            id
        };
        let message = payloads::message(wa_id, &id, content);
        let status = self.deliver(&payloads::messages(wa_id, name, vec![message]));
        Delivered { id, status }
    }

    /// `wa_id` sends a file: Meta holds `bytes` under a new media id and
    /// delivers a `kind` message naming it (audio without a file name is
    /// a voice note). The delivery and the media id.
    #[allow(clippy::too_many_arguments)]
    pub fn user_sends_file(
        &self,
        wa_id: &str,
        name: &str,
        kind: &str,
        mime: &str,
        bytes: Vec<u8>,
        caption: Option<&str>,
        filename: Option<&str>,
    ) -> (Delivered, String) {
        let media = self.hold(mime, filename, bytes, false);
        let content =
            payloads::media_message(kind, &media.id, mime, &media.sha256, caption, filename);
        (self.user_sends(wa_id, name, content), media.id)
    }

    /// Holds a file as Meta would (a user's, or an upload).
    pub(crate) fn hold(
        &self,
        mime: &str,
        filename: Option<&str>,
        bytes: Vec<u8>,
        uploaded: bool,
    ) -> StoredMedia {
        hold(&mut self.lock(), mime, filename, bytes, uploaded)
    }

    /// A file Meta holds, by media id.
    pub fn media(&self, id: &str) -> Option<StoredMedia> {
        self.lock().media.get(id).cloned()
    }

    /// Opens `wa_id`'s 24-hour window without a delivery (as if they had
    /// written a moment ago): for tests of the Graph side alone.
    pub fn user_says_silently(&self, wa_id: &str) {
        self.lock().windows.insert(wa_id.to_string(), true);
    }

    /// The person read `message_id` (a `read` status to the channel).
    pub fn user_reads(&self, message_id: &str) -> u16 {
        let to = self
            .lock()
            .sent
            .iter()
            .find(|m| m.id == message_id)
            .map(|m| m.to.clone())
            .unwrap_or_default();
        self.deliver(&payloads::status(message_id, &to, "read", None))
    }

    /// Delivers `payload`, signed as Meta signs it; the channel's answer.
    pub fn deliver(&self, payload: &Value) -> u16 {
        let body = payload.to_string();
        let signature = format!("sha256={}", sign(APP_SECRET, body.as_bytes()));
        self.lock().last_delivery = Some((body.clone(), signature.clone()));
        deliver_now(&self.state, &body, Some(&signature))
    }

    /// Delivers `body` with `signature` as it is (a forgery, a bad header).
    pub fn deliver_with_signature(&self, body: &str, signature: Option<&str>) -> u16 {
        deliver_now(&self.state, body, signature)
    }

    /// The last delivery again, byte for byte (Meta's retry).
    pub fn redeliver_last(&self) -> u16 {
        let (body, signature) = self
            .lock()
            .last_delivery
            .clone()
            .expect("a delivery to repeat");
        deliver_now(&self.state, &body, Some(&signature))
    }

    /// Meta's subscription check: `GET webhook?hub.mode=…`; status and body.
    pub fn verify_webhook(&self, mode: &str, token: &str, challenge: &str) -> (u16, String) {
        let url = self.lock().webhook_url.clone().expect("the webhook URL");
        let query = format!("hub.mode={mode}&hub.challenge={challenge}&hub.verify_token={token}");
        http_request(&url, "GET", &query, &[], "")
    }

    pub fn sent(&self) -> Vec<SentMessage> {
        self.lock().sent.clone()
    }

    pub fn graph_log(&self) -> Vec<GraphRecord> {
        self.lock().graph_log.clone()
    }

    pub fn webhook_log(&self) -> Vec<WebhookRecord> {
        self.lock().webhook_log.clone()
    }

    /// Polls `check` every 50 ms until it gives a value or `within` passes.
    pub fn wait_for<T>(
        &self,
        within: Duration,
        mut check: impl FnMut(&Self) -> Option<T>,
    ) -> Option<T> {
        poll::try_until_blocking(within, ms(50), || check(self).ok_or(())).ok()
    }
}

pub(crate) fn hold(
    s: &mut State,
    mime: &str,
    filename: Option<&str>,
    bytes: Vec<u8>,
    uploaded: bool,
) -> StoredMedia {
    use base64::Engine;
    use sha2::Digest;
    s.next_id += 1;
    let media = StoredMedia {
        id: format!("{}", 1_037_543_291_000_000u64 + s.next_id),
        mime_type: mime.to_string(),
        filename: filename.map(str::to_string),
        sha256: base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(&bytes)),
        bytes: std::sync::Arc::new(bytes),
        uploaded,
    };
    s.media.insert(media.id.clone(), media.clone());
    media
}

/// A fresh `wamid.…` (base64 in Meta's; any id of that alphabet will do).
pub(crate) fn next_wamid(s: &mut State, wa_id: &str) -> String {
    s.next_id += 1;
    format!("wamid.HBgL{wa_id}FQIAERgS{:016X}AA==", s.next_id)
}

/// Lowercase hex HMAC-SHA256, as in `X-Hub-Signature-256`.
pub fn sign(secret: &str, body: &[u8]) -> String {
    use hmac::{Hmac, Mac};
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// POSTs a delivery to the webhook (blocking) and logs it.
pub(crate) fn deliver_now(state: &Shared, body: &str, signature: Option<&str>) -> u16 {
    let url = state
        .lock()
        .unwrap()
        .webhook_url
        .clone()
        .expect("set_webhook_url first");
    let mut headers = vec![
        ("content-type", "application/json"),
        ("user-agent", "facebookexternalua"),
    ];
    if let Some(sig) = signature {
        headers.push(("x-hub-signature-256", sig));
    }
    let (status, _) = http_request(&url, "POST", "", &headers, body);
    state.lock().unwrap().webhook_log.push(WebhookRecord {
        body: serde_json::from_str(body).unwrap_or(Value::String(body.into())),
        signature: signature.map(str::to_string),
        status,
    });
    status
}

/// A plain HTTP/1.1 request to `url` (`http://host:port/path`); status
/// and body (status 0 when the host was not reached). The answer is read
/// by its length, not to the connection's end: a Worker's connection can
/// stay open while its `waitUntil` work goes on.
fn http_request(
    url: &str,
    method: &str,
    query: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    use std::io::{BufRead, BufReader, Read, Write};
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (host, path) = rest
        .split_once('/')
        .map_or((rest, "/".to_string()), |(h, p)| (h, format!("/{p}")));
    let target = match query.is_empty() {
        true => path,
        false => format!("{path}?{query}"),
    };
    let Ok(mut s) = std::net::TcpStream::connect(host) else {
        return (0, String::new());
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    let mut head = format!(
        "{method} {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    if s.write_all(head.as_bytes())
        .and_then(|_| s.write_all(body.as_bytes()))
        .is_err()
    {
        return (0, String::new());
    }
    let mut reader = BufReader::new(s);
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return (0, String::new());
    }
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let (mut length, mut chunked) = (None, false);
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse::<usize>().ok();
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let mut out = Vec::new();
    if chunked {
        loop {
            line.clear();
            let _ = reader.read_line(&mut line);
            let n = usize::from_str_radix(line.trim(), 16).unwrap_or(0);
            if n == 0 {
                break;
            }
            let mut chunk = vec![0; n + 2];
            if reader.read_exact(&mut chunk).is_err() {
                break;
            }
            out.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = length {
        out.resize(n, 0);
        let _ = reader.read_exact(&mut out);
    } else {
        let _ = reader.read_to_end(&mut out);
    }
    (status, String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests;
