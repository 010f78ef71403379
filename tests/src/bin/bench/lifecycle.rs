//! Session lifecycle at scale: a manual compaction of a 2 000-message
//! session, an automatic one (summarizer calls included), and the reset of
//! a 10 000-message session — time, archive bytes, and workerd's resident
//! memory while it happens (sampled every 10 ms: the Durable Object's
//! 128 MB limit must not be approached). workerd is restarted on the
//! persisted state before each measured operation, so its memory starts
//! from a fresh process (wasm memory only grows: a warm process would hide
//! what the operation needs).
//!
//! Sessions are filled the way real ones grow: the fake model answers one
//! message with model calls of 99 tool calls (every call carries ~400
//! characters of varied arguments, so archives compress like real text
//! rather than like one repeated line; each is answered by a tool result).

use super::{ms, round2, TOKEN};
use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{GatewayOptions, Workerd};
use gsv_e2e::ws::Client;
use gsv_protocol::ChatState;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Tool calls per model answer while filling (with the answer: 100 messages;
/// a turn of hundreds of calls is far slower per call, see BENCHMARKS.md).
const CALLS_PER_STEP: usize = 99;

pub async fn lifecycle(llm: &FakeLlm, compact_messages: usize, reset_messages: usize) -> Value {
    let mut gw = Workerd::start(GatewayOptions {
        token: Some(TOKEN.into()),
        ..Default::default()
    });
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(llm).await;
    c.config_set("tools.maxIterations", json!(1_000)).await;
    c.config_set("compaction.enabled", json!(false)).await;

    eprintln!("[bench] lifecycle: filling sessions");
    let fill_started = Instant::now();
    let manual = "agent:main:bench:compact-manual";
    let auto = "agent:main:bench:compact-auto";
    let big = "agent:main:bench:reset";
    fill(&mut c, llm, manual, compact_messages).await;
    fill(&mut c, llm, auto, compact_messages).await;
    fill(&mut c, llm, big, reset_messages).await;
    let fill_secs = fill_started.elapsed().as_secs_f64();

    eprintln!("[bench] lifecycle: manual compaction of {compact_messages} messages");
    let (mut c, manual_wake) = restarted(&mut gw, manual).await;
    let rss = Rss::watch(gw.pid());
    let t = Instant::now();
    let res = ok(c
        .request(
            "session.compact",
            json!({"sessionKey": manual, "keepMessages": 20}),
        )
        .await);
    let manual_ms = ms(t.elapsed());
    let manual_rss = rss.stop();
    let manual_bytes = archive_bytes(&mut c, manual).await;

    eprintln!("[bench] lifecycle: automatic compaction of {compact_messages} messages");
    // A window the filled session overflows; every summarizer chunk answered.
    c.config_set("compaction.enabled", json!(true)).await;
    c.config_set("providers.openai.contextWindow", json!(200_000))
        .await;
    let (mut c, auto_wake) = restarted(&mut gw, auto).await;
    llm.script(
        "Answer with exactly two sections",
        (0..200)
            .map(|_| Step::text("<summary>Bench summary.</summary>\n<memories>\n</memories>"))
            .collect(),
    );
    let rss = Rss::watch(gw.pid());
    let t = Instant::now();
    let turn = c.chat_send(auto, "one more").await;
    let last = c.run_end_within(&turn, Duration::from_secs(600)).await;
    assert_eq!(last.state, ChatState::Final, "{last:?}");
    let auto_ms = ms(t.elapsed());
    let auto_rss = rss.stop();
    let auto_left = message_count(&mut c, auto).await;
    let auto_bytes = archive_bytes(&mut c, auto).await;
    let normal = {
        let t = Instant::now();
        let turn = c.chat_send(auto, "and another").await;
        c.run_end_within(&turn, Duration::from_secs(600)).await;
        ms(t.elapsed())
    };
    c.config_set("compaction.enabled", json!(false)).await;

    eprintln!("[bench] lifecycle: reset of {reset_messages} messages");
    let old_id = c
        .request("session.get", json!({"sessionKey": big}))
        .await
        .payload
        .unwrap()["sessionId"]
        .clone();
    let (mut c, reset_wake) = restarted(&mut gw, big).await;
    let rss = Rss::watch(gw.pid());
    let t = Instant::now();
    let reset = ok(c.request("session.reset", json!({"sessionKey": big})).await);
    let reset_ms = ms(t.elapsed());
    let reset_rss = rss.stop();
    let transcript = ok(c
        .request(
            "session.transcript",
            json!({"sessionKey": big, "sessionId": old_id, "limit": 1}),
        )
        .await);

    json!({
        "fillSeconds": round2(fill_secs),
        "manualCompaction": {
            "messages": compact_messages, "archived": res["trimmedMessages"],
            "ms": round2(manual_ms), "archiveBytes": manual_bytes,
            "workerdRssWake": manual_wake, "workerdRss": manual_rss,
        },
        "autoCompaction": {
            "messages": compact_messages, "messagesAfter": auto_left,
            "turnMs": round2(auto_ms), "nextTurnMs": round2(normal),
            "archiveBytes": auto_bytes, "workerdRssWake": auto_wake, "workerdRss": auto_rss,
        },
        "reset": {
            "messages": reset_messages, "archived": reset["archivedMessages"],
            "ms": round2(reset_ms), "archiveBytes": transcript["archiveBytes"][0],
            "workerdRssWake": reset_wake, "workerdRss": reset_rss,
        },
    })
}

/// Restarts workerd on its persisted state and wakes the Gateway and the
/// Session of `key` (`session.get`): a new connection, and the memory the
/// wake-up took (the measured operation's own growth starts after it).
async fn restarted(gw: &mut Workerd, key: &str) -> (Client, Value) {
    gw.restart();
    let rss = Rss::watch(gw.pid());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    ok(c.request("session.get", json!({"sessionKey": key})).await);
    // Let the sampler see the settled process.
    tokio::time::sleep(Duration::from_millis(50)).await;
    (c, rss.stop())
}

fn ok(res: gsv_protocol::ResponseFrame) -> Value {
    assert!(res.ok, "{res:?}");
    res.payload.unwrap()
}

/// Grows `key` to at least `messages` messages, in runs of five model
/// calls of tool calls.
async fn fill(c: &mut Client, llm: &FakeLlm, key: &str, messages: usize) {
    // A missing workspace file: the native tool answers from R2 at once.
    let mut words = Words(0x9e37_79b9_7f4a_7c15 ^ messages as u64);
    let per_step = CALLS_PER_STEP + 1;
    let mut have = 0;
    let mut round = 0;
    while have < messages {
        let steps = (messages - have).div_ceil(per_step).min(5);
        let trigger = format!("fill {key} round {round}");
        let mut script: Vec<Step> = (0..steps)
            .map(|s| {
                let ids: Vec<String> = (0..CALLS_PER_STEP)
                    .map(|i| format!("c{round}_{s}_{i}"))
                    .collect();
                Step::tool_calls(
                    ids.iter()
                        .map(|id| {
                            let args = json!({"path": "notes/missing.md", "note": words.note(400)});
                            (id.as_str(), "gsv__ReadFile", args)
                        })
                        .collect(),
                )
            })
            .collect();
        script.push(Step::text("filled"));
        llm.script(&trigger, script);
        let t = Instant::now();
        let run = c.chat_send(key, &trigger).await;
        let last = c.run_end_within(&run, Duration::from_secs(600)).await;
        assert_eq!(last.state, ChatState::Final, "{last:?}");
        if std::env::var("BENCH_TRACE").is_ok() {
            eprintln!(
                "[bench] fill {key}: {have} messages, round of {steps} steps took {:.0} ms",
                ms(t.elapsed())
            );
        }
        // The user message, each step's call and results, the answer.
        have += steps * per_step + 2;
        round += 1;
    }
}

/// Pseudo-random words (xorshift), for arguments that differ call to call.
struct Words(u64);

impl Words {
    const VOCABULARY: [&'static str; 32] = [
        "alpha", "harbour", "tide", "ledger", "copper", "window", "garden", "signal", "river",
        "lantern", "orbit", "meadow", "paper", "quartz", "saddle", "timber", "violet", "wander",
        "yarrow", "zenith", "anchor", "bramble", "cinder", "dapple", "ember", "fable", "glacier",
        "hollow", "island", "juniper", "kettle", "lilac",
    ];

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// About `chars` characters of words and numbers.
    fn note(&mut self, chars: usize) -> String {
        let mut out = String::new();
        while out.len() < chars {
            let n = self.next();
            out.push_str(Self::VOCABULARY[(n % 32) as usize]);
            out.push(' ');
            out.push_str(&(n >> 40).to_string());
            out.push(' ');
        }
        out
    }
}

async fn message_count(c: &mut Client, key: &str) -> Value {
    ok(c.request("session.get", json!({"sessionKey": key})).await)["messageCount"].clone()
}

async fn archive_bytes(c: &mut Client, key: &str) -> Value {
    let t = ok(c
        .request("session.transcript", json!({"sessionKey": key, "limit": 1}))
        .await);
    json!(t["archiveBytes"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).sum::<u64>()))
}

/// Samples the resident memory of the workerd processes under `pid`.
pub(super) struct Rss {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<(u64, u64)>,
}

impl Rss {
    pub(super) fn watch(pid: Option<u32>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let Some(pid) = pid else { return (0, 0) };
            let before = super::procs::workerd_rss_kb(pid);
            let mut peak = before;
            while !flag.load(Ordering::Relaxed) {
                peak = peak.max(super::procs::workerd_rss_kb(pid));
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            (before, peak)
        });
        Self { stop, thread }
    }

    pub(super) fn stop(self) -> Value {
        self.stop.store(true, Ordering::Relaxed);
        let (before, peak) = self.thread.join().unwrap_or((0, 0));
        json!({"beforeMB": round2(before as f64 / 1024.0), "peakMB": round2(peak as f64 / 1024.0),
            "growthMB": round2(peak.saturating_sub(before) as f64 / 1024.0)})
    }
}
