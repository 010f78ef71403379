//! The Discord DM turn: the real gateway and the real Discord channel
//! Worker in one workerd (as `tests/tests/discord.rs` runs them), the fake
//! Discord and the bench's fake LLM. A turn is timed from the fake
//! gateway writing MESSAGE_CREATE (a DM with a unique text) to its socket
//! to the arrival at the fake REST of the bot's `POST
//! /channels/{id}/messages` that replies to it. Plain CLI turns
//! (`chat.send` → `final`) on the same workerd are interleaved with the DM
//! turns, so the channel's cost is also measured against a yardstick that
//! shares its process and its moment.
//!
//! Also: the gzip size of the channel's wasm (`channels/discord/build/`).

use super::{full_stats, ms, percentile, round2, turn_and_ack, TOKEN};
use gsv_e2e::channel_rig::{start_bot, start_gateway_with_discord};
use gsv_e2e::fake_discord::{messages, FakeDiscord, RestRecord};
use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{repo_root, Workerd};
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// DM peers (one session each, `session.dmScope` `per-channel-peer`), as
/// the CLI turn spreads over 20 sessions.
const PEERS: usize = 20;
const WAIT: Duration = Duration::from_secs(60);
/// The script trigger of the DM turns (each turn appends one answer).
const TRIGGER: &str = "benchdm";

/// Peer `p`'s DM channel and user (distinct per peer).
fn peer_ids(p: usize) -> (String, String) {
    (
        format!("{}", 310_000_000_000_000_000u64 + p as u64),
        format!("{}", 210_000_000_000_000_000u64 + p as u64),
    )
}

/// A DM from peer `p` (message id `id`).
fn dm(p: usize, id: &str, text: &str) -> Value {
    let (channel, user) = peer_ids(p);
    let mut m = messages::dm(id, text);
    m["channel_id"] = json!(channel);
    m["author"]["id"] = json!(user);
    m["author"]["username"] = json!(format!("peer{p}"));
    m["author"]["global_name"] = json!(format!("Peer {p}"));
    m
}

/// The instants of one DM turn.
struct Times {
    dispatched: Instant,
    typing: Option<Instant>,
    model_received: Instant,
    model_answered: Instant,
    posted: Instant,
}

struct Rig {
    discord: FakeDiscord,
    gw: Workerd,
    client: Client,
}

async fn start_rig(llm: &FakeLlm) -> Rig {
    let discord = FakeDiscord::start();
    // Discord's own interval: fewer alarms in the channel's object while
    // measuring (the tests use 1 s to exercise heartbeats).
    discord.set_heartbeat_interval_ms(41_250);
    discord.set_heartbeat_grace_ms(10_000);
    let gw = start_gateway_with_discord(&discord, TOKEN);
    let mut client = Client::connect(&gw.url(), Some(TOKEN)).await;
    client.use_fake_openai(llm).await;
    client
        .config_set("channels.discord.dmPolicy", json!("open"))
        .await;
    client
        .config_set("session.dmScope", json!("per-channel-peer"))
        .await;
    start_bot(&mut client, &discord).await;
    Rig {
        discord,
        gw,
        client,
    }
}

/// One DM turn: `i` numbers the message (unique id and text).
async fn dm_turn(rig: &Rig, llm: &FakeLlm, i: usize) -> Times {
    let p = i % PEERS;
    let (channel, _) = peer_ids(p);
    let id = format!("{}", 1_200_000_000_000_000_000u64 + i as u64);
    let messages_path = format!("/channels/{channel}/messages");
    let typing_path = format!("/channels/{channel}/typing");
    // The same answer as the CLI turn's echo ("echo: turn N").
    llm.script(TRIGGER, vec![Step::text(format!("echo: turn {i}"))]);
    llm.clear_requests();
    let from = rig.discord.rest_log_len();
    let seq = rig
        .discord
        .dispatch("MESSAGE_CREATE", dm(p, &id, &format!("{TRIGGER} turn {i}")))
        .expect("a live gateway session");
    let deadline = Instant::now() + WAIT;
    let mut seen: Vec<RestRecord> = Vec::new();
    let posted = loop {
        let new = rig.discord.rest_log_since(from + seen.len());
        seen.extend(new);
        if let Some(r) = seen.iter().find(|r| {
            r.method == "POST"
                && r.path == messages_path
                && r.body["message_reference"]["message_id"] == id.as_str()
        }) {
            assert_eq!(r.status, 200, "{r:?}");
            assert_eq!(r.body["content"], format!("echo: turn {i}"), "{r:?}");
            break r.received_at;
        }
        assert!(
            Instant::now() < deadline,
            "no reply to DM {id}: {seen:#?}\n{}",
            rig.gw.log()
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    let dispatched = rig
        .discord
        .dispatched_at(seq)
        .expect("the dispatch was written");
    let typing = seen
        .iter()
        .find(|r| r.method == "POST" && r.path == typing_path)
        .map(|r| r.received_at);
    let requests = llm.requests();
    assert_eq!(requests.len(), 1, "one model call per turn: {requests:?}");
    Times {
        dispatched,
        typing,
        model_received: requests[0].received_at,
        model_answered: requests[0].answered_at.expect("the answer was sent whole"),
        posted,
    }
}

/// A CLI turn on the rig: (chat.send → final, [→ model request, → answer
/// sent, → final]).
async fn cli_turn(c: &mut Client, llm: &FakeLlm, i: usize) -> (f64, [f64; 3]) {
    let key = format!("agent:main:bench:rig:{}", i % PEERS);
    llm.clear_requests();
    let t = Instant::now();
    let (total, _) = turn_and_ack(c, &key, i).await;
    let requests = llm.requests();
    assert_eq!(requests.len(), 1, "one model call per turn: {requests:?}");
    let received = ms(requests[0].received_at.saturating_duration_since(t));
    let answered = ms(requests[0]
        .answered_at
        .expect("the answer was sent whole")
        .saturating_duration_since(t));
    (total, [received, answered - received, total - answered])
}

/// `n` DM turns (after a warm-up), interleaved with `n` CLI turns on the
/// same workerd. `cli_turn_p50`: the bench's own `turn` part of this run.
/// Adds `discord` to `report` and its targets.
pub async fn bench(
    llm: &FakeLlm,
    n: usize,
    cli_turn_p50: Option<f64>,
    report: &mut Value,
    targets: &mut Value,
) {
    eprintln!("[bench] discord: starting the gateway and the Discord channel in one workerd");
    let mut rig = start_rig(llm).await;
    let warm = 2 * PEERS;
    eprintln!(
        "[bench] discord: {warm} warm-up DM turns, then {n} DM turns interleaved with {n} CLI turns"
    );
    for i in 0..warm {
        dm_turn(&rig, llm, i).await;
        cli_turn(&mut rig.client, llm, i).await;
    }
    let mut dm_total = Vec::with_capacity(n);
    let mut split: [Vec<f64>; 5] = Default::default();
    let mut cli_total = Vec::with_capacity(n);
    let mut cli_split: [Vec<f64>; 3] = Default::default();
    let mut typing_seen = 0;
    for k in 0..n {
        let i = warm + k;
        let t = dm_turn(&rig, llm, i).await;
        let d = |a: Instant, b: Instant| ms(b.saturating_duration_since(a));
        dm_total.push(d(t.dispatched, t.posted));
        if let Some(typing) = t.typing {
            typing_seen += 1;
            split[0].push(d(t.dispatched, typing));
            split[1].push(d(typing, t.model_received));
        }
        split[2].push(d(t.dispatched, t.model_received));
        split[3].push(d(t.model_received, t.model_answered));
        split[4].push(d(t.model_answered, t.posted));
        let (total, parts) = cli_turn(&mut rig.client, llm, i).await;
        cli_total.push(total);
        for (s, v) in cli_split.iter_mut().zip(parts) {
            s.push(v);
        }
    }
    let paired: Vec<f64> = dm_total
        .iter()
        .zip(&cli_total)
        .map(|(d, c)| d / c)
        .collect();
    let dm_p50 = percentile(&dm_total, 50.0);
    let rig_p50 = percentile(&cli_total, 50.0);
    let p50 = |s: &[f64]| round2(percentile(s, 50.0));
    let out = json!({
        "measured": "fake Discord gateway writes MESSAGE_CREATE (a DM) → the bot's POST \
                     /channels/{id}/messages replying to it arrives at the fake REST; \
                     20 DM peers, one session each (dmScope per-channel-peer), after a \
                     warm-up of 2 turns per peer; each DM turn is followed by a CLI turn \
                     (chat.send → final) on the same workerd, 20 sessions",
        "turns": n,
        "cliTurnSameWorkerd": full_stats(&cli_total),
        "discordTurnP50OverCliTurnSameWorkerdP50": round2(dm_p50 / rig_p50),
        "addedOverCliTurnSameWorkerd": round2((dm_p50 - rig_p50) / rig_p50),
        // Each DM turn over the CLI turn right after it: load that drifts
        // during the run cancels out pair by pair.
        "pairedRatioP50": round2(percentile(&paired, 50.0)),
        "split": {
            "measuredAt": "the fake Discord's and the fake LLM's clocks (this process)",
            "typingPostsSeen": typing_seen,
            "dispatchToTypingPost": full_stats(&split[0]),
            "typingPostToModelRequest": full_stats(&split[1]),
            "dispatchToModelRequest": full_stats(&split[2]),
            "modelRequestToAnswerSent": full_stats(&split[3]),
            "answerSentToReplyPost": full_stats(&split[4]),
        },
        "cliSplitSameWorkerd": {
            "sendToModelRequest": full_stats(&cli_split[0]),
            "modelRequestToAnswerSent": full_stats(&cli_split[1]),
            "answerSentToFinal": full_stats(&cli_split[2]),
        },
        "p50AddedMs": {
            "inbound": round2(p50(&split[2]) - p50(&cli_split[0])),
            "outbound": round2(p50(&split[4]) - p50(&cli_split[2])),
            "total": round2(dm_p50 - rig_p50),
        },
    });
    targets["discordAddsAtMost1_5xCliTurnSameWorkerd"] = json!((dm_p50 - rig_p50) / rig_p50 <= 1.5);
    report["discordTurn"] = full_stats(&dm_total);
    if let Some(cli) = cli_turn_p50 {
        // "The channel adds at most 1.5× the CLI turn's time": the added
        // time over the CLI turn's, at most 1.5 (a DM turn ≤ 2.5 CLI turns).
        report["discordTurnP50OverCliTurnP50"] = json!(round2(dm_p50 / cli));
        report["discordAddedOverCliTurnP50"] = json!(round2((dm_p50 - cli) / cli));
        targets["discordAddsAtMost1_5xCliTurn"] = json!((dm_p50 - cli) / cli <= 1.5);
    }
    report["discord"] = out;
    let stopped = rig
        .client
        .request("channel.stop", json!({"channel": "discord"}))
        .await;
    if !stopped.ok {
        eprintln!("[bench] discord: channel.stop: {stopped:?}");
    }
}

/// The gzip size of the Discord channel's wasm, beside the gateway's.
pub fn channel_wasm(report: &mut Value, targets: &mut Value) {
    let path = repo_root()
        .join("channels")
        .join("discord")
        .join("build")
        .join("index_bg.wasm");
    let Ok(wasm) = std::fs::read(&path) else {
        report["channelWasm"] = json!(format!(
            "{} is missing (channels/discord/build.sh builds it)",
            path.display()
        ));
        return;
    };
    let gz = super::gzip_len(&wasm);
    report["channelWasm"] = json!({"bytes": wasm.len(), "gzipBytes": gz});
    targets["channelWasmGzipAtMost400KB"] = json!(gz <= 400_000);
}

/// `/proc/loadavg`'s 1, 5 and 15 minute load averages (the machine is
/// shared: the figures are only as quiet as it was).
pub fn load_average() -> Value {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let loads: Vec<f64> = text
        .split_whitespace()
        .take(3)
        .filter_map(|v| v.parse().ok())
        .collect();
    json!(loads)
}
