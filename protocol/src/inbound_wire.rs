//! `channel.inbound` as it arrives: this contract's shape, where the
//! message carries its id, peer and sender, or GSV v1's WebSocket shape,
//! where the peer, sender and mention flag sit beside the message and its
//! id is `message.id`. Both read into one [`ChannelInboundParams`].
//!
//! [`ChannelInboundParams`]: crate::channels::ChannelInboundParams

use crate::channels::{
    ChannelInboundMessage, ChannelInboundParams, ChannelMedia, ChannelPeer, ChannelSender,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InboundWire {
    channel: String,
    account_id: String,
    message: MessageWire,
    /// v1: the chat, beside the message.
    #[serde(default)]
    peer: Option<ChannelPeer>,
    /// v1: who wrote, beside the message.
    #[serde(default)]
    sender: Option<ChannelSender>,
    /// v1: the bot was mentioned.
    #[serde(default)]
    was_mentioned: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MessageWire {
    #[serde(default)]
    message_id: Option<String>,
    /// v1's name for the message id.
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    peer: Option<ChannelPeer>,
    #[serde(default)]
    sender: Option<ChannelSender>,
    #[serde(default)]
    text: String,
    #[serde(default)]
    media: Vec<ChannelMedia>,
    #[serde(default)]
    reply_to_id: Option<String>,
    #[serde(default)]
    reply_to_text: Option<String>,
    #[serde(default)]
    timestamp: Option<i64>,
    #[serde(default)]
    was_mentioned: Option<bool>,
    #[serde(default)]
    is_reply_to_bot: Option<bool>,
    /// v1: a shared location, said in the text.
    #[serde(default)]
    location: Option<Location>,
}

#[derive(Deserialize)]
struct Location {
    lat: f64,
    lon: f64,
    #[serde(default)]
    name: Option<String>,
}

impl TryFrom<InboundWire> for ChannelInboundParams {
    type Error = String;

    fn try_from(w: InboundWire) -> Result<Self, String> {
        let m = w.message;
        let message_id = m
            .message_id
            .or(m.id)
            .ok_or("message.messageId (or v1's message.id) is required")?;
        let peer = m
            .peer
            .or(w.peer)
            .ok_or("message.peer (or v1's peer) is required")?;
        let mut text = m.text;
        if let Some(l) = m.location {
            let place = l.name.map(|n| format!(" ({n})")).unwrap_or_default();
            let line = format!("[location: {}, {}{place}]", l.lat, l.lon);
            text = match text.trim().is_empty() {
                true => line,
                false => format!("{text}\n{line}"),
            };
        }
        Ok(ChannelInboundParams {
            channel: w.channel,
            account_id: w.account_id,
            message: ChannelInboundMessage {
                message_id,
                peer,
                sender: m.sender.or(w.sender),
                text,
                media: m.media,
                reply_to_id: m.reply_to_id,
                reply_to_text: m.reply_to_text,
                timestamp: m.timestamp,
                was_mentioned: m.was_mentioned.or(w.was_mentioned).unwrap_or(false),
                is_reply_to_bot: m.is_reply_to_bot,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::channels::*;
    use serde_json::json;

    #[test]
    fn v1_websocket_shape_reads_as_the_current_one() {
        let v1 = json!({
            "channel": "whatsapp", "accountId": "default",
            "peer": {"kind": "dm", "id": "+15550001", "name": "Ada"},
            "sender": {"id": "+15550001", "name": "Ada"},
            "message": {"id": "wamid.1", "text": "hi", "timestamp": 1700000000000_i64,
                        "replyToId": "wamid.0", "location": {"lat": 52.5, "lon": 13.4, "name": "Berlin"}},
            "wasMentioned": true, "mentionedIds": ["x"]
        });
        let p: ChannelInboundParams = serde_json::from_value(v1).unwrap();
        assert_eq!(
            p,
            ChannelInboundParams {
                channel: "whatsapp".into(),
                account_id: "default".into(),
                message: ChannelInboundMessage {
                    message_id: "wamid.1".into(),
                    peer: ChannelPeer {
                        kind: PeerKind::Dm,
                        id: "+15550001".into(),
                        name: Some("Ada".into()),
                        handle: None,
                        thread_id: None,
                    },
                    sender: Some(ChannelSender {
                        id: "+15550001".into(),
                        name: Some("Ada".into()),
                        handle: None,
                        is_bot: None,
                    }),
                    text: "hi\n[location: 52.5, 13.4 (Berlin)]".into(),
                    media: vec![],
                    reply_to_id: Some("wamid.0".into()),
                    reply_to_text: None,
                    timestamp: Some(1700000000000),
                    was_mentioned: true,
                    is_reply_to_bot: None,
                },
            }
        );
    }

    #[test]
    fn a_message_without_id_or_peer_is_refused_by_name() {
        let no_id = json!({"channel": "x", "accountId": "a",
            "message": {"text": "hi", "peer": {"kind": "dm", "id": "1"}}});
        let e = serde_json::from_value::<ChannelInboundParams>(no_id).unwrap_err();
        assert_eq!(
            e.to_string(),
            "message.messageId (or v1's message.id) is required"
        );
        let no_peer =
            json!({"channel": "x", "accountId": "a", "message": {"id": "1", "text": "hi"}});
        let e = serde_json::from_value::<ChannelInboundParams>(no_peer).unwrap_err();
        assert_eq!(e.to_string(), "message.peer (or v1's peer) is required");
    }
}
