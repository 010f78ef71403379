//! Files from Discord and from `gsv chat --attach`, end to end: the same
//! path as WhatsApp's (tests/media.rs) — into R2 under the session's
//! media, to the model in its format — and files the agent sends back to
//! Discord as a multipart upload, checked by the fake like Discord's API.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine;
use gsv_e2e::channel_rig::{start_bot, start_gateway_with_discord};
use gsv_e2e::fake_discord::{messages, FakeDiscord};
use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{run_gsv, GatewayOptions, Workerd};
use gsv_e2e::poll::{self, ms};
use gsv_e2e::ws::{raw_channel, Client};
use serde_json::{json, Value};
use std::time::Duration;

const TOKEN: &str = "test-token";
const WAIT: Duration = Duration::from_secs(60);
/// The DM channel of the fake's user.
const DM: &str = "300000000000000003";

/// A PNG of `len` bytes: signature, a 32×32 IHDR, then filler.
fn png(len: usize) -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x20\0\0\0\x20\x08\x06\0\0\0".to_vec();
    while b.len() < len {
        b.push((b.len() % 199) as u8);
    }
    b
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The image keys of a session's history.
async fn image_keys(owner: &mut Client, session: &str) -> Vec<String> {
    let res = owner
        .request("session.preview", json!({"sessionKey": session}))
        .await;
    assert!(res.ok, "{res:?}");
    res.payload.unwrap()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "image")
        .map(|b| b["r2Key"].as_str().unwrap().to_string())
        .collect()
}

/// The parts of the last user message of the last model request.
fn last_user_parts(llm: &FakeLlm) -> Vec<Value> {
    let requests = llm.requests();
    let messages = requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let last = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    last["content"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discord_attachment_takes_the_same_path_and_a_file_goes_back_multipart() {
    let discord = FakeDiscord::start();
    discord.set_heartbeat_interval_ms(1_000);
    discord.set_heartbeat_grace_ms(10_000);
    let llm = FakeLlm::start().await;
    let gw = start_gateway_with_discord(&discord, TOKEN);
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    owner
        .config_set("channels.discord.dmPolicy", json!("allowlist"))
        .await;
    owner
        .config_set("channels.discord.allowFrom", json!([messages::USER_ID]))
        .await;
    // The owner, sending from their own Discord: the main session.
    owner
        .config_set(
            "owner.identities",
            json!([format!("discord:{}", messages::USER_ID)]),
        )
        .await;
    start_bot(&mut owner, &discord).await;
    let posted = |n: usize| {
        discord
            .wait_for(WAIT, |d| {
                let posted: Vec<_> = d
                    .rest_log()
                    .into_iter()
                    .filter(|r| {
                        r.method == "POST"
                            && r.path == format!("/channels/{DM}/messages")
                            && r.status == 200
                    })
                    .collect();
                (posted.len() >= n).then_some(posted)
            })
            .unwrap_or_else(|| panic!("{n} posts: {:#?}", discord.rest_log()))
    };

    let chart = png(5000);
    let m = discord.attach(
        messages::dm("700000000000000001", "what does this chart say?"),
        "chart.png",
        "image/png",
        chart.clone(),
    );
    discord.dispatch("MESSAGE_CREATE", m);
    posted(1);
    let parts = last_user_parts(&llm);
    assert_eq!(
        parts[1],
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", b64(&chart))}})
    );
    let keys = image_keys(&mut owner, "main").await;
    assert_eq!(keys.len(), 1);
    assert!(keys[0].starts_with("media/agent:main:main/") && keys[0].ends_with(".png"));
    assert_eq!(gw.r2_get_outside(&keys[0]), Some(chart.clone()));

    // The agent sends it back: one message, the file as `files[0]`.
    llm.script(
        "send the chart back",
        vec![
            Step::tool_call(
                "call_back",
                "gsv__Message",
                json!({"attachments": [keys[0]]}),
            ),
            Step::text("Done."),
        ],
    );
    discord.dispatch(
        "MESSAGE_CREATE",
        messages::dm("700000000000000002", "send the chart back"),
    );
    let sent = posted(3);
    let uploads = discord.uploads();
    assert_eq!(uploads.len(), 1, "{uploads:#?}");
    assert_eq!(
        (
            uploads[0].channel.as_str(),
            uploads[0].filename.as_str(),
            uploads[0].content_type.as_deref(),
            &uploads[0].bytes
        ),
        (DM, "chart.png", Some("image/png"), &chart)
    );
    // The upload's payload named its one file; no text went with it.
    let upload = sent
        .iter()
        .find(|r| r.body["attachments"].is_array())
        .unwrap();
    assert_eq!(
        upload.body["attachments"],
        json!([{"id": 0, "filename": "chart.png"}])
    );
    assert_eq!(upload.body.get("content"), None);
    assert_eq!(sent.last().unwrap().body["content"], "Done.");

    // An answer names a file with a `MEDIA:` line: the text goes, then the file.
    let written = owner
        .request(
            "workspace.write",
            json!({"path": "reports/summary.md", "content": "# Q3\nup 4 %\n"}),
        )
        .await;
    assert!(written.ok, "{written:?}");
    llm.script(
        "and the summary",
        vec![Step::text(
            "Here is the summary.\nMEDIA: reports/summary.md\nMEDIA: reports/missing.md",
        )],
    );
    discord.dispatch(
        "MESSAGE_CREATE",
        messages::dm("700000000000000003", "and the summary?"),
    );
    let sent = posted(5);
    assert_eq!(
        sent[3].body["content"],
        "Here is the summary.\n(could not attach reports/missing.md: no such file)"
    );
    let uploads = discord.uploads();
    assert_eq!(uploads.len(), 2, "{uploads:#?}");
    assert_eq!(
        (
            uploads[1].filename.as_str(),
            uploads[1].content_type.as_deref(),
            uploads[1].bytes.as_slice()
        ),
        (
            "summary.md",
            Some("text/markdown"),
            b"# Q3\nup 4 %\n".as_slice()
        )
    );
    assert_eq!(
        sent[4].body["attachments"],
        json!([{"id": 0, "filename": "summary.md"}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gsv_chat_attach_sends_files_with_the_message() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    let dir = tempfile::tempdir().unwrap();
    let photo = dir.path().join("photo.png");
    let picture = png(2500);
    std::fs::write(&photo, &picture).unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "buy milk\nand bread\n").unwrap();
    let out = run_gsv(
        &gw.url(),
        TOKEN,
        &[
            "chat",
            "--attach",
            photo.to_str().unwrap(),
            "--attach",
            notes.to_str().unwrap(),
            "what are these?",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("echo: what are these?"), "{stdout}");
    // The CLI's session (agent:main:cli:dm:main) is the main session.
    let parts = last_user_parts(&llm);
    assert_eq!(
        parts,
        vec![
            json!({"type": "text", "text": "what are these?"}),
            json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", b64(&picture))}}),
            json!({"type": "text", "text": "[Document attached: notes.txt (text/plain, 19 B)]\n<<<document>>>\nbuy milk\nand bread\n\n<<<end-document>>>"}),
        ]
    );
    let keys = image_keys(&mut owner, "main").await;
    assert_eq!(keys.len(), 1);
    assert_eq!(gw.r2_get_outside(&keys[0]), Some(picture));

    // A file over the limit is refused before anything is sent.
    let big = dir.path().join("big.bin");
    std::fs::write(&big, vec![0u8; 26 * 1024 * 1024]).unwrap();
    let out = run_gsv(
        &gw.url(),
        TOKEN,
        &["chat", "--attach", big.to_str().unwrap()],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("big.bin is 26.0 MB; the gateway takes files up to 25 MB"));
    // The upload route wants the token, a length, and at most 25 MB.
    let client = reqwest::Client::new();
    let url = format!(
        "{}/media/upload?sessionKey=main&filename=x.txt",
        gw.http_url()
    );
    let wrong = client
        .post(&url)
        .header("authorization", "Bearer nope")
        .body("hi")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status().as_u16(), 401);
    let too_big = client
        .post(&url)
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(vec![0u8; 26 * 1024 * 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(too_big.status().as_u16(), 413);
    assert_eq!(
        serde_json::from_str::<Value>(&too_big.text().await.unwrap()).unwrap(),
        json!({"error": "The file is too large: 26.0 MB is larger than the 25.0 MB limit"})
    );
    // A key of another session is refused by chat.send.
    let res = owner
        .request(
            "chat.send",
            json!({"sessionKey": "agent:main:other", "message": "x",
                   "media": [{"type": "image", "mimeType": "image/png", "r2Key": keys[0]}]}),
        )
        .await;
    assert!(!res.ok);
    assert!(res
        .error
        .unwrap()
        .message
        .contains("is not a file of session agent:main:other"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v1_channel_sends_a_photo_inline_and_anthropic_gets_it_as_what_its_bytes_are() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    // Anthropic's Messages API this time: a base64 image source.
    owner
        .config_set(
            "model",
            json!({"provider": "anthropic", "id": "claude-test"}),
        )
        .await;
    owner
        .config_set("apiKeys.anthropic", json!(gsv_e2e::fake_llm::FAKE_API_KEY))
        .await;
    owner
        .config_set(
            "providers.anthropic.baseUrl",
            json!(llm.base_url_anthropic()),
        )
        .await;
    owner
        .config_set("channels.whatsapp.dmPolicy", json!("open"))
        .await;
    // A v1 channel on the WebSocket fallback sends the bytes inline, and
    // (as WhatsApp does) calls every photo a JPEG: this one is a PNG.
    let mut bridge = raw_channel(&gw.url(), TOKEN, "whatsapp").await;
    let photo = png(3000);
    let inbound = bridge
        .request(
            "channel.inbound",
            json!({"channel": "whatsapp", "accountId": "default", "message": {
                "messageId": "v1-1", "peer": {"kind": "dm", "id": "+15550001111"},
                "sender": {"id": "+15550001111", "name": "Bo"}, "text": "[Media]",
                "media": [{"type": "image", "mimeType": "image/jpeg", "data": b64(&photo)}]}}),
        )
        .await;
    assert!(inbound.ok, "{inbound:?}");
    poll::until(WAIT, ms(20), async || {
        (!llm.requests().is_empty())
            .then_some(())
            .ok_or("no model call")
    })
    .await;
    let request = llm.requests().pop().unwrap();
    let content = request.body["messages"][0]["content"]
        .as_array()
        .unwrap()
        .clone();
    // The message's last block ends the prefix to cache.
    assert_eq!(
        content[1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(&photo)},
               "cache_control": {"type": "ephemeral"}})
    );
    // Bo is not the owner: his own session.
    let keys = image_keys(&mut owner, "agent:main:whatsapp:dm:+15550001111").await;
    assert_eq!(gw.r2_get_outside(&keys[0]), Some(photo));
}
