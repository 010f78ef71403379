use super::cache::{MediaCache, Prepared};
use super::hydrate::{
    apply, plan, prepare, set_transcript, untranscribed, Limits, Loaded, Plan, ToRead,
};
use super::*;
use crate::config::Config;
use gsv_protocol::{Attachment, ContentBlock, Message, UserContent, UserMessage};
use serde_json::json;
use std::collections::HashMap;
use std::rc::Rc;

/// A PNG header of `w`×`h` pixels (signature and IHDR).
pub(crate) fn png(w: u32, h: u32) -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&h.to_be_bytes());
    b.extend_from_slice(&[8, 6, 0, 0, 0]);
    b
}

fn jpeg(w: u16, h: u16) -> Vec<u8> {
    let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];
    b.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    b.extend_from_slice(&[0xFF, 0xDB, 0x00, 0x04, 0x00, 0x00]);
    b.extend_from_slice(&[0xFF, 0xC0, 0x00, 0x11, 0x08]);
    b.extend_from_slice(&h.to_be_bytes());
    b.extend_from_slice(&w.to_be_bytes());
    b.extend_from_slice(&[3; 9]);
    b
}

fn image_block(key: &str, size: u64) -> ContentBlock {
    ContentBlock::Image {
        data: None,
        mime_type: "image/jpeg".into(),
        r2_key: Some(key.into()),
        filename: Some(format!("{key}.jpg")),
        size: Some(size),
    }
}

fn attachment(kind: MediaType, mime: &str, key: &str, name: Option<&str>) -> Attachment {
    Attachment {
        kind,
        mime_type: mime.into(),
        r2_key: key.into(),
        filename: name.map(str::to_string),
        size: Some(2048),
        duration: None,
        transcript: None,
        transcript_error: None,
    }
}

fn user(blocks: Vec<ContentBlock>) -> Message {
    Message::User(UserMessage {
        content: UserContent::Blocks(blocks),
        timestamp: 1,
        context: None,
    })
}

fn blocks_of(m: &Message) -> Vec<ContentBlock> {
    match m {
        Message::User(UserMessage {
            content: UserContent::Blocks(b),
            ..
        }) => b.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn extensions_follow_the_seed_table() {
    let cases = [
        ("image/jpeg", "jpg"),
        ("IMAGE/PNG; q=1", "png"),
        ("audio/mp3", "mp3"),
        ("audio/m4a", "m4a"),
        ("audio/ogg; codecs=opus", "ogg"),
        ("video/webm", "webm"),
        ("video/quicktime", "mov"),
        ("application/pdf", "pdf"),
        (
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "docx",
        ),
        ("text/plain", "txt"),
        ("text/markdown", "md"),
        ("application/x-unknown", "bin"),
        ("", "bin"),
    ];
    for (m, ext) in cases {
        assert_eq!(mime::extension(m), ext, "{m}");
    }
}

#[test]
fn kinds_names_and_text_documents() {
    use mime::*;
    assert_eq!(
        [
            media_type("image/webp"),
            media_type("image/svg+xml"),
            media_type("audio/ogg; codecs=opus"),
            media_type("video/mp4"),
            media_type("application/pdf"),
        ],
        [
            MediaType::Image,
            MediaType::Document,
            MediaType::Audio,
            MediaType::Video,
            MediaType::Document
        ]
    );
    assert_eq!(from_filename("Report.PDF"), Some("application/pdf"));
    assert_eq!(from_filename("main.rs"), Some("text/plain"));
    assert_eq!(from_filename("noext"), None);
    assert_eq!(
        resolve(Some("application/octet-stream"), Some("notes.md")),
        "text/markdown"
    );
    assert_eq!(resolve(Some("image/PNG"), Some("x.jpg")), "image/png");
    assert_eq!(resolve(None, Some("x.zzz")), "application/octet-stream");
    assert!(is_text_like("text/csv", None));
    assert!(is_text_like("application/json", None));
    assert!(is_text_like("application/octet-stream", Some("lib.py")));
    assert!(is_text_like("application/vnd.api+json", None));
    assert!(!is_text_like("application/pdf", Some("a.pdf")));
    assert!(!is_text_like("application/zip", None));
}

#[test]
fn keys_stay_in_their_session() {
    use key::*;
    let k = media_key("agent:main:main", "9b2e", "image/jpeg");
    assert_eq!(k, "media/agent:main:main/9b2e.jpg");
    assert!(in_session(&k, "agent:main:main"));
    assert!(!in_session(&k, "agent:main:discord:dm:81"));
    assert!(!in_session(
        "media/agent:main:main/../x/y.jpg",
        "agent:main:main"
    ));
    assert!(!in_session(
        "media/agent:main:main/sub/y.jpg",
        "agent:main:main"
    ));
    assert!(!in_session("media/agent:main:main/", "agent:main:main"));
    assert!(is_media_key(&k));
    assert!(!is_media_key("agents/main/SOUL.md"));
    assert!(!is_media_key("media/x/../../agents/main/SOUL.md"));
    assert_eq!(session_prefix("agent:main:main"), "media/agent:main:main/");
    assert_eq!(
        query_pairs(
            "http://h/media/upload?sessionKey=agent%3Amain%3Amain&filename=my+photo%21.jpg&x#f"
        ),
        vec![
            ("sessionKey".to_string(), "agent:main:main".to_string()),
            ("filename".to_string(), "my photo!.jpg".to_string()),
            ("x".to_string(), String::new()),
        ]
    );
    assert_eq!(
        query_pairs("http://h/p?a=%zz%4"),
        vec![("a".to_string(), "%zz%4".to_string())]
    );
    assert_eq!(query_pairs("http://h/p"), vec![]);
}

#[test]
fn sizes_and_the_senders_reply() {
    assert_eq!(
        [
            size_text(830),
            size_text(14_540),
            size_text(30 * 1024 * 1024)
        ],
        ["830 B", "14.2 KB", "30.0 MB"]
    );
    assert_eq!(
        too_large_reply(Some("movie.mp4"), 30 * 1024 * 1024),
        "Sorry, I couldn't take movie.mp4: it is 30.0 MB and I can take files up to 25.0 MB."
    );
    assert_eq!(
        too_large_reply(None, 26 * 1024 * 1024),
        "Sorry, I couldn't take your file: it is 26.0 MB and I can take files up to 25.0 MB."
    );
}

#[test]
fn the_user_message_names_files_by_key() {
    let photo = Attached {
        kind: MediaType::Image,
        mime_type: "image/jpeg".into(),
        filename: None,
        size: Some(1000),
        duration: None,
        r2_key: Some("media/s/a.jpg".into()),
        refused: None,
    };
    let voice = Attached {
        kind: MediaType::Audio,
        mime_type: "audio/ogg".into(),
        filename: None,
        size: Some(5000),
        duration: Some(3.0),
        r2_key: Some("media/s/b.ogg".into()),
        refused: None,
    };
    let big = Attached {
        kind: MediaType::Video,
        mime_type: "video/mp4".into(),
        filename: Some("movie.mp4".into()),
        size: Some(30 * 1024 * 1024),
        duration: None,
        r2_key: None,
        refused: Some(too_large_reason(30 * 1024 * 1024)),
    };
    assert_eq!(
        message::user_content("hi", &[]),
        UserContent::Text("hi".into())
    );
    assert_eq!(
        message::user_content("look", &[photo, voice, big]),
        UserContent::Blocks(vec![
            ContentBlock::Text {
                text: "look".into()
            },
            ContentBlock::Image {
                data: None,
                mime_type: "image/jpeg".into(),
                r2_key: Some("media/s/a.jpg".into()),
                filename: None,
                size: Some(1000),
            },
            ContentBlock::Attachment(Attachment {
                kind: MediaType::Audio,
                mime_type: "audio/ogg".into(),
                r2_key: "media/s/b.ogg".into(),
                filename: None,
                size: Some(5000),
                duration: Some(3.0),
                transcript: None,
                transcript_error: None,
            }),
            ContentBlock::Text {
                text: "[Video attached but not kept: movie.mp4 (video/mp4, 30.0 MB): 30.0 MB is \
                       larger than the 25.0 MB limit]"
                    .into()
            },
        ])
    );
}

#[test]
fn images_are_sniffed_and_measured() {
    use image::*;
    assert_eq!(sniff(&png(640, 480)), Some("image/png"));
    assert_eq!(dimensions(&png(640, 480)), Some((640, 480)));
    assert_eq!(sniff(&jpeg(1024, 768)), Some("image/jpeg"));
    assert_eq!(dimensions(&jpeg(1024, 768)), Some((1024, 768)));
    let mut gif = b"GIF89a".to_vec();
    gif.extend_from_slice(&[0x20, 0x03, 0x58, 0x02]);
    assert_eq!(
        (sniff(&gif), dimensions(&gif)),
        (Some("image/gif"), Some((800, 600)))
    );
    let mut webp = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0".to_vec();
    webp.extend_from_slice(&[0x3F, 0x1F, 0x00, 0x1F, 0x40, 0x00]);
    assert_eq!(
        (sniff(&webp), dimensions(&webp)),
        (Some("image/webp"), Some((8000, 16416)))
    );
    assert_eq!(sniff(b"%PDF-1.7"), None);
    assert_eq!(dimensions(&[0xFF, 0xD8, 0xFF]), None);
}

#[test]
fn the_cache_drops_the_least_recently_used() {
    let text = |n: usize| Prepared::Text(Rc::from("x".repeat(n)));
    let mut cache = MediaCache::new(100);
    cache.put("a", text(40));
    cache.put("b", text(40));
    // `a` used: `b` is now the least recently used.
    assert!(cache.get("a").is_some());
    cache.put("c", text(40));
    assert_eq!(
        (
            cache.get("a").is_some(),
            cache.get("b").is_some(),
            cache.get("c").is_some()
        ),
        (true, false, true)
    );
    assert_eq!((cache.bytes(), cache.len()), (80, 2));
    // Over half the budget: not kept.
    cache.put("huge", text(60));
    assert!(cache.get("huge").is_none());
    cache.put("media/s1/x", text(10));
    cache.put("media/s2/y", text(10));
    cache.remove_prefix("media/s1/");
    assert_eq!(
        (cache.get("media/s1/x"), cache.get("media/s2/y").is_some()),
        (None, true)
    );
}

fn keys(p: &Plan) -> Vec<&str> {
    p.read.iter().map(|r| r.key.as_str()).collect()
}

fn anthropic() -> Limits {
    Limits::for_api("anthropic-messages", 100)
}

fn prepared_png(w: u32, h: u32) -> Loaded {
    let mut bytes = png(w, h);
    bytes.resize(1000, 0);
    Ok(Some(prepare(MediaType::Image, "image/jpeg", None, &bytes)))
}

#[test]
fn images_go_as_image_blocks_with_their_real_type() {
    let history = vec![user(vec![
        ContentBlock::Text { text: "see".into() },
        image_block("k1", 1000),
    ])];
    let limits = anthropic();
    let p = plan(&history, &limits);
    assert_eq!(
        p,
        Plan {
            read: vec![ToRead {
                key: "k1".into(),
                kind: MediaType::Image,
                mime: "image/jpeg".into(),
                filename: Some("k1.jpg".into())
            }],
            skipped: HashMap::new()
        }
    );
    let loaded = HashMap::from([("k1".to_string(), prepared_png(10, 10))]);
    let sent = apply(&history, &p, &loaded, &limits);
    let mut bytes = png(10, 10);
    bytes.resize(1000, 0);
    assert_eq!(
        blocks_of(&sent[0])[1],
        ContentBlock::Image {
            // WhatsApp said JPEG; the bytes are PNG, and so is what is sent.
            data: Some(hydrate::base64_encode(&bytes)),
            mime_type: "image/png".into(),
            r2_key: Some("k1".into()),
            filename: Some("k1.jpg".into()),
            size: Some(1000),
        }
    );
    // The stored history is untouched.
    assert_eq!(blocks_of(&history[0])[1], image_block("k1", 1000));
}

#[test]
fn images_past_the_limits_become_notes() {
    let limits = anthropic();
    let big = 6 * 1024 * 1024;
    let history = vec![user(vec![
        image_block("huge", big),
        image_block("wide", 1000),
        image_block("gone", 1000),
        image_block("broken", 1000),
    ])];
    let p = plan(&history, &limits);
    assert_eq!(keys(&p), ["broken", "gone", "wide"]);
    let loaded = HashMap::from([
        ("wide".to_string(), prepared_png(9000, 100)),
        ("gone".to_string(), Ok(None)),
        ("broken".to_string(), Err("R2 timed out".to_string())),
    ]);
    let texts: Vec<String> = blocks_of(&apply(&history, &p, &loaded, &limits)[0])
        .into_iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        texts,
        [
            "[Image attached but not shown to you: huge.jpg (image/jpeg, 6.0 MB): 6.0 MB is larger \
             than the 5.0 MB Anthropic takes]",
            "[Image attached but not shown to you: wide.jpg (image/png, 1000 B): 9000×100 pixels \
             is larger than the 8000×8000 Anthropic takes]",
            "[Image no longer available: gone.jpg]",
            "[Image attached but could not be read just now: broken.jpg (image/jpeg, 1000 B): R2 \
             timed out]",
        ]
    );
    // The same image is fine for OpenAI-compatible APIs (no side limit).
    let openai = Limits::for_api("openai-completions", 100);
    let sent = apply(&history, &plan(&history, &openai), &loaded, &openai);
    assert!(matches!(
        blocks_of(&sent[0])[1],
        ContentBlock::Image { data: Some(_), .. }
    ));
}

#[test]
fn only_the_newest_images_go_with_a_request() {
    let limits = Limits {
        max_images: 2,
        ..anthropic()
    };
    let history: Vec<Message> = (0..4)
        .map(|i| user(vec![image_block(&format!("k{i}"), 100)]))
        .collect();
    let p = plan(&history, &limits);
    assert_eq!(keys(&p), ["k3", "k2"]);
    assert_eq!(
        p.skipped.get("k0").map(String::as_str),
        Some(
            "sent earlier in the conversation; only the 2 most recent images go with each request"
        )
    );
    // A byte budget stops them too.
    let limits = Limits {
        max_total_image_bytes: 150,
        ..anthropic()
    };
    let p = plan(&history, &limits);
    assert_eq!(keys(&p), ["k3"]);
    assert_eq!(
        p.skipped.get("k2").map(String::as_str),
        Some("sent earlier in the conversation; the newer images fill this request's size budget")
    );
}

#[test]
fn audio_video_and_documents_become_text() {
    let mut voice = attachment(MediaType::Audio, "audio/ogg", "v", None);
    voice.transcript = Some(" buy milk ".into());
    let mut song = attachment(MediaType::Audio, "audio/mpeg", "s", Some("song.mp3"));
    song.transcript_error = Some("the transcription service answered 500: down".into());
    let mut clip = attachment(MediaType::Video, "video/mp4", "c", Some("clip.mp4"));
    clip.duration = Some(74.4);
    let notes_md = attachment(MediaType::Document, "text/markdown", "n", Some("notes.md"));
    let pdf = attachment(MediaType::Document, "application/pdf", "p", Some("a.pdf"));
    let lost = attachment(MediaType::Document, "text/csv", "l", Some("t.csv"));
    let history = vec![user(
        [voice, song, clip, notes_md, pdf, lost]
            .into_iter()
            .map(ContentBlock::Attachment)
            .collect(),
    )];
    let limits = Limits::for_api("anthropic-messages", 10);
    let p = plan(&history, &limits);
    assert_eq!(keys(&p), ["l", "n"]);
    let loaded: HashMap<String, Loaded> = HashMap::from([
        (
            "n".to_string(),
            Ok(Some(prepare(
                MediaType::Document,
                "text/markdown",
                Some("notes.md"),
                b"# Plan\n<<<x>>> 0123456789",
            ))),
        ),
        ("l".to_string(), Ok(None)),
    ]);
    let texts: Vec<String> = blocks_of(&apply(&history, &p, &loaded, &limits)[0])
        .into_iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        texts,
        [
            "[Voice message transcription: buy milk]".to_string(),
            "[Audio received, transcription unavailable: song.mp3 (audio/mpeg, 2.0 KB): the \
             transcription service answered 500: down]"
                .into(),
            "[Video attached: clip.mp4 (video/mp4, 2.0 KB, 1:14). You cannot watch videos here; \
             if its content matters, ask the sender to describe it or to send a screenshot.]"
                .into(),
            "[Document attached: notes.md (text/markdown, 2.0 KB)]\n<<<document>>>\n# Plan\n‹‹‹\n\
             <<<end-document>>>\n[… cut at 10 of 25 characters (tools.maxResultChars)]"
                .into(),
            "[Document attached: a.pdf (application/pdf, 2.0 KB): its text cannot be read here \
             (PDF text extraction is not available in the gateway); ask the sender to paste the \
             part that matters]"
                .into(),
            "[Document no longer available: t.csv (text/csv, 2.0 KB)]".into(),
        ]
    );
}

#[test]
fn transcripts_are_written_into_the_stored_message_once() {
    let voice = attachment(MediaType::Audio, "audio/ogg", "v", None);
    let mut other = attachment(MediaType::Audio, "audio/ogg", "w", None);
    other.transcript = Some("done".into());
    let mut history = vec![user(vec![
        ContentBlock::Attachment(voice.clone()),
        ContentBlock::Attachment(other),
    ])];
    assert_eq!(untranscribed(&history), vec![voice]);
    assert!(set_transcript(&mut history[0], "v", &Ok("hello".into())));
    assert!(!set_transcript(&mut history[0], "nope", &Ok("x".into())));
    assert!(untranscribed(&history).is_empty());
    let mut failed = vec![user(vec![ContentBlock::Attachment(attachment(
        MediaType::Audio,
        "audio/ogg",
        "f",
        None,
    ))])];
    set_transcript(&mut failed[0], "f", &Err("no service".into()));
    // A failure is not tried again.
    assert!(untranscribed(&failed).is_empty());
    assert_eq!(
        notes::audio(match &blocks_of(&failed[0])[0] {
            ContentBlock::Attachment(a) => a,
            _ => unreachable!(),
        }),
        "[Voice message received, transcription unavailable: (audio/ogg, 2.0 KB): no service]"
    );
}

#[test]
fn unknown_image_formats_are_named() {
    let p = prepare(
        MediaType::Image,
        "image/heic",
        Some("x.heic"),
        b"....ftypheic",
    );
    assert_eq!(
        p,
        Prepared::Unreadable(Rc::from(
            "its format (image/heic) is not one models take (JPEG, PNG, GIF, WebP)"
        ))
    );
}

#[test]
fn the_transcriber_follows_the_config() {
    use transcribe::*;
    let config = |v: serde_json::Value| Config::from_overrides(v);
    assert_eq!(
        transcriber(&config(json!({})), true),
        Ok(Transcriber::WorkersAi {
            model: WORKERS_AI_MODEL.into()
        })
    );
    assert_eq!(
        transcriber(&config(json!({"apiKeys": {"openai": "sk-1"}})), false),
        Ok(Transcriber::OpenAi {
            url: "https://api.openai.com/v1/audio/transcriptions".into(),
            api_key: Some("sk-1".into()),
            model: "whisper-1".into()
        })
    );
    assert_eq!(
        transcriber(
            &config(json!({"transcription": {"provider": "openai",
                "baseUrl": "http://127.0.0.1:9/v1/", "apiKey": "k", "model": "whisper-large"}}
            )),
            true
        ),
        Ok(Transcriber::OpenAi {
            url: "http://127.0.0.1:9/v1/audio/transcriptions".into(),
            api_key: Some("k".into()),
            model: "whisper-large".into()
        })
    );
    assert!(transcriber(&config(json!({})), false)
        .unwrap_err()
        .starts_with("no transcription service"));
    assert!(transcriber(
        &config(json!({"transcription": {"provider": "openai"}})),
        true
    )
    .unwrap_err()
    .contains("no key is set"));
}

#[test]
fn openais_transcription_request_and_answers() {
    use transcribe::*;
    let (content_type, body) = openai_request(
        "XyZ",
        "voice.ogg",
        "audio/ogg; codecs=opus",
        b"OggS..",
        "whisper-1",
    );
    assert_eq!(content_type, "multipart/form-data; boundary=XyZ");
    assert_eq!(
        String::from_utf8(body).unwrap(),
        "--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n\
         --XyZ\r\nContent-Disposition: form-data; name=\"response_format\"\r\n\r\njson\r\n\
         --XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"voice.ogg\"\r\n\
         Content-Type: audio/ogg\r\n\r\nOggS..\r\n--XyZ--\r\n"
    );
    assert_eq!(upload_name(None, "audio/opus"), "voice.ogg");
    assert_eq!(upload_name(Some("memo.m4a"), "audio/mp4"), "memo.m4a");
    assert_eq!(
        upload_name(Some("bad\"name.mp3"), "audio/mpeg"),
        "voice.mp3"
    );
    assert_eq!(
        openai_text(200, r#"{"text":" hi there "}"#),
        Ok("hi there".into())
    );
    assert_eq!(
        openai_text(401, r#"{"error":{"message":"Incorrect API key provided"}}"#),
        Err("the transcription service answered 401: Incorrect API key provided".into())
    );
    assert_eq!(workers_ai_text(Some(" yo ".into())), Ok("yo".into()));
    assert_eq!(workers_ai_text(None), Err("Workers AI gave no text".into()));
}

#[test]
fn outbound_references() {
    use outbound::locate;
    let k = "media/agent:main:main/u.png";
    assert_eq!(
        locate(k, "main", "agent:main:main").unwrap().keys,
        vec![k.to_string()]
    );
    assert!(
        locate("media/agent:main:other/u.png", "main", "agent:main:main")
            .unwrap_err()
            .contains("not a file of this conversation")
    );
    let w = locate("gsv:reports/chart.png", "main", "agent:main:main").unwrap();
    assert_eq!(
        (w.keys, w.filename),
        (
            vec!["agents/main/reports/chart.png".to_string()],
            "chart.png".to_string()
        )
    );
    assert!(locate("../etc/passwd", "main", "agent:main:main").is_err());
}

#[test]
fn media_lines_attach_files_to_an_answer() {
    use outbound::split_media_lines;
    assert_eq!(
        split_media_lines(
            "Here is the chart.\nMEDIA: reports/chart.png\n  MEDIA:media/s/u.jpg  \n"
        ),
        (
            "Here is the chart.".to_string(),
            vec!["reports/chart.png".to_string(), "media/s/u.jpg".to_string()]
        )
    );
    // Text without them is left as it is; in a code block they are text.
    assert_eq!(
        split_media_lines("no files\n"),
        ("no files\n".to_string(), vec![])
    );
    let code = "```\nMEDIA: x.png\n```";
    assert_eq!(split_media_lines(code), (code.to_string(), vec![]));
    assert_eq!(
        split_media_lines("MEDIA:   "),
        ("MEDIA:   ".to_string(), vec![])
    );
}

#[test]
fn summaries_read_voice_notes_as_their_transcripts() {
    let mut voice = attachment(MediaType::Audio, "audio/ogg", "v", None);
    voice.transcript = Some("call mum".into());
    let clip = attachment(MediaType::Video, "video/mp4", "c", Some("clip.mp4"));
    let content = UserContent::Blocks(vec![
        ContentBlock::Text { text: "see".into() },
        image_block("k", 10),
        ContentBlock::Attachment(voice),
        ContentBlock::Attachment(clip),
    ]);
    assert_eq!(
        notes::as_text(&content),
        "see\n[Voice message transcription: call mum]\n[Video attached: clip.mp4 (video/mp4, 2.0 KB)]"
    );
    assert_eq!(notes::as_text(&UserContent::Text("hi".into())), "hi");
}
