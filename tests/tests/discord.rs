//! Chatting with the agent on Discord, end to end: the real gateway and
//! the real Discord channel Worker in one workerd, the fake Discord
//! (gateway WebSocket and REST) and the fake LLM on loopback. What a
//! person sees in Discord is what the fake's REST log holds.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::channel_rig::{start_bot, start_gateway_with_discord};
use gsv_e2e::fake_discord::{messages, FakeDiscord, RestFailure, RestRecord};
use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{run_gsv, Workerd};
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::time::Duration;

const TOKEN: &str = "test-token";
const WAIT: Duration = Duration::from_secs(30);
/// The DM channel of the fake's user.
const DM: &str = "300000000000000003";

struct Chat {
    discord: FakeDiscord,
    llm: FakeLlm,
    gw: Workerd,
    owner: Client,
}

async fn start() -> Chat {
    let discord = FakeDiscord::start();
    discord.set_heartbeat_interval_ms(1_000);
    // Local alarms run late on a loaded machine; a 4009 would be ours.
    discord.set_heartbeat_grace_ms(10_000);
    let llm = FakeLlm::start().await;
    let gw = start_gateway_with_discord(&discord, TOKEN);
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    start_bot(&mut owner, &discord).await;
    Chat {
        discord,
        llm,
        gw,
        owner,
    }
}

impl Chat {
    /// The messages the bot posted in `channel`, in order (successful posts).
    fn posted(&self, channel: &str) -> Vec<RestRecord> {
        let path = format!("/channels/{channel}/messages");
        self.discord
            .rest_log()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path == path && r.status == 200)
            .collect()
    }

    /// Waits until the bot has posted `n` messages in `channel`.
    fn wait_posted(&self, channel: &str, n: usize) -> Vec<RestRecord> {
        self.discord
            .wait_for(WAIT, |_| {
                let posted = self.posted(channel);
                (posted.len() >= n).then_some(posted)
            })
            .unwrap_or_else(|| panic!("{n} messages in {channel}: {:#?}", self.posted(channel)))
    }

    async fn set(&mut self, path: &str, value: Value) {
        self.owner.config_set(path, value).await;
    }
}

fn content(r: &RestRecord) -> String {
    r.body["content"].as_str().unwrap_or_default().to_string()
}

fn replied_to(r: &RestRecord) -> Value {
    r.body["message_reference"]["message_id"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_pairs_then_chats_in_dms_and_groups() {
    let mut chat = start().await;
    // An unknown DM (the default policy is pairing) gets one code and runs nothing.
    chat.discord
        .dispatch("MESSAGE_CREATE", messages::dm("m1", "hello?"));
    let code_msg = chat.wait_posted(DM, 1).remove(0);
    let text = content(&code_msg);
    let code = text
        .split("pairing code is ")
        .nth(1)
        .and_then(|t| t.get(..8))
        .unwrap_or_else(|| panic!("no code in {text:?}"))
        .to_string();
    assert!(chat.llm.requests().is_empty());
    let approve = run_gsv(&chat.gw.url(), TOKEN, &["pair", "approve", &code]);
    assert_eq!(
        String::from_utf8_lossy(&approve.stdout),
        "Approved Ann on discord (they were told).\n",
        "{}",
        String::from_utf8_lossy(&approve.stderr)
    );
    let told = chat.wait_posted(DM, 2).remove(1);
    assert_eq!(
        content(&told),
        "You're approved: I'll answer your messages from now on."
    );

    // Now the DM is answered, as a reply to it, in a session of Ann's own
    // (she is not the owner): the CLI reads it by its key.
    chat.llm.script("what time", vec![Step::text("Teatime.")]);
    chat.discord
        .dispatch("MESSAGE_CREATE", messages::dm("m2", "what time is it?"));
    let answer = chat.wait_posted(DM, 3).remove(2);
    assert_eq!(
        (content(&answer), replied_to(&answer)),
        ("Teatime.".to_string(), json!("m2"))
    );
    let preview = chat
        .owner
        .request(
            "session.preview",
            json!({"sessionKey": format!("agent:main:discord:dm:{}", messages::USER_ID)}),
        )
        .await;
    let messages = preview.payload.unwrap()["messages"].clone();
    assert_eq!(
        messages[0]["content"],
        json!("[discord · Tue 24 Nov 06:35 · @ann]\n<<<channel-message>>>\nwhat time is it?\n<<<end-channel-message>>>")
    );

    // In a server channel, only a mention runs.
    chat.llm.script("ping", vec![Step::text("pong")]);
    chat.discord.dispatch(
        "MESSAGE_CREATE",
        messages::guild("g1", "700", "just chatting", false),
    );
    chat.discord
        .dispatch("MESSAGE_CREATE", messages::guild("g2", "700", "ping", true));
    let pong = chat.wait_posted("700", 1).remove(0);
    assert_eq!(
        (content(&pong), replied_to(&pong)),
        ("pong".into(), json!("g2"))
    );
    assert!(
        !chat
            .llm
            .requests()
            .iter()
            .any(|r| r.body.to_string().contains("just chatting")),
        "an unmentioned group message ran"
    );

    // The agent writes on its own: to the last chat (the server channel).
    chat.llm.script(
        "tell them",
        vec![
            Step::tool_call("c1", "gsv__Message", json!({"text": "Build done."})),
            Step::text("Told them."),
        ],
    );
    let run = chat
        .owner
        .chat_send("main", "tell them the build is done")
        .await;
    chat.owner.run_events(&run).await;
    let told = chat.wait_posted("700", 2).remove(1);
    assert_eq!(
        (content(&told), replied_to(&told)),
        ("Build done.".into(), Value::Null)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_answers_rate_limits_and_reconnects_lose_nothing() {
    let mut chat = start().await;
    chat.set("channels.discord.dmPolicy", json!("open")).await;

    // A 5 000-character answer arrives as three messages, fences intact.
    let code: Vec<String> = (0..230)
        .map(|i| format!("let line_{i:03} = {i};"))
        .collect();
    let long = format!(
        "{}\n\n```rust\n{}\n```\n\nThat's all.",
        "Intro sentence. ".repeat(40).trim_end(),
        code.join("\n")
    );
    chat.llm
        .script("long please", vec![Step::text(long.clone())]);
    chat.discord
        .dispatch("MESSAGE_CREATE", messages::dm("m1", "long please"));
    let pieces = chat.wait_posted(DM, 3);
    assert!(content(&pieces[2]).ends_with("That's all."), "{pieces:#?}");
    for p in &pieces {
        let text = content(p);
        assert!(text.chars().count() <= 2000);
        assert_eq!(text.matches("```").count() % 2, 0, "{text}");
    }
    assert_eq!(replied_to(&pieces[0]), json!("m1"));

    // A 429 on the answer is waited out and the answer posted once.
    chat.discord.fail_next(
        "/messages",
        RestFailure::RateLimited {
            retry_after: 0.3,
            global: false,
        },
    );
    chat.llm.script("limited", vec![Step::text("Patience.")]);
    chat.discord
        .dispatch("MESSAGE_CREATE", messages::dm("m2", "limited"));
    let posted = chat.wait_posted(DM, 4);
    assert_eq!(content(&posted[3]), "Patience.");
    let tries: Vec<u16> = chat
        .discord
        .rest_log()
        .iter()
        .filter(|r| r.body["content"] == "Patience.")
        .map(|r| r.status)
        .collect();
    assert_eq!(tries, [429, 200]);

    // Discord asks for a reconnect while a message is on its way: the
    // channel resumes where it was, and the message is answered once.
    chat.llm.script("after", vec![Step::text("Still here.")]);
    chat.discord.send_reconnect();
    chat.discord
        .dispatch("MESSAGE_CREATE", messages::dm("m3", "after the reconnect"));
    let posted = chat.wait_posted(DM, 5);
    assert_eq!(content(&posted[4]), "Still here.");
    let resumes = chat.discord.client_frames(6);
    assert_eq!(resumes.len(), 1, "{resumes:?}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let answered = chat
        .posted(DM)
        .iter()
        .filter(|r| content(r) == "Still here.")
        .count();
    assert_eq!(answered, 1);
    let runs = chat
        .llm
        .requests()
        .iter()
        .filter(|r| r.body.to_string().contains("after the reconnect"))
        .count();
    assert_eq!(runs, 1);
}
