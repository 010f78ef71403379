//! The gateway's channel plane end to end, under workerd with the fake
//! LLM, through a channel connected over v1's WebSocket fallback: access
//! and pairing, routing, the envelope, group mentions, answers split for
//! the platform, redeliveries, and the internal path's channel key. (The
//! Discord Worker behind a service binding is `discord.rs`.)

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{run_gsv, GatewayOptions, Workerd};
use gsv_e2e::ws::{raw_channel, Client};
use gsv_protocol::channel_key::derive_channel_key;
use serde_json::{json, Value};

const TOKEN: &str = "test-token";

async fn setup() -> (Workerd, FakeLlm, Client, Client) {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    let discord = raw_channel(&gw.url(), TOKEN, "discord").await;
    (gw, llm, owner, discord)
}

fn dm(id: &str, from: &str, text: &str) -> Value {
    json!({
        "channel": "discord", "accountId": "default",
        "message": {
            "messageId": id,
            "peer": {"kind": "dm", "id": format!("dm-{from}")},
            "sender": {"id": from, "name": "Alice", "handle": "alice"},
            "text": text,
            "timestamp": 1_795_529_100_000i64
        }
    })
}

fn group(id: &str, from: &str, text: &str, mentioned: bool) -> Value {
    json!({
        "channel": "discord", "accountId": "default",
        "message": {
            "messageId": id,
            "peer": {"kind": "group", "id": "chan-7", "name": "general"},
            "sender": {"id": from, "name": "Alice", "handle": "alice"},
            "text": text,
            "wasMentioned": mentioned,
            "timestamp": 1_795_529_100_000i64
        }
    })
}

async fn inbound(ch: &mut Client, params: Value) -> Value {
    let res = ch.request("channel.inbound", params).await;
    assert!(res.ok, "channel.inbound: {res:?}");
    res.payload.unwrap()
}

/// The next message the gateway sends out through the channel.
async fn outbound(ch: &mut Client) -> Value {
    ch.next_event("channel.outbound").await
}

#[tokio::test]
async fn an_unknown_sender_pairs_then_is_answered_as_a_reply() {
    let (gw, llm, mut owner, mut discord) = setup().await;
    // An unknown DM gets a code, once, and is neither run nor stored.
    let first = inbound(&mut discord, dm("m1", "81", "hello?")).await;
    assert_eq!(first, json!({"ok": true, "status": "pendingPairing"}));
    let code_msg = outbound(&mut discord).await;
    let text = code_msg["message"]["text"].as_str().unwrap().to_string();
    let code = text
        .split("pairing code is ")
        .nth(1)
        .and_then(|t| t.get(..8))
        .unwrap()
        .to_string();
    assert_eq!(
        code_msg,
        json!({"channel": "discord", "accountId": "default", "peer": {"kind": "dm", "id": "dm-81"},
               "message": {"text": format!(
                   "Hi! I only talk with people my owner has approved. Your pairing code is {code}. \
                    Ask my owner to approve it (gsv pair approve {code}); it is valid for one hour.")}})
    );
    let again = inbound(&mut discord, dm("m2", "81", "anyone?")).await;
    assert_eq!(again["status"], "pendingPairing");
    assert!(llm.requests().is_empty(), "a pending sender's message ran");

    // The owner sees it and approves it with the CLI.
    let list = run_gsv(&gw.url(), TOKEN, &["pair", "list"]);
    let listed = String::from_utf8_lossy(&list.stdout).to_string();
    assert!(
        listed.starts_with(&format!("{code}  discord:81  Alice (81)  asked ")),
        "{listed}"
    );
    let approve = run_gsv(&gw.url(), TOKEN, &["pair", "approve", &code]);
    assert_eq!(
        String::from_utf8_lossy(&approve.stdout),
        "Approved Alice on discord (they were told).\n",
        "{}",
        String::from_utf8_lossy(&approve.stderr)
    );
    let told = outbound(&mut discord).await;
    assert_eq!(
        told["message"],
        json!({"text": "You're approved: I'll answer your messages from now on."})
    );
    let allow = owner
        .request("config.get", json!({"path": "channels.discord.allowFrom"}))
        .await;
    assert_eq!(allow.payload.unwrap()["value"], json!(["81"]));

    // Now a DM runs, lands in a session of its own (under dmScope main,
    // only the owner's identities share the main session), and the
    // answer comes back as a reply to it.
    llm.script("what time", vec![Step::text("Teatime.")]);
    let started = inbound(&mut discord, dm("m3", "81", "what time is it?")).await;
    assert_eq!(started["status"], "started");
    assert_eq!(started["sessionKey"], "agent:main:discord:dm:81");
    let typing = discord.next_event("channel.typing").await;
    assert_eq!(typing["typing"], true);
    let answer = outbound(&mut discord).await;
    assert_eq!(
        answer["message"],
        json!({"text": "Teatime.", "replyToId": "m3"})
    );
    // The model saw the envelope with the sender's words fenced as data.
    let request = llm.requests().last().unwrap().body.clone();
    let last_user = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .clone();
    assert_eq!(
        last_user,
        json!("[discord · Tue 24 Nov 14:05 · @alice]\n<<<channel-message>>>\nwhat time is it?\n<<<end-channel-message>>>")
    );
    let system = request["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("## Chat App Messages"), "{system}");
    // The prompt names no channel (only the session's key does): it stays
    // the same whichever app a message came through (the envelope names it).
    assert_eq!(system.matches("discord").count(), 1, "{system}");
    assert!(system.contains("- Session key: agent:main:discord:dm:81"));

    // From the CLI, the agent messages the last chat on its own.
    llm.script(
        "tell me on discord",
        vec![
            Step::tool_call("c1", "gsv__Message", json!({"text": "Build done."})),
            Step::text("Told you there."),
        ],
    );
    let run = owner
        .chat_send("agent:main:main", "tell me on discord when it's built")
        .await;
    let events = owner.run_events(&run).await;
    assert_eq!(
        events.last().unwrap().message.as_ref().unwrap().text(),
        "Told you there."
    );
    let sent = outbound(&mut discord).await;
    assert_eq!(
        sent,
        json!({"channel": "discord", "accountId": "default", "peer": {"kind": "dm", "id": "dm-81"},
               "message": {"text": "Build done."}})
    );
    let result = llm
        .requests()
        .into_iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(result["content"], "Sent to discord:dm-81.");
}

#[tokio::test]
async fn groups_answer_mentions_only_and_redeliveries_run_once() {
    let (_gw, llm, mut owner, mut discord) = setup().await;
    owner
        .request(
            "config.set",
            json!({"path": "channels.discord.allowFrom", "value": ["81"]}),
        )
        .await;
    let quiet = inbound(&mut discord, group("g1", "81", "just chatting", false)).await;
    assert_eq!(quiet, json!({"ok": true, "status": "ignored"}));
    llm.script("ping", vec![Step::text("pong")]);
    let asked = inbound(&mut discord, group("g2", "81", "@bot ping", true)).await;
    assert_eq!(asked["status"], "started");
    assert_eq!(asked["sessionKey"], "agent:main:discord:group:chan-7");
    let answer = outbound(&mut discord).await;
    assert_eq!(answer["peer"]["id"], "chan-7");
    assert_eq!(
        answer["message"],
        json!({"text": "pong", "replyToId": "g2"})
    );
    // The same message delivered again is taken once.
    let again = inbound(&mut discord, group("g2", "81", "@bot ping", true)).await;
    assert_eq!(again, json!({"ok": true, "status": "ignored"}));
    let runs = llm
        .requests()
        .iter()
        .filter(|r| r.body.to_string().contains("ping"))
        .count();
    assert_eq!(runs, 1);
    // A stranger in the group is ignored, and no code is posted there.
    let stranger = inbound(&mut discord, group("g3", "99", "@bot hi", true)).await;
    assert_eq!(stranger["status"], "blocked");
}

/// A DM in GSV v1's WebSocket shape: peer, sender and mention beside the
/// message, whose id is `message.id`.
fn v1_dm(id: &str, from: &str, text: &str) -> Value {
    json!({
        "channel": "discord", "accountId": "default",
        "peer": {"kind": "dm", "id": format!("dm-{from}"), "name": "Bea"},
        "sender": {"id": from, "name": "Bea"},
        "message": {"id": id, "text": text, "timestamp": 1_795_529_100_000i64},
        "wasMentioned": false, "mentionedIds": []
    })
}

#[tokio::test]
async fn a_v1_shaped_channel_message_pairs_and_is_answered() {
    let (gw, llm, _owner, mut discord) = setup().await;
    let first = inbound(&mut discord, v1_dm("v1", "82", "hi there")).await;
    assert_eq!(first, json!({"ok": true, "status": "pendingPairing"}));
    let code_msg = outbound(&mut discord).await;
    let text = code_msg["message"]["text"].as_str().unwrap();
    let code = text.split("pairing code is ").nth(1).unwrap()[..8].to_string();
    let approve = run_gsv(&gw.url(), TOKEN, &["pair", "approve", &code]);
    assert!(approve.status.success(), "{approve:?}");
    outbound(&mut discord).await; // "You're approved…"

    llm.script("are you there", vec![Step::text("I am.")]);
    let started = inbound(&mut discord, v1_dm("v2", "82", "are you there?")).await;
    assert_eq!(
        (&started["status"], &started["sessionKey"]),
        (&json!("started"), &json!("agent:main:discord:dm:82"))
    );
    let answer = outbound(&mut discord).await;
    assert_eq!(
        answer,
        json!({"channel": "discord", "accountId": "default",
               "peer": {"kind": "dm", "id": "dm-82", "name": "Bea"},
               "message": {"text": "I am.", "replyToId": "v2"}})
    );
    // Without an id in either shape, it is refused by name.
    let res = discord
        .request(
            "channel.inbound",
            json!({"channel": "discord", "accountId": "default",
                   "peer": {"kind": "dm", "id": "dm-82"}, "message": {"text": "no id"}}),
        )
        .await;
    assert_eq!(
        res.error.map(|e| (e.code, e.message)),
        Some((
            400,
            "Invalid params for channel.inbound: message.messageId (or v1's message.id) is required"
                .to_string()
        ))
    );
}

#[tokio::test]
async fn a_long_answer_arrives_in_pieces_with_code_fences_intact() {
    let (_gw, llm, mut owner, mut discord) = setup().await;
    owner
        .request(
            "config.set",
            json!({"path": "channels.discord.dmPolicy", "value": "open"}),
        )
        .await;
    let code: Vec<String> = (0..230)
        .map(|i| format!("let line_{i:03} = {i};"))
        .collect();
    let long = format!(
        "{}\n\n```rust\n{}\n```\n\nThat's all.",
        "Intro sentence. ".repeat(40).trim_end(),
        code.join("\n")
    );
    assert!(long.chars().count() > 4000 && long.chars().count() < 6000);
    llm.script("long please", vec![Step::text(long.clone())]);
    inbound(&mut discord, dm("m1", "5", "long please")).await;
    let mut pieces: Vec<String> = Vec::new();
    while !pieces.last().is_some_and(|p| p.ends_with("That's all.")) {
        let out = outbound(&mut discord).await;
        pieces.push(out["message"]["text"].as_str().unwrap().to_string());
    }
    assert_eq!(pieces.len(), 3, "{pieces:#?}");
    for p in &pieces {
        assert!(p.chars().count() <= 2000);
        assert_eq!(p.matches("```").count() % 2, 0, "unbalanced fence in {p}");
    }
}

#[tokio::test]
async fn the_internal_channel_path_needs_the_channel_key() {
    let (gw, _llm, _owner, _discord) = setup().await;
    let url = format!("{}/internal/channel/inbound", gw.http_url());
    let http = reqwest::Client::new();
    let body = dm("k1", "81", "hi").to_string();
    let no_key = http.post(&url).body(body.clone()).send().await.unwrap();
    assert_eq!(no_key.status().as_u16(), 401);
    let wrong = http
        .post(&url)
        .header("x-gsv-channel-key", derive_channel_key("not-the-token"))
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status().as_u16(), 401);
    let right = http
        .post(&url)
        .header("x-gsv-channel-key", derive_channel_key(TOKEN))
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(right.status().as_u16(), 200);
    let answer: Value = serde_json::from_str(&right.text().await.unwrap()).unwrap();
    // Under the default policy an unknown sender pairs first.
    assert_eq!(answer["status"], "pendingPairing");
}

#[tokio::test]
async fn an_identity_link_joins_the_cli_and_the_chat_in_one_session() {
    let (_gw, llm, mut owner, mut discord) = setup().await;
    owner
        .request(
            "config.set",
            json!({"path": "session.identityLinks", "value": {"steve": ["discord:81"]}}),
        )
        .await;
    owner
        .request(
            "config.set",
            json!({"path": "session.dmScope", "value": "per-peer"}),
        )
        .await;
    owner
        .request(
            "config.set",
            json!({"path": "channels.discord.allowFrom", "value": ["81"]}),
        )
        .await;
    llm.script("remember", vec![Step::text("Noted.")]);
    let r = inbound(&mut discord, dm("m1", "81", "remember the milk")).await;
    assert_eq!(r["sessionKey"], "agent:main:dm:steve");
    outbound(&mut discord).await;
    // The same person from the CLI, by the linked name, sees that history.
    let preview = owner
        .request(
            "session.preview",
            json!({"sessionKey": "agent:main:dm:steve"}),
        )
        .await;
    let messages = preview.payload.unwrap()["messages"].clone();
    assert_eq!(messages.as_array().unwrap().len(), 2, "{messages}");
}
