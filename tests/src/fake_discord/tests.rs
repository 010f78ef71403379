//! The fake itself, against Discord's documented behaviour.

use super::*;
use futures::{SinkExt, StreamExt};
use serde_json::json;
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(discord: &FakeDiscord) -> Ws {
    let url = format!("{}/?v=10&encoding=json", discord.gateway_url());
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

/// The next text frame, or the close code.
async fn next(ws: &mut Ws) -> Result<Value, Option<u16>> {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), ws.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => return Ok(serde_json::from_str(&t).unwrap()),
            Ok(Some(Ok(Message::Close(f)))) => return Err(f.map(|f| u16::from(f.code))),
            Ok(Some(Ok(_))) => continue,
            _ => return Err(None),
        }
    }
}

async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::Text(v.to_string().into())).await.unwrap();
}

fn identify(token: &str, intents: u64) -> Value {
    json!({"op": 2, "d": {"token": token, "intents": intents, "properties": {}}})
}

#[tokio::test]
async fn identify_ready_heartbeat_and_resume_with_replay() {
    let discord = FakeDiscord::start();
    let mut ws = connect(&discord).await;
    assert_eq!(
        next(&mut ws).await,
        Ok(json!({"op": 10, "d": {"heartbeat_interval": 2000}}))
    );
    send(&mut ws, identify(FAKE_BOT_TOKEN, 1 << 9)).await;
    let ready = next(&mut ws).await.unwrap();
    assert_eq!(
        (ready["t"].clone(), ready["s"].clone()),
        (json!("READY"), json!(1))
    );
    let session = ready["d"]["session_id"].as_str().unwrap().to_string();
    assert_eq!(
        ready["d"]["resume_gateway_url"],
        json!(discord.gateway_url())
    );
    send(&mut ws, json!({"op": 1, "d": 1})).await;
    assert_eq!(next(&mut ws).await, Ok(json!({"op": 11})));
    assert_eq!(discord.dispatch("MESSAGE_CREATE", json!({"n": 2})), Some(2));
    assert_eq!(next(&mut ws).await.unwrap()["s"], json!(2));

    // Away: two events wait for the RESUME, which replays what followed seq 2.
    discord.send_reconnect();
    assert_eq!(next(&mut ws).await, Ok(json!({"op": 7, "d": null})));
    drop(ws);
    discord.dispatch("MESSAGE_CREATE", json!({"n": 3}));
    discord.dispatch("MESSAGE_CREATE", json!({"n": 4}));
    let mut ws = connect(&discord).await;
    next(&mut ws).await.unwrap();
    send(
        &mut ws,
        json!({"op": 6, "d": {"token": FAKE_BOT_TOKEN, "session_id": session, "seq": 2}}),
    )
    .await;
    let replay: Vec<Value> = vec![
        next(&mut ws).await.unwrap(),
        next(&mut ws).await.unwrap(),
        next(&mut ws).await.unwrap(),
    ];
    assert_eq!(
        replay,
        vec![
            json!({"op": 0, "s": 3, "t": "MESSAGE_CREATE", "d": {"n": 3}}),
            json!({"op": 0, "s": 4, "t": "MESSAGE_CREATE", "d": {"n": 4}}),
            json!({"op": 0, "s": 5, "t": "RESUMED", "d": {}}),
        ]
    );
}

#[tokio::test]
async fn unknown_sessions_bad_tokens_intents_and_order_are_refused() {
    let discord = FakeDiscord::start();
    let mut ws = connect(&discord).await;
    next(&mut ws).await.unwrap();
    send(
        &mut ws,
        json!({"op": 6, "d": {"token": FAKE_BOT_TOKEN, "session_id": "nope", "seq": 1}}),
    )
    .await;
    assert_eq!(next(&mut ws).await, Ok(json!({"op": 9, "d": false})));

    let mut ws = connect(&discord).await;
    next(&mut ws).await.unwrap();
    send(&mut ws, identify("bad", 1)).await;
    assert_eq!(next(&mut ws).await, Err(Some(4004)));

    discord.set_privileged_intents_allowed(false);
    let mut ws = connect(&discord).await;
    next(&mut ws).await.unwrap();
    send(&mut ws, identify(FAKE_BOT_TOKEN, 1 << 15)).await;
    assert_eq!(next(&mut ws).await, Err(Some(4014)));

    let mut ws = connect(&discord).await;
    next(&mut ws).await.unwrap();
    send(&mut ws, json!({"op": 3, "d": {}})).await;
    assert_eq!(next(&mut ws).await, Err(Some(4003)));
}

#[tokio::test]
async fn a_missed_heartbeat_ends_the_session_with_4009() {
    let discord = FakeDiscord::start();
    discord.set_heartbeat_interval_ms(200);
    discord.set_heartbeat_grace_ms(100);
    let mut ws = connect(&discord).await;
    next(&mut ws).await.unwrap();
    send(&mut ws, identify(FAKE_BOT_TOKEN, 1)).await;
    next(&mut ws).await.unwrap();
    assert_eq!(next(&mut ws).await, Err(Some(4009)));
    // The fake notes the end right after the close frame went out.
    let ends = discord.wait_for(Duration::from_secs(5), |d| {
        let ends = d.connection_ends();
        (!ends.is_empty()).then_some(ends)
    });
    assert_eq!(
        ends.unwrap_or_default(),
        vec![ConnectionEnd {
            conn: 1,
            code: Some(4009),
            by_server: true
        }]
    );
    assert!(discord.lock().sessions.is_empty());
}

#[tokio::test]
async fn rest_auth_validation_nonce_and_rate_limits() {
    let discord = FakeDiscord::start();
    let client = reqwest::Client::new();
    let post = |path: &str, auth: &str, body: Value| {
        client
            .post(format!("{}{path}", discord.api_base()))
            .header("authorization", auth)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };
    let bot = format!("Bot {FAKE_BOT_TOKEN}");
    let r = post("/channels/1/messages", "Bot nope", json!({"content": "x"}))
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    let body = json!({"content": "hi", "nonce": "n1", "enforce_nonce": true,
                      "message_reference": {"message_id": "9"}});
    let first: Value = post("/channels/1/messages", &bot, body.clone())
        .await
        .unwrap()
        .json_value()
        .await;
    let again: Value = post("/channels/1/messages", &bot, body)
        .await
        .unwrap()
        .json_value()
        .await;
    assert_eq!(first, again, "enforce_nonce returns the first message");
    assert_eq!(
        (
            &first["type"],
            &first["content"],
            &first["message_reference"]["message_id"]
        ),
        (&json!(19), &json!("hi"), &json!("9"))
    );

    let r = post(
        "/channels/1/messages",
        &bot,
        json!({"content": "x".repeat(2001)}),
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(r.json_value().await["code"], json!(50035));

    discord.fail_next(
        "/messages",
        RestFailure::RateLimited {
            retry_after: 1.5,
            global: false,
        },
    );
    let r = post("/channels/1/messages", &bot, json!({"content": "x"}))
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "2");
    assert_eq!(r.headers()["x-ratelimit-reset-after"], "1.500");
    assert_eq!(
        r.json_value().await,
        json!({"message": "You are being rate limited.", "retry_after": 1.5, "global": false})
    );

    let r = post("/channels/1/typing", &bot, Value::Null).await.unwrap();
    assert_eq!(r.status(), 204);
    assert_eq!(
        discord
            .rest_log()
            .iter()
            .map(|r| r.status)
            .collect::<Vec<_>>(),
        vec![401, 200, 200, 400, 429, 204]
    );
}

trait JsonValue {
    async fn json_value(self) -> Value;
}

impl JsonValue for reqwest::Response {
    async fn json_value(self) -> Value {
        serde_json::from_str(&self.text().await.unwrap()).unwrap()
    }
}

/// A multipart message create: (status, answer).
async fn post_files(
    discord: &FakeDiscord,
    payload: Value,
    files: &[(usize, &str, Vec<u8>)],
) -> (u16, Value) {
    let mut body = format!(
        "--B\r\nContent-Disposition: form-data; name=\"payload_json\"\r\nContent-Type: application/json\r\n\r\n{payload}\r\n"
    )
    .into_bytes();
    for (n, name, bytes) in files {
        body.extend_from_slice(
            format!("--B\r\nContent-Disposition: form-data; name=\"files[{n}]\"; filename=\"{name}\"\r\nContent-Type: image/png\r\n\r\n")
                .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"--B--\r\n");
    let resp = reqwest::Client::new()
        .post(format!("{}/channels/c1/messages", discord.api_base()))
        .header("authorization", format!("Bot {FAKE_BOT_TOKEN}"))
        .header("content-type", "multipart/form-data; boundary=B")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (
        status,
        serde_json::from_str(&resp.text().await.unwrap()).unwrap(),
    )
}

#[tokio::test]
async fn files_are_hosted_and_uploads_checked_like_discords() {
    let discord = FakeDiscord::start();
    // An attachment is on the fake's CDN, for anyone with the URL.
    let m = discord.attach(
        json!({"channel_id": "c1", "attachments": []}),
        "a.png",
        "image/png",
        b"PNG".to_vec(),
    );
    let url = m["attachments"][0]["url"].as_str().unwrap().to_string();
    assert_eq!(m["attachments"][0]["size"], json!(3));
    let got = reqwest::get(&url).await.unwrap();
    assert_eq!(got.status().as_u16(), 200);
    assert_eq!(got.bytes().await.unwrap().as_ref(), b"PNG");

    let payload = json!({"attachments": [{"id": 0, "filename": "chart.png"}], "nonce": "n1", "enforce_nonce": true});
    let (status, message) = post_files(
        &discord,
        payload.clone(),
        &[(0, "chart.png", b"PNG".to_vec())],
    )
    .await;
    assert_eq!(status, 200, "{message}");
    assert_eq!(message["attachments"][0]["filename"], json!("chart.png"));
    assert_eq!(discord.uploads()[0].bytes, b"PNG".to_vec());
    // An attachment naming no part, a file over 10 MiB, no file at all.
    let (status, e) = post_files(
        &discord,
        json!({"attachments": [{"id": 3, "filename": "x"}]}),
        &[(0, "x.png", vec![1])],
    )
    .await;
    assert_eq!((status, e["code"].clone()), (400, json!(50035)));
    let (status, e) = post_files(
        &discord,
        json!({}),
        &[(0, "big.png", vec![0; 10 * 1024 * 1024 + 1])],
    )
    .await;
    assert_eq!((status, e["code"].clone()), (413, json!(40005)));
    let (status, e) = post_files(&discord, json!({"content": "hi"}), &[]).await;
    assert_eq!((status, e["code"].clone()), (400, json!(50035)));
}
