use super::*;
use gsv_protocol::channels::{ChannelPeer, ChannelSender, PeerKind};
use serde_json::json;

const BODY: &str = r#"{"object":"whatsapp_business_account","entry":[]}"#;
// printf '%s' "$BODY" | openssl dgst -sha256 -hmac app-secret
const SIGNATURE: &str = "sha256=d3e4f9da0ce6c71ab3dba55929b8eeeee2455349e534924ead19f98d143e904f";

#[test]
fn the_signature_is_the_body_s_hmac_under_the_app_secret() {
    assert_eq!(
        format!("sha256={}", sign_hex("app-secret", BODY.as_bytes())),
        SIGNATURE
    );
    assert!(signature_ok("app-secret", BODY.as_bytes(), Some(SIGNATURE)));
    assert!(signature_ok(
        "app-secret",
        BODY.as_bytes(),
        Some(&SIGNATURE.to_uppercase().replace("SHA256=", "sha256="))
    ));
    // Another secret, another body, no prefix, no header, no secret.
    assert!(!signature_ok(
        "other-secret",
        BODY.as_bytes(),
        Some(SIGNATURE)
    ));
    assert!(!signature_ok("app-secret", b"{}", Some(SIGNATURE)));
    assert!(!signature_ok(
        "app-secret",
        BODY.as_bytes(),
        Some(&SIGNATURE[7..])
    ));
    assert!(!signature_ok("app-secret", BODY.as_bytes(), None));
    assert!(!signature_ok(
        "",
        BODY.as_bytes(),
        Some(&format!("sha256={}", sign_hex("", BODY.as_bytes())))
    ));
}

#[test]
fn the_subscription_echoes_the_challenge_only_for_the_verify_token() {
    let query = |mode: &'static str, token: &'static str| {
        vec![
            ("hub.mode", mode),
            ("hub.challenge", "1158201444"),
            ("hub.verify_token", token),
        ]
    };
    assert_eq!(
        subscription(query("subscribe", "meatyhamhock"), "meatyhamhock"),
        Some("1158201444".into())
    );
    assert_eq!(
        subscription(query("subscribe", "wrong"), "meatyhamhock"),
        None
    );
    assert_eq!(
        subscription(query("unsubscribe", "meatyhamhock"), "meatyhamhock"),
        None
    );
    assert_eq!(subscription(query("subscribe", ""), ""), None);
    assert_eq!(
        subscription(
            vec![("hub.mode", "subscribe"), ("hub.verify_token", "t")],
            "t"
        ),
        None
    );
}

fn value(phone_number_id: &str, extra: serde_json::Value) -> serde_json::Value {
    let mut v = json!({"messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": phone_number_id}});
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    json!({"value": v, "field": "messages"})
}

#[test]
fn a_delivery_is_one_batch_per_number_with_messages_and_receipts() {
    let payload = json!({"object": "whatsapp_business_account", "entry": [{"id": "102290129340398", "changes": [
        value("106540352242922", json!({
            "contacts": [{"profile": {"name": "Ann"}, "wa_id": "16505551234"}],
            "messages": [
                {"from": "16505551234", "id": "wamid.IN1", "timestamp": "1749416383", "type": "text",
                 "text": {"body": "hello"}},
                {"from": "16505551234", "id": "wamid.IN2", "timestamp": "1749416384", "type": "reaction",
                 "reaction": {"message_id": "wamid.OUT0", "emoji": "👍"}}
            ]})),
        value("106540352242922", json!({"statuses": [
            {"id": "wamid.OUT1", "status": "delivered", "timestamp": "1750263773", "recipient_id": "16505551234",
             "biz_opaque_callback_data": "r1:0",
             "pricing": {"billable": false, "pricing_model": "PMP", "category": "service", "type": "free_customer_service"}},
            {"id": "wamid.OUT2", "status": "failed", "timestamp": "1750263774", "recipient_id": "16505551234",
             "errors": [{"code": 131047, "title": "Re-engagement message", "message": "Re-engagement message",
                         "error_data": {"details": "Message failed to send because more than 24 hours have passed since the customer last replied to this number."},
                         "href": "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/"}]},
            {"id": "wamid.OUT3", "status": "deleted", "timestamp": "1750263775", "recipient_id": "16505551234"}
        ]})),
        value("200000000000001", json!({"statuses": [
            {"id": "wamid.OUT9", "status": "read", "timestamp": "1750263780", "recipient_id": "447700900123"}]})),
        {"field": "account_update", "value": {"event": "VERIFIED_ACCOUNT"}},
    ]}]});
    let got = parse(payload.to_string().as_bytes()).unwrap();
    let window = "the 24-hour customer-service window is closed: the person has not written in the last 24 hours, \
        and WhatsApp delivers free-form messages only inside that window (they must write again first) \
        [131047 Re-engagement message: Message failed to send because more than 24 hours have passed since the customer last replied to this number.]";
    assert_eq!(
        got,
        Delivery {
            batches: vec![
                Batch {
                    phone_number_id: "106540352242922".into(),
                    messages: vec![ChannelInboundMessage {
                        message_id: "wamid.IN1".into(),
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
                        text: "hello".into(),
                        media: vec![],
                        reply_to_id: None,
                        reply_to_text: None,
                        timestamp: Some(1_749_416_383_000),
                        was_mentioned: false,
                        is_reply_to_bot: None,
                    }],
                    receipts: vec![
                        Receipt {
                            message_id: "wamid.OUT1".into(),
                            state: DeliveryState::Delivered,
                            timestamp: Some(1_750_263_773_000),
                            error: None,
                            tracking: Some("r1:0".into()),
                        },
                        Receipt {
                            message_id: "wamid.OUT2".into(),
                            state: DeliveryState::Failed,
                            timestamp: Some(1_750_263_774_000),
                            error: Some(window.into()),
                            tracking: None,
                        },
                    ],
                    skipped: vec![
                        "wamid.IN2: a reaction (not a message to answer)".into(),
                        "status \"deleted\" of wamid.OUT3 (not handled)".into(),
                    ],
                },
                Batch {
                    phone_number_id: "200000000000001".into(),
                    messages: vec![],
                    receipts: vec![Receipt {
                        message_id: "wamid.OUT9".into(),
                        state: DeliveryState::Read,
                        timestamp: Some(1_750_263_780_000),
                        error: None,
                        tracking: None,
                    }],
                    skipped: vec![],
                },
            ],
            skipped: vec!["a \"account_update\" change (not handled)".into()],
        }
    );
}

#[test]
fn anything_but_a_business_account_delivery_is_refused() {
    assert_eq!(
        parse(br#"{"object":"page","entry":[]}"#),
        Err("object \"page\" is not whatsapp_business_account".into())
    );
    assert!(parse(b"not json")
        .unwrap_err()
        .starts_with("not a webhook payload"));
    assert_eq!(parse(BODY.as_bytes()), Ok(Delivery::default()));
}

#[test]
fn a_failed_status_without_errors_still_says_it_failed() {
    let payload = json!({"object": "whatsapp_business_account", "entry": [{"id": "1", "changes": [
        value("1", json!({"statuses": [{"id": "wamid.F", "status": "failed", "timestamp": "1", "recipient_id": "1"}]}))]}]});
    let got = parse(payload.to_string().as_bytes()).unwrap();
    assert_eq!(
        got.batches[0].receipts,
        vec![Receipt {
            message_id: "wamid.F".into(),
            state: DeliveryState::Failed,
            timestamp: Some(1000),
            error: Some("WhatsApp could not deliver the message (no reason given)".into()),
            tracking: None,
        }]
    );
}
