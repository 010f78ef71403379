//! MESSAGE_CREATE → `ChannelInboundMessage`: the only place that knows how a
//! Discord message maps onto the channel contract.

use crate::gateway::payload::{Attachment, Message, User};
use gsv_protocol::channels::{
    ChannelInboundMessage, ChannelMedia, ChannelPeer, ChannelSender, MediaType, PeerKind,
};
use gsv_protocol::dates::CivilDate;

/// The message as the gateway should see it, or `None` when it is not for
/// the agent: bots (this one included) are never answered, so two bots
/// cannot talk each other into a loop.
pub fn normalize(msg: &Message, bot_user_id: Option<&str>) -> Option<ChannelInboundMessage> {
    if msg.author.bot == Some(true) || Some(msg.author.id.as_str()) == bot_user_id {
        return None;
    }
    let peer = match &msg.guild_id {
        // Replies go to the channel, so the channel is the peer.
        Some(_) => ChannelPeer {
            kind: PeerKind::Group,
            id: msg.channel_id.clone(),
            name: None,
            handle: None,
            thread_id: None,
        },
        None => ChannelPeer {
            kind: PeerKind::Dm,
            id: msg.channel_id.clone(),
            name: Some(display_name(&msg.author)),
            handle: Some(msg.author.username.clone()),
            thread_id: None,
        },
    };
    let nick = msg.member.as_ref().and_then(|m| m.nick.clone());
    let sender = ChannelSender {
        id: msg.author.id.clone(),
        name: Some(nick.unwrap_or_else(|| display_name(&msg.author))),
        handle: Some(msg.author.username.clone()),
        is_bot: Some(false),
    };
    let referenced = msg.referenced_message.as_deref();
    let reply_to_id = referenced.map(|r| r.id.clone()).or_else(|| {
        msg.message_reference
            .as_ref()
            .and_then(|r| r.message_id.clone())
    });
    Some(ChannelInboundMessage {
        message_id: msg.id.clone(),
        peer,
        sender: Some(sender),
        text: msg.content.clone(),
        media: msg.attachments.iter().map(media).collect(),
        reply_to_id,
        reply_to_text: referenced.map(|r| r.content.clone()),
        timestamp: msg.timestamp.as_deref().and_then(parse_timestamp_ms),
        was_mentioned: bot_user_id.is_some_and(|bot| msg.mentions.iter().any(|u| u.id == bot)),
        is_reply_to_bot: referenced.map(|r| bot_user_id.is_some_and(|bot| r.author.id == bot)),
    })
}

fn display_name(user: &User) -> String {
    user.global_name
        .clone()
        .unwrap_or_else(|| user.username.clone())
}

fn media(a: &Attachment) -> ChannelMedia {
    let mime = a
        .content_type
        .clone()
        .unwrap_or_else(|| "application/octet-stream".into());
    let media_type = match mime.split('/').next() {
        Some("image") => MediaType::Image,
        Some("audio") => MediaType::Audio,
        Some("video") => MediaType::Video,
        _ => MediaType::Document,
    };
    ChannelMedia {
        data: None,
        r2_key: None,
        media_type,
        mime_type: mime,
        id: None,
        url: Some(a.url.clone()),
        filename: Some(a.filename.clone()),
        size: a.size,
        duration: a.duration_secs,
    }
}

/// Discord's ISO 8601 timestamps (`2026-11-24T06:35:13.123000+00:00`) in
/// milliseconds since the epoch; `None` for anything else.
pub fn parse_timestamp_ms(ts: &str) -> Option<i64> {
    let num = |s: &str| s.parse::<i64>().ok();
    let (date, rest) = ts.split_once('T')?;
    let mut d = date.split('-');
    let (year, month, day) = (num(d.next()?)?, num(d.next()?)?, num(d.next()?)?);
    // The clock part ends where the offset starts.
    let split = rest.find(['+', '-', 'Z']).unwrap_or(rest.len());
    let (clock, offset) = rest.split_at(split);
    let mut c = clock.split(':');
    let (h, m) = (num(c.next()?)?, num(c.next()?)?);
    let s = c.next()?;
    let (secs, frac) = s.split_once('.').unwrap_or((s, ""));
    let ms = num(&format!("{:0<3}", &frac[..frac.len().min(3)]))?;
    let offset_min = match offset {
        "" | "Z" => 0,
        o => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            let (oh, om) = o[1..].split_once(':')?;
            sign * (num(oh)? * 60 + num(om)?)
        }
    };
    let days = CivilDate {
        year,
        month: u32::try_from(month).ok()?,
        day: u32::try_from(day).ok()?,
    }
    .epoch_days();
    Some(days * 86_400_000 + ((h * 60 + m - offset_min) * 60 + num(secs)?) * 1000 + ms)
}

#[cfg(test)]
#[path = "inbound_tests.rs"]
mod tests;
