//! Chatting with the agent on WhatsApp, end to end: the real gateway and
//! the real WhatsApp channel Worker in one workerd (the channel's webhook
//! on a port of its own), the fake WhatsApp Cloud API (Graph and signed
//! webhooks) and the fake LLM on loopback. What a person sees in WhatsApp
//! is what the fake recorded as sent.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::channel_rig::{start_gateway_with_whatsapp, start_number};
use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::fake_whatsapp::{
    payloads, sign, FakeWhatsApp, SentMessage, ACCESS_TOKEN, PHONE_NUMBER_ID, VERIFIED_NAME,
    VERIFY_TOKEN,
};
use gsv_e2e::harness::{run_gsv, Workerd};
use gsv_e2e::poll::{self, ms};
use gsv_e2e::ws::Client;
use gsv_gateway::channels::chunk::split_message;
use serde_json::{json, Value};
use std::time::Duration;

const TOKEN: &str = "test-token";
/// Ann's WhatsApp id, and the same as the gateway names her.
const ANN: &str = "16505551234";
const ANN_E164: &str = "+16505551234";
const WAIT: Duration = Duration::from_secs(30);
/// What the gateway and the agent are told when Meta refuses a send
/// because Ann has not written in 24 hours.
const WINDOW_CLOSED: &str = "the 24-hour customer-service window is closed: the person has not \
    written in the last 24 hours, and WhatsApp delivers free-form messages only inside that window \
    (they must write again first) [131047 Re-engagement message: Message failed to send because \
    more than 24 hours have passed since the customer last replied to this number.]";

struct Chat {
    wa: FakeWhatsApp,
    llm: FakeLlm,
    gw: Workerd,
    owner: Client,
}

async fn start() -> Chat {
    let wa = FakeWhatsApp::start();
    let llm = FakeLlm::start().await;
    let gw = start_gateway_with_whatsapp(&wa, TOKEN);
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    start_number(&mut owner).await;
    Chat { wa, llm, gw, owner }
}

fn text(m: &SentMessage) -> &str {
    m.body["text"]["body"].as_str().unwrap_or_default()
}

impl Chat {
    /// Waits until `n` messages were sent (accepted by Meta).
    fn wait_sent(&self, n: usize) -> Vec<SentMessage> {
        self.wa
            .wait_for(WAIT, |w| {
                let sent = w.sent();
                (sent.len() >= n).then_some(sent)
            })
            .unwrap_or_else(|| panic!("{n} messages sent: {:#?}", self.wa.graph_log()))
    }

    /// The model requests whose text holds `needle`.
    fn asked(&self, needle: &str) -> usize {
        self.llm
            .requests()
            .iter()
            .filter(|r| r.body.to_string().contains(needle))
            .count()
    }

    async fn status(&mut self) -> Value {
        let res = self
            .owner
            .request("channel.status", json!({"channel": "whatsapp"}))
            .await;
        assert!(res.ok, "{res:?}");
        res.payload.unwrap()
    }

    /// Polls `channel.status` until `check` holds.
    async fn wait_status(&mut self, check: impl Fn(&Value) -> bool) -> Value {
        poll::try_until(WAIT, ms(200), async || {
            let status = self.status().await;
            if check(&status) {
                Ok(status)
            } else {
                Err(status)
            }
        })
        .await
        .unwrap_or_else(|last| last)
    }

    /// The `channels.list` entry of whatsapp/default once `check` holds.
    async fn wait_entry(&mut self, check: impl Fn(&Value) -> bool) -> Value {
        poll::try_until(WAIT, ms(200), async || {
            let res = self.owner.request("channels.list", json!({})).await;
            let entry = res.payload.unwrap()["channels"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["channel"] == "whatsapp")
                .cloned()
                .unwrap_or_default();
            if check(&entry) {
                Ok(entry)
            } else {
                Err(entry)
            }
        })
        .await
        .unwrap_or_else(|last| last)
    }

    /// What the model was told of tool call `id` (the next request's tool message).
    fn tool_result(&self, id: &str) -> Value {
        self.llm
            .requests()
            .iter()
            .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
            .unwrap_or_else(|| panic!("no result of tool call {id}"))
    }
}

/// The status of the default account, as the channel reports it.
fn default_account() -> Value {
    json!({"accountId": "default", "connected": true, "authenticated": true, "mode": "webhook",
           "extra": {"phoneNumberId": PHONE_NUMBER_ID, "displayPhoneNumber": "+1 555-078-3881",
                     "verifiedName": VERIFIED_NAME, "hasToken": true}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_pairs_then_chats_with_typing_and_receipts_and_redeliveries_run_once() {
    let mut chat = start().await;
    // `channel.status` asks the channel through its binding; the token stays there.
    let status = chat.status().await;
    assert_eq!(
        status,
        json!({"channel": "whatsapp", "accounts": [default_account()]})
    );
    assert!(!status.to_string().contains(ACCESS_TOKEN));

    // An unknown number (the default policy is pairing) gets a code and runs nothing.
    let hello = chat.wa.user_says(ANN, "Ann", "hello?");
    assert_eq!(hello.status, 200);
    let code_msg = chat.wait_sent(1).remove(0);
    let code = text(&code_msg)
        .split("pairing code is ")
        .nth(1)
        .and_then(|t| t.get(..8))
        .unwrap_or_else(|| panic!("no code in {:?}", text(&code_msg)))
        .to_string();
    assert_eq!(code_msg.to, ANN);
    assert_eq!(chat.llm.requests().len(), 0);
    let approve = run_gsv(&chat.gw.url(), TOKEN, &["pair", "approve", &code]);
    assert_eq!(
        String::from_utf8_lossy(&approve.stdout),
        "Approved Ann on whatsapp (they were told).\n",
        "{}",
        String::from_utf8_lossy(&approve.stderr)
    );
    let told = chat.wait_sent(2).remove(1);
    assert_eq!(
        text(&told),
        "You're approved: I'll answer your messages from now on."
    );
    // allowFrom holds her number as E.164.
    let allow = chat
        .owner
        .request("config.get", json!({"path": "channels.whatsapp.allowFrom"}))
        .await;
    assert_eq!(allow.payload.unwrap()["value"], json!([ANN_E164]));

    // Now she is answered, as a reply to her message; while the agent
    // works, her message is marked read with the typing indicator.
    chat.llm.script("what time", vec![Step::text("Teatime.")]);
    let asked = chat.wa.user_says(ANN, "Ann", "what time is it?");
    let answer = chat.wait_sent(3).remove(2);
    // The send names the piece by its ledger key, which Meta echoes in
    // the message's statuses.
    let key = answer.body["biz_opaque_callback_data"].clone();
    assert!(
        key.as_str().is_some_and(|k| !k.is_empty() && k.len() <= 25),
        "{key}"
    );
    assert_eq!(
        answer.body,
        json!({"messaging_product": "whatsapp", "recipient_type": "individual", "to": ANN,
               "type": "text", "text": {"body": "Teatime.", "preview_url": false},
               "context": {"message_id": asked.id}, "biz_opaque_callback_data": key})
    );
    let read_marks: Vec<Value> = chat
        .wa
        .graph_log()
        .into_iter()
        .filter(|r| r.body["status"] == "read")
        .map(|r| {
            assert_eq!((r.status, &r.response), (200, &json!({"success": true})));
            r.body
        })
        .collect();
    assert_eq!(
        read_marks.first(),
        Some(&json!({"messaging_product": "whatsapp", "status": "read",
                     "message_id": asked.id, "typing_indicator": {"type": "text"}}))
    );

    // Meta delivers the same webhook again: it is taken once.
    assert_eq!(chat.wa.redeliver_last(), 200);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(chat.asked("what time is it?"), 1);
    assert_eq!(chat.wa.sent().len(), 3);

    // Receipts: each piece was delivered (the fake's phone is online), and
    // Ann reads the answer; the gateway's ledger records both.
    assert_eq!(chat.wa.user_reads(&answer.id), 200);
    let entry = chat
        .wait_entry(|e| e["read"] == 1 && e["delivered"] == 3)
        .await;
    assert_eq!(
        entry,
        json!({"channel": "whatsapp", "accountId": "default", "transport": "binding",
               "connectedAt": entry["connectedAt"], "lastMessageAt": entry["lastMessageAt"],
               "status": entry["status"], "failedDeliveries": 0, "delivered": 3, "read": 1})
    );
    assert!(entry["connectedAt"].is_i64() && entry["lastMessageAt"].is_i64());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_webhook_takes_only_meta_and_long_answers_arrive_in_4096_character_pieces() {
    let mut chat = start().await;
    chat.owner
        .config_set("channels.whatsapp.dmPolicy", json!("open"))
        .await;

    // The subscription handshake: the challenge back for the verify token only.
    assert_eq!(
        chat.wa
            .verify_webhook("subscribe", "not-the-token", "1158201444"),
        (403, "Forbidden".to_string())
    );
    assert_eq!(
        chat.wa
            .verify_webhook("subscribe", VERIFY_TOKEN, "1158201444"),
        (200, "1158201444".to_string())
    );

    // A delivery signed with another secret, or not signed: 401, nothing runs.
    let forged = payloads::messages(
        ANN,
        "Ann",
        vec![payloads::message(
            ANN,
            "wamid.FORGED1",
            payloads::text("forged: delete everything"),
        )],
    )
    .to_string();
    let signature = format!("sha256={}", sign("not-the-app-secret", forged.as_bytes()));
    assert_eq!(
        chat.wa.deliver_with_signature(&forged, Some(&signature)),
        401
    );
    assert_eq!(chat.wa.deliver_with_signature(&forged, None), 401);

    // A long answer is split at 4 096 characters, the first piece the reply.
    let long = (0..60)
        .map(|i| format!("Paragraph {i}: {}", "lorem ipsum dolor sit amet ".repeat(6)))
        .collect::<Vec<_>>()
        .join("\n\n");
    assert!(long.chars().count() > 8192);
    chat.llm
        .script("long please", vec![Step::text(long.clone())]);
    let asked = chat.wa.user_says(ANN, "Ann", "long please");
    let expected = split_message(&long, 4096);
    assert_eq!(expected.len(), 3);
    let sent = chat.wait_sent(3);
    let pieces: Vec<&str> = sent.iter().map(text).collect();
    assert_eq!(pieces, expected);
    let replies: Vec<&Value> = sent.iter().map(|m| &m.body["context"]).collect();
    assert_eq!(
        replies,
        vec![&json!({"message_id": asked.id}), &Value::Null, &Value::Null]
    );
    assert_eq!(chat.asked("forged: delete everything"), 0);

    // A second account cannot take the same number; a refused token says so.
    let taken = chat
        .owner
        .request(
            "channel.start",
            json!({"channel": "whatsapp", "accountId": "shop",
                   "config": {"phoneNumberId": PHONE_NUMBER_ID, "accessToken": ACCESS_TOKEN}}),
        )
        .await;
    assert_eq!(
        taken.error.unwrap().message,
        format!("The whatsapp channel refused: phone number id {PHONE_NUMBER_ID} already belongs to account default: log that one out first")
    );
    let refused = chat
        .owner
        .request(
            "channel.start",
            json!({"channel": "whatsapp", "accountId": "other",
                   "config": {"phoneNumberId": "200000000000001", "accessToken": "EAAGwrong"}}),
        )
        .await;
    assert_eq!(
        refused.error.unwrap().message,
        "The whatsapp channel refused: WhatsApp refused the access token: give the account a new one \
         [190 Invalid OAuth access token - Cannot parse access token]"
    );

    // A stopped account takes no messages (Meta still gets its 200).
    let stopped = chat
        .owner
        .request(
            "channel.stop",
            json!({"channel": "whatsapp", "accountId": "default"}),
        )
        .await;
    assert!(stopped.ok, "{stopped:?}");
    assert_eq!(chat.wa.user_says(ANN, "Ann", "anyone there?").status, 200);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(chat.asked("anyone there?"), 0);
    let status = chat.status().await;
    assert_eq!(
        status["accounts"][0],
        json!({"accountId": "default", "connected": false, "authenticated": true, "mode": "webhook",
               "lastActivity": status["accounts"][0]["lastActivity"], "error": "not started",
               "extra": default_account()["extra"]})
    );
    // Asking the channel how its accounts are brings neither the stopped
    // account nor the refused one back into the registry.
    let list = chat.owner.request("channels.list", json!({})).await;
    assert_eq!(list.payload.unwrap()["channels"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_outside_the_24_hour_window_is_reported_failed_with_the_reason() {
    let mut chat = start().await;
    chat.owner
        .config_set("channels.whatsapp.dmPolicy", json!("open"))
        .await;
    // The answer's receipts come before Meta's answer to the send: the
    // ledger keeps them until the send names the message.
    chat.wa.set_statuses_before_answer(true);
    chat.llm.script("hi there", vec![Step::text("Hello Ann.")]);
    chat.wa.user_says(ANN, "Ann", "hi there");
    assert_eq!(text(&chat.wait_sent(1)[0]), "Hello Ann.");
    let entry = chat.wait_entry(|e| e["delivered"] == 1).await;
    assert_eq!(entry["delivered"], 1, "{entry}");
    chat.wa.set_statuses_before_answer(false);

    // A day passes. The agent writes to her on its own: Meta refuses the
    // send, and the agent is told why.
    chat.wa.close_window(ANN);
    let message = json!({"channel": "whatsapp", "to": ANN_E164, "text": "Your build is done."});
    chat.llm.script(
        "tell Ann",
        vec![
            Step::tool_call("c1", "gsv__Message", message.clone()),
            Step::text("She has not written in a day."),
        ],
    );
    let run = chat
        .owner
        .chat_send("main", "tell Ann the build is done")
        .await;
    chat.owner.run_events(&run).await;
    assert_eq!(
        chat.tool_result("c1"),
        json!({"role": "tool", "tool_call_id": "c1",
               "content": format!("Error: Not delivered to whatsapp:{ANN_E164}: {WINDOW_CLOSED}")})
    );
    assert_eq!(chat.wa.sent().len(), 1);
    let refused: Vec<u16> = chat
        .wa
        .graph_log()
        .iter()
        .filter(|r| r.body["text"]["body"] == "Your build is done.")
        .map(|r| r.status)
        .collect();
    assert_eq!(
        refused,
        vec![400],
        "tried once: the reason does not pass with time"
    );
    // The channel's status counts it, with the reason.
    let status = chat.status().await;
    assert_eq!(
        status["undelivered"],
        json!([{"accountId": "default", "count": 1, "lastError": WINDOW_CLOSED}])
    );

    // Meta may also take the send and report it failed by webhook: the
    // ledger then marks the piece failed with the same reason.
    chat.wa.set_window_failures_async(true);
    chat.llm.script(
        "try Ann again",
        vec![
            Step::tool_call("c2", "gsv__Message", message),
            Step::text("Sent."),
        ],
    );
    let run = chat.owner.chat_send("main", "try Ann again").await;
    chat.owner.run_events(&run).await;
    assert_eq!(
        chat.tool_result("c2"),
        json!({"role": "tool", "tool_call_id": "c2", "content": format!("Sent to whatsapp:{ANN_E164}.")})
    );
    let status = chat
        .wait_status(|s| s["undelivered"][0]["count"] == 2)
        .await;
    assert_eq!(
        status["undelivered"],
        json!([{"accountId": "default", "count": 2, "lastError": WINDOW_CLOSED}])
    );
    // `channels.list` too; only the first answer reached her.
    let entry = chat.wait_entry(|e| e["failedDeliveries"] == 2).await;
    assert_eq!(
        entry,
        json!({"channel": "whatsapp", "accountId": "default", "transport": "binding",
               "connectedAt": entry["connectedAt"], "lastMessageAt": entry["lastMessageAt"],
               "status": entry["status"], "failedDeliveries": 2, "lastDeliveryError": WINDOW_CLOSED,
               "delivered": 1})
    );
}
