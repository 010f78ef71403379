use super::*;
use serde_json::json;

#[test]
fn a_text_is_a_messages_post_with_its_reply_context() {
    assert_eq!(
        send_text(
            "106540352242922",
            "16505551234",
            "hi Ann",
            Some("wamid.IN1")
        ),
        Ok(GraphRequest {
            method: Method::Post,
            path: "/106540352242922/messages".into(),
            body: Some(json!({
                "messaging_product": "whatsapp",
                "recipient_type": "individual",
                "to": "16505551234",
                "type": "text",
                "text": {"body": "hi Ann", "preview_url": false},
                "context": {"message_id": "wamid.IN1"},
            })),
        })
    );
    let plain = send_text("1", "2", "x", None).unwrap();
    assert_eq!(plain.body.unwrap().get("context"), None);
}

#[test]
fn a_tracked_send_carries_the_piece_key_for_meta_to_echo() {
    let tracked = with_tracking(send_text("1", "2", "x", None).unwrap(), "r9:0");
    assert_eq!(
        tracked.body,
        Some(json!({
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": "2",
            "type": "text",
            "text": {"body": "x", "preview_url": false},
            "biz_opaque_callback_data": "r9:0",
        }))
    );
}

#[test]
fn texts_the_cloud_api_would_refuse_are_refused_here() {
    let at_limit = "é".repeat(MAX_TEXT_CHARS);
    assert!(send_text("1", "2", &at_limit, None).is_ok());
    assert_eq!(
        send_text("1", "2", &format!("{at_limit}x"), None),
        Err(GraphError {
            message: "the message has 4097 characters; WhatsApp takes at most 4096 per message (the gateway splits longer text)".into(),
            retryable: false,
            token_refused: false,
        })
    );
    assert_eq!(
        send_text("1", "2", " \n", None).unwrap_err().message,
        "the message is empty: WhatsApp refuses empty texts"
    );
}

#[test]
fn read_receipt_with_typing_and_the_phone_number() {
    assert_eq!(
        mark_read_with_typing("1065", "wamid.IN1"),
        GraphRequest {
            method: Method::Post,
            path: "/1065/messages".into(),
            body: Some(json!({"messaging_product": "whatsapp", "status": "read",
                "message_id": "wamid.IN1", "typing_indicator": {"type": "text"}})),
        }
    );
    assert_eq!(
        phone_number("1065"),
        GraphRequest {
            method: Method::Get,
            path: "/1065".into(),
            body: None
        }
    );
}

#[test]
fn answers_are_read_for_what_they_carry() {
    let sent = json!({"messaging_product": "whatsapp",
        "contacts": [{"input": "16505551234", "wa_id": "16505551234"}],
        "messages": [{"id": "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJCOTY3NDc0NDFDRUI3NTA0Q0UA"}]});
    assert_eq!(
        sent_message_id(200, &sent.to_string()),
        Ok("wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJCOTY3NDc0NDFDRUI3NTA0Q0UA".into())
    );
    assert_eq!(succeeded(200, r#"{"success":true}"#), Ok(()));
    assert_eq!(
        phone_info(
            200,
            r#"{"id":"1","display_phone_number":"+1 555-555-5555","verified_name":"Jaspers Market","quality_rating":"GREEN"}"#
        ),
        Ok(PhoneInfo {
            display_phone_number: Some("+1 555-555-5555".into()),
            verified_name: Some("Jaspers Market".into()),
        })
    );
    assert_eq!(
        sent_message_id(200, "{}"),
        Err(GraphError {
            message: "WhatsApp answered 200 with something unexpected: {}".into(),
            retryable: false,
            token_refused: false,
        })
    );
}

#[test]
fn the_closed_window_is_said_in_plain_words_and_not_retried() {
    let body = json!({"error": {"message": "(#131047) Re-engagement message", "type": "OAuthException",
        "code": 131047, "error_data": {"messaging_product": "whatsapp",
        "details": "Message failed to send because more than 24 hours have passed since the customer last replied to this number."},
        "fbtrace_id": "AbCdEf"}});
    assert_eq!(
        sent_message_id(400, &body.to_string()),
        Err(GraphError {
            message: "the 24-hour customer-service window is closed: the person has not written in the last 24 hours, \
                and WhatsApp delivers free-form messages only inside that window (they must write again first) \
                [131047 Re-engagement message: Message failed to send because more than 24 hours have passed since the customer last replied to this number.]".into(),
            retryable: false,
            token_refused: false,
        })
    );
}

#[test]
fn a_refused_token_rate_limits_and_outages() {
    let token = json!({"error": {"message": "Invalid OAuth access token", "type": "OAuthException",
        "code": 190, "fbtrace_id": "X"}});
    assert_eq!(
        failure(401, &token.to_string()),
        GraphError {
            message: "WhatsApp refused the access token: give the account a new one [190 Invalid OAuth access token]".into(),
            retryable: false,
            token_refused: true,
        }
    );
    let limited = json!({"error": {"message": "(#130429) Rate limit hit", "type": "OAuthException", "code": 130429,
        "error_data": {"messaging_product": "whatsapp", "details": "Cloud API message throughput has been reached."}}});
    assert_eq!(
        failure(400, &limited.to_string()),
        GraphError {
            message: "WhatsApp rate-limited the number [130429 Rate limit hit: Cloud API message throughput has been reached.]".into(),
            retryable: true,
            token_refused: false,
        }
    );
    assert_eq!(
        failure(503, "<html>down</html>"),
        GraphError {
            message: "WhatsApp answered 503: <html>down</html>".into(),
            retryable: true,
            token_refused: false,
        }
    );
    assert_eq!(
        failure(401, ""),
        GraphError {
            message: "WhatsApp refused the access token (401)".into(),
            retryable: false,
            token_refused: true,
        }
    );
    let odd = ErrorObject {
        code: Some(999),
        ..Default::default()
    };
    assert_eq!(
        explain(&odd),
        ("WhatsApp refused the message [999]".into(), false)
    );
    assert_eq!(
        explain(&ErrorObject::default()),
        ("WhatsApp refused the message".into(), false)
    );
}

#[test]
fn the_channel_takes_dms_of_up_to_4096_characters_and_files() {
    assert_eq!(
        capabilities(),
        ChannelCapabilities {
            chat_types: vec![PeerKind::Dm],
            media: true,
            reactions: false,
            threads: false,
            typing: true,
            editing: false,
            deletion: false,
            qr_login: false,
            max_text_length: 4096,
        }
    );
}

#[test]
fn files_go_as_the_type_whatsapp_plays_or_as_documents() {
    const MB: u64 = 1024 * 1024;
    assert_eq!(send_kind("image/jpeg", MB), Ok(SendKind::Image));
    assert_eq!(send_kind("image/png", 6 * MB), Ok(SendKind::Document));
    assert_eq!(send_kind("image/gif", 10), Ok(SendKind::Document));
    assert_eq!(send_kind("audio/ogg; codecs=opus", MB), Ok(SendKind::Audio));
    assert_eq!(send_kind("video/mp4", 17 * MB), Ok(SendKind::Document));
    assert_eq!(send_kind("application/pdf", 2 * MB), Ok(SendKind::Document));
    assert_eq!(
        send_kind("application/zip", 101 * MB),
        Err("the file is 101 MB; WhatsApp takes files up to 100 MB".into())
    );
}

#[test]
fn an_upload_is_multipart_and_its_message_names_the_media_id() {
    let (path, content_type, body) =
        upload_media("106540352242922", "B", "image/png", "chart\".png", b"PNG");
    assert_eq!(path, "/106540352242922/media");
    assert_eq!(content_type, "multipart/form-data; boundary=B");
    assert_eq!(
        String::from_utf8(body).unwrap(),
        "--B\r\nContent-Disposition: form-data; name=\"messaging_product\"\r\n\r\nwhatsapp\r\n\
         --B\r\nContent-Disposition: form-data; name=\"type\"\r\n\r\nimage/png\r\n\
         --B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"chart_.png\"\r\n\
         Content-Type: image/png\r\n\r\nPNG\r\n--B--\r\n"
    );
    assert_eq!(
        uploaded_media_id(200, r#"{"id":"1037543291543636"}"#),
        Ok("1037543291543636".into())
    );
    assert_eq!(
        send_media(
            "1",
            "16505551234",
            SendKind::Document,
            "77",
            "report.pdf",
            Some("here"),
            Some("wamid.IN")
        ),
        GraphRequest {
            method: Method::Post,
            path: "/1/messages".into(),
            body: Some(json!({
                "messaging_product": "whatsapp", "recipient_type": "individual",
                "to": "16505551234", "type": "document",
                "document": {"id": "77", "filename": "report.pdf", "caption": "here"},
                "context": {"message_id": "wamid.IN"},
            })),
        }
    );
    let audio = send_media("1", "2", SendKind::Audio, "78", "v.ogg", Some("no"), None);
    assert_eq!(audio.body.unwrap()["audio"], json!({"id": "78"}));
}

#[test]
fn a_media_id_gives_its_url_and_size() {
    assert_eq!(media_info("1037543291543636").path, "/1037543291543636");
    assert_eq!(
        parse_media_info(
            200,
            r#"{"messaging_product":"whatsapp","url":"https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1","mime_type":"image/jpeg","sha256":"ab","file_size":303833,"id":"1"}"#
        ),
        Ok(MediaInfo {
            url: "https://lookaside.fbsbx.com/whatsapp_business/attachments/?mid=1".into(),
            mime_type: Some("image/jpeg".into()),
            file_size: Some(303833),
            sha256: Some("ab".into()),
        })
    );
    assert!(
        parse_media_info(
            401,
            r#"{"error":{"code":190,"message":"Invalid OAuth access token"}}"#
        )
        .unwrap_err()
        .token_refused
    );
}

#[test]
fn uploads_go_as_a_type_whatsapp_takes() {
    assert_eq!(upload_type("image/JPEG"), Ok("image/jpeg".into()));
    assert_eq!(
        upload_type("audio/ogg; codecs=opus"),
        Ok("audio/ogg".into())
    );
    assert_eq!(upload_type("text/markdown"), Ok("text/plain".into()));
    assert_eq!(upload_type("application/json"), Ok("text/plain".into()));
    assert_eq!(upload_type("application/pdf"), Ok("application/pdf".into()));
    assert!(upload_type("image/gif")
        .unwrap_err()
        .starts_with("WhatsApp does not take image/gif files"));
    assert!(upload_type("application/zip").is_err());
}
