use super::*;
use gsv_protocol::channels::PeerKind;

fn peer(id: &str, thread: Option<&str>) -> ChannelPeer {
    ChannelPeer {
        kind: PeerKind::Group,
        id: id.into(),
        name: None,
        handle: None,
        thread_id: thread.map(str::to_string),
    }
}

fn action(label: &str, text: &str) -> ChannelAction {
    ChannelAction {
        label: label.into(),
        text: text.into(),
    }
}

#[test]
fn a_reply_names_the_message_only_in_its_own_chat() {
    let p = peer("-100200", Some("17"));
    assert_eq!(
        target(&p, Some("-100200:55")),
        Ok(Target {
            chat: "-100200".into(),
            thread: Some(17),
            reply_to: Some(55),
        })
    );
    // A button press (cb:…), another chat's message, no message: no reply.
    for reply in [Some("cb:881"), Some("-999:55"), Some("55"), None] {
        assert_eq!(target(&p, reply).unwrap().reply_to, None, "{reply:?}");
    }
    assert!(target(&peer("", None), None).is_err());
    assert_eq!(
        target(&peer("1", Some("general")), None),
        Err("\"general\" is not a Telegram forum topic id".into())
    );
}

#[test]
fn a_text_goes_as_html_with_its_reply_topic_and_buttons() {
    let t = Target {
        chat: "-100200".into(),
        thread: Some(17),
        reply_to: Some(55),
    };
    let actions = [action("Approve", "/approve K7"), action("Deny", "/deny K7")];
    assert_eq!(
        send_message(&t, "**Run** `ls`?", false, &actions),
        ApiCall {
            method: "sendMessage",
            body: json!({
                "chat_id": -100200i64,
                "message_thread_id": 17,
                "text": "<b>Run</b> <code>ls</code>?",
                "parse_mode": "HTML",
                "reply_parameters": {"message_id": 55, "allow_sending_without_reply": true},
                "reply_markup": {"inline_keyboard": [[
                    {"text": "Approve", "callback_data": "/approve K7"},
                    {"text": "Deny", "callback_data": "/deny K7"}
                ]]},
            }),
        }
    );
    let dm = Target {
        chat: "42".into(),
        thread: None,
        reply_to: None,
    };
    assert_eq!(
        send_message(&dm, "a <b>", true, &[]).body,
        json!({"chat_id": 42, "text": "a <b>"})
    );
}

#[test]
fn a_button_whose_answer_telegram_cannot_carry_is_left_out() {
    let long = "x".repeat(65);
    assert_eq!(
        keyboard(&[action("Long", &long), action("Empty", "")]),
        None
    );
    // 64 bytes exactly (32 two-byte characters) still fit.
    let fits = "é".repeat(32);
    assert_eq!(
        keyboard(&[action("Fits", &fits)]),
        Some(json!({"inline_keyboard": [[{"text": "Fits", "callback_data": fits}]]}))
    );
}

#[test]
fn the_sent_id_is_chat_and_message() {
    assert_eq!(
        sent_id(
            200,
            r#"{"ok":true,"result":{"message_id":9,"date":1,"chat":{"id":-100200,"type":"supergroup"},"text":"hi"}}"#
        ),
        Ok("-100200:9".into())
    );
    let blocked = sent_id(
        403,
        r#"{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}"#,
    )
    .unwrap_err();
    assert_eq!(blocked.message, "Forbidden: bot was blocked by the user");
}

#[test]
fn each_file_goes_by_the_method_telegram_plays_it_with() {
    let mb = 1024 * 1024;
    let cases = [
        ("image/jpeg", mb, FileMethod::Photo),
        ("image/png", 10 * mb, FileMethod::Photo),
        ("image/png", 10 * mb + 1, FileMethod::Document),
        ("image/gif", 1, FileMethod::Document),
        ("audio/ogg; codecs=opus", 1, FileMethod::Voice),
        ("audio/mpeg", 1, FileMethod::Audio),
        ("audio/x-m4a", 1, FileMethod::Audio),
        ("audio/wav", 1, FileMethod::Document),
        ("video/mp4", 30 * mb, FileMethod::Video),
        ("video/webm", 1, FileMethod::Document),
        ("application/pdf", 1, FileMethod::Document),
        ("text/markdown", 1, FileMethod::Document),
    ];
    for (mime, size, method) in cases {
        assert_eq!(file_method(mime, size), Ok(method), "{mime} {size}");
    }
    assert_eq!(
        file_method("video/mp4", 60 * mb),
        Err("the file is 60.0 MB; Telegram bots may send files of at most 50 MB".into())
    );
    assert_eq!(
        (FileMethod::Voice.method(), FileMethod::Voice.field()),
        ("sendVoice", "voice")
    );
    assert!(fits_caption(&"é".repeat(1024)));
    assert!(!fits_caption(&"e".repeat(1025)));
}

#[test]
fn an_upload_is_a_form_with_the_caption_as_html() {
    let t = Target {
        chat: "42".into(),
        thread: None,
        reply_to: Some(3),
    };
    let upload = Upload {
        target: &t,
        method: FileMethod::Photo,
        filename: "chart.png",
        mime: "image/png",
        bytes: b"PNG",
        caption: Some("the *chart*"),
        actions: &[],
    };
    let (content_type, body) = upload.form("B", false);
    assert_eq!(content_type, "multipart/form-data; boundary=B");
    let body = String::from_utf8(body).unwrap();
    // The reply's JSON, in whatever order serde_json keeps keys.
    let reply = json!({"message_id": 3, "allow_sending_without_reply": true}).to_string();
    assert_eq!(
        body,
        format!("--B\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n42\r\n\
         --B\r\nContent-Disposition: form-data; name=\"reply_parameters\"\r\n\r\n{reply}\r\n\
         --B\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nthe <i>chart</i>\r\n\
         --B\r\nContent-Disposition: form-data; name=\"parse_mode\"\r\n\r\nHTML\r\n\
         --B\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"chart.png\"\r\nContent-Type: image/png\r\n\r\nPNG\r\n\
         --B--\r\n")
    );
    let (_, plain) = upload.form("B", true);
    let plain = String::from_utf8(plain).unwrap();
    assert!(plain.contains("name=\"caption\"\r\n\r\nthe *chart*\r\n"));
    assert!(!plain.contains("parse_mode"));
}
