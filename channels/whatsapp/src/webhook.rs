//! Meta's webhook: the subscription handshake (`GET`), the signature on
//! every delivery (`POST`, `X-Hub-Signature-256`), and the payload, read
//! into one batch of messages and receipts per business phone number.

use crate::graph::{explain, ErrorObject};
use crate::inbound::{normalize, seconds_to_ms, Contact, Normalized};
use gsv_protocol::channel_key::secrets_match;
use gsv_protocol::channels::{ChannelInboundMessage, DeliveryState};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;

/// The header with `sha256=` and the hex HMAC-SHA256 of the raw body,
/// keyed with the Meta app's secret.
pub const SIGNATURE_HEADER: &str = "x-hub-signature-256";

/// The challenge to echo when the query (`hub.mode=subscribe`,
/// `hub.verify_token`, `hub.challenge`) carries the verify token; `None`
/// otherwise (answer 403). An unset token verifies nothing.
pub fn subscription<'a>(
    query: impl IntoIterator<Item = (&'a str, &'a str)>,
    verify_token: &str,
) -> Option<String> {
    let (mut mode, mut token, mut challenge) = (None, None, None);
    for (key, value) in query {
        match key {
            "hub.mode" => mode = Some(value),
            "hub.verify_token" => token = Some(value),
            "hub.challenge" => challenge = Some(value),
            _ => {}
        }
    }
    let token_ok = secrets_match(verify_token, token.unwrap_or_default());
    (mode == Some("subscribe") && token_ok)
        .then(|| challenge.map(str::to_string))
        .flatten()
}

/// Whether `header` is `sha256=` and the HMAC-SHA256 of `body` under
/// `app_secret`, compared in constant time. An unset secret matches nothing.
pub fn signature_ok(app_secret: &str, body: &[u8], header: Option<&str>) -> bool {
    let Some(given) = header.and_then(|h| h.trim().strip_prefix("sha256=")) else {
        return false;
    };
    let expected = sign_hex(app_secret, body);
    !app_secret.is_empty() && secrets_match(&expected, &given.to_ascii_lowercase())
}

/// Lowercase hex HMAC-SHA256 of `body` keyed with `secret`.
pub fn sign_hex(secret: &str, body: &[u8]) -> String {
    // HMAC takes keys of any length: this cannot fail.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) else {
        return String::new();
    };
    mac.update(body);
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What Meta said of a message the account sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// The sent message's id (`wamid.…`).
    pub message_id: String,
    pub state: DeliveryState,
    /// Milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// Why it failed, in plain words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The `biz_opaque_callback_data` the send carried: the gateway's key
    /// for the piece.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracking: Option<String>,
}

/// Everything one delivery brought for one business phone number.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Batch {
    pub phone_number_id: String,
    #[serde(default)]
    pub messages: Vec<ChannelInboundMessage>,
    #[serde(default)]
    pub receipts: Vec<Receipt>,
    /// What was left out and why (logged, never run).
    #[serde(default)]
    pub skipped: Vec<String>,
}

#[derive(Deserialize)]
struct Payload {
    object: String,
    #[serde(default)]
    entry: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    changes: Vec<Change>,
}

#[derive(Deserialize)]
struct Change {
    #[serde(default)]
    field: String,
    #[serde(default)]
    value: Value,
}

#[derive(Deserialize, Default)]
struct ChangeValue {
    metadata: Option<Metadata>,
    #[serde(default)]
    contacts: Vec<Contact>,
    #[serde(default)]
    messages: Vec<Value>,
    #[serde(default)]
    statuses: Vec<Value>,
    #[serde(default)]
    errors: Vec<ErrorObject>,
}

#[derive(Deserialize)]
struct Metadata {
    phone_number_id: String,
}

#[derive(Deserialize)]
struct Status {
    id: String,
    status: String,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(default)]
    errors: Vec<ErrorObject>,
    /// What the send carried in `biz_opaque_callback_data`, echoed.
    #[serde(default)]
    biz_opaque_callback_data: Option<String>,
}

/// One webhook delivery, read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Delivery {
    /// One per business phone number, in the order they came.
    pub batches: Vec<Batch>,
    /// Changes that belong to no number, and why they were left out.
    pub skipped: Vec<String>,
}

/// A `whatsapp_business_account` delivery. Anything else is an error; a
/// part that cannot be read is skipped with its reason, so one odd
/// message never costs the others.
pub fn parse(body: &[u8]) -> Result<Delivery, String> {
    let payload: Payload =
        serde_json::from_slice(body).map_err(|e| format!("not a webhook payload: {e}"))?;
    if payload.object != "whatsapp_business_account" {
        return Err(format!(
            "object {:?} is not whatsapp_business_account",
            payload.object
        ));
    }
    let mut batches: Vec<Batch> = Vec::new();
    let mut skipped = Vec::new();
    for change in payload.entry.into_iter().flat_map(|e| e.changes) {
        if change.field != "messages" {
            skipped.push(format!("a {:?} change (not handled)", change.field));
            continue;
        }
        let mut value: ChangeValue = match serde_json::from_value(change.value) {
            Ok(v) => v,
            Err(e) => {
                skipped.push(format!("a messages change that could not be read: {e}"));
                continue;
            }
        };
        let Some(metadata) = value.metadata.take() else {
            skipped.push("a messages change without metadata.phone_number_id".into());
            continue;
        };
        let at = match batches
            .iter()
            .position(|b| b.phone_number_id == metadata.phone_number_id)
        {
            Some(i) => i,
            None => {
                batches.push(Batch {
                    phone_number_id: metadata.phone_number_id,
                    ..Batch::default()
                });
                batches.len() - 1
            }
        };
        read_value(&mut batches[at], value);
    }
    Ok(Delivery { batches, skipped })
}

fn read_value(batch: &mut Batch, value: ChangeValue) {
    for error in &value.errors {
        batch
            .skipped
            .push(format!("an error from WhatsApp: {}", explain(error).0));
    }
    for raw in value.messages {
        match normalize(&raw, &value.contacts) {
            Normalized::Message(m) => batch.messages.push(*m),
            Normalized::Skip(why) => batch.skipped.push(why),
        }
    }
    for raw in value.statuses {
        match serde_json::from_value::<Status>(raw) {
            Ok(s) => match receipt(s) {
                Ok(r) => batch.receipts.push(r),
                Err(why) => batch.skipped.push(why),
            },
            Err(e) => batch
                .skipped
                .push(format!("a status that could not be read: {e}")),
        }
    }
}

fn receipt(s: Status) -> Result<Receipt, String> {
    let state = match s.status.as_str() {
        "sent" => DeliveryState::Sent,
        "delivered" => DeliveryState::Delivered,
        "read" => DeliveryState::Read,
        "failed" => DeliveryState::Failed,
        other => return Err(format!("status {other:?} of {} (not handled)", s.id)),
    };
    let error = (state == DeliveryState::Failed).then(|| {
        let reasons: Vec<String> = s.errors.iter().map(|e| explain(e).0).collect();
        match reasons.is_empty() {
            true => "WhatsApp could not deliver the message (no reason given)".to_string(),
            false => reasons.join("; "),
        }
    });
    Ok(Receipt {
        message_id: s.id,
        state,
        timestamp: s.timestamp.as_deref().and_then(seconds_to_ms),
        error,
        tracking: s.biz_opaque_callback_data.filter(|t| !t.is_empty()),
    })
}

#[cfg(test)]
#[path = "webhook_tests.rs"]
mod tests;
