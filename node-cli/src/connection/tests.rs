use super::*;
use crate::test_support::{accept_connect, close, hello_ok, next_request, send, FakeGateway};
use gsv_protocol::ServerInfo;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn handshake_request_and_event() {
    let (params_tx, mut params_rx) = mpsc::unbounded_channel();
    let gateway = FakeGateway::start(move |mut ws| {
        let params_tx = params_tx.clone();
        async move {
            params_tx.send(accept_connect(&mut ws).await).unwrap();
            let req = next_request(&mut ws).await;
            assert_eq!(
                (req.method.as_str(), req.params),
                ("config.get", Some(json!({"path": "model.id"})))
            );
            send(&mut ws, Frame::event("chat", json!({"hello": "event"}))).await;
            send(
                &mut ws,
                Frame::ok(req.id, json!({"path": "model.id", "value": "gpt-4.1"})),
            )
            .await;
            let _ = next_request(&mut ws).await; // hold the socket open
        }
    })
    .await;

    let conn = Connection::connect(&gateway.url, Some("s3cret"))
        .await
        .unwrap();
    let mut events = conn.events();
    let answer = conn
        .request("config.get", json!({"path": "model.id"}))
        .await
        .unwrap();
    assert_eq!(answer, json!({"path": "model.id", "value": "gpt-4.1"}));
    assert_eq!(
        events.recv().await.unwrap(),
        EventFrame {
            event: "chat".into(),
            payload: Some(json!({"hello": "event"})),
            seq: None
        }
    );
    assert_eq!(
        conn.hello().map(|h| &h.server),
        Some(&ServerInfo {
            version: "0.1.0".into(),
            connection_id: "conn-1".into()
        })
    );

    let mut params = params_rx.recv().await.unwrap();
    let client_id = std::mem::take(&mut params.client.id);
    assert!(
        client_id.starts_with("cli-") && client_id.len() == 12,
        "{client_id}"
    );
    assert!(
        client_id[4..].chars().all(|c| c.is_ascii_hexdigit()),
        "{client_id}"
    );
    assert_eq!(
        params,
        ConnectParams {
            min_protocol: 1,
            max_protocol: 1,
            client: ClientInfo {
                id: String::new(),
                version: env!("CARGO_PKG_VERSION").into(),
                platform: std::env::consts::OS.into(),
                mode: ClientMode::Client,
                channel: None,
                account_id: None,
            },
            tools: None,
            node_runtime: None,
            auth: Some(AuthParams {
                token: Some("s3cret".into())
            }),
        }
    );
}

#[tokio::test]
async fn concurrent_requests_are_matched_by_id() {
    let gateway = FakeGateway::start(|mut ws| async move {
        accept_connect(&mut ws).await;
        let first = next_request(&mut ws).await;
        let second = next_request(&mut ws).await;
        // Answer in the opposite order.
        for req in [second, first] {
            let echo = req.params.clone().unwrap_or(Value::Null);
            send(&mut ws, Frame::ok(req.id, echo)).await;
        }
        let _ = next_request(&mut ws).await;
    })
    .await;
    let conn = Connection::connect(&gateway.url, None).await.unwrap();
    let (a, b) = tokio::join!(
        conn.request("m", json!({"n": 1})),
        conn.request("m", json!({"n": 2}))
    );
    assert_eq!((a.unwrap(), b.unwrap()), (json!({"n": 1}), json!({"n": 2})));
}

#[tokio::test]
async fn error_response_and_timeout() {
    let gateway = FakeGateway::start(|mut ws| async move {
        accept_connect(&mut ws).await;
        let req = next_request(&mut ws).await;
        send(
            &mut ws,
            Frame::err(
                req.id,
                ErrorShape::new(gsv_protocol::codes::NOT_FOUND, "Unknown method: nope"),
            ),
        )
        .await;
        let _ignored = next_request(&mut ws).await;
        let _ = next_request(&mut ws).await;
    })
    .await;
    let conn = Connection::connect(&gateway.url, None).await.unwrap();
    let err = conn.request("nope", Value::Null).await.unwrap_err();
    assert_eq!(
        err,
        RequestError::Gateway(ErrorShape::new(
            gsv_protocol::codes::NOT_FOUND,
            "Unknown method: nope"
        ))
    );
    assert_eq!(err.to_string(), "Unknown method: nope (code 404)");

    let err = conn
        .request_with_timeout("slow", json!({}), Duration::from_millis(100))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the gateway did not answer `slow` within 0.1 s"
    );
    assert!(conn.shared.lock().pending.is_empty());
}

#[tokio::test]
async fn socket_closing_mid_request_fails_it() {
    let gateway = FakeGateway::start(|mut ws| async move {
        accept_connect(&mut ws).await;
        let _unanswered = next_request(&mut ws).await;
        close(&mut ws, 1000, "Replaced by newer client connection").await;
    })
    .await;
    let conn = Connection::connect(&gateway.url, None).await.unwrap();
    let close = CloseReason::Closed {
        code: Some(1000),
        reason: "Replaced by newer client connection".into(),
    };
    let err = conn.request("config.get", json!({})).await.unwrap_err();
    assert_eq!(
        err,
        RequestError::Disconnected {
            method: "config.get".into(),
            close: close.clone()
        }
    );
    assert_eq!(
        err.to_string(),
        "no answer to `config.get`: the gateway closed the connection (code 1000: Replaced by newer client connection)"
    );
    // Later requests fail at once, and waiters see the close.
    assert!(matches!(
        conn.request("x", json!({})).await,
        Err(RequestError::Disconnected { .. })
    ));
    assert_eq!(conn.closed().await, close);
    assert_eq!(conn.close_reason(), Some(close));
}

#[tokio::test]
async fn close_4001_is_the_token_error() {
    let gateway = FakeGateway::start(|mut ws| async move {
        let _connect = next_request(&mut ws).await;
        close(&mut ws, 4001, "Unauthorized").await;
    })
    .await;
    let err = Connection::connect(&gateway.url, Some("wrong"))
        .await
        .err()
        .unwrap();
    assert_eq!(err, ConnectError::TokenRejected { token_sent: true });
    assert_eq!(
        err.to_string(),
        "The gateway rejected the token. Set it with `gsv local-config set gateway.token <token>` \
         or --token / GSV_TOKEN."
    );
}

#[tokio::test]
async fn error_401_without_a_token_says_it_is_missing() {
    let gateway = FakeGateway::start(|mut ws| async move {
        let req = next_request(&mut ws).await;
        send(
            &mut ws,
            Frame::err(
                req.id,
                ErrorShape::new(gsv_protocol::codes::UNAUTHORIZED, "Unauthorized"),
            ),
        )
        .await;
        close(&mut ws, 4001, "Unauthorized").await;
    })
    .await;
    let err = Connection::connect(&gateway.url, None).await.err().unwrap();
    assert_eq!(
        err.to_string(),
        "The gateway requires a token and none is set. Set it with \
         `gsv local-config set gateway.token <token>` or --token / GSV_TOKEN."
    );
}

#[tokio::test]
async fn close_4003_shows_the_server_reason() {
    let reason = "No auth token is configured. Run: wrangler secret put GSV_AUTH_TOKEN";
    let gateway = FakeGateway::start(move |mut ws| async move {
        let _connect = next_request(&mut ws).await;
        close(&mut ws, 4003, reason).await;
    })
    .await;
    let err = Connection::connect(&gateway.url, Some("t"))
        .await
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        format!("The gateway refused the connection: {reason}")
    );
}

#[tokio::test]
async fn http_401_on_upgrade_is_the_token_error() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/ws", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 4096];
        let _ = tcp.read(&mut buf).await;
        let _ = tcp
            .write_all(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n")
            .await;
    });
    let err = Connection::connect(&url, Some("t")).await.err().unwrap();
    assert_eq!(err, ConnectError::TokenRejected { token_sent: true });
}

#[tokio::test]
async fn unreachable_gateway_says_how_to_fix_it() {
    // A port that was free a moment ago: nothing listens there.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("ws://127.0.0.1:{port}/ws");
    let err = Connection::connect(&url, None).await.err().unwrap();
    let ConnectError::Unreachable { reason, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        err.to_string(),
        format!(
            "Cannot reach the gateway at {url}: {reason}. Is it running? Start it with the README's \
             first command, or set --url / GSV_URL."
        )
    );
    assert!(reason.contains("refused"), "{reason}");
}

#[tokio::test]
async fn bad_url_is_explained() {
    let err = Connection::connect("localhost:8787", None)
        .await
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "`localhost:8787` is not a usable gateway URL (it must start with ws://, wss://, http:// or \
         https://). It should look like ws://localhost:8787/ws or wss://<your-worker>.workers.dev/ws; \
         set --url / GSV_URL or run `gsv local-config set gateway.url <url>`."
    );
}

#[tokio::test]
async fn unexpected_hello_is_an_error() {
    let gateway = FakeGateway::start(|mut ws| async move {
        let req = next_request(&mut ws).await;
        let mut hello = hello_ok();
        hello["protocol"] = json!(2);
        send(&mut ws, Frame::ok(req.id, hello)).await;
        let _ = next_request(&mut ws).await;
    })
    .await;
    let err = Connection::connect(&gateway.url, None).await.err().unwrap();
    assert_eq!(
        err,
        ConnectError::BadHello {
            url: gateway.url.clone(),
            detail: "type \"hello-ok\", protocol 2".into()
        }
    );
}

#[test]
fn gateway_urls_are_normalized() {
    let cases = [
        ("ws://localhost:8787/ws", "ws://localhost:8787/ws"),
        ("ws://localhost:8787", "ws://localhost:8787/ws"),
        ("https://gsv.me.workers.dev", "wss://gsv.me.workers.dev/ws"),
        ("https://gsv.me.workers.dev/", "wss://gsv.me.workers.dev/ws"),
        ("http://127.0.0.1:8787/ws ", "ws://127.0.0.1:8787/ws"),
        (
            "wss://gsv.example/custom/path",
            "wss://gsv.example/custom/path",
        ),
        ("localhost:8787", "localhost:8787"),
    ];
    let normalized: Vec<(&str, String)> = cases
        .iter()
        .map(|(i, _)| (*i, normalize_gateway_url(i)))
        .collect();
    let expected: Vec<(&str, String)> = cases.iter().map(|(i, o)| (*i, o.to_string())).collect();
    assert_eq!(normalized, expected);
}
