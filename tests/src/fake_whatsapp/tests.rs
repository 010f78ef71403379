//! The fake itself, against Meta's documented behaviour.

use super::*;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::json;

const ANN: &str = "16505551234";

/// Shuts its runtime down without blocking (inside an async test).
struct Background(Option<tokio::runtime::Runtime>);

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(r) = self.0.take() {
            r.shutdown_background();
        }
    }
}

type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// A webhook endpoint that records each request's body and signature
/// header and answers 200.
fn capture() -> (String, Seen, Background) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let listener = {
        let _context = runtime.enter();
        crate::fake_discord::loopback_listener()
    };
    let url = format!("http://{}/webhook", listener.local_addr().unwrap());
    let shared = seen.clone();
    runtime.spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let seen = shared.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let seen = seen.clone();
                        async move {
                            let sig = req
                                .headers()
                                .get("x-hub-signature-256")
                                .map(|v| v.to_str().unwrap().to_string());
                            let body = req.into_body().collect().await.unwrap().to_bytes();
                            seen.lock()
                                .unwrap()
                                .push((String::from_utf8_lossy(&body).into_owned(), sig));
                            Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(
                                Bytes::new(),
                            )))
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (url, seen, Background(Some(runtime)))
}

async fn graph(
    wa: &FakeWhatsApp,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let client = reqwest::Client::new();
    let url = format!("{}{path}", wa.api_base());
    let mut req = match method {
        "GET" => client.get(url),
        _ => client.post(url),
    };
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    if let Some(b) = body {
        req = req
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (
        status,
        serde_json::from_str(&resp.text().await.unwrap()).unwrap(),
    )
}

fn without_trace(mut v: Value) -> Value {
    assert!(
        v["error"]["fbtrace_id"]
            .as_str()
            .is_some_and(|t| !t.is_empty()),
        "{v}"
    );
    v["error"].as_object_mut().unwrap().remove("fbtrace_id");
    v
}

fn send(to: &str, text: &str) -> Value {
    json!({"messaging_product": "whatsapp", "recipient_type": "individual", "to": to,
           "type": "text", "text": {"body": text, "preview_url": false}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_number_and_the_token() {
    let wa = FakeWhatsApp::start();
    let path = format!("/{PHONE_NUMBER_ID}");
    assert_eq!(
        graph(&wa, "GET", &path, Some(ACCESS_TOKEN), None).await,
        (
            200,
            json!({"verified_name": VERIFIED_NAME, "code_verification_status": "VERIFIED",
                     "display_phone_number": "+1 555-078-3881", "quality_rating": "GREEN",
                     "platform_type": "CLOUD_API", "throughput": {"level": "STANDARD"}, "id": PHONE_NUMBER_ID})
        )
    );
    let (status, body) = graph(&wa, "GET", &path, Some("wrong"), None).await;
    assert_eq!(
        (status, without_trace(body)),
        (
            401,
            json!({"error": {"message": "Invalid OAuth access token - Cannot parse access token",
                               "type": "OAuthException", "code": 190}})
        )
    );
    let (status, body) = graph(&wa, "GET", &path, None, None).await;
    assert_eq!(
        (status, without_trace(body)),
        (
            401,
            json!({"error": {"message": "An access token is required to request this resource.",
                               "type": "OAuthException", "code": 104}})
        )
    );
    let (status, body) = graph(
        &wa,
        "POST",
        "/999/messages",
        Some(ACCESS_TOKEN),
        Some(send(ANN, "x")),
    )
    .await;
    assert_eq!(
        (status, without_trace(body)),
        (
            400,
            json!({"error": {"message": "Unsupported post request. Object with ID '999' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api",
                               "type": "GraphMethodException", "code": 100, "error_subcode": 33}})
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_inside_and_outside_the_window() {
    let wa = FakeWhatsApp::start();
    let (url, seen, _runtime) = capture();
    wa.set_webhook_url(&url);
    let path = format!("/{PHONE_NUMBER_ID}/messages");

    // Nobody wrote: the window is closed.
    let (status, body) = graph(
        &wa,
        "POST",
        &path,
        Some(ACCESS_TOKEN),
        Some(send(ANN, "hi")),
    )
    .await;
    assert_eq!(
        (status, without_trace(body)),
        (
            400,
            json!({"error": {"message": "(#131047) Re-engagement message", "type": "OAuthException",
            "code": 131047, "error_data": {"messaging_product": "whatsapp",
            "details": "Message failed to send because more than 24 hours have passed since the customer last replied to this number."}}})
        )
    );

    // Ann writes: a signed delivery, and the window is open.
    let hello = wa.user_says(ANN, "Ann", "hello");
    assert_eq!(hello.status, 200);
    let (body, sig) = seen.lock().unwrap()[0].clone();
    assert_eq!(
        sig,
        Some(format!("sha256={}", sign(APP_SECRET, body.as_bytes())))
    );
    let delivered: Value = serde_json::from_str(&body).unwrap();
    let message = &delivered["entry"][0]["changes"][0]["value"]["messages"][0];
    assert_eq!(
        delivered,
        json!({"object": "whatsapp_business_account", "entry": [{"id": WABA_ID, "changes": [{"field": "messages",
            "value": {"messaging_product": "whatsapp",
                      "metadata": {"display_phone_number": DISPLAY_PHONE_NUMBER, "phone_number_id": PHONE_NUMBER_ID},
                      "contacts": [{"profile": {"name": "Ann"}, "wa_id": ANN}],
                      "messages": [{"from": ANN, "id": hello.id, "timestamp": message["timestamp"],
                                    "type": "text", "text": {"body": "hello"}}]}}]}]})
    );
    // Meta's redelivery is the same bytes.
    assert_eq!(wa.redeliver_last(), 200);
    assert_eq!(seen.lock().unwrap()[1], (body, sig));

    let (status, answer) = graph(
        &wa,
        "POST",
        &path,
        Some(ACCESS_TOKEN),
        Some(send(ANN, "hi Ann")),
    )
    .await;
    let id = answer["messages"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(
        (status, answer),
        (
            200,
            json!({"messaging_product": "whatsapp", "contacts": [{"input": ANN, "wa_id": ANN}],
                     "messages": [{"id": id}]})
        )
    );
    assert_eq!(
        wa.sent(),
        vec![SentMessage {
            id: id.clone(),
            to: ANN.into(),
            body: send(ANN, "hi Ann")
        }]
    );
    // sent, then delivered, by webhook.
    let statuses = wa
        .wait_for(Duration::from_secs(10), |w| {
            let s: Vec<Value> = w
                .webhook_log()
                .into_iter()
                .skip(2)
                .map(|r| r.body)
                .collect();
            (s.len() >= 2).then_some(s)
        })
        .unwrap();
    let states: Vec<(&Value, &Value)> = statuses
        .iter()
        .map(|b| {
            let s = &b["entry"][0]["changes"][0]["value"]["statuses"][0];
            (&s["id"], &s["status"])
        })
        .collect();
    assert_eq!(
        states,
        vec![
            (&json!(id), &json!("sent")),
            (&json!(id), &json!("delivered"))
        ]
    );

    // The read receipt with typing points at Ann's message.
    let read = json!({"messaging_product": "whatsapp", "status": "read", "message_id": hello.id,
                      "typing_indicator": {"type": "text"}});
    assert_eq!(
        graph(&wa, "POST", &path, Some(ACCESS_TOKEN), Some(read)).await,
        (200, json!({"success": true}))
    );

    // Too long.
    let (status, body) = graph(
        &wa,
        "POST",
        &path,
        Some(ACCESS_TOKEN),
        Some(send(ANN, &"x".repeat(4097))),
    )
    .await;
    assert_eq!(
        (status, without_trace(body)),
        (
            400,
            json!({"error": {"message": "(#100) Param text['body'] must be at most 4096 characters long.",
                               "type": "OAuthException", "code": 100}})
        )
    );

    // A day passes; accepted-then-failed mode reports 131047 by webhook.
    wa.close_window(ANN);
    wa.set_window_failures_async(true);
    let (status, answer) = graph(
        &wa,
        "POST",
        &path,
        Some(ACCESS_TOKEN),
        Some(send(ANN, "late")),
    )
    .await;
    assert_eq!(status, 200);
    let late = answer["messages"][0]["id"].clone();
    let failed = wa
        .wait_for(Duration::from_secs(10), |w| {
            w.webhook_log()
                .into_iter()
                .map(|r| r.body["entry"][0]["changes"][0]["value"]["statuses"][0].clone())
                .find(|s| s["id"] == late)
        })
        .unwrap();
    assert_eq!(
        failed,
        json!({"id": late, "status": "failed", "timestamp": failed["timestamp"], "recipient_id": ANN,
               "errors": [{"code": 131047, "title": "Re-engagement message", "message": "Re-engagement message",
                           "error_data": {"details": payloads::WINDOW_CLOSED_DETAILS},
                           "href": "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/"}]})
    );
}

/// A multipart upload to `/{phone}/media`: (status, answer).
async fn upload(
    wa: &FakeWhatsApp,
    token: &str,
    fields: &[(&str, &str)],
    file: Option<(&str, &str, Vec<u8>)>,
) -> (u16, Value) {
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!("--B\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                .as_bytes(),
        );
    }
    if let Some((name, mime, bytes)) = file {
        body.extend_from_slice(
            format!("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: {mime}\r\n\r\n")
                .as_bytes(),
        );
        body.extend_from_slice(&bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"--B--\r\n");
    let resp = reqwest::Client::new()
        .post(format!("{}/{PHONE_NUMBER_ID}/media", wa.api_base()))
        .header("authorization", format!("Bearer {token}"))
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_file_is_had_by_its_id_then_its_url_with_the_token() {
    let wa = FakeWhatsApp::start();
    let held = wa.hold("image/jpeg", None, b"\xFF\xD8\xFFjpeg".to_vec(), false);
    let (status, info) = graph(
        &wa,
        "GET",
        &format!("/{}", held.id),
        Some(ACCESS_TOKEN),
        None,
    )
    .await;
    assert_eq!(status, 200);
    let url = info["url"].as_str().unwrap().to_string();
    assert_eq!(
        info,
        json!({"messaging_product": "whatsapp", "url": url, "mime_type": "image/jpeg",
               "sha256": held.sha256, "file_size": "7", "id": held.id})
    );
    let client = reqwest::Client::new();
    let ok = client
        .get(&url)
        .header("authorization", format!("Bearer {ACCESS_TOKEN}"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status().as_u16(), 200);
    assert_eq!(ok.bytes().await.unwrap().as_ref(), b"\xFF\xD8\xFFjpeg");
    // The URL alone, or with another token, gives nothing.
    assert_eq!(
        client.get(&url).send().await.unwrap().status().as_u16(),
        401
    );
    let wrong = client
        .get(&url)
        .header("authorization", "Bearer nope")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status().as_u16(), 401);
    let (status, _) = graph(&wa, "GET", &format!("/{}", held.id), Some("nope"), None).await;
    assert_eq!(status, 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_are_checked_like_metas_and_sends_name_them() {
    let wa = FakeWhatsApp::start();
    let fields = [("messaging_product", "whatsapp"), ("type", "image/png")];
    let (status, answer) = upload(
        &wa,
        ACCESS_TOKEN,
        &fields,
        Some(("c.png", "image/png", b"PNG".to_vec())),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let id = answer["id"].as_str().unwrap().to_string();
    assert_eq!(wa.media(&id).unwrap().bytes.as_ref(), b"PNG");
    // Wrong token, no product, no file, a type Meta refuses, too large.
    assert_eq!(
        upload(&wa, "nope", &fields, Some(("c.png", "image/png", vec![1])))
            .await
            .0,
        401
    );
    let (status, e) = upload(
        &wa,
        ACCESS_TOKEN,
        &[("type", "image/png")],
        Some(("c.png", "image/png", vec![1])),
    )
    .await;
    assert_eq!(
        (status, e["error"]["error_data"]["details"].clone()),
        (400, json!("The parameter messaging_product is required."))
    );
    let (status, e) = upload(&wa, ACCESS_TOKEN, &fields, None).await;
    assert_eq!(
        (status, e["error"]["error_data"]["details"].clone()),
        (400, json!("The parameter file is required."))
    );
    let gif = [("messaging_product", "whatsapp"), ("type", "image/gif")];
    let (status, e) = upload(
        &wa,
        ACCESS_TOKEN,
        &gif,
        Some(("a.gif", "image/gif", vec![1])),
    )
    .await;
    assert_eq!((status, e["error"]["code"].clone()), (400, json!(131053)));
    let (status, e) = upload(
        &wa,
        ACCESS_TOKEN,
        &fields,
        Some(("big.png", "image/png", vec![0; 5 * 1024 * 1024 + 1])),
    )
    .await;
    assert_eq!((status, e["error"]["code"].clone()), (400, json!(131053)));
    // A send names the upload; an unknown id is refused.
    wa.user_says_silently(ANN);
    let send_image = |media_id: &str| {
        json!({"messaging_product": "whatsapp", "recipient_type": "individual", "to": ANN,
               "type": "image", "image": {"id": media_id, "caption": "chart"}})
    };
    let (status, sent) = graph(
        &wa,
        "POST",
        &format!("/{PHONE_NUMBER_ID}/messages"),
        Some(ACCESS_TOKEN),
        Some(send_image(&id)),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    assert_eq!(wa.sent()[0].body["image"]["id"], json!(id));
    let (status, e) = graph(
        &wa,
        "POST",
        &format!("/{PHONE_NUMBER_ID}/messages"),
        Some(ACCESS_TOKEN),
        Some(send_image("404")),
    )
    .await;
    assert_eq!(status, 400);
    assert!(e["error"]["error_data"]["details"]
        .as_str()
        .unwrap()
        .contains("not a valid WhatsApp Business Account media attachment ID"));
}
