//! Tool round trips: the turn with one tool call, node and native, and
//! where its time goes (`toolRoundTrip` in the JSON).

use super::floors::SkeletonBeside;
use super::{ms, percentile, round2, stats, turn_cost, TOKEN, WAIT_FOR_NODES};
use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{Node, Workerd};
use gsv_e2e::ws::Client;
use gsv_protocol::ChatState;
use serde_json::{json, Value};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// The native read of a file no prompt lists (`nativeReadFileUnlisted`).
const UNLISTED: &str = "notes/small.md";

/// The turns before the measured ones: `per_session` for each of the 20
/// sessions (`--tool-warmup`, 1 by default and at least 1). With `elsewhere`
/// (`--tool-warmup-elsewhere`), all but the first of each go to 20 sessions
/// of their own: the code warms, the measured sessions' histories and
/// SQLite WALs stay young (session 27 in BENCHMARKS.md).
#[derive(Clone, Copy)]
pub struct Warmup {
    pub per_session: usize,
    pub elsewhere: bool,
}

/// Tool round trips: a node's Read of a small file (no shell start-up, so
/// it isolates the plumbing: Session → Gateway → node → Gateway → Session),
/// a node's Bash `true` (adds the shell's start-up) and the native
/// `gsv__ReadFile` (runs in the Session, no node): of IDENTITY.md, which
/// the prompt's listing vouches for (no R2 request), and of a file no
/// prompt lists (one R2 `get`). With `skeleton` (the echo worker's URL and
/// the model URL of its skeleton turn), a skeleton turn is also timed after
/// each turn (`--skeleton-beside`; the tool turn after it then runs colder).
pub async fn tool_round_trips(
    gw: &Workerd,
    llm: &FakeLlm,
    (turns, bash_turns, warmup): (usize, usize, Warmup),
    (floor_p50, turn_p50): (f64, Option<f64>),
    profile: Option<(u16, &std::path::Path)>,
    skeleton: Option<(String, String)>,
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
    let written = c
        .request(
            "workspace.write",
            json!({"path": UNLISTED, "content": "A note outside the prompt.\n"}),
        )
        .await;
    assert!(written.ok, "{written:?}");
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
        // A file no prompt is made from: read from R2 on every call.
        (
            "nativeReadFileUnlisted",
            "gsv__ReadFile",
            json!({"path": UNLISTED}),
            turns,
        ),
        (
            "nodeBashTrue",
            "laptop__Bash",
            json!({"command": "true"}),
            bash_turns,
        ),
    ];
    let mut beside = match skeleton {
        Some((url, model_url)) => Some(SkeletonBeside::open(&url, &model_url).await),
        None => None,
    };
    let mut out = json!({
        "measured": "from the end of the fake LLM's tool-call answer (its SSE stream ended) \
                     to its receipt of the next request, which carries the tool result",
        "sessions": 20,
        "warmupTurnsPerSession": warmup.per_session,
        "warmupElsewhere": warmup.elsewhere,
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
        let measured = round_trips(
            &mut c,
            beside.as_mut(),
            llm,
            (label, tool, &args),
            n,
            (20, warmup),
            meter,
        )
        .await;
        let p50 = percentile(&measured.round_trip, 50.0);
        let mut v = json!({
            "tool": tool,
            "args": args,
            "roundTrip": stats(&measured.round_trip),
            "roundTripP50OverEchoP50": round2(p50 / floor_p50),
            "turn": stats(&measured.turn),
            "cost": measured.cost,
        });
        if !measured.skeleton.is_empty() {
            let tool_turn_p50 = percentile(&measured.turn, 50.0);
            v["skeletonTurnBeside"] = stats(&measured.skeleton);
            v["turnP50OverSkeletonBesideP50"] =
                json!(round2(tool_turn_p50 / percentile(&measured.skeleton, 50.0)));
        }
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
    /// The skeleton turn timed right after each measured turn, if asked.
    skeleton: Vec<f64>,
    /// (call id, tool-call answer ended, next request received).
    calls: Vec<(String, Instant, Instant)>,
    /// The gateway's workerd CPU time per measured turn (with its profile).
    cost: Value,
}

/// `n` turns (after `warmup`'s turns) in which the model asks for `tool`
/// once, then answers.
async fn round_trips(
    c: &mut Client,
    mut beside: Option<&mut SkeletonBeside>,
    llm: &FakeLlm,
    (label, tool, args): (&str, &str, &Value),
    n: usize,
    (sessions, warmup): (usize, Warmup),
    meter: turn_cost::Metering<'_>,
) -> RoundTrips {
    let trigger = format!("toolrt-{label}");
    let mut out = RoundTrips {
        round_trip: Vec::with_capacity(n),
        turn: Vec::with_capacity(n),
        skeleton: Vec::with_capacity(n),
        calls: Vec::with_capacity(n),
        cost: Value::Null,
    };
    let mut errors = 0;
    // Started once every session is warm, stopped after the last turn.
    let (mut meter, mut metered) = (Some(meter), None);
    let warmups = sessions * warmup.per_session;
    for i in 0..warmups + n {
        if i == warmups {
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
        let elsewhere = warmup.elsewhere && (sessions..warmups).contains(&i);
        let key = match elsewhere {
            true => format!("agent:main:bench:{label}:warm:{}", i % sessions),
            false => format!("agent:main:bench:{label}:{}", i % sessions),
        };
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
        // Warm-up turns warm the skeleton too.
        let skeleton = match beside.as_deref_mut() {
            Some(beside) => Some(beside.turn().await),
            None => None,
        };
        if i >= warmups {
            out.skeleton.extend(skeleton);
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
