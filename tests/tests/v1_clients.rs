//! GSV v1's own CLI builds against this gateway, without their source.
//!
//! Two v1 CLI builds are in users' hands: `deathbyknowledge/gsv` folder
//! `cli/` at commit 9c85870e (the one of the reference) and at 6791fd14
//! (the last v1 one). Each was built from its public source outside this
//! repository and run as a user would (chat client, admin commands, node)
//! against this gateway, through a recording proxy
//! (`gsv_e2e::ws_recorder`). What each sent and received is kept in
//! `tests/fixtures/v1/COMMIT/SCENARIO.jsonl` (the first line says what was
//! run and what it printed). No v1 code is in this repository: the
//! fixtures are frames recorded from the real binaries.
//!
//! The `replay_*` tests drive the real gateway with the recorded client
//! and node frames (`gsv_e2e::v1_replay`) and check that every answer and
//! event the v1 client needed comes back, with the fields and types it
//! reads (`READS`, from what the recordings show the v1 client consuming
//! and printing).
//!
//! Re-recording (a gateway change that the replays flag as a break, or a
//! new scenario):
//!
//! ```sh
//! git clone https://github.com/deathbyknowledge/gsv /tmp/gsv-v1
//! for c in 9c85870e 6791fd14; do
//!   mkdir -p /tmp/v1cli-$c && git -C /tmp/gsv-v1 archive $c cli | tar -x -C /tmp/v1cli-$c
//!   (cd /tmp/v1cli-$c/cli && CARGO_TARGET_DIR=/tmp/v1target cargo build --locked \
//!      && cp /tmp/v1target/debug/gsv /tmp/v1cli-$c/gsv)
//! done
//! bash scripts/build-worker.sh && cargo build -p gsv
//! GSV_V1_BIN_9C85870E=/tmp/v1cli-9c85870e/gsv GSV_V1_BIN_6791FD14=/tmp/v1cli-6791fd14/gsv \
//!   cargo test -p gsv-e2e --test v1_clients record_v1_fixtures -- --ignored --nocapture
//! ```
//!
//! Recording runs each scenario's commands with the v1 binary (a clean
//! environment, its config in a fresh HOME), checks what each printed
//! (`Step::Cli`'s expected text: the check that the v1 CLI works against
//! this gateway), and rewrites the fixtures with the token, the node's
//! workspace and HOME as placeholders.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{FakeLlm, Step as Llm};
use gsv_e2e::harness::{repo_root, GatewayOptions, Workerd};
use gsv_e2e::poll::{self, ms, secs};
use gsv_e2e::v1_replay::{replay, substitute, Fixture, Reads};
use gsv_e2e::ws::{raw_channel, Client};
use gsv_e2e::ws_recorder::WsRecorder;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const TOKEN: &str = "test-token";
const COMMITS: &[&str] = &["9c85870e", "6791fd14"];
/// The node's id in the node scenario (`gsv node --id`).
const NODE_ID: &str = "v1node";

/// One thing a scenario does with the v1 binary.
enum Step {
    /// Runs `gsv ARGS` to its end; its stdout must contain the text.
    Cli(&'static [&'static str], &'static str),
    /// The same, with the text each build prints (by commit).
    CliBy(
        &'static [&'static str],
        &'static [(&'static str, &'static str)],
    ),
    /// The same, typing the lines given on its stdin.
    CliTyped(&'static [&'static str], &'static str, &'static str),
    /// Lets the node send what it has queued (it flushes every second).
    Wait(u64),
    /// Starts `gsv node --foreground --id v1node --workspace WS` and waits
    /// until the gateway lists its tools.
    StartNode,
    /// Kills the node (as Ctrl-C would).
    StopNode,
}

struct Scenario {
    name: &'static str,
    steps: &'static [Step],
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "cli",
        steps: &[
            Step::Cli(&["client", "hello there"], "Assistant: echo: hello there"),
            Step::Cli(&["client", "/status"], "Session"),
            // Interactive: two messages on one connection, then quit.
            Step::CliTyped(
                &["client"],
                "first\nsecond\nquit\n",
                "Assistant: echo: first\n\n> \nAssistant: echo: second",
            ),
            Step::Cli(
                &["config", "set", "userTimezone", "Europe/Paris"],
                "Set userTimezone successfully",
            ),
            Step::Cli(&["config", "get", "userTimezone"], "\"Europe/Paris\""),
            Step::Cli(&["config", "get"], "\"userTimezone\": \"Europe/Paris\""),
            Step::Cli(
                &["session", "set", "main", "label", "v1 chat"],
                "Updated label = v1 chat",
            ),
            Step::Cli(&["session", "list"], "(v1 chat)"),
            Step::Cli(&["session", "get"], "Messages: 6"),
            Step::Cli(&["session", "stats"], "Messages: 6"),
            Step::Cli(&["session", "preview"], "USER: hello there"),
            Step::Cli(&["session", "history"], "Session history"),
            Step::Cli(&["tools", "list"], "gsv__ReadFile"),
            Step::Cli(&["skills", "status"], "Agent: main"),
            Step::Cli(&["skills", "update"], "Agent: main"),
            Step::Cli(&["heartbeat", "status"], "Agent: main"),
            Step::Cli(&["heartbeat", "start"], "main: next at"),
            Step::Cli(&["heartbeat", "trigger"], "eartbeat"),
            Step::Cli(&["pair", "list"], "Alice (81) via discord"),
            Step::Cli(&["pair", "approve", "discord", "81"], "Approved Alice (81)"),
            Step::Cli(&["pair", "reject", "discord", "82"], "Rejected"),
            Step::Cli(&["channel", "list"], "discord:default"),
            Step::Cli(&["channel", "discord", "status"], "default"),
            Step::Cli(
                &["session", "compact", "-k", "1"],
                "Trimmed 5 messages, kept 1",
            ),
            Step::Cli(&["session", "reset"], "Reset session"),
        ],
    },
    Scenario {
        name: "node",
        steps: &[
            Step::StartNode,
            Step::Cli(&["tools", "list"], "v1node__Read"),
            Step::Cli(
                &["tools", "call", "v1node__Read", r#"{"path":"notes.txt"}"#],
                "alpha",
            ),
            // 6791fd14 reads an `online` flag its own gateway sent and
            // does not answer bin probes (docs/compatibility.md: what degrades).
            Step::CliBy(
                &["skills", "status"],
                &[
                    ("9c85870e", "- v1node (execution) os=linux bins=1 probe=yes"),
                    (
                        "6791fd14",
                        "- v1node (offline) capabilities=filesystem.edit",
                    ),
                ],
            ),
            Step::CliBy(
                &["skills", "update"],
                &[
                    ("9c85870e", "- shell: eligible"),
                    (
                        "6791fd14",
                        "- shell: ineligible (no connected host satisfies requires.bins",
                    ),
                ],
            ),
            Step::Cli(
                &["client", "read my notes"],
                "Assistant: You wrote alpha and beta.",
            ),
            Step::Cli(
                &["client", "what does your log say"],
                "Assistant: The node log has lines.",
            ),
            // A background command: the node reports its end later
            // (node.exec.event), and the agent hears of it in a run.
            Step::Cli(
                &["client", "build it in the background"],
                "Assistant: Started the build.",
            ),
            Step::Wait(3_000),
            Step::StopNode,
        ],
    },
];

/// The fields v1's CLI and node read in what the gateway sends them
/// (besides `ok` of every answer), as the recordings show them consumed:
/// printed by the commands or acted on by the node.
const READS: &[Reads] = &[
    Reads {
        key: "res chat.send",
        paths: &["payload.status="],
    },
    Reads {
        key: "evt chat",
        paths: &[
            // The client keeps only the events of the key it sent.
            "payload.sessionKey=",
            "payload.runId=",
            "payload.state=",
            "payload.message.content",
            "payload.message.content[].type",
            "payload.message.content[].text",
        ],
    },
    Reads {
        key: "res config.get",
        paths: &[
            "payload.path=",
            "payload.value=",
            "payload.config.userTimezone=",
        ],
    },
    Reads {
        key: "res sessions.list",
        paths: &[
            "payload.sessions[].sessionKey",
            "payload.sessions[].label",
            "payload.sessions[].lastActiveAt",
            "payload.count",
        ],
    },
    Reads {
        key: "res session.get",
        paths: &[
            "payload.sessionId",
            "payload.messageCount=",
            "payload.tokens.input",
            "payload.tokens.output",
            "payload.tokens.total",
            "payload.settings",
            "payload.resetPolicy.mode",
            "payload.resetPolicy.atHour",
            "payload.resetPolicy.idleMinutes",
            "payload.label",
            "payload.previousSessionIds",
            "payload.createdAt",
        ],
    },
    Reads {
        key: "res session.stats",
        paths: &[
            "payload.messageCount=",
            "payload.tokens.input",
            "payload.tokens.output",
            "payload.tokens.total",
            "payload.uptime",
        ],
    },
    Reads {
        key: "res session.preview",
        paths: &[
            "payload.messageCount=",
            "payload.messages[].role=",
            "payload.messages[].content",
            "payload.messages[].content[].type",
            "payload.messages[].content[].text",
            "payload.messages[].toolName",
            "payload.messages[].isError",
        ],
    },
    Reads {
        key: "res tools.list",
        paths: &["payload.tools[].name", "payload.tools[].description"],
    },
    Reads {
        key: "res tool.invoke",
        paths: &["payload.result"],
    },
    Reads {
        key: "res skills.status",
        paths: SKILLS,
    },
    Reads {
        key: "res skills.update",
        paths: SKILLS,
    },
    Reads {
        key: "res skills.update",
        paths: &["payload.updatedNodeCount=", "payload.errors="],
    },
    Reads {
        key: "res heartbeat.status",
        paths: &[
            "payload.agents",
            "payload.agents{}.nextHeartbeatAt",
            "payload.agents{}.lastHeartbeatAt",
            "payload.agents{}.lastActive.channel",
            "payload.agents{}.lastActive.peer.name",
            "payload.agents{}.lastActive.peer.id",
            "payload.agents{}.lastActive.timestamp",
        ],
    },
    Reads {
        key: "res pair.list",
        paths: &[
            "payload.pairs",
            "payload.pairs{}.senderId=",
            "payload.pairs{}.senderName=",
            "payload.pairs{}.channel=",
            "payload.pairs{}.firstMessage=",
            "payload.pairs{}.requestedAt",
        ],
    },
    Reads {
        key: "res channels.list",
        paths: &[
            "payload.channels[].channel=",
            "payload.channels[].accountId=",
            "payload.channels[].connectedAt",
            "payload.channels[].lastMessageAt",
        ],
    },
    // The node: what it runs and the ids it answers with.
    Reads {
        key: "evt tool.invoke",
        paths: &["payload.callId", "payload.tool=", "payload.args="],
    },
    Reads {
        key: "evt node.probe",
        paths: &[
            "payload.probeId",
            "payload.kind=",
            "payload.bins",
            "payload.timeoutMs",
        ],
    },
    Reads {
        key: "evt logs.get",
        paths: &["payload.callId", "payload.lines"],
    },
];

/// What both builds read in `skills.status` and `skills.update`
/// (6791fd14 reads `online`, which this gateway does not send).
const SKILLS: &[&str] = &[
    "payload.agentId=",
    "payload.requiredBins=",
    "payload.nodes[].nodeId=",
    "payload.nodes[].hostRole=",
    "payload.nodes[].hostOs",
    "payload.nodes[].hostBins",
    "payload.nodes[].canProbeBins=",
    "payload.nodes[].hostCapabilities",
    "payload.nodes[].online",
    "payload.skills[].name=",
    "payload.skills[].eligible=",
    "payload.skills[].reasons",
];

/// What a scenario needs besides the v1 binary, the same when recording
/// and replaying: the gateway on the fake LLM, and for `cli` a stranger
/// waiting for pairing on a channel connected over v1's WebSocket
/// fallback (kept connected, so `channel list` shows it).
struct World {
    gw: Workerd,
    llm: FakeLlm,
    _channel: Option<Client>,
    workspace: tempfile::TempDir,
}

async fn world(scenario: &str) -> World {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    let workspace = tempfile::tempdir().unwrap();
    let mut channel = None;
    match scenario {
        "cli" => {
            // Two strangers wait for pairing: one to approve, one to reject.
            let mut discord = raw_channel(&gw.url(), TOKEN, "discord").await;
            for (id, name) in [("81", "Alice"), ("82", "Bob")] {
                let res = discord
                    .request(
                        "channel.inbound",
                        json!({"channel": "discord", "accountId": "default",
                               "message": {"messageId": format!("m{id}"),
                                           "peer": {"kind": "dm", "id": format!("dm-{id}")},
                                           "sender": {"id": id, "name": name},
                                           "text": "hello?", "timestamp": 1_795_529_100_000i64}}),
                    )
                    .await;
                assert_eq!(
                    res.payload,
                    Some(json!({"ok": true, "status": "pendingPairing"}))
                );
            }
            channel = Some(discord);
        }
        "node" => {
            std::fs::write(workspace.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
            // A skill that needs `sh`: the gateway probes the node for it.
            let res = owner
                .request(
                    "workspace.write",
                    json!({"path": "skills/shell/SKILL.md",
                           "content": "---\ndescription: Run sh.\nmetadata:\n  gsv:\n    requires:\n      bins: [sh]\n---\n# Shell\n"}),
                )
                .await;
            assert!(res.ok, "{res:?}");
            llm.script(
                "build it in the background",
                vec![
                    Llm::tool_call(
                        "call_b",
                        &format!("{NODE_ID}__Bash"),
                        json!({"command": "echo built", "background": true}),
                    ),
                    Llm::text("Started the build."),
                ],
            );
            llm.script(
                "what does your log say",
                vec![
                    Llm::tool_call(
                        "call_l",
                        "gsv__LogsGet",
                        json!({"nodeId": NODE_ID, "lines": 5}),
                    ),
                    Llm::text("The node log has lines."),
                ],
            );
            llm.script(
                "read my notes",
                vec![
                    Llm::tool_call(
                        "call_r",
                        &format!("{NODE_ID}__Read"),
                        json!({"path": "notes.txt"}),
                    ),
                    Llm::text("You wrote alpha and beta."),
                ],
            );
        }
        other => panic!("unknown scenario {other}"),
    }
    owner.close().await;
    World {
        gw,
        llm,
        _channel: channel,
        workspace,
    }
}

fn fixture_path(commit: &str, scenario: &str) -> PathBuf {
    repo_root()
        .join("tests")
        .join("fixtures")
        .join("v1")
        .join(commit)
        .join(format!("{scenario}.jsonl"))
}

async fn replay_fixture(commit: &str, scenario: &str) {
    let path = fixture_path(commit, scenario);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (see this file's header)", path.display()));
    let fixture = Fixture::parse(&text);
    assert_eq!(fixture.header["v1"]["commit"], commit);
    let world = world(scenario).await;
    let placeholders = vec![
        ("$TOKEN".to_string(), TOKEN.to_string()),
        (
            "$WORKSPACE".to_string(),
            world.workspace.path().display().to_string(),
        ),
        ("$HOME".to_string(), "/home/v1".to_string()),
    ];
    let done = replay(
        &world.gw.url(),
        &fixture,
        &placeholders,
        READS,
        Duration::from_secs(60),
    )
    .await;
    // The replay waited for and checked each answer the client needed:
    // as many as the recording holds.
    let recorded: Vec<&Value> = fixture
        .frames
        .iter()
        .filter(|f| gsv_e2e::v1_replay::is_awaited(&f.frame))
        .map(|f| &f.frame)
        .collect();
    assert_eq!(done.checked.len(), recorded.len(), "{:?}", done.checked);
    if scenario == "node" {
        // The end of the node's background command, as it reported it,
        // reached the agent in a run of its own.
        let heard = format!("on node {NODE_ID} finished");
        poll::until(secs(20), ms(100), async || {
            world
                .llm
                .requests()
                .iter()
                .any(|r| r.body.to_string().contains(&heard))
                .then_some(())
                .ok_or("the agent never heard that the background command finished")
        })
        .await;
    }
}

#[tokio::test]
async fn replay_9c85870e_cli() {
    replay_fixture("9c85870e", "cli").await;
}

#[tokio::test]
async fn replay_9c85870e_node() {
    replay_fixture("9c85870e", "node").await;
}

#[tokio::test]
async fn replay_6791fd14_cli() {
    replay_fixture("6791fd14", "cli").await;
}

#[tokio::test]
async fn replay_6791fd14_node() {
    replay_fixture("6791fd14", "node").await;
}

/// Runs the v1 binary with a clean environment: its config in `home`,
/// the gateway's URL and token from the environment, as a user would set
/// them.
fn v1_command(bin: &Path, home: &Path, url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GSV_URL", url)
        .env("GSV_TOKEN", TOKEN)
        .stdin(Stdio::null());
    cmd
}

async fn record(commit: &str, bin: &Path, scenario: &Scenario) {
    let world = world(scenario.name).await;
    let recorder = WsRecorder::start(&world.gw.url());
    let home = tempfile::tempdir().unwrap();
    let mut node: Option<Child> = None;
    let mut runs = Vec::new();
    let mut failed = Vec::new();
    for step in scenario.steps {
        let (args, expect, typed) = match step {
            Step::Cli(args, expect) => (*args, *expect, None),
            Step::CliTyped(args, typed, expect) => (*args, *expect, Some(*typed)),
            Step::Wait(ms) => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                continue;
            }
            Step::CliBy(args, texts) => {
                let text = texts
                    .iter()
                    .find(|(c, _)| *c == commit)
                    .map(|(_, t)| *t)
                    .unwrap_or_else(|| panic!("no expected text for {commit}"));
                (*args, text, None)
            }
            Step::StartNode => {
                let child = v1_command(
                    bin,
                    home.path(),
                    &recorder.url(),
                    &["node", "--foreground", "--id", NODE_ID, "--workspace"],
                )
                .arg(world.workspace.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
                node = Some(child);
                let mut watcher = Client::connect(&world.gw.url(), Some(TOKEN)).await;
                watcher
                    .wait_for_tools(&[&format!("{NODE_ID}__Read")], Duration::from_secs(30))
                    .await;
                watcher.close().await;
                runs.push(json!({"args": ["node", "--foreground", "--id", NODE_ID,
                                           "--workspace", "$WORKSPACE"]}));
                continue;
            }
            Step::StopNode => {
                if let Some(mut child) = node.take() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                continue;
            }
        };
        let out = tokio::task::block_in_place(|| {
            let mut cmd = v1_command(bin, home.path(), &recorder.url(), args);
            let Some(typed) = typed else {
                return cmd.output().unwrap();
            };
            let mut child = cmd
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // Line by line, each once the previous answer is in (the
            // client reads its prompt's line only after the answer).
            let mut stdin = child.stdin.take().unwrap();
            for line in typed.lines() {
                use std::io::Write;
                writeln!(stdin, "{line}").unwrap();
                std::thread::sleep(Duration::from_millis(1_500));
            }
            drop(stdin);
            child.wait_with_output().unwrap()
        });
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        println!("$ gsv {}\n{stdout}{stderr}", args.join(" "));
        if !(out.status.success() && stdout.contains(expect)) {
            failed.push(format!(
                "v1 {commit}: `gsv {}` did not print {expect:?}:\n{stdout}\n{stderr}",
                args.join(" ")
            ));
        }
        runs.push(
            json!({"args": args, "stdin": typed, "stdout": stdout, "stderr": stderr,
                                 "exit": out.status.code()}),
        );
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // Frames still in flight reach the proxy.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let scrub = vec![
        (TOKEN.to_string(), "$TOKEN".to_string()),
        (
            world.workspace.path().display().to_string(),
            "$WORKSPACE".to_string(),
        ),
        (home.path().display().to_string(), "$HOME".to_string()),
    ];
    let fixture = Fixture {
        header: json!({"v1": {
            "commit": commit,
            "scenario": scenario.name,
            "source": "https://github.com/deathbyknowledge/gsv (cli/), built with cargo build --locked",
            "recordedBy": "cargo test -p gsv-e2e --test v1_clients record_v1_fixtures -- --ignored",
            "runs": substitute(&Value::Array(runs), &scrub),
        }}),
        frames: recorder
            .frames()
            .into_iter()
            .map(|mut f| {
                f.frame = substitute(&f.frame, &scrub);
                f
            })
            .collect(),
    };
    let path = fixture_path(commit, scenario.name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, fixture.to_jsonl()).unwrap();
    println!("wrote {}", path.display());
}

/// Records the fixtures from the v1 binaries named by
/// `GSV_V1_BIN_<COMMIT>` (see this file's header).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs GSV v1's CLI built outside this repository"]
async fn record_v1_fixtures() {
    let mut recorded = 0;
    for commit in COMMITS {
        let var = format!("GSV_V1_BIN_{}", commit.to_uppercase());
        let Some(bin) = std::env::var_os(&var) else {
            println!("{var} not set: {commit} not recorded");
            continue;
        };
        let only = std::env::var("GSV_V1_SCENARIO").ok();
        for scenario in SCENARIOS {
            if only.as_deref().is_some_and(|o| o != scenario.name) {
                continue;
            }
            record(commit, Path::new(&bin), scenario).await;
            recorded += 1;
        }
    }
    assert!(recorded > 0, "no GSV_V1_BIN_<COMMIT> given");
}
