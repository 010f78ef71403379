//! The linked-device WhatsApp turn: the real gateway and the real WhatsApp
//! Web channel Worker (its test build, which trusts the double's
//! certificate chain) in one workerd, as `tests/tests/whatsapp_web/` runs
//! them, the local WhatsApp Web double and the bench's fake LLM.
//!
//! The agent's number is linked as a companion device (`channel.login` →
//! QR code → the double's phone scans it). A turn is timed from a contact's
//! phone sending a text (the double encrypts it and delivers it to the
//! linked device) to the moment the bench sees the answer quoting it among
//! what the double decrypted for the contact's phone (read every ms).
//! Plain CLI turns on the same workerd are interleaved, as in the Telegram
//! part. `BENCH_TRACE=1` prints each turn's nodes between the double and
//! the linked device, with the model's request and answer, at their offsets
//! from the send (with `WHATSAPP_WEB_LOG=debug`, the Worker's log carries
//! `Date.now()` stamps to line up with the send's). Also: the gzip size of the deployable build's wasm and JS
//! (`channels/whatsapp-web/build/`).

use super::{full_stats, gzip_len, ms, percentile, round2, turn_and_ack, TOKEN};
use gsv_e2e::channel_rig::start_gateway_with_whatsapp_web;
use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::fake_whatsapp_web::FakeWhatsAppWeb;
use gsv_e2e::harness::{repo_root, Workerd};
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Contacts who write to the agent's number (one session each,
/// `session.dmScope` `per-channel-peer`).
const PEERS: usize = 20;
const WAIT: Duration = Duration::from_secs(120);
const TRIGGER: &str = "benchwaweb";
/// The number the agent chats from (the user's own, linked).
const AGENT: &str = "15550009999";

fn peer(p: usize) -> String {
    format!("1650777{p:04}")
}

struct Rig {
    wa: FakeWhatsAppWeb,
    gw: Workerd,
    client: Client,
}

async fn start_rig(llm: &FakeLlm) -> Rig {
    let wa = FakeWhatsAppWeb::start();
    wa.add_account_named(AGENT, "Agent");
    for p in 0..PEERS {
        wa.add_account_named(&peer(p), &format!("Peer {p}"));
    }
    let gw = start_gateway_with_whatsapp_web(&wa, TOKEN, false);
    let mut client = Client::connect(&gw.url(), Some(TOKEN)).await;
    client.use_fake_openai(llm).await;
    client
        .config_set("channels.whatsapp-web.dmPolicy", json!("open"))
        .await;
    client
        .config_set("session.dmScope", json!("per-channel-peer"))
        .await;
    // Link the agent's number: the login offers a QR code, the phone scans it.
    let res = client
        .request("channel.login", json!({"channel": "whatsapp-web"}))
        .await;
    assert!(res.ok, "channel.login: {res:?}\n{}", gw.log());
    let login = res.payload.expect("a login answer");
    let qr = login["qr"]
        .as_str()
        .unwrap_or_else(|| panic!("no QR code: {login}\n{}", gw.log()));
    wa.scan_qr(qr, AGENT).expect("the phone scans the QR code");
    wa.wait_connected(AGENT);
    let deadline = Instant::now() + WAIT;
    loop {
        let res = client
            .request("channel.status", json!({"channel": "whatsapp-web"}))
            .await;
        let status = res.payload.unwrap_or_default();
        if status["accounts"][0]["connected"] == true {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not linked: {status}\n{}",
            gw.log()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Rig { wa, gw, client }
}

/// The instants of one linked-device turn.
struct Times {
    sent: Instant,
    model_received: Option<Instant>,
    model_answered: Option<Instant>,
    received: Instant,
}

async fn web_turn(rig: &Rig, llm: &FakeLlm, i: usize) -> Times {
    let from = peer(i % PEERS);
    llm.script(TRIGGER, vec![Step::text(format!("echo: turn {i}"))]);
    llm.clear_requests();
    let sent = Instant::now();
    let id = rig
        .wa
        .send_text(&from, AGENT, &format!("{TRIGGER} turn {i}"));
    let deadline = Instant::now() + WAIT;
    let answer = loop {
        let got = rig
            .wa
            .received(&from)
            .into_iter()
            .find(|m| m.quoted_id.as_deref() == Some(id.as_str()));
        if let Some(m) = got {
            break m;
        }
        assert!(
            Instant::now() < deadline,
            "no answer to linked-device turn {i}\n{}",
            rig.gw.log()
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    let received = Instant::now();
    assert_eq!(
        answer.text.as_deref(),
        Some(format!("echo: turn {i}").as_str())
    );
    let request = llm.requests().into_iter().next();
    if std::env::var_os("BENCH_TRACE").is_some() {
        trace(rig, i, sent, request.as_ref());
    }
    Times {
        sent,
        model_received: request.as_ref().map(|r| r.received_at),
        model_answered: request.and_then(|r| r.answered_at),
        received,
    }
}

/// With `BENCH_TRACE`: each node the double exchanged with the linked
/// device during the turn, at its offset from the send, beside the model's
/// request and answer (where a turn's time goes between the two sockets).
fn trace(rig: &Rig, i: usize, sent: Instant, request: Option<&gsv_e2e::fake_llm::RecordedRequest>) {
    let at = |t: Instant| ms(t.saturating_duration_since(sent));
    let mut lines: Vec<(f64, String)> = rig
        .wa
        .nodes()
        .into_iter()
        .filter(|l| l.at >= sent)
        .map(|l| {
            let attr = |k: &str| {
                l.node
                    .attrs
                    .get(k)
                    .map(|v| format!(" {k}={}", v.as_str()))
                    .unwrap_or_default()
            };
            let child = match &l.node.content {
                Some(wacore_binary::NodeContent::Nodes(c)) => c
                    .first()
                    .map(|c| format!(" <{}>", c.tag))
                    .unwrap_or_default(),
                _ => String::new(),
            };
            let dir = if l.incoming {
                "device →"
            } else {
                "→ device"
            };
            let text = format!(
                "{dir} <{}{}{}{}{}>{child}",
                l.node.tag,
                attr("type"),
                attr("to"),
                attr("from"),
                attr("xmlns")
            );
            (at(l.at), text)
        })
        .collect();
    if let Some(r) = request {
        lines.push((at(r.received_at), "model request".into()));
        if let Some(a) = r.answered_at {
            lines.push((at(a), "model answered".into()));
        }
    }
    lines.sort_by(|a, b| a.0.total_cmp(&b.0));
    // The wall clock of the send, to line the Worker's debug log up with.
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .saturating_sub(sent.elapsed());
    eprintln!(
        "[bench] whatsapp-web turn {i} sent at {} ms since the epoch",
        wall.as_millis()
    );
    for (t, what) in lines {
        eprintln!("[bench] whatsapp-web turn {i} +{t:.2} ms {what}");
    }
}

/// `n` linked-device turns after a warm-up, interleaved with CLI turns on
/// the same workerd; adds `whatsappWeb` to `report` and its target to
/// `targets`.
pub async fn bench(
    llm: &FakeLlm,
    n: usize,
    cli_turn_p50: Option<f64>,
    report: &mut Value,
    targets: &mut Value,
) {
    eprintln!(
        "[bench] whatsapp-web: starting the gateway and the WhatsApp Web channel in one \
         workerd, linking the number"
    );
    let mut rig = start_rig(llm).await;
    let warm = 2 * PEERS;
    eprintln!(
        "[bench] whatsapp-web: {warm} warm-up turns, then {n} turns interleaved with CLI turns"
    );
    for i in 0..warm {
        web_turn(&rig, llm, i).await;
        turn_and_ack(
            &mut rig.client,
            &format!("agent:main:bench:waweb:{}", i % PEERS),
            i,
        )
        .await;
    }
    let mut total = Vec::with_capacity(n);
    let mut split: [Vec<f64>; 3] = Default::default();
    let mut cli = Vec::with_capacity(n);
    for k in 0..n {
        let i = warm + k;
        let t = web_turn(&rig, llm, i).await;
        let d = |a: Instant, b: Instant| ms(b.saturating_duration_since(a));
        total.push(d(t.sent, t.received));
        if let (Some(mr), Some(ma)) = (t.model_received, t.model_answered) {
            split[0].push(d(t.sent, mr));
            split[1].push(d(mr, ma));
            split[2].push(d(ma, t.received));
        }
        let (c, _) = turn_and_ack(
            &mut rig.client,
            &format!("agent:main:bench:waweb:{}", i % PEERS),
            i,
        )
        .await;
        cli.push(c);
    }
    let mut out = json!({"worker": worker_size()});
    if n > 0 {
        let web_p50 = percentile(&total, 50.0);
        let cli_p50 = percentile(&cli, 50.0);
        out["measured"] = json!(
            "a contact's phone in the WhatsApp Web double sends a text to the linked number \
             (encrypted, delivered to the companion device over its socket) → the answer \
             quoting it is seen among what the double decrypted for the contact's phone (read \
             every ms); 20 contacts, one session each (dmScope per-channel-peer), after 2 \
             warm-up turns each; each turn is followed by a CLI turn on the same workerd"
        );
        out["turns"] = json!(n);
        out["turn"] = full_stats(&total);
        out["cliTurnSameWorkerd"] = full_stats(&cli);
        out["turnP50OverCliTurnSameWorkerdP50"] = json!(round2(web_p50 / cli_p50));
        if split[0].len() == n {
            out["split"] = json!({
                "sentToModelRequest": full_stats(&split[0]),
                "modelRequestToAnswerSent": full_stats(&split[1]),
                "answerSentToReceivedByPhone": full_stats(&split[2]),
            });
        }
        if let Some(cli) = cli_turn_p50 {
            out["turnP50OverCliTurnP50"] = json!(round2(web_p50 / cli));
        }
        targets["whatsappWebAddsAtMost1_5xCliTurnSameWorkerd"] =
            json!((web_p50 - cli_p50) / cli_p50 <= 1.5);
    }
    report["whatsappWeb"] = out;
}

/// The gzip size of the WhatsApp Web channel's wasm and JS, as deployed
/// (the deployable build, `build/`, not the test build).
fn worker_size() -> Value {
    let dir = repo_root().join("channels/whatsapp-web/build");
    let wasm = std::fs::read(dir.join("index_bg.wasm"))
        .expect("the WhatsApp Web channel is built (bash channels/whatsapp-web/build.sh)");
    let js = std::fs::read(dir.join("index.js"))
        .expect("the WhatsApp Web channel is built (bash channels/whatsapp-web/build.sh)");
    json!({
        "wasmBytes": wasm.len(),
        "wasmGzipBytes": gzip_len(&wasm),
        "jsBytes": js.len(),
        "jsGzipBytes": gzip_len(&js),
    })
}
