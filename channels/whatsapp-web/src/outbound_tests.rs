use super::*;

#[test]
fn a_piece_keeps_its_id_across_retries() {
    let id = message_id("run-1:0");
    assert_eq!(id, message_id("run-1:0"));
    assert_ne!(id, message_id("run-1:1"));
    assert_eq!(id.len(), 22);
    assert!(id.starts_with("3EB0"));
    assert!(id[4..]
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_lowercase()));
}

#[test]
fn a_reply_quotes_the_message_it_answers() {
    assert_eq!(
        text("hi", None),
        wa::Message {
            conversation: Some("hi".into()),
            ..Default::default()
        }
    );
    let asked = wa::Message {
        conversation: Some("what time is it?".into()),
        ..Default::default()
    };
    let quote = Quote {
        id: "ABCD".into(),
        participant: "15551234567@s.whatsapp.net".into(),
        message: Some(asked.clone()),
    };
    assert_eq!(
        text("noon", Some(&quote)),
        wa::Message {
            extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
                text: Some("noon".into()),
                context_info: MessageField::some(wa::ContextInfo {
                    stanza_id: Some("ABCD".into()),
                    participant: Some("15551234567@s.whatsapp.net".into()),
                    quoted_message: MessageField::some(asked),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    );
}

#[test]
fn files_go_as_their_kind() {
    let up = Uploaded {
        url: "https://mmg.whatsapp.net/x".into(),
        direct_path: "/v/t62/x".into(),
        media_key: [1; 32],
        file_enc_sha256: [2; 32],
        file_sha256: [3; 32],
        file_length: 10,
        media_key_timestamp: 1_700_000_000,
        streaming_sidecar: Some(vec![9; 10]),
    };
    let voice = file(
        MediaType::Audio,
        "audio/ogg; codecs=opus",
        "a.ogg",
        &up,
        None,
        None,
    );
    let audio = voice.audio_message.as_option().expect("audio");
    assert_eq!(
        (
            audio.ptt,
            audio.mimetype.as_deref(),
            audio.file_length,
            audio.streaming_sidecar.as_deref()
        ),
        (
            Some(true),
            Some("audio/ogg; codecs=opus"),
            Some(10),
            Some(&[9u8; 10][..])
        )
    );
    let clip = file(MediaType::Video, "video/mp4", "c.mp4", &up, None, None);
    assert_eq!(
        clip.video_message
            .as_option()
            .expect("video")
            .streaming_sidecar
            .as_deref(),
        Some(&[9u8; 10][..])
    );
    let track = file(MediaType::Audio, "audio/mpeg", "a.mp3", &up, None, None);
    assert_eq!(
        track.audio_message.as_option().expect("audio").ptt,
        Some(false)
    );
    let doc = file(
        MediaType::Document,
        "application/pdf",
        "r.pdf",
        &up,
        Some("the report"),
        None,
    );
    let d = doc.document_message.as_option().expect("document");
    assert_eq!(
        (
            d.file_name.as_deref(),
            d.caption.as_deref(),
            d.media_key.as_deref()
        ),
        (Some("r.pdf"), Some("the report"), Some(&[1u8; 32][..]))
    );
    let image = file(MediaType::Image, "image/png", "p.png", &up, Some(""), None);
    let i = image.image_message.as_option().expect("image");
    assert_eq!(
        (i.caption.as_deref(), i.direct_path.as_deref()),
        (None, Some("/v/t62/x"))
    );
    // A GIF goes as a document (an image message would show its first frame).
    assert!(
        file(MediaType::Image, "image/gif", "g.gif", &up, None, None)
            .document_message
            .is_set()
    );
}
