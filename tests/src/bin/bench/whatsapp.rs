//! The WhatsApp turn and a 10 MB file coming in: the real gateway and the
//! real WhatsApp channel Worker in one workerd (as `tests/tests/whatsapp.rs`
//! runs them), the fake WhatsApp Cloud API and the bench's fake LLM.
//!
//! - A turn is timed from the fake starting to POST the signed webhook of
//!   a text (a DM with a unique text) to the arrival at the fake Graph API
//!   of the business's `POST /{phone-number-id}/messages` replying to it.
//!   Plain CLI turns on the same workerd are interleaved, as in the
//!   Discord part.
//! - A 10 MB file: from the webhook to the model request of its message
//!   (the gateway asks the channel for the file, streams it into R2, then
//!   hands the message to its session), and the resident memory of the
//!   workerd processes before and at their peak meanwhile. Once a video
//!   (kept, never read back: the store alone) and once a JPEG photo (the
//!   model call then reads it back and sends it base64, 13.3 MB).

use super::{full_stats, ms, percentile, round2, turn_and_ack, TOKEN};
use gsv_e2e::channel_rig::{start_gateway_with_whatsapp, start_number};
use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::fake_whatsapp::{FakeWhatsApp, GraphRecord};
use gsv_e2e::harness::Workerd;
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// WhatsApp users (one session each, `session.dmScope` `per-channel-peer`).
const PEERS: usize = 20;
const WAIT: Duration = Duration::from_secs(120);
const TRIGGER: &str = "benchwa";
const MB: usize = 1024 * 1024;

fn wa_id(p: usize) -> String {
    format!("1650555{p:04}")
}

struct Rig {
    wa: FakeWhatsApp,
    gw: Workerd,
    client: Client,
}

async fn start_rig(llm: &FakeLlm) -> Rig {
    let wa = FakeWhatsApp::start();
    let gw = start_gateway_with_whatsapp(&wa, TOKEN);
    let mut client = Client::connect(&gw.url(), Some(TOKEN)).await;
    client.use_fake_openai(llm).await;
    client
        .config_set("channels.whatsapp.dmPolicy", json!("open"))
        .await;
    client
        .config_set("session.dmScope", json!("per-channel-peer"))
        .await;
    start_number(&mut client).await;
    Rig { wa, gw, client }
}

/// The accepted send whose reply context is `message_id`, once it came.
fn reply_to(wa: &FakeWhatsApp, message_id: &str) -> Option<GraphRecord> {
    wa.graph_log().into_iter().find(|r| {
        r.method == "POST"
            && r.path.ends_with("/messages")
            && r.status == 200
            && r.body["context"]["message_id"] == message_id
    })
}

/// The instants of one WhatsApp turn.
struct Times {
    sent: Instant,
    answered: Instant,
    model_received: Instant,
    model_answered: Instant,
    replied: Instant,
}

async fn wa_turn(rig: &Rig, llm: &FakeLlm, i: usize) -> Times {
    let p = i % PEERS;
    llm.script(TRIGGER, vec![Step::text(format!("echo: turn {i}"))]);
    llm.clear_requests();
    let sent = Instant::now();
    // The delivery's POST, answered once the channel stored it.
    let delivered = rig.wa.user_says(
        &wa_id(p),
        &format!("Peer {p}"),
        &format!("{TRIGGER} turn {i}"),
    );
    let answered = Instant::now();
    assert_eq!(delivered.status, 200, "{delivered:?}");
    let deadline = Instant::now() + WAIT;
    let reply = loop {
        if let Some(r) = reply_to(&rig.wa, &delivered.id) {
            break r;
        }
        assert!(
            Instant::now() < deadline,
            "no reply to {}: {}",
            delivered.id,
            rig.gw.log()
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    assert_eq!(reply.body["text"]["body"], format!("echo: turn {i}"));
    let requests = llm.requests();
    assert_eq!(requests.len(), 1, "one model call per turn: {requests:?}");
    Times {
        sent,
        answered,
        model_received: requests[0].received_at,
        model_answered: requests[0].answered_at.expect("the answer was sent whole"),
        replied: reply.at,
    }
}

/// `n` WhatsApp turns (after a warm-up; none when `n` is 0), interleaved
/// with CLI turns on the same workerd; then the 10 MB files. Adds
/// `whatsapp` to `report`.
pub async fn bench(
    llm: &FakeLlm,
    n: usize,
    cli_turn_p50: Option<f64>,
    report: &mut Value,
    targets: &mut Value,
) {
    eprintln!("[bench] whatsapp: starting the gateway and the WhatsApp channel in one workerd");
    let mut rig = start_rig(llm).await;
    let mut out = json!({});
    if n > 0 {
        out = turns(&mut rig, llm, n, cli_turn_p50, targets).await;
    }
    eprintln!("[bench] whatsapp: files coming in (10 MB video, 10 MB photo, 4 MB photo)");
    // The paths run once before they are measured (first-use costs).
    big_file(&rig, llm, "video", "video/mp4", 100 * 1024, 1000).await;
    big_file(&rig, llm, "image", "image/jpeg", 100 * 1024, 1000).await;
    let video = big_file(&rig, llm, "video", "video/mp4", 10 * MB, 1001).await;
    // Past Anthropic's 5 MB an image is noted, not read back: the store alone.
    rig.client
        .config_set(
            "model",
            json!({"provider": "anthropic", "id": "claude-bench"}),
        )
        .await;
    rig.client
        .config_set("apiKeys.anthropic", json!(gsv_e2e::fake_llm::FAKE_API_KEY))
        .await;
    rig.client
        .config_set(
            "providers.anthropic.baseUrl",
            json!(llm.base_url_anthropic()),
        )
        .await;
    let photo = big_file(&rig, llm, "image", "image/jpeg", 10 * MB, 1002).await;
    // Within the limits, the call reads it back and sends it base64.
    let sent = big_file(&rig, llm, "image", "image/jpeg", 4 * MB, 1003).await;
    out["inbound10MB"] = json!({
        "video": video,
        "photoPastTheModelsLimit": photo,
        "photo4MBSentToTheModel": sent,
    });
    report["whatsapp"] = out;
}

/// The turns, interleaved with CLI turns on the same workerd.
async fn turns(
    rig: &mut Rig,
    llm: &FakeLlm,
    n: usize,
    cli_turn_p50: Option<f64>,
    targets: &mut Value,
) -> Value {
    let warm = 2 * PEERS;
    eprintln!("[bench] whatsapp: {warm} warm-up turns, then {n} turns interleaved with CLI turns");
    for i in 0..warm {
        wa_turn(rig, llm, i).await;
        turn_and_ack(
            &mut rig.client,
            &format!("agent:main:bench:wa:{}", i % PEERS),
            i,
        )
        .await;
    }
    let mut total = Vec::with_capacity(n);
    let mut split: [Vec<f64>; 4] = Default::default();
    let mut cli = Vec::with_capacity(n);
    for k in 0..n {
        let i = warm + k;
        let t = wa_turn(rig, llm, i).await;
        let d = |a: Instant, b: Instant| ms(b.saturating_duration_since(a));
        total.push(d(t.sent, t.replied));
        split[0].push(d(t.sent, t.answered));
        split[1].push(d(t.sent, t.model_received));
        split[2].push(d(t.model_received, t.model_answered));
        split[3].push(d(t.model_answered, t.replied));
        let (c, _) = turn_and_ack(
            &mut rig.client,
            &format!("agent:main:bench:wa:{}", i % PEERS),
            i,
        )
        .await;
        cli.push(c);
    }
    let wa_p50 = percentile(&total, 50.0);
    let cli_p50 = percentile(&cli, 50.0);
    let mut out = json!({
        "measured": "the fake starts POSTing a signed webhook (a text) → the channel's POST \
                     /{phone-number-id}/messages replying to it arrives at the fake Graph API; \
                     20 WhatsApp users, one session each (dmScope per-channel-peer), after 2 \
                     warm-up turns each; sent and delivered statuses follow every reply (as \
                     from a phone that is online); each turn is followed by a CLI turn on the \
                     same workerd",
        "turns": n,
        "turn": full_stats(&total),
        "cliTurnSameWorkerd": full_stats(&cli),
        "turnP50OverCliTurnSameWorkerdP50": round2(wa_p50 / cli_p50),
        "split": {
            "webhookAnswered": full_stats(&split[0]),
            "webhookToModelRequest": full_stats(&split[1]),
            "modelRequestToAnswerSent": full_stats(&split[2]),
            "answerSentToReplyPost": full_stats(&split[3]),
        },
    });
    if let Some(cli) = cli_turn_p50 {
        out["turnP50OverCliTurnP50"] = json!(round2(wa_p50 / cli));
    }
    targets["whatsappAddsAtMost1_5xCliTurnSameWorkerd"] =
        json!((wa_p50 - cli_p50) / cli_p50 <= 1.5);
    out
}

/// A JPEG header then filler, `len` bytes.
fn jpeg(len: usize) -> Vec<u8> {
    let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];
    b.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    b.extend_from_slice(&[0xFF, 0xC0, 0x00, 0x11, 0x08, 0x04, 0x00, 0x05, 0x00]);
    b.extend_from_slice(&[3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
    b.resize(len - 2, 0x5A);
    b.extend_from_slice(&[0xFF, 0xD9]);
    b
}

/// One file of `len` bytes from a user of its own: time to its model
/// request (the file is in R2 by then), the download's share, and
/// workerd's memory until the reply.
async fn big_file(
    rig: &Rig,
    llm: &FakeLlm,
    kind: &str,
    mime: &str,
    len: usize,
    user: usize,
) -> Value {
    let bytes = match kind {
        "image" => jpeg(len),
        _ => {
            let mut b = b"\0\0\0\x18ftypmp42".to_vec();
            b.resize(len, 0x42);
            b
        }
    };
    let from = rig.wa.graph_log().len();
    llm.clear_requests();
    let rss = super::lifecycle::Rss::watch(rig.gw.pid());
    let sent = Instant::now();
    let (delivered, media_id) = rig.wa.user_sends_file(
        &wa_id(user),
        "Big",
        kind,
        mime,
        bytes.clone(),
        Some("benchwa big"),
        None,
    );
    assert_eq!(delivered.status, 200);
    let deadline = Instant::now() + WAIT;
    let model = loop {
        if let Some(r) = llm.requests().into_iter().next() {
            break r.received_at;
        }
        assert!(Instant::now() < deadline, "no model call for the {kind}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    };
    // The reply ends the turn (and the hydration of a photo with it).
    while reply_to(&rig.wa, &delivered.id).is_none() {
        assert!(Instant::now() < deadline, "no reply for the {kind}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let memory = rss.stop();
    let log = rig.wa.graph_log();
    let download = log[from..]
        .iter()
        .find(|r| r.path.starts_with("/whatsapp_business/attachments/"))
        .map(|r| r.at)
        .expect("the file was downloaded");
    let info = log[from..]
        .iter()
        .find(|r| r.method == "GET" && r.path == format!("/{media_id}"))
        .map(|r| r.at)
        .expect("the media id was asked");
    let request_bytes = llm
        .requests()
        .first()
        .map(|r| r.body.to_string().len())
        .unwrap_or(0);
    json!({
        "bytes": bytes.len(),
        "webhookToModelRequestMs": round2(ms(model - sent)),
        "mediaIdAskedToDownloadMs": round2(ms(download.saturating_duration_since(info))),
        "downloadStartToModelRequestMs": round2(ms(model.saturating_duration_since(download))),
        "modelRequestBytes": request_bytes,
        "workerdRss": memory,
    })
}
