//! A Telegram update → what the gateway is handed: the only place that
//! knows how a Telegram message maps onto the channel contract.
//!
//! Telegram numbers messages per chat, so a message's id is
//! `"{chat id}:{message id}"`; a private chat is a DM with the person (its
//! id is theirs), a group or supergroup is a group, and a forum topic is
//! its thread. In groups the gateway answers when the bot is addressed:
//! mentioned (`@bot`, or a mention of its account), sent a command
//! `/cmd@bot`, or answered in reply to it. Files stay with Telegram, named
//! by their `file_id` (`getFile`, then the download, when the gateway asks).

use crate::update::{CallbackQuery, Chat, FileInfo, Message, MessageEntity, Update, User};
use gsv_protocol::channels::{
    ChannelInboundMessage, ChannelMedia, ChannelPeer, ChannelSender, MediaType, PeerKind,
};

/// The bot the account runs, as `getMe` said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bot {
    pub id: i64,
    pub username: Option<String>,
}

/// What an update asks of the channel.
#[derive(Debug, Clone, PartialEq)]
pub enum Handled {
    /// A message for the gateway.
    Message(Box<ChannelInboundMessage>),
    /// A button was pressed: the query is answered (Telegram shows a
    /// spinner until it is), and its answer goes to the gateway as a
    /// message from the presser, when it has one.
    Callback {
        query_id: String,
        message: Option<Box<ChannelInboundMessage>>,
    },
    /// An edit of an earlier message: not run again (counted in status).
    Edited,
    /// Nothing for the gateway, and why.
    Skip(String),
}

pub fn handle(update: Update, bot: &Bot, now_ms: i64) -> Handled {
    if let Some(m) = update.message {
        return match message(&m, bot) {
            Ok(m) => Handled::Message(Box::new(m)),
            Err(why) => Handled::Skip(why),
        };
    }
    if let Some(q) = update.callback_query {
        let query_id = q.id.clone();
        let message = button(q, now_ms).map(Box::new);
        return Handled::Callback { query_id, message };
    }
    if update.edited_message.is_some() {
        return Handled::Edited;
    }
    Handled::Skip(format!(
        "update {} has nothing the channel handles",
        update.update_id
    ))
}

/// A message for the gateway, or why it is not one.
pub fn message(m: &Message, bot: &Bot) -> Result<ChannelInboundMessage, String> {
    let peer = peer(&m.chat, m)?;
    if m.from.as_ref().is_some_and(|f| f.id == bot.id) {
        return Err("a message of the bot's own".into());
    }
    let (text, entities) = match (&m.text, &m.caption) {
        (Some(text), _) => (text.as_str(), m.entities.as_slice()),
        (None, Some(caption)) => (caption.as_str(), m.caption_entities.as_slice()),
        (None, None) => ("", &[][..]),
    };
    let (text, was_mentioned) = address(text, entities, bot);
    let media = media(m);
    if text.trim().is_empty() && media.is_empty() {
        return Err(format!(
            "message {} in chat {} has no text or file the channel reads (a sticker, a poll, \
             a service message, …)",
            m.message_id, m.chat.id
        ));
    }
    // In a forum, a message "replies" to its topic's first message when it
    // only belongs to the topic: that is no reply.
    let reply = m.reply_to_message.as_deref().filter(|r| {
        !(in_topic(m)
            && (Some(r.message_id) == m.message_thread_id || r.forum_topic_created.is_some()))
    });
    Ok(ChannelInboundMessage {
        message_id: format!("{}:{}", m.chat.id, m.message_id),
        peer,
        sender: m.from.as_ref().map(sender),
        text,
        media,
        reply_to_id: reply.map(|r| format!("{}:{}", m.chat.id, r.message_id)),
        reply_to_text: reply.and_then(|r| r.text.clone().or_else(|| r.caption.clone())),
        timestamp: Some(m.date * 1000),
        was_mentioned,
        is_reply_to_bot: reply.map(|r| r.from.as_ref().is_some_and(|f| f.id == bot.id)),
    })
}

fn in_topic(m: &Message) -> bool {
    m.is_topic_message == Some(true)
}

/// Where the message was said: the chat, and a forum topic as its thread.
fn peer(chat: &Chat, m: &Message) -> Result<ChannelPeer, String> {
    let (kind, name) = match chat.kind.as_str() {
        "private" => (PeerKind::Dm, m.from.as_ref().and_then(User::full_name)),
        "group" | "supergroup" => (PeerKind::Group, chat.title.clone()),
        other => return Err(format!("a message in a {other:?} chat (not handled)")),
    };
    let thread = match (kind, in_topic(m)) {
        (PeerKind::Group, true) => m.message_thread_id.map(|t| t.to_string()),
        _ => None,
    };
    Ok(ChannelPeer {
        kind,
        id: chat.id.to_string(),
        name,
        handle: chat.username.clone(),
        thread_id: thread,
    })
}

fn sender(user: &User) -> ChannelSender {
    ChannelSender {
        id: user.id.to_string(),
        name: user.full_name(),
        handle: user.username.clone(),
        is_bot: Some(user.is_bot),
    }
}

/// The text as the gateway reads it, and whether it addresses the bot: a
/// mention of `@bot` or of the bot's account, or a command to it —
/// `/status@bot` reaching the gateway as `/status`. Entities count UTF-16
/// code units, so the text is cut in those.
fn address(text: &str, entities: &[MessageEntity], bot: &Bot) -> (String, bool) {
    let mut units: Vec<u16> = text.encode_utf16().collect();
    let username = bot.username.as_deref().unwrap_or_default();
    let names_bot = |name: &str| !username.is_empty() && name.eq_ignore_ascii_case(username);
    let mut mentioned = false;
    let mut cuts: Vec<(usize, usize)> = Vec::new();
    for e in entities {
        let Some(span) = units.get(e.offset..e.offset.saturating_add(e.length)) else {
            continue;
        };
        let span = String::from_utf16_lossy(span);
        match e.kind.as_str() {
            "mention" => mentioned |= span.strip_prefix('@').is_some_and(names_bot),
            "text_mention" => mentioned |= e.user.as_ref().is_some_and(|u| u.id == bot.id),
            "bot_command" => {
                if let Some((_, to)) = span.split_once('@').filter(|(_, to)| names_bot(to)) {
                    mentioned = true;
                    let cut = e.offset + e.length - to.encode_utf16().count() - 1;
                    cuts.push((cut, e.offset + e.length));
                }
            }
            _ => {}
        }
    }
    // Last first, so the earlier offsets still hold.
    cuts.sort_unstable();
    for (from, to) in cuts.into_iter().rev() {
        units.drain(from..to);
    }
    (String::from_utf16_lossy(&units), mentioned)
}

/// The files of a message: the largest size of a photo, a document,
/// voice note, audio track or video (stickers are not read).
fn media(m: &Message) -> Vec<ChannelMedia> {
    let mut out = Vec::new();
    if let Some(largest) = m
        .photo
        .iter()
        .max_by_key(|p| (u64::from(p.width) * u64::from(p.height), p.file_size))
    {
        out.push(ChannelMedia {
            media_type: MediaType::Image,
            mime_type: "image/jpeg".into(),
            data: None,
            r2_key: None,
            id: Some(largest.file_id.clone()),
            url: None,
            filename: None,
            size: largest.file_size,
            duration: None,
        });
    }
    let files = [
        (&m.document, None, "application/octet-stream"),
        (&m.voice, Some(MediaType::Audio), "audio/ogg"),
        (&m.audio, Some(MediaType::Audio), "audio/mpeg"),
        (&m.video, Some(MediaType::Video), "video/mp4"),
    ];
    for (file, kind, default_mime) in files {
        if let Some(f) = file {
            out.push(file_media(f, kind, default_mime));
        }
    }
    out
}

/// A file by its `file_id`; a document's kind follows its type (an image
/// sent uncompressed is still an image).
fn file_media(f: &FileInfo, kind: Option<MediaType>, default_mime: &str) -> ChannelMedia {
    let mime = f
        .mime_type
        .clone()
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| default_mime.to_string());
    let kind = kind.unwrap_or_else(|| match mime.split('/').next() {
        Some("image") => MediaType::Image,
        Some("audio") => MediaType::Audio,
        Some("video") => MediaType::Video,
        _ => MediaType::Document,
    });
    ChannelMedia {
        media_type: kind,
        mime_type: mime,
        data: None,
        r2_key: None,
        id: Some(f.file_id.clone()),
        url: None,
        filename: f.file_name.clone(),
        size: f.file_size,
        duration: f.duration,
    }
}

/// A pressed button: a message from the presser, in the chat of the
/// message the button was under, whose text is the button's answer. It
/// addresses the bot (the button was the bot's), so groups take it.
fn button(q: CallbackQuery, now_ms: i64) -> Option<ChannelInboundMessage> {
    let data = q.data.filter(|d| !d.trim().is_empty())?;
    let m = q.message?;
    let kind = match m.chat.kind.as_str() {
        "private" => PeerKind::Dm,
        "group" | "supergroup" => PeerKind::Group,
        _ => return None,
    };
    Some(ChannelInboundMessage {
        message_id: format!("cb:{}", q.id),
        peer: ChannelPeer {
            kind,
            id: m.chat.id.to_string(),
            name: match kind {
                PeerKind::Dm => q.from.full_name(),
                _ => m.chat.title.clone(),
            },
            handle: m.chat.username.clone(),
            thread_id: (kind == PeerKind::Group && in_topic(&m))
                .then(|| m.message_thread_id.map(|t| t.to_string()))
                .flatten(),
        },
        sender: Some(sender(&q.from)),
        text: data,
        media: Vec::new(),
        reply_to_id: None,
        reply_to_text: None,
        timestamp: Some(now_ms),
        was_mentioned: true,
        is_reply_to_bot: Some(true),
    })
}

#[cfg(test)]
#[path = "inbound_tests.rs"]
mod tests;
