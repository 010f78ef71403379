//! The fake itself, against the Bot API's documented behaviour and the
//! server's own answers.

use super::html::{self, Entity};
use super::*;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use std::collections::VecDeque;

/// Shuts its runtime down without blocking (inside an async test).
struct Background(Option<tokio::runtime::Runtime>);

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(r) = self.0.take() {
            r.shutdown_background();
        }
    }
}

/// One request the webhook got: its secret header and body.
type Seen = Arc<Mutex<Vec<(Option<String>, Value)>>>;

/// A webhook that records each request and answers the statuses of
/// `script` in turn, then 200.
fn webhook(script: Vec<u16>) -> (String, Seen, Background) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let seen: Seen = Arc::new(Mutex::new(Vec::new()));
    let script = Arc::new(Mutex::new(VecDeque::from(script)));
    let listener = {
        let _context = runtime.enter();
        crate::fake_discord::loopback_listener()
    };
    let url = format!("http://{}/webhook/default", listener.local_addr().unwrap());
    let shared = seen.clone();
    runtime.spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (seen, script) = (shared.clone(), script.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let (seen, script) = (seen.clone(), script.clone());
                        async move {
                            let secret = req
                                .headers()
                                .get("x-telegram-bot-api-secret-token")
                                .map(|v| v.to_str().unwrap().to_string());
                            let body = req.into_body().collect().await.unwrap().to_bytes();
                            let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
                            seen.lock().unwrap().push((secret, body));
                            let status = script.lock().unwrap().pop_front().unwrap_or(200);
                            Ok::<_, std::convert::Infallible>(
                                hyper::Response::builder()
                                    .status(status)
                                    .body(Full::new(Bytes::new()))
                                    .unwrap(),
                            )
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

async fn body_of(resp: reqwest::Response) -> Value {
    serde_json::from_str(&resp.text().await.unwrap()).unwrap()
}

const WAIT: Duration = Duration::from_secs(10);

/// A JSON call: status and body.
async fn call(tg: &FakeTelegram, method: &str, params: Value) -> (u16, Value) {
    call_as(tg, BOT_TOKEN, method, params).await
}

async fn call_as(tg: &FakeTelegram, token: &str, method: &str, params: Value) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .post(format!("{}/bot{token}/{method}", tg.api_base()))
        .header("content-type", "application/json")
        .body(params.to_string())
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, body_of(resp).await)
}

/// A `multipart/form-data` call: text fields, then one file.
async fn upload(
    tg: &FakeTelegram,
    method: &str,
    fields: &[(&str, &str)],
    file: (&str, &str, &str, &[u8]),
) -> (u16, Value) {
    let boundary = "fakeTelegramBoundary7MA4YWxkTrZu0gW";
    let mut body = Vec::new();
    for (k, v) in fields {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n")
                .as_bytes(),
        );
    }
    let (field, name, mime, bytes) = file;
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"{name}\"\r\nContent-Type: {mime}\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let resp = reqwest::Client::new()
        .post(format!("{}/bot{BOT_TOKEN}/{method}", tg.api_base()))
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    (status, body_of(resp).await)
}

fn refused(status: u16, description: &str) -> (u16, Value) {
    (
        status,
        json!({"ok": false, "error_code": status, "description": description}),
    )
}

fn jpeg(len: usize) -> Vec<u8> {
    let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];
    b.resize(len - 2, 0x42);
    b.extend_from_slice(&[0xFF, 0xD9]);
    b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_methods_and_the_four_ways_of_passing_parameters() {
    let tg = FakeTelegram::start();
    assert_eq!(
        call_as(&tg, "not-a-token", "getMe", json!({})).await,
        refused(404, "Not Found")
    );
    assert_eq!(
        call_as(&tg, "7012345678:wrong", "getMe", json!({})).await,
        refused(401, "Unauthorized")
    );
    assert_eq!(
        call(&tg, "getMyNonsense", json!({})).await,
        refused(404, "Not Found")
    );
    let me = json!({"ok": true, "result": {"id": BOT_ID, "is_bot": true, "first_name": "gsv",
                    "username": BOT_USERNAME, "can_join_groups": true,
                    "can_read_all_group_messages": false, "supports_inline_queries": false,
                    "can_connect_to_business": false, "has_main_web_app": false}});
    // Method names are case-insensitive; GET works too.
    assert_eq!(call(&tg, "GETME", json!({})).await, (200, me.clone()));
    let got: Value = reqwest::get(format!("{}/bot{BOT_TOKEN}/getMe", tg.api_base()))
        .await
        .unwrap()
        .text()
        .await
        .map(|t| serde_json::from_str::<Value>(&t).unwrap())
        .unwrap();
    assert_eq!(got, me);
    tg.set_privacy_mode(false);
    assert_eq!(
        call(&tg, "getMe", json!({})).await.1["result"]["can_read_all_group_messages"],
        true
    );

    // A chat the bot knows, the text in a query string, a form, JSON.
    tg.user_says(&ANN, "hi");
    let url = format!(
        "{}/bot{BOT_TOKEN}/sendMessage?chat_id={}&text=from%20a+query",
        tg.api_base(),
        ANN.id
    );
    let r = body_of(reqwest::get(url).await.unwrap()).await;
    assert_eq!(r["result"]["text"], "from a query", "{r}");
    let form = format!(
        "chat_id={}&text=a%20form&reply_parameters=%7B%22message_id%22%3A{}%7D",
        ANN.id, r["result"]["message_id"]
    );
    let r: Value = reqwest::Client::new()
        .post(format!("{}/bot{BOT_TOKEN}/sendMessage", tg.api_base()))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .map(|t| serde_json::from_str::<Value>(&t).unwrap())
        .unwrap();
    assert_eq!(
        (
            &r["result"]["text"],
            &r["result"]["reply_to_message"]["text"]
        ),
        (&json!("a form"), &json!("from a query"))
    );
    let (status, r) = call(
        &tg,
        "sendMessage",
        json!({"chat_id": ANN.id, "text": "<b>JSON</b>", "parse_mode": "HTML"}),
    )
    .await;
    assert_eq!(status, 200);
    let m = &r["result"];
    assert_eq!(
        m,
        &json!({"message_id": m["message_id"], "from": bot_user(), "chat": ANN.private_chat(),
                "date": m["date"], "text": "JSON",
                "entities": [{"offset": 0, "length": 4, "type": "bold"}]})
    );
    // The log keeps JSON values as sent, strings otherwise.
    let calls = tg.calls_of("sendmessage");
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[2].args["chat_id"], json!(ANN.id));
    assert_eq!(calls[1].args["chat_id"], json!(ANN.id.to_string()));
    assert_eq!(
        calls[1].json_arg("reply_parameters")["message_id"],
        m["message_id"].as_i64().unwrap() - 2
    );
}

#[test]
fn html_as_telegram_parses_it() {
    let ok = |s: &str| html::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"));
    let e = |kind, offset, length| Entity {
        kind,
        offset,
        length,
        url: None,
        language: None,
        custom_emoji_id: None,
    };
    // A bare `&` or `>` is kept; the named entities are four.
    assert_eq!(
        ok("<b>bold <i>both</i></b> &lt;tag&gt; &amp; &quot;q&quot; &#65;&#x42; a & b &nbsp; >"),
        (
            "bold both <tag> & \"q\" AB a & b &nbsp; >".to_string(),
            vec![e("bold", 0, 9), e("italic", 5, 4)]
        )
    );
    // Offsets count UTF-16 units: an emoji is two.
    assert_eq!(
        ok("😀 <u>x</u>"),
        ("😀 x".to_string(), vec![e("underline", 3, 1)])
    );
    let (text, entities) = ok(
        "<pre><code class=\"language-rust\">fn main() {}</code></pre> <code>x</code> \
         <a href=\"https://example.com/a?b=1&amp;c=2\">link</a> <tg-spoiler>s</tg-spoiler> \
         <span class=\"tg-spoiler\">t</span> <blockquote expandable>q</blockquote> \
         <blockquote>r</blockquote> <s>x</s><del>y</del><strike>z</strike><ins>w</ins><em>v</em><strong>u</strong>",
    );
    assert_eq!(text, "fn main() {} x link s t q r xyzwvu");
    let kinds: Vec<(&str, Option<String>, Option<String>)> = entities
        .iter()
        .map(|e| (e.kind, e.language.clone(), e.url.clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("pre", Some("rust".into()), None),
            ("code", None, None),
            (
                "text_link",
                None,
                Some("https://example.com/a?b=1&c=2".into())
            ),
            ("spoiler", None, None),
            ("spoiler", None, None),
            ("expandable_blockquote", None, None),
            ("blockquote", None, None),
            ("strikethrough", None, None),
            ("strikethrough", None, None),
            ("strikethrough", None, None),
            ("underline", None, None),
            ("italic", None, None),
            ("bold", None, None),
        ]
    );
    // The server's words, byte offsets and all.
    for (input, why) in [
        ("<br>", "Unsupported start tag \"br\" at byte offset 0"),
        ("a <p>b</p>", "Unsupported start tag \"p\" at byte offset 2"),
        ("x < y", "Unsupported start tag \"\" at byte offset 2"),
        (
            "<b>unclosed",
            "Can't find end tag corresponding to start tag \"b\"",
        ),
        (
            "<b><i>test</b></i>",
            "Unmatched end tag at byte offset 10, expected \"</i>\", found \"</b>\"",
        ),
        ("a</b>", "Unexpected end tag at byte offset 1"),
        ("<b", "Unclosed start tag at byte offset 0"),
        ("<b>x</b", "Unclosed end tag at byte offset 4"),
        (
            "<span>x</span>",
            "Tag \"span\" must have class \"tg-spoiler\" at byte offset 0",
        ),
        (
            "<i =x>",
            "Empty attribute name in the tag \"i\" at byte offset 0",
        ),
        ("<b/>", "Unsupported start tag \"b/\" at byte offset 0"),
        (
            "<b />",
            "Empty attribute name in the tag \"b\" at byte offset 0",
        ),
        (
            "<a href=x,y>",
            "Unexpected end of name token at byte offset 8",
        ),
        (
            "<tg-emoji emoji-id=\"9999999999999999999\">x</tg-emoji>",
            "Invalid custom emoji identifier specified",
        ),
    ] {
        assert_eq!(html::parse(input), Err(why.to_string()), "{input:?}");
    }
    // After parsing: ends trimmed, entities moved with the text.
    assert_eq!(
        html::finish("\n  <b>", vec![]),
        Some(("<b>".to_string(), vec![]))
    );
    assert_eq!(
        html::finish("  hi \n", vec![e("bold", 0, 5)]),
        Some(("hi".to_string(), vec![e("bold", 0, 2)]))
    );
    assert_eq!(html::finish(" \n ", vec![]), None);
    // What Telegram finds in people's texts.
    let found: Vec<(&str, String)> =
        html::detect("/status@gsv_test_bot hi @gsv_test_bot see https://x.io/a")
            .iter()
            .map(|e| {
                (
                    e.kind,
                    html::covered(
                        "/status@gsv_test_bot hi @gsv_test_bot see https://x.io/a",
                        e,
                    ),
                )
            })
            .collect();
    assert_eq!(
        found,
        vec![
            ("bot_command", "/status@gsv_test_bot".to_string()),
            ("mention", "@gsv_test_bot".to_string()),
            ("url", "https://x.io/a".to_string()),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_message_is_checked_as_telegram_checks_it() {
    let tg = FakeTelegram::start();
    let send = |params: Value| call(&tg, "sendMessage", params);
    assert_eq!(
        send(json!({"chat_id": ANN.id, "text": "hi"})).await,
        refused(400, "Bad Request: chat not found")
    );
    let hello = tg.user_says(&ANN, "hello");
    assert_eq!(
        send(json!({"chat_id": ANN.id, "text": ""})).await,
        refused(400, "Bad Request: message text is empty")
    );
    assert_eq!(
        send(json!({"chat_id": ANN.id, "text": " \n "})).await,
        refused(400, "Bad Request: text must be non-empty")
    );
    assert_eq!(
        send(json!({"chat_id": "", "text": "x"})).await,
        refused(400, "Bad Request: chat_id is empty")
    );
    assert_eq!(
        send(json!({"chat_id": ANN.id, "text": "x", "parse_mode": "Html5"})).await,
        refused(400, "Bad Request: unsupported parse_mode")
    );
    assert_eq!(
        send(json!({"chat_id": ANN.id, "text": "a <br> b", "parse_mode": "HTML"})).await,
        refused(
            400,
            "Bad Request: can't parse entities: Unsupported start tag \"br\" at byte offset 2"
        )
    );
    // 4 096 characters after parsing, not before.
    let long = format!("<b>{}</b>", "x".repeat(4096));
    assert_eq!(
        send(json!({"chat_id": ANN.id, "text": long, "parse_mode": "HTML"}))
            .await
            .0,
        200
    );
    assert_eq!(
        send(json!({"chat_id": ANN.id, "text": "x".repeat(4097)})).await,
        refused(400, "Bad Request: message is too long")
    );
    // Characters, not UTF-16 units: 4 096 emoji pass, 4 097 do not.
    assert_eq!(
        send(json!({"chat_id": ANN.id, "text": "😀".repeat(4096)}))
            .await
            .0,
        200
    );
    assert_eq!(
        send(json!({"chat_id": ANN.id, "text": "😀".repeat(4097)})).await,
        refused(400, "Bad Request: message is too long")
    );
    // Replies: to a message of the chat, or sent anyway when asked.
    assert_eq!(
        send(json!({"chat_id": ANN.id, "text": "x", "reply_parameters": {"message_id": 1}})).await,
        refused(400, "Bad Request: message to be replied not found")
    );
    let (status, r) = send(json!({"chat_id": ANN.id, "text": "x",
                                  "reply_parameters": {"message_id": 1, "allow_sending_without_reply": true}}))
    .await;
    assert_eq!((status, r["result"].get("reply_to_message")), (200, None));
    let (_, r) = send(json!({"chat_id": ANN.id, "text": "re",
                             "reply_parameters": {"message_id": hello.message_id}}))
    .await;
    assert_eq!(r["result"]["reply_to_message"], hello.message);
    // Buttons: callback data of 1 to 64 bytes.
    let keyboard =
        |data: &str| json!({"inline_keyboard": [[{"text": "Go", "callback_data": data}]]});
    assert_eq!(
        send(json!({"chat_id": ANN.id, "text": "x", "reply_markup": keyboard(&"x".repeat(65))}))
            .await,
        refused(400, "Bad Request: BUTTON_DATA_INVALID")
    );
    assert_eq!(
        send(json!({"chat_id": ANN.id, "text": "x", "reply_markup": keyboard("")})).await,
        refused(
            400,
            "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
        )
    );
    let (status, r) =
        send(json!({"chat_id": ANN.id, "text": "pick", "reply_markup": keyboard(&"y".repeat(64))}))
            .await;
    assert_eq!(status, 200);
    assert_eq!(r["result"]["reply_markup"], keyboard(&"y".repeat(64)));
    // Blocked.
    tg.block_bot(&ANN);
    assert_eq!(
        send(json!({"chat_id": ANN.id, "text": "still there?"})).await,
        refused(403, "Forbidden: bot was blocked by the user")
    );
    assert_eq!(
        call(
            &tg,
            "sendChatAction",
            json!({"chat_id": ANN.id, "action": "typing"})
        )
        .await,
        refused(403, "Forbidden: bot was blocked by the user")
    );
    tg.unblock_bot(&ANN);
    assert_eq!(
        call(
            &tg,
            "sendChatAction",
            json!({"chat_id": ANN.id, "action": "typing"})
        )
        .await,
        (200, json!({"ok": true, "result": true}))
    );
    assert_eq!(
        call(
            &tg,
            "sendChatAction",
            json!({"chat_id": ANN.id, "action": "dancing"})
        )
        .await,
        refused(400, "Bad Request: wrong parameter action in request")
    );
    let actions: Vec<(i64, String)> = tg
        .chat_actions()
        .into_iter()
        .map(|a| (a.chat_id, a.action))
        .collect();
    assert_eq!(actions, vec![(ANN.id, "typing".to_string())]);
    // What was sent, as people see it.
    let sent = tg.sent();
    let texts: Vec<(String, Option<&str>)> = sent
        .iter()
        .map(|m| {
            let t = m.text.as_deref().unwrap_or_default();
            (t.chars().take(3).collect(), m.parse_mode.as_deref())
        })
        .collect();
    assert_eq!(
        texts,
        vec![
            ("xxx".to_string(), Some("HTML")),
            ("😀😀😀".to_string(), None),
            ("x".to_string(), None),
            ("re".to_string(), None),
            ("pic".to_string(), None)
        ]
    );
    assert_eq!(sent[3].reply_to, Some(hello.message_id));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_gets_each_update_with_the_secret_until_it_answers_2xx() {
    let tg = FakeTelegram::start();
    let (url, seen, _hook) = webhook(vec![500, 502]);
    assert_eq!(
        call(
            &tg,
            "setWebhook",
            json!({"url": url, "secret_token": "bad secret!"})
        )
        .await,
        refused(
            400,
            "Bad Request: secret token contains unallowed characters"
        )
    );
    // One setWebhook a second.
    assert_eq!(
        call(
            &tg,
            "setWebhook",
            json!({"url": url, "secret_token": "s3cr3t-_A"})
        )
        .await,
        (
            429,
            json!({"ok": false, "error_code": 429, "description": "Too Many Requests: retry after 1",
                   "parameters": {"retry_after": 1}})
        )
    );
    std::thread::sleep(Duration::from_millis(1100));
    let set = json!({"url": url, "secret_token": "s3cr3t-_A",
                     "allowed_updates": ["message", "edited_message", "callback_query"]});
    assert_eq!(
        call(&tg, "setWebhook", set.clone()).await,
        (
            200,
            json!({"ok": true, "result": true, "description": "Webhook was set"})
        )
    );
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(
        call(&tg, "setWebhook", set).await,
        (
            200,
            json!({"ok": true, "result": true, "description": "Webhook is already set"})
        )
    );
    assert_eq!(
        tg.webhook(),
        Some(Webhook {
            url: url.clone(),
            secret_token: Some("s3cr3t-_A".into()),
            max_connections: 40
        })
    );
    assert_eq!(
        call(&tg, "getUpdates", json!({})).await,
        refused(
            409,
            "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"
        )
    );

    // Two updates of one chat: the first refused twice, then both in order.
    let first = tg.user_says(&ANN, "one");
    let second = tg.user_says(&ANN, "two");
    let (a, b) = (first.update_id.unwrap(), second.update_id.unwrap());
    assert_eq!(b, a + 1);
    tg.wait_delivered(WAIT, b);
    let statuses: Vec<(Option<i64>, u16)> = tg
        .deliveries()
        .iter()
        .map(|d| (d.update_id, d.status))
        .collect();
    assert_eq!(
        statuses,
        vec![
            (Some(a), 500),
            (Some(a), 502),
            (Some(a), 200),
            (Some(b), 200)
        ]
    );
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen[3],
        (
            Some("s3cr3t-_A".to_string()),
            json!({"update_id": b, "message": second.message})
        )
    );
    assert_eq!(tg.pending_updates(), Vec::<i64>::new());
    let (_, info) = call(&tg, "getWebhookInfo", json!({})).await;
    let info = &info["result"];
    assert_eq!(
        info,
        &json!({"url": url, "has_custom_certificate": false, "pending_update_count": 0,
                "max_connections": 40, "ip_address": "127.0.0.1",
                // The last error stays until the webhook is set again.
                "last_error_date": info["last_error_date"],
                "last_error_message": "Wrong response from the webhook: 502 Bad Gateway",
                "allowed_updates": ["message", "edited_message", "callback_query"]})
    );

    // The test's own posts: a redelivery with the secret, a forgery without.
    assert_eq!(tg.redeliver(a), 200);
    let forged = tg.forged_update(&BOB, "forged");
    assert_eq!(tg.post_forged(&forged, Some("wrong")), 200);
    let kinds: Vec<(DeliveryKind, Option<String>)> = tg.deliveries()[4..]
        .iter()
        .map(|d| (d.kind, d.secret.clone()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (DeliveryKind::Redelivery, Some("s3cr3t-_A".into())),
            (DeliveryKind::Forged, Some("wrong".into()))
        ]
    );
    // Not in allowed_updates: never made.
    tg.block_bot(&ANN);
    assert_eq!(tg.pending_updates(), Vec::<i64>::new());

    assert_eq!(
        call(&tg, "deleteWebhook", json!({})).await,
        (
            200,
            json!({"ok": true, "result": true, "description": "Webhook was deleted"})
        )
    );
    assert_eq!(
        call(&tg, "deleteWebhook", json!({})).await,
        (
            200,
            json!({"ok": true, "result": true, "description": "Webhook is already deleted"})
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_updates_long_polls_and_offset_confirms() {
    let tg = FakeTelegram::start();
    // Nothing waiting: held for the timeout, then an empty list.
    let started = Instant::now();
    assert_eq!(
        call(&tg, "getUpdates", json!({"timeout": 1})).await,
        (200, json!({"ok": true, "result": []}))
    );
    assert!(started.elapsed() >= Duration::from_secs(1));

    // A message while a poll is held ends it at once.
    let poll = {
        let base = tg.api_base();
        tokio::spawn(async move {
            reqwest::Client::new()
                .post(format!("{base}/bot{BOT_TOKEN}/getUpdates"))
                .header("content-type", "application/json")
                .body(json!({"timeout": 20, "offset": 0}).to_string())
                .send()
                .await
                .unwrap()
                .text()
                .await
                .map(|t| serde_json::from_str::<Value>(&t).unwrap())
                .unwrap()
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let hi = tg.user_says(&ANN, "hi");
    let got = poll.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    let id = hi.update_id.unwrap();
    assert_eq!(
        got,
        json!({"ok": true, "result": [{"update_id": id, "message": hi.message}]})
    );
    // Not confirmed yet: given again; offset confirms.
    tg.user_says(&ANN, "again");
    let (_, r) = call(&tg, "getUpdates", json!({"offset": id})).await;
    assert_eq!(r["result"].as_array().unwrap().len(), 2);
    let (_, r) = call(&tg, "getUpdates", json!({"offset": id + 2, "timeout": 0})).await;
    assert_eq!(r["result"], json!([]));
    assert_eq!(tg.pending_updates(), Vec::<i64>::new());

    // A second poll ends the first with 409; setWebhook ends the second.
    let base = tg.api_base();
    let poll = |timeout: u64| {
        let base = base.clone();
        tokio::spawn(async move {
            let resp = reqwest::Client::new()
                .get(format!(
                    "{base}/bot{BOT_TOKEN}/getUpdates?timeout={timeout}&offset={}",
                    id + 2
                ))
                .send()
                .await
                .unwrap();
            (resp.status().as_u16(), body_of(resp).await)
        })
    };
    let first = poll(20);
    std::thread::sleep(Duration::from_millis(300));
    let second = poll(20);
    assert_eq!(
        first.await.unwrap(),
        refused(
            409,
            "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
        )
    );
    std::thread::sleep(Duration::from_millis(300));
    let (url, _, _hook) = webhook(vec![]);
    assert_eq!(call(&tg, "setWebhook", json!({"url": url})).await.0, 200);
    assert_eq!(
        second.await.unwrap(),
        refused(409, "Conflict: terminated by setWebhook request")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_in_and_out() {
    let tg = FakeTelegram::start();
    let photo = jpeg(5000);
    let msg = tg
        .says(&ANN)
        .photo(photo.clone())
        .text("look @gsv_test_bot")
        .send();
    // Sizes from small to large; the largest is the photo.
    let sizes = msg.message["photo"].as_array().unwrap().clone();
    assert_eq!(sizes.len(), 3);
    assert_eq!(
        msg.message["caption_entities"],
        json!([{"offset": 5, "length": 13, "type": "mention"}])
    );
    let largest = &sizes[2];
    assert_eq!(
        (largest["width"].clone(), largest["file_size"].clone()),
        (json!(1280), json!(5000))
    );
    let (status, file) = call(&tg, "getFile", json!({"file_id": largest["file_id"]})).await;
    assert_eq!(status, 200);
    let path = file["result"]["file_path"].as_str().unwrap().to_string();
    assert!(
        path.starts_with("photos/") && path.ends_with(".jpg"),
        "{path}"
    );
    assert_eq!(
        file["result"],
        json!({"file_id": largest["file_id"], "file_unique_id": largest["file_unique_id"],
               "file_size": 5000, "file_path": path})
    );
    let resp = reqwest::get(format!("{}/file/bot{BOT_TOKEN}/{path}", tg.api_base()))
        .await
        .unwrap();
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "application/octet-stream"
    );
    assert_eq!(resp.bytes().await.unwrap().to_vec(), photo);
    let resp = reqwest::get(format!(
        "{}/file/bot{BOT_TOKEN}/photos/nope.jpg",
        tg.api_base()
    ))
    .await
    .unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    assert_eq!(
        call(&tg, "getFile", json!({"file_id": "nope"})).await,
        refused(400, "Bad Request: invalid file_id")
    );
    let big = tg
        .says(&ANN)
        .document(
            vec![0u8; MAX_DOWNLOAD_BYTES + 1],
            "big.bin",
            "application/octet-stream",
        )
        .send();
    assert_eq!(
        call(
            &tg,
            "getFile",
            json!({"file_id": big.message["document"]["file_id"]})
        )
        .await,
        refused(400, "Bad Request: file is too big")
    );

    // Uploads: the bytes kept, the caption parsed.
    let chat = ANN.id.to_string();
    let (status, r) = upload(
        &tg,
        "sendPhoto",
        &[
            ("chat_id", &chat),
            ("caption", "<i>here</i>"),
            ("parse_mode", "HTML"),
        ],
        ("photo", "p.jpg", "image/jpeg", &photo),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(
        (&r["result"]["caption"], &r["result"]["caption_entities"]),
        (
            &json!("here"),
            &json!([{"offset": 0, "length": 4, "type": "italic"}])
        )
    );
    let (status, r) = upload(
        &tg,
        "sendDocument",
        &[("chat_id", &chat)],
        ("document", "notes.md", "text/markdown", b"# hi\n"),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let doc = &r["result"]["document"];
    assert_eq!(
        (&doc["file_name"], &doc["mime_type"], &doc["file_size"]),
        (&json!("notes.md"), &json!("text/markdown"), &json!(5))
    );
    let sent = tg.sent();
    let files: Vec<(String, Option<String>, usize)> = sent
        .iter()
        .map(|m| {
            let f = m.file.as_ref().unwrap();
            (f.kind.clone(), f.filename.clone(), f.bytes.len())
        })
        .collect();
    assert_eq!(
        files,
        vec![
            ("photo".into(), Some("p.jpg".into()), 5000),
            ("document".into(), Some("notes.md".into()), 5)
        ]
    );
    assert_eq!(sent[0].file.as_ref().unwrap().bytes.as_ref(), &photo);
    // What Telegram refuses.
    assert_eq!(
        upload(
            &tg,
            "sendPhoto",
            &[("chat_id", &chat)],
            ("photo", "x.pdf", "application/pdf", b"%PDF-1.4")
        )
        .await,
        refused(400, "Bad Request: IMAGE_PROCESS_FAILED")
    );
    assert_eq!(
        call(&tg, "sendPhoto", json!({"chat_id": ANN.id})).await,
        refused(400, "Bad Request: there is no photo in the request")
    );
    let caption = "c".repeat(1025);
    assert_eq!(
        upload(
            &tg,
            "sendVoice",
            &[("chat_id", &chat), ("caption", &caption)],
            ("voice", "v.ogg", "audio/ogg", b"OggS")
        )
        .await,
        refused(400, "Bad Request: message caption is too long")
    );
    // A held file goes again by its id.
    let (status, r) = call(
        &tg,
        "sendPhoto",
        json!({"chat_id": ANN.id, "photo": largest["file_id"]}),
    )
    .await;
    assert_eq!(
        (status, &r["result"]["photo"][0]["file_id"]),
        (200, &largest["file_id"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flood_control_asks_for_a_wait_and_holds_to_it() {
    let tg = FakeTelegram::start();
    tg.user_says(&ANN, "hi");
    tg.fail_next("sendMessage", 1, 1);
    let send = || call(&tg, "sendMessage", json!({"chat_id": ANN.id, "text": "x"}));
    let too_many = (
        429,
        json!({"ok": false, "error_code": 429, "description": "Too Many Requests: retry after 1",
               "parameters": {"retry_after": 1}}),
    );
    assert_eq!(send().await, too_many);
    // Too early: refused again.
    assert_eq!(send().await, too_many);
    std::thread::sleep(Duration::from_millis(1050));
    assert_eq!(send().await.0, 200);
    let resp = {
        tg.fail_next("sendMessage", 1, 7);
        reqwest::Client::new()
            .post(format!("{}/bot{BOT_TOKEN}/sendMessage", tg.api_base()))
            .header("content-type", "application/json")
            .body(json!({"chat_id": ANN.id, "text": "y"}).to_string())
            .send()
            .await
            .unwrap()
    };
    assert_eq!(resp.headers()["retry-after"].to_str().unwrap(), "7");
    tg.fail_next_with("getMe", 1, 502, "Bad Gateway");
    assert_eq!(
        call(&tg, "getMe", json!({})).await,
        refused(502, "Bad Gateway")
    );
    assert_eq!(call(&tg, "getMe", json!({})).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_privacy_mode_topics_edits_and_buttons() {
    let tg = FakeTelegram::start();
    let group = tg.group("gsv testers");
    // Privacy mode: chatter is not the bot's; a mention, a command, a reply to it are.
    assert_eq!(
        tg.user_says_in(&ANN, group, "just chatting").update_id,
        None
    );
    let mention = tg.user_says_in(&ANN, group, "@gsv_test_bot what's up");
    assert!(mention.update_id.is_some());
    assert_eq!(
        mention.message["entities"],
        json!([{"offset": 0, "length": 13, "type": "mention"}])
    );
    assert!(tg.user_says_in(&BOB, group, "/status").update_id.is_some());
    assert!(tg
        .user_says_in(&BOB, group, "/status@gsv_test_bot")
        .update_id
        .is_some());
    assert_eq!(
        tg.user_says_in(&BOB, group, "/status@other_bot").update_id,
        None
    );
    let (_, r) = call(
        &tg,
        "sendMessage",
        json!({"chat_id": group, "text": "answer"}),
    )
    .await;
    let bot_msg = r["result"]["message_id"].as_i64().unwrap();
    let reply = tg
        .says(&CAROL)
        .chat(group)
        .reply_to(bot_msg)
        .text("thanks")
        .send();
    assert!(reply.update_id.is_some());
    assert_eq!(reply.message["reply_to_message"]["from"], bot_user());
    tg.set_privacy_mode(false);
    assert!(tg.user_says_in(&ANN, group, "chatter").update_id.is_some());

    // A forum topic: its messages name the thread and reply to its first message.
    let forum = tg.forum("gsv forum");
    let topic = tg.topic(forum, "Ideas", &BOB);
    let said = tg
        .says(&ANN)
        .chat(forum)
        .topic(topic)
        .text("in the topic")
        .send();
    assert_eq!(said.message["message_thread_id"], topic);
    assert_eq!(said.message["is_topic_message"], true);
    assert_eq!(
        said.message["reply_to_message"]["forum_topic_created"],
        json!({"name": "Ideas", "icon_color": 7_322_096})
    );
    assert_eq!(
        call(
            &tg,
            "sendMessage",
            json!({"chat_id": forum, "text": "x", "message_thread_id": 999})
        )
        .await,
        refused(400, "Bad Request: message thread not found")
    );
    let (status, r) = call(
        &tg,
        "sendMessage",
        json!({"chat_id": forum, "text": "there", "reply_parameters": {"message_id": said.message_id}}),
    )
    .await;
    assert_eq!(status, 200);
    // A reply lands in the topic of what it answers.
    assert_eq!(r["result"]["message_thread_id"], topic);
    let sent = tg.sent_to(forum);
    assert_eq!(
        (sent[0].thread_id, sent[0].reply_to),
        (Some(topic), Some(said.message_id))
    );

    // An edit, a button press and its answer (once).
    let edited = tg.user_edits(&ANN, forum, said.message_id, "edited");
    assert_eq!(edited.message["text"], "edited");
    assert!(edited.message["edit_date"].is_i64());
    let (_, r) = call(
        &tg,
        "sendMessage",
        json!({"chat_id": ANN.id, "text": "ok?", "reply_markup":
               {"inline_keyboard": [[{"text": "Yes", "callback_data": "/approve 1"}]]}}),
    )
    .await;
    assert_eq!(r, refused(400, "Bad Request: chat not found").1);
    tg.user_says(&ANN, "hi");
    let (_, r) = call(
        &tg,
        "sendMessage",
        json!({"chat_id": ANN.id, "text": "ok?", "reply_markup":
               {"inline_keyboard": [[{"text": "Yes", "callback_data": "/approve 1"}]]}}),
    )
    .await;
    let (update, query) = tg.press_button(
        &ANN,
        ANN.id,
        r["result"]["message_id"].as_i64().unwrap(),
        "/approve 1",
    );
    let pending = tg.pending_updates();
    assert_eq!(pending.last().copied(), update);
    let (_, all) = call(&tg, "getUpdates", json!({})).await;
    let press = all["result"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(press["callback_query"]["data"], "/approve 1", "{press}");
    assert_eq!(
        press["callback_query"]["message"]["message_id"],
        r["result"]["message_id"]
    );
    let answer = json!({"callback_query_id": query, "text": "Approved"});
    assert_eq!(
        call(&tg, "answerCallbackQuery", answer.clone()).await,
        (200, json!({"ok": true, "result": true}))
    );
    assert_eq!(
        call(&tg, "answerCallbackQuery", answer).await,
        refused(
            400,
            "Bad Request: query is too old and response timeout expired or query ID is invalid"
        )
    );
    assert_eq!(
        tg.callback_answers(),
        vec![CallbackAnswer {
            callback_query_id: query,
            text: Some("Approved".into()),
            show_alert: false
        }]
    );
}
