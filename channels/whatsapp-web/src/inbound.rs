//! A decrypted WhatsApp message → `ChannelInboundMessage`: the only place
//! that knows how a linked device's message maps onto the channel
//! contract. Senders are named by phone number in E.164 (`+15551234567`),
//! so pairing, `allowFrom` and identity links written with numbers match;
//! a sender WhatsApp names only by its LID (a privacy id) keeps that id.
//! Media stay on WhatsApp's CDN, named by a reference the object keeps
//! with the message (`media_ref`) until the gateway fetches them.

use gsv_protocol::channels::{
    ChannelInboundMessage, ChannelMedia, ChannelPeer, ChannelSender, MediaType, PeerKind,
};
use whatsapp_rust::wacore::proto_helpers::MessageExt;
use whatsapp_rust::waproto::whatsapp as wa;

/// Who the linked number is, as mentions name it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Me {
    /// The number's user part (`15550001111`).
    pub phone: Option<String>,
    /// Its LID's user part.
    pub lid: Option<String>,
}

/// The envelope of a message, as the shell reads it from the crate's
/// `MessageInfo` (JIDs as text: `15551234567@s.whatsapp.net`, `…@lid`,
/// `…@g.us`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Envelope {
    pub id: String,
    pub chat: String,
    pub sender: String,
    /// The sender's other JID (its phone number when `sender` is a LID).
    pub sender_alt: Option<String>,
    pub from_me: bool,
    pub push_name: String,
    /// Seconds since the epoch.
    pub timestamp: i64,
}

/// A message for the agent, or why it is not one.
#[derive(Debug, Clone, PartialEq)]
pub enum Normalized {
    Message(Box<ChannelInboundMessage>),
    Skip(String),
}

/// The user part of a JID (`15551234567:3@s.whatsapp.net` → `15551234567`).
pub fn user_of(jid: &str) -> &str {
    let user = jid.split('@').next().unwrap_or(jid);
    user.split(':').next().unwrap_or(user)
}

fn server_of(jid: &str) -> &str {
    jid.split_once('@').map(|(_, s)| s).unwrap_or("")
}

/// `15551234567@s.whatsapp.net` → `+15551234567`; a LID keeps its JID.
pub fn person_id(jid: &str, alt: Option<&str>) -> String {
    match server_of(jid) {
        "s.whatsapp.net" | "c.us" => format!("+{}", user_of(jid)),
        _ => match alt.filter(|a| server_of(a) == "s.whatsapp.net") {
            Some(pn) => format!("+{}", user_of(pn)),
            None => format!("{}@{}", user_of(jid), server_of(jid)),
        },
    }
}

/// A peer id (`+1 555 123 4567`, `15551234567`, a group's `…@g.us`, a
/// `…@lid`) → the JID to send to, or why it names none.
pub fn peer_jid(peer_id: &str) -> Result<String, String> {
    let id = peer_id.trim();
    if id.contains('@') {
        return match server_of(id) {
            "g.us" | "s.whatsapp.net" | "lid" => Ok(id.to_string()),
            other => Err(format!("{id}: WhatsApp has no chats at @{other}")),
        };
    }
    let digits: String = id.chars().filter(char::is_ascii_digit).collect();
    let number_like = id
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '+' | ' ' | '-' | '(' | ')' | '.'));
    if number_like && (7..=15).contains(&digits.len()) {
        Ok(format!("{digits}@s.whatsapp.net"))
    } else {
        Err(format!(
            "{id} is not a phone number (with its country code) or a WhatsApp chat id"
        ))
    }
}

/// What a message carries that the agent can take.
struct Parts<'a> {
    text: String,
    media: Option<ChannelMedia>,
    context: Option<&'a wa::ContextInfo>,
}

/// The text, the one medium and the context of a message's own part
/// (unwrapped from the ephemeral / view-once / device-sent containers).
/// `None`: nothing for the agent (a reaction, a protocol message, a poll).
fn parts<'a>(message: &'a wa::Message, media_ref: &str) -> Option<Parts<'a>> {
    let m = message.get_base_message();
    let medium =
        |kind, mime: &Option<String>, size, filename: Option<&String>, secs: Option<u32>| {
            ChannelMedia {
                media_type: kind,
                mime_type: mime
                    .clone()
                    .unwrap_or_else(|| "application/octet-stream".into()),
                data: None,
                r2_key: None,
                id: Some(media_ref.to_string()),
                url: None,
                filename: filename.cloned(),
                size,
                duration: secs.map(f64::from),
            }
        };
    if let Some(text) = m.conversation.as_ref().filter(|t| !t.is_empty()) {
        return Some(Parts {
            text: text.clone(),
            media: None,
            context: None,
        });
    }
    if let Some(x) = m.extended_text_message.as_option() {
        return Some(Parts {
            text: x.text.clone().unwrap_or_default(),
            media: None,
            context: x.context_info.as_option(),
        });
    }
    if let Some(i) = m.image_message.as_option() {
        return Some(Parts {
            text: i.caption.clone().unwrap_or_default(),
            media: Some(medium(
                MediaType::Image,
                &i.mimetype,
                i.file_length,
                None,
                None,
            )),
            context: i.context_info.as_option(),
        });
    }
    if let Some(a) = m.audio_message.as_option() {
        // A voice note (`ptt`) is audio like any other; its transcript is
        // the gateway's.
        return Some(Parts {
            text: String::new(),
            media: Some(medium(
                MediaType::Audio,
                &a.mimetype,
                a.file_length,
                None,
                a.seconds,
            )),
            context: a.context_info.as_option(),
        });
    }
    if let Some(v) = m.video_message.as_option() {
        return Some(Parts {
            text: v.caption.clone().unwrap_or_default(),
            media: Some(medium(
                MediaType::Video,
                &v.mimetype,
                v.file_length,
                None,
                v.seconds,
            )),
            context: v.context_info.as_option(),
        });
    }
    let document = m.document_message.as_option().or_else(|| {
        m.document_with_caption_message
            .as_option()
            .and_then(|w| w.message.as_option())
            .and_then(|inner| inner.document_message.as_option())
    });
    if let Some(d) = document {
        return Some(Parts {
            text: d.caption.clone().unwrap_or_default(),
            media: Some(medium(
                MediaType::Document,
                &d.mimetype,
                d.file_length,
                d.file_name.as_ref(),
                None,
            )),
            context: d.context_info.as_option(),
        });
    }
    None
}

/// Whether a message in a group is addressed to the linked number: it
/// mentions the number (or its LID), or replies to one of its messages.
fn addressed(context: Option<&wa::ContextInfo>, me: &Me) -> (bool, bool) {
    let is_me = |jid: &str| {
        let user = user_of(jid);
        me.phone.as_deref() == Some(user) || me.lid.as_deref() == Some(user)
    };
    let Some(c) = context else {
        return (false, false);
    };
    let mentioned = c.mentioned_jid.iter().any(|j| is_me(j));
    let reply_to_me = c.participant.as_deref().is_some_and(is_me);
    (mentioned, reply_to_me)
}

/// Maps one message. `media_ref` names its medium for a later
/// `/media/fetch` (the object keeps the message under it).
pub fn normalize(message: &wa::Message, env: &Envelope, me: &Me, media_ref: &str) -> Normalized {
    if env.from_me {
        // Sent from the user's phone or another of their devices: the
        // agent's own words, or the user writing as themself.
        return Normalized::Skip(format!(
            "message {} was sent from the linked number",
            env.id
        ));
    }
    if server_of(&env.chat) == "broadcast" || server_of(&env.chat) == "newsletter" {
        return Normalized::Skip(format!("message {} is a status or channel post", env.id));
    }
    let Some(parts) = parts(message, media_ref) else {
        return Normalized::Skip(format!(
            "message {} has nothing to read (a reaction, poll or protocol message)",
            env.id
        ));
    };
    if parts.text.trim().is_empty() && parts.media.is_none() {
        return Normalized::Skip(format!("message {} is empty", env.id));
    }
    let group = server_of(&env.chat) == "g.us";
    let sender_id = person_id(&env.sender, env.sender_alt.as_deref());
    let peer = if group {
        ChannelPeer {
            kind: PeerKind::Group,
            id: env.chat.clone(),
            name: None,
            handle: None,
            thread_id: None,
        }
    } else {
        ChannelPeer {
            kind: PeerKind::Dm,
            id: sender_id.clone(),
            name: Some(env.push_name.clone()).filter(|n| !n.is_empty()),
            handle: None,
            thread_id: None,
        }
    };
    let (mentioned, reply_to_me) = addressed(parts.context, me);
    let quoted = parts.context.and_then(|c| c.stanza_id.clone());
    let quoted_text = parts
        .context
        .and_then(|c| c.quoted_message.as_option())
        .and_then(|q| {
            q.text_content()
                .map(str::to_string)
                .or_else(|| q.get_caption().map(str::to_string))
        });
    Normalized::Message(Box::new(ChannelInboundMessage {
        message_id: env.id.clone(),
        peer,
        sender: Some(ChannelSender {
            id: sender_id,
            name: Some(env.push_name.clone()).filter(|n| !n.is_empty()),
            handle: None,
            is_bot: None,
        }),
        text: parts.text,
        media: parts.media.into_iter().collect(),
        reply_to_id: quoted,
        reply_to_text: quoted_text,
        timestamp: Some(env.timestamp * 1000),
        was_mentioned: !group || mentioned,
        is_reply_to_bot: Some(reply_to_me),
    }))
}

#[cfg(test)]
#[path = "inbound_tests.rs"]
mod tests;
