//! The checks over whole answers, the rendering and the exit codes.

use super::checks::*;
use super::*;
use gsv_protocol::{ChannelStatusRpcResult, ModelCheckFailure, Trust};
use serde::de::DeserializeOwned;
use serde_json::json;

const URL: &str = "ws://127.0.0.1:8787/ws";
const NOW: i64 = 1_795_529_100_000;
const MIN: i64 = 60_000;

fn from<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

fn f(name: &'static str, status: Status, words: &str, fix: Option<&str>) -> Finding {
    Finding {
        name,
        status,
        words: words.into(),
        fix: fix.map(String::from),
    }
}

fn hello(version: &str) -> HelloOkResult {
    from(json!({"type": "hello-ok", "protocol": 1,
        "server": {"version": version, "connectionId": "c1"},
        "features": {"methods": ["connect", "model.check"], "events": []}}))
}

#[test]
fn the_gateway_and_the_token() {
    assert_eq!(
        connection(URL, &Ok(hello("0.1.0")), "0.1.0"),
        vec![
            f(
                GATEWAY,
                Status::Ok,
                "ws://127.0.0.1:8787/ws answers: gateway 0.1.0, protocol 1",
                None
            ),
            f(TOKEN, Status::Ok, "the gateway accepted the token", None),
        ]
    );
    assert_eq!(
        connection(URL, &Ok(hello("1.4.2")), "0.1.0")[0],
        f(
            GATEWAY,
            Status::Warn,
            "ws://127.0.0.1:8787/ws answers: gateway 1.4.2, protocol 1, but this gsv is 0.1.0: upgrade the older one",
            Some("git pull && npm run deploy && cargo install --path node-cli")
        )
    );
    let answers = f(
        GATEWAY,
        Status::Ok,
        "ws://127.0.0.1:8787/ws answers (its version shows once it accepts the token)",
        None,
    );
    let set = Some("gsv local-config set gateway.token <token>");
    assert_eq!(
        connection(
            URL,
            &Err(ConnectError::TokenRejected { token_sent: true }),
            "0.1.0"
        ),
        vec![
            answers.clone(),
            f(
                TOKEN,
                Status::Fail,
                "the gateway refused the token: it is not the gateway's GSV_AUTH_TOKEN",
                set
            ),
        ]
    );
    assert_eq!(
        connection(
            URL,
            &Err(ConnectError::TokenRejected { token_sent: false }),
            "0.1.0"
        ),
        vec![
            answers.clone(),
            f(
                TOKEN,
                Status::Fail,
                "no token is set, and the gateway requires one",
                set
            ),
        ]
    );
    let no_auth = ConnectError::Refused {
        reason: "This gateway has no auth token configured, so it refuses all connections.".into(),
    };
    assert_eq!(
        connection(URL, &Err(no_auth), "0.1.0"),
        vec![
            answers,
            f(
                TOKEN,
                Status::Fail,
                "the gateway refused the connection: This gateway has no auth token configured, so it refuses all connections.",
                Some("npx wrangler secret put GSV_AUTH_TOKEN")
            ),
        ]
    );
}

#[test]
fn nothing_at_the_url_is_told_from_a_gateway_that_said_no() {
    let down = ConnectError::Unreachable {
        url: URL.into(),
        reason: "Connection refused (os error 111)".into(),
    };
    let found = connection(URL, &Err(down.clone()), "0.1.0");
    assert_eq!(
        found,
        vec![f(
            GATEWAY,
            Status::Fail,
            "nothing answers at ws://127.0.0.1:8787/ws (Connection refused (os error 111)): is the gateway running there?",
            Some("bash scripts/dev.sh")
        )]
    );
    let far = "wss://gsv.me.workers.dev/ws";
    assert_eq!(
        connection(far, &Err(down.clone()), "0.1.0")[0]
            .fix
            .as_deref(),
        Some("gsv local-config set gateway.url <url>")
    );
    assert!(unreachable(&down));
    assert!(unreachable(&ConnectError::HttpStatus {
        url: URL.into(),
        status: 404
    }));
    assert!(!unreachable(&ConnectError::TokenRejected {
        token_sent: true
    }));
    assert!(!unreachable(&ConnectError::Invalid {
        reason: "protocol 2".into()
    }));
    assert_eq!(exit_code(&found, false), 2);
    let refused = connection(
        URL,
        &Err(ConnectError::TokenRejected { token_sent: true }),
        "0.1.0",
    );
    assert_eq!(exit_code(&refused, true), 1);
}

fn checked(
    failure: Option<ModelCheckFailure>,
    error: Option<&str>,
    model: &str,
) -> ModelCheckResult {
    ModelCheckResult {
        ok: failure.is_none(),
        provider: "anthropic".into(),
        model: model.into(),
        api: "anthropic-messages".into(),
        endpoint: "https://api.anthropic.com".into(),
        has_key: true,
        failure,
        error: error.map(String::from),
        latency_ms: 312,
    }
}

#[test]
fn the_model_check_in_words() {
    let sonnet = "claude-sonnet-4-20250514";
    assert_eq!(
        model(&checked(None, None, sonnet)),
        f(
            MODEL,
            Status::Ok,
            "anthropic/claude-sonnet-4-20250514 answers (anthropic-messages at https://api.anthropic.com)",
            None
        )
    );
    let no_key = "No API key configured for provider 'anthropic'. Set one with: gsv config set apiKeys.anthropic <key>";
    assert_eq!(
        model(&ModelCheckResult {
            has_key: false,
            latency_ms: 0,
            ..checked(Some(ModelCheckFailure::Unusable), Some(no_key), sonnet)
        }),
        f(
            MODEL,
            Status::Fail,
            "no API key is set for anthropic, so the agent cannot answer",
            Some("gsv config set apiKeys.anthropic <key>")
        )
    );
    let no_model = "No model configured. Set one with: gsv config set model.id <model>";
    assert_eq!(
        model(&checked(
            Some(ModelCheckFailure::Unusable),
            Some(no_model),
            ""
        )),
        f(
            MODEL,
            Status::Fail,
            "no model is set for anthropic, so the agent cannot answer",
            Some("gsv config set model.id <model>")
        )
    );
    // The gateway's words, without the advice the fix gives.
    let refused = "anthropic rejected the API key (HTTP 401: invalid x-api-key). Set a valid key with `gsv config set apiKeys.anthropic <key>`.";
    assert_eq!(
        model(&checked(
            Some(ModelCheckFailure::Auth),
            Some(refused),
            sonnet
        )),
        f(
            MODEL,
            Status::Fail,
            "anthropic rejected the API key (HTTP 401: invalid x-api-key)",
            Some("gsv config set apiKeys.anthropic <key>")
        )
    );
    let unknown = "anthropic rejected the request (HTTP 404: model: claude-9)";
    assert_eq!(
        model(&checked(Some(ModelCheckFailure::Invalid), Some(unknown), "claude-9")),
        f(
            MODEL,
            Status::Fail,
            "anthropic rejected the request (HTTP 404: model: claude-9): is claude-9 a model anthropic offers?",
            Some("gsv config set model.id <model>")
        )
    );
    let down = "could not reach anthropic at http://127.0.0.1:9: connection refused. Check the network, or `providers.anthropic.baseUrl` if it should point elsewhere.";
    assert_eq!(
        model(&checked(
            Some(ModelCheckFailure::Network),
            Some(down),
            sonnet
        )),
        f(
            MODEL,
            Status::Fail,
            "the gateway could not reach anthropic at http://127.0.0.1:9: connection refused",
            Some("gsv config set providers.anthropic.baseUrl <url>")
        )
    );
    // The key works; the provider is busy or slow: nothing to fix here.
    let busy = [
        (
            ModelCheckFailure::RateLimited,
            "anthropic is rate limiting requests (HTTP 429)",
            "the key works, but anthropic is rate limiting requests (HTTP 429)",
        ),
        (
            ModelCheckFailure::Server,
            "anthropic had a server error (HTTP 529: Overloaded)",
            "anthropic had a server error (HTTP 529: Overloaded): try again later",
        ),
        (
            ModelCheckFailure::Timeout,
            "anthropic did not answer within 20000 ms (timeouts.llmMs)",
            "anthropic did not answer within 20000 ms (timeouts.llmMs)",
        ),
    ];
    for (failure, error, words) in busy {
        assert_eq!(
            model(&checked(Some(failure), Some(error), sonnet)),
            f(MODEL, Status::Warn, words, None)
        );
    }
}

fn account(id: &str, connected: bool, error: Option<&str>) -> Value {
    json!({"accountId": id, "connected": connected, "authenticated": connected, "error": error})
}

#[test]
fn channels_in_error_and_answers_not_delivered() {
    let empty: ChannelsListResult = from(json!({"channels": [], "count": 0}));
    assert_eq!(
        channels(&empty, &[]),
        f(
            CHANNELS,
            Status::Ok,
            "no chat app account is started (optional: gsv channel start discord)",
            None
        )
    );
    let list: ChannelsListResult = from(json!({"count": 3, "channels": [
        {"channel": "discord", "accountId": "default", "status": account("default", true, None),
         "failedDeliveries": 2, "lastDeliveryError": "Missing Access"},
        {"channel": "discord", "accountId": "bad", "status": account("bad", true, None)},
        {"channel": "whatsapp", "accountId": "default", "status": account("default", true, None)}
    ]}));
    // The registry says connected; the channel, asked now, says otherwise.
    let bad: ChannelStatusRpcResult = from(json!({"channel": "discord",
        "accounts": [account("bad", false, Some("Discord closed the gateway with code 4004"))]}));
    let default: ChannelStatusRpcResult = from(json!({"channel": "discord",
        "accounts": [account("default", true, None)],
        "undelivered": [{"accountId": "default", "count": 3, "lastError": "Missing Permissions"}]}));
    let key = |c: &str, a: &str| (c.to_string(), a.to_string());
    let statuses = vec![
        (key("discord", "default"), Ok(default)),
        (key("discord", "bad"), Ok(bad)),
        (
            key("whatsapp", "default"),
            Err("No whatsapp channel: deploy its Worker".to_string()),
        ),
    ];
    assert_eq!(
        channels(&list, &statuses),
        f(
            CHANNELS,
            Status::Fail,
            "3 answer pieces could not be delivered through discord/default (last: Missing Permissions); \
             discord/bad is not connected: Discord closed the gateway with code 4004; \
             the whatsapp channel did not answer for whatsapp/default: No whatsapp channel: deploy its Worker",
            Some("gsv channel start discord --account bad")
        )
    );
    // Without a fresh answer, the registry's last word counts.
    let whatsapp: ChannelStatusRpcResult = from(json!({"channel": "whatsapp",
        "accounts": [account("default", true, None)]}));
    let statuses = vec![(key("whatsapp", "default"), Ok(whatsapp))];
    assert_eq!(
        channels(&list, &statuses),
        f(
            CHANNELS,
            Status::Warn,
            "2 answer pieces could not be delivered through discord/default (last: Missing Access)",
            Some("gsv channel status discord --account default")
        )
    );
    let fine: ChannelsListResult = from(json!({"count": 1, "channels": [
        {"channel": "discord", "accountId": "work", "status": account("work", true, None)}]}));
    assert_eq!(
        channels(&fine, &[]),
        f(CHANNELS, Status::Ok, "connected: discord/work", None)
    );
    let down: ChannelsListResult = from(json!({"count": 1, "channels": [
        {"channel": "discord", "accountId": "work", "status": account("work", false, None)}]}));
    assert_eq!(
        channels(&down, &[]),
        f(
            CHANNELS,
            Status::Fail,
            "discord/work is not connected: no reason given",
            Some("gsv channel start discord --account work")
        )
    );
}

fn skills(v: Value) -> SkillsView {
    from(v)
}

#[test]
fn nodes_and_the_binaries_skills_need() {
    assert_eq!(
        nodes(&skills(json!({"requiredBins": [], "nodes": [], "skills": []}))),
        f(
            NODES,
            Status::Ok,
            "no node is connected: the agent has its own tools only (lend it a machine with gsv node install)",
            None
        )
    );
    let stranded = skills(json!({"requiredBins": ["gh"], "nodes": [], "skills": [
        {"name": "github", "eligible": false, "reasons": ["no node is connected, and this skill needs a host"]},
        {"name": "off", "eligible": false, "disabled": true, "reasons": ["no node is connected, and this skill needs a host"]},
        {"name": "tides", "eligible": true, "reasons": []}
    ]}));
    assert_eq!(
        nodes(&stranded),
        f(
            NODES,
            Status::Warn,
            "no node is connected, and skill github needs one",
            Some("gsv node install")
        )
    );
    let probed = skills(json!({
        "agentId": "main",
        "requiredBins": ["definitely-not-a-bin-xyz", "gh", "sh"],
        "nodes": [
            {"nodeId": "cam", "canProbeBins": false, "hostBins": []},
            {"nodeId": "laptop", "canProbeBins": true, "hostBins": ["gh", "sh"], "hostBinStatusUpdatedAt": 1},
            {"nodeId": "new", "canProbeBins": true, "hostBins": []},
            {"nodeId": "server", "canProbeBins": true, "hostBins": ["sh"], "hostBinStatusUpdatedAt": 1}
        ],
        "skills": [
            {"name": "ghost", "eligible": false, "requirements": {"bins": ["definitely-not-a-bin-xyz"]}},
            {"name": "github", "eligible": true, "eligibleHosts": ["laptop"], "requirements": {"anyBins": ["gh", "hub"]}}
        ]
    }));
    assert_eq!(
        nodes(&probed),
        f(
            NODES,
            Status::Warn,
            "laptop lacks definitely-not-a-bin-xyz (skill ghost): install it there, then ask again; \
             new was not yet asked for the binaries the skills need; \
             server lacks definitely-not-a-bin-xyz (skill ghost), gh (skill github): install them there, then ask again",
            Some("gsv skills update --force")
        )
    );
    let fine = skills(json!({"requiredBins": ["sh"], "nodes": [
        {"nodeId": "laptop", "canProbeBins": true, "hostBins": ["sh"], "hostBinStatusUpdatedAt": 1}]}));
    assert_eq!(
        nodes(&fine),
        f(
            NODES,
            Status::Ok,
            "connected: laptop, with every binary the skills need",
            None
        )
    );
}

fn job(id: &str, enabled: bool, state: Value) -> Value {
    json!({"id": id, "agentId": "main", "name": format!("job {id}"), "enabled": enabled,
        "createdAtMs": 0, "updatedAtMs": 0,
        "schedule": {"kind": "every", "everyMs": 3_600_000, "anchorMs": 0},
        "spec": {"kind": "task", "message": "tidy"}, "state": state})
}

fn cron_status(enabled: bool, count: u64) -> CronStatusResult {
    from(
        json!({"enabled": enabled, "count": count, "dueCount": 0, "runningCount": 0,
        "maxJobs": 200, "maxConcurrentRuns": 4}),
    )
}

#[test]
fn cron_jobs_failing_or_overdue() {
    let list: CronListResult = from(json!({"count": 4, "jobs": [
        job("a1", true, json!({"lastStatus": "error", "lastError": "No API key configured", "nextRunAtMs": NOW + MIN})),
        job("b2", true, json!({"lastStatus": "ok", "nextRunAtMs": NOW - 25 * MIN})),
        job("c3", true, json!({"lastStatus": "ok", "nextRunAtMs": NOW - 25 * MIN, "runningAtMs": NOW - 26 * MIN})),
        job("d4", false, json!({"lastStatus": "ok", "nextRunAtMs": NOW - 25 * MIN}))
    ]}));
    assert_eq!(
        cron(&cron_status(true, 4), &list, NOW),
        f(
            CRON,
            Status::Warn,
            "job job a1 (a1) failed its last run: No API key configured; \
             job job b2 (b2) should have run 25 min ago and has not",
            Some("gsv cron run a1")
        )
    );
    let quiet: CronListResult = from(json!({"count": 1, "jobs": [
        job("b2", true, json!({"nextRunAtMs": NOW - 25 * MIN}))]}));
    assert_eq!(
        cron(&cron_status(false, 1), &quiet, NOW),
        f(
            CRON,
            Status::Warn,
            "cron is off (cron.enabled false): 1 job will not run",
            Some("gsv config set cron.enabled true")
        )
    );
    let soon: CronListResult = from(json!({"count": 2, "jobs": [
        job("b2", true, json!({"nextRunAtMs": NOW - MIN})),
        job("e5", true, json!({"lastStatus": "ok", "nextRunAtMs": NOW + MIN}))]}));
    assert_eq!(
        cron(&cron_status(true, 2), &soon, NOW),
        f(CRON, Status::Ok, "2 jobs, none failing or overdue", None)
    );
    let none: CronListResult = from(json!({"count": 0, "jobs": []}));
    assert_eq!(
        cron(&cron_status(true, 0), &none, NOW),
        f(CRON, Status::Ok, "no jobs", None)
    );
}

#[test]
fn heartbeats_failing_undelivered_or_late() {
    let r: HeartbeatStatusResult = from(json!({"agents": {
        "main": {"agentId": "main", "everyMs": 1_800_000, "lastStatus": "error",
                 "lastError": "anthropic rejected the API key (401)", "nextHeartbeatAt": NOW + MIN},
        "ops": {"agentId": "ops", "everyMs": 1_800_000, "lastStatus": "ok", "lastOutcome": "failed",
                "lastError": "Missing Access", "nextHeartbeatAt": NOW + MIN},
        "work": {"agentId": "work", "everyMs": 1_800_000, "nextHeartbeatAt": NOW - 40 * MIN}
    }}));
    assert_eq!(
        heartbeat(&r, NOW),
        f(
            HEARTBEAT,
            Status::Warn,
            "main's last beat failed: anthropic rejected the API key (401); \
             ops's last beat answered, but the answer was not delivered: Missing Access; \
             work's beat is 40 min late",
            Some("gsv heartbeat trigger")
        )
    );
    let fine: HeartbeatStatusResult = from(json!({"agents": {
        "main": {"agentId": "main", "everyMs": 1_800_000, "lastStatus": "skipped", "nextHeartbeatAt": NOW + MIN},
        "quiet": {"agentId": "quiet", "everyMs": 0}
    }}));
    assert_eq!(
        heartbeat(&fine, NOW),
        f(
            HEARTBEAT,
            Status::Ok,
            "main every 30 min, quiet off, no beat failing",
            None
        )
    );
}

fn memory_status(extra: Value) -> MemoryStatusResult {
    let mut v = json!({"account": "owner", "nodes": 12, "pendingEvents": 0, "deadLettered": 0,
        "searchMode": "keyword", "recallEvents7d": 3, "memoriesPromoted": 1, "alerts": []});
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    from(v)
}

#[test]
fn memory_broken_given_up_or_alerting() {
    assert_eq!(
        memory(&memory_status(json!({}))),
        f(
            MEMORY,
            Status::Ok,
            "12 memories, keyword search, nothing broken",
            None
        )
    );
    let sick = memory_status(json!({
        "byStatus": {"active": 12, "pending": 0, "broken": 1},
        "broken": [{"uri": "ctx://owner/users/owner/memories/profile/job", "missing": ["content.md"]}],
        "deadLettered": 2,
        "alerts": ["ctx://owner/users/owner/memories/profile/job: BROKEN, missing content.md",
                   "ctx://owner/x: meta unreadable"]
    }));
    assert_eq!(
        memory(&sick),
        f(
            MEMORY,
            Status::Warn,
            "1 memory lost files and cannot be recalled: ctx://owner/users/owner/memories/profile/job (missing content.md); \
             restore the files, then repair; 2 index updates failed for good: those memories may not be found by search; \
             the last repair says: ctx://owner/x: meta unreadable",
            Some("gsv memory repair")
        )
    );
}

fn listing(files: &[&str]) -> WorkspaceListResult {
    WorkspaceListResult {
        path: "/".into(),
        files: files.iter().map(|f| f.to_string()).collect(),
        directories: vec![],
    }
}

#[test]
fn the_workspace_and_its_first_run() {
    assert_eq!(
        workspace(&listing(&[])),
        f(
            WORKSPACE,
            Status::Warn,
            "the agent's workspace is empty: its files are written on its first run",
            Some("gsv chat \"hello\"")
        )
    );
    assert_eq!(
        workspace(&listing(&["AGENTS.md", "BOOTSTRAP.md", "SOUL.md"])),
        f(
            WORKSPACE,
            Status::Warn,
            "the agent's first-run ritual is not done: BOOTSTRAP.md is still there, and until the agent \
             deletes it each run is about learning who you are (gsv workspace rm BOOTSTRAP.md skips it)",
            Some("gsv chat")
        )
    );
    assert_eq!(
        workspace(&listing(&["AGENTS.md", "SOUL.md"])),
        f(
            WORKSPACE,
            Status::Ok,
            "commissioned, 2 files at its top",
            None
        )
    );
}

fn explained(warnings: &[&str]) -> TrustExplainResult {
    TrustExplainResult {
        session_key: "agent:main:main".into(),
        trust: Trust::OWNER,
        trust_source: "the kind of session".into(),
        is_main: true,
        landing: "the agent's main session".into(),
        may_change_session: true,
        tools: vec![],
        warnings: warnings.iter().map(|w| w.to_string()).collect(),
    }
}

#[test]
fn risky_settings() {
    let defaults = json!({"channels": {
        "discord": {"dmPolicy": "pairing", "allowFrom": ["81"]},
        "whatsapp": {"dmPolicy": "disabled", "allowFrom": ["*"]}
    }});
    assert_eq!(
        trust(&explained(&[]), &defaults),
        f(
            TRUST,
            Status::Ok,
            "only you reach the main session, and nobody else gets node, workspace-write, config or cross-session tools",
            None
        )
    );
    let share = "session.shareMainWith puts other people in your main session (discord:7): they read MEMORY.md and your conversation there, at level approved";
    let node =
        "level group may use a node tool (agent main, laptop__Bash: tools.policy.group.allow: *)";
    let open = json!({"channels": {
        "discord": {"dmPolicy": "allowlist", "allowFrom": ["81", "*"]},
        "whatsapp": {"dmPolicy": "open", "allowFrom": []}
    }});
    assert_eq!(
        trust(&explained(&[share, node]), &open),
        f(
            TRUST,
            Status::Warn,
            &format!(
                "{share}; {node}; \
                 anyone who writes to the bot on discord reaches the agent (channels.discord.allowFrom has *); \
                 anyone who writes to the bot on whatsapp reaches the agent (channels.whatsapp.dmPolicy open)"
            ),
            Some("gsv config set session.shareMainWith '[]'")
        )
    );
    assert_eq!(
        trust(&explained(&[node]), &open).fix.as_deref(),
        Some("gsv trust explain --level group")
    );
    assert_eq!(
        trust(&explained(&[]), &open).fix.as_deref(),
        Some("gsv config set channels.discord.allowFrom '[\"81\"]'")
    );
}

#[test]
fn a_check_without_its_answer() {
    let older: Result<MemoryStatusResult, Missing> = Err(Missing::NotOffered("memory.status"));
    assert_eq!(
        with(MEMORY, &older, memory),
        f(
            MEMORY,
            Status::Warn,
            "not checked: the gateway does not offer `memory.status` (it is older than this gsv)",
            Some("git pull && npm run deploy && cargo install --path node-cli")
        )
    );
    let failed: Result<MemoryStatusResult, Missing> = Err(Missing::Failed(
        "memory.status",
        "the gateway did not answer `memory.status` within 10 s".into(),
    ));
    assert_eq!(
        with(MEMORY, &failed, memory),
        f(
            MEMORY,
            Status::Fail,
            "the gateway could not answer `memory.status`: the gateway did not answer `memory.status` within 10 s",
            None
        )
    );
}

#[test]
fn findings_run_in_order_once_connected() {
    let answers = Answers {
        config: Ok(json!({})),
        model: Ok(checked(None, None, "claude-sonnet-4-20250514")),
        channels: Ok((from(json!({"channels": [], "count": 0})), vec![])),
        skills: Ok(SkillsView::default()),
        cron: Ok((cron_status(true, 0), from(json!({"jobs": [], "count": 0})))),
        heartbeat: Ok(from(
            json!({"agents": {"main": {"agentId": "main", "everyMs": 1_800_000,
            "nextHeartbeatAt": NOW + MIN}}}),
        )),
        memory: Ok(memory_status(json!({"nodes": 0}))),
        workspace: Ok(listing(&["SOUL.md"])),
        trust: Err(Missing::NotOffered("trust.explain")),
    };
    let found = findings(URL, &Ok(hello("0.1.0")), Some(&answers), NOW, "0.1.0");
    let names: Vec<(&str, Status)> = found.iter().map(|f| (f.name, f.status)).collect();
    assert_eq!(
        names,
        vec![
            (GATEWAY, Status::Ok),
            (TOKEN, Status::Ok),
            (MODEL, Status::Ok),
            (CHANNELS, Status::Ok),
            (NODES, Status::Ok),
            (CRON, Status::Ok),
            (HEARTBEAT, Status::Ok),
            (MEMORY, Status::Ok),
            (WORKSPACE, Status::Ok),
            (TRUST, Status::Warn),
        ]
    );
    assert_eq!(exit_code(&found, true), 0);
    // Before the token is accepted, nothing else can be asked.
    let refused = findings(
        URL,
        &Err(ConnectError::TokenRejected { token_sent: true }),
        None,
        NOW,
        "0.1.0",
    );
    assert_eq!(refused.len(), 2);
}

#[test]
fn one_line_per_check_marked_in_ascii_or_colour() {
    let found = vec![
        f(
            GATEWAY,
            Status::Ok,
            "ws://h/ws answers: gateway 0.1.0, protocol 1",
            None,
        ),
        f(
            WORKSPACE,
            Status::Warn,
            "BOOTSTRAP.md is still there",
            Some("gsv chat"),
        ),
        f(
            MODEL,
            Status::Fail,
            "anthropic refused the API key",
            Some("gsv config set apiKeys.anthropic <key>"),
        ),
    ];
    assert_eq!(
        render(&found, false),
        "\
ok   gateway    ws://h/ws answers: gateway 0.1.0, protocol 1.
warn workspace  BOOTSTRAP.md is still there.  Fix: gsv chat
FAIL model      anthropic refused the API key.  Fix: gsv config set apiKeys.anthropic <key>
1 failed, 1 more to look at.
"
    );
    assert_eq!(
        render(&found[..1], true),
        "\x1b[32m✓\x1b[0m gateway    ws://h/ws answers: gateway 0.1.0, protocol 1.\nEverything checked is fine.\n"
    );
    assert_eq!(
        render(&found[..2], true).lines().nth(1),
        Some("\x1b[33m!\x1b[0m workspace  BOOTSTRAP.md is still there.  Fix: gsv chat")
    );
    assert_eq!(
        render(&found[1..2], false).lines().last(),
        Some("Nothing failed; 1 to look at.")
    );
    assert_eq!(
        serde_json::to_value(&found[1]).unwrap(),
        json!({"name": "workspace", "status": "warn", "words": "BOOTSTRAP.md is still there", "fix": "gsv chat"})
    );
}
