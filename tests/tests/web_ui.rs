//! The web UI end to end: the gateway under workerd serving web/dist as
//! static assets beside /ws, a real headless Chromium (src/browser.rs)
//! driving it, the fake LLM streaming its answers. Screenshots of the main
//! screens go to target/ui-screenshots/.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::browser::Browser;
use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{free_port, GatewayOptions, Workerd};
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
    let gw = Workerd::start(GatewayOptions::default());
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
    let mut gw = Workerd::start(GatewayOptions::default());
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
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
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
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let streaming = b
            .js(
                "const e = document.querySelector('.msg.assistant.streaming'); return e ? e.innerText : null;",
                vec![],
            )
            .await;
        match streaming.as_str() {
            Some(text) if seen.last() != Some(&text.len()) => seen.push(text.len()),
            Some(_) => {}
            None if !seen.is_empty() => break,
            None => {}
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the answer never finished: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
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
    b.screenshot("chat").await;

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
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
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
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
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
async fn editing_soul_md_changes_the_next_prompt_and_a_conflict_is_shown_not_overwritten() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
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
    b.wait_js("the save", "const n = document.querySelector('.ok-note'); return n && n.innerText.includes('Saved SOUL.md');", vec![]).await;
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
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    let wide = format!(
        "A long line: {}\n\n```\n{}\n```\n\n| a | b | c | d | e | f |\n|---|---|---|---|---|---|\n| {} | 2 | 3 | 4 | 5 | 6 |",
        "x".repeat(300),
        "let y = 1; ".repeat(40),
        "cell".repeat(30)
    );
    llm.script("wide", vec![Step::text(wide)]);
    let run = owner.chat_send("agent:main:main", "wide").await;
    owner.run_events(&run).await;

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
        "cron",
        "config",
    ] {
        b.goto(&format!("{}/{tab}", gw.http_url())).await;
        b.wait_css(".badge[data-status=connected]").await;
        // Let the tab load its data.
        tokio::time::sleep(Duration::from_millis(400)).await;
        let widths = b
            .js(
                "const d = document.documentElement;
                 return [d.scrollWidth, d.clientWidth, document.body.scrollWidth];",
                vec![],
            )
            .await;
        let (scroll, client, body) = (
            widths[0].as_u64().unwrap(),
            widths[1].as_u64().unwrap(),
            widths[2].as_u64().unwrap(),
        );
        assert!(
            scroll <= client && body <= client,
            "/{tab} scrolls sideways at 390 px: {widths}"
        );
        if tab == "config" {
            b.screenshot("phone-config").await;
        }
    }
    // The menu opens on a phone and leads to a tab.
    b.click(".menu-toggle").await;
    b.click(".tabs a[href='/sessions']").await;
    b.wait_css("#session-list").await;
    b.close().await;
}
