//! The linked device over time: after workerd went down (the object
//! evicted, its socket gone), linking by a pairing code instead of a QR
//! code, and what the agent's answers look like on the phone (typing,
//! voice notes, answers longer than one message).

use crate::chat::{open_chat, start, Chat, AGENT, ANN, TOKEN, WAIT};
use gsv_e2e::fake_llm::Step;
use gsv_e2e::poll::{self, ms};
use gsv_e2e::ws::Client;
use gsv_gateway::channels::chunk::split_message;
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_workerd_was_down_the_number_reconnects_by_itself_and_nothing_is_lost_or_doubled() {
    let mut chat = open_chat().await;
    chat.llm.script("one", vec![Step::text("First.")]);
    chat.wa.send_text(ANN, AGENT, "one");
    chat.wait_got(ANN, 1);

    // workerd goes down (every object evicted, the socket to WhatsApp
    // gone); Ann writes meanwhile and WhatsApp keeps it for the device.
    chat.llm
        .script("while you were away", vec![Step::text("Back now.")]);
    let (wa, gw) = (&chat.wa, &mut chat.gw);
    let meanwhile = std::thread::scope(|s| {
        let down = s.spawn(|| gw.restart_after(Duration::from_secs(3)));
        wa.wait_disconnected(AGENT);
        let id = wa.send_text(ANN, AGENT, "while you were away");
        down.join().unwrap();
        id
    });
    // Nothing asks the channel anything: the account's keep-alive alarm
    // (30 s) re-opens the socket, by IK with the keys kept in its SQLite,
    // and what waited is answered, once.
    let got = chat.wait_got_within(ANN, 2, Duration::from_secs(60));
    assert_eq!(
        (got[1].text.as_deref(), got[1].quoted_id.as_deref()),
        (Some("Back now."), Some(meanwhile.as_str()))
    );
    assert_eq!(chat.handshakes(), vec!["XX", "IK"]);

    // Down again, and this time the agent speaks first: the heartbeat's
    // send reaches an account object that has no client yet, which
    // connects for it instead of failing the send.
    chat.gw.restart();
    chat.owner = Client::connect(&chat.gw.url(), Some(TOKEN)).await;
    chat.heartbeat_a_day_later("Ask Ann how the trip went.", "How was the trip?")
        .await;
    let got = chat.wait_got(ANN, 3);
    assert_eq!(
        (got[2].text.as_deref(), got[2].quoted_id.as_deref()),
        (Some("How was the trip?"), None)
    );

    // Nothing came twice, to the phone or to the model.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        (
            chat.wa.received(ANN).len(),
            chat.asked_about("while you were away")
        ),
        (3, 1),
        "{:#?}",
        chat.wa.received(ANN)
    );
    let status = chat.status_when(|s| s["connected"] == true).await;
    assert_eq!(
        (
            status["extra"]["state"].clone(),
            status["extra"]["connects"].clone()
        ),
        (json!("linked"), json!(3)),
        "{status}"
    );
}

/// The `r2Key` of the first attachment of `kind` in a session's history.
async fn kept_file(chat: &mut Chat, kind: &str) -> String {
    let sessions = chat
        .owner
        .request("sessions.list", json!({}))
        .await
        .payload
        .unwrap();
    let key = sessions["sessions"][0]["sessionKey"]
        .as_str()
        .unwrap()
        .to_string();
    let history = chat
        .owner
        .request("session.preview", json!({"sessionKey": key}))
        .await
        .payload
        .unwrap();
    history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "attachment" && b["kind"] == kind)
        .and_then(|b| b["r2Key"].as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("no {kind} in {history:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pairing_code_links_the_number_and_the_phone_sees_typing_voice_notes_and_long_answers() {
    let mut chat = start().await;
    chat.owner
        .config_set("channels.whatsapp-web.dmPolicy", json!("open"))
        .await;
    // Ann is the owner here: the agent may send her files.
    chat.owner
        .config_set("owner.identities", json!([format!("whatsapp-web:+{ANN}")]))
        .await;

    // Linked by a code typed on the phone instead of a QR code.
    let login = chat
        .login_with(json!({"channel": "whatsapp-web", "phoneNumber": "+1 555 000 1111"}))
        .await;
    let code = login["pairCode"]
        .as_str()
        .unwrap_or_else(|| panic!("{login}"))
        .to_string();
    assert_eq!(
        (
            login["ok"].clone(),
            login.get("qr"),
            code.replace('-', "").len()
        ),
        (json!(true), None, 8),
        "{login}"
    );
    let waiting = chat.status().await;
    assert_eq!(waiting["extra"]["state"], "waiting for scan", "{waiting}");
    chat.wa.link_with_code(AGENT, &code).unwrap();
    chat.wa.wait_connected(AGENT);
    let linked = chat.status_when(|s| s["connected"] == true).await;
    assert_eq!(
        (
            linked["extra"]["state"].clone(),
            linked["extra"]["phone"].clone()
        ),
        (json!("linked"), json!(format!("+{AGENT}")))
    );

    // While the model thinks, her phone shows "typing…"; it stops with
    // the answer.
    chat.llm.script(
        "take your time",
        vec![Step::delay(2_000, Step::text("Thought it over."))],
    );
    chat.wa.send_text(ANN, AGENT, "take your time");
    chat.wa.wait_chatstate(ANN, "composing");
    assert_eq!(
        chat.wait_got(ANN, 1)[0].text.as_deref(),
        Some("Thought it over.")
    );
    let states = poll::until_blocking(WAIT, ms(50), || {
        let mut states: Vec<String> = chat
            .wa
            .chatstates(ANN)
            .into_iter()
            .map(|c| c.state)
            .collect();
        states.dedup();
        match states.last().map(String::as_str) {
            Some("paused") => Ok(states),
            _ => Err(format!("{states:?}")),
        }
    });
    assert_eq!(states, vec!["composing", "paused"]);

    // Her voice note, sent back by the agent, plays as a voice note.
    chat.llm.set_transcript("Remember this tune.");
    let voice = [b"OggS\x00\x02".as_slice(), &[5u8; 4000]].concat();
    chat.wa.send_voice(ANN, AGENT, &voice, 2);
    chat.wait_got(ANN, 2);
    let key = kept_file(&mut chat, "audio").await;
    chat.llm.script(
        "play it back",
        vec![
            Step::tool_call(
                "call_voice",
                "gsv__Message",
                json!({"text": "Your tune:", "attachments": [key]}),
            ),
            Step::text("There it is."),
        ],
    );
    chat.wa.send_text(ANN, AGENT, "play it back");
    let got = chat.wait_got(ANN, 5);
    let media = got[3].media.clone().unwrap_or_else(|| panic!("{got:#?}"));
    assert_eq!(
        (
            got[2].text.as_deref(),
            media.kind.as_str(),
            media.ptt,
            media.bytes == voice,
            got[4].text.as_deref()
        ),
        (
            Some("Your tune:"),
            "audio",
            true,
            true,
            Some("There it is.")
        ),
        "{media:?} {:?}",
        got[3].media_error
    );

    // An answer longer than one WhatsApp message (65 536 characters) comes
    // in two, split between paragraphs, nothing lost.
    let paragraph = "All work and no play makes a long answer. ".repeat(25);
    let long = vec![paragraph.trim_end(); 70].join("\n\n");
    assert!(long.chars().count() > 65_536);
    chat.llm
        .script("tell me everything", vec![Step::text(&long)]);
    let asked = chat.wa.send_text(ANN, AGENT, "tell me everything");
    let got = chat.wait_got(ANN, 7);
    let pieces: Vec<&str> = got[5..].iter().filter_map(|m| m.text.as_deref()).collect();
    assert_eq!(pieces, split_message(&long, 65_536));
    assert_eq!((pieces.len(), pieces.join("\n\n")), (2, long));
    assert_eq!(
        (got[5].quoted_id.as_deref(), got[6].quoted_id.as_deref()),
        (Some(asked.as_str()), None)
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(chat.wa.received(ANN).len(), 7);
}
