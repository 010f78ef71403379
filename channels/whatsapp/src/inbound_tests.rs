use super::*;
use serde_json::json;

fn ann() -> Vec<Contact> {
    serde_json::from_value(json!([{"profile": {"name": "Ann"}, "wa_id": "16505551234"}])).unwrap()
}

fn from_ann(id: &str, body: serde_json::Value) -> serde_json::Value {
    let mut m = json!({"from": "16505551234", "id": id, "timestamp": "1749416383"});
    for (k, v) in body.as_object().unwrap() {
        m[k] = v.clone();
    }
    m
}

/// The message Ann's text `text` becomes.
fn expected(id: &str, text: &str) -> ChannelInboundMessage {
    ChannelInboundMessage {
        message_id: id.into(),
        peer: ChannelPeer {
            kind: PeerKind::Dm,
            id: "+16505551234".into(),
            name: Some("Ann".into()),
            handle: None,
            thread_id: None,
        },
        sender: Some(ChannelSender {
            id: "+16505551234".into(),
            name: Some("Ann".into()),
            handle: None,
            is_bot: Some(false),
        }),
        text: text.into(),
        media: vec![],
        reply_to_id: None,
        reply_to_text: None,
        timestamp: Some(1_749_416_383_000),
        was_mentioned: false,
        is_reply_to_bot: None,
    }
}

fn message(n: Normalized) -> ChannelInboundMessage {
    match n {
        Normalized::Message(m) => *m,
        Normalized::Skip(why) => panic!("skipped: {why}"),
    }
}

#[test]
fn a_text_is_a_dm_from_the_e164_sender() {
    let raw = from_ann(
        "wamid.A",
        json!({"type": "text", "text": {"body": "Does it come in another color?"}}),
    );
    assert_eq!(
        message(normalize(&raw, &ann())),
        expected("wamid.A", "Does it come in another color?")
    );
}

#[test]
fn a_reply_names_the_message_it_answers() {
    let raw = from_ann(
        "wamid.B",
        json!({"type": "text", "text": {"body": "yes"},
               "context": {"from": "15550783881", "id": "wamid.OUT1"}}),
    );
    let mut want = expected("wamid.B", "yes");
    want.reply_to_id = Some("wamid.OUT1".into());
    assert_eq!(message(normalize(&raw, &ann())), want);
}

#[test]
fn media_arrive_by_id_with_their_caption() {
    let cases = [
        (
            json!({"type": "image", "image": {"caption": "Taj Mahal", "mime_type": "image/jpeg",
                   "sha256": "SfInY0gGKTsJlUWbwxC1k+FAD0FZHvzwfpvO0zX0GUI=", "id": "1003383421387256"}}),
            "Taj Mahal",
            ChannelMedia {
                data: None,
                r2_key: None,
                media_type: MediaType::Image,
                mime_type: "image/jpeg".into(),
                id: Some("1003383421387256".into()),
                url: None,
                filename: None,
                size: None,
                duration: None,
            },
        ),
        (
            json!({"type": "audio", "audio": {"mime_type": "audio/ogg; codecs=opus", "sha256": "x",
                   "id": "2001", "voice": true}}),
            "",
            ChannelMedia {
                data: None,
                r2_key: None,
                media_type: MediaType::Audio,
                mime_type: "audio/ogg; codecs=opus".into(),
                id: Some("2001".into()),
                url: None,
                filename: None,
                size: None,
                duration: None,
            },
        ),
        (
            json!({"type": "video", "video": {"caption": "My vacation video", "mime_type": "video/mp4",
                   "sha256": "x", "id": "3001"}}),
            "My vacation video",
            ChannelMedia {
                data: None,
                r2_key: None,
                media_type: MediaType::Video,
                mime_type: "video/mp4".into(),
                id: Some("3001".into()),
                url: None,
                filename: None,
                size: None,
                duration: None,
            },
        ),
        (
            json!({"type": "document", "document": {"caption": "March", "filename": "receipt.pdf",
                   "mime_type": "application/pdf", "sha256": "x", "id": "4001"}}),
            "March",
            ChannelMedia {
                data: None,
                r2_key: None,
                media_type: MediaType::Document,
                mime_type: "application/pdf".into(),
                id: Some("4001".into()),
                url: None,
                filename: Some("receipt.pdf".into()),
                size: None,
                duration: None,
            },
        ),
        (
            json!({"type": "sticker", "sticker": {"mime_type": "image/webp", "sha256": "x",
                   "id": "5001", "animated": false}}),
            "",
            ChannelMedia {
                data: None,
                r2_key: None,
                media_type: MediaType::Image,
                mime_type: "image/webp".into(),
                id: Some("5001".into()),
                url: None,
                filename: None,
                size: None,
                duration: None,
            },
        ),
    ];
    for (body, text, media) in cases {
        let raw = from_ann("wamid.M", body);
        let mut want = expected("wamid.M", text);
        want.media = vec![media];
        assert_eq!(message(normalize(&raw, &ann())), want);
    }
}

#[test]
fn a_location_and_choices_are_text() {
    let raw = from_ann(
        "wamid.L",
        json!({"type": "location", "location": {"address": "101 Forest Ave, Palo Alto, CA 94301",
               "latitude": 37.44221496582, "longitude": -122.16165924072,
               "name": "Philz Coffee", "url": "https://philzcoffee.com/"}}),
    );
    assert_eq!(
        message(normalize(&raw, &ann())).text,
        "[location: Philz Coffee — 101 Forest Ave, Palo Alto, CA 94301 — 37.442215, -122.161659 — https://philzcoffee.com/]"
    );
    let pin = from_ann(
        "wamid.P",
        json!({"type": "location", "location": {"latitude": 1.5, "longitude": 2.25}}),
    );
    assert_eq!(
        message(normalize(&pin, &ann())).text,
        "[location: 1.500000, 2.250000]"
    );
    let button = from_ann(
        "wamid.Q",
        json!({"type": "button", "context": {"from": "15550783881", "id": "wamid.T"},
               "button": {"payload": "Unsubscribe", "text": "Unsubscribe"}}),
    );
    let got = message(normalize(&button, &ann()));
    assert_eq!(
        (got.text.as_str(), got.reply_to_id.as_deref()),
        ("Unsubscribe", Some("wamid.T"))
    );
    let list = from_ann(
        "wamid.R",
        json!({"type": "interactive", "interactive": {"type": "list_reply",
               "list_reply": {"id": "r1", "title": "Tuesday", "description": "after 5"}}}),
    );
    assert_eq!(message(normalize(&list, &ann())).text, "Tuesday (after 5)");
    let card = from_ann(
        "wamid.C",
        json!({"type": "contacts", "contacts": [{"name": {"formatted_name": "Bob Li", "first_name": "Bob"},
               "phones": [{"phone": "+1 555 0100", "wa_id": "15550100", "type": "CELL"}]}]}),
    );
    assert_eq!(
        message(normalize(&card, &ann())).text,
        "[shared contact: Bob Li, +1 555 0100]"
    );
}

#[test]
fn reactions_groups_and_unknown_types_are_skipped_with_a_reason() {
    let cases = [
        (
            from_ann(
                "wamid.X",
                json!({"type": "reaction", "reaction": {"message_id": "wamid.O", "emoji": "👍"}}),
            ),
            "wamid.X: a reaction (not a message to answer)",
        ),
        (
            from_ann(
                "wamid.Y",
                json!({"type": "unsupported", "errors": [{"code": 131051}]}),
            ),
            "wamid.Y: a \"unsupported\" message (not handled)",
        ),
        (
            from_ann(
                "wamid.G",
                json!({"type": "text", "group_id": "g1", "text": {"body": "hi all"}}),
            ),
            "wamid.G: a group message (groups are not handled)",
        ),
        (
            from_ann("wamid.E", json!({"type": "image"})),
            "wamid.E: a image message without its image object",
        ),
    ];
    for (raw, why) in cases {
        assert_eq!(normalize(&raw, &ann()), Normalized::Skip(why.into()));
    }
    match normalize(&json!({"id": "no-from"}), &ann()) {
        Normalized::Skip(why) => {
            assert!(why.starts_with("a message that could not be read"), "{why}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn without_a_matching_contact_the_sender_has_no_name() {
    let raw = from_ann("wamid.N", json!({"type": "text", "text": {"body": "hi"}}));
    let mut want = expected("wamid.N", "hi");
    want.peer.name = None;
    want.sender = want.sender.map(|s| ChannelSender { name: None, ..s });
    assert_eq!(message(normalize(&raw, &[])), want);
}
