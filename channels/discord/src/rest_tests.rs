use super::*;

#[test]
fn a_reply_carries_its_reference_and_a_nonce() {
    assert_eq!(
        create_message("c1", "hi", Some("m0"), "n1"),
        Ok(RestRequest {
            method: Method::Post,
            path: "/channels/c1/messages".into(),
            body: Some(json!({
                "content": "hi",
                "allowed_mentions": {"parse": ["users"], "replied_user": true},
                "nonce": "n1",
                "enforce_nonce": true,
                "message_reference": {"message_id": "m0", "fail_if_not_exists": false}
            })),
        })
    );
}

#[test]
fn text_over_2000_characters_is_refused_not_cut() {
    let ok = "é".repeat(2000);
    assert!(create_message("c", &ok, None, "n").is_ok());
    assert_eq!(
        create_message("c", &format!("{ok}x"), None, "n"),
        Err(RestError {
            message: "the message has 2001 characters; Discord bots may send at most 2000 per message (the gateway splits longer text)".into(),
            retryable: false,
        })
    );
    assert!(create_message("c", "", None, "n").is_err());
}

#[test]
fn typing() {
    assert_eq!(
        trigger_typing("c9"),
        RestRequest {
            method: Method::Post,
            path: "/channels/c9/typing".into(),
            body: None
        }
    );
}

fn resp(status: u16, body: &str) -> RestResponse {
    RestResponse {
        status,
        body: body.into(),
        ..Default::default()
    }
}

#[test]
fn success_is_done() {
    assert_eq!(decide(Some(&resp(200, "{}")), 0, 0.5), Decision::Done);
    assert_eq!(decide(Some(&resp(204, "")), 0, 0.5), Decision::Done);
}

#[test]
fn a_429_waits_the_body_s_retry_after() {
    let r = resp(
        429,
        r#"{"message":"You are being rate limited.","retry_after":0.25,"global":false}"#,
    );
    assert_eq!(decide(Some(&r), 0, 0.9), Decision::RetryAfterMs(250));
}

#[test]
fn a_429_without_body_uses_the_headers() {
    let r = RestResponse {
        status: 429,
        retry_after: Some(2.0),
        reset_after: Some(1.5),
        global: true,
        body: String::new(),
    };
    assert_eq!(decide(Some(&r), 1, 0.0), Decision::RetryAfterMs(2000));
}

#[test]
fn a_long_or_last_429_fails_retryably() {
    let r = resp(429, r#"{"retry_after":60.0,"global":true}"#);
    assert_eq!(
        decide(Some(&r), 0, 0.0),
        Decision::Fail(RestError {
            message: "Discord rate-limited the bot globally for 60 s".into(),
            retryable: true
        })
    );
    let r = resp(429, r#"{"retry_after":0.1}"#);
    assert_eq!(
        decide(Some(&r), MAX_ATTEMPTS - 1, 0.0),
        Decision::Fail(RestError {
            message: "Discord rate-limited the bot for 0.1 s".into(),
            retryable: true
        })
    );
}

#[test]
fn server_errors_back_off_then_fail_retryably() {
    assert_eq!(
        decide(Some(&resp(502, "")), 0, 1.0),
        Decision::RetryAfterMs(500)
    );
    assert_eq!(
        decide(Some(&resp(500, "")), 2, 0.0),
        Decision::RetryAfterMs(1000)
    );
    assert_eq!(
        decide(Some(&resp(503, "")), MAX_ATTEMPTS - 1, 0.0),
        Decision::Fail(RestError {
            message: "Discord failed to answer (503 after 4 tries)".into(),
            retryable: true
        })
    );
    assert_eq!(decide(None, 0, 1.0), Decision::RetryAfterMs(500));
    assert_eq!(
        decide(None, MAX_ATTEMPTS - 1, 1.0),
        Decision::Fail(RestError {
            message: "Discord could not be reached".into(),
            retryable: true
        })
    );
}

#[test]
fn client_errors_fail_at_once_with_discord_s_words() {
    assert_eq!(
        decide(
            Some(&resp(401, r#"{"message":"401: Unauthorized","code":0}"#)),
            0,
            0.0
        ),
        Decision::Fail(RestError {
            message: "Discord refused the bot token (401): 401: Unauthorized (code 0)".into(),
            retryable: false
        })
    );
    assert_eq!(
        decide(
            Some(&resp(404, r#"{"message":"Unknown Channel","code":10003}"#)),
            0,
            0.0
        ),
        Decision::Fail(RestError {
            message:
                "Discord does not know this channel or message (404): Unknown Channel (code 10003)"
                    .into(),
            retryable: false
        })
    );
    assert_eq!(
        decide(Some(&resp(403, "")), 0, 0.0),
        Decision::Fail(RestError {
            message: "the bot may not do this here (403: missing access or permissions)".into(),
            retryable: false
        })
    );
}

#[test]
fn a_message_with_files_is_multipart_as_discord_takes_it() {
    let files = [FilePart {
        filename: "chart\".png".into(),
        mime_type: "image/png".into(),
        bytes: b"PNG".to_vec(),
    }];
    let req = create_message_with_files("c1", "here", Some("m0"), "n1", &files, "B").unwrap();
    assert_eq!(req.path, "/channels/c1/messages");
    assert_eq!(req.content_type, "multipart/form-data; boundary=B");
    let payload = json!({
        "allowed_mentions": {"parse": ["users"], "replied_user": true},
        "nonce": "n1", "enforce_nonce": true,
        "attachments": [{"id": 0, "filename": "chart_.png"}],
        "content": "here",
        "message_reference": {"message_id": "m0", "fail_if_not_exists": false},
    });
    assert_eq!(
        String::from_utf8(req.body).unwrap(),
        format!(
            "--B\r\nContent-Disposition: form-data; name=\"payload_json\"\r\nContent-Type: application/json\r\n\r\n{payload}\r\n\
             --B\r\nContent-Disposition: form-data; name=\"files[0]\"; filename=\"chart_.png\"\r\nContent-Type: image/png\r\n\r\nPNG\r\n--B--\r\n"
        )
    );
    // Without text, no content.
    let bare = create_message_with_files("c1", "", None, "n", &files, "B").unwrap();
    assert!(!String::from_utf8(bare.body)
        .unwrap()
        .contains("\"content\""));
    let big = FilePart {
        filename: "big.bin".into(),
        mime_type: "application/octet-stream".into(),
        bytes: vec![0; 11 * 1024 * 1024],
    };
    assert_eq!(
        create_message_with_files("c1", "", None, "n", &[big], "B")
            .unwrap_err()
            .message,
        "big.bin is 11.0 MB; Discord takes files of at most 10 MB from a bot"
    );
}

#[test]
fn attachments_are_fetched_from_discord_only() {
    let api = "https://discord.com/api/v10";
    assert!(attachment_url_allowed(
        "https://cdn.discordapp.com/attachments/1/2/photo.jpg?ex=1&is=2&hm=3",
        api
    ));
    assert!(attachment_url_allowed(
        "https://media.discordapp.net/x.png",
        api
    ));
    assert!(!attachment_url_allowed(
        "http://cdn.discordapp.com/x.png",
        api
    ));
    assert!(!attachment_url_allowed(
        "https://cdn.discordapp.com.evil.com/x",
        api
    ));
    assert!(!attachment_url_allowed(
        "https://user@cdn.discordapp.com/x",
        api
    ));
    assert!(!attachment_url_allowed(
        "http://169.254.169.254/latest",
        api
    ));
    // A test double's attachments live on its API host.
    assert!(attachment_url_allowed(
        "http://127.0.0.1:4000/attachments/1/photo.jpg",
        "http://127.0.0.1:4000/api/v10"
    ));
    assert!(!attachment_url_allowed("not a url", api));
}
