//! The Discord channel Worker under workerd against the fake Discord.
//!
//! The gateway is replaced by `tests/support/gateway-double` (a Worker named
//! `gsv` in the same workerd, so the channel's `GATEWAY` service binding
//! resolves) that forwards to a recording server: these tests see exactly
//! what the channel sends the gateway, and the gateway's own channel plane
//! is tested on its side.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::channel_rig::discord_channel_config;
use gsv_e2e::fake_discord::{messages, FakeDiscord, RestFailure, BOT_USER_ID, FAKE_BOT_TOKEN};
use gsv_e2e::gateway_recorder::GatewayRecorder;
use gsv_e2e::harness::{repo_root, Workerd};
use gsv_e2e::poll::{self, ms};
use serde_json::{json, Value};
use std::time::Duration;

const KEY: &str = "test-channel-key";
const INBOUND: &str = "/internal/channel/inbound";
const STATUS: &str = "/internal/channel/status";
const WAIT: Duration = Duration::from_secs(20);

struct Rig {
    discord: FakeDiscord,
    recorder: GatewayRecorder,
    workerd: Workerd,
}

/// The channel's wrangler.toml pointing at the fake (`gsv_e2e::channel_rig`).
fn channel_config(discord: &FakeDiscord, gateway_url: &str) -> String {
    discord_channel_config(&discord.api_base(), gateway_url)
}

fn double_config(recorder: &GatewayRecorder) -> String {
    let dir = repo_root()
        .join("tests")
        .join("support")
        .join("gateway-double");
    std::fs::read_to_string(dir.join("wrangler.toml"))
        .unwrap()
        .replace(
            "main = \"worker.mjs\"",
            &format!("main = {:?}", dir.join("worker.mjs").display().to_string()),
        )
        .replace("http://127.0.0.1:9", &recorder.url())
}

/// `discover`: find the gateway with `GET /gateway/bot` (else the fake's
/// URL is configured and IDENTIFY is the first thing a token meets).
fn rig(discover: bool) -> Rig {
    let discord = FakeDiscord::start();
    discord.set_heartbeat_interval_ms(1_000);
    // Local alarms can be late on a loaded machine; a 4009 here would be
    // the test's doing, not the channel's.
    discord.set_heartbeat_grace_ms(10_000);
    let recorder = GatewayRecorder::start();
    let gateway_url = if discover {
        String::new()
    } else {
        discord.gateway_url()
    };
    let workerd = Workerd::start_configs(
        &[
            ("channel.toml", channel_config(&discord, &gateway_url)),
            ("gateway-double.toml", double_config(&recorder)),
        ],
        Some(format!("GSV_CHANNEL_KEY={KEY}\n")),
    );
    Rig {
        discord,
        recorder,
        workerd,
    }
}

impl Rig {
    async fn post_with(&self, path: &str, body: Value, key: Option<&str>) -> (u16, String) {
        let mut req = reqwest::Client::new()
            .post(format!("{}{path}", self.workerd.http_url()))
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(key) = key {
            req = req.header("x-gsv-channel-key", key);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        (status, resp.text().await.unwrap())
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        let (status, text) = self.post_with(path, body, Some(KEY)).await;
        assert_eq!(status, 200, "{path}: {text}");
        serde_json::from_str(&text).unwrap()
    }

    async fn status(&self, account: &str) -> Value {
        let s = self
            .post("/internal/status", json!({"accountId": account}))
            .await;
        s["accounts"][0].clone()
    }

    /// Polls the account's status until `check` holds.
    async fn wait_status(&self, account: &str, check: impl Fn(&Value) -> bool) -> Value {
        poll::try_until(WAIT, ms(100), async || {
            let s = self.status(account).await;
            if check(&s) {
                Ok(s)
            } else {
                Err(s)
            }
        })
        .await
        .unwrap_or_else(|last| last)
    }

    fn wait_inbound(&self, count: usize) -> Vec<Value> {
        self.recorder
            .wait_bodies(INBOUND, WAIT, |b| b.len() >= count)
    }
}

/// The inbound call the gateway should get for a message, as a whole value.
fn inbound(message: Value) -> Value {
    json!({"channel": "discord", "accountId": "main", "message": message})
}

fn ann_dm(id: &str, text: &str) -> Value {
    json!({
        "messageId": id,
        "peer": {"kind": "dm", "id": "300000000000000003", "name": "Ann", "handle": "ann"},
        "sender": {"id": messages::USER_ID, "name": "Ann", "handle": "ann", "isBot": false},
        "text": text,
        "timestamp": 1_795_502_113_123i64,
        "wasMentioned": false
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_discord_channel_against_the_fake_discord() {
    let rig = rig(true);

    // The internal paths need the key.
    let caps = json!({});
    let (status, _) = rig
        .post_with("/internal/capabilities", caps.clone(), None)
        .await;
    assert_eq!(status, 401);
    let (status, _) = rig
        .post_with("/internal/capabilities", caps.clone(), Some("wrong"))
        .await;
    assert_eq!(status, 401);
    // A call names an account, and never the accounts' registry.
    for (path, body, reason) in [
        (
            "/internal/status",
            json!({"accountId": "_accounts"}),
            "invalid accountId",
        ),
        (
            "/internal/send",
            json!({"accountId": ""}),
            "invalid accountId",
        ),
        (
            "/internal/start",
            json!({"config": {}}),
            "the body needs an accountId",
        ),
    ] {
        let (status, text) = rig.post_with(path, body, Some(KEY)).await;
        assert_eq!((status, text.as_str()), (400, reason), "{path}");
    }
    assert_eq!(
        rig.post("/internal/capabilities", caps).await,
        json!({"chatTypes": ["dm", "group"], "media": true, "reactions": false, "threads": false,
               "typing": true, "editing": false, "deletion": false, "qrLogin": false, "maxTextLength": 2000})
    );

    // Start: GET /gateway/bot, IDENTIFY, READY, connected.
    let started = rig
        .post(
            "/internal/start",
            json!({"accountId": "main", "config": {"botToken": FAKE_BOT_TOKEN}}),
        )
        .await;
    assert_eq!(started, json!({"ok": true}));
    let status = rig.wait_status("main", |s| s["connected"] == true).await;
    assert_eq!(
        status,
        json!({"accountId": "main", "connected": true, "authenticated": true, "mode": "gateway",
               "lastActivity": status["lastActivity"],
               "extra": {"phase": "ready", "botUserId": BOT_USER_ID, "botUsername": "gsv-bot", "hasToken": true}})
    );
    assert!(!status.to_string().contains(FAKE_BOT_TOKEN));
    assert_eq!(rig.discord.rest_log()[0].path, "/gateway/bot");
    assert_eq!(
        rig.discord.client_frames(2),
        vec![(
            1,
            json!({"op": 2, "d": {"token": FAKE_BOT_TOKEN, "intents": 37377,
                "properties": {"os": "cloudflare", "browser": "gsv", "device": "gsv"}}})
        )]
    );
    // The gateway heard of it, with the key.
    let statuses = rig.recorder.wait_bodies(STATUS, WAIT, |b| {
        b.iter().any(|s| s["status"]["connected"] == true)
    });
    assert!(
        statuses.iter().any(|s| s["status"]["connected"] == true),
        "{statuses:?}"
    );
    assert!(rig
        .recorder
        .calls()
        .iter()
        .all(|c| c.key.as_deref() == Some(KEY)));

    // Heartbeats flow, each carrying the last sequence, each acknowledged.
    let beats = rig
        .discord
        .wait_for(WAIT, |d| {
            let beats = d.client_frames(1);
            (beats.len() >= 2).then_some(beats)
        })
        .expect("two heartbeats");
    assert_eq!(
        beats[0],
        (1, json!({"op": 1, "d": 1})),
        "connections ended: {:?}",
        rig.discord.connection_ends()
    );
    let acks = rig
        .discord
        .gateway_log()
        .iter()
        .filter(|r| !r.from_client && r.frame == json!({"op": 11}))
        .count();
    assert!(acks >= 1);

    // A DM arrives as a whole ChannelInboundMessage.
    rig.discord
        .dispatch("MESSAGE_CREATE", messages::dm("m1", "hello"));
    let got = rig.wait_inbound(1);
    assert_eq!(got, vec![inbound(ann_dm("m1", "hello"))]);

    // A bot's message is dropped; a guild message without a mention goes
    // through unmentioned; a mention with an attachment, and a reply to the bot.
    rig.discord
        .dispatch("MESSAGE_CREATE", messages::from_bot("b1", "beep"));
    rig.discord.dispatch(
        "MESSAGE_CREATE",
        messages::guild("g1", "700000000000000007", "just chatting", false),
    );
    rig.discord.dispatch(
        "MESSAGE_CREATE",
        messages::with_attachment(
            messages::guild("g2", "700000000000000007", "look", true),
            "cat.png",
            "image/png",
            1234,
        ),
    );
    rig.discord.dispatch(
        "MESSAGE_CREATE",
        messages::reply_to_bot("r1", "300000000000000003", "thanks", "m0", "earlier answer"),
    );
    let got = rig.wait_inbound(4);
    let ids: Vec<&str> = got
        .iter()
        .map(|b| b["message"]["messageId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["m1", "g1", "g2", "r1"]);
    let group_peer = json!({"kind": "group", "id": "700000000000000007"});
    let sender = json!({"id": messages::USER_ID, "name": "Ann", "handle": "ann", "isBot": false});
    assert_eq!(
        got[1],
        inbound(
            json!({"messageId": "g1", "peer": group_peer, "sender": sender,
            "text": "just chatting", "timestamp": 1_795_502_113_123i64, "wasMentioned": false})
        )
    );
    assert_eq!(
        got[2],
        inbound(
            json!({"messageId": "g2", "peer": group_peer, "sender": sender, "text": "look",
            "media": [{"type": "image", "mimeType": "image/png",
                       "url": "https://cdn.discordapp.com/attachments/700000000000000007/500/cat.png",
                       "filename": "cat.png", "size": 1234}],
            "timestamp": 1_795_502_113_123i64, "wasMentioned": true})
        )
    );
    let mut reply = ann_dm("r1", "thanks");
    reply["replyToId"] = json!("m0");
    reply["replyToText"] = json!("earlier answer");
    reply["isReplyToBot"] = json!(true);
    assert_eq!(got[3], inbound(reply));

    // op 7: the channel resumes from the last sequence; the events
    // dispatched while it was away arrive once, in order.
    let before = rig.discord.connections_opened();
    let last_seq = rig
        .discord
        .dispatch("MESSAGE_CREATE", messages::dm("a1", "before"))
        .unwrap();
    rig.wait_inbound(5);
    rig.discord.send_reconnect();
    rig.discord
        .dispatch("MESSAGE_CREATE", messages::dm("a2", "during 1"));
    rig.discord
        .dispatch("MESSAGE_CREATE", messages::dm("a3", "during 2"));
    let resumes = rig
        .discord
        .wait_for(WAIT, |d| {
            let r = d.client_frames(6);
            (!r.is_empty()).then_some(r)
        })
        .expect("a RESUME");
    assert_eq!(
        resumes,
        vec![(
            before + 1,
            json!({"op": 6, "d": {"token": FAKE_BOT_TOKEN, "session_id": "fake-session-1", "seq": last_seq}})
        )]
    );
    rig.discord
        .dispatch("MESSAGE_CREATE", messages::dm("a4", "after"));
    let got = rig.wait_inbound(8);
    let ids: Vec<&str> = got[4..]
        .iter()
        .map(|b| b["message"]["messageId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["a1", "a2", "a3", "a4"]);
    assert_eq!(rig.discord.client_frames(2).len(), 1, "no second IDENTIFY");
    let s = rig.wait_status("main", |s| s["connected"] == true).await;
    assert_eq!(s["connected"], true);

    // The gateway is down: the message waits in the outbox and goes in
    // once, on a later alarm, when the gateway is back.
    rig.recorder.set_down(true);
    rig.discord
        .dispatch("MESSAGE_CREATE", messages::dm("q1", "while down"));
    let refused = rig.discord.wait_for(WAIT, |_| {
        let calls = rig.recorder.calls();
        calls.iter().any(|c| c.answered == 503).then_some(())
    });
    assert!(refused.is_some(), "the delivery was never tried");
    rig.recorder.set_down(false);
    let got = rig.wait_inbound(9);
    assert_eq!(got.len(), 9);
    assert_eq!(got[8], inbound(ann_dm("q1", "while down")));

    // Send a reply: the fake REST gets content and message_reference.
    let sent = rig
        .post(
            "/internal/send",
            json!({"accountId": "main", "message": {
                "peer": {"kind": "dm", "id": "300000000000000003"}, "text": "hi Ann", "replyToId": "m1"}}),
        )
        .await;
    let creates: Vec<_> = rig
        .discord
        .rest_log()
        .into_iter()
        .filter(|r| r.path == "/channels/300000000000000003/messages")
        .collect();
    assert_eq!(creates.len(), 1);
    let body = &creates[0].body;
    assert_eq!(
        (&body["content"], &body["message_reference"]),
        (
            &json!("hi Ann"),
            &json!({"message_id": "m1", "fail_if_not_exists": false})
        )
    );
    assert_eq!(creates[0].status, 200);
    assert_eq!(sent["ok"], true);
    assert!(sent["messageId"].is_string(), "{sent}");

    // A 429 is waited out and the message goes out once.
    rig.discord.fail_next(
        "/channels/700000000000000007/messages",
        RestFailure::RateLimited {
            retry_after: 0.3,
            global: false,
        },
    );
    let sent = rig
        .post(
            "/internal/send",
            json!({"accountId": "main", "message": {
                "peer": {"kind": "group", "id": "700000000000000007"}, "text": "after a wait"}}),
        )
        .await;
    assert_eq!(sent["ok"], true, "{sent}");
    let tries: Vec<_> = rig
        .discord
        .rest_log()
        .into_iter()
        .filter(|r| r.path == "/channels/700000000000000007/messages")
        .collect();
    assert_eq!(
        tries.iter().map(|r| r.status).collect::<Vec<_>>(),
        vec![429, 200]
    );
    assert_eq!(tries[0].body["nonce"], tries[1].body["nonce"]);

    // The gateway's idempotency key is Discord's nonce: the same piece
    // sent twice (the gateway retrying) is one message.
    let piece = json!({"accountId": "main", "message": {
        "peer": {"kind": "dm", "id": "300000000000000003"}, "text": "piece 1/2",
        "idempotencyKey": "run-1:0"}});
    let first = rig.post("/internal/send", piece.clone()).await;
    let again = rig.post("/internal/send", piece).await;
    assert_eq!((first["ok"].clone(), &first), (json!(true), &again));
    let pieces: Vec<_> = rig
        .discord
        .rest_log()
        .into_iter()
        .filter(|r| r.body["content"] == "piece 1/2")
        .map(|r| (r.body["nonce"].clone(), r.body["enforce_nonce"].clone()))
        .collect();
    assert_eq!(
        pieces,
        vec![
            (json!("run-1:0"), json!(true)),
            (json!("run-1:0"), json!(true))
        ]
    );

    // A 502 is retried after a short backoff, and the message goes out once.
    rig.discord.fail_next(
        "/channels/700000000000000008/messages",
        RestFailure::Status(502),
    );
    let sent = rig
        .post(
            "/internal/send",
            json!({"accountId": "main", "message": {
                "peer": {"kind": "group", "id": "700000000000000008"}, "text": "after a 502"}}),
        )
        .await;
    assert_eq!(sent["ok"], true, "{sent}");
    let tries: Vec<u16> = rig
        .discord
        .rest_log()
        .into_iter()
        .filter(|r| r.path == "/channels/700000000000000008/messages")
        .map(|r| r.status)
        .collect();
    assert_eq!(tries, vec![502, 200]);

    // Too long for a bot: refused before Discord, not retryable.
    let sent = rig
        .post(
            "/internal/send",
            json!({"accountId": "main", "message": {
                "peer": {"kind": "dm", "id": "300000000000000003"}, "text": "x".repeat(2001)}}),
        )
        .await;
    assert_eq!(
        sent,
        json!({"ok": false, "retryable": false,
               "error": "the message has 2001 characters; Discord bots may send at most 2000 per message (the gateway splits longer text)"})
    );

    // Typing.
    let typing = rig
        .post(
            "/internal/typing",
            json!({"accountId": "main", "peer": {"kind": "dm", "id": "300000000000000003"}, "typing": true}),
        )
        .await;
    assert_eq!(typing, json!({"ok": true}));
    assert!(rig
        .discord
        .rest_log()
        .iter()
        .any(|r| r.path == "/channels/300000000000000003/typing" && r.status == 204));

    // An account without a token stays idle and says why; a refused token
    // stops at GET /gateway/bot without opening a socket.
    let idle = rig
        .post(
            "/internal/start",
            json!({"accountId": "idle", "config": {}}),
        )
        .await;
    let no_token =
        "no bot token: start the account with config.botToken or set the DISCORD_BOT_TOKEN secret";
    assert_eq!(idle, json!({"ok": false, "error": no_token}));
    let opened = rig.discord.connections_opened();
    rig.post(
        "/internal/start",
        json!({"accountId": "refused", "config": {"botToken": "not-the-token"}}),
    )
    .await;
    let refused = rig
        .wait_status("refused", |s| {
            s["error"].is_string() && s["extra"]["phase"] == "idle"
        })
        .await;
    assert_eq!(
        refused["error"],
        json!("GET /gateway/bot failed: Discord refused the bot token (401): 401: Unauthorized (code 0)")
    );
    assert_eq!(rig.discord.connections_opened(), opened);

    // The status of every account.
    let all = rig.post("/internal/status", json!({})).await;
    let ids: Vec<&str> = all["accounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["accountId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["idle", "main", "refused"]);

    // Stop closes the socket with 1000.
    rig.post("/internal/stop", json!({"accountId": "main"}))
        .await;
    let s = rig.wait_status("main", |s| s["connected"] == false).await;
    assert_eq!(s["extra"]["phase"], "idle");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fatal_close_codes_stop_the_account_without_a_reconnect_loop() {
    let rig = rig(false);

    // A bad token meets IDENTIFY: 4004.
    rig.post(
        "/internal/start",
        json!({"accountId": "bad", "config": {"botToken": "wrong-token"}}),
    )
    .await;
    let s = rig.wait_status("bad", |s| s["error"].is_string()).await;
    assert_eq!(
        s["error"],
        json!("Discord closed the gateway with code 4004 (authentication failed: Discord refused the bot token); not reconnecting until the account is started again")
    );
    assert_eq!(s["connected"], false);

    // Privileged intents not enabled for the bot: 4014.
    rig.discord.set_privileged_intents_allowed(false);
    rig.post(
        "/internal/start",
        json!({"accountId": "intents", "config": {"botToken": FAKE_BOT_TOKEN}}),
    )
    .await;
    let s = rig.wait_status("intents", |s| s["error"].is_string()).await;
    assert!(
        s["error"]
            .as_str()
            .unwrap()
            .starts_with("Discord closed the gateway with code 4014 (disallowed intents"),
        "{s}"
    );

    // Neither reconnects: two connections in all, still two a while later.
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(rig.discord.connections_opened(), 2);
    let ends: Vec<Option<u16>> = rig
        .discord
        .connection_ends()
        .iter()
        .map(|e| e.code)
        .collect();
    assert_eq!(ends, vec![Some(4004), Some(4014)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_sessions_and_a_zombied_connection_recover() {
    let rig = rig(false);
    rig.post(
        "/internal/start",
        json!({"accountId": "main", "config": {"botToken": FAKE_BOT_TOKEN}}),
    )
    .await;
    let s = rig.wait_status("main", |s| s["connected"] == true).await;
    assert_eq!(s["connected"], true);

    // op 9, not resumable: after 1-5 s, a new connection and a fresh IDENTIFY.
    rig.discord.send_invalid_session(false);
    let identifies = rig
        .discord
        .wait_for(WAIT, |d| {
            let i = d.client_frames(2);
            (i.len() >= 2).then_some(i)
        })
        .expect("a second IDENTIFY");
    assert_eq!(
        identifies.iter().map(|(conn, _)| *conn).collect::<Vec<_>>(),
        vec![1, 2],
        "connections ended: {:?}",
        rig.discord.connection_ends()
    );
    let s = rig.wait_status("main", |s| s["connected"] == true).await;
    assert_eq!(s["connected"], true);

    // op 9, resumable: a new connection that RESUMEs the (new) session.
    rig.discord.send_invalid_session(true);
    let resume = rig
        .discord
        .wait_for(WAIT, |d| d.client_frames(6).into_iter().next())
        .expect("a RESUME");
    assert_eq!(
        (resume.0, &resume.1["d"]["session_id"]),
        (3, &json!("fake-session-2"))
    );

    // No ACKs: the channel closes the zombied connection itself (4000,
    // resumable) and RESUMEs on a new one.
    rig.discord
        .wait_for(WAIT, |d| {
            d.gateway_log()
                .iter()
                .any(|r| r.conn == 3 && r.frame["t"] == "RESUMED")
                .then_some(())
        })
        .expect("RESUMED");
    rig.discord.set_acks(false);
    let ended = rig
        .discord
        .wait_for(WAIT, |d| {
            d.connection_ends().into_iter().find(|e| e.conn == 3)
        })
        .expect("the zombied connection closed");
    assert_eq!((ended.code, ended.by_server), (Some(4000), false));
    rig.discord.set_acks(true);
    let resume = rig
        .discord
        .wait_for(WAIT, |d| {
            d.client_frames(6).into_iter().find(|(conn, _)| *conn == 4)
        })
        .expect("a RESUME on connection 4");
    assert_eq!(resume.1["d"]["session_id"], json!("fake-session-2"));
    let s = rig.wait_status("main", |s| s["connected"] == true).await;
    assert_eq!(s["connected"], true);
    assert_eq!(rig.discord.connections_opened(), 4);

    // workerd restarts (the object is gone, its SQLite and alarm stay): the
    // alarm brings the object back, which RESUMEs from its stored sequence
    // and gets the message sent while it was down.
    let mut rig = rig;
    rig.workerd.restart();
    rig.discord
        .dispatch("MESSAGE_CREATE", messages::dm("d1", "while restarting"));
    let resume = rig
        .discord
        .wait_for(WAIT, |d| {
            d.client_frames(6).into_iter().find(|(conn, _)| *conn == 5)
        })
        .expect("a RESUME after the restart");
    assert_eq!(resume.1["d"]["session_id"], json!("fake-session-2"));
    let got = rig.wait_inbound(1);
    assert_eq!(got, vec![inbound(ann_dm("d1", "while restarting"))]);
}

/// The whole path with the real gateway: both Workers in one workerd, each
/// reaching the other through its service binding (`GATEWAY` → `gsv`,
/// `CHANNEL_DISCORD` → `gsv-channel-discord`), the key derived from the
/// gateway's token. A DM on the fake Discord becomes a run on the fake
/// LLM, and its answer a reply on the fake Discord.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dm_through_the_real_gateway_is_answered_on_discord() {
    use gsv_e2e::channel_rig::{start_bot, start_gateway_with_discord};
    use gsv_e2e::fake_llm::FakeLlm;
    use gsv_e2e::ws::Client;

    const TOKEN: &str = "test-token";
    let discord = FakeDiscord::start();
    discord.set_heartbeat_interval_ms(1_000);
    discord.set_heartbeat_grace_ms(10_000);
    let llm = FakeLlm::start().await;
    let gw = start_gateway_with_discord(&discord, TOKEN);
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    owner
        .config_set("channels.discord.dmPolicy", json!("open"))
        .await;
    let started = start_bot(&mut owner, &discord).await;
    assert!(!format!("{started:?}").contains(FAKE_BOT_TOKEN));

    // `channel.status` asks the channel through the binding.
    let status = poll::try_until(WAIT, ms(100), async || {
        let res = owner
            .request("channel.status", json!({"channel": "discord"}))
            .await;
        let payload = res.payload.unwrap_or_default();
        if payload["accounts"][0]["connected"] == true {
            Ok(payload)
        } else {
            Err(payload)
        }
    })
    .await
    .unwrap_or_else(|last| last);
    assert_eq!(
        (
            &status["accounts"][0]["accountId"],
            &status["accounts"][0]["connected"],
            &status["accounts"][0]["extra"]["botUserId"]
        ),
        (&json!("default"), &json!(true), &json!(BOT_USER_ID)),
        "{status}"
    );

    discord.dispatch("MESSAGE_CREATE", messages::dm("m1", "hello gsv"));
    let reply = discord
        .wait_for(Duration::from_secs(60), |d| {
            d.rest_log()
                .into_iter()
                .find(|r| r.path == "/channels/300000000000000003/messages")
        })
        .expect("a reply on Discord");
    assert_eq!(reply.status, 200, "{reply:?}");
    // The gateway's envelope, echoed by the fake LLM, as a reply to the DM;
    // the nonce is the gateway's idempotency key for this piece.
    let mut body = reply.body;
    let nonce = body["nonce"].take();
    assert!(
        nonce
            .as_str()
            .is_some_and(|n| !n.is_empty() && n.len() <= 25),
        "{nonce}"
    );
    assert_eq!(
        body,
        json!({
            "content": "echo: [discord · Tue 24 Nov 06:35 · @ann]\n<<<channel-message>>>\nhello gsv\n<<<end-channel-message>>>",
            "allowed_mentions": {"parse": ["users"], "replied_user": true},
            "message_reference": {"message_id": "m1", "fail_if_not_exists": false},
            "enforce_nonce": true,
            "nonce": null
        })
    );
    let asked = llm.requests();
    assert_eq!(asked.len(), 1);

    // An answer Discord holds back (a 429 longer than the channel waits
    // out) goes again after the gateway's backoff, and the answers queued
    // behind it follow in order; while they wait, the gateway's alarm
    // comes back for the head's retry, not without pause for the pieces
    // behind it (they were "due" and made it spin).
    let runs_before = alarm_runs(&mut owner).await;
    discord.fail_next(
        "/channels/300000000000000003/messages",
        RestFailure::RateLimited {
            retry_after: 60.0,
            global: false,
        },
    );
    for (id, text) in [("m2", "second"), ("m3", "third"), ("m4", "fourth")] {
        discord.dispatch("MESSAGE_CREATE", messages::dm(id, text));
    }
    let answers = discord
        .wait_for(Duration::from_secs(60), |d| {
            let sent: Vec<String> = d
                .rest_log()
                .into_iter()
                .filter(|r| r.path == "/channels/300000000000000003/messages" && r.status == 200)
                .filter_map(|r| {
                    r.body["message_reference"]["message_id"]
                        .as_str()
                        .map(String::from)
                })
                .collect();
            (sent.len() >= 4).then_some(sent)
        })
        .expect("every answer on Discord");
    assert_eq!(answers, ["m1", "m2", "m3", "m4"]);
    let runs = alarm_runs(&mut owner).await - runs_before;
    assert!(
        runs < 30,
        "the alarm ran {runs} times while one answer waited"
    );
}

/// `cron.status`'s count of the gateway's alarm runs.
async fn alarm_runs(owner: &mut gsv_e2e::ws::Client) -> u64 {
    let status = owner.request("cron.status", json!({})).await;
    let payload = status.payload.unwrap_or_default();
    payload["alarmRuns"]
        .as_u64()
        .unwrap_or_else(|| panic!("no alarmRuns: {payload}"))
}
