//! The Telegram turn: the real gateway and the real Telegram channel Worker
//! in one workerd (as `tests/tests/telegram.rs` runs them), the fake
//! Telegram Bot API and the bench's fake LLM.
//!
//! A turn is timed from the fake starting to deliver a private message's
//! update (by webhook, with the secret header) to the moment the bench
//! sees the bot's `sendMessage` replying to it recorded by the fake (read
//! every millisecond). Plain CLI turns on the same workerd are
//! interleaved, as in the WhatsApp part. Also: the gzip size of the
//! channel's wasm and JS (`channels/telegram/build/`).

use super::{full_stats, gzip_len, ms, percentile, round2, turn_and_ack, TOKEN};
use gsv_e2e::channel_rig::{start_gateway_with_telegram, start_telegram_bot};
use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::fake_telegram::{FakeTelegram, Person};
use gsv_e2e::harness::{repo_root, Workerd};
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Telegram users (one session each, `session.dmScope` `per-channel-peer`).
const PEERS: usize = 20;
const WAIT: Duration = Duration::from_secs(120);
const TRIGGER: &str = "benchtg";

fn peer(p: usize) -> Person {
    Person {
        id: 515_000_000 + p as i64,
        first_name: "Peer",
        last_name: None,
        username: None,
    }
}

struct Rig {
    tg: FakeTelegram,
    _gw: Workerd,
    client: Client,
}

async fn start_rig(llm: &FakeLlm) -> Rig {
    let tg = FakeTelegram::start();
    let gw = start_gateway_with_telegram(&tg, TOKEN);
    let mut client = Client::connect(&gw.url(), Some(TOKEN)).await;
    client.use_fake_openai(llm).await;
    client
        .config_set("channels.telegram.dmPolicy", json!("open"))
        .await;
    client
        .config_set("session.dmScope", json!("per-channel-peer"))
        .await;
    let public = gw.exposed_url("gsv-channel-telegram");
    start_telegram_bot(&mut client, &tg, Some(&public)).await;
    Rig {
        tg,
        _gw: gw,
        client,
    }
}

/// One Telegram turn, in ms.
async fn tg_turn(rig: &Rig, llm: &FakeLlm, i: usize) -> f64 {
    let person = peer(i % PEERS);
    llm.script(TRIGGER, vec![Step::text(format!("echo: turn {i}"))]);
    let sent = Instant::now();
    let inbound = rig.tg.user_says(&person, &format!("{TRIGGER} turn {i}"));
    let deadline = Instant::now() + WAIT;
    loop {
        let replied = rig
            .tg
            .sent_to(person.id)
            .into_iter()
            .find(|m| m.method == "sendMessage" && m.reply_to == Some(inbound.message_id));
        if let Some(reply) = replied {
            let total = ms(sent.elapsed());
            assert_eq!(
                reply.text.as_deref(),
                Some(format!("echo: turn {i}").as_str())
            );
            return total;
        }
        assert!(Instant::now() < deadline, "no reply to Telegram turn {i}");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// `n` Telegram turns after a warm-up, interleaved with CLI turns on the
/// same workerd; adds `telegram` to `report` and its target to `targets`.
pub async fn bench(
    llm: &FakeLlm,
    n: usize,
    cli_turn_p50: Option<f64>,
    report: &mut Value,
    targets: &mut Value,
) {
    eprintln!("[bench] telegram: starting the gateway and the Telegram channel in one workerd");
    let mut rig = start_rig(llm).await;
    let warm = 2 * PEERS;
    eprintln!("[bench] telegram: {warm} warm-up turns, then {n} turns interleaved with CLI turns");
    for i in 0..warm {
        tg_turn(&rig, llm, i).await;
        turn_and_ack(
            &mut rig.client,
            &format!("agent:main:bench:tg:{}", i % PEERS),
            i,
        )
        .await;
    }
    let mut total = Vec::with_capacity(n);
    let mut cli = Vec::with_capacity(n);
    for k in 0..n {
        let i = warm + k;
        total.push(tg_turn(&rig, llm, i).await);
        let (c, _) = turn_and_ack(
            &mut rig.client,
            &format!("agent:main:bench:tg:{}", i % PEERS),
            i,
        )
        .await;
        cli.push(c);
    }
    let mut out = json!({"worker": worker_size()});
    if n > 0 {
        let tg_p50 = percentile(&total, 50.0);
        let cli_p50 = percentile(&cli, 50.0);
        out["measured"] = json!(
            "the fake starts delivering a private message's update to the Worker's webhook → \
             the bot's sendMessage replying to it is seen recorded at the fake (read every ms); \
             20 Telegram users, one session each (dmScope per-channel-peer), after 2 warm-up \
             turns each; each turn is followed by a CLI turn on the same workerd"
        );
        out["turns"] = json!(n);
        out["turn"] = full_stats(&total);
        out["cliTurnSameWorkerd"] = full_stats(&cli);
        out["turnP50OverCliTurnSameWorkerdP50"] = json!(round2(tg_p50 / cli_p50));
        if let Some(cli) = cli_turn_p50 {
            out["turnP50OverCliTurnP50"] = json!(round2(tg_p50 / cli));
        }
        targets["telegramAddsAtMost1_5xCliTurnSameWorkerd"] =
            json!((tg_p50 - cli_p50) / cli_p50 <= 1.5);
    }
    report["telegram"] = out;
}

/// The gzip size of the Telegram channel's wasm and JS, as deployed.
fn worker_size() -> Value {
    let dir = repo_root().join("channels/telegram/build");
    let wasm = std::fs::read(dir.join("index_bg.wasm")).expect("the Telegram channel is built");
    let js = std::fs::read(dir.join("index.js")).expect("the Telegram channel is built");
    json!({
        "wasmBytes": wasm.len(),
        "wasmGzipBytes": gzip_len(&wasm),
        "jsGzipBytes": gzip_len(&js),
    })
}
