//! Linking by QR code (the gateway's login, the CLI, `gsv setup`), the
//! deployable build's trust, pairing a stranger, media both ways, a
//! heartbeat a day later, a dropped socket, an unlink from the phone,
//! groups.

use crate::chat::{open_chat, start, AGENT, ANN, TOKEN, WAIT};
use gsv_e2e::channel_rig::start_gateway_with_whatsapp_web;
use gsv_e2e::fake_llm::Step;
use gsv_e2e::fake_whatsapp_web::FakeWhatsAppWeb;
use gsv_e2e::fixtures::jpeg;
use gsv_e2e::harness::{gsv_bin, run_gsv};
use gsv_e2e::poll::{self, ms};
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scanned_qr_code_links_the_number_and_a_stranger_pairs_then_is_answered_as_a_reply() {
    let mut chat = start().await;
    // Not linked yet: the login offers a QR code, as text and as an image.
    let login = chat.login().await;
    assert_eq!(login["ok"], true, "{login}");
    let qr = login["qr"].as_str().unwrap().to_string();
    assert!(qr.split(',').count() >= 4, "{qr}");
    assert!(
        login["qrDataUrl"]
            .as_str()
            .unwrap()
            .starts_with("data:image/svg+xml;base64,"),
        "{login}"
    );
    let waiting = chat.status().await;
    assert_eq!(
        (
            waiting["connected"].clone(),
            waiting["extra"]["state"].clone()
        ),
        (json!(false), json!("waiting for scan"))
    );
    // The phone scans it: linked as the agent's number.
    chat.wa.scan_qr(&qr, AGENT).unwrap();
    chat.wa.wait_connected(AGENT);
    // The channel tells the gateway on its own: `channels.list` shows the
    // linked account before anyone asks the channel.
    let listed = poll::try_until(WAIT, ms(200), async || {
        let list = chat.owner.request("channels.list", json!({})).await;
        let entry = list.payload.unwrap_or_default()["channels"]
            .as_array()
            .and_then(|c| c.iter().find(|e| e["channel"] == "whatsapp-web").cloned());
        match entry {
            Some(e) if e["status"]["connected"] == true => Ok(e),
            other => Err(other),
        }
    })
    .await
    .unwrap_or_else(|last| panic!("channels.list: {last:?}\n{}", chat.gw.log()));
    assert_eq!(
        (
            listed["accountId"].clone(),
            listed["transport"].clone(),
            listed["status"]["extra"]["state"].clone()
        ),
        (json!("default"), json!("binding"), json!("linked"))
    );
    let status = chat.status_when(|s| s["connected"] == true).await;
    assert_eq!(
        status,
        json!({"accountId": "default", "connected": true, "authenticated": true,
               "mode": "linked-device",
               "extra": {"state": "linked", "phone": format!("+{AGENT}"), "qrOnOffer": false,
                         "connects": 1}}),
        "{}",
        chat.gw.log()
    );
    let again = chat.login().await;
    assert_eq!(
        (again["linked"].clone(), again["message"].clone()),
        (json!(true), json!(format!("linked as +{AGENT}")))
    );

    // A stranger writes: she gets a pairing code, nothing runs.
    chat.wa.send_text(ANN, AGENT, "hello");
    let code_msg = chat.wait_got(ANN, 1).remove(0);
    let text = code_msg.text.unwrap_or_default();
    let code = text
        .split("pairing code is ")
        .nth(1)
        .and_then(|t| t.get(..8))
        .unwrap_or_else(|| panic!("no code in {text}"))
        .to_string();
    assert_eq!(chat.llm.requests().len(), 0);
    let approve = run_gsv(&chat.gw.url(), TOKEN, &["pair", "approve", &code]);
    assert_eq!(
        String::from_utf8_lossy(&approve.stdout),
        "Approved Ann Lee on whatsapp-web (they were told).\n",
        "{}",
        String::from_utf8_lossy(&approve.stderr)
    );
    chat.wait_got(ANN, 2);

    // Now she is answered, as a reply quoting her message.
    chat.llm.script("what time", vec![Step::text("Tea time.")]);
    let asked = chat.wa.send_text(ANN, AGENT, "what time is it?");
    let answer = chat.wait_got(ANN, 3).remove(2);
    assert_eq!(
        (
            answer.text.as_deref(),
            answer.quoted_id.as_deref(),
            answer.quoted_participant.as_deref()
        ),
        (
            Some("Tea time."),
            Some(asked.as_str()),
            Some(format!("{ANN}@s.whatsapp.net").as_str())
        )
    );
    // Her messages were read (blue ticks) once the agent had them.
    let read = chat
        .wa
        .receipts_from_companion(ANN)
        .into_iter()
        .filter(|r| r.kind == "read")
        .flat_map(|r| r.ids)
        .collect::<Vec<_>>();
    assert!(read.contains(&asked), "{read:?}");
}

/// The build users deploy trusts WhatsApp's root key alone: against a
/// server whose chain another key signed (the double's), no code is
/// offered and the login says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deployable_build_refuses_a_server_whatsapp_did_not_sign() {
    let wa = FakeWhatsAppWeb::start();
    wa.add_account_named(AGENT, "Agent");
    let gw = start_gateway_with_whatsapp_web(&wa, TOKEN, true);
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    let res = owner
        .request("channel.login", json!({"channel": "whatsapp-web"}))
        .await;
    assert!(res.ok, "{res:?}");
    let login = res.payload.unwrap();
    assert_eq!(login["ok"], false, "{login}");
    assert_eq!(login.get("qr"), None, "{login}");
    let message = login["message"].as_str().unwrap();
    assert!(
        message.starts_with("could not connect to WhatsApp: ")
            && message.contains("certificate verification failed"),
        "{message}\n{}",
        gw.log()
    );
    assert!(!wa.connected(AGENT));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_photo_reaches_the_model_and_a_heartbeat_a_day_later_reaches_the_person() {
    let mut chat = open_chat().await;
    // Ann is the owner (her number is the one she links from another
    // phone): the agent may send her files.
    chat.owner
        .config_set("owner.identities", json!([format!("whatsapp-web:+{ANN}")]))
        .await;
    // A photo with a caption: downloaded from WhatsApp's CDN, decrypted,
    // and given to the model as an image.
    let photo = jpeg(6_000);
    chat.llm
        .script("what is this", vec![Step::text("A test pattern.")]);
    chat.wa
        .send_image(ANN, AGENT, &photo, "image/jpeg", Some("what is this?"));
    let answer = chat.wait_got(ANN, 1).remove(0);
    assert_eq!(answer.text.as_deref(), Some("A test pattern."));
    let asked = chat
        .llm
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("what is this?"))
        .unwrap();
    let parts: Vec<Value> = asked.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .collect();
    use base64::Engine;
    let expected = format!(
        "data:image/jpeg;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&photo)
    );
    assert!(
        parts
            .iter()
            .any(|p| p["image_url"]["url"] == expected.as_str()),
        "{parts:#?}"
    );

    // A voice note reaches the model as its transcript.
    chat.llm.set_transcript("Please buy milk on the way home.");
    let voice = [b"OggS\x00\x02".as_slice(), &[7u8; 3000]].concat();
    chat.wa.send_voice(ANN, AGENT, &voice, 3);
    chat.wait_got(ANN, 2);
    let transcribed = chat.llm.transcriptions();
    assert_eq!(transcribed.len(), 1, "{transcribed:?}");
    assert_eq!(transcribed[0].bytes, voice);
    assert!(chat.llm.requests().iter().any(|r| r
        .body
        .to_string()
        .contains("[Voice message transcription: Please buy milk on the way home.]")));

    // The agent sends the photo and a workspace file back: uploaded to
    // WhatsApp's CDN, encrypted; her phone decrypts the very bytes.
    let sessions = chat
        .owner
        .request("sessions.list", json!({}))
        .await
        .payload
        .unwrap();
    let hers = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|s| {
            let key = s["sessionKey"].as_str()?;
            (s["label"] == "Ann Lee").then(|| key.to_string())
        })
        .unwrap_or_else(|| panic!("no session of hers in {sessions:#}"));
    let history = chat
        .owner
        .request("session.preview", json!({"sessionKey": hers}))
        .await
        .payload
        .unwrap();
    let key = history["messages"]
        .as_array()
        .unwrap()
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
    chat.wa.send_text(ANN, AGENT, "send them back please");
    let got = poll::until_blocking(WAIT, ms(100), || {
        let got = chat.wa.received(ANN);
        let told = chat
            .llm
            .requests()
            .iter()
            .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == "call_files");
        match got.len() >= 6 {
            true => Ok(got),
            false => Err(format!("{} received; the tool said {told:?}", got.len())),
        }
    });
    let notes = b"# Notes\nmilk, bread\n".as_slice();
    let shown: Vec<(Option<&str>, Option<&str>, Option<bool>)> = got[2..]
        .iter()
        .map(|m| {
            let media = m.media.as_ref();
            (
                m.text.as_deref(),
                media.map(|f| f.kind.as_str()),
                media.map(|f| f.bytes == photo || f.bytes == notes),
            )
        })
        .collect();
    assert_eq!(
        shown,
        vec![
            (Some("Here you go"), None, None),
            (None, Some("image"), Some(true)),
            (None, Some("document"), Some(true)),
            (Some("Sent."), None, None),
        ],
        "{:#?}",
        got.iter()
            .map(|m| (
                &m.text,
                m.media
                    .as_ref()
                    .map(|f| (&f.kind, &f.mimetype, f.bytes.len())),
                &m.media_error
            ))
            .collect::<Vec<_>>()
    );
    assert!(got.iter().all(|m| m.media_error.is_none()), "{got:#?}");

    // A day and an hour later the heartbeat has something to say: it goes
    // to her chat, the last active, with no 24-hour window to refuse it.
    chat.heartbeat_a_day_later("Wish Ann a good morning.", "Good morning, Ann.")
        .await;
    let morning = chat.wait_got(ANN, 7).remove(6);
    assert_eq!(
        (morning.text.as_deref(), morning.quoted_id.as_deref()),
        (Some("Good morning, Ann."), None)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_socket_loses_and_doubles_nothing_and_an_unlink_from_the_phone_shows() {
    let mut chat = open_chat().await;
    chat.llm.script("one", vec![Step::text("First.")]);
    chat.wa.send_text(ANN, AGENT, "one");
    chat.wait_got(ANN, 1);

    // The socket drops; she writes meanwhile. The channel reconnects (IK,
    // the server key cached at linking) and takes what was queued, once.
    chat.wa.drop_socket(AGENT);
    chat.llm.script("two", vec![Step::text("Second.")]);
    let two = chat.wa.send_text(ANN, AGENT, "two");
    let got = chat.wait_got(ANN, 2);
    assert_eq!(
        (got[1].text.as_deref(), got[1].quoted_id.as_deref()),
        (Some("Second."), Some(two.as_str()))
    );
    let patterns = chat.handshakes();
    assert_eq!(
        patterns.first().map(String::as_str),
        Some("XX"),
        "{patterns:?}"
    );
    assert!(patterns[1..].iter().any(|p| p == "IK"), "{patterns:?}");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(chat.asked_about("two"), 1);
    assert_eq!(
        chat.wa.received(ANN).len(),
        2,
        "{:#?}",
        chat.wa.received(ANN)
    );
    let status = chat.status().await;
    assert_eq!(status["extra"]["connects"], 2, "{status}");

    // The phone unlinks the device: the status says so, and why.
    chat.wa.logout_from_phone(AGENT);
    let out = chat
        .status_when(|s| s["extra"]["state"] == "logged out")
        .await;
    assert_eq!(
        (out["connected"].clone(), out["error"].clone()),
        (
            json!(false),
            json!(
                "logged out: the phone unlinked this device (WhatsApp → Linked devices); \
                   run `gsv channel login whatsapp-web` to link again"
            )
        ),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_a_group_only_a_mention_of_the_number_runs_and_is_answered_in_the_group() {
    let chat = open_chat().await;
    let group = chat.wa.create_group(ANN, "Family", &[AGENT]);
    let chatter = chat.wa.send_group_text(ANN, &group, "anyone around?", &[]);
    // Taken (acked), but not for the agent: nothing runs, and it stays
    // unread on the user's phone (the number is theirs).
    let device = chat.wa.companions(AGENT)[0];
    chat.wa.wait_all_acked(AGENT, device);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(chat.llm.requests().len(), 0);
    let read: Vec<_> = chat
        .wa
        .receipts_from_companion(ANN)
        .into_iter()
        .filter(|r| r.kind == "read" && r.ids.contains(&chatter))
        .collect();
    assert_eq!(read, vec![]);

    chat.llm.script("what's up", vec![Step::text("All good.")]);
    let mention = chat
        .wa
        .send_group_text(ANN, &group, "@Agent what's up?", &[AGENT]);
    let answer = chat.wait_got(ANN, 1).remove(0);
    assert_eq!(
        (
            answer.chat.as_str(),
            answer.text.as_deref(),
            answer.quoted_id.as_deref(),
            answer.quoted_participant.as_deref()
        ),
        (
            group.as_str(),
            Some("All good."),
            Some(mention.as_str()),
            Some(format!("{ANN}@s.whatsapp.net").as_str())
        )
    );
    assert_eq!(chat.llm.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gsv_channel_login_draws_the_qr_code_until_the_phone_scans_it_and_logout_unlinks() {
    let mut chat = start().await;
    let config_dir = tempfile::tempdir().unwrap();
    let mut login = std::process::Command::new(gsv_bin());
    login
        .args(["channel", "login", "whatsapp-web", "--timeout", "60"])
        .env("GSV_URL", chat.gw.url())
        .env("GSV_TOKEN", TOKEN)
        .env("GSV_CONFIG_DIR", config_dir.path());
    let (mut cli, lines) = spawn_reading(login);
    // The CLI draws the code, then the phone scans the code on offer.
    let drawn = until_qr_drawn(&lines);
    let qr = chat.login().await["qr"].as_str().unwrap().to_string();
    chat.wa.scan_qr(&qr, AGENT).unwrap();
    let status = cli.wait().unwrap();
    let rest: Vec<String> = lines.iter().collect();
    assert!(status.success(), "{drawn:#?}\n{rest:#?}");
    assert_eq!(
        rest.last().map(String::as_str),
        Some(format!("whatsapp-web/default: linked as +{AGENT}.").as_str()),
        "{rest:#?}"
    );

    // `gsv channel logout` unlinks: the keys are gone, a login offers a new code.
    let out = run_gsv(
        &chat.gw.url(),
        TOKEN,
        &["channel", "logout", "whatsapp-web"],
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Logged out whatsapp-web/default.\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = chat.status().await;
    assert_eq!(
        (
            status["connected"].clone(),
            status["extra"]["state"].clone(),
            status["extra"]["phone"].clone()
        ),
        (json!(false), json!("not linked"), Value::Null),
        "{status}"
    );
}

/// Runs `cmd`; its standard output line by line as it comes.
fn spawn_reading(
    mut cmd: std::process::Command,
) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut child = cmd.stdout(std::process::Stdio::piped()).spawn().unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = lines_tx.send(line);
        }
    });
    (child, lines)
}

/// The lines up to the one saying to scan the QR code drawn above it.
fn until_qr_drawn(lines: &std::sync::mpsc::Receiver<String>) -> Vec<String> {
    let mut drawn = Vec::new();
    while !drawn
        .iter()
        .any(|l: &String| l.contains("scan this QR code with WhatsApp"))
    {
        drawn.push(lines.recv_timeout(WAIT).expect("no QR code drawn"));
    }
    assert!(drawn.iter().any(|l| l.contains('▀')), "{drawn:#?}");
    drawn
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gsv_setup_starts_whatsapp_web_and_links_the_number_by_the_qr_code_it_draws() {
    let mut chat = start().await;
    let home = tempfile::tempdir().unwrap();
    let mut cmd = std::process::Command::new(gsv_bin());
    cmd.args(["setup", "--non-interactive", "--url", &chat.gw.url()])
        .args(["--token", TOKEN, "--skip", "model,timezone", "--no-node"])
        .arg("--whatsapp-web")
        .env("GSV_CONFIG_DIR", home.path())
        .env("GSV_HOME", home.path())
        .env_remove("GSV_URL")
        .env_remove("GSV_TOKEN");
    let (mut setup, lines) = spawn_reading(cmd);
    let drawn = until_qr_drawn(&lines);
    assert!(
        drawn.iter().any(|l| {
            l
            == "Link the number: WhatsApp on its phone → Settings → Linked devices → Link a device."
        }),
        "{drawn:#?}"
    );
    let qr = chat.login().await["qr"].as_str().unwrap().to_string();
    chat.wa.scan_qr(&qr, AGENT).unwrap();
    let status = setup.wait().unwrap();
    let rest: Vec<String> = lines.iter().collect();
    assert!(status.success(), "{drawn:#?}\n{rest:#?}");
    assert!(
        rest.iter().any(|l| l
            == "  channel    whatsapp-web/default linked (people who write to it get a pairing \
                code: `gsv pair list`, `gsv pair approve CODE`) (set)"),
        "{rest:#?}"
    );
    let linked = chat.status_when(|s| s["connected"] == true).await;
    assert_eq!(linked["extra"]["phone"], format!("+{AGENT}"));
}
