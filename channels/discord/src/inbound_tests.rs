use super::*;
use serde_json::json;

const BOT: &str = "900";

fn message(v: serde_json::Value) -> Message {
    serde_json::from_value(v).unwrap()
}

fn author() -> serde_json::Value {
    json!({"id": "42", "username": "ann", "global_name": "Ann", "bot": false})
}

#[test]
fn a_dm_becomes_a_dm_peer_with_the_sender() {
    let msg = message(json!({
        "id": "m1", "channel_id": "dm1", "author": author(), "content": "hello",
        "timestamp": "2026-11-24T06:35:13.123000+00:00", "mentions": [], "attachments": []
    }));
    assert_eq!(
        normalize(&msg, Some(BOT)),
        Some(ChannelInboundMessage {
            message_id: "m1".into(),
            peer: ChannelPeer {
                kind: PeerKind::Dm,
                id: "dm1".into(),
                name: Some("Ann".into()),
                handle: Some("ann".into()),
                thread_id: None,
            },
            sender: Some(ChannelSender {
                id: "42".into(),
                name: Some("Ann".into()),
                handle: Some("ann".into()),
                is_bot: Some(false),
            }),
            text: "hello".into(),
            media: vec![],
            reply_to_id: None,
            reply_to_text: None,
            timestamp: Some(1_795_502_113_123),
            was_mentioned: false,
            is_reply_to_bot: None,
        })
    );
}

#[test]
fn a_guild_message_mentioning_the_bot_in_reply_to_it_with_an_attachment() {
    let msg = message(json!({
        "id": "m2", "channel_id": "c7", "guild_id": "g1", "author": author(),
        "member": {"nick": "Annie"},
        "content": "<@900> look", "mentions": [{"id": "900", "username": "gsv", "bot": true}],
        "attachments": [{"id": "a1", "filename": "cat.png", "content_type": "image/png",
                         "size": 1234, "url": "https://cdn.discordapp.com/attachments/c7/a1/cat.png"},
                        {"id": "a2", "filename": "notes", "size": 5, "url": "https://cdn/x"}],
        "message_reference": {"message_id": "m0", "channel_id": "c7"},
        "referenced_message": {"id": "m0", "channel_id": "c7", "author": {"id": "900", "username": "gsv", "bot": true},
                               "content": "earlier answer"}
    }));
    assert_eq!(
        normalize(&msg, Some(BOT)),
        Some(ChannelInboundMessage {
            message_id: "m2".into(),
            peer: ChannelPeer {
                kind: PeerKind::Group,
                id: "c7".into(),
                name: None,
                handle: None,
                thread_id: None,
            },
            sender: Some(ChannelSender {
                id: "42".into(),
                name: Some("Annie".into()),
                handle: Some("ann".into()),
                is_bot: Some(false),
            }),
            text: "<@900> look".into(),
            media: vec![
                ChannelMedia {
                    data: None,
                    r2_key: None,
                    media_type: MediaType::Image,
                    mime_type: "image/png".into(),
                    id: None,
                    url: Some("https://cdn.discordapp.com/attachments/c7/a1/cat.png".into()),
                    filename: Some("cat.png".into()),
                    size: Some(1234),
                    duration: None,
                },
                ChannelMedia {
                    data: None,
                    r2_key: None,
                    media_type: MediaType::Document,
                    mime_type: "application/octet-stream".into(),
                    id: None,
                    url: Some("https://cdn/x".into()),
                    filename: Some("notes".into()),
                    size: Some(5),
                    duration: None,
                },
            ],
            reply_to_id: Some("m0".into()),
            reply_to_text: Some("earlier answer".into()),
            timestamp: None,
            was_mentioned: true,
            is_reply_to_bot: Some(true),
        })
    );
}

#[test]
fn a_guild_message_without_mention_replying_to_someone_else() {
    let msg = message(json!({
        "id": "m3", "channel_id": "c7", "guild_id": "g1", "author": author(), "content": "hm",
        "mentions": [{"id": "43", "username": "bob"}],
        "referenced_message": {"id": "m9", "channel_id": "c7", "author": {"id": "43", "username": "bob"}, "content": "x"}
    }));
    let got = normalize(&msg, Some(BOT)).unwrap();
    assert_eq!(
        (got.was_mentioned, got.is_reply_to_bot, got.reply_to_id),
        (false, Some(false), Some("m9".into()))
    );
}

#[test]
fn bots_are_ignored_the_channel_s_own_bot_too() {
    let other_bot = message(
        json!({"id": "m", "channel_id": "c", "author": {"id": "5", "username": "b", "bot": true}}),
    );
    assert_eq!(normalize(&other_bot, Some(BOT)), None);
    let itself =
        message(json!({"id": "m", "channel_id": "c", "author": {"id": BOT, "username": "gsv"}}));
    assert_eq!(normalize(&itself, Some(BOT)), None);
}

#[test]
fn timestamps() {
    assert_eq!(parse_timestamp_ms("1970-01-01T00:00:00+00:00"), Some(0));
    assert_eq!(parse_timestamp_ms("1970-01-01T01:00:00.5+01:00"), Some(500));
    assert_eq!(
        parse_timestamp_ms("2026-11-24T06:35:13Z"),
        Some(1_795_502_113_000)
    );
    assert_eq!(parse_timestamp_ms("yesterday"), None);
}
