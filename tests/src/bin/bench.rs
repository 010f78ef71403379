//! `bench`: performance figures for the gateway, measured in one run on this
//! machine so they can be compared as ratios. Prints JSON.
//!
//! - floor: a WebSocket message echoed by a trivial Durable Object;
//! - turn: `chat.send` → `final` through the real gateway with an instant
//!   fake LLM, sequentially, spread over several sessions;
//! - concurrent: 50 sessions × 20 turns at once (turns/s);
//! - the gzip size of the gateway's wasm.
//!
//! Run with `bash scripts/bench.sh` (builds first); see BENCHMARKS.md.

use gsv_e2e::fake_llm::FakeLlm;
use gsv_e2e::harness::{repo_root, GatewayOptions, Workerd};
use gsv_e2e::ws::Client;
use gsv_protocol::ChatState;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const TOKEN: &str = "bench-token";

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main]
async fn main() {
    let echo_count = arg("--echo", 2000);
    let turns = arg("--turns", 1000);
    let sessions = arg("--sessions", 50);
    let per_session = arg("--per-session", 20);

    eprintln!("[bench] starting the echo worker and the gateway");
    let echo = Workerd::start_echo();
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions {
        token: Some(TOKEN.into()),
        ..Default::default()
    });
    let mut admin = Client::connect(&gw.url(), Some(TOKEN)).await;
    admin.use_fake_openai(&llm).await;

    eprintln!("[bench] echo floor: {echo_count} round trips");
    let echo_url = format!("ws://127.0.0.1:{}/ws", echo.port);
    let floor = echo_floor(&echo_url, "", echo_count).await;
    let hop = echo_floor(&echo_url, "hop:", echo_count / 2).await;
    let rpc = echo_floor(&echo_url, "rpc:", echo_count / 2).await;

    eprintln!("[bench] sequential turns: {turns}");
    let turn = sequential_turns(&gw.url(), turns, 20).await;

    eprintln!("[bench] concurrent: {sessions} sessions × {per_session} turns");
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
    let conc_turns = sessions * per_session;

    eprintln!("[bench] prompt assembly at the caps with 50 skills");
    let prompt = prompt_assembly(200);

    let wasm = std::fs::read(repo_root().join("build").join("index_bg.wasm")).unwrap();
    let wasm_gz = gzip_len(&wasm);

    let floor_p50 = percentile(&floor, 50.0);
    let turn_p50 = percentile(&turn, 50.0);
    let report = json!({
        "machine": {"cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)},
        "echoFloor": stats(&floor),
        "doFetchHop": stats(&hop),
        "doRpcHop": stats(&rpc),
        "turnP50OverFetchHopP50": round2(turn_p50 / percentile(&hop, 50.0)),
        "turn": stats(&turn),
        "turnP50OverEchoP50": round2(turn_p50 / floor_p50),
        "concurrent": {
            "sessions": sessions, "turnsPerSession": per_session, "turns": conc_turns,
            "wallSeconds": round2(wall), "turnsPerSecond": round2(conc_turns as f64 / wall),
            "latency": stats(&conc_samples),
        },
        "promptAssembly": prompt,
        "wasm": {"bytes": wasm.len(), "gzipBytes": wasm_gz},
        "targets": {
            "turnP50AtMost5xEcho": turn_p50 <= 5.0 * floor_p50,
            "wasmGzipAtMost1MB": wasm_gz <= 1_000_000,
        },
    });
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}

/// Round trips through the echo worker; `prefix` picks the path (none, one
/// object-to-object fetch, or one JS RPC call).
async fn echo_floor(url: &str, prefix: &str, n: usize) -> Vec<f64> {
    let mut c = Client::open(url).await;
    let mut samples = Vec::with_capacity(n);
    for i in 0..n + 50 {
        let payload = format!(
            "{prefix}{}",
            json!({"type": "req", "id": format!("e{i}"), "method": "echo"})
        );
        let t = Instant::now();
        c.send_text(payload).await;
        let _ = c.next_text().await;
        if i >= 50 {
            samples.push(ms(t.elapsed()));
        }
    }
    samples
}

async fn sequential_turns(url: &str, n: usize, sessions: usize) -> Vec<f64> {
    let mut c = Client::connect(url, Some(TOKEN)).await;
    // Warm-up: wake every session object once.
    for s in 0..sessions {
        one_turn(&mut c, &format!("agent:main:bench:seq:{s}"), 0).await;
    }
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        samples.push(one_turn(&mut c, &format!("agent:main:bench:seq:{}", i % sessions), i).await);
    }
    samples
}

/// One `chat.send` → `final`, in milliseconds.
async fn one_turn(c: &mut Client, key: &str, i: usize) -> f64 {
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
    ms(t.elapsed())
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
    let file = |label: &str| {
        format!(
            "# {label}\n\n{}",
            "Notes about the human and the work. ".repeat(400)
        )
    };
    let skills: Vec<SkillFile> = (0..50)
        .map(|i| SkillFile {
            dir: format!("skill-{i:02}"),
            source: if i % 2 == 0 { SkillSource::Agent } else { SkillSource::Global },
            content: format!(
                "---\nname: skill-{i:02}\ndescription: Does task number {i} well.\nmetadata: {{\"gsv\": {{\"emoji\": \"🔧\"}}}}\n---\n# Skill {i}\n\n{}",
                "Step by step instructions. ".repeat(40)
            ),
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
