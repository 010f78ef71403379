use super::*;
use whatsapp_rust::waproto::buffa::MessageField;

fn env(chat: &str, sender: &str) -> Envelope {
    Envelope {
        id: "ABC123".into(),
        chat: chat.into(),
        sender: sender.into(),
        sender_alt: None,
        from_me: false,
        push_name: "Ann".into(),
        timestamp: 1_700_000_000,
    }
}

fn me() -> Me {
    Me {
        phone: Some("15550001111".into()),
        lid: Some("98765".into()),
    }
}

fn text(t: &str) -> wa::Message {
    wa::Message {
        conversation: Some(t.into()),
        ..Default::default()
    }
}

fn mapped(n: Normalized) -> ChannelInboundMessage {
    match n {
        Normalized::Message(m) => *m,
        Normalized::Skip(why) => panic!("skipped: {why}"),
    }
}

#[test]
fn a_dm_comes_from_the_senders_number() {
    let m = mapped(normalize(
        &text("hello"),
        &env("15551234567@s.whatsapp.net", "15551234567@s.whatsapp.net"),
        &me(),
        "r",
    ));
    assert_eq!(
        m,
        ChannelInboundMessage {
            message_id: "ABC123".into(),
            peer: ChannelPeer {
                kind: PeerKind::Dm,
                id: "+15551234567".into(),
                name: Some("Ann".into()),
                handle: None,
                thread_id: None,
            },
            sender: Some(ChannelSender {
                id: "+15551234567".into(),
                name: Some("Ann".into()),
                handle: None,
                is_bot: None,
            }),
            text: "hello".into(),
            media: vec![],
            reply_to_id: None,
            reply_to_text: None,
            timestamp: Some(1_700_000_000_000),
            was_mentioned: true,
            is_reply_to_bot: Some(false),
        }
    );
}

#[test]
fn a_lid_sender_is_named_by_its_number_when_whatsapp_gives_it() {
    let mut e = env("4455@lid", "4455@lid");
    e.sender_alt = Some("15551234567@s.whatsapp.net".into());
    let m = mapped(normalize(&text("hi"), &e, &me(), "r"));
    assert_eq!(
        (m.peer.id.as_str(), m.sender.map(|s| s.id)),
        ("+15551234567", Some("+15551234567".into()))
    );
    let m = mapped(normalize(
        &text("hi"),
        &env("4455@lid", "4455@lid"),
        &me(),
        "r",
    ));
    assert_eq!(m.peer.id, "4455@lid");
}

#[test]
fn in_groups_only_mentions_and_replies_address_the_number() {
    let e = env("1203630@g.us", "15551234567@s.whatsapp.net");
    let m = mapped(normalize(&text("chatting"), &e, &me(), "r"));
    assert_eq!(
        (
            m.peer.kind,
            m.peer.id.as_str(),
            m.was_mentioned,
            m.is_reply_to_bot
        ),
        (PeerKind::Group, "1203630@g.us", false, Some(false))
    );
    let mention = |jid: &str| wa::Message {
        extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
            text: Some("@agent what's up".into()),
            context_info: MessageField::some(wa::ContextInfo {
                mentioned_jid: vec![jid.into()],
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    for jid in ["15550001111@s.whatsapp.net", "98765@lid"] {
        assert!(
            mapped(normalize(&mention(jid), &e, &me(), "r")).was_mentioned,
            "{jid}"
        );
    }
    assert!(
        !mapped(normalize(
            &mention("15559999999@s.whatsapp.net"),
            &e,
            &me(),
            "r"
        ))
        .was_mentioned
    );
    let reply = wa::Message {
        extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
            text: Some("and then?".into()),
            context_info: MessageField::some(wa::ContextInfo {
                stanza_id: Some("3EB0AA".into()),
                participant: Some("15550001111:4@s.whatsapp.net".into()),
                quoted_message: MessageField::some(text("it rained")),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let m = mapped(normalize(&reply, &e, &me(), "r"));
    assert_eq!(
        (
            m.reply_to_id.as_deref(),
            m.reply_to_text.as_deref(),
            m.is_reply_to_bot
        ),
        (Some("3EB0AA"), Some("it rained"), Some(true))
    );
}

#[test]
fn files_are_named_by_the_kept_message() {
    let image = wa::Message {
        image_message: MessageField::some(wa::message::ImageMessage {
            caption: Some("look".into()),
            mimetype: Some("image/jpeg".into()),
            file_length: Some(2048),
            ..Default::default()
        }),
        ..Default::default()
    };
    let m = mapped(normalize(
        &image,
        &env("1@s.whatsapp.net", "1@s.whatsapp.net"),
        &me(),
        "1@s.whatsapp.net/ABC123",
    ));
    assert_eq!(m.text, "look");
    assert_eq!(
        m.media,
        vec![ChannelMedia {
            media_type: MediaType::Image,
            mime_type: "image/jpeg".into(),
            data: None,
            r2_key: None,
            id: Some("1@s.whatsapp.net/ABC123".into()),
            url: None,
            filename: None,
            size: Some(2048),
            duration: None,
        }]
    );
    let voice = wa::Message {
        audio_message: MessageField::some(wa::message::AudioMessage {
            mimetype: Some("audio/ogg; codecs=opus".into()),
            ptt: Some(true),
            seconds: Some(4),
            ..Default::default()
        }),
        ..Default::default()
    };
    let m = mapped(normalize(
        &voice,
        &env("1@s.whatsapp.net", "1@s.whatsapp.net"),
        &me(),
        "x",
    ));
    assert_eq!(
        (m.text.as_str(), m.media[0].media_type, m.media[0].duration),
        ("", MediaType::Audio, Some(4.0))
    );
}

#[test]
fn what_is_not_for_the_agent_is_skipped() {
    let mut own = env("1@s.whatsapp.net", "15550001111@s.whatsapp.net");
    own.from_me = true;
    let reaction = wa::Message {
        reaction_message: MessageField::some(wa::message::ReactionMessage::default()),
        ..Default::default()
    };
    let cases = [
        (text("mine"), own),
        (
            text("a status"),
            env("status@broadcast", "1@s.whatsapp.net"),
        ),
        (reaction, env("1@s.whatsapp.net", "1@s.whatsapp.net")),
        (text("   "), env("1@s.whatsapp.net", "1@s.whatsapp.net")),
    ];
    for (message, e) in cases {
        assert!(
            matches!(normalize(&message, &e, &me(), "r"), Normalized::Skip(_)),
            "{e:?}"
        );
    }
}

#[test]
fn peers_become_jids() {
    assert_eq!(
        peer_jid("+1 (555) 123-4567"),
        Ok("15551234567@s.whatsapp.net".into())
    );
    assert_eq!(
        peer_jid("15551234567"),
        Ok("15551234567@s.whatsapp.net".into())
    );
    assert_eq!(peer_jid("1203630@g.us"), Ok("1203630@g.us".into()));
    assert_eq!(peer_jid("4455@lid"), Ok("4455@lid".into()));
    assert!(peer_jid("ann").is_err());
    assert!(peer_jid("1@newsletter").is_err());
    assert_eq!(
        person_id("15551234567:3@s.whatsapp.net", None),
        "+15551234567"
    );
}
