//! `gsv doctor` end to end: the real gateway with the Discord channel
//! beside it (one workerd), the fake LLM and the fake Discord. A healthy
//! setup passes; then each broken state the doctor claims to find is made
//! on the same gateway, one step at a time, and the finding of its check
//! is read whole from `gsv doctor --json` before the state is mended.
//! Last, a wrong token and a URL nothing listens on.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::channel_rig::{start_bot, start_gateway_with_discord};
use gsv_e2e::fake_discord::FakeDiscord;
use gsv_e2e::fake_llm::{FakeLlm, Step, FAKE_API_KEY};
use gsv_e2e::harness::{free_port, run_gsv, Node};
use gsv_e2e::poll;
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::time::Duration;

const TOKEN: &str = "test-token";
const MISSING: &str = "definitely-not-a-bin-xyz";
const WAIT: Duration = Duration::from_secs(30);
const EVERY: Duration = Duration::from_millis(200);

/// `gsv doctor --json`: its exit code and its findings.
fn doctor(url: &str, token: &str) -> (i32, Vec<Value>) {
    let out = run_gsv(url, token, &["doctor", "--json"]);
    let findings: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "doctor --json printed no findings ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), findings)
}

/// The finding of check `name`.
fn of(findings: &[Value], name: &str) -> Value {
    findings
        .iter()
        .find(|f| f["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no {name} finding in {findings:#?}"))
}

fn finding(name: &str, status: &str, words: &str, fix: Option<&str>) -> Value {
    json!({"name": name, "status": status, "words": words, "fix": fix})
}

/// The payload of a request that must succeed.
async fn rpc(c: &mut Client, method: &str, params: Value) -> Value {
    let res = c.request(method, params).await;
    assert!(res.ok, "{method}: {res:?}");
    res.payload.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_finds_each_broken_state_and_passes_a_healthy_setup() {
    let discord = FakeDiscord::start();
    discord.set_heartbeat_interval_ms(1_000);
    discord.set_heartbeat_grace_ms(10_000);
    let llm = FakeLlm::start().await;
    let gw = start_gateway_with_discord(&discord, TOKEN);
    let url = gw.url();
    let mut c = Client::connect(&url, Some(TOKEN)).await;
    c.config_set("apiKeys.anthropic", json!(FAKE_API_KEY)).await;
    c.config_set(
        "providers.anthropic.baseUrl",
        json!(llm.base_url_anthropic()),
    )
    .await;
    // The first run writes the workspace; its first-run ritual done.
    let run = c.chat_send("agent:main:main", "hello").await;
    c.run_events(&run).await;
    rpc(&mut c, "workspace.delete", json!({"path": "BOOTSTRAP.md"})).await;
    start_bot(&mut c, &discord).await;

    // Healthy: every check passes, in a few seconds.
    let started = std::time::Instant::now();
    let (code, found) = doctor(&url, TOKEN);
    let took = started.elapsed();
    println!("healthy doctor took {took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(
        (code, found),
        (
            0,
            vec![
                finding("gateway", "ok", &format!("{url} answers: gateway 0.1.0, protocol 1"), None),
                finding("token", "ok", "the gateway accepted the token", None),
                finding(
                    "model",
                    "ok",
                    &format!(
                        "anthropic/claude-sonnet-4-20250514 answers (anthropic-messages at {})",
                        llm.base_url_anthropic()
                    ),
                    None
                ),
                finding("channels", "ok", "connected: discord/default", None),
                finding(
                    "nodes",
                    "ok",
                    "no node is connected: the agent has its own tools only (lend it a machine with gsv node install)",
                    None
                ),
                finding("cron", "ok", "no jobs", None),
                finding("heartbeat", "ok", "main every 30 min, no beat failing", None),
                finding("memory", "ok", "0 memories, keyword search, nothing broken", None),
                finding("workspace", "ok", "commissioned, 7 files at its top", None),
                finding(
                    "trust",
                    "ok",
                    "only you reach the main session, and nobody else gets node, workspace-write, config or cross-session tools",
                    None
                ),
            ]
        )
    );

    // Not a terminal: plain ASCII marks, one line per check.
    let out = run_gsv(&url, TOKEN, &["doctor"]);
    assert_eq!(
        (out.status.code(), String::from_utf8(out.stdout).unwrap()),
        (
            Some(0),
            format!(
                "\
ok   gateway    {url} answers: gateway 0.1.0, protocol 1.
ok   token      the gateway accepted the token.
ok   model      anthropic/claude-sonnet-4-20250514 answers (anthropic-messages at {}).
ok   channels   connected: discord/default.
ok   nodes      no node is connected: the agent has its own tools only (lend it a machine with gsv node install).
ok   cron       no jobs.
ok   heartbeat  main every 30 min, no beat failing.
ok   memory     0 memories, keyword search, nothing broken.
ok   workspace  commissioned, 7 files at its top.
ok   trust      only you reach the main session, and nobody else gets node, workspace-write, config or cross-session tools.
Everything checked is fine.
",
                llm.base_url_anthropic()
            )
        )
    );

    // BOOTSTRAP.md back: the first-run ritual is not done (a warning).
    rpc(
        &mut c,
        "workspace.write",
        json!({"path": "BOOTSTRAP.md", "content": "# Bootstrap\n"}),
    )
    .await;
    let (code, found) = doctor(&url, TOKEN);
    assert_eq!(
        (code, of(&found, "workspace")),
        (
            0,
            finding(
                "workspace",
                "warn",
                "the agent's first-run ritual is not done: BOOTSTRAP.md is still there, and until the agent \
                 deletes it each run is about learning who you are (gsv workspace rm BOOTSTRAP.md skips it)",
                Some("gsv chat")
            )
        )
    );
    rpc(&mut c, "workspace.delete", json!({"path": "BOOTSTRAP.md"})).await;

    // Risky settings: someone else in the main session, a chat app open to anyone.
    c.config_set("session.shareMainWith", json!(["discord:7"]))
        .await;
    c.config_set("channels.discord.dmPolicy", json!("open"))
        .await;
    let (code, found) = doctor(&url, TOKEN);
    assert_eq!(
        (code, of(&found, "trust")),
        (
            0,
            finding(
                "trust",
                "warn",
                "session.shareMainWith puts other people in your main session (discord:7): they read MEMORY.md \
                 and your conversation there, at level approved; anyone who writes to the bot on discord \
                 reaches the agent (channels.discord.dmPolicy open)",
                Some("gsv config set session.shareMainWith '[]'")
            )
        )
    );
    c.config_set("session.shareMainWith", Value::Null).await;
    c.config_set("channels.discord.dmPolicy", Value::Null).await;

    // Discord drops the bot for its token (4004): the account is in error.
    discord.close_connection(4004);
    let account = json!({"channel": "discord", "accountId": "default"});
    poll::until(WAIT, EVERY, async || {
        let r = rpc(&mut c, "channel.status", account.clone()).await;
        match r["accounts"][0]["error"].is_string() {
            true => Ok(()),
            false => Err(r),
        }
    })
    .await;
    let (code, found) = doctor(&url, TOKEN);
    assert_eq!(
        (code, of(&found, "channels")),
        (
            1,
            finding(
                "channels",
                "fail",
                "discord/default is not connected: Discord closed the gateway with code 4004 (authentication \
                 failed: Discord refused the bot token); not reconnecting until the account is started again",
                Some("gsv channel start discord")
            )
        )
    );
    // Mended: started again.
    let again = json!({"channel": "discord", "accountId": "default",
                       "config": {"botToken": gsv_e2e::fake_discord::FAKE_BOT_TOKEN}});
    rpc(&mut c, "channel.start", again).await;
    poll::until(WAIT, EVERY, async || {
        let r = rpc(&mut c, "channel.status", account.clone()).await;
        match r["accounts"][0]["connected"] == true {
            true => Ok(()),
            false => Err(r),
        }
    })
    .await;

    // A node without a binary a skill needs (and, before it connects, a
    // skill that needs a node).
    let skill = format!(
        "---\ndescription: Needs a ghost.\nmetadata:\n  gsv:\n    requires:\n      bins: [{MISSING}]\n---\n# Ghost\n"
    );
    rpc(
        &mut c,
        "workspace.write",
        json!({"path": "skills/ghost/SKILL.md", "content": skill}),
    )
    .await;
    let (code, found) = doctor(&url, TOKEN);
    assert_eq!(
        (code, of(&found, "nodes")),
        (
            0,
            finding(
                "nodes",
                "warn",
                "no node is connected, and skill ghost needs one",
                Some("gsv node install")
            )
        )
    );
    let mut laptop = Node::start(&url, TOKEN, "laptop");
    poll::until(WAIT, EVERY, async || {
        let st = rpc(&mut c, "skills.status", json!({})).await;
        match st["nodes"][0]["hostBinStatusUpdatedAt"].is_u64() {
            true => Ok(()),
            false => Err(st),
        }
    })
    .await;
    let (code, found) = doctor(&url, TOKEN);
    assert_eq!(
        (code, of(&found, "nodes")),
        (
            0,
            finding(
                "nodes",
                "warn",
                &format!("laptop lacks {MISSING} (skill ghost): install it there, then ask again"),
                Some("gsv skills update --force")
            )
        )
    );
    rpc(
        &mut c,
        "workspace.delete",
        json!({"path": "skills/ghost/SKILL.md"}),
    )
    .await;
    laptop.kill();

    // A memory that lost its files (a PENDING node without its layers, as
    // a cut write leaves it), found by the repair job.
    let broken = "accounts/default/agents/main/memories/cases/vpn/";
    gw.r2_put_outside(&format!("{broken}content.md"), "Deploys need the VPN.");
    gw.r2_put_outside(
        &format!("{broken}.meta.json"),
        &json!({"uri": "ctx://default/agents/main/memories/cases/vpn", "context_type": "MEMORY",
                "category": "cases", "level": 3, "owner_space": "agent:main", "status": "PENDING",
                "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                "version": 1, "tags": []})
        .to_string(),
    );
    rpc(&mut c, "memory.repair", json!({})).await;
    let (code, found) = doctor(&url, TOKEN);
    assert_eq!(
        (code, of(&found, "memory")),
        (
            0,
            finding(
                "memory",
                "warn",
                "1 memory lost files and cannot be recalled: ctx://default/agents/main/memories/cases/vpn \
                 (missing .relations.json, .abstract.md, .overview.md); restore the files, then repair",
                Some("gsv memory repair")
            )
        )
    );

    // No key: the model check fails, and so do a cron job and a heartbeat.
    c.config_set("apiKeys.anthropic", Value::Null).await;
    let job = rpc(
        &mut c,
        "cron.add",
        json!({"name": "tidy", "schedule": {"kind": "every", "everyMs": 3_600_000},
               "spec": {"kind": "task", "message": "tidy MEMORY.md"}}),
    )
    .await;
    let id = job["job"]["id"].as_str().unwrap().to_string();
    rpc(&mut c, "cron.run", json!({"id": id, "mode": "force"})).await;
    rpc(&mut c, "heartbeat.trigger", json!({})).await;
    poll::until(WAIT, EVERY, async || {
        let jobs = rpc(&mut c, "cron.list", json!({})).await;
        let beats = rpc(&mut c, "heartbeat.status", json!({})).await;
        let last = (
            jobs["jobs"][0]["state"]["lastStatus"].clone(),
            beats["agents"]["main"]["lastStatus"].clone(),
        );
        match last == (json!("error"), json!("error")) {
            true => Ok(()),
            false => Err(format!("{jobs} {beats}")),
        }
    })
    .await;
    let no_key = "No API key configured for provider 'anthropic'. Set one with: gsv config set apiKeys.anthropic <key>";
    let (code, found) = doctor(&url, TOKEN);
    assert_eq!(
        (
            code,
            of(&found, "model"),
            of(&found, "cron"),
            of(&found, "heartbeat")
        ),
        (
            1,
            finding(
                "model",
                "fail",
                "no API key is set for anthropic, so the agent cannot answer",
                Some("gsv config set apiKeys.anthropic <key>")
            ),
            finding(
                "cron",
                "warn",
                &format!("job tidy ({id}) failed its last run: {no_key}"),
                Some(&format!("gsv cron run {id}"))
            ),
            finding(
                "heartbeat",
                "warn",
                &format!("main's last beat failed: {no_key}"),
                Some("gsv heartbeat trigger")
            ),
        )
    );

    // A key the provider refuses.
    c.config_set("apiKeys.anthropic", json!("sk-wrong")).await;
    let (code, found) = doctor(&url, TOKEN);
    assert_eq!(
        (code, of(&found, "model")),
        (
            1,
            finding(
                "model",
                "fail",
                "anthropic rejected the API key (HTTP 401: invalid x-api-key)",
                Some("gsv config set apiKeys.anthropic <key>")
            )
        )
    );

    // A model the provider does not know (the fake answers its 404).
    c.config_set("apiKeys.anthropic", json!(FAKE_API_KEY)).await;
    c.config_set("model.id", json!("claude-nope-9")).await;
    llm.script("Reply with the word OK.", vec![Step::status(404)]);
    let (code, found) = doctor(&url, TOKEN);
    assert_eq!(
        (code, of(&found, "model")),
        (
            1,
            finding(
                "model",
                "fail",
                "anthropic rejected the request (HTTP 404: Not found): is claude-nope-9 a model anthropic offers?",
                Some("gsv config set model.id <model>")
            )
        )
    );
    assert_eq!(
        llm.requests().last().unwrap().body["model"],
        json!("claude-nope-9")
    );
    c.config_set("model.id", Value::Null).await;

    // A token the gateway does not take: the gateway is there, the token
    // is wrong, and nothing else can be asked.
    let (code, found) = doctor(&url, "not-the-token");
    assert_eq!(
        (code, found),
        (
            1,
            vec![
                finding(
                    "gateway",
                    "ok",
                    &format!("{url} answers (its version shows once it accepts the token)"),
                    None
                ),
                finding(
                    "token",
                    "fail",
                    "the gateway refused the token: it is not the gateway's GSV_AUTH_TOKEN",
                    Some("gsv local-config set gateway.token <token>")
                ),
            ]
        )
    );

    // Nothing at the URL at all: exit code 2.
    let nowhere = format!("ws://127.0.0.1:{}/ws", free_port());
    let (code, found) = doctor(&nowhere, TOKEN);
    assert_eq!(
        (code, found),
        (
            2,
            vec![finding(
                "gateway",
                "fail",
                &format!(
                    "nothing answers at {nowhere} (Connection refused (os error 111)): is the gateway running there?"
                ),
                Some("bash scripts/dev.sh")
            )]
        )
    );
}
