//! `bench`: performance figures for the gateway, measured in one run on this
//! machine so they can be compared as ratios. Prints JSON.
//!
//! - floor: a WebSocket message echoed by a trivial Durable Object; the
//!   skeleton turn (the least a turn must do, in plain JS), and the same
//!   floors written with workers-rs (`rustSkeleton`);
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
//!   measured against;
//! - grep: the node's Grep tool against the `rg` binary on one generated
//!   tree of 100 000 files (cached under the target directory);
//! - workspace reads: the R2 requests of each run (one parallel batch)
//!   for an agent with a workspace at the caps and 50 skills;
//! - lifecycle: compaction of a 2 000-message session (manual and
//!   automatic), reset of a 10 000-message session, with workerd's memory;
//! - discord: a Discord DM turn (fake gateway MESSAGE_CREATE → the reply's
//!   `POST` at the fake REST) through the real gateway and Discord channel
//!   in one workerd, beside CLI turns on the same workerd (`bench/discord.rs`);
//! - the WhatsApp turn (signed webhook → the reply's POST at the fake
//!   Graph API) the same way, and a 10 MB file coming in: time to the model
//!   request (it is in R2 by then) and workerd's memory (`bench/whatsapp.rs`);
//! - the gzip size of the gateway's wasm and of the Discord channel's, and
//!   what the gateway's costs an isolate that starts it: the CPU of its
//!   startup phase beside both skeletons' (`bench/startup.rs`);
//! - what one microtask costs workerd, queued with `queueMicrotask` or as a
//!   promise job (the Rust Workers use the second, `worker-start/`).
//!
//! Run with `bash scripts/bench.sh` (builds first); see BENCHMARKS.md.
//! - history: the turn at 1 000 messages of history against the turn at 10;
//! - what a turn costs: workerd's CPU time per turn, and with `--profile DIR`
//!   a CPU profile of the gateway's isolate over the turns (`bench/turn_cost.rs`).
//!
//! `--only turns,concurrent,connect,history,prompt,tools,grep,lifecycle,discord,whatsapp,cron,memory,startup` runs some parts
//! (the echo floor always runs: the ratios need it).

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "bench/cron.rs"]
mod cron;
#[path = "bench/discord.rs"]
mod discord;
#[path = "bench/lifecycle.rs"]
mod lifecycle;
#[path = "bench/memory.rs"]
mod memory;
#[path = "bench/procs.rs"]
mod procs;
#[path = "bench/reads.rs"]
mod reads;
#[path = "bench/startup.rs"]
mod startup;
#[path = "bench/turn_cost.rs"]
mod turn_cost;
#[path = "bench/whatsapp.rs"]
mod whatsapp;

use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{gsv_bin, repo_root, Node, Workerd};
use gsv_e2e::ws::Client;
use gsv_protocol::ChatState;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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
    let echo_count = arg("--echo", 2000);
    let turns = arg("--turns", 1000);
    let sessions = arg("--sessions", 50);
    let per_session = arg("--per-session", 20);
    let tool_turns = arg("--tool-turns", 300);
    let bash_turns = arg("--bash-turns", 50);
    let grep_files = arg("--grep-files", 100_000);
    let grep_runs = arg("--grep-runs", 5);
    let compact_messages = arg("--compact-messages", 2_000);
    let reset_messages = arg("--reset-messages", 10_000);
    let discord_turns = arg("--discord-turns", 300);
    let whatsapp_turns = arg("--whatsapp-turns", 300);
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
            (tool_turns, bash_turns),
            (floor_p50, turn_p50),
            inspector.zip(profile_dir.as_deref()),
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
        for (label, at_most) in [("nativeReadFile", 3.5), ("nodeRead", 5.0)] {
            let turn = &mut report["toolRoundTrip"][label];
            if let Some(p50) = turn["turn"]["p50Ms"].as_f64() {
                let ratio = p50 / skeleton_p50;
                turn["turnP50OverSkeletonP50"] = json!(round2(ratio));
                turn["turnP50OverSkeletonToolTurnP50"] = json!(round2(p50 / tool_skeleton_p50));
                turn["turnP50OverRustSkeletonToolTurnP50"] =
                    json!(round2(p50 / rust_tool_skeleton_p50));
                targets[format!("{label}TurnAtMost{at_most}xSkeleton")] = json!(ratio <= at_most);
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

    if wants("lifecycle") {
        report["lifecycle"] = lifecycle::lifecycle(&llm, compact_messages, reset_messages).await;
    }

    if wants("discord") && discord_turns > 0 {
        discord::bench(&llm, discord_turns, turn_p50, &mut report, &mut targets).await;
    }

    if wants("whatsapp") {
        whatsapp::bench(&llm, whatsapp_turns, turn_p50, &mut report, &mut targets).await;
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

/// Tool round trips: a node's Read of a small file (no shell start-up, so
/// it isolates the plumbing: Session → Gateway → node → Gateway → Session),
/// a node's Bash `true` (adds the shell's start-up) and the native
/// `gsv__ReadFile` (runs in the Session against R2, no node).
async fn tool_round_trips(
    gw: &Workerd,
    llm: &FakeLlm,
    (turns, bash_turns): (usize, usize),
    (floor_p50, turn_p50): (f64, Option<f64>),
    profile: Option<(u16, &std::path::Path)>,
) -> Value {
    let gw_pid = gw.pid().expect("the gateway's process");
    let node = Node::start(&gw.url(), TOKEN, "laptop");
    std::fs::write(
        node.workspace.join("small.txt"),
        "A small file for the tool round trip.\nSecond line.\n",
    )
    .unwrap();
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.wait_for_tools(
        &["laptop__Read", "laptop__Bash", "gsv__ReadFile"],
        WAIT_FOR_NODES,
    )
    .await;
    let variants = [
        (
            "nodeRead",
            "laptop__Read",
            json!({"path": "small.txt"}),
            turns,
        ),
        (
            "nativeReadFile",
            "gsv__ReadFile",
            json!({"path": "IDENTITY.md"}),
            turns,
        ),
        (
            "nodeBashTrue",
            "laptop__Bash",
            json!({"command": "true"}),
            bash_turns,
        ),
    ];
    let mut out = json!({
        "measured": "from the end of the fake LLM's tool-call answer (its SSE stream ended) \
                     to its receipt of the next request, which carries the tool result",
        "sessions": 20,
    });
    for (label, tool, args, n) in variants {
        if n == 0 {
            continue;
        }
        eprintln!("[bench] tool round trips: {n} × {tool}");
        let clock = (Instant::now(), SystemTime::now());
        let meter = turn_cost::Metering {
            gw_pid,
            profile: profile.map(|(port, dir)| (port, dir, label)),
        };
        let measured = round_trips(&mut c, llm, (label, tool, &args), n, 20, meter).await;
        let p50 = percentile(&measured.round_trip, 50.0);
        let mut v = json!({
            "tool": tool,
            "args": args,
            "roundTrip": stats(&measured.round_trip),
            "roundTripP50OverEchoP50": round2(p50 / floor_p50),
            "turn": stats(&measured.turn),
            "cost": measured.cost,
        });
        if let Some(turn_p50) = turn_p50 {
            // The turn is a better-resolved yardstick than the echo (0.1 ms).
            v["roundTripP50OverTurnP50"] = json!(round2(p50 / turn_p50));
            v["turnP50MinusPlainTurnP50Ms"] =
                json!(round2(percentile(&measured.turn, 50.0) - turn_p50));
        }
        if tool.starts_with("laptop__") {
            v["split"] = split_at_node(&node, &measured.calls, clock);
        }
        out[label] = v;
    }
    drop(node);
    out
}

/// Splits node round trips where the node logged the finished call (its
/// log's `ts`, whole milliseconds, so each part is ±1 ms): before, the
/// gateway's way to the node and the tool itself (`ms` in the same entry);
/// after, the way back to the model.
fn split_at_node(
    node: &Node,
    calls: &[(String, Instant, Instant)],
    (base, base_wall): (Instant, SystemTime),
) -> Value {
    let epoch_ms = |at: Instant| {
        let wall = base_wall.duration_since(UNIX_EPOCH).unwrap().as_secs_f64() * 1000.0;
        if at >= base {
            wall + ms(at - base)
        } else {
            wall - ms(base - at)
        }
    };
    let logged: std::collections::HashMap<String, (f64, f64)> = node
        .log()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["msg"] == "tool call")
        .filter_map(|e| {
            let at = parse_log_ts(e["ts"].as_str()?)?;
            Some((e["callId"].as_str()?.to_string(), (at, e["ms"].as_f64()?)))
        })
        .collect();
    let (mut to_node, mut tool, mut back) = (Vec::new(), Vec::new(), Vec::new());
    for (id, answered, received) in calls {
        let Some((done, tool_ms)) = logged.get(id) else {
            continue;
        };
        to_node.push(done - tool_ms - epoch_ms(*answered));
        tool.push(*tool_ms);
        back.push(epoch_ms(*received) - done);
    }
    if to_node.is_empty() {
        return json!("the node log has none of the calls");
    }
    json!({
        "calls": to_node.len(),
        "llmAnswerEndToToolStartP50Ms": round2(percentile(&to_node, 50.0)),
        "toolP50Ms": round2(percentile(&tool, 50.0)),
        "toolEndToNextLlmRequestP50Ms": round2(percentile(&back, 50.0)),
    })
}

/// `2026-11-22T06:53:04.123Z` (the node log's `ts`) in ms since the epoch.
fn parse_log_ts(ts: &str) -> Option<f64> {
    let num = |range: std::ops::Range<usize>| ts.get(range)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, min, sec, milli) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((((days * 24 + h) * 60 + min) * 60 + sec) as f64 * 1000.0 + milli as f64)
}

struct RoundTrips {
    /// Milliseconds from the end of the tool-call answer to the next request.
    round_trip: Vec<f64>,
    /// `chat.send` → `final`, milliseconds.
    turn: Vec<f64>,
    /// (call id, tool-call answer ended, next request received).
    calls: Vec<(String, Instant, Instant)>,
    /// The gateway's workerd CPU time per measured turn (with its profile).
    cost: Value,
}

/// `n` turns (after one warm-up turn per session) in which the model asks
/// for `tool` once, then answers.
async fn round_trips(
    c: &mut Client,
    llm: &FakeLlm,
    (label, tool, args): (&str, &str, &Value),
    n: usize,
    sessions: usize,
    meter: turn_cost::Metering<'_>,
) -> RoundTrips {
    let trigger = format!("toolrt-{label}");
    let mut out = RoundTrips {
        round_trip: Vec::with_capacity(n),
        turn: Vec::with_capacity(n),
        calls: Vec::with_capacity(n),
        cost: Value::Null,
    };
    let mut errors = 0;
    // Started once every session is warm, stopped after the last turn.
    let (mut meter, mut metered) = (Some(meter), None);
    for i in 0..sessions + n {
        if i == sessions {
            metered = meter.take().map(turn_cost::Metering::start);
        }
        let call_id = format!("call_{label}_{i}");
        llm.script(
            &trigger,
            vec![
                Step::tool_call(&call_id, tool, args.clone()),
                Step::text("done"),
            ],
        );
        // Only this turn's two requests are kept (and cloned) below.
        llm.clear_requests();
        let key = format!("agent:main:bench:{label}:{}", i % sessions);
        let t = Instant::now();
        let run = c.chat_send(&key, &format!("{trigger} turn {i}")).await;
        let events = c.run_events(&run).await;
        let took = ms(t.elapsed());
        let last = events.last().unwrap();
        assert_eq!(last.state, ChatState::Final, "{events:?}");
        let requests = llm.requests();
        assert_eq!(requests.len(), 2, "one tool call, one answer: {requests:?}");
        let answered = requests[0]
            .answered_at
            .expect("the tool-call answer was sent whole");
        let result = requests[1].body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .cloned()
            .unwrap_or_default();
        assert_eq!(result["role"], "tool", "{result}");
        if result["content"]
            .as_str()
            .is_some_and(|t| t.starts_with("Error"))
        {
            if errors == 0 {
                eprintln!("[bench] {tool} failed: {}", result["content"]);
            }
            errors += 1;
        }
        if i >= sessions {
            let received = requests[1].received_at;
            out.round_trip
                .push(ms(received.saturating_duration_since(answered)));
            out.turn.push(took);
            out.calls.push((call_id, answered, received));
        }
    }
    assert_eq!(errors, 0, "{tool} failed in {errors} turns");
    if let Some(metered) = metered {
        out.cost = metered.stop(n);
    }
    out
}

/// The node's Grep against `rg` on one generated tree, alternating, warm
/// cache. Grep is timed through the agent's path (`tool.invoke` → gateway →
/// node → gateway), and inside the node: its log's `tool call` entry (the
/// tool's own time, whole milliseconds) and the node process's CPU time.
/// `rg`'s CPU time comes from `getrusage`: on a shared machine CPU time
/// moves less than wall time when other work runs.
async fn grep_vs_rg(gw: &Workerd, files: usize, runs: usize) -> Value {
    let started = Instant::now();
    let tree = grep_tree::ensure(files);
    eprintln!(
        "[bench] grep tree: {} ({}, {:.1} s)",
        tree.dir.display(),
        if tree.generated {
            "generated"
        } else {
            "reused"
        },
        started.elapsed().as_secs_f64()
    );
    let rg = Command::new("rg")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success());
    let mut out = json!({
        "tree": tree.summary(),
        "pattern": grep_tree::PATTERN,
        "runs": runs,
    });
    let node = Node::start_in(&gw.url(), TOKEN, "tree", &tree.dir, &[]);
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.wait_for_tools(&["tree__Grep"], WAIT_FOR_NODES).await;

    // Warm-up (and the page cache): one of each.
    let warm = grep_once(&mut c, &node).await;
    out["matches"] = json!({"expected": tree.expected_matches, "grep": warm.matches});
    let rg_version = match &rg {
        Some(rg) => {
            let warm_rg = rg_once(&tree.dir);
            out["matches"]["rg"] = json!(warm_rg.matches);
            out["sameMatches"] =
                json!(warm.matches == warm_rg.matches && warm_rg.matches == tree.expected_matches);
            String::from_utf8_lossy(&rg.stdout)
                .lines()
                .next()
                .unwrap_or_default()
                .to_string()
        }
        None => {
            out["sameMatches"] = json!(warm.matches == tree.expected_matches);
            out["rg"] = json!(
                "rg not found: install ripgrep (e.g. apt-get install -y ripgrep) to compare; \
                 Grep alone was timed"
            );
            String::new()
        }
    };
    eprintln!("[bench] grep vs rg: {runs} runs each, alternating");
    let (mut rgs, mut greps) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        if rg.is_some() {
            rgs.push(rg_once(&tree.dir));
        }
        greps.push(grep_once(&mut c, &node).await);
    }
    let series = |f: &dyn Fn(&Timed) -> Option<f64>, of: &[Timed]| -> Vec<f64> {
        of.iter().filter_map(f).collect()
    };
    let via = series(&|t| Some(t.wall_ms), &greps);
    let inside = series(&|t| t.tool_ms, &greps);
    let grep_cpu = series(&|t| t.cpu_ms, &greps);
    out["grepViaGatewayMs"] = runs_json(&via);
    out["grepInNodeMs"] = runs_json(&inside);
    out["grepNodeCpuMs"] = runs_json(&grep_cpu);
    if rg.is_none() {
        return out;
    }
    let rg_wall = series(&|t| Some(t.wall_ms), &rgs);
    let rg_cpu = series(&|t| t.cpu_ms, &rgs);
    out["rg"] = json!({
        "version": rg_version,
        "command": format!("rg {}", grep_tree::rg_args().join(" ")),
    });
    out["rgMs"] = runs_json(&rg_wall);
    out["rgCpuMs"] = runs_json(&rg_cpu);
    let rg_median = median(&rg_wall);
    out["ratioViaGatewayToRg"] = json!(round2(median(&via) / rg_median));
    if !inside.is_empty() {
        out["ratioInNodeToRg"] = json!(round2(median(&inside) / rg_median));
    }
    if !grep_cpu.is_empty() && !rg_cpu.is_empty() {
        out["ratioCpuToRg"] = json!(round2(median(&grep_cpu) / median(&rg_cpu)));
    }
    out
}

/// One timed search.
struct Timed {
    matches: usize,
    wall_ms: f64,
    /// Grep: the node's own figure for the call (its log).
    tool_ms: Option<f64>,
    /// User + system CPU time of the process that searched.
    cpu_ms: Option<f64>,
}

/// One Grep through the gateway.
async fn grep_once(c: &mut Client, node: &Node) -> Timed {
    let logged = node_grep_times(node).len();
    let cpu_before = node.pid().and_then(procs::process_cpu_ms);
    let t = Instant::now();
    let res = c
        .request(
            "tool.invoke",
            json!({"tool": "tree__Grep", "args": {"pattern": grep_tree::PATTERN}}),
        )
        .await;
    let wall_ms = ms(t.elapsed());
    let cpu_after = node.pid().and_then(procs::process_cpu_ms);
    assert!(res.ok, "Grep failed: {res:?}");
    let result = &res.payload.unwrap()["result"];
    assert_eq!(result["truncated"], false, "{result}");
    let matches = result["count"].as_u64().unwrap() as usize;
    // The node logs the call just before it sends the result.
    let mut tool_ms = None;
    for _ in 0..100 {
        let times = node_grep_times(node);
        if times.len() > logged {
            tool_ms = times.last().copied();
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Timed {
        matches,
        wall_ms,
        tool_ms,
        cpu_ms: cpu_before.zip(cpu_after).map(|(b, a)| a - b),
    }
}

/// CPU time of the children waited for so far.
fn children_cpu_ms() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 * 1000.0 + tv.tv_usec as f64 / 1000.0;
    t(usage.ru_utime) + t(usage.ru_stime)
}

/// The `ms` of every Grep call in the node's log.
fn node_grep_times(node: &Node) -> Vec<f64> {
    node.log()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["msg"] == "tool call" && e["tool"] == "Grep")
        .filter_map(|e| e["ms"].as_f64())
        .collect()
}

/// One `rg` over the tree, its output read through a pipe (rg may stop at
/// the first match when it writes to /dev/null).
fn rg_once(dir: &Path) -> Timed {
    let cpu_before = children_cpu_ms();
    let t = Instant::now();
    let out = Command::new("rg")
        .args(grep_tree::rg_args())
        .current_dir(dir)
        .output()
        .expect("run rg");
    let wall_ms = ms(t.elapsed());
    let cpu_ms = children_cpu_ms() - cpu_before;
    assert!(
        out.status.success(),
        "rg failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let matches = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    Timed {
        matches,
        wall_ms,
        tool_ms: None,
        cpu_ms: Some(cpu_ms),
    }
}

fn median(samples: &[f64]) -> f64 {
    percentile(samples, 50.0)
}

fn runs_json(samples: &[f64]) -> Value {
    if samples.is_empty() {
        return Value::Null;
    }
    json!({
        "median": round2(median(samples)),
        "min": round2(percentile(samples, 0.0)),
        "max": round2(percentile(samples, 100.0)),
        "all": samples.iter().map(|s| round2(*s)).collect::<Vec<_>>(),
    })
}

/// The round trips `echo_floor` makes before it starts timing.
const ECHO_WARM_UP: usize = 50;

/// The floors of one skeleton Worker: the JS one (`tests/support/echo`)
/// or the same written with workers-rs (`tests/support/echo-rs`), which
/// tells how much of the turn is the crate's own.
struct Floors {
    echo: Vec<f64>,
    hop: Vec<f64>,
    turn: Vec<f64>,
    cpu_ms_per_turn: f64,
    report: Value,
}

/// Echo, a `fetch()` hop, the Worker's other hop (`other`: its JSON key
/// and message prefix), a model call from an object, and the skeleton
/// turn with the Worker's CPU time per turn; `n` round trips each (the
/// echo twice as many).
async fn skeleton_floors(
    worker: &Workerd,
    model_url: &str,
    n: usize,
    other: (&str, &str),
) -> Floors {
    let url = worker.url();
    let echo = echo_floor(&url, "", n * 2).await;
    let hop = echo_floor(&url, "hop:", n).await;
    let other_hop = echo_floor(&url, other.1, n).await;
    let model_call = echo_floor(&url, &format!("llm:{model_url}"), n).await;
    let cpu = turn_cost::CpuMeter::start(worker.pid().expect("the skeleton worker's process"));
    let turn = echo_floor(&url, &format!("turn:{model_url}"), n).await;
    let cost = cpu.per_turn(n + ECHO_WARM_UP);
    let cpu_ms_per_turn = cost["cpuMsPerTurn"].as_f64().unwrap_or(f64::NAN);
    let mut report = json!({
        "echoFloor": stats(&echo),
        "doFetchHop": stats(&hop),
        "modelCallFromDo": stats(&model_call),
        "skeletonTurn": stats(&turn),
        "skeletonTurnCost": cost,
    });
    report[other.0] = stats(&other_hop);
    Floors {
        echo,
        hop,
        turn,
        cpu_ms_per_turn,
        report,
    }
}

/// Chained microtasks per round of `microtask_costs`.
const MICROTASK_JOBS: usize = 100_000;

/// What one microtask costs workerd queued with `queueMicrotask` and as a
/// promise job, the choice `gsv-worker-start` makes for the Rust Workers'
/// futures: µs per job, the median of five rounds of each, alternating.
async fn microtask_costs(worker: &Workerd) -> Value {
    let url = worker.url();
    let mut c = Client::open(&url).await;
    let modes = ["queueMicrotask", "then"];
    let mut us_per_job = [Vec::new(), Vec::new()];
    for _ in 0..5 {
        for (mode, samples) in modes.iter().zip(us_per_job.iter_mut()) {
            let t = Instant::now();
            c.send_text(format!("microtasks:{mode}:{MICROTASK_JOBS}"))
                .await;
            let _ = c.next_text().await;
            samples.push(ms(t.elapsed()) * 1000.0 / MICROTASK_JOBS as f64);
        }
    }
    let [queued, then] = us_per_job.map(|s| percentile(&s, 50.0));
    json!({
        "jobsPerRound": MICROTASK_JOBS,
        "queueMicrotaskUsPerJob": round3(queued),
        "promiseJobUsPerJob": round3(then),
    })
}

/// Round trips through the echo worker; `prefix` picks the path (none, one
/// object-to-object fetch, or one JS RPC call).
async fn echo_floor(url: &str, prefix: &str, n: usize) -> Vec<f64> {
    let mut c = Client::open(url).await;
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + ECHO_WARM_UP {
        let payload = format!(
            "{prefix}{}",
            json!({"type": "req", "id": format!("e{i}"), "method": "echo"})
        );
        let t = Instant::now();
        c.send_text(payload).await;
        let _ = c.next_text().await;
        if i >= ECHO_WARM_UP {
            samples.push(ms(t.elapsed()));
        }
    }
    samples
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

/// A workspace file past the default per-file cap (14 400 characters, cut
/// to 12 000 in the prompt).
fn cap_workspace_file(label: &str) -> String {
    format!(
        "# {label}\n\n{}",
        "Notes about the human and the work. ".repeat(400)
    )
}

/// The SKILL.md of bench skill `i`.
fn bench_skill(i: usize) -> String {
    format!(
        "---\nname: skill-{i:02}\ndescription: Does task number {i} well.\nmetadata: {{\"gsv\": {{\"emoji\": \"🔧\"}}}}\n---\n# Skill {i}\n\n{}",
        "Step by step instructions. ".repeat(40)
    )
}

/// Evaluating 50 SKILL.md files and assembling the prompt of a workspace
/// whose files fill the caps (12 000 characters each, 60 000 in all), as
/// the Session does once per run — natively, so the figure is the code's
/// own cost; in the Worker it runs as wasm.
fn prompt_assembly(iterations: usize) -> Value {
    use gsv_gateway::config::Config;
    use gsv_gateway::prompt::{
        build_system_prompt, DailyMemory, PromptContext, PromptLimits, Workspace,
    };
    use gsv_gateway::skills::{skills_status, SkillFile, SkillSource};
    let file = cap_workspace_file;
    let skills: Vec<SkillFile> = (0..50)
        .map(|i| SkillFile {
            dir: format!("skill-{i:02}"),
            source: if i % 2 == 0 {
                SkillSource::Agent
            } else {
                SkillSource::Global
            },
            content: bench_skill(i),
        })
        .collect();
    let config = Config::default();
    let mut samples = Vec::with_capacity(iterations);
    let mut prompt_chars = 0;
    for _ in 0..iterations {
        let t = Instant::now();
        let status = skills_status("main", &skills, &[], &config, 0);
        let ws = Workspace {
            soul: Some(file("Soul")),
            identity: Some("- **Name:** Nim\n- **Emoji:** 🦀\n- **Vibe:** calm".into()),
            user: Some(file("User")),
            agents: Some(file("Agents")),
            memory: Some(file("Memory")),
            tools: Some(file("Tools")),
            heartbeat: Some(file("Heartbeat")),
            bootstrap: None,
            yesterday: Some(DailyMemory {
                date: "2026-11-21".into(),
                content: file("Yesterday"),
            }),
            today: Some(DailyMemory {
                date: "2026-11-22".into(),
                content: file("Today"),
            }),
            skills: status.prompt_skills(),
            ineligible_skills: status.ineligible_count(),
        };
        let ctx = PromptContext {
            agent_id: "main",
            session_key: "agent:main:main",
            is_main: true,
            model_provider: "anthropic",
            model_id: "claude-sonnet-4-20250514",
            timezone: "Europe/Berlin",
            channel: None,
            tools: &[],
            hosts: &[],
            base_prompt: "You are a helpful AI assistant running inside GSV.",
            heartbeat_prompt: None,
            recalled: &[],
        };
        let prompt = build_system_prompt(&ws, &ctx, PromptLimits::from_config(&config));
        samples.push(ms(t.elapsed()));
        prompt_chars = prompt.chars().count();
    }
    json!({
        "skills": 50,
        "workspaceChars": 60000,
        "promptChars": prompt_chars,
        "time": stats(&samples),
    })
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

/// The tree Grep and `rg` search: generated deterministically once per size
/// and kept under the target directory (`bench-grep-tree/`), so reruns
/// reuse it (and the page cache).
mod grep_tree {
    use gsv_e2e::harness::repo_root;
    use serde_json::{json, Value};
    use std::path::{Path, PathBuf};

    /// Matches one line in a handful of files: both tools walk the whole
    /// tree, and Grep's 100-match cap never cuts it short.
    pub const PATTERN: &str = "needle_[0-9]+_marker";
    /// Bump when the layout or contents change.
    const VERSION: u32 = 1;
    /// Searched text files that hold the needle.
    const NEEDLE_FILES: usize = 24;

    /// `rg` with Grep's semantics: .gitignore respected without a git
    /// repository (Grep's `require_git(false)`), hidden and binary files
    /// skipped (both tools' defaults), line numbers, no config file.
    pub fn rg_args() -> Vec<&'static str> {
        vec!["--no-config", "--no-require-git", "--line-number", PATTERN]
    }

    pub struct Tree {
        pub dir: PathBuf,
        pub generated: bool,
        pub expected_matches: usize,
        summary: Value,
    }

    impl Tree {
        pub fn summary(&self) -> Value {
            let mut s = self.summary.clone();
            s["dir"] = json!(self.dir.display().to_string());
            s
        }
    }

    fn target_dir() -> PathBuf {
        std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join("target"))
    }

    /// The tree of `files` files, generated unless a complete one exists.
    pub fn ensure(files: usize) -> Tree {
        let root = target_dir().join("bench-grep-tree");
        let dir = root.join(format!("v{VERSION}-{files}"));
        let stamp = root.join(format!("v{VERSION}-{files}.json"));
        let done: Option<Value> = std::fs::read_to_string(&stamp)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let (summary, generated) = match done {
            Some(summary) if dir.is_dir() => (summary, false),
            _ => {
                eprintln!("[bench] generating {files} files in {}", dir.display());
                let _ = std::fs::remove_dir_all(&dir);
                let summary = generate(&dir, files);
                std::fs::write(&stamp, summary.to_string()).unwrap();
                (summary, true)
            }
        };
        Tree {
            dir,
            generated,
            expected_matches: summary["expectedMatches"].as_u64().unwrap() as usize,
            summary,
        }
    }

    /// xorshift64*: deterministic across runs and platforms.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    const WORDS: &[&str] = &[
        "let", "fn", "struct", "impl", "return", "match", "value", "config", "session", "node",
        "gateway", "request", "response", "error", "result", "string", "buffer", "index", "count",
        "length", "path", "file", "line", "token", "stream", "message", "event", "handler",
        "client", "server", "state", "update", "create", "delete", "parse", "render", "format",
        "async", "await", "option", "vector", "map", "filter", "into", "from", "self", "the", "a",
        "of", "to", "and", "is", "in", "for", "with", "on", "timeout", "retry", "backoff",
        "worker", "durable", "object", "storage", "query",
    ];
    const EXTENSIONS: &[&str] = &["rs", "ts", "py", "md", "txt", "json", "go", "toml"];

    /// Lines of words, `size` bytes give or take a line.
    fn text(rng: &mut Rng, size: usize) -> String {
        let mut out = String::with_capacity(size + 100);
        while out.len() < size {
            let indent = rng.below(4) * 4;
            out.extend(std::iter::repeat_n(' ', indent));
            let width = 30 + rng.below(70);
            let start = out.len();
            while out.len() - start < width {
                out.push_str(WORDS[rng.below(WORDS.len())]);
                out.push(if rng.below(8) == 0 { '(' } else { ' ' });
            }
            out.push('\n');
        }
        out
    }

    fn write(path: &Path, bytes: &[u8]) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, bytes).unwrap();
    }

    /// A file of searched text holding `needle` (if any) on one line.
    fn text_file(rng: &mut Rng, needle: Option<usize>) -> Vec<u8> {
        let size = 1024 + rng.below(3072);
        let mut body = text(rng, size);
        if let Some(k) = needle {
            let at = body[..body.len() / 2].rfind('\n').map_or(0, |i| i + 1);
            body.insert_str(at, &format!("    let needle_{k}_marker = lookup(index);\n"));
        }
        body.into_bytes()
    }

    /// Layout, for `files` files in all:
    /// - `src/pkgNN/modN/partN/`: searched text files, 50 per directory,
    ///   1–4 KB of code-like lines; `NEEDLE_FILES` of them hold the needle;
    /// - `vendor/` (10 %): excluded by the root `.gitignore`;
    /// - `.cache/` (1 %): hidden;
    /// - 100 binary files (a NUL byte early) among the sources;
    /// - the needle is also in every ignored, hidden and binary file, so a
    ///   tool that searched them would report more matches.
    fn generate(dir: &Path, files: usize) -> Value {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let ignored = files / 10;
        let hidden = files / 100;
        let binary = 100.min(files / 100);
        let searched = files - ignored - hidden - binary - 1; // - .gitignore
        let mut bytes = 0u64;
        write(
            &dir.join(".gitignore"),
            b"# generated by the bench\n/vendor/\n*.log\n",
        );
        let every = (searched / NEEDLE_FILES).max(1);
        let mut needles = 0;
        for k in 0..searched {
            let leaf = k / 50;
            let ext = EXTENSIONS[k % EXTENSIONS.len()];
            let path = dir.join(format!(
                "src/pkg{:02}/mod{}/part{}/file{k}.{ext}",
                leaf / 100,
                (leaf / 10) % 10,
                leaf % 10
            ));
            let needle = (k % every == every / 2 && needles < NEEDLE_FILES).then(|| {
                needles += 1;
                k
            });
            let body = text_file(&mut rng, needle);
            bytes += body.len() as u64;
            write(&path, &body);
        }
        for k in 0..ignored {
            let body = text_file(&mut rng, (k % 100 == 0).then_some(k));
            bytes += body.len() as u64;
            write(
                &dir.join(format!("vendor/lib{:02}/src/file{k}.rs", k / 500)),
                &body,
            );
        }
        for k in 0..hidden {
            let body = text_file(&mut rng, (k % 50 == 0).then_some(k));
            bytes += body.len() as u64;
            write(
                &dir.join(format!(".cache/d{:02}/entry{k}.txt", k / 100)),
                &body,
            );
        }
        for k in 0..binary {
            let mut body: Vec<u8> = (0..2048 + rng.below(6144))
                .map(|_| (rng.next() >> 56) as u8)
                .collect();
            body[16] = 0;
            let needle = format!("needle_{k}_marker\n");
            body[64..64 + needle.len()].copy_from_slice(needle.as_bytes());
            bytes += body.len() as u64;
            let leaf = (k * 37) % (searched / 50).max(1);
            write(
                &dir.join(format!(
                    "src/pkg{:02}/mod{}/part{}/blob{k}.bin",
                    leaf / 100,
                    (leaf / 10) % 10,
                    leaf % 10
                )),
                &body,
            );
        }
        json!({
            "files": files,
            "searchedTextFiles": searched,
            "ignoredFiles": ignored,
            "hiddenFiles": hidden,
            "binaryFiles": binary,
            "bytes": bytes,
            "expectedMatches": needles,
        })
    }
}
