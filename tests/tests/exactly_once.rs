//! Exactly once from chat app to answer, end to end: the real gateway and
//! the real WhatsApp and Discord channel Workers in one workerd, the fakes
//! of both platforms and of the model on loopback. A test-only fault
//! (`GSV_FAULT`, `gsv_protocol::fault`) stops the flow after each step
//! from the webhook to the platform's answer; workerd is then killed and
//! started again without it, and the channels' and the gateway's own
//! retries must bring every message to exactly one answer, in order. The
//! fakes count what a person would see.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::channel_rig::{
    discord_channel_config, start_bot, start_number, whatsapp_channel_config, whatsapp_secrets,
};
use gsv_e2e::fake_discord::{messages, FakeDiscord};
use gsv_e2e::fake_llm::{FakeLlm, RecordedRequest, Step};
use gsv_e2e::fake_whatsapp::FakeWhatsApp;
use gsv_e2e::harness::{gateway_dev_config, only_services, Workerd};
use gsv_e2e::poll::{self, ms, secs};
use gsv_e2e::ws::Client;
use gsv_protocol::channel_key::derive_channel_key;
use gsv_protocol::fault;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const TOKEN: &str = "test-token";
const ANN: &str = "16505551234";
const BOB: &str = "16505559876";
/// The Discord DM channel of the fake's user.
const DM: &str = "300000000000000003";

/// Every worker's `.dev.vars`: the secrets, the test clock, and the step
/// to stop at, if any.
fn vars(stop_at: Option<&str>) -> String {
    let mut v = format!(
        "GSV_AUTH_TOKEN={TOKEN}\nGSV_TEST_CLOCK=1\n{}",
        whatsapp_secrets(&derive_channel_key(TOKEN))
    );
    if let Some(step) = stop_at {
        v.push_str(&format!("{}={step}\n", fault::FAULT_VAR));
    }
    v
}

/// The gateway with both channels in one workerd, WhatsApp's webhook on
/// a port of its own.
fn start_gateway(wa: &FakeWhatsApp, discord: &FakeDiscord, stop_at: Option<&str>) -> Workerd {
    let gw = Workerd::start_configs_exposing(
        &[
            (
                "wrangler.toml",
                only_services(
                    &gateway_dev_config(),
                    &["CHANNEL_DISCORD", "CHANNEL_WHATSAPP"],
                ),
            ),
            (
                "discord.toml",
                discord_channel_config(&discord.api_base(), ""),
            ),
            ("whatsapp.toml", whatsapp_channel_config(&wa.api_base())),
        ],
        Some(vars(stop_at)),
        &["gsv-channel-whatsapp"],
    );
    wa.set_webhook_url(&format!(
        "{}/webhook",
        gw.exposed_url("gsv-channel-whatsapp")
    ));
    gw
}

struct Rig {
    wa: FakeWhatsApp,
    discord: FakeDiscord,
    llm: FakeLlm,
    gw: Workerd,
}

async fn start() -> Rig {
    let wa = FakeWhatsApp::start();
    let discord = FakeDiscord::start();
    discord.set_heartbeat_interval_ms(1_000);
    discord.set_heartbeat_grace_ms(10_000);
    let llm = FakeLlm::start().await;
    let gw = start_gateway(&wa, &discord, None);
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    owner
        .config_set("channels.whatsapp.dmPolicy", json!("open"))
        .await;
    owner
        .config_set("channels.discord.dmPolicy", json!("open"))
        .await;
    start_number(&mut owner).await;
    start_bot(&mut owner, &discord).await;
    Rig {
        wa,
        discord,
        llm,
        gw,
    }
}

impl Rig {
    /// Kills workerd and starts it again on the same state, stopping at
    /// `stop_at` from then on (none: the flow runs through).
    fn restart(&mut self, stop_at: Option<&str>) {
        self.gw.set_dev_vars(&vars(stop_at));
        self.gw.restart();
    }

    /// Waits until the flow stopped at `step`, then crashes right there:
    /// workerd killed and started again without the fault.
    fn crash_at(&mut self, step: &str) {
        let stopped = format!("fault: stopped at {step}");
        poll::until_blocking(secs(60), ms(200), || {
            let log = self.gw.log();
            if log.contains(&stopped) {
                Ok(())
            } else {
                Err(format!("the flow never reached {step}:\n{log}"))
            }
        });
        self.restart(None);
    }

    /// `wa_id` writes `text`; delivered again until the webhook takes it,
    /// as Meta does.
    fn whatsapp_says(&self, wa_id: &str, text: &str) {
        let name = if wa_id == ANN { "Ann" } else { "Bob" };
        let mut status = self.wa.user_says(wa_id, name, text).status;
        let deadline = Instant::now() + Duration::from_secs(60);
        while status != 200 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
            status = self.wa.redeliver_last();
        }
        assert_eq!(status, 200, "the webhook never took {text:?}");
    }

    /// The texts WhatsApp accepted for `wa_id`, in order.
    fn whatsapp_answers(&self, wa_id: &str) -> Vec<String> {
        self.wa
            .sent()
            .iter()
            .filter(|m| m.to == wa_id)
            .map(|m| {
                m.body["text"]["body"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    }

    /// The messages the person sees in the Discord DM, in order: posts
    /// with the same nonce are one message (`enforce_nonce`).
    fn discord_answers(&self) -> Vec<String> {
        let path = format!("/channels/{DM}/messages");
        let mut nonces = std::collections::HashSet::new();
        self.discord
            .rest_log()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path == path && r.status == 200)
            .filter(|r| r.body["enforce_nonce"] != true || nonces.insert(r.body["nonce"].clone()))
            .map(|r| r.body["content"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// Model requests whose last user message holds `needle`.
    fn asked(&self, needle: &str) -> usize {
        self.llm
            .requests()
            .iter()
            .filter(|r| last_user_text(r).contains(needle))
            .count()
    }
}

fn last_user_text(r: &RecordedRequest) -> String {
    r.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_after_any_step_still_answers_each_message_once_in_order() {
    let mut rig = start().await;
    let mut expected = Vec::new();
    for (i, step) in fault::STEPS.iter().enumerate() {
        let question = format!("question {i}");
        let answer = format!("answer {i}: after {step}");
        rig.llm.script(&question, vec![Step::text(&answer)]);
        rig.restart(Some(step));
        rig.whatsapp_says(ANN, &question);
        rig.crash_at(step);
        expected.push(answer.clone());
        poll::until_blocking(secs(120), ms(200), || {
            let answers = rig.whatsapp_answers(ANN);
            if answers.contains(&answer) {
                Ok(())
            } else {
                Err(format!(
                    "{question} was never answered after a crash at {step}: {answers:#?}"
                ))
            }
        });
        // Time for a retry to do harm, were one left to do it.
        std::thread::sleep(Duration::from_secs(3));
        assert_eq!(
            (rig.whatsapp_answers(ANN), rig.asked(&question)),
            (expected.clone(), 1),
            "after a crash at {step}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discord_answer_cut_off_at_the_platform_is_seen_once() {
    let mut rig = start().await;
    let mut expected = Vec::new();
    for (i, step) in [fault::PLATFORM_CALLED, fault::PLATFORM_ANSWERED]
        .into_iter()
        .enumerate()
    {
        let question = format!("discord question {i}");
        let answer = format!("discord answer {i}: after {step}");
        rig.llm.script(&question, vec![Step::text(&answer)]);
        rig.restart(Some(step));
        rig.discord
            .dispatch("MESSAGE_CREATE", messages::dm(&format!("9{i}"), &question));
        rig.crash_at(step);
        expected.push(answer.clone());
        // Posted again after the restart (same nonce): one message.
        let path = format!("/channels/{DM}/messages");
        let posts = |rig: &Rig| {
            rig.discord
                .rest_log()
                .iter()
                .filter(|r| r.path == path && r.body["content"] == answer.as_str())
                .count()
        };
        poll::until_blocking(secs(120), ms(200), || {
            (posts(&rig) >= 2)
                .then_some(())
                .ok_or_else(|| format!("the gateway never retried the piece cut off at {step}"))
        });
        assert_eq!(
            (rig.discord_answers(), rig.asked(&question)),
            (expected.clone(), 1),
            "after a crash at {step}"
        );
    }
}

/// A small deterministic generator (xorshift): the kills land at moments
/// that differ from one another but not from run to run.
struct Moments(u64);

impl Moments {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }
}

/// The numbers of `soak NNN` in each answer, in order.
fn soak_numbers(answers: &[String]) -> Vec<u32> {
    answers
        .iter()
        .filter_map(|a| {
            let at = a.find("soak ")? + 5;
            a.get(at..at + 3)?.parse().ok()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_messages_through_five_crashes_are_each_answered_once() {
    let mut rig = start().await;
    let mut moments = Moments(0x9E37_79B9_7F4A_7C15);
    let mut kills: Vec<u64> = (0..5).map(|k| 20 + k * 36 + moments.next(30)).collect();
    kills.sort_unstable();
    // Three chats, in turn: Ann and Bob on WhatsApp, the Discord DM. The
    // model echoes each message, so its answer names it.
    let mut sent: [Vec<u32>; 3] = Default::default();
    for n in 0..200u32 {
        let text = format!("soak {n:03}");
        let chat = (n % 3) as usize;
        match chat {
            0 => rig.whatsapp_says(ANN, &text),
            1 => rig.whatsapp_says(BOB, &text),
            _ => {
                rig.discord
                    .dispatch("MESSAGE_CREATE", messages::dm(&format!("8{n:03}"), &text));
            }
        }
        sent[chat].push(n);
        if kills.contains(&u64::from(n)) {
            // Killed at a moment in the message's way: 0–300 ms after it
            // was handed over.
            std::thread::sleep(Duration::from_millis(moments.next(300)));
            rig.restart(None);
        } else {
            std::thread::sleep(Duration::from_millis(30));
        }
    }
    let answered = |rig: &Rig| {
        [
            soak_numbers(&rig.whatsapp_answers(ANN)),
            soak_numbers(&rig.whatsapp_answers(BOB)),
            soak_numbers(&rig.discord_answers()),
        ]
    };
    let all = |got: &[Vec<u32>; 3]| got.iter().map(Vec::len).sum::<usize>() >= 200;
    let done = poll::try_until_blocking(secs(300), ms(200), || {
        all(&answered(&rig)).then_some(()).ok_or(())
    })
    .is_ok();
    std::thread::sleep(Duration::from_secs(5));
    let got = answered(&rig);
    if !done {
        // What the gateway knows of the chat that stopped, for the report.
        let mut c = Client::connect(&rig.gw.url(), Some(TOKEN)).await;
        for (method, params) in [
            ("sessions.list", json!({})),
            ("channels.list", json!({})),
            ("channel.status", json!({"channel": "whatsapp"})),
        ] {
            let r = c.request(method, params).await;
            eprintln!("{method}: {}", r.payload.unwrap_or_default());
        }
        eprintln!(
            "kills after messages {kills:?}; the gateway's log:\n{}",
            rig.gw.log()
        );
        dump_objects(&rig.gw.persist_dir);
    }
    assert!(done, "not every message was answered: {got:?}");
    // Each chat's answers: every message once, in the order sent.
    assert_eq!(got, sent, "kills after messages {kills:?}");
}

/// What every Durable Object's SQLite under `dir` holds of the ledger, the
/// chat runs and the channel's sends (all but what is settled), for the
/// report of a chat that stopped. Needs the `sqlite3` command; skipped
/// without it.
fn dump_objects(dir: &std::path::Path) {
    let queries = [
        ("deliveries", "SELECT key, dest, status, attempts, next_at, error FROM deliveries WHERE status != 'sent'"),
        ("channel_runs", "SELECT * FROM channel_runs"),
        ("deadlines", "SELECT * FROM deadlines"),
        ("_cf_ALARM", "SELECT * FROM _cf_ALARM"),
    ];
    eprintln!(
        "now: {} ms",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "sqlite") {
                continue;
            }
            let run = |sql: &str| {
                std::process::Command::new("sqlite3")
                    .args(["-readonly", "-header"])
                    .arg(&path)
                    .arg(sql)
                    .output()
                    .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                    .unwrap_or_default()
            };
            let tables = run(".tables");
            eprintln!(
                "== {} tables: {}",
                path.display(),
                tables.split_whitespace().collect::<Vec<_>>().join(" ")
            );
            for (table, sql) in queries {
                if tables.split_whitespace().any(|t| t == table) {
                    eprintln!("-- {table}:\n{}", run(sql));
                }
            }
        }
    }
}
