//! The web UI end to end: the gateway under workerd serving web/dist as
//! static assets beside /ws, a real headless Chromium (src/browser.rs)
//! driving it, the fake LLM streaming its answers. Screenshots of the main
//! screens go to target/ui-screenshots/.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::browser::Browser;
use gsv_e2e::channel_rig::start_gateway_with_whatsapp_web_and_ui;
use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::fake_whatsapp_web::FakeWhatsAppWeb;
use gsv_e2e::harness::{free_port, run_gsv, GatewayOptions, Node, Workerd};
use gsv_e2e::poll::{self, ms, secs};
use gsv_e2e::ws::{raw_channel, Client};
use serde_json::{json, Value};
use std::time::Duration;

const TOKEN: &str = "test-token";
const DESKTOP: (u32, u32) = (1280, 860);
const PHONE: (u32, u32) = (390, 844);

/// One GET to the gateway: (status code, headers as "name: value" lines,
/// lower-cased, body).
async fn http_get(port: u16, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let mut req = reqwest::Client::new().get(format!("http://127.0.0.1:{port}{path}"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = req
        .send()
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let status = res.status().as_u16();
    let head = res
        .headers()
        .iter()
        .map(|(k, v)| format!("{}: {}\n", k.as_str(), v.to_str().unwrap_or_default()))
        .collect::<String>()
        .to_ascii_lowercase();
    (status, head, res.text().await.unwrap())
}

/// Opens the UI and logs in with the token; returns once connected.
async fn login(b: &Browser, gw: &Workerd, path: &str) {
    b.goto(&format!("{}{path}", gw.http_url())).await;
    b.type_into("#login input[name=token]", TOKEN).await;
    b.click("#login button[type=submit]").await;
    b.wait_css(".badge[data-status=connected]").await;
}

/// Sends a message from the chat tab.
async fn send(b: &Browser, text: &str) {
    b.type_into("textarea[name=message]", text).await;
    b.click("#send").await;
}

/// The system prompt of the model requests whose last message is `text`.
fn prompts_for(llm: &FakeLlm, text: &str) -> Vec<String> {
    llm.requests()
        .into_iter()
        .filter(|r| {
            r.body["messages"]
                .as_array()
                .and_then(|m| m.last())
                .is_some_and(|m| m["content"] == json!(text))
        })
        .map(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn the_gateway_serves_the_ui_beside_its_own_paths() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let port = gw.port;
    // The Worker's routes win over the assets.
    let (status, _, body) = http_get(port, "/health", &[]).await;
    assert_eq!(
        (status, body.contains("\"healthy\"")),
        (200, true),
        "{body}"
    );
    let (status, _, _) = http_get(port, "/ws", &[]).await;
    assert_eq!(status, 426, "/ws without an upgrade is the Worker's answer");
    let (status, _, _) = http_get(port, "/internal/channel/inbound", &[]).await;
    assert_eq!(
        status, 404,
        "GET on an internal path is the Worker's 404, not the page"
    );
    // The page, at / and at a tab's path (navigations fall back to it).
    for path in ["/", "/chat", "/workspace"] {
        let (status, head, body) = http_get(
            port,
            path,
            &[("sec-fetch-mode", "navigate"), ("accept", "text/html")],
        )
        .await;
        assert_eq!(status, 200, "{path}: {head}");
        assert!(body.contains("<div id=\"app\">"), "{path}: {body}");
        assert!(
            head.contains("content-security-policy: default-src 'self'; script-src 'self'"),
            "{path}: {head}"
        );
    }
    // Its script and stylesheet, hashed and cached for good.
    let (_, _, index) = http_get(port, "/", &[]).await;
    let js = index
        .split("src=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap();
    let (status, head, body) = http_get(port, js, &[]).await;
    assert_eq!(status, 200, "{js}: {head}");
    assert!(
        head.contains("cache-control: public, max-age=31536000, immutable"),
        "{head}"
    );
    assert!(body.len() > 10_000, "{js} is {} bytes", body.len());
    // Any other path is a page of the app (single-page fallback): the app
    // shows its chat tab there.
    let (status, _, body) = http_get(port, "/no/such/page", &[]).await;
    assert_eq!(
        (status, body.contains("<div id=\"app\">")),
        (200, true),
        "{body}"
    );
}

#[tokio::test]
async fn logging_in_wrong_then_right_reconnecting_and_an_unreachable_gateway() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let mut gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    b.goto(&format!("{}/", gw.http_url())).await;
    b.wait_css("#login").await;
    // First paint and the app's first render, from this fresh profile.
    let timing = b
        .js(
            "const p = performance.getEntriesByName('first-contentful-paint')[0];
             const m = performance.getEntriesByName('gsv-app-rendered')[0];
             return [p ? p.startTime : null, m ? m.startTime : null];",
            vec![],
        )
        .await;
    let fcp = timing[0].as_f64().expect("a first-contentful-paint entry");
    let app = timing[1].as_f64().expect("the app's render mark");
    eprintln!("first contentful paint {fcp:.0} ms, app rendered {app:.0} ms");
    assert!(fcp < 1000.0, "first contentful paint took {fcp} ms");
    assert!(app < 1000.0, "the app rendered after {app} ms");
    b.screenshot("login").await;

    // A wrong token: a clear refusal, and no connection.
    b.type_into("#login input[name=token]", "not-the-token")
        .await;
    b.click("#login button[type=submit]").await;
    b.wait_css("#login-error").await;
    let error = b.text("#login-error").await;
    assert!(error.contains("refused this token"), "{error}");
    assert_eq!(
        b.js(
            "return localStorage.getItem('gsv-ui-settings') !== null",
            vec![]
        )
        .await,
        json!(true)
    );

    // The right one: connected, and kept across a reload.
    b.type_into("#login input[name=token]", TOKEN).await;
    b.click("#login button[type=submit]").await;
    b.wait_css(".badge[data-status=connected]").await;
    b.client.refresh().await.unwrap();
    b.wait_css(".badge[data-status=connected]").await;
    assert_eq!(b.text("#login").await, "", "no login form after a reload");

    // The gateway goes away and comes back: a banner, then connected again.
    gw.restart_after(Duration::from_millis(1500));
    b.wait_js_within(
        "connected again after the restart",
        "return document.querySelector('.badge[data-status=connected]') !== null",
        vec![],
        Duration::from_secs(60),
    )
    .await;

    // Log out, then point at a gateway that is not there.
    b.click(".topbar-end button.link").await;
    b.wait_css("#login").await;
    let closed = free_port();
    b.click("#login button.link").await;
    b.type_into(
        "#login input[name=gatewayUrl]",
        &format!("ws://127.0.0.1:{closed}/ws"),
    )
    .await;
    b.type_into("#login input[name=token]", TOKEN).await;
    b.click("#login button[type=submit]").await;
    b.wait_css("#unreachable .error").await;
    let screen = b.text("#unreachable").await;
    assert!(screen.contains("Cannot reach the gateway"), "{screen}");
    assert!(
        screen.contains(&format!("ws://127.0.0.1:{closed}/ws")),
        "{screen}"
    );
    assert!(screen.contains("Trying again in"), "{screen}");
    b.screenshot("unreachable").await;
    b.close().await;
}

#[tokio::test]
async fn a_streamed_answer_grows_then_ends_and_a_run_can_be_stopped() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let llm = FakeLlm::start().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    llm.set_token_delay_ms(60);
    let story: Vec<String> = (1..=40).map(|i| format!("word{i}")).collect();
    let story = story.join(" ");
    llm.script("tell me a story", vec![Step::text(story.clone())]);

    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    login(&b, &gw, "/chat").await;
    send(&b, "tell me a story").await;

    // The answer grows while it streams.
    let mut seen: Vec<usize> = Vec::new();
    poll::until(secs(30), ms(40), async || {
        let streaming = b
            .js(
                "const e = document.querySelector('.msg.assistant.streaming'); return e ? e.innerText : null;",
                vec![],
            )
            .await;
        match streaming.as_str() {
            Some(text) if seen.last() != Some(&text.len()) => seen.push(text.len()),
            Some(_) => {}
            None if !seen.is_empty() => return Ok(()),
            None => {}
        }
        Err(format!("the answer never finished: {seen:?}"))
    })
    .await;
    assert!(
        seen.len() >= 4,
        "the streamed text did not grow step by step: {seen:?}"
    );
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    // Then the finished answer, from the history, in full.
    b.wait_js(
        "the whole answer",
        "return [...document.querySelectorAll('.msg.assistant')].some(e => e.innerText.includes('word40'))",
        vec![],
    )
    .await;
    let last = b
        .js("const a = document.querySelectorAll('.msg.assistant'); return a[a.length - 1].innerText;", vec![])
        .await;
    assert_eq!(last.as_str().unwrap().trim(), story);
    b.screenshot("chat-streamed").await;

    // A long answer, stopped halfway: the run ends cancelled.
    let long: Vec<String> = (1..=300).map(|i| format!("w{i}")).collect();
    llm.script("keep talking", vec![Step::text(long.join(" "))]);
    send(&b, "keep talking").await;
    b.wait_js(
        "the answer to start",
        "const e = document.querySelector('.msg.assistant.streaming'); return e && e.innerText.length > 10;",
        vec![],
    )
    .await;
    b.click("#stop").await;
    b.wait_js(
        "the stopped run's end",
        "return !document.querySelector('.msg.assistant.streaming') && !document.querySelector('#stop');",
        vec![],
    )
    .await;
    let page = b.text("#messages").await;
    assert!(
        !page.contains("w300"),
        "the whole answer arrived although stopped"
    );
    let stats = owner
        .request("session.stats", json!({"sessionKey": "agent:main:main"}))
        .await;
    assert_eq!(stats.payload.unwrap()["isProcessing"], json!(false));

    // A slash command is answered by the session.
    send(&b, "/status").await;
    b.wait_css("[data-note=command]").await;
    let note = b.text("[data-note=command]").await;
    assert!(note.contains("agent:main:main"), "{note}");
    b.close().await;
}

#[tokio::test]
async fn markdown_from_the_model_renders_but_its_scripts_never_run() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let llm = FakeLlm::start().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    let evil = "Here is **bold** and `code`.\n\n\
        <img src=\"x\" onerror=\"window.__pwned = 'img'\">\n\n\
        <script>window.__pwned = 'script'</script>\n\n\
        [click](javascript:window.__pwned='link') <a href=\"#\" onclick=\"window.__pwned='click'\">x</a>\n\n\
        <iframe src=\"javascript:parent.__pwned='iframe'\"></iframe><svg><script>window.__pwned='svg'</script></svg>";
    llm.script("show me", vec![Step::text(evil)]);

    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    login(&b, &gw, "/chat").await;
    send(&b, "show me").await;
    b.wait_js(
        "the rendered answer",
        "return [...document.querySelectorAll('.msg.assistant .md strong')].some(e => e.innerText === 'bold')",
        vec![],
    )
    .await;
    // Give an error handler every chance to fire.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let verdict = b
        .js(
            "const m = document.querySelector('#messages');
             return {
               pwned: window.__pwned === undefined ? null : window.__pwned,
               scripts: m.querySelectorAll('script').length,
               iframes: m.querySelectorAll('iframe').length,
               handlers: [...m.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
               jsLinks: [...m.querySelectorAll('a')].filter(a => (a.getAttribute('href') || '').toLowerCase().startsWith('javascript')).length,
               code: m.querySelector('.md code') ? m.querySelector('.md code').innerText : null,
             };",
            vec![],
        )
        .await;
    assert_eq!(
        verdict,
        json!({"pwned": null, "scripts": 0, "iframes": 0, "handlers": 0, "jsLinks": 0, "code": "code"})
    );
    // Clicking what is left of the links runs nothing either.
    for link in b
        .client
        .find_all(fantoccini::Locator::Css("#messages .md a"))
        .await
        .unwrap()
    {
        let _ = link.click().await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        b.js("return window.__pwned === undefined", vec![]).await,
        json!(true)
    );
    b.close().await;
}

#[tokio::test]
async fn a_pairing_request_is_approved_from_the_channels_tab() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let llm = FakeLlm::start().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    let mut discord = raw_channel(&gw.url(), TOKEN, "discord").await;
    let dm = json!({
        "channel": "discord", "accountId": "default",
        "message": {
            "messageId": "m1",
            "peer": {"kind": "dm", "id": "dm-81"},
            "sender": {"id": "81", "name": "Alice", "handle": "alice"},
            "text": "hello?",
            "timestamp": 1_795_529_100_000i64
        }
    });
    let res = discord.request("channel.inbound", dm).await;
    assert_eq!(res.payload.unwrap()["status"], json!("pendingPairing"));
    let pairs = owner.request("pair.list", json!({})).await.payload.unwrap();
    let code = pairs["pairs"]["discord:81"]["code"]
        .as_str()
        .unwrap()
        .to_string();

    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    login(&b, &gw, "/channels").await;
    let row = format!("#pairs [data-code='{code}']");
    b.wait_css(&row).await;
    let shown = b.text(&row).await;
    assert!(shown.contains("Alice") && shown.contains(&code), "{shown}");
    b.screenshot("channels").await;
    b.click(&format!("{row} [data-action=approve]")).await;
    b.wait_css(".ok-note").await;
    assert!(b
        .text(".ok-note")
        .await
        .contains("Approved Alice on discord"));

    // The gateway agrees: no request left, the sender allowed, and told.
    let pairs = owner.request("pair.list", json!({})).await.payload.unwrap();
    assert_eq!(pairs, json!({"pairs": {}}));
    let allow = owner
        .request("config.get", json!({"path": "channels.discord.allowFrom"}))
        .await
        .payload
        .unwrap();
    assert_eq!(allow["value"], json!(["81"]));
    let code_msg: Value = discord.next_event("channel.outbound").await;
    assert!(
        code_msg["message"]["text"]
            .as_str()
            .unwrap()
            .contains(&code),
        "{code_msg}"
    );
    let told: Value = discord.next_event("channel.outbound").await;
    assert!(
        told["message"]["text"]
            .as_str()
            .unwrap()
            .contains("You're approved"),
        "{told}"
    );
    b.close().await;
}

#[tokio::test]
async fn linking_whatsapp_without_its_channel_shows_why_and_the_tab_still_works() {
    // This gateway has no channel bindings, so channel.login whatsapp-web
    // (asked by the Link control for a number not yet linked) is refused
    // with the reason; the page shows it, stops asking, and stays usable.
    // (With the channel Worker, the QR code is scanned off the screen:
    // whatsapp_is_linked_by_scanning_the_qr_code_on_the_screen_then_unlinked.)
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    login(&b, &gw, "/channels").await;
    let link = "#link-new [data-link='whatsapp-web:default']";
    b.wait_css(link).await;
    assert!(b.text("#link-new").await.contains("Link WhatsApp"));
    b.click(&format!("{link} [data-action=link]")).await;
    b.wait_css(&format!("{link} .error")).await;
    let why = b.text(&format!("{link} .error")).await;
    assert!(why.contains("No whatsapp-web channel"), "{why}");
    assert_eq!(
        b.js(
            "return document.querySelectorAll('img[alt=\"WhatsApp QR code\"]').length",
            vec![]
        )
        .await,
        json!(0)
    );
    b.screenshot("channels-link-refused").await;

    // Closed, the reason goes and it can be asked again.
    b.click(&format!("{link} [data-action=close-link]")).await;
    b.wait_css(&format!("{link} [data-action=link]")).await;
    assert_eq!(b.text(&format!("{link} .error")).await, "");

    // A whatsapp-web account the gateway knows (here a bridge over
    // WebSocket, which links on its own side) has Link and Unlink on its
    // card; both say why they cannot, Unlink after asking first.
    let mut bridge = raw_channel(&gw.url(), TOKEN, "whatsapp-web").await;
    let hello = json!({
        "channel": "whatsapp-web", "accountId": "default",
        "message": {
            "messageId": "w1",
            "peer": {"kind": "dm", "id": "15550001111@s.whatsapp.net"},
            "sender": {"id": "15550001111", "name": "Bea"},
            "text": "hi",
            "timestamp": 1_795_529_100_000i64
        }
    });
    let res = bridge.request("channel.inbound", hello).await;
    assert!(res.ok, "{res:?}");
    b.js(
        "[...document.querySelectorAll('.card')]
           .find((c) => c.querySelector('h2').innerText === 'Channels')
           .querySelector('.card-actions button').click();",
        vec![],
    )
    .await;
    let card = ".account[data-channel='whatsapp-web'] [data-link='whatsapp-web:default']";
    b.wait_css(card).await;
    assert_eq!(b.text("#link-new").await, "");
    b.click(&format!("{card} [data-action=link]")).await;
    b.wait_css(&format!("{card} .error")).await;
    let why = b.text(&format!("{card} .error")).await;
    assert!(why.contains("connected over WebSocket"), "{why}");
    b.click(&format!("{card} [data-action=unlink]")).await;
    b.client.accept_alert().await.unwrap();
    b.wait_js(
        "the unlink refused",
        "const e = document.querySelector(arguments[0]); return e && e.innerText.includes('log out');",
        vec![json!(format!("{card} .error"))],
    )
    .await;
    // The rest of the tab still works.
    assert!(b.text("body").await.contains("Start a channel account"));
    b.close().await;
}

/// Every QR code a phone's camera finds in a PNG (a screenshot), read
/// from its pixels: the text, or why it could not be read.
fn qr_codes_in(png_bytes: &[u8]) -> Vec<Result<String, String>> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    // Whatever Chromium encodes (palette, 16-bit), 8-bit samples out.
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buf).unwrap();
    let samples = frame.color_type.samples();
    let (w, h, line) = (frame.width as usize, frame.height as usize, frame.line_size);
    let mut img = rqrr::PreparedImage::prepare_from_greyscale(w, h, |x, y| {
        let p = &buf[y * line + x * samples..];
        if samples < 3 {
            p[0]
        } else {
            // Luma (ITU-R BT.601); alpha, if any, is ignored (a
            // screenshot is opaque).
            ((u32::from(p[0]) * 299 + u32::from(p[1]) * 587 + u32::from(p[2]) * 114) / 1000) as u8
        }
    });
    img.detect_grids()
        .into_iter()
        .map(|grid| {
            grid.decode()
                .map(|(_, text)| text)
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// Waits until the page shows a loaded QR code image other than
/// `previous` (its data URL); brings it into view, takes the screenshot
/// `name` and reads the one QR code in it, as the phone would.
async fn scan_the_screen(b: &Browser, previous: Option<&str>, name: &str) -> (String, String) {
    let src = b
        .wait_js(
            "a QR code image",
            "const i = document.querySelector('img[alt=\"WhatsApp QR code\"]');
             if (!i || !i.complete || i.naturalWidth === 0 || i.src === arguments[0]) return null;
             i.scrollIntoView({block: 'center'});
             return i.src;",
            vec![json!(previous)],
        )
        .await
        .as_str()
        .unwrap()
        .to_string();
    let shot = b.screenshot(name).await;
    let codes = qr_codes_in(&std::fs::read(&shot).unwrap());
    let [Ok(text)] = &codes[..] else {
        panic!(
            "{}: one readable QR code expected, found {codes:?}",
            shot.display()
        );
    };
    (text.clone(), src)
}

/// The number the WhatsApp Web tests link.
const WA_AGENT: &str = "15550001111";

/// The channels tab of a gateway with the WhatsApp Web channel (its test
/// build) and the double, on a screen of `size`, the number not linked
/// yet; the permit keeps other browser tests out meanwhile.
async fn whatsapp_web_channels_tab(
    size: (u32, u32),
) -> (
    tokio::sync::SemaphorePermit<'static>,
    FakeWhatsAppWeb,
    Workerd,
    Browser,
) {
    let one = gsv_e2e::browser::one_at_a_time().await;
    let wa = FakeWhatsAppWeb::start();
    wa.add_account_named(WA_AGENT, "Agent");
    let gw = start_gateway_with_whatsapp_web_and_ui(&wa, TOKEN);
    let b = Browser::start(size.0, size.1).await;
    login(&b, &gw, "/channels").await;
    b.wait_css("#link-new .pill[data-state='not linked']").await;
    (one, wa, gw, b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whatsapp_is_linked_by_scanning_the_qr_code_on_the_screen_then_unlinked() {
    // The real gateway, its web UI and the WhatsApp Web channel's test
    // build in one workerd, the WhatsApp Web double as WhatsApp. The
    // double's phone is only handed what the page shows: the QR code read
    // back from a screenshot's pixels.
    let (_one, wa, gw, b) = whatsapp_web_channels_tab(DESKTOP).await;
    let link = "#link-new [data-link='whatsapp-web:default']";
    b.click(&format!("{link} [data-action=link]")).await;
    let (first, first_src) = scan_the_screen(&b, None, "channels-whatsapp-qr").await;
    // WhatsApp Web's linking code: ref, the device's Noise key, its
    // identity key, its ADV secret, its client type.
    assert!(
        first.starts_with("2@") && first.split(',').count() == 5,
        "{first}"
    );
    b.wait_css("#link-new .pill[data-state='waiting for scan']")
        .await;
    assert_eq!(
        b.text("#link-new").await,
        "Link WhatsApp your own number waiting for scan\nClose\n\n\
         scan this QR code with WhatsApp on the phone: Settings → Linked devices → Link a device"
    );

    // WhatsApp retires the codes on offer: the page, still asking, shows
    // the new one, and the old one no longer links.
    wa.reissue_qr_refs();
    let (second, _) = scan_the_screen(&b, Some(&first_src), "channels-whatsapp-qr-new").await;
    assert_ne!(second, first);
    let stale = wa.scan_qr(&first, WA_AGENT);
    assert!(
        stale
            .as_ref()
            .is_err_and(|e| e.starts_with("no device is showing ref")),
        "{stale:?}"
    );

    // The phone scans the code on the screen: the page says it is linked,
    // as that number, offers Unlink, and shows no code any more.
    wa.scan_qr(&second, WA_AGENT).unwrap();
    b.wait_js_within(
        "the account linked",
        "return document.querySelector('#link-new .pill[data-state=linked]') !== null
             && document.querySelector('#link-new .ok-note') !== null;",
        vec![],
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(
        (wa.connected(WA_AGENT), wa.companions(WA_AGENT).len()),
        (true, 1)
    );
    assert_eq!(
        b.text("#link-new").await,
        "Link WhatsApp your own number linked\nNumber\n+15550001111\nClose\nUnlink\n\nLinked as +15550001111"
    );
    assert_eq!(
        b.js(
            "return document.querySelectorAll('img[alt=\"WhatsApp QR code\"]').length",
            vec![]
        )
        .await,
        json!(0)
    );
    b.screenshot("channels-whatsapp-linked").await;
    // The channel told the gateway: the tab opened anew lists the account
    // (connected, through its binding) with Unlink on its card, and offers
    // no second link.
    b.goto(&format!("{}/channels", gw.http_url())).await;
    let card = ".account[data-channel='whatsapp-web']";
    b.wait_css(card).await;
    let shown = b.text(card).await;
    assert!(
        shown.starts_with("whatsapp-web default connected\nVia\nbinding\n")
            && shown.ends_with("Status\nStart\nStop\nLink\nUnlink\nGet code"),
        "{shown}"
    );
    assert_eq!(
        b.js(
            "return document.querySelector('#link-new') === null",
            vec![]
        )
        .await,
        json!(true)
    );

    // Unlink asks first; then the device is gone from the phone, the
    // account from the list, and Link WhatsApp is offered again.
    b.click(&format!(
        "{card} [data-link='whatsapp-web:default'] [data-action=unlink]"
    ))
    .await;
    assert_eq!(
        b.client.get_alert_text().await.unwrap(),
        "Unlink whatsapp-web:default? It stops answering until linked again."
    );
    b.client.accept_alert().await.unwrap();
    b.wait_js(
        "the account unlinked",
        "return document.querySelector(\"#link-new .pill[data-state='not linked']\") !== null
             && document.querySelector(arguments[0]) === null;",
        vec![json!(card)],
    )
    .await;
    assert_eq!(
        b.text("#link-new").await,
        "Link WhatsApp your own number not linked\nLink\nGet code"
    );
    b.screenshot("channels-whatsapp-unlinked").await;
    let gone = poll::try_until(secs(10), ms(50), async || {
        match (wa.connected(WA_AGENT), wa.companions(WA_AGENT)) {
            (false, devices) if devices.is_empty() => Ok(()),
            seen => Err(seen),
        }
    })
    .await;
    assert_eq!(gone, Ok(()), "the phone still has the device");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_phone_whatsapp_is_linked_by_a_pairing_code_typed_from_the_screen() {
    // The other way to link: the owner gives the number, the page shows
    // a code, the phone's user types what the page shows.
    let (_one, wa, gw, b) = whatsapp_web_channels_tab(PHONE).await;
    let link = "#link-new [data-link='whatsapp-web:default']";
    b.type_into(
        &format!("{link} input[name=phoneNumber]"),
        "+1 555 000 1111",
    )
    .await;
    b.click(&format!("{link} button[type=submit]")).await;
    let code = b
        .wait_js(
            "a pairing code",
            "const e = document.querySelector(arguments[0]); return e && e.innerText;",
            vec![json!(format!("{link} .link-state .mono"))],
        )
        .await
        .as_str()
        .unwrap()
        .to_string();
    b.wait_css("#link-new .pill[data-state='waiting for scan']")
        .await;
    b.js(
        "document.querySelector(arguments[0]).scrollIntoView({block: 'center'})",
        vec![json!(link)],
    )
    .await;
    b.screenshot("phone-channels-whatsapp-pair-code").await;
    assert_eq!(
        b.text("#link-new").await,
        format!(
            "Link WhatsApp your own number waiting for scan\nClose\n\n{code}\n\n\
             on the phone: WhatsApp → Settings → Linked devices → Link a device → \
             Link with phone number instead, then type this code"
        )
    );
    // Eight capitals and digits (the phone takes them as typed), no QR
    // code beside.
    assert!(
        code.len() == 8
            && code
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()),
        "{code}"
    );
    assert_eq!(
        b.js(
            "return document.querySelectorAll('img[alt=\"WhatsApp QR code\"]').length",
            vec![]
        )
        .await,
        json!(0)
    );

    wa.link_with_code(WA_AGENT, &code).unwrap();
    b.wait_js_within(
        "the account linked",
        "return document.querySelector('#link-new .pill[data-state=linked]') !== null
             && document.querySelector('#link-new .ok-note') !== null;",
        vec![],
        Duration::from_secs(60),
    )
    .await;
    assert!(wa.connected(WA_AGENT));
    assert_eq!(
        b.text("#link-new").await,
        "Link WhatsApp your own number linked\nNumber\n+15550001111\nClose\nUnlink\n\nLinked as +15550001111"
    );
    b.close().await;
}

#[tokio::test]
async fn editing_soul_md_changes_the_next_prompt_and_a_conflict_is_shown_not_overwritten() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let llm = FakeLlm::start().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    // The first run writes the workspace's templates.
    let run = owner.chat_send("agent:main:main", "first hello").await;
    owner.run_events(&run).await;

    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    // A tab's path loads the app directly.
    login(&b, &gw, "/workspace").await;
    b.click("[data-file='SOUL.md']").await;
    b.wait_css("textarea[name=content]").await;
    b.type_into(
        "textarea[name=content]",
        "I am a lighthouse keeper who speaks in short sentences.",
    )
    .await;
    b.click("#save").await;
    b.wait_js(
        "the save",
        "const n = document.querySelector('.ok-note'); return n && n.innerText.includes('Saved SOUL.md');",
        vec![],
    )
    .await;
    // The dark theme, kept with the settings.
    b.js(
        "const s = document.querySelector('select.theme'); s.value = 'dark'; s.dispatchEvent(new Event('change', {bubbles: true}));",
        vec![],
    )
    .await;
    // Applied once the app has rendered the change.
    b.wait_js(
        "the dark theme",
        "return document.documentElement.dataset.theme === 'dark'",
        vec![],
    )
    .await;
    let theme = b
        .js(
            "return [document.documentElement.dataset.theme, getComputedStyle(document.body).backgroundColor,
                     JSON.parse(localStorage.getItem('gsv-ui-settings')).theme];",
            vec![],
        )
        .await;
    assert_eq!(theme, json!(["dark", "rgb(18, 21, 27)", "dark"]));
    b.screenshot("workspace").await;

    let run = owner.chat_send("agent:main:main", "who are you now?").await;
    owner.run_events(&run).await;
    let prompt = prompts_for(&llm, "who are you now?")
        .pop()
        .expect("a model request");
    assert!(
        prompt.contains("I am a lighthouse keeper who speaks in short sentences."),
        "{prompt}"
    );

    // Someone else writes SOUL.md while it is open here: saving shows the
    // conflict and writes nothing.
    let res = owner
        .request(
            "workspace.write",
            json!({"path": "SOUL.md", "content": "Written by the CLI."}),
        )
        .await;
    assert!(res.ok, "{res:?}");
    b.type_into("textarea[name=content]", "My second thought.")
        .await;
    b.click("#save").await;
    b.wait_css("#conflict").await;
    let conflict = b.text("#conflict").await;
    assert!(
        conflict.contains("changed since you opened it")
            && conflict.contains("Written by the CLI."),
        "{conflict}"
    );
    let read = owner
        .request("workspace.read", json!({"path": "SOUL.md"}))
        .await
        .payload
        .unwrap();
    assert_eq!(read["content"], json!("Written by the CLI."));
    b.screenshot("workspace-conflict").await;
    // Keeping mine overwrites, knowingly.
    b.click("#conflict button.danger").await;
    b.wait_js(
        "the overwrite",
        "return !document.querySelector('#conflict')",
        vec![],
    )
    .await;
    let read = owner
        .request("workspace.read", json!({"path": "SOUL.md"}))
        .await
        .payload
        .unwrap();
    assert_eq!(read["content"], json!("My second thought."));
    b.close().await;
}

#[tokio::test]
async fn every_tab_fits_a_phone_without_sideways_scrolling() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let llm = FakeLlm::start().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    let wide = format!(
        "A long line: {}\n\n```\n{}\n```\n\n| a | b | c | d | e | f |\n|---|---|---|---|---|---|\n| {} | 2 | 3 | 4 | 5 | 6 |",
        "x".repeat(300),
        "let y = 1; ".repeat(40),
        "cell".repeat(30)
    );
    llm.script("wide", vec![Step::text(wide.clone())]);
    let run = owner.chat_send("agent:main:main", "wide").await;
    owner.run_events(&run).await;
    // The same, as a memory the memory tab finds and opens.
    let put = owner
        .request(
            "memory.put",
            json!({"category": "cases", "title": "wide", "content": wide}),
        )
        .await;
    assert!(put.ok, "{put:?}");

    let b = Browser::start(PHONE.0, PHONE.1).await;
    login(&b, &gw, "/chat").await;
    assert_eq!(b.js("return window.innerWidth", vec![]).await, json!(390));
    b.wait_js(
        "the wide answer",
        "return document.querySelector('.msg.assistant pre') !== null",
        vec![],
    )
    .await;
    b.screenshot("phone-chat").await;
    for tab in [
        "chat",
        "sessions",
        "nodes",
        "channels",
        "workspace",
        "memory",
        "cron",
        "config",
    ] {
        b.goto(&format!("{}/{tab}", gw.http_url())).await;
        b.wait_css(".badge[data-status=connected]").await;
        // Let the tab load its data.
        tokio::time::sleep(Duration::from_millis(400)).await;
        if tab == "memory" {
            b.type_into("#memory-search input[name=query]", "long line")
                .await;
            b.click("#memory-search button[type=submit]").await;
            b.click("#memory-hits [data-uri]").await;
            b.wait_css("#memory-detail .md pre").await;
        }
        // Neither the page nor the scrolling main area (a sideways
        // scrollbar there is as bad) is wider than the screen; the widest
        // elements are named when one is.
        let widths = b
            .js(
                "const d = document.documentElement, m = document.querySelector('.main');
                 const edge = m.getBoundingClientRect().right + 1;
                 const wide = [...m.querySelectorAll('*')]
                   .filter((e) => e.getBoundingClientRect().right > edge)
                   .slice(0, 5)
                   .map((e) => e.tagName + '.' + e.className);
                 return [d.scrollWidth, d.clientWidth, document.body.scrollWidth, m.scrollWidth, m.clientWidth, wide];",
                vec![],
            )
            .await;
        let w = |i: usize| widths[i].as_u64().unwrap();
        assert!(
            w(0) <= w(1) && w(2) <= w(1) && w(3) <= w(4),
            "/{tab} scrolls sideways at 390 px: {widths}"
        );
        if tab == "config" || tab == "memory" {
            b.screenshot(&format!("phone-{tab}")).await;
        }
    }
    // The menu opens on a phone and leads to a tab.
    b.click(".menu-toggle").await;
    b.click(".tabs a[href='/sessions']").await;
    b.wait_css("#session-list").await;
    b.close().await;
}

#[tokio::test]
async fn the_chat_folds_tool_calls_collapses_thinking_and_renders_markdown() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let llm = FakeLlm::start().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    owner
        .request(
            "workspace.write",
            json!({"path": "SOUL.md", "content": "I am a careful crab who double-checks everything."}),
        )
        .await;
    llm.script(
        "what does my soul say",
        vec![
            Step::tool_call("c1", "gsv__ReadFile", json!({"path": "SOUL.md"})),
            Step::Thinking {
                thinking: "The file says I am a careful crab; a short list will do.".into(),
                text: "Your **SOUL.md** says:\n\n- you are *a careful crab*\n- you double-check everything\n\nRead it yourself with:\n\n```sh\ngsv workspace cat SOUL.md\n```".into(),
            },
        ],
    );

    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    login(&b, &gw, "/chat").await;
    send(&b, "what does my soul say?").await;
    // The finished turn, from the history: the call with its result.
    b.wait_css("details.toolcall[data-tool='gsv__ReadFile'] .pill.ok")
        .await;
    let folded = b
        .js(
            "const call = document.querySelector(\"details.toolcall[data-tool='gsv__ReadFile']\");
             const thinking = document.querySelector('details.thinking');
             return {
               callOpen: call.open,
               thinkingOpen: thinking.open,
               thinking: thinking.querySelector('pre').textContent,
               result: call.querySelector('.tool-result').textContent,
               standaloneResults: document.querySelectorAll('.msg.tool').length,
               items: [...document.querySelectorAll('.msg.assistant .md li')].map(l => l.innerText),
               code: document.querySelector('.msg.assistant .md pre code').textContent.trim(),
             };",
            vec![],
        )
        .await;
    assert_eq!(folded["callOpen"], json!(false));
    assert_eq!(folded["thinkingOpen"], json!(false));
    assert_eq!(
        folded["thinking"],
        json!("The file says I am a careful crab; a short list will do.")
    );
    assert!(
        folded["result"]
            .as_str()
            .unwrap()
            .contains("I am a careful crab"),
        "{folded}"
    );
    assert_eq!(
        folded["standaloneResults"],
        json!(0),
        "the result is folded under its call"
    );
    assert_eq!(
        folded["items"],
        json!(["you are a careful crab", "you double-check everything"])
    );
    assert_eq!(folded["code"], json!("gsv workspace cat SOUL.md"));
    b.click("details.toolcall summary").await;
    b.screenshot("chat").await;
    b.close().await;
}

#[tokio::test]
async fn the_sessions_tab_shows_stats_compacts_resets_and_reads_archives() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let llm = FakeLlm::start().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    for text in ["one fish", "two fish", "red fish"] {
        let run = owner.chat_send("agent:main:main", text).await;
        owner.run_events(&run).await;
    }

    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    login(&b, &gw, "/sessions").await;
    // What the model calls used: a bar for each of the last 30 days, the
    // session that made them.
    b.wait_css("#usage-chart").await;
    b.wait_js(
        "the usage chart's days",
        "return document.querySelectorAll('#usage-chart .usage-day').length === 30;",
        vec![],
    )
    .await;
    let total = b.text("#usage-total").await;
    assert!(total.contains("% from cache), "), "{total}");
    let sessions = b.text("#usage-sessions").await;
    assert!(sessions.starts_with("agent:main:main "), "{sessions}");
    b.click("#session-list li .list-item").await;
    b.wait_css("#session-stats").await;
    let stats = b.text("#session-stats").await;
    assert!(
        stats.contains("Messages\n6") || stats.contains("Messages\t6"),
        "{stats}"
    );
    assert!(stats.contains("Last prompt's reads"), "{stats}");
    assert_eq!(b.text("#session-stats [data-field=trust]").await, "owner");
    // Who may do what: the level, and each tool with its rule.
    b.wait_css("#trust-explain").await;
    assert_eq!(
        b.text("#trust-explain [data-field=level]").await,
        "owner (the session's last message)"
    );
    let tool = b
        .text("#trust-tools [data-tool=gsv__ConfigGet][data-allowed=true]")
        .await;
    assert_eq!(tool, "offered gsv__ConfigGet tools.policy.owner.allow: *");
    b.screenshot("sessions").await;

    // Compact to the last two messages: four go to an archive.
    b.type_into("input[name=keep]", "2").await;
    b.click("#compact").await;
    b.wait_js(
        "the compaction",
        "const n = document.querySelector('#session-outcome'); return n && n.innerText.startsWith('Compacted');",
        vec![],
    )
    .await;
    let outcome = b.text("#session-outcome").await;
    assert!(
        outcome.starts_with("Compacted: 4 archived, 2 kept"),
        "{outcome}"
    );
    // The archive is read back under the current session id.
    b.click("[data-archive-id]").await;
    b.wait_css("#transcript .msg").await;
    let archived = b.text("#transcript").await;
    assert!(
        archived.contains("one fish") && !archived.contains("red fish"),
        "{archived}"
    );

    // Reset (confirmed): the session gets a new id; the old one's archive
    // is listed and readable.
    let before = owner
        .request("session.get", json!({"sessionKey": "agent:main:main"}))
        .await
        .payload
        .unwrap()["sessionId"]
        .clone();
    b.click("#reset").await;
    b.client.accept_alert().await.unwrap();
    b.wait_js(
        "the reset",
        "const n = document.querySelector('#session-outcome'); return n && n.innerText.startsWith('Reset');",
        vec![],
    )
    .await;
    let after = owner
        .request("session.get", json!({"sessionKey": "agent:main:main"}))
        .await
        .payload
        .unwrap()["sessionId"]
        .clone();
    assert_ne!(before, after);
    b.click(&format!("[data-archive-id='{}']", before.as_str().unwrap()))
        .await;
    b.wait_js(
        "the old session's archive",
        "const t = document.querySelector('#transcript'); return t && t.innerText.includes('red fish');",
        vec![],
    )
    .await;
    b.close().await;
}

#[tokio::test]
async fn the_nodes_tab_lists_tools_by_node_calls_one_and_reads_its_log() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    let node = Node::start(&gw.url(), TOKEN, "laptop");
    std::fs::write(node.workspace.join("hello.txt"), "hello from the laptop\n").unwrap();
    owner
        .wait_for_tools(&["laptop__Read"], Duration::from_secs(30))
        .await;

    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    login(&b, &gw, "/nodes").await;
    b.wait_css(".tools[data-node=laptop]").await;
    let tools = b.text(".tools[data-node=laptop]").await;
    for t in [
        "laptop__Bash",
        "laptop__Read",
        "laptop__Write",
        "laptop__Grep",
    ] {
        assert!(tools.contains(t), "{t} missing: {tools}");
    }
    assert!(b
        .text(".tools[data-node=gsv]")
        .await
        .contains("gsv__ReadFile"));
    b.wait_css(".node-facts[data-node=laptop]").await;
    let facts = b.text(".node-facts[data-node=laptop]").await;
    assert!(
        facts.contains("execution") && facts.contains("shell.exec"),
        "{facts}"
    );

    b.click(".tools[data-node=laptop] button[data-tool='laptop__Read']")
        .await;
    b.type_into("#tool-call textarea", r#"{"path": "hello.txt"}"#)
        .await;
    b.click("#tool-call button[type=submit]").await;
    b.wait_css("#tool-result").await;
    let result = b.text("#tool-result").await;
    assert!(result.contains("hello from the laptop"), "{result}");
    b.screenshot("nodes").await;

    // The node's own log, read through the gateway.
    b.click(".node-log[data-node=laptop] [data-action=log]")
        .await;
    b.wait_css(".node-log[data-node=laptop] pre.log").await;
    let log = b.text(".node-log[data-node=laptop] pre.log").await;
    // The node's JSONL lines, as it wrote them (its start and its call).
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() >= 2, "{log}");
    assert!(
        lines
            .iter()
            .all(|l| l["ts"].is_string() && l["level"].is_string() && l["msg"].is_string()),
        "{log}"
    );
    b.close().await;
}

#[tokio::test]
async fn the_cron_tab_adds_runs_and_lists_a_job_and_beats_a_heartbeat() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let llm = FakeLlm::start().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;

    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    login(&b, &gw, "/cron").await;
    b.wait_css("#cron-status").await;
    b.type_into("#cron-add input[name=when]", "in 20m").await;
    b.type_into("#cron-add textarea[name=text]", "take the bread out")
        .await;
    b.click("#cron-add button[type=submit]").await;
    b.wait_css("#cron-jobs .job").await;
    let job = b.text("#cron-jobs .job").await;
    assert!(
        job.contains("take the bread out") && job.contains("reminder"),
        "{job}"
    );
    let listed = owner.request("cron.list", json!({})).await.payload.unwrap();
    assert_eq!(listed["count"], json!(1));
    assert_eq!(
        listed["jobs"][0]["spec"],
        json!({"kind": "systemEvent", "text": "take the bread out"})
    );

    // Run it now: its run is listed.
    b.click("#cron-jobs [data-action=run]").await;
    b.wait_css("#cron-jobs .ok-note").await;
    let status = b
        .wait_js_within(
            "the finished run",
            "document.querySelector('#cron-jobs [data-action=runs]').click();
             const row = document.querySelector('#cron-jobs table.runs tbody tr .pill');
             return row && row.innerText !== 'running' ? row.innerText : null;",
            vec![],
            Duration::from_secs(40),
        )
        .await;
    assert_eq!(status, json!("ok"));
    let runs = owner
        .request("cron.runs", json!({"jobId": listed["jobs"][0]["id"]}))
        .await
        .payload
        .unwrap();
    assert_eq!(runs["count"], json!(1), "{runs}");

    // The heartbeat: beaten now, whatever its schedule.
    b.wait_css("#heartbeats .job").await;
    b.click("#heartbeats [data-action=beat]").await;
    b.wait_css("#heartbeat-note").await;
    let note = b.text("#heartbeat-note").await;
    assert!(!note.is_empty(), "{note}");
    b.screenshot("cron").await;
    b.close().await;
}

#[tokio::test]
async fn the_memory_tab_remembers_finds_opens_deletes_and_repairs() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    let porto = owner
        .request(
            "memory.put",
            json!({"category": "events", "title": "porto trip",
                   "content": "Trip to **Porto** in May, by train.", "tags": ["travel", "may"],
                   "relations": [{"toUri": "ctx://default/users/owner/memories/preferences/tea",
                                  "relationType": "related", "weight": 0.5, "reason": "tea in Porto"}]}),
        )
        .await
        .payload
        .unwrap();
    assert_eq!(
        porto,
        json!({"uri": "ctx://default/users/owner/memories/events/porto_trip", "version": 1})
    );

    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    login(&b, &gw, "/memory").await;
    b.wait_css("#memory-status").await;
    assert_eq!(b.text("#memory-status [data-field=nodes]").await, "1");
    assert_eq!(
        b.text("#memory-status [data-field=byStatus]").await,
        "1 active, 0 pending, 0 broken"
    );
    let status = b.text("#memory-status").await;
    assert!(status.contains("keyword (BM25)"), "{status}");

    // Remembered with the form: markdown, and a script that must not run.
    b.js(
        "const s = document.querySelector('#memory-put select[name=category]');
         s.value = 'preferences';
         s.dispatchEvent(new Event('change', {bubbles: true}));",
        vec![],
    )
    .await;
    b.type_into("#memory-put input[name=title]", "tea").await;
    b.type_into(
        "#memory-put textarea[name=content]",
        "Drinks *green tea* at four.\n\n<img src=x onerror=\"window.__pwned=1\">",
    )
    .await;
    b.click("#memory-put button[type=submit]").await;
    b.wait_css("#memory-put-done").await;
    let tea = "ctx://default/users/owner/memories/preferences/tea";
    assert_eq!(
        b.text("#memory-put-done").await,
        format!("Saved {tea} (version 1).")
    );
    let stored = owner
        .request("memory.get", json!({"uri": tea}))
        .await
        .payload
        .unwrap();
    assert_eq!(stored["node"]["category"], json!("preferences"));
    assert!(
        stored["node"]["text"]
            .as_str()
            .unwrap()
            .starts_with("Drinks *green tea* at four."),
        "{stored}"
    );
    b.wait_js(
        "the count after the put",
        "return document.querySelector('#memory-status [data-field=nodes]').innerText === '2';",
        vec![],
    )
    .await;

    // Found by the search box, opened whole, rendered and sanitized.
    b.type_into("#memory-search input[name=query]", "green tea")
        .await;
    b.click("#memory-search button[type=submit]").await;
    let hit = format!("#memory-hits [data-uri='{tea}']");
    b.wait_css(&hit).await;
    let listed = b.text("#memory-hits").await;
    assert!(
        listed.contains("preferences") && listed.contains(tea) && !listed.contains("porto"),
        "{listed}"
    );
    b.click(&hit).await;
    b.wait_css("#memory-detail .md em").await;
    assert_eq!(b.text("#memory-detail .md em").await, "green tea");
    let detail = b.text("#memory-detail").await;
    assert!(
        detail.contains("version 1") && detail.contains("user:owner"),
        "{detail}"
    );
    assert_eq!(
        b.js("return window.__pwned === undefined && !document.querySelector('#memory-detail [onerror]')", vec![])
            .await,
        json!(true)
    );
    b.screenshot("memory").await;

    // Deleted (confirmed): gone from the list, the index and the count.
    b.click("#memory-delete").await;
    b.client.accept_alert().await.unwrap();
    b.wait_js(
        "the hit gone",
        "return !document.querySelector(arguments[0]) && !document.querySelector('#memory-detail')
            && document.querySelector('#memory-search-meta').innerText.startsWith('0 found')
            && document.querySelector('#memory-status [data-field=nodes]').innerText === '1';",
        vec![json!(hit)],
    )
    .await;
    let gone = owner
        .request("memory.get", json!({"uri": tea}))
        .await
        .payload
        .unwrap();
    assert_eq!(gone, json!({}));

    // Another memory opened: its tags and relations.
    b.type_into("#memory-search input[name=query]", "Porto")
        .await;
    b.click("#memory-search button[type=submit]").await;
    b.click("#memory-hits [data-uri$='events/porto_trip']")
        .await;
    b.wait_css("#memory-detail .md strong").await;
    let detail = b.text("#memory-detail").await;
    assert!(
        detail.contains("events user:owner · version 1 · updated "),
        "{detail}"
    );
    assert!(
        detail.contains(" · tags travel, may\n")
            && detail.contains(&format!("related {tea} (0.5) — tea in Porto")),
        "{detail}"
    );

    // Repair now: its report, the same the status then keeps.
    b.click("#memory-repair").await;
    b.wait_css("#memory-repair-report").await;
    let report = b.text("#memory-repair-report").await;
    let last = owner
        .request("memory.status", json!({}))
        .await
        .payload
        .unwrap()["lastRepair"]
        .clone();
    assert!(
        report.starts_with(&format!(
            "Repair scanned {} memories ({} listing pages)",
            last["nodesScanned"], last["listPages"]
        )),
        "{report}\n{last}"
    );
    assert_eq!(last["nodesScanned"], json!(1), "{last}");
    b.wait_js(
        "the last repair shown",
        "return document.querySelector('#memory-status [data-field=lastRepair]').innerText !== 'never';",
        vec![],
    )
    .await;
    b.close().await;
}

#[tokio::test]
async fn the_config_tab_sets_values_refuses_as_the_cli_does_and_never_shows_secrets() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let llm = FakeLlm::start().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;

    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    login(&b, &gw, "/config").await;
    b.wait_css("[data-path='apiKeys.openai']").await;
    let page = b.text("body").await;
    assert!(
        !page.contains(gsv_e2e::fake_llm::FAKE_API_KEY),
        "a secret is shown"
    );
    assert!(b
        .text("[data-path='apiKeys.openai']")
        .await
        .contains("secret"));
    assert!(b
        .text("[data-path='model.id']")
        .await
        .contains("\"gpt-test\""));

    // A value, read as the CLI reads it.
    b.type_into("#config-set input[name=path]", "model.id")
        .await;
    b.type_into("#config-set input[name=value]", "gpt-test-2")
        .await;
    b.click("#config-set button[type=submit]").await;
    b.wait_css("#config-set-done").await;
    let v = owner
        .request("config.get", json!({"path": "model.id"}))
        .await
        .payload
        .unwrap();
    assert_eq!(v["value"], json!("gpt-test-2"));

    // A wrong type: the gateway's refusal, word for word what the CLI prints.
    b.type_into("#config-set input[name=path]", "timeouts.llmMs")
        .await;
    b.type_into("#config-set input[name=value]", "soon").await;
    b.click("#config-set button[type=submit]").await;
    b.wait_css("#config-set-error").await;
    let shown = b.text("#config-set-error").await;
    let cli = run_gsv(
        &gw.url(),
        TOKEN,
        &["config", "set", "timeouts.llmMs", "soon"],
    );
    assert!(!cli.status.success());
    let cli_err = String::from_utf8_lossy(&cli.stderr).to_string();
    let message = shown
        .rsplit_once(" (code")
        .map(|(m, _)| m)
        .unwrap_or(&shown)
        .to_string();
    assert!(
        !message.is_empty() && cli_err.contains(&message),
        "UI: {shown}\nCLI: {cli_err}"
    );

    // A secret is replaced, never read: the model call uses the new key.
    b.click("[data-path='apiKeys.openai'] button.link").await;
    b.type_into(
        "[data-path='apiKeys.openai'] input[type=password]",
        "sk-replaced-in-the-ui",
    )
    .await;
    b.click("[data-path='apiKeys.openai'] button[type=submit]")
        .await;
    b.wait_js(
        "the row back to its mask",
        "return !document.querySelector(\"[data-path='apiKeys.openai'] input\")",
        vec![],
    )
    .await;
    assert!(!b.text("body").await.contains("sk-replaced-in-the-ui"));
    b.screenshot("config").await;
    llm.set_expected_key(Some("sk-replaced-in-the-ui"));
    let run = owner.chat_send("agent:main:main", "new key?").await;
    let events = owner.run_events(&run).await;
    assert_eq!(
        events.last().unwrap().state,
        gsv_protocol::ChatState::Final,
        "{events:?}"
    );
    b.close().await;
}

#[tokio::test]
async fn the_chat_pages_back_through_a_long_history() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let llm = FakeLlm::start().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    // 28 exchanges: 56 messages, more than one page of 50.
    for i in 1..=28 {
        let run = owner
            .chat_send("agent:main:main", &format!("message {i}"))
            .await;
        owner.run_events(&run).await;
    }

    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    login(&b, &gw, "/chat").await;
    b.wait_css(".load-more").await;
    let count = "return document.querySelectorAll('#messages .msg').length";
    assert_eq!(b.js(count, vec![]).await, json!(50));
    let first = b.text("#messages .msg").await;
    assert_eq!(first.trim(), "message 4");
    b.click(".load-more").await;
    b.wait_js(
        "the earlier page",
        "return document.querySelectorAll('#messages .msg').length === 56",
        vec![],
    )
    .await;
    assert_eq!(b.text("#messages .msg").await.trim(), "message 1");
    assert_eq!(
        b.js(
            "return document.querySelector('.load-more') === null",
            vec![]
        )
        .await,
        json!(true)
    );
    b.close().await;
}

/// A 1×1 PNG.
const DOT_PNG: [u8; 67] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

#[tokio::test]
async fn an_image_a_tool_returns_is_shown_in_the_chat() {
    let _one = gsv_e2e::browser::one_at_a_time().await;
    let llm = FakeLlm::start().await;
    let gw = Workerd::start_with_web_ui(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    let node = Node::start(&gw.url(), TOKEN, "laptop");
    std::fs::write(node.workspace.join("dot.png"), DOT_PNG).unwrap();
    owner
        .wait_for_tools(&["laptop__Read"], Duration::from_secs(30))
        .await;
    llm.script(
        "look at the dot",
        vec![
            Step::tool_call("c1", "laptop__Read", json!({"path": "dot.png"})),
            Step::text("A single dot."),
        ],
    );

    let b = Browser::start(DESKTOP.0, DESKTOP.1).await;
    login(&b, &gw, "/chat").await;
    send(&b, "look at the dot").await;
    b.wait_css("details.toolcall[data-tool='laptop__Read'] .pill.ok")
        .await;
    b.click("details.toolcall[data-tool='laptop__Read'] summary")
        .await;
    let size = b
        .wait_js(
            "the image loaded",
            "const i = document.querySelector(\"details.toolcall[data-tool='laptop__Read'] img.msg-image\");
             return i && i.complete && i.naturalWidth > 0 ? [i.naturalWidth, i.naturalHeight, i.src.slice(0, 22)] : null;",
            vec![],
        )
        .await;
    assert_eq!(size, json!([1, 1, "data:image/png;base64,"]));
    b.close().await;
}
