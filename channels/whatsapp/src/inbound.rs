//! A Cloud API message (one item of a webhook's `messages`) →
//! `ChannelInboundMessage`: the only place that knows how a WhatsApp
//! message maps onto the channel contract. Media stay with Meta, named by
//! their media id (`GET /{media-id}` gives a short-lived URL).

use crate::phone::to_e164;
use gsv_protocol::channels::{
    ChannelInboundMessage, ChannelMedia, ChannelPeer, ChannelSender, MediaType, PeerKind,
};
use serde::Deserialize;
use serde_json::Value;

/// An entry of the webhook's `contacts`: who wrote.
#[derive(Debug, Clone, Deserialize)]
pub struct Contact {
    #[serde(default)]
    pub wa_id: Option<String>,
    #[serde(default)]
    pub profile: Option<Profile>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Profile {
    #[serde(default)]
    pub name: Option<String>,
}

/// A message for the agent, or why it is not one.
#[derive(Debug, Clone, PartialEq)]
pub enum Normalized {
    Message(Box<ChannelInboundMessage>),
    Skip(String),
}

#[derive(Deserialize)]
struct Message {
    from: String,
    id: String,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    group_id: Option<String>,
    text: Option<Text>,
    image: Option<Media>,
    audio: Option<Media>,
    video: Option<Media>,
    document: Option<Media>,
    sticker: Option<Media>,
    location: Option<Location>,
    context: Option<Context>,
    button: Option<Button>,
    interactive: Option<Interactive>,
    contacts: Option<Vec<SharedContact>>,
}

#[derive(Deserialize)]
struct Text {
    body: String,
}

#[derive(Deserialize)]
struct Media {
    id: String,
    #[serde(default)]
    mime_type: Option<String>,
    #[serde(default)]
    caption: Option<String>,
    #[serde(default)]
    filename: Option<String>,
}

#[derive(Deserialize)]
struct Location {
    latitude: f64,
    longitude: f64,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    address: Option<String>,
    #[serde(default)]
    url: Option<String>,
}

#[derive(Deserialize)]
struct Context {
    #[serde(default)]
    id: Option<String>,
}

#[derive(Deserialize)]
struct Button {
    text: String,
}

#[derive(Deserialize)]
struct Interactive {
    #[serde(default)]
    button_reply: Option<Choice>,
    #[serde(default)]
    list_reply: Option<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    title: String,
    #[serde(default)]
    description: Option<String>,
}

#[derive(Deserialize)]
struct SharedContact {
    #[serde(default)]
    name: Option<ContactName>,
    #[serde(default)]
    phones: Vec<ContactPhone>,
}

#[derive(Deserialize)]
struct ContactName {
    #[serde(default)]
    formatted_name: Option<String>,
}

#[derive(Deserialize)]
struct ContactPhone {
    #[serde(default)]
    phone: Option<String>,
}

/// One item of `messages`, with the webhook's `contacts` for the sender's name.
pub fn normalize(raw: &Value, contacts: &[Contact]) -> Normalized {
    let msg: Message = match serde_json::from_value(raw.clone()) {
        Ok(m) => m,
        Err(e) => return Normalized::Skip(format!("a message that could not be read: {e}")),
    };
    if msg.group_id.is_some() {
        return Normalized::Skip(format!(
            "{}: a group message (groups are not handled)",
            msg.id
        ));
    }
    let (text, media) = match content(&msg) {
        Ok(c) => c,
        Err(why) => return Normalized::Skip(format!("{}: {why}", msg.id)),
    };
    let sender_id = to_e164(&msg.from);
    let name = contacts
        .iter()
        .find(|c| c.wa_id.as_deref() == Some(msg.from.as_str()))
        .or(match contacts {
            [only] => Some(only),
            _ => None,
        })
        .and_then(|c| c.profile.as_ref()?.name.clone())
        .filter(|n| !n.trim().is_empty());
    Normalized::Message(Box::new(ChannelInboundMessage {
        message_id: msg.id.clone(),
        peer: ChannelPeer {
            kind: PeerKind::Dm,
            id: sender_id.clone(),
            name: name.clone(),
            handle: None,
            thread_id: None,
        },
        sender: Some(ChannelSender {
            id: sender_id,
            name,
            handle: None,
            is_bot: Some(false),
        }),
        text,
        media: media.into_iter().collect(),
        reply_to_id: msg.context.and_then(|c| c.id),
        reply_to_text: None,
        timestamp: msg.timestamp.as_deref().and_then(seconds_to_ms),
        was_mentioned: false,
        is_reply_to_bot: None,
    }))
}

/// The text the agent reads and the attachment, by the message's type.
fn content(msg: &Message) -> Result<(String, Option<ChannelMedia>), String> {
    let caption = |m: &Media| m.caption.clone().unwrap_or_default();
    let missing = || format!("a {} message without its {} object", msg.kind, msg.kind);
    Ok(match msg.kind.as_str() {
        "text" => (msg.text.as_ref().ok_or_else(missing)?.body.clone(), None),
        "image" | "video" | "document" | "audio" | "sticker" => {
            let (m, media_type, default_mime) = match msg.kind.as_str() {
                "image" => (&msg.image, MediaType::Image, "image/jpeg"),
                "video" => (&msg.video, MediaType::Video, "video/mp4"),
                "document" => (
                    &msg.document,
                    MediaType::Document,
                    "application/octet-stream",
                ),
                "audio" => (&msg.audio, MediaType::Audio, "audio/ogg"),
                _ => (&msg.sticker, MediaType::Image, "image/webp"),
            };
            let m = m.as_ref().ok_or_else(missing)?;
            let media = ChannelMedia {
                data: None,
                r2_key: None,
                media_type,
                mime_type: m
                    .mime_type
                    .clone()
                    .filter(|t| !t.is_empty())
                    .unwrap_or_else(|| default_mime.into()),
                id: Some(m.id.clone()),
                url: None,
                filename: m.filename.clone(),
                size: None,
                duration: None,
            };
            (caption(m), Some(media))
        }
        "location" => (location(msg.location.as_ref().ok_or_else(missing)?), None),
        "contacts" => (
            shared_contacts(msg.contacts.as_deref().unwrap_or_default()),
            None,
        ),
        "button" => (msg.button.as_ref().ok_or_else(missing)?.text.clone(), None),
        "interactive" => {
            let i = msg.interactive.as_ref().ok_or_else(missing)?;
            let choice = i
                .button_reply
                .as_ref()
                .or(i.list_reply.as_ref())
                .ok_or("an interactive reply of a kind not handled")?;
            let text = match &choice.description {
                Some(d) if !d.is_empty() => format!("{} ({d})", choice.title),
                _ => choice.title.clone(),
            };
            (text, None)
        }
        "reaction" => return Err("a reaction (not a message to answer)".into()),
        other => return Err(format!("a {other:?} message (not handled)")),
    })
}

fn location(l: &Location) -> String {
    let mut parts: Vec<String> = [&l.name, &l.address]
        .into_iter()
        .flatten()
        .filter(|p| !p.trim().is_empty())
        .cloned()
        .collect();
    parts.push(format!("{:.6}, {:.6}", l.latitude, l.longitude));
    if let Some(url) = l.url.as_deref().filter(|u| !u.is_empty()) {
        parts.push(url.to_string());
    }
    format!("[location: {}]", parts.join(" — "))
}

fn shared_contacts(contacts: &[SharedContact]) -> String {
    contacts
        .iter()
        .map(|c| {
            let name = c
                .name
                .as_ref()
                .and_then(|n| n.formatted_name.clone())
                .unwrap_or_else(|| "someone".into());
            let phones: Vec<&str> = c.phones.iter().filter_map(|p| p.phone.as_deref()).collect();
            match phones.is_empty() {
                true => format!("[shared contact: {name}]"),
                false => format!("[shared contact: {name}, {}]", phones.join(", ")),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Meta's timestamps: seconds since the epoch, as a string.
pub fn seconds_to_ms(s: &str) -> Option<i64> {
    s.trim().parse::<i64>().ok().map(|secs| secs * 1000)
}

#[cfg(test)]
#[path = "inbound_tests.rs"]
mod tests;
