use super::*;
use serde_json::{json, Value};

const BOT: i64 = 7001;

fn bot() -> Bot {
    Bot {
        id: BOT,
        username: Some("GsvBot".into()),
    }
}

fn update(v: Value) -> Update {
    serde_json::from_value(v).unwrap()
}

fn handled(v: Value) -> Handled {
    handle(update(v), &bot(), 1_750_000_000_123)
}

fn message_of(v: Value) -> ChannelInboundMessage {
    match handled(v) {
        Handled::Message(m) => *m,
        other => panic!("not a message: {other:?}"),
    }
}

const ANN: &str =
    r#"{"id": 42, "is_bot": false, "first_name": "Ann", "last_name": "Lee", "username": "ann"}"#;

fn ann() -> Value {
    serde_json::from_str(ANN).unwrap()
}

#[test]
fn a_private_message_is_a_dm_from_the_person() {
    let m = message_of(json!({"update_id": 1, "message": {
        "message_id": 10, "date": 1_750_000_000, "from": ann(),
        "chat": {"id": 42, "type": "private", "first_name": "Ann", "username": "ann"},
        "text": "hello"}}));
    assert_eq!(
        m,
        ChannelInboundMessage {
            message_id: "42:10".into(),
            peer: ChannelPeer {
                kind: PeerKind::Dm,
                id: "42".into(),
                name: Some("Ann Lee".into()),
                handle: Some("ann".into()),
                thread_id: None,
            },
            sender: Some(ChannelSender {
                id: "42".into(),
                name: Some("Ann Lee".into()),
                handle: Some("ann".into()),
                is_bot: Some(false),
            }),
            text: "hello".into(),
            media: vec![],
            reply_to_id: None,
            reply_to_text: None,
            timestamp: Some(1_750_000_000_000),
            was_mentioned: false,
            is_reply_to_bot: None,
        }
    );
}

#[test]
fn a_group_message_is_the_group_s_and_a_topic_is_its_thread() {
    let m = message_of(json!({"update_id": 2, "message": {
        "message_id": 77, "message_thread_id": 5, "is_topic_message": true, "date": 1,
        "from": ann(), "chat": {"id": -1001234, "type": "supergroup", "title": "Team", "is_forum": true},
        // Only being in the topic: its first message is no reply.
        "reply_to_message": {"message_id": 5, "date": 1, "chat": {"id": -1001234, "type": "supergroup"},
                             "forum_topic_created": {"name": "Ops", "icon_color": 1}},
        "text": "hi all"}}));
    assert_eq!(m.message_id, "-1001234:77");
    assert_eq!(
        m.peer,
        ChannelPeer {
            kind: PeerKind::Group,
            id: "-1001234".into(),
            name: Some("Team".into()),
            handle: None,
            thread_id: Some("5".into()),
        }
    );
    assert_eq!((m.reply_to_id, m.is_reply_to_bot), (None, None));
    // A reply thread outside a forum is not a topic.
    let plain = message_of(json!({"update_id": 3, "message": {
        "message_id": 78, "message_thread_id": 70, "date": 1, "from": ann(),
        "chat": {"id": -5, "type": "group", "title": "Old group"}, "text": "x"}}));
    assert_eq!(plain.peer.thread_id, None);
}

#[test]
fn a_reply_names_the_message_and_whether_it_was_the_bot_s() {
    let to_bot = message_of(json!({"update_id": 4, "message": {
        "message_id": 80, "date": 1, "from": ann(), "chat": {"id": -5, "type": "group"},
        "reply_to_message": {"message_id": 79, "date": 1, "chat": {"id": -5, "type": "group"},
                             "from": {"id": BOT, "is_bot": true, "first_name": "Gsv"}, "text": "Which one?"},
        "text": "the second"}}));
    assert_eq!(to_bot.reply_to_id.as_deref(), Some("-5:79"));
    assert_eq!(to_bot.reply_to_text.as_deref(), Some("Which one?"));
    assert_eq!(to_bot.is_reply_to_bot, Some(true));
    assert!(!to_bot.was_mentioned);
    let to_ann = message_of(json!({"update_id": 5, "message": {
        "message_id": 81, "date": 1, "from": ann(), "chat": {"id": -5, "type": "group"},
        "reply_to_message": {"message_id": 60, "date": 1, "chat": {"id": -5, "type": "group"},
                             "from": ann(), "caption": "a photo"},
        "text": "nice"}}));
    assert_eq!(to_ann.reply_to_text.as_deref(), Some("a photo"));
    assert_eq!(to_ann.is_reply_to_bot, Some(false));
}

fn group_text(text: &str, entities: Value) -> ChannelInboundMessage {
    message_of(json!({"update_id": 6, "message": {
        "message_id": 90, "date": 1, "from": ann(), "chat": {"id": -5, "type": "group"},
        "text": text, "entities": entities}}))
}

#[test]
fn mentions_of_the_bot_address_it_and_others_do_not() {
    let at = group_text(
        "hey @gsvbot look",
        json!([{"type": "mention", "offset": 4, "length": 7}]),
    );
    assert!(at.was_mentioned);
    assert_eq!(at.text, "hey @gsvbot look");
    let other = group_text(
        "hey @gsvbot2",
        json!([{"type": "mention", "offset": 4, "length": 8}]),
    );
    assert!(!other.was_mentioned);
    let by_account = group_text(
        "Gsv, look",
        json!([{"type": "text_mention", "offset": 0, "length": 3,
                "user": {"id": BOT, "is_bot": true, "first_name": "Gsv"}}]),
    );
    assert!(by_account.was_mentioned);
    // Offsets count UTF-16 units: an emoji before the mention is two.
    let after_emoji = group_text(
        "🎉 @GsvBot",
        json!([{"type": "mention", "offset": 3, "length": 7}]),
    );
    assert!(after_emoji.was_mentioned);
    // An entity past the text is ignored, not a panic.
    let broken = group_text(
        "hi",
        json!([{"type": "mention", "offset": 1, "length": 50}]),
    );
    assert!(!broken.was_mentioned);
    let none = group_text("just talking", json!([]));
    assert!(!none.was_mentioned);
}

#[test]
fn a_command_to_the_bot_reaches_the_gateway_without_the_bot_s_name() {
    let cmd = group_text(
        "/status@GsvBot now",
        json!([{"type": "bot_command", "offset": 0, "length": 14}]),
    );
    assert_eq!(
        (cmd.text.as_str(), cmd.was_mentioned),
        ("/status now", true)
    );
    let lower = group_text(
        "/new@gsvbot",
        json!([{"type": "bot_command", "offset": 0, "length": 11}]),
    );
    assert_eq!((lower.text.as_str(), lower.was_mentioned), ("/new", true));
    let other_bot = group_text(
        "/status@OtherBot",
        json!([{"type": "bot_command", "offset": 0, "length": 16}]),
    );
    assert_eq!(
        (other_bot.text.as_str(), other_bot.was_mentioned),
        ("/status@OtherBot", false)
    );
    let bare = group_text(
        "/status",
        json!([{"type": "bot_command", "offset": 0, "length": 7}]),
    );
    assert_eq!((bare.text.as_str(), bare.was_mentioned), ("/status", false));
    let two = group_text(
        "é /a@gsvbot /b@gsvbot",
        json!([{"type": "bot_command", "offset": 2, "length": 9},
               {"type": "bot_command", "offset": 12, "length": 9}]),
    );
    assert_eq!(two.text, "é /a /b");
}

#[test]
fn files_are_named_by_their_file_id() {
    let m = message_of(json!({"update_id": 7, "message": {
        "message_id": 11, "date": 1, "from": ann(), "chat": {"id": 42, "type": "private"},
        "photo": [
            {"file_id": "small", "file_unique_id": "s", "width": 90, "height": 60, "file_size": 1000},
            {"file_id": "large", "file_unique_id": "l", "width": 1280, "height": 853, "file_size": 90000},
            {"file_id": "mid", "file_unique_id": "m", "width": 320, "height": 213, "file_size": 9000}
        ],
        "caption": "our *cat*", "caption_entities": [{"type": "bold", "offset": 4, "length": 5}]}}));
    assert_eq!(m.text, "our *cat*");
    assert_eq!(m.media.len(), 1);
    assert_eq!(m.media[0].id.as_deref(), Some("large"));
    assert_eq!(
        (
            m.media[0].media_type,
            m.media[0].mime_type.as_str(),
            m.media[0].size
        ),
        (MediaType::Image, "image/jpeg", Some(90000))
    );
    let voice = message_of(json!({"update_id": 8, "message": {
        "message_id": 12, "date": 1, "from": ann(), "chat": {"id": 42, "type": "private"},
        "voice": {"file_id": "v1", "file_unique_id": "v", "duration": 3, "mime_type": "audio/ogg", "file_size": 5000}}}));
    assert_eq!(voice.text, "");
    assert_eq!(
        voice.media[0],
        ChannelMedia {
            media_type: MediaType::Audio,
            mime_type: "audio/ogg".into(),
            data: None,
            r2_key: None,
            id: Some("v1".into()),
            url: None,
            filename: None,
            size: Some(5000),
            duration: Some(3.0),
        }
    );
    let document = message_of(json!({"update_id": 9, "message": {
        "message_id": 13, "date": 1, "from": ann(), "chat": {"id": 42, "type": "private"},
        "document": {"file_id": "d1", "file_unique_id": "d", "file_name": "scan.png", "mime_type": "image/png"}}}));
    assert_eq!(document.media[0].media_type, MediaType::Image);
    assert_eq!(document.media[0].filename.as_deref(), Some("scan.png"));
    for (field, kind, mime) in [
        ("audio", MediaType::Audio, "audio/mpeg"),
        ("video", MediaType::Video, "video/mp4"),
        ("document", MediaType::Document, "application/octet-stream"),
    ] {
        let m = message_of(json!({"update_id": 10, "message": {
            "message_id": 14, "date": 1, "from": ann(), "chat": {"id": 42, "type": "private"},
            field: {"file_id": "f", "file_unique_id": "u"}}}));
        assert_eq!(
            (m.media[0].media_type, m.media[0].mime_type.as_str()),
            (kind, mime)
        );
    }
}

#[test]
fn what_is_not_a_message_for_the_gateway() {
    let sticker = handled(json!({"update_id": 11, "message": {
        "message_id": 15, "date": 1, "from": ann(), "chat": {"id": 42, "type": "private"},
        "sticker": {"file_id": "s", "file_unique_id": "s", "type": "regular", "width": 1, "height": 1,
                    "is_animated": false, "is_video": false}}}));
    assert!(matches!(sticker, Handled::Skip(why) if why.contains("no text or file")));
    let channel = handled(json!({"update_id": 12, "message": {
        "message_id": 1, "date": 1, "chat": {"id": -100, "type": "channel"}, "text": "post"}}));
    assert!(matches!(channel, Handled::Skip(why) if why.contains("\"channel\" chat")));
    let edited = handled(json!({"update_id": 13, "edited_message": {
        "message_id": 10, "date": 1, "edit_date": 2, "chat": {"id": 42, "type": "private"}, "text": "fixed"}}));
    assert_eq!(edited, Handled::Edited);
    let poll = handled(json!({"update_id": 14, "poll": {"id": "p"}}));
    assert_eq!(
        poll,
        Handled::Skip("update 14 has nothing the channel handles".into())
    );
}

#[test]
fn a_pressed_button_is_the_presser_writing_its_answer() {
    let pressed = handled(json!({"update_id": 15, "callback_query": {
        "id": "4382bfdwdsb323b2d9", "from": ann(), "chat_instance": "ci", "data": "/approve K7MX",
        "message": {"message_id": 99, "date": 1, "from": {"id": BOT, "is_bot": true, "first_name": "Gsv"},
                    "chat": {"id": -1001234, "type": "supergroup", "title": "Team"},
                    "message_thread_id": 5, "is_topic_message": true, "text": "Approve?"}}}));
    let Handled::Callback { query_id, message } = pressed else {
        panic!("not a callback: {pressed:?}");
    };
    assert_eq!(query_id, "4382bfdwdsb323b2d9");
    let m = *message.unwrap();
    assert_eq!(m.message_id, "cb:4382bfdwdsb323b2d9");
    assert_eq!(m.text, "/approve K7MX");
    assert_eq!(
        (m.peer.kind, m.peer.id.as_str()),
        (PeerKind::Group, "-1001234")
    );
    assert_eq!(m.peer.thread_id.as_deref(), Some("5"));
    assert_eq!(m.sender.unwrap().id, "42");
    assert_eq!(m.timestamp, Some(1_750_000_000_123));
    assert!(m.was_mentioned);
    // No data, or no message to place it in: answered, nothing handed over.
    let empty = handled(json!({"update_id": 16, "callback_query": {
        "id": "q2", "from": ann(), "chat_instance": "ci", "inline_message_id": "im"}}));
    assert_eq!(
        empty,
        Handled::Callback {
            query_id: "q2".into(),
            message: None
        }
    );
}
