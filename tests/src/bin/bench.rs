//! `bench`: performance figures for the gateway, measured in one run on this
//! machine so they can be compared as ratios. Prints JSON.
//!
//! - floor: a WebSocket message echoed by a trivial Durable Object; the
//!   skeleton turn (the least a turn must do, in plain JS), and the same
//!   floors written with workers-rs (`rustSkeleton`; `bench/floors.rs`);
//! - turn: `chat.send` → `final` through the real gateway with an instant
//!   fake LLM, sequentially, spread over several sessions;
//! - concurrent: 50 sessions × 20 turns at once (turns/s);
//! - connect: a new connection's upgrade and `connect` handshake, 200 one
//!   after another (what each CLI command pays first);
//! - tool round trip: the model asks for a trivial tool (a node's Read, a
//!   node's Bash `true`, the native `gsv__ReadFile`); from the end of the
//!   fake LLM's tool-call answer to its receipt of the request carrying the
//!   result; and the skeleton tool turn (a turn with one R2 file read and a
//!   second model call, in plain JS and in workers-rs) those turns are
//!   measured against (`bench/tools.rs`);
//! - grep: the node's Grep tool against the `rg` binary on one generated
//!   tree of 100 000 files (cached under the target directory; `bench/grep.rs`);
//! - workspace reads: the R2 requests of each run (one parallel batch)
//!   for an agent with a workspace at the caps and 50 skills
//!   (`bench/reads.rs`); prompt assembly of that workspace, natively
//!   (`bench/prompt.rs`);
//! - history: the turn at 1 000 messages of history against the turn at 10;
//! - what a turn costs: workerd's CPU time per turn, and with `--profile DIR`
//!   a CPU profile of the gateway's isolate over the turns (`bench/turn_cost.rs`);
//!   with `--skeleton-beside`, a skeleton turn timed after each tool turn
//!   (the skeleton as cold as the turns it alternates with);
//! - lifecycle: compaction of a 2 000-message session (manual and
//!   automatic), reset of a 10 000-message session, with workerd's memory
//!   (`bench/lifecycle.rs`);
//! - discord: a Discord DM turn (fake gateway MESSAGE_CREATE → the reply's
//!   `POST` at the fake REST) through the real gateway and Discord channel
//!   in one workerd, beside CLI turns on the same workerd (`bench/discord.rs`);
//! - the WhatsApp turn (signed webhook → the reply's POST at the fake
//!   Graph API) the same way, and a 10 MB file coming in: time to the model
//!   request (it is in R2 by then) and workerd's memory (`bench/whatsapp.rs`);
//! - the Telegram turn (webhook update → the reply's sendMessage at the
//!   fake Bot API) the same way, and the Telegram Worker's gzip size
//!   (`bench/telegram.rs`);
//! - the linked-device WhatsApp turn (a contact's phone in the WhatsApp Web
//!   double sends → the answer decrypted on that phone) the same way, and
//!   the WhatsApp Web Worker's gzip size (`bench/whatsapp_web.rs`);
//! - what a turn costs with a model that caches prompts: billed input
//!   tokens per turn of a 30-turn conversation with memory recall, cached
//!   and not, as Anthropic bills them (`bench/cost.rs`);
//! - cron at scale: a burst of jobs due at once, and many stored
//!   (`bench/cron.rs`); long-term memory at scale: writes, searches and
//!   recall's cost in a turn (`bench/memory.rs`);
//! - the gzip size of the gateway's wasm and of the Discord channel's, and
//!   what the gateway's costs an isolate that starts it: the CPU of its
//!   startup phase beside both skeletons' (`bench/startup.rs`);
//! - what one microtask costs workerd, queued with `queueMicrotask` or as a
//!   promise job (the Rust Workers use the second, `worker-start/`).
//!
//! Run with `bash scripts/bench.sh` (builds first); see BENCHMARKS.md.
//! `--median FILE...` prints several runs' reports as one (`bench/median.rs`;
//! `scripts/bench.sh --runs N` makes the runs).
//! `--only turns,concurrent,connect,history,prompt,tools,grep,lifecycle,discord,whatsapp,telegram,whatsapp-web,cron,memory,cost,startup` runs some parts
//! (the echo floor always runs: the ratios need it).

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "bench/cost.rs"]
mod cost;
#[path = "bench/cron.rs"]
mod cron;
#[path = "bench/discord.rs"]
mod discord;
#[path = "bench/floors.rs"]
mod floors;
#[path = "bench/grep.rs"]
mod grep;
#[path = "bench/lifecycle.rs"]
mod lifecycle;
#[path = "bench/median.rs"]
mod median;
#[path = "bench/memory.rs"]
mod memory;
#[path = "bench/procs.rs"]
mod procs;
#[path = "bench/prompt.rs"]
mod prompt;
#[path = "bench/reads.rs"]
mod reads;
#[path = "bench/startup.rs"]
mod startup;
#[path = "bench/telegram.rs"]
mod telegram;
#[path = "bench/tools.rs"]
mod tools;
#[path = "bench/turn_cost.rs"]
mod turn_cost;
#[path = "bench/whatsapp.rs"]
mod whatsapp;
#[path = "bench/whatsapp_web.rs"]
mod whatsapp_web;

use floors::{echo_floor, microtask_costs, skeleton_floors};
use grep::grep_vs_rg;
use gsv_e2e::fake_llm::FakeLlm;
use gsv_e2e::harness::{gsv_bin, repo_root, Workerd};
use gsv_e2e::ws::Client;
use gsv_protocol::ChatState;
use prompt::prompt_assembly;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tools::tool_round_trips;

/// How long started nodes get to connect.
const WAIT_FOR_NODES: Duration = Duration::from_secs(30);
const TOKEN: &str = "bench-token";

fn arg_text(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn arg(name: &str, default: usize) -> usize {
    arg_text(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Whether `--only` (comma-separated parts) includes `part`; all without it.
fn wants(part: &str) -> bool {
    arg_text("--only").is_none_or(|only| only.split(',').any(|p| p.trim() == part))
}

#[tokio::main]
async fn main() {
    // `--median FILE...`: the reports of runs already made, as one
    // (`scripts/bench.sh --runs N`).
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--median") {
        let files = &args[i + 1..];
        let runs: Vec<Value> = files
            .iter()
            .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
            .collect();
        let merged = median::merge(&runs, files);
        println!("{}", serde_json::to_string_pretty(&merged).unwrap());
        return;
    }
    let echo_count = arg("--echo", 2000);
    let turns = arg("--turns", 1000);
    let sessions = arg("--sessions", 50);
    let per_session = arg("--per-session", 20);
    let tool_turns = arg("--tool-turns", 300);
    let bash_turns = arg("--bash-turns", 50);
    let tool_warmup = tools::Warmup {
        per_session: arg("--tool-warmup", 1).max(1),
        elsewhere: std::env::args().any(|a| a == "--tool-warmup-elsewhere"),
    };
    let grep_files = arg("--grep-files", 100_000);
    let grep_runs = arg("--grep-runs", 5);
    let compact_messages = arg("--compact-messages", 2_000);
    let reset_messages = arg("--reset-messages", 10_000);
    let discord_turns = arg("--discord-turns", 300);
    let whatsapp_turns = arg("--whatsapp-turns", 300);
    let telegram_turns = arg("--telegram-turns", 200);
    let whatsapp_web_turns = arg("--whatsapp-web-turns", 200);
    let startup_runs = arg("--startup-runs", 8);

    let bin = gsv_bin();
    if !bin.components().any(|c| c.as_os_str() == "release") {
        eprintln!(
            "[bench] warning: nodes run {} (not a release build; scripts/bench.sh sets GSV_BIN)",
            bin.display()
        );
    }
    eprintln!("[bench] starting the echo worker and the gateway");
    let echo = Workerd::start_echo();
    let echo_rs = Workerd::start_echo_rs();
    let llm = FakeLlm::start().await;
    // `--profile DIR`: the gateway's workerd opens its inspector, and the
    // sequential turns are recorded as a CPU profile (turn_cost.rs).
    let profile_dir = arg_text("--profile").map(std::path::PathBuf::from);
    let (gw, inspector) = turn_cost::start_gateway(profile_dir.is_some());
    let gw_pid = gw.pid().expect("the gateway's process");
    let mut admin = Client::connect(&gw.url(), Some(TOKEN)).await;
    admin.use_fake_openai(&llm).await;

    eprintln!("[bench] echo floor: {echo_count} round trips");
    let model_url = format!("{}/chat/completions ", llm.base_url_openai());
    let js = skeleton_floors(&echo, &model_url, echo_count / 2, ("doRpcHop", "rpc:")).await;
    let rust = skeleton_floors(&echo_rs, &model_url, echo_count / 2, ("doLinkHop", "link:")).await;
    let (floor, hop, skeleton) = (&js.echo, &js.hop, &js.turn);

    let floor_p50 = percentile(floor, 50.0);
    let mut report = json!({
        "machine": {
            "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            "loadAverageAtStart": discord::load_average(),
        },
        "gsvBinary": gsv_bin().display().to_string(),
        "rustSkeletonTurnP50OverSkeletonP50": round2(percentile(&rust.turn, 50.0) / percentile(skeleton, 50.0)),
        "rustSkeletonTurnCpuOverSkeletonCpu": round2(rust.cpu_ms_per_turn / js.cpu_ms_per_turn),
    });
    if let (Some(report), Value::Object(floors)) = (report.as_object_mut(), js.report) {
        report.extend(floors);
    }
    let wasm =
        std::fs::read(repo_root().join("tests/support/echo-rs/build/index_bg.wasm")).unwrap();
    report["rustSkeleton"] = rust.report;
    report["rustSkeleton"]["wasm"] = json!({"bytes": wasm.len(), "gzipBytes": gzip_len(&wasm)});
    report["microtasks"] = microtask_costs(&echo).await;
    let mut targets = json!({});

    let mut turn_p50 = None;
    if wants("turns") && turns > 0 {
        eprintln!("[bench] sequential turns: {turns}");
        let (turn, acks, split, cost) =
            sequential_turns(&gw.url(), &llm, turns, 20, gw_pid, inspector, &profile_dir).await;
        report["turnCost"] = cost;
        report["chatSendAnswer"] = stats(&acks);
        report["turnSplit"] = json!({
            "sendToModelRequest": stats(&split[0]),
            "modelRequestToAnswerSent": stats(&split[1]),
            "answerSentToFinal": stats(&split[2]),
        });
        let p50 = percentile(&turn, 50.0);
        turn_p50 = Some(p50);
        report["turnP50OverFetchHopP50"] = json!(round2(p50 / percentile(hop, 50.0)));
        report["turn"] = stats(&turn);
        report["turnP50OverEchoP50"] = json!(round2(p50 / floor_p50));
        report["skeletonP50OverEchoP50"] = json!(round2(percentile(skeleton, 50.0) / floor_p50));
        let over_skeleton = p50 / percentile(skeleton, 50.0);
        let p99_over_skeleton = percentile(&turn, 99.0) / percentile(skeleton, 99.0);
        report["turnP50OverSkeletonP50"] = json!(round2(over_skeleton));
        report["turnP50OverRustSkeletonP50"] = json!(round2(p50 / percentile(&rust.turn, 50.0)));
        if let Some(cpu) = report["turnCost"]["cpuMsPerTurn"].as_f64() {
            report["turnCpuOverRustSkeletonCpu"] = json!(round2(cpu / rust.cpu_ms_per_turn));
        }
        report["turnP99OverSkeletonP99"] = json!(round2(p99_over_skeleton));
        targets["turnP50AtMost2_5xSkeleton"] = json!(over_skeleton <= 2.5);
        targets["turnP99AtMost4xSkeletonP99"] = json!(p99_over_skeleton <= 4.0);
    }

    if wants("concurrent") && sessions * per_session > 0 {
        eprintln!("[bench] concurrent: {sessions} sessions × {per_session} turns");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let probing = spawn_probe(gw.url(), stop.clone());
        let profiler = inspector
            .zip(profile_dir.as_deref())
            .map(|(port, dir)| turn_cost::Profiler::start(port, dir, "concurrent"));
        let cpu = turn_cost::CpuMeter::start(gw_pid);
        let started = Instant::now();
        let mut tasks = Vec::new();
        for s in 0..sessions {
            let url = gw.url();
            tasks.push(tokio::spawn(async move {
                let mut c = Client::connect(&url, Some(TOKEN)).await;
                let mut samples = Vec::new();
                for t in 0..per_session {
                    samples.push(one_turn(&mut c, &format!("agent:main:bench:conc:{s}"), t).await);
                }
                samples
            }));
        }
        let mut conc_samples = Vec::new();
        for t in tasks {
            conc_samples.extend(t.await.unwrap());
        }
        let wall = started.elapsed().as_secs_f64();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let probe = probing.await.unwrap_or_default();
        let conc_turns = sessions * per_session;
        report["concurrent"] = json!({
            "sessions": sessions, "turnsPerSession": per_session, "turns": conc_turns,
            "wallSeconds": round2(wall), "turnsPerSecond": round2(conc_turns as f64 / wall),
            "latency": stats(&conc_samples),
            "clientRpcDuringMs": stats(&probe),
            "cost": cpu.per_turn(conc_turns),
        });
        if let Some(p) = profiler {
            report["concurrent"]["profile"] = p.stop();
        }
    }

    if wants("history") {
        let profile = inspector.zip(profile_dir.as_deref());
        report["history"] = turn_cost::history_flat(
            &gw.url(),
            &llm,
            arg("--history-messages", 1000),
            arg("--history-turns", 100),
            profile,
        )
        .await;
        let ratio = report["history"]["p50BigOverSmall"]
            .as_f64()
            .unwrap_or(f64::MAX);
        targets["turnFlatWithHistoryWithin10Percent"] = json!(ratio <= 1.1);
    }

    if wants("connect") {
        // What every CLI command pays before its request: the WebSocket
        // upgrade and the `connect` handshake, one connection after another.
        let n = arg("--connects", 200);
        eprintln!("[bench] connect: {n} connections, one after another");
        let mut samples = Vec::with_capacity(n);
        for _ in 0..n {
            let t = Instant::now();
            let client = Client::connect(&gw.url(), Some(TOKEN)).await;
            samples.push(ms(t.elapsed()));
            drop(client);
        }
        report["connect"] = json!({ "connections": n, "latency": stats(&samples) });
    }

    if wants("prompt") {
        eprintln!("[bench] prompt assembly at the caps with 50 skills");
        report["promptAssembly"] = prompt_assembly(200);
        eprintln!("[bench] workspace reads per run: 50 skills, workspace at the caps");
        let reads = reads::workspace_reads(&gw, &llm, 50).await;
        targets["workspaceReadOneBatchPerRun"] = reads["laterRunsOneBatch"].clone();
        report["workspaceReads"] = reads;
    }

    if wants("tools") && tool_turns + bash_turns > 0 {
        report["toolRoundTrip"] = tool_round_trips(
            &gw,
            &llm,
            (tool_turns, bash_turns, tool_warmup),
            (floor_p50, turn_p50),
            inspector.zip(profile_dir.as_deref()),
            std::env::args()
                .any(|a| a == "--skeleton-beside")
                .then(|| (echo.url(), model_url.clone())),
        )
        .await;
        // The least a turn with one native tool call must do, in the same
        // plain JS: what a tool turn's ratio to the skeleton turn is made of.
        eprintln!("[bench] skeleton tool turn: {tool_turns} round trips");
        let echo_url = echo.url();
        let tool_skeleton =
            echo_floor(&echo_url, &format!("toolturn:{model_url}"), tool_turns).await;
        let tool_skeleton_p50 = percentile(&tool_skeleton, 50.0);
        report["skeletonToolTurn"] = stats(&tool_skeleton);
        // The same in workers-rs: the least the crate the gateway is built
        // on pays for a tool turn, against the same (JS) skeleton turn.
        let rust_url = echo_rs.url();
        let rust_tool_skeleton =
            echo_floor(&rust_url, &format!("toolturn:{model_url}"), tool_turns).await;
        let rust_tool_skeleton_p50 = percentile(&rust_tool_skeleton, 50.0);
        report["rustSkeleton"]["skeletonToolTurn"] = stats(&rust_tool_skeleton);
        // A whole turn with one tool call, against the skeleton turn.
        let skeleton_p50 = percentile(skeleton, 50.0);
        report["skeletonToolTurnP50OverSkeletonP50"] =
            json!(round2(tool_skeleton_p50 / skeleton_p50));
        report["rustSkeletonToolTurnP50OverSkeletonP50"] =
            json!(round2(rust_tool_skeleton_p50 / skeleton_p50));
        let targets_of = [
            ("nativeReadFile", Some(3.5)),
            ("nativeReadFileUnlisted", None),
            ("nodeRead", Some(5.0)),
        ];
        for (label, at_most) in targets_of {
            let turn = &mut report["toolRoundTrip"][label];
            if let Some(p50) = turn["turn"]["p50Ms"].as_f64() {
                let ratio = p50 / skeleton_p50;
                turn["turnP50OverSkeletonP50"] = json!(round2(ratio));
                turn["turnP50OverSkeletonToolTurnP50"] = json!(round2(p50 / tool_skeleton_p50));
                turn["turnP50OverRustSkeletonToolTurnP50"] =
                    json!(round2(p50 / rust_tool_skeleton_p50));
                if let Some(at_most) = at_most {
                    targets[format!("{label}TurnAtMost{at_most}xSkeleton")] =
                        json!(ratio <= at_most);
                }
            }
        }
    }

    if wants("grep") && grep_files > 0 {
        let grep = grep_vs_rg(&gw, grep_files, grep_runs.max(1)).await;
        if let Some(ratio) = grep["ratioViaGatewayToRg"].as_f64() {
            targets["grepAtMost1_5xRg"] = json!(ratio <= 1.5);
        }
        report["grep"] = grep;
    }

    if wants("cron") {
        let cron = cron::cron(
            &llm,
            arg("--cron-burst", 1000),
            arg("--cron-stored", 10_000),
            arg("--cron-cap", 4),
            profile_dir.as_deref(),
        )
        .await;
        targets["cronClientRpcP99DuringBurstUnder50Ms"] =
            cron["targets"]["clientRpcP99DuringBurstUnder50Ms"].clone();
        report["cron"] = cron;
    }

    if wants("memory") {
        let memory = memory::memory(
            &llm,
            arg("--memory-nodes", 10_000),
            arg("--memory-searches", 500),
            arg("--memory-turns", 200),
        )
        .await;
        for t in [
            "searchP50InIndexAtMost10Ms",
            "searchP50ThroughGatewayAtMost25Ms",
            "recallAtMost10PercentOfTurn",
        ] {
            targets[format!("memory_{t}")] = memory["targets"][t].clone();
        }
        report["memory"] = memory;
    }

    if wants("cost") {
        let cost = cost::cost(arg("--cost-turns", 30)).await;
        targets["cost_cachedAtMost0_2xUncached"] =
            cost["targets"]["cachedAtMost0_2xUncached"].clone();
        report["cost"] = cost;
    }

    if wants("lifecycle") {
        report["lifecycle"] = lifecycle::lifecycle(&llm, compact_messages, reset_messages).await;
    }

    if wants("discord") && discord_turns > 0 {
        discord::bench(&llm, discord_turns, turn_p50, &mut report, &mut targets).await;
    }

    if wants("whatsapp") {
        whatsapp::bench(&llm, whatsapp_turns, turn_p50, &mut report, &mut targets).await;
    }

    if wants("telegram") {
        telegram::bench(&llm, telegram_turns, turn_p50, &mut report, &mut targets).await;
    }

    if wants("whatsapp-web") {
        whatsapp_web::bench(
            &llm,
            whatsapp_web_turns,
            turn_p50,
            &mut report,
            &mut targets,
        )
        .await;
    }

    if wants("startup") && startup_runs > 0 {
        eprintln!("[bench] startup: {startup_runs} × 3 Workers");
        report["startup"] = startup::bench(startup_runs);
    }

    let wasm = std::fs::read(repo_root().join("build").join("index_bg.wasm")).unwrap();
    let wasm_gz = gzip_len(&wasm);
    report["wasm"] = json!({"bytes": wasm.len(), "gzipBytes": wasm_gz});
    targets["wasmGzipAtMost600KB"] = json!(wasm_gz <= 600_000);
    discord::channel_wasm(&mut report, &mut targets);
    report["machine"]["loadAverageAtEnd"] = discord::load_average();
    report["targets"] = targets;
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}

/// Sequential turns (with what they cost the gateway's workerd: its CPU
/// time per turn, and with `--profile` its CPU profile): `(chat.send → final, chat.send → its "started"
/// answer, [chat.send → the model request received, → the model's answer
/// sent whole, → final])` in milliseconds (the split from the fake LLM's
/// clock, the same process's).
async fn sequential_turns(
    url: &str,
    llm: &FakeLlm,
    n: usize,
    sessions: usize,
    gw_pid: u32,
    inspector: Option<u16>,
    profile_dir: &Option<std::path::PathBuf>,
) -> (Vec<f64>, Vec<f64>, [Vec<f64>; 3], Value) {
    let mut c = Client::connect(url, Some(TOKEN)).await;
    // Warm-up: wake every session object once.
    for s in 0..sessions {
        one_turn(&mut c, &format!("agent:main:bench:seq:{s}"), 0).await;
    }
    let (mut samples, mut acks) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut split: [Vec<f64>; 3] = Default::default();
    let meter = turn_cost::Metering {
        gw_pid,
        profile: inspector
            .zip(profile_dir.as_deref())
            .map(|(port, dir)| (port, dir, "turns")),
    }
    .start();
    for i in 0..n {
        let key = format!("agent:main:bench:seq:{}", i % sessions);
        llm.clear_requests();
        let t = Instant::now();
        let (total, ack) = turn_and_ack(&mut c, &key, i).await;
        let requests = llm.requests();
        assert_eq!(requests.len(), 1, "one model call per turn: {requests:?}");
        let (received, answered) = (requests[0].received_at, requests[0].answered_at);
        let answered = answered.expect("the answer was sent whole");
        split[0].push(ms(received.saturating_duration_since(t)));
        split[1].push(ms(answered.saturating_duration_since(received)));
        split[2].push(total - ms(answered.saturating_duration_since(t)));
        samples.push(total);
        acks.push(ack);
    }
    (samples, acks, split, meter.stop(n))
}

/// One `chat.send` of `text` → `final`, in milliseconds.
async fn one_turn_text(c: &mut Client, key: &str, text: &str) -> f64 {
    let t = Instant::now();
    let run_id = c.chat_send(key, text).await;
    loop {
        let evt = c.next_chat().await;
        if evt.run_id.as_deref() == Some(run_id.as_str())
            && matches!(evt.state, ChatState::Final | ChatState::Error)
        {
            assert_eq!(evt.state, ChatState::Final, "{evt:?}");
            return ms(t.elapsed());
        }
    }
}

/// One `chat.send` → `final`, in milliseconds.
async fn one_turn(c: &mut Client, key: &str, i: usize) -> f64 {
    turn_and_ack(c, key, i).await.0
}

/// One `chat.send` → `final`, and `chat.send` → its answer, in milliseconds.
async fn turn_and_ack(c: &mut Client, key: &str, i: usize) -> (f64, f64) {
    let t = Instant::now();
    let run_id = c.chat_send(key, &format!("turn {i}")).await;
    let sent = ms(t.elapsed());
    let mut phases = vec![];
    loop {
        let evt = c.next_chat().await;
        if evt.run_id.as_deref() != Some(run_id.as_str()) {
            continue;
        }
        phases.push((format!("{:?}", evt.state), ms(t.elapsed())));
        if matches!(evt.state, ChatState::Final | ChatState::Error) {
            assert_eq!(evt.state, ChatState::Final, "{evt:?}");
            break;
        }
    }
    if std::env::var("BENCH_TRACE").is_ok() {
        eprintln!("sent {sent:.1} {phases:?}");
    }
    (ms(t.elapsed()), sent)
}

/// A client of its own sending a light request (`config.get`) every
/// 10 ms until `stop` is set: its latencies, to see whether other work
/// keeps the gateway from answering clients.
fn spawn_probe(
    url: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> tokio::task::JoinHandle<Vec<f64>> {
    tokio::spawn(async move {
        let mut probe = Client::connect(&url, Some(TOKEN)).await;
        let mut lat = Vec::new();
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let t = Instant::now();
            let res = probe
                .request("config.get", json!({"path": "userTimezone"}))
                .await;
            assert!(res.ok, "config.get: {res:?}");
            lat.push(ms(t.elapsed()));
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        lat
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `stats()` with the minimum and the mean.
fn full_stats(samples: &[f64]) -> Value {
    let mut v = stats(samples);
    v["minMs"] = json!(round2(percentile(samples, 0.0)));
    v["meanMs"] = json!(round2(samples.iter().sum::<f64>() / samples.len() as f64));
    v
}

fn percentile(samples: &[f64], p: f64) -> f64 {
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let idx = ((p / 100.0) * (s.len() - 1) as f64).round() as usize;
    s[idx]
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn stats(samples: &[f64]) -> Value {
    json!({
        "count": samples.len(),
        "p50Ms": round2(percentile(samples, 50.0)),
        "p99Ms": round2(percentile(samples, 99.0)),
        "maxMs": round2(percentile(samples, 100.0)),
    })
}

fn gzip_len(bytes: &[u8]) -> usize {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap().len()
}
