use super::*;

#[test]
fn an_ok_answer_gives_its_result() {
    let me: Me = answer(
        200,
        r#"{"ok":true,"result":{"id":7001,"is_bot":true,"first_name":"Gsv","username":"gsv_bot",
            "can_join_groups":true,"can_read_all_group_messages":false,"supports_inline_queries":false}}"#,
    )
    .unwrap();
    assert_eq!(
        me,
        Me {
            id: 7001,
            first_name: "Gsv".into(),
            username: Some("gsv_bot".into()),
            can_read_all_group_messages: Some(false),
        }
    );
    let done: bool = answer(
        200,
        r#"{"ok":true,"result":true,"description":"Webhook was set"}"#,
    )
    .unwrap();
    assert!(done);
}

#[test]
fn failures_say_telegram_s_description_and_whether_to_try_again() {
    let blocked = answer::<Value>(
        403,
        r#"{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}"#,
    )
    .unwrap_err();
    assert_eq!(
        blocked,
        ApiError {
            message: "Forbidden: bot was blocked by the user".into(),
            code: Some(403),
            retryable: false,
            retry_after_ms: None,
        }
    );
    let flood = answer::<Value>(
        429,
        r#"{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}"#,
    )
    .unwrap_err();
    assert_eq!(
        (flood.retryable, flood.retry_after_ms, flood.code),
        (true, Some(7000), Some(429))
    );
    let down = answer::<Value>(502, "<html>Bad Gateway</html>").unwrap_err();
    assert_eq!(
        (down.retryable, down.code, down.message.as_str()),
        (
            true,
            Some(502),
            "Telegram answered 502: <html>Bad Gateway</html>"
        )
    );
    let unauthorized = answer::<Value>(
        401,
        r#"{"ok":false,"error_code":401,"description":"Unauthorized"}"#,
    )
    .unwrap_err();
    assert!(unauthorized.token_refused() && !unauthorized.retryable);
    let malformed_token = answer::<Value>(
        404,
        r#"{"ok":false,"error_code":404,"description":"Not Found"}"#,
    )
    .unwrap_err();
    assert!(malformed_token.token_refused());
    // `ok: false` under a 200 is a failure too, by its error_code.
    let odd = answer::<Value>(
        200,
        r#"{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}"#,
    )
    .unwrap_err();
    assert_eq!((odd.code, odd.retryable), (Some(400), false));
    let unreached = ApiError::unreached("connection reset".into());
    assert!(unreached.retryable && !unreached.token_refused());
}

#[test]
fn only_an_entity_error_lets_the_text_go_plain() {
    let entities = answer::<Value>(
        400,
        r#"{"ok":false,"error_code":400,"description":"Bad Request: can't parse entities: Unsupported start tag \"foo\" at byte offset 0"}"#,
    )
    .unwrap_err();
    assert!(entities.entities_refused());
    let other = answer::<Value>(
        400,
        r#"{"ok":false,"error_code":400,"description":"Bad Request: message is too long"}"#,
    )
    .unwrap_err();
    assert!(!other.entities_refused());
}

#[test]
fn the_calls_carry_the_official_field_names() {
    assert_eq!(
        set_webhook("https://w.example/webhook/default", "s3cr3t"),
        ApiCall {
            method: "setWebhook",
            body: json!({"url": "https://w.example/webhook/default", "secret_token": "s3cr3t",
                         "allowed_updates": ["message", "edited_message", "callback_query"]}),
        }
    );
    assert_eq!(
        get_updates(Some(101), 25).body,
        json!({"offset": 101, "timeout": 25, "allowed_updates": ["message", "edited_message", "callback_query"]})
    );
    assert_eq!(get_updates(None, 0).body.get("offset"), None);
    assert_eq!(
        typing("-1001234", Some(5)).body,
        json!({"chat_id": -1001234i64, "action": "typing", "message_thread_id": 5})
    );
    assert_eq!(typing("@channel", None).body["chat_id"], json!("@channel"));
    assert_eq!(
        answer_callback_query("cbq-1").body,
        json!({"callback_query_id": "cbq-1"})
    );
    assert_eq!(get_file("AgAD").body, json!({"file_id": "AgAD"}));
    assert_eq!(get_me().method, "getMe");
    assert_eq!(delete_webhook().method, "deleteWebhook");
}

#[test]
fn the_download_limit_in_words() {
    assert_eq!(too_big_to_download(Some(20 * 1024 * 1024)), None);
    assert_eq!(too_big_to_download(None), None);
    assert_eq!(
        too_big_to_download(Some(31_457_280)).as_deref(),
        Some("the file is 30.0 MB, and Telegram lets bots download files of at most 20 MB (send it as a link, or smaller)")
    );
    let big = answer::<File>(
        400,
        r#"{"ok":false,"error_code":400,"description":"Bad Request: file is too big"}"#,
    )
    .unwrap_err();
    assert_eq!(
        explain_get_file(big).message,
        "Telegram lets bots download files of at most 20 MB, and this one is larger"
    );
    let file: File = answer(200, r#"{"ok":true,"result":{"file_id":"x","file_unique_id":"u","file_size":3,"file_path":"photos/file_1.jpg"}}"#)
        .unwrap();
    assert_eq!(file.file_path.as_deref(), Some("photos/file_1.jpg"));
}

#[test]
fn capabilities_let_the_gateway_chunk_at_4096() {
    let c = capabilities();
    assert_eq!(c.max_text_length, 4096);
    assert!(c.media && c.typing && c.threads);
    assert_eq!(c.chat_types, vec![PeerKind::Dm, PeerKind::Group]);
}
