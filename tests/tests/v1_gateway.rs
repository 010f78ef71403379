//! This project's `gsv chat` and `gsv node` against a GSV v1 gateway,
//! without v1's source.
//!
//! GSV v1's gateway (`deathbyknowledge/gsv`, folder `gateway/`, at commit
//! 9c85870e, the one of the reference, and at 6791fd14, the last v1 one)
//! was bundled from its public source
//! outside this repository and run locally under Miniflare
//! (`tests/support/v1-gateway/run.mjs`, which sends its model calls to the
//! fake LLM), and this project's real `gsv` binary was run against it
//! through a recording proxy (`gsv_e2e::ws_recorder`). What both sides
//! sent is kept in `tests/fixtures/v1-gateway/COMMIT/SCENARIO.jsonl` (the
//! first line says what was run and what it printed).
//!
//! The `v1_gateway_*` tests run today's `gsv` against a double that plays
//! the v1 gateway's side back (`gsv_e2e::v1_gateway_double`): `gsv` must
//! send what the v1 gateway accepted (each request with the fields and
//! types of the recorded one) and print the same answers from the v1
//! gateway's frames. A change to `gsv` that v1 gateways would not
//! understand fails them; re-recording then shows what the real v1
//! gateway makes of it.
//!
//! Re-recording (Node.js and npm; the v1 gateway's dependencies come from
//! npm):
//!
//! ```sh
//! git clone https://github.com/deathbyknowledge/gsv /tmp/gsv-v1
//! for c in 9c85870e 6791fd14; do
//!   mkdir -p /tmp/v1gw-$c && git -C /tmp/gsv-v1 archive $c gateway | tar -x -C /tmp/v1gw-$c
//!   cd /tmp/v1gw-$c/gateway && npm ci --omit=dev --ignore-scripts
//!   # Its wrangler.jsonc without the Workers AI binding, the UI assets and
//!   # the channel services (none runs locally):
//!   node -e 'const fs=require("fs");const c=JSON.parse(fs.readFileSync("wrangler.jsonc","utf8")
//!     .replace(/^\s*\/\/.*$/gm,"").replace(/\/\*[\s\S]*?\*\//g,""));delete c.ai;delete c.assets;
//!     delete c.services;delete c.observability;c.main="src/index.ts";
//!     fs.writeFileSync("wrangler.local.json",JSON.stringify(c))'
//!   node $REPO/node_modules/wrangler/bin/wrangler.js deploy --dry-run --outdir /tmp/v1gw-$c/dist -c wrangler.local.json
//! done
//! cd $REPO && cargo build -p gsv
//! GSV_V1_GATEWAY_9C85870E=/tmp/v1gw-9c85870e/dist GSV_V1_GATEWAY_6791FD14=/tmp/v1gw-6791fd14/dist \
//!   cargo test -p gsv-e2e --test v1_gateway record_v1_gateway_fixtures -- --ignored --nocapture
//! ```
//!
//! What degrades against a v1 gateway is in docs/compatibility.md (GSV v1
//! gateways).

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{FakeLlm, Step as Llm, FAKE_API_KEY};
use gsv_e2e::harness::{free_port, gsv_bin, repo_root, Node};
use gsv_e2e::poll::{self, ms, secs};
use gsv_e2e::v1_gateway_double::GatewayDouble;
use gsv_e2e::v1_replay::{substitute, Fixture};
use gsv_e2e::ws::Client;
use gsv_e2e::ws_recorder::WsRecorder;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const TOKEN: &str = "test-token";
const COMMITS: &[&str] = &["9c85870e", "6791fd14"];
/// The node's id in the node scenario.
const NODE_ID: &str = "laptop";

enum Step {
    /// `gsv ARGS`; its output (stdout, then stderr) must contain the text.
    Gsv(&'static [&'static str], &'static str),
    /// `gsv node --foreground --id laptop --workspace WS`, until the
    /// gateway lists its tools.
    StartNode,
    StopNode,
}

struct Scenario {
    name: &'static str,
    steps: &'static [Step],
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "chat",
        steps: &[
            Step::Gsv(
                &["config", "set", "apiKeys.anthropic", FAKE_API_KEY],
                "Set apiKeys.anthropic = ***",
            ),
            Step::Gsv(&["chat", "hello there"], "echo: hello there"),
            Step::Gsv(
                &["config", "get", "model.id"],
                "\"claude-sonnet-4-20250514\"",
            ),
            Step::Gsv(&["session", "list"], "agent:main:main"),
            Step::Gsv(&["session", "get"], "Messages      2"),
            Step::Gsv(&["session", "stats"], "Messages    2"),
            Step::Gsv(&["session", "preview"], "assistant: echo: hello there"),
            Step::Gsv(&["session", "history"], "Previous ids  none"),
            Step::Gsv(&["tools", "list"], "(no node connected"),
            Step::Gsv(&["skills", "status"], "Agent main has no skills"),
            Step::Gsv(&["heartbeat", "status"], "main: next "),
            Step::Gsv(&["pair", "list"], "No pairing requests."),
            Step::Gsv(&["channel", "list"], "No channel accounts yet."),
            Step::Gsv(&["cron", "list"], "No cron jobs."),
            // Not in v1: its own words.
            Step::Gsv(
                &["session", "transcript"],
                "error: Unknown method: session.transcript (code 404)",
            ),
        ],
    },
    Scenario {
        name: "node",
        steps: &[
            Step::Gsv(
                &["config", "set", "apiKeys.anthropic", FAKE_API_KEY],
                "Set apiKeys.anthropic = ***",
            ),
            Step::StartNode,
            Step::Gsv(&["tools", "list"], "laptop__Read"),
            Step::Gsv(
                &["tools", "call", "laptop__Read", r#"{"path":"notes.txt"}"#],
                "alpha",
            ),
            Step::Gsv(&["chat", "read my notes"], "You wrote alpha and beta."),
            Step::Gsv(
                &["logs", "--node", "laptop", "-n", "3"],
                "\"msg\":\"tool call\"",
            ),
            Step::StopNode,
        ],
    },
];

fn fixture_path(commit: &str, scenario: &str) -> PathBuf {
    repo_root()
        .join("tests")
        .join("fixtures")
        .join("v1-gateway")
        .join(commit)
        .join(format!("{scenario}.jsonl"))
}

/// `gsv ARGS` against `url`, its config in `config_dir`.
fn gsv(url: &str, config_dir: &Path, args: &[&str]) -> std::process::Output {
    tokio::task::block_in_place(|| {
        Command::new(gsv_bin())
            .args(args)
            .env("GSV_URL", url)
            .env("GSV_TOKEN", TOKEN)
            .env("GSV_CONFIG_DIR", config_dir)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
}

/// The node's workspace, the same at recording and replay.
fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    ws
}

/// Runs a scenario's steps against `url`: what each command printed.
async fn run_steps(url: &str, scenario: &Scenario, ws: &Path, watch: Option<&str>) -> Vec<Value> {
    let config = tempfile::tempdir().unwrap();
    let mut node: Option<Node> = None;
    let mut runs = Vec::new();
    let mut failed = Vec::new();
    for step in scenario.steps {
        match step {
            Step::Gsv(args, expect) => {
                let out = gsv(url, config.path(), args);
                let stdout = String::from_utf8_lossy(&out.stdout).to_string();
                let stderr = String::from_utf8_lossy(&out.stderr).to_string();
                println!("$ gsv {}\n{stdout}{stderr}", args.join(" "));
                if !format!("{stdout}{stderr}").contains(expect) {
                    failed.push(format!(
                        "`gsv {}` did not print {expect:?}:\n{stdout}\n{stderr}",
                        args.join(" ")
                    ));
                }
                runs.push(json!({"args": args, "stdout": stdout, "stderr": stderr,
                                 "exit": out.status.code()}));
            }
            Step::StartNode => {
                node = Some(Node::start_in(url, TOKEN, NODE_ID, ws, &[]));
                // Recording: wait on the real gateway. Replaying: the
                // double answers in the recorded order anyway.
                if let Some(gw) = watch {
                    let mut c = Client::connect(gw, Some(TOKEN)).await;
                    c.wait_for_tools(&[&format!("{NODE_ID}__Read")], Duration::from_secs(30))
                        .await;
                    c.close().await;
                }
                runs.push(json!({"args": ["node", "--foreground", "--id", NODE_ID,
                                           "--workspace", "$WORKSPACE"]}));
            }
            Step::StopNode => {
                if let Some(mut n) = node.take() {
                    n.kill();
                }
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    runs
}

async fn play_back(commit: &str, scenario_name: &str) {
    let scenario = SCENARIOS.iter().find(|s| s.name == scenario_name).unwrap();
    let path = fixture_path(commit, scenario_name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (see this file's header)", path.display()));
    let ws = workspace();
    let placeholders = [
        ("$TOKEN".to_string(), TOKEN.to_string()),
        ("$WORKSPACE".to_string(), ws.path().display().to_string()),
    ];
    let mut fixture = Fixture::parse(&text);
    for f in &mut fixture.frames {
        f.frame = substitute(&f.frame, &placeholders);
    }
    let recorded = fixture.frames.len();
    let double = GatewayDouble::start(fixture, Duration::from_secs(30));
    run_steps(&double.url(), scenario, ws.path(), None).await;
    let played = tokio::task::block_in_place(|| double.wait(Duration::from_secs(30)));
    assert_eq!(played.problems, Vec::<String>::new());
    assert!(played.finished, "{played:?}");
    assert_eq!(played.played, recorded);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_gateway_9c85870e_chat() {
    play_back("9c85870e", "chat").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_gateway_9c85870e_node() {
    play_back("9c85870e", "node").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_gateway_6791fd14_chat() {
    play_back("6791fd14", "chat").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_gateway_6791fd14_node() {
    play_back("6791fd14", "node").await;
}

/// GSV v1's gateway bundle under Miniflare, killed on drop.
struct V1Gateway {
    child: Child,
    port: u16,
    _state: tempfile::TempDir,
}

impl Drop for V1Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_v1_gateway(bundle: &Path, llm: &FakeLlm) -> V1Gateway {
    let state = tempfile::tempdir().unwrap();
    let port = free_port();
    let child = Command::new("node")
        .arg(repo_root().join("tests/support/v1-gateway/run.mjs"))
        .arg(bundle)
        .arg(port.to_string())
        .arg(llm.port().to_string())
        .arg(state.path())
        .current_dir(repo_root())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut gw = V1Gateway {
        child,
        port,
        _state: state,
    };
    poll::until_blocking(secs(60), ms(200), || {
        if let Ok(Some(status)) = gw.child.try_wait() {
            panic!("the v1 gateway exited: {status}");
        }
        let up = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
        up.then_some(()).ok_or("the v1 gateway did not start")
    });
    gw
}

async fn record(commit: &str, bundle: &Path, scenario: &Scenario) {
    let llm = FakeLlm::start().await;
    llm.script(
        "read my notes",
        vec![
            Llm::tool_call(
                "toolu_r",
                &format!("{NODE_ID}__Read"),
                json!({"path": "notes.txt"}),
            ),
            Llm::text("You wrote alpha and beta."),
        ],
    );
    let gw = start_v1_gateway(bundle, &llm);
    let gw_url = format!("ws://127.0.0.1:{}/ws", gw.port);
    let recorder = WsRecorder::start(&gw_url);
    let ws = workspace();
    let runs = run_steps(&recorder.url(), scenario, ws.path(), Some(&gw_url)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let scrub = vec![
        (TOKEN.to_string(), "$TOKEN".to_string()),
        (ws.path().display().to_string(), "$WORKSPACE".to_string()),
    ];
    let fixture = Fixture {
        header: json!({"v1Gateway": {
            "commit": commit,
            "scenario": scenario.name,
            "source": "https://github.com/deathbyknowledge/gsv (gateway/), bundled with wrangler deploy --dry-run, run by tests/support/v1-gateway/run.mjs",
            "recordedBy": "cargo test -p gsv-e2e --test v1_gateway record_v1_gateway_fixtures -- --ignored",
            "runs": substitute(&Value::Array(runs), &scrub),
        }}),
        frames: recorder
            .frames()
            .into_iter()
            .map(|mut f| {
                f.frame = substitute(&f.frame, &scrub);
                // The names of this machine's environment variables are
                // the node's to report, not the fixture's to keep.
                if let Some(env) = f.frame.pointer_mut("/params/nodeRuntime/hostEnv") {
                    *env = json!(["GSV_TOKEN", "GSV_URL", "HOME", "PATH"]);
                }
                f
            })
            .collect(),
    };
    let path = fixture_path(commit, scenario.name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, fixture.to_jsonl()).unwrap();
    println!("wrote {}", path.display());
}

/// Records the fixtures against the v1 gateway bundles named by
/// `GSV_V1_GATEWAY_<COMMIT>` (see this file's header).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs GSV v1's gateway bundled outside this repository"]
async fn record_v1_gateway_fixtures() {
    let mut recorded = 0;
    for commit in COMMITS {
        let var = format!("GSV_V1_GATEWAY_{}", commit.to_uppercase());
        let Some(bundle) = std::env::var_os(&var) else {
            println!("{var} not set: {commit} not recorded");
            continue;
        };
        let only = std::env::var("GSV_V1_SCENARIO").ok();
        for scenario in SCENARIOS {
            if only.as_deref().is_some_and(|o| o != scenario.name) {
                continue;
            }
            record(commit, Path::new(&bundle), scenario).await;
            recorded += 1;
        }
    }
    assert!(recorded > 0, "no GSV_V1_GATEWAY_<COMMIT> given");
}
