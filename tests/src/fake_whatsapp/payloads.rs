//! Webhook payloads as Meta sends them (the `messages` webhook
//! reference): user messages of each type, and statuses of the business's
//! messages. Timestamps are now, in seconds, as strings.

use super::{DISPLAY_PHONE_NUMBER, PHONE_NUMBER_ID, WABA_ID};
use serde_json::{json, Value};

fn now_secs() -> String {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
        .to_string()
}

/// One `messages` change for the fake's number.
fn change(value: Value) -> Value {
    let mut v = json!({
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": DISPLAY_PHONE_NUMBER, "phone_number_id": PHONE_NUMBER_ID},
    });
    for (k, x) in value.as_object().cloned().unwrap_or_default() {
        v[k] = x;
    }
    json!({
        "object": "whatsapp_business_account",
        "entry": [{"id": WABA_ID, "changes": [{"value": v, "field": "messages"}]}]
    })
}

/// A delivery of `messages` from `wa_id`, whose profile name is `name`.
pub fn messages(wa_id: &str, name: &str, messages: Vec<Value>) -> Value {
    change(json!({
        "contacts": [{"profile": {"name": name}, "wa_id": wa_id}],
        "messages": messages,
    }))
}

/// A message object: `content` (`text(…)`, `image(…)`, …) with its sender, id and time.
pub fn message(wa_id: &str, id: &str, content: Value) -> Value {
    let mut m = json!({"from": wa_id, "id": id, "timestamp": now_secs()});
    for (k, x) in content.as_object().cloned().unwrap_or_default() {
        m[k] = x;
    }
    m
}

pub fn text(body: &str) -> Value {
    json!({"type": "text", "text": {"body": body}})
}

/// A text in reply to `message_id` (a message of the business's, from its number).
pub fn reply(body: &str, message_id: &str) -> Value {
    json!({"type": "text", "text": {"body": body},
           "context": {"from": DISPLAY_PHONE_NUMBER, "id": message_id}})
}

pub fn image(media_id: &str, caption: &str) -> Value {
    json!({"type": "image", "image": {"caption": caption, "mime_type": "image/jpeg",
           "sha256": "SfInY0gGKTsJlUWbwxC1k+FAD0FZHvzwfpvO0zX0GUI=", "id": media_id}})
}

pub fn voice_note(media_id: &str) -> Value {
    json!({"type": "audio", "audio": {"mime_type": "audio/ogg; codecs=opus",
           "sha256": "VqHX7vC4bCUJLZ2cW0dMHDJVCKmRwQ3D1cR3/2D3c1s=", "id": media_id, "voice": true}})
}

/// A media message (`kind`: image, audio, video, document, sticker) of
/// the file Meta holds as `media_id`; a voice note is audio with `voice`.
pub fn media_message(
    kind: &str,
    media_id: &str,
    mime: &str,
    sha256: &str,
    caption: Option<&str>,
    filename: Option<&str>,
) -> Value {
    let mut object = json!({"mime_type": mime, "sha256": sha256, "id": media_id});
    if let Some(c) = caption {
        object["caption"] = json!(c);
    }
    if let Some(f) = filename {
        object["filename"] = json!(f);
    }
    if kind == "audio" {
        object["voice"] = json!(filename.is_none());
    }
    json!({"type": kind, kind: object})
}

pub fn location(latitude: f64, longitude: f64, name: &str, address: &str) -> Value {
    json!({"type": "location", "location": {"latitude": latitude, "longitude": longitude,
           "name": name, "address": address}})
}

/// A status of the business's message `id` to `recipient`; `failed`
/// carries `error` (code, title, details).
pub fn status(id: &str, recipient: &str, status: &str, error: Option<(i64, &str, &str)>) -> Value {
    let mut s =
        json!({"id": id, "status": status, "timestamp": now_secs(), "recipient_id": recipient});
    match (status, error) {
        ("failed", Some((code, title, details))) => {
            s["errors"] = json!([{"code": code, "title": title, "message": title,
                "error_data": {"details": details},
                "href": "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/"}]);
        }
        ("sent" | "delivered", _) => {
            s["pricing"] = json!({"billable": false, "pricing_model": "PMP",
                                  "category": "service", "type": "free_customer_service"});
        }
        _ => {}
    }
    change(json!({"statuses": [s]}))
}

/// A status delivery with the send's `biz_opaque_callback_data`, when it
/// carried one (Meta echoes it in every status of the message).
pub fn tracked(mut delivery: Value, tracking: Option<&str>) -> Value {
    if let Some(t) = tracking {
        for status in delivery["entry"][0]["changes"][0]["value"]["statuses"]
            .as_array_mut()
            .into_iter()
            .flatten()
        {
            status["biz_opaque_callback_data"] = Value::String(t.to_string());
        }
    }
    delivery
}

/// Meta's details for the closed window (131047).
pub const WINDOW_CLOSED_DETAILS: &str =
    "Message failed to send because more than 24 hours have passed since the customer last replied to this number.";
