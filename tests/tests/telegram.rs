//! Chatting with the agent on Telegram, end to end: the real gateway and
//! the real Telegram channel Worker in one workerd (the channel also on a
//! port of its own, where the fake Telegram posts its webhooks), the fake
//! Telegram Bot API and the fake LLM on loopback. What a person sees in
//! Telegram is what the fake recorded as sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine;
use gsv_e2e::channel_rig::{start_gateway_with_telegram, start_telegram_bot};
use gsv_e2e::fake_llm::{FakeLlm, RecordedRequest, Step};
use gsv_e2e::fake_telegram::{
    Call, FakeTelegram, SentMessage, ANN, BOB, BOT_ID, BOT_TOKEN, BOT_USERNAME,
};
use gsv_e2e::fixtures::jpeg;
use gsv_e2e::harness::{run_gsv, Workerd};
use gsv_e2e::poll::{self, ms, secs};
use gsv_e2e::ws::Client;
use gsv_gateway::channels::chunk::split_message;
use serde_json::{json, Value};
use std::time::Duration;

const TOKEN: &str = "test-token";
const WAIT: Duration = Duration::from_secs(30);
const WORKER: &str = "gsv-channel-telegram";

struct Chat {
    tg: FakeTelegram,
    llm: FakeLlm,
    gw: Workerd,
    owner: Client,
}

#[derive(Clone, Copy, PartialEq)]
enum Updates {
    /// Telegram posts them to the Worker's public URL.
    Webhook,
    /// No public URL: the Worker asks `getUpdates`.
    LongPolling,
}

async fn start(updates: Updates) -> Chat {
    start_with(updates, &[]).await
}

/// The rig, with `config` set before the bot starts.
async fn start_with(updates: Updates, config: &[(&str, Value)]) -> Chat {
    let tg = FakeTelegram::start();
    let llm = FakeLlm::start().await;
    let gw = start_gateway_with_telegram(&tg, TOKEN);
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    for (path, value) in config {
        owner.config_set(path, value.clone()).await;
    }
    let public = gw.exposed_url(WORKER);
    let url = (updates == Updates::Webhook).then_some(public.as_str());
    start_telegram_bot(&mut owner, &tg, url).await;
    Chat { tg, llm, gw, owner }
}

fn text(m: &SentMessage) -> &str {
    m.text.as_deref().unwrap_or_default()
}

/// The tries among `calls` whose text (or caption) is `text`: status,
/// parse mode and text of each.
fn tries_of(calls: &[Call], text: &str) -> Vec<(u16, Option<String>, Option<String>)> {
    calls
        .iter()
        .filter(|c| {
            let t = c
                .arg("text")
                .or_else(|| c.arg("caption"))
                .unwrap_or_default();
            t == text
        })
        .map(|c| (c.status, c.arg("parse_mode"), c.arg("text")))
        .collect()
}

impl Chat {
    /// Waits until `n` messages were sent to `chat`.
    fn wait_sent_to(&self, chat: i64, n: usize) -> Vec<SentMessage> {
        self.tg
            .wait_for(WAIT, |t| {
                let sent = t.sent_to(chat);
                (sent.len() >= n).then_some(sent)
            })
            .unwrap_or_else(|| {
                panic!(
                    "{n} messages sent to {chat}: {:#?}\ncalls: {:#?}\nworkerd log:\n{}",
                    self.tg.sent_to(chat),
                    self.tg.calls(),
                    self.gw.log()
                )
            })
    }

    /// The model requests whose text holds `needle`.
    fn asked(&self, needle: &str) -> usize {
        self.llm
            .requests()
            .iter()
            .filter(|r| r.body.to_string().contains(needle))
            .count()
    }

    /// What the model was told of tool call `id`.
    fn tool_result(&self, id: &str) -> Value {
        self.llm
            .requests()
            .iter()
            .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
            .unwrap_or_else(|| panic!("no result of tool call {id}"))
    }

    /// Every call Telegram refused, as `method status description`: a test
    /// that scripts no failure expects none (the Worker sends nothing
    /// Telegram would not take).
    fn refusals(&self) -> Vec<String> {
        self.tg
            .calls()
            .iter()
            .filter(|c| c.status >= 400)
            .map(|c| {
                format!(
                    "{} {} {}",
                    c.method,
                    c.status,
                    c.response["description"].as_str().unwrap_or_default()
                )
            })
            .collect()
    }

    async fn status(&mut self) -> Value {
        let res = self
            .owner
            .request("channel.status", json!({"channel": "telegram"}))
            .await;
        assert!(res.ok, "{res:?}");
        res.payload.unwrap()
    }

    /// The stored messages of the main session.
    async fn history(&mut self) -> Vec<Value> {
        let res = self
            .owner
            .request("session.preview", json!({"sessionKey": "main"}))
            .await;
        assert!(res.ok, "{res:?}");
        res.payload.unwrap()["messages"].as_array().unwrap().clone()
    }
}

/// The user messages of a model request (OpenAI's shape).
fn user_parts(r: &RecordedRequest) -> Vec<Value> {
    r.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_pairs_then_is_answered_in_html_as_a_reply_and_retries_run_once() {
    let mut chat = start(Updates::Webhook).await;
    // The start: the bot's identity, then the webhook at the Worker's
    // public URL with a secret and the updates the channel reads.
    let methods: Vec<String> = chat.tg.calls().iter().map(|c| c.method.clone()).collect();
    assert_eq!(methods[..2], ["getMe", "setWebhook"], "{methods:?}");
    let hook = chat.tg.webhook().unwrap();
    assert_eq!(
        hook.url,
        format!("{}/webhook/default", chat.gw.exposed_url(WORKER))
    );
    let secret = hook.secret_token.clone().expect("a secret token");
    assert!(
        secret.len() >= 16
            && secret
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
        "{secret}"
    );
    assert_eq!(
        chat.tg.allowed_updates(),
        Some(vec![
            "message".to_string(),
            "edited_message".to_string(),
            "callback_query".to_string()
        ])
    );
    // `channel.status` asks the channel; neither the token nor the secret leaves it.
    let status = chat.status().await;
    assert_eq!(
        status,
        json!({"channel": "telegram", "accounts": [{
            "accountId": "default", "connected": true, "authenticated": true, "mode": "webhook",
            "extra": {"botId": BOT_ID, "botUsername": BOT_USERNAME, "privacyMode": true,
                      "hasToken": true, "webhookUrl": hook.url, "editedIgnored": 0}}]})
    );
    let shown = status.to_string();
    assert!(
        !shown.contains(BOT_TOKEN) && !shown.contains(&secret),
        "{shown}"
    );

    // A stranger opens the bot (Telegram sends `/start`; the default
    // policy is pairing): she gets a code, and nothing runs.
    let hello = chat.tg.user_says(&ANN, "/start");
    chat.tg.wait_delivered(WAIT, hello.update_id.unwrap());
    let code_msg = chat.wait_sent_to(ANN.id, 1).remove(0);
    let code = text(&code_msg)
        .split("pairing code is ")
        .nth(1)
        .and_then(|t| t.get(..8))
        .unwrap_or_else(|| panic!("no code in {code_msg:?}"))
        .to_string();
    assert_eq!(
        text(&code_msg),
        format!(
            "Hi! I only talk with people my owner has approved. Your pairing code is {code}. \
             Ask my owner to approve it (gsv pair approve {code}); it is valid for one hour."
        )
    );
    assert_eq!(chat.llm.requests().len(), 0);
    let approve = run_gsv(&chat.gw.url(), TOKEN, &["pair", "approve", &code]);
    assert_eq!(
        String::from_utf8_lossy(&approve.stdout),
        "Approved Ann Lee on telegram (they were told).\n",
        "{}",
        String::from_utf8_lossy(&approve.stderr)
    );
    let told = chat.wait_sent_to(ANN.id, 2).remove(1);
    assert_eq!(
        text(&told),
        "You're approved: I'll answer your messages from now on."
    );
    let allow = chat
        .owner
        .request("config.get", json!({"path": "channels.telegram.allowFrom"}))
        .await;
    assert_eq!(allow.payload.unwrap()["value"], json!([ANN.id.to_string()]));

    // Now she is answered, as a reply to her message, the model's Markdown
    // as Telegram's HTML; "typing…" shows (renewed) while the agent works.
    chat.llm.script(
        "what time",
        vec![Step::delay(
            5_000,
            Step::text("**Tea** time, with `milk` & <cake>."),
        )],
    );
    let since = std::time::Instant::now();
    let asked = chat.tg.user_says(&ANN, "what time is it?");
    let answer = chat.wait_sent_to(ANN.id, 3).remove(2);
    assert_eq!(
        (
            answer.method.as_str(),
            answer.parse_mode.as_deref(),
            text(&answer),
            answer.reply_to
        ),
        (
            "sendMessage",
            Some("HTML"),
            "Tea time, with milk & <cake>.",
            Some(asked.message_id)
        )
    );
    assert_eq!(
        answer.entities,
        vec![
            json!({"offset": 0, "length": 3, "type": "bold"}),
            json!({"offset": 15, "length": 4, "type": "code"})
        ]
    );
    let sends = chat.tg.calls_of("sendMessage");
    let call = sends.iter().rfind(|c| c.status == 200).unwrap();
    assert_eq!(
        call.json_arg("reply_parameters"),
        json!({"message_id": asked.message_id, "allow_sending_without_reply": true})
    );
    // Typing while the model took its 5 s: shown, and shown again later.
    let typing: Vec<_> = chat
        .tg
        .chat_actions()
        .into_iter()
        .filter(|a| a.chat_id == ANN.id && a.action == "typing")
        .filter(|a| a.at >= since && a.at <= call.at)
        .collect();
    assert!(typing.len() >= 2, "typing renewed: {typing:?}");
    let span = typing.last().unwrap().at - typing[0].at;
    assert!(span >= Duration::from_secs(3), "{span:?}");

    // Telegram delivers the same update again: taken once. An edit runs nothing.
    let runs = chat.llm.requests().len();
    assert_eq!(chat.tg.redeliver(asked.update_id.unwrap()), 200);
    let edit = chat
        .tg
        .user_edits(&ANN, ANN.id, asked.message_id, "what time is it now?");
    chat.tg.wait_delivered(WAIT, edit.update_id.unwrap());
    tokio::time::sleep(secs(3)).await;
    assert_eq!(chat.llm.requests().len(), runs);
    assert_eq!(chat.tg.sent_to(ANN.id).len(), 3);
    let status = chat.status().await;
    assert_eq!(
        status["accounts"][0]["extra"]["editedIgnored"], 1,
        "{status}"
    );

    // A slash command from the chat is the gateway's: no model call.
    let status_cmd = chat.tg.user_says(&ANN, "/status");
    let reply = chat.wait_sent_to(ANN.id, 4).remove(3);
    assert!(
        text(&reply).starts_with("Session Status\n• Session: ")
            && text(&reply).contains("\n• Messages: "),
        "{reply:?}"
    );
    assert_eq!(reply.reply_to, Some(status_cmd.message_id));
    assert_eq!(chat.llm.requests().len(), runs);
    assert_eq!(chat.refusals(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_are_answered_when_addressed_and_a_topic_keeps_its_thread() {
    let mut chat = start_with(
        Updates::Webhook,
        &[("channels.telegram.dmPolicy", json!("open"))],
    )
    .await;
    // The bot reads everything in its groups (privacy mode off): which
    // messages run is the channel's and the gateway's decision.
    chat.tg.set_privacy_mode(false);
    let group = chat.tg.group("gsv testers");
    let chatter = chat.tg.user_says_in(&ANN, group, "anyone around?");
    chat.tg.wait_delivered(WAIT, chatter.update_id.unwrap());
    tokio::time::sleep(secs(2)).await;
    assert_eq!(chat.llm.requests().len(), 0);
    assert_eq!(chat.tg.sent_to(group), vec![]);

    // A mention runs, answered in the group as a reply to it.
    chat.llm.script("what's up", vec![Step::text("All good.")]);
    let mention = chat
        .tg
        .user_says_in(&ANN, group, &format!("@{BOT_USERNAME} what's up?"));
    let answer = chat.wait_sent_to(group, 1).remove(0);
    assert_eq!(
        (text(&answer), answer.reply_to, answer.thread_id),
        ("All good.", Some(mention.message_id), None)
    );
    // So does a reply to the bot.
    chat.llm.script("and now", vec![Step::text("Still good.")]);
    let reply = chat
        .tg
        .says(&BOB)
        .chat(group)
        .reply_to(answer.message_id)
        .text("and now?")
        .send();
    let second = chat.wait_sent_to(group, 2).remove(1);
    assert_eq!(
        (text(&second), second.reply_to),
        ("Still good.", Some(reply.message_id))
    );
    assert_eq!(chat.asked("anyone around?"), 0);
    // A command addressed to the bot is the gateway's, answered in the group.
    let runs = chat.llm.requests().len();
    let command = chat
        .tg
        .user_says_in(&BOB, group, &format!("/status@{BOT_USERNAME}"));
    let status = chat.wait_sent_to(group, 3).remove(2);
    assert!(
        text(&status).starts_with("Session Status\n• Session: "),
        "{status:?}"
    );
    assert_eq!(status.reply_to, Some(command.message_id));
    assert_eq!(chat.llm.requests().len(), runs);
    // One addressed to another bot is not ours.
    let other = chat.tg.user_says_in(&BOB, group, "/status@other_bot");
    chat.tg.wait_delivered(WAIT, other.update_id.unwrap());
    tokio::time::sleep(secs(2)).await;
    assert_eq!(chat.tg.sent_to(group).len(), 3);
    assert_eq!(chat.llm.requests().len(), runs);

    // In a forum topic the answer goes to the topic.
    let forum = chat.tg.forum("gsv forum");
    let topic = chat.tg.topic(forum, "Ideas", &BOB);
    chat.llm
        .script("in the topic", vec![Step::text("Topic answer.")]);
    let said = chat
        .tg
        .says(&ANN)
        .chat(forum)
        .topic(topic)
        .text(&format!("@{BOT_USERNAME} in the topic"))
        .send();
    let in_topic = chat.wait_sent_to(forum, 1).remove(0);
    assert_eq!(
        (text(&in_topic), in_topic.thread_id, in_topic.reply_to),
        ("Topic answer.", Some(topic), Some(said.message_id))
    );
    // An unaddressed message in the topic runs nothing.
    let quiet = chat
        .tg
        .says(&BOB)
        .chat(forum)
        .topic(topic)
        .text("just saying")
        .send();
    chat.tg.wait_delivered(WAIT, quiet.update_id.unwrap());
    tokio::time::sleep(secs(2)).await;
    assert_eq!(chat.asked("just saying"), 0);
    assert_eq!(chat.tg.sent_to(forum).len(), 1);

    // Stopped, the account gives up its webhook: what people write waits
    // with Telegram, and nothing runs.
    let stopped = chat
        .owner
        .request(
            "channel.stop",
            json!({"channel": "telegram", "accountId": "default"}),
        )
        .await;
    assert!(stopped.ok, "{stopped:?}");
    assert_eq!(
        chat.tg
            .wait_for(WAIT, |t| t.webhook().is_none().then_some(())),
        Some(()),
        "deleteWebhook at stop: {:#?}",
        chat.tg.calls()
    );
    let later = chat
        .tg
        .user_says_in(&ANN, group, &format!("@{BOT_USERNAME} anyone there?"));
    tokio::time::sleep(secs(3)).await;
    assert_eq!(chat.asked("anyone there?"), 0);
    assert_eq!(chat.tg.pending_updates(), vec![later.update_id.unwrap()]);
    assert_eq!(chat.refusals(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_answers_go_in_pieces_once_each_and_telegrams_refusals_are_handled() {
    let chat = start_with(
        Updates::Webhook,
        &[("channels.telegram.dmPolicy", json!("open"))],
    )
    .await;

    // Posts that do not carry the webhook's secret are refused; nothing runs.
    let forged = chat.tg.forged_update(&ANN, "forged: delete everything");
    assert_eq!(chat.tg.post_forged(&forged, Some("not-the-secret")), 401);
    assert_eq!(chat.tg.post_forged(&forged, None), 401);

    // A long answer: pieces of at most 4 096 characters, each sent once,
    // the first the reply.
    let long = (0..60)
        .map(|i| format!("Paragraph {i}: {}", "lorem ipsum dolor sit amet ".repeat(6)))
        .collect::<Vec<_>>()
        .join("\n\n");
    assert!(long.chars().count() > 8192);
    chat.llm
        .script("long please", vec![Step::text(long.clone())]);
    let asked = chat.tg.user_says(&ANN, "long please");
    let expected: Vec<String> = split_message(&long, 4096)
        .iter()
        .map(|p| p.trim().to_string())
        .collect();
    assert_eq!(expected.len(), 3);
    let sent = chat.wait_sent_to(ANN.id, 3);
    let pieces: Vec<&str> = sent.iter().map(text).collect();
    assert_eq!(pieces, expected);
    let replies: Vec<Option<i64>> = sent.iter().map(|m| m.reply_to).collect();
    assert_eq!(replies, vec![Some(asked.message_id), None, None]);
    tokio::time::sleep(secs(2)).await;
    let ok_sends = chat
        .tg
        .calls_of("sendMessage")
        .iter()
        .filter(|c| c.status == 200)
        .count();
    assert_eq!(ok_sends, 3);
    assert_eq!(chat.asked("forged: delete everything"), 0);

    // Telegram counts characters (an emoji is one, though two UTF-16
    // units): 3 000 emoji are one piece for the gateway and one message.
    let emoji = "😀".repeat(3000);
    chat.llm
        .script("emoji please", vec![Step::text(emoji.clone())]);
    chat.tg.user_says(&ANN, "emoji please");
    let sent = chat.wait_sent_to(ANN.id, 4);
    assert_eq!(text(&sent[3]), emoji);

    // Flood control: the piece is tried again once its wait is over, and
    // shows once.
    chat.tg.fail_next("sendMessage", 1, 2);
    chat.llm
        .script("rate me", vec![Step::text("Slowly but surely.")]);
    chat.tg.user_says(&ANN, "rate me");
    let sent = chat.wait_sent_to(ANN.id, 5);
    assert_eq!(text(&sent[4]), "Slowly but surely.");
    let calls = chat.tg.calls_of("sendMessage");
    let tries: Vec<&Call> = calls
        .iter()
        .filter(|c| c.arg("text").as_deref() == Some("Slowly but surely."))
        .collect();
    assert_eq!(
        tries.iter().map(|c| c.status).collect::<Vec<_>>(),
        vec![429, 200]
    );
    let waited = tries[1].at - tries[0].at;
    assert!(waited >= Duration::from_secs(2), "{waited:?}");

    // Telegram refuses the HTML: the same piece goes as plain text, once.
    chat.tg.fail_next_with(
        "sendMessage",
        1,
        400,
        "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0",
    );
    chat.llm
        .script("format me", vec![Step::text("A **bold** claim.")]);
    chat.tg.user_says(&ANN, "format me");
    let sent = chat.wait_sent_to(ANN.id, 6);
    let plain = &sent[5];
    assert_eq!(
        (
            plain.parse_mode.as_deref(),
            text(plain),
            plain.entities.len()
        ),
        (None, "A **bold** claim.", 0),
        "the model's own text, unformatted"
    );
    let calls = chat.tg.calls_of("sendMessage");
    let last_two: Vec<(u16, Option<String>)> = calls[calls.len() - 2..]
        .iter()
        .map(|c| (c.status, c.arg("parse_mode")))
        .collect();
    assert_eq!(last_two, vec![(400, Some("HTML".to_string())), (200, None)]);
    assert_eq!(
        calls[calls.len() - 2].arg("text").as_deref(),
        Some("A <b>bold</b> claim.")
    );
    assert_eq!(
        tries_of(&calls, "A <b>bold</b> claim.").len(),
        1,
        "the HTML was tried once"
    );
    assert_eq!(chat.tg.sent_to(ANN.id).len(), 6);

    // She blocks the bot: the answer is refused for good, and said so.
    chat.tg.block_bot(&ANN);
    chat.llm
        .script("one more", vec![Step::text("Are you there?")]);
    chat.tg.user_says(&ANN, "one more");
    let mut chat = chat;
    let status = poll::until(WAIT, ms(200), async || {
        let status = chat.status().await;
        match status["undelivered"][0]["count"] == 1 {
            true => Ok(status),
            false => Err(status),
        }
    })
    .await;
    assert_eq!(
        status["undelivered"],
        json!([{"accountId": "default", "count": 1,
                "lastError": "Forbidden: bot was blocked by the user"}])
    );
    tokio::time::sleep(secs(3)).await;
    let calls = chat.tg.calls_of("sendMessage");
    assert_eq!(
        tries_of(&calls, "Are you there?")
            .iter()
            .map(|t| t.0)
            .collect::<Vec<_>>(),
        vec![403],
        "tried once: being blocked does not pass with time"
    );
    // Telegram refused only what the test made it refuse (and the typing
    // of a chat in a flood wait, or of one that blocked the bot).
    let refusals: Vec<String> = chat
        .refusals()
        .into_iter()
        .filter(|r| !r.starts_with("sendChatAction "))
        .collect();
    assert_eq!(
        refusals,
        vec![
            "sendMessage 429 Too Many Requests: retry after 2",
            "sendMessage 400 Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0",
            "sendMessage 403 Forbidden: bot was blocked by the user",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_photo_reaches_the_model_and_the_agent_sends_files_back() {
    let ann = format!("telegram:{}", ANN.id);
    let mut chat = start_with(
        Updates::Webhook,
        &[
            ("channels.telegram.allowFrom", json!([ANN.id.to_string()])),
            // Ann is the owner: her messages are the main session's.
            ("owner.identities", json!([ann])),
        ],
    )
    .await;
    let photo = jpeg(4000);
    chat.tg
        .says(&ANN)
        .photo(photo.clone())
        .text("what is in this photo?")
        .send();
    let sent = chat.wait_sent_to(ANN.id, 1);
    assert!(text(&sent[0]).starts_with("echo: "), "{sent:#?}");
    // The model got the caption and the photo (its largest size) as an
    // image part of the same message.
    let asked = chat.llm.requests();
    let last = user_parts(asked.last().unwrap()).pop().unwrap();
    let parts = last["content"].as_array().unwrap();
    assert_eq!(parts.len(), 2, "{last:#}");
    assert!(parts[0]["text"]
        .as_str()
        .unwrap()
        .contains("<<<channel-message>>>\nwhat is in this photo?\n<<<end-channel-message>>>"));
    let b64 = base64::engine::general_purpose::STANDARD.encode(&photo);
    assert_eq!(
        parts[1],
        json!({"type": "image_url", "image_url": {"url": format!("data:image/jpeg;base64,{b64}")}})
    );
    // The file came from Telegram by getFile and its download.
    assert!(chat
        .tg
        .calls()
        .iter()
        .any(|c| c.method.starts_with("file/photos/") && c.status == 200));

    // A voice note reaches the model as its transcript.
    chat.llm.set_transcript("Please buy milk on the way home.");
    let voice = [b"OggS\x00\x02".as_slice(), &[7u8; 3000]].concat();
    chat.tg.says(&ANN).voice(voice.clone(), 3).send();
    chat.wait_sent_to(ANN.id, 2);
    let transcribed = chat.llm.transcriptions();
    assert_eq!(transcribed.len(), 1, "{transcribed:?}");
    assert_eq!(
        (
            transcribed[0].content_type.as_deref(),
            &transcribed[0].bytes
        ),
        (Some("audio/ogg"), &voice)
    );
    assert!(chat.asked("[Voice message transcription: Please buy milk on the way home.]") >= 1);

    // A file over Telegram's 20 MB download limit: the model is told why
    // it cannot see it.
    let big = chat
        .tg
        .says(&ANN)
        .document(vec![0u8; 21 << 20], "big.pdf", "application/pdf")
        .text("the report")
        .send();
    chat.wait_sent_to(ANN.id, 3);
    let told = user_parts(chat.llm.requests().last().unwrap())
        .pop()
        .unwrap();
    assert_eq!(
        told["content"][1],
        json!({"type": "text", "text": "[Document attached but not kept: big.pdf (application/pdf, 21.0 MB): \
               it could not be downloaded: the file is 21.0 MB, and Telegram lets bots download files of \
               at most 20 MB (send it as a link, or smaller)]"})
    );
    // Its size said so: no download was tried.
    let file_id = big.message["document"]["file_id"].as_str().unwrap();
    assert!(!chat
        .tg
        .calls_of("getFile")
        .iter()
        .any(|c| c.arg("file_id").as_deref() == Some(file_id)));

    // The agent sends the photo and a workspace file back.
    let history = chat.history().await;
    let key = history
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "image")
        .and_then(|b| b["r2Key"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no image in {history:#?}"));
    let written = chat
        .owner
        .request(
            "workspace.write",
            json!({"path": "reports/notes.md", "content": "# Notes\nmilk, bread\n"}),
        )
        .await;
    assert!(written.ok, "{written:?}");
    chat.llm.script(
        "send them back",
        vec![
            Step::tool_call(
                "call_files",
                "gsv__Message",
                json!({"text": "Here you go", "attachments": [key, "reports/notes.md"]}),
            ),
            Step::text("Sent."),
        ],
    );
    chat.tg.user_says(&ANN, "send them back please");
    let sent = chat.wait_sent_to(ANN.id, 7);
    let sent = &sent[2..];
    let kinds: Vec<(&str, Option<&str>)> = sent[1..]
        .iter()
        .map(|m| (m.method.as_str(), m.text.as_deref()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("sendMessage", Some("Here you go")),
            ("sendPhoto", None),
            ("sendDocument", None),
            ("sendMessage", Some("Sent.")),
        ]
    );
    let image = sent[2].file.as_ref().unwrap();
    assert_eq!(
        (image.kind.as_str(), image.bytes.as_ref()),
        ("photo", &photo)
    );
    let doc = sent[3].file.as_ref().unwrap();
    assert_eq!(
        (
            doc.kind.as_str(),
            doc.filename.as_deref(),
            doc.bytes.as_ref().as_slice()
        ),
        (
            "document",
            Some("notes.md"),
            b"# Notes\nmilk, bread\n".as_slice()
        )
    );
    assert_eq!(
        chat.tool_result("call_files")["content"],
        json!(format!(
            "Sent to telegram:{} with 2 files as 3 messages.",
            ANN.id
        ))
    );
    assert_eq!(chat.refusals(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_public_url_the_account_long_polls() {
    let chat = start_with(
        Updates::LongPolling,
        &[("channels.telegram.dmPolicy", json!("open"))],
    )
    .await;
    // No webhook: it is deleted, then updates are asked for, held 1 s.
    let calls = chat.tg.calls();
    let methods: Vec<&str> = calls.iter().map(|c| c.method.as_str()).collect();
    let deleted = methods.iter().position(|m| *m == "deleteWebhook");
    let polled = methods.iter().position(|m| *m == "getUpdates");
    assert!(
        deleted.is_some() && deleted < polled,
        "deleteWebhook before getUpdates: {methods:?}"
    );
    assert_eq!(chat.tg.webhook(), None);
    let poll = &calls[polled.unwrap()];
    assert_eq!(poll.arg("timeout").as_deref(), Some("1"), "{poll:?}");

    // The account keeps polling across a restart of workerd (its object
    // is gone; its alarm brings it back).
    let mut chat = chat;
    chat.gw.restart();
    chat.llm.script("poll me", vec![Step::text("Polled.")]);
    let first = chat.tg.user_says(&ANN, "poll me");
    let answer = chat.wait_sent_to(ANN.id, 1).remove(0);
    assert_eq!(
        (text(&answer), answer.reply_to),
        ("Polled.", Some(first.message_id))
    );
    chat.llm.script("and again", vec![Step::text("Again.")]);
    chat.tg.user_says(&ANN, "and again");
    assert_eq!(text(&chat.wait_sent_to(ANN.id, 2)[1]), "Again.");
    // Each update was taken once (the offset confirms it).
    poll::until(WAIT, ms(200), async || {
        let pending = chat.tg.pending_updates();
        pending
            .is_empty()
            .then_some(())
            .ok_or(format!("{pending:?}"))
    })
    .await;
    tokio::time::sleep(secs(3)).await;
    assert_eq!(chat.asked("poll me"), 2, "asked once, then in the history");
    assert_eq!(chat.tg.sent_to(ANN.id).len(), 2);

    // Started again with a public URL, the account takes a webhook and
    // stops polling (a poll under way when the webhook is set is ended by
    // Telegram with 409; none is tried after).
    let mut owner = Client::connect(&chat.gw.url(), Some(TOKEN)).await;
    let url = chat.gw.exposed_url(WORKER);
    start_telegram_bot(&mut owner, &chat.tg, Some(&url)).await;
    let hooked_at = std::time::Instant::now();
    chat.llm.script("hooked", vec![Step::text("By webhook.")]);
    let hooked = chat.tg.user_says(&ANN, "hooked now?");
    chat.tg.wait_delivered(WAIT, hooked.update_id.unwrap());
    assert_eq!(text(&chat.wait_sent_to(ANN.id, 3)[2]), "By webhook.");
    tokio::time::sleep(secs(5)).await;
    let late: Vec<String> = chat
        .tg
        .calls_of("getUpdates")
        .iter()
        .filter(|c| c.at > hooked_at)
        .map(|c| format!("{} {}", c.status, c.response))
        .collect();
    assert_eq!(
        late,
        Vec::<String>::new(),
        "polled after the webhook was set"
    );
    let refusals: Vec<String> = chat
        .refusals()
        .into_iter()
        .filter(|r| r != "getUpdates 409 Conflict: terminated by setWebhook request")
        .collect();
    assert_eq!(refusals, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_approves_a_call_with_a_button() {
    let ann = format!("telegram:{}", ANN.id);
    let chat = start_with(
        Updates::Webhook,
        &[
            (
                "channels.telegram.allowFrom",
                json!([ANN.id.to_string(), BOB.id.to_string()]),
            ),
            ("owner.identities", json!([ann])),
            ("tools.policy.approved.ask", json!(["my_stats"])),
        ],
    )
    .await;
    // The owner writes from Telegram once: approval requests go to that chat.
    chat.llm.script("morning", vec![Step::text("Morning!")]);
    chat.tg.user_says(&ANN, "morning");
    assert_eq!(text(&chat.wait_sent_to(ANN.id, 1)[0]), "Morning!");

    // Bob's call of an `ask` tool waits for her; the request has buttons.
    chat.llm.script(
        "how am I doing",
        vec![
            Step::tool_call("s1", "my_stats", json!({})),
            Step::text("You're doing fine."),
        ],
    );
    chat.tg.user_says(&BOB, "how am I doing?");
    let request = chat.wait_sent_to(ANN.id, 2).remove(1);
    let code = text(&request)
        .split("\"approve ")
        .nth(1)
        .and_then(|t| t.get(..8))
        .unwrap_or_else(|| panic!("no code in {request:?}"))
        .to_string();
    let buttons: Vec<(String, String)> = request.reply_markup.as_ref().unwrap()["inline_keyboard"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|row| row.as_array().cloned().unwrap())
        .map(|b| {
            (
                b["text"].as_str().unwrap().to_string(),
                b["callback_data"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        buttons,
        vec![
            ("Approve".to_string(), format!("approve {code}")),
            (
                "Approve always".to_string(),
                format!("approve always {code}")
            ),
            ("Deny".to_string(), format!("deny {code}")),
        ]
    );
    // She presses Approve: the press is answered, the call runs, Bob hears.
    let (update, query) =
        chat.tg
            .press_button(&ANN, ANN.id, request.message_id, &format!("approve {code}"));
    chat.tg.wait_delivered(WAIT, update.unwrap());
    let decided = chat.wait_sent_to(ANN.id, 3).remove(2);
    assert_eq!(
        text(&decided),
        format!(
            "my_stats approved for telegram:{} (approved) ({code}).",
            BOB.id
        )
    );
    let answers = chat.tg.callback_answers();
    assert_eq!(
        answers
            .iter()
            .map(|a| a.callback_query_id.as_str())
            .collect::<Vec<_>>(),
        vec![query.as_str()]
    );
    assert_eq!(text(&chat.wait_sent_to(BOB.id, 1)[0]), "You're doing fine.");
    let result = chat.tool_result("s1");
    assert!(
        !result["content"].as_str().unwrap().starts_with("Error"),
        "{result}"
    );
    assert_eq!(chat.refusals(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_sent_while_the_worker_is_down_arrive_once_it_is_back() {
    let mut chat = start_with(
        Updates::Webhook,
        &[("channels.telegram.dmPolicy", json!("open"))],
    )
    .await;
    chat.llm.script("before", vec![Step::text("Before.")]);
    chat.tg.user_says(&ANN, "before the restart");
    assert_eq!(text(&chat.wait_sent_to(ANN.id, 1)[0]), "Before.");

    // workerd goes away and comes back on the same state: what Telegram
    // could not deliver meanwhile it sends again, with the same secret,
    // until the Worker takes it; it runs once.
    chat.llm.script("meanwhile", vec![Step::text("Got it.")]);
    let port = chat.gw.exposed_url(WORKER).replace("http://", "");
    let Chat { tg, gw, .. } = &mut chat;
    let meanwhile = std::thread::scope(|s| {
        let said = s.spawn(|| {
            poll::until_blocking(WAIT, ms(50), || match std::net::TcpStream::connect(&port) {
                Err(_) => Ok(()),
                Ok(_) => Err("still up"),
            });
            tg.user_says(&BOB, "meanwhile, hello")
        });
        gw.restart_after(secs(3));
        said.join().unwrap()
    });
    let update = meanwhile.update_id.unwrap();
    chat.tg.wait_delivered(WAIT, update);
    let tries: Vec<u16> = chat
        .tg
        .deliveries()
        .iter()
        .filter(|d| d.update_id == Some(update))
        .map(|d| d.status)
        .collect();
    assert!(
        tries.len() >= 2 && tries[0] == 0 && tries.last() == Some(&200),
        "refused while down, then taken: {tries:?}"
    );
    let answer = chat.wait_sent_to(BOB.id, 1).remove(0);
    assert_eq!(
        (text(&answer), answer.reply_to),
        ("Got it.", Some(meanwhile.message_id))
    );
    tokio::time::sleep(secs(3)).await;
    assert_eq!(chat.asked("meanwhile, hello"), 1);
    assert_eq!(chat.tg.sent_to(BOB.id).len(), 1);
    assert_eq!(
        chat.tg.webhook().unwrap().url,
        format!("{}/webhook/default", chat.gw.exposed_url(WORKER))
    );
    assert_eq!(chat.refusals(), Vec::<String>::new());
}
