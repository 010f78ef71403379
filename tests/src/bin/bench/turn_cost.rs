//! What a turn costs beyond its latency: the gateway isolate's CPU profile
//! over the turns (`--profile DIR`, through workerd's inspector and
//! `scripts/profile.mjs`), workerd's CPU time per turn, and whether the
//! turn stays flat as the history grows (`--only history`).

use super::{one_turn, percentile, round2, stats, TOKEN};
use gsv_e2e::fake_llm::FakeLlm;
use gsv_e2e::harness::repo_root;
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A gateway of the bench's own; with `inspector`, its workerd opens the
/// inspector on a free port (returned) for a [`Profiler`]. Gateways started
/// after it run without one.
pub fn start_gateway(inspector: bool) -> (gsv_e2e::harness::Workerd, Option<u16>) {
    let port = inspector.then(gsv_e2e::harness::free_port);
    if let Some(port) = port {
        std::env::set_var("GSV_INSPECTOR_PORT", port.to_string());
    }
    let gw = gsv_e2e::harness::Workerd::start(gsv_e2e::harness::GatewayOptions {
        token: Some(TOKEN.into()),
        ..Default::default()
    });
    std::env::remove_var("GSV_INSPECTOR_PORT");
    (gw, port)
}

/// A CPU profile being recorded by `scripts/profile.mjs`.
pub struct Profiler {
    child: Child,
    out: PathBuf,
}

impl Profiler {
    /// Starts recording the gateway's isolate (its workerd was started with
    /// `GSV_INSPECTOR_PORT=port`) into `dir/{label}.cpuprofile`.
    pub fn start(port: u16, dir: &Path, label: &str) -> Self {
        std::fs::create_dir_all(dir).unwrap();
        let out = dir.join(format!("{label}.cpuprofile"));
        let child = Command::new("node")
            .arg(repo_root().join("scripts").join("profile.mjs"))
            .args(["--port", &port.to_string(), "--top", "40"])
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn node scripts/profile.mjs");
        // The profiler says on stderr once it records.
        let mut child = child;
        let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        std::io::BufRead::read_line(&mut err, &mut line).unwrap();
        assert!(line.contains("recording"), "profile.mjs: {line}");
        Self { child, out }
    }

    /// Stops recording: the summary (top self time, entry points), with the
    /// profile's path for DevTools.
    pub fn stop(self) -> Value {
        let Self { child, out: path } = self;
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        let mut summary: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("profile.mjs: {e}: {}", String::from_utf8_lossy(&out.stdout))
        });
        summary["profile"] = json!(path.display().to_string());
        summary
    }
}

/// What a phase of turns costs the gateway's workerd: its CPU time, and
/// with a profile (the inspector's port, the directory, the profile's
/// name) a CPU profile of its isolate and the Gateway object's own work.
pub struct Metering<'a> {
    pub gw_pid: u32,
    pub profile: Option<(u16, &'a Path, &'a str)>,
}

/// A phase being metered.
pub struct Metered {
    cpu: CpuMeter,
    profiler: Option<Profiler>,
}

impl Metering<'_> {
    pub fn start(self) -> Metered {
        Metered {
            profiler: self
                .profile
                .map(|(port, dir, name)| Profiler::start(port, dir, name)),
            cpu: CpuMeter::start(self.gw_pid),
        }
    }
}

impl Metered {
    /// The phase's cost per turn over its `turns`.
    pub fn stop(self, turns: usize) -> Value {
        let mut cost = self.cpu.per_turn(turns);
        if let Some(p) = self.profiler {
            let profile = p.stop();
            cost["gatewayObjectPerTurn"] = gateway_object_per_turn(&profile, turns);
            cost["profile"] = profile;
        }
        cost
    }
}

/// The Gateway object's own work per turn from a profile's summary
/// (`scripts/profile.mjs`, a profiling build): the frames it takes and
/// forwards (chiefly `chat.send`), and the `chat` events it fans out.
/// Profiled time: a mean, not a percentile, and above unprofiled time.
/// Null from a build without function names.
fn gateway_object_per_turn(summary: &Value, turns: usize) -> Value {
    let per_turn = |key: &str| {
        summary["gatewayObject"][key]
            .as_f64()
            .map(|ms| round3(ms / turns.max(1) as f64))
    };
    json!({"framesMs": per_turn("framesMs"), "chatEventsMs": per_turn("chatEventsMs")})
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// CPU time of the gateway's workerd over a phase: per turn.
pub struct CpuMeter {
    root: u32,
    at_start: f64,
}

impl CpuMeter {
    pub fn start(root: u32) -> Self {
        Self {
            root,
            at_start: super::procs::workerd_cpu_ms(root),
        }
    }

    pub fn per_turn(&self, turns: usize) -> Value {
        let used = super::procs::workerd_cpu_ms(self.root) - self.at_start;
        json!({"workerdCpuMs": round2(used), "turns": turns,
               "cpuMsPerTurn": round2(used / turns.max(1) as f64)})
    }
}

/// The turn at 1 000 messages of history against the turn at about 10:
/// one session is filled to `big` messages (two per turn), 50 others to
/// 10; then `n` turns alternate between the big one and the small ones.
/// The model double's own time per request (parsing and checking a body
/// that grows with the history, `RecordedRequest::checked_at`) is reported
/// apart, and the ratio again without it: the gateway's part.
pub async fn history_flat(
    url: &str,
    llm: &FakeLlm,
    big: usize,
    n: usize,
    profile: Option<(u16, &Path)>,
) -> Value {
    let mut c = Client::connect(url, Some(TOKEN)).await;
    let big_key = "agent:main:bench:history:big";
    eprintln!("[bench] history: filling a session to {big} messages");
    for i in 0..big / 2 {
        one_turn(&mut c, big_key, i).await;
    }
    let small = |s: usize| format!("agent:main:bench:history:small:{s}");
    for s in 0..50 {
        for i in 0..5 {
            one_turn(&mut c, &small(s), i).await;
        }
    }
    eprintln!("[bench] history: {n} turns at {big} messages and {n} at ~10");
    let profiler = profile.map(|(port, dir)| Profiler::start(port, dir, "history"));
    llm.clear_requests();
    let (mut at_big, mut at_small) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        at_big.push(one_turn(&mut c, big_key, i).await);
        at_small.push(one_turn(&mut c, &small(i % 50), i).await);
    }
    // One model call per turn, in the order of the turns.
    let requests = llm.requests();
    assert_eq!(requests.len(), 2 * n, "one model call per turn");
    let double = |r: &gsv_e2e::fake_llm::RecordedRequest| {
        r.checked_at.duration_since(r.received_at).as_secs_f64() * 1000.0
    };
    let (double_big, double_small): (Vec<f64>, Vec<f64>) = (
        requests.iter().step_by(2).map(double).collect(),
        requests.iter().skip(1).step_by(2).map(double).collect(),
    );
    let less = |turns: &[f64], double: &[f64]| -> Vec<f64> {
        turns.iter().zip(double).map(|(t, d)| t - d).collect()
    };
    let (gw_big, gw_small) = (less(&at_big, &double_big), less(&at_small, &double_small));
    let ratio = percentile(&at_big, 50.0) / percentile(&at_small, 50.0);
    let mut out = json!({
        "bigHistoryMessages": big, "smallHistoryMessages": 10,
        "turnAtBig": stats(&at_big), "turnAtSmall": stats(&at_small),
        "p50BigOverSmall": round2(ratio),
        "modelDoubleAtBig": stats(&double_big), "modelDoubleAtSmall": stats(&double_small),
        "turnLessModelDoubleAtBig": stats(&gw_big),
        "turnLessModelDoubleAtSmall": stats(&gw_small),
        "p50BigOverSmallLessModelDouble":
            round2(percentile(&gw_big, 50.0) / percentile(&gw_small, 50.0)),
    });
    if let Some(p) = profiler {
        out["profile"] = p.stop();
    }
    out
}
