//! Each check of `gsv doctor` as a pure function: the gateway's answers
//! in, one [`Finding`] out (what is wrong in plain words, and the command
//! that fixes it). Nothing here talks to the gateway; `super` does.

use crate::connection::ConnectError;
use gsv_protocol::cron::{CronListResult, CronStatusResult, HeartbeatStatusResult, RunStatus};
use gsv_protocol::{
    ChannelStatusRpcResult, ChannelsListResult, HelloOkResult, MemoryStatusResult,
    ModelCheckFailure, ModelCheckResult, TrustExplainResult, WorkspaceListResult,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

/// One check's outcome: its name, how it went, what it found in words,
/// and the command that fixes it (none when there is nothing to fix, or
/// nothing a command can do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub name: &'static str,
    pub status: Status,
    pub words: String,
    pub fix: Option<String>,
}

impl Finding {
    pub fn ok(name: &'static str, words: impl Into<String>) -> Self {
        Self {
            name,
            status: Status::Ok,
            words: words.into(),
            fix: None,
        }
    }

    fn new(
        name: &'static str,
        status: Status,
        words: impl Into<String>,
        fix: Option<String>,
    ) -> Self {
        Self {
            name,
            status,
            words: words.into(),
            fix,
        }
    }

    fn warn(name: &'static str, words: impl Into<String>, fix: impl Into<String>) -> Self {
        Self::new(name, Status::Warn, words, Some(fix.into()))
    }

    fn fail(name: &'static str, words: impl Into<String>, fix: impl Into<String>) -> Self {
        Self::new(name, Status::Fail, words, Some(fix.into()))
    }
}

pub const GATEWAY: &str = "gateway";
pub const TOKEN: &str = "token";
pub const MODEL: &str = "model";
pub const CHANNELS: &str = "channels";
pub const NODES: &str = "nodes";
pub const CRON: &str = "cron";
pub const HEARTBEAT: &str = "heartbeat";
pub const MEMORY: &str = "memory";
pub const WORKSPACE: &str = "workspace";
pub const TRUST: &str = "trust";

const UPGRADE: &str = "git pull && npm run deploy && cargo install --path node-cli";
const SET_TOKEN: &str = "gsv local-config set gateway.token <token>";
/// A job or beat this late has lost its alarm rather than waiting for it.
const LATE_MS: i64 = 10 * 60_000;

/// Why a check has no answer to look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// The gateway does not list the method in its `hello-ok`.
    NotOffered(&'static str),
    /// The request failed (the error in words).
    Failed(&'static str, String),
}

/// `check`'s finding over `answer`, or what its absence means: a method
/// an older gateway lacks is a warning, a failed request a failure.
pub fn with<T>(
    name: &'static str,
    answer: &Result<T, Missing>,
    check: impl FnOnce(&T) -> Finding,
) -> Finding {
    match answer {
        Ok(answer) => check(answer),
        Err(missing) => unanswered(name, missing),
    }
}

pub fn unanswered(name: &'static str, missing: &Missing) -> Finding {
    match missing {
        Missing::NotOffered(method) => Finding::warn(
            name,
            format!(
                "not checked: the gateway does not offer `{method}` (it is older than this gsv)"
            ),
            UPGRADE,
        ),
        Missing::Failed(method, error) => Finding::new(
            name,
            Status::Fail,
            format!("the gateway could not answer `{method}`: {error}"),
            None,
        ),
    }
}

/// Whether `error` means nothing at the URL speaks to us at all (exit
/// code 2), rather than a gateway that answered and said no.
pub fn unreachable(error: &ConnectError) -> bool {
    matches!(
        error,
        ConnectError::Unreachable { .. }
            | ConnectError::InvalidUrl { .. }
            | ConnectError::HttpStatus { .. }
            | ConnectError::HandshakeTimeout { .. }
            | ConnectError::Disconnected { .. }
    )
}

/// The gateway (reachable, its protocol and version) and the token.
/// After a refused token only these two findings can be made.
pub fn connection(
    url: &str,
    outcome: &Result<HelloOkResult, ConnectError>,
    cli_version: &str,
) -> Vec<Finding> {
    let answers = || {
        Finding::ok(
            GATEWAY,
            format!("{url} answers (its version shows once it accepts the token)"),
        )
    };
    match outcome {
        Ok(hello) => {
            let version = &hello.server.version;
            let gateway = match version == cli_version {
                true => Finding::ok(
                    GATEWAY,
                    format!("{url} answers: gateway {version}, protocol {}", hello.protocol),
                ),
                false => Finding::warn(
                    GATEWAY,
                    format!(
                        "{url} answers: gateway {version}, protocol {}, but this gsv is {cli_version}: \
                         upgrade the older one",
                        hello.protocol
                    ),
                    UPGRADE,
                ),
            };
            vec![
                gateway,
                Finding::ok(TOKEN, "the gateway accepted the token"),
            ]
        }
        Err(ConnectError::TokenRejected { token_sent: true }) => vec![
            answers(),
            Finding::fail(
                TOKEN,
                "the gateway refused the token: it is not the gateway's GSV_AUTH_TOKEN",
                SET_TOKEN,
            ),
        ],
        Err(ConnectError::TokenRejected { token_sent: false }) => vec![
            answers(),
            Finding::fail(
                TOKEN,
                "no token is set, and the gateway requires one",
                SET_TOKEN,
            ),
        ],
        Err(ConnectError::Refused { reason }) => {
            let fix = reason
                .contains("no auth token configured")
                .then(|| "npx wrangler secret put GSV_AUTH_TOKEN".to_string());
            vec![
                answers(),
                Finding::new(
                    TOKEN,
                    Status::Fail,
                    format!("the gateway refused the connection: {reason}"),
                    fix,
                ),
            ]
        }
        Err(ConnectError::Invalid { reason }) => vec![Finding::fail(
            GATEWAY,
            format!("{url} refused this gsv's handshake: {reason}"),
            UPGRADE,
        )],
        Err(ConnectError::BadHello { detail, .. }) => vec![Finding::fail(
            GATEWAY,
            format!("{url} answered the handshake in a way this gsv does not read ({detail})"),
            UPGRADE,
        )],
        Err(e @ ConnectError::InvalidUrl { .. }) => vec![Finding::fail(
            GATEWAY,
            e.to_string(),
            "gsv local-config set gateway.url wss://<your-worker>.workers.dev/ws",
        )],
        Err(ConnectError::HttpStatus { status, .. }) => vec![Finding::fail(
            GATEWAY,
            format!("{url} answered HTTP {status}, not a WebSocket: it is not a gsv gateway's /ws"),
            "gsv local-config set gateway.url wss://<your-worker>.workers.dev/ws",
        )],
        Err(ConnectError::Unreachable { reason, .. }) => {
            let local = ["ws://localhost", "ws://127.0.0.1", "ws://[::1]"]
                .iter()
                .any(|l| url.starts_with(l));
            let fix = match local {
                true => "bash scripts/dev.sh",
                false => "gsv local-config set gateway.url <url>",
            };
            vec![Finding::fail(
                GATEWAY,
                format!("nothing answers at {url} ({reason}): is the gateway running there?"),
                fix,
            )]
        }
        Err(ConnectError::HandshakeTimeout { .. }) => vec![Finding::fail(
            GATEWAY,
            format!(
                "{url} opened the WebSocket but never answered the handshake: is it a gsv gateway?"
            ),
            "gsv local-config set gateway.url <url>",
        )],
        Err(ConnectError::Disconnected { close, .. }) => vec![Finding::fail(
            GATEWAY,
            format!("{url} dropped the handshake: {close}"),
            "gsv local-config set gateway.url <url>",
        )],
    }
}

/// The gateway's error without the advice it ends with (`. Set a valid
/// key with …`, `. Check the network, …`): the finding's fix says that.
fn said(error: &str) -> &str {
    let cut = [". Set ", ". Check "]
        .iter()
        .filter_map(|advice| error.find(advice))
        .min()
        .unwrap_or(error.len());
    error[..cut].trim_end_matches('.')
}

/// `model.check`: the provider's key present and accepted, the model known.
pub fn model(r: &ModelCheckResult) -> Finding {
    let (provider, model) = (&r.provider, &r.model);
    let error = said(r.error.as_deref().unwrap_or("no reason given"));
    let set_key = format!("gsv config set apiKeys.{provider} <key>");
    match r.failure {
        None if r.ok => Finding::ok(
            MODEL,
            format!("{provider}/{model} answers ({} at {})", r.api, r.endpoint),
        ),
        Some(ModelCheckFailure::Unusable) if model.is_empty() => Finding::fail(
            MODEL,
            format!("no model is set for {provider}, so the agent cannot answer"),
            "gsv config set model.id <model>",
        ),
        Some(ModelCheckFailure::Unusable) => Finding::fail(
            MODEL,
            format!("no API key is set for {provider}, so the agent cannot answer"),
            set_key,
        ),
        Some(ModelCheckFailure::Auth) => Finding::fail(MODEL, error, set_key),
        Some(ModelCheckFailure::Invalid) => Finding::fail(
            MODEL,
            format!("{error}: is {model} a model {provider} offers?"),
            "gsv config set model.id <model>",
        ),
        Some(ModelCheckFailure::Network) => Finding::fail(
            MODEL,
            match error.starts_with("could not") {
                true => format!("the gateway {error}"),
                false => error.to_string(),
            },
            format!("gsv config set providers.{provider}.baseUrl <url>"),
        ),
        Some(ModelCheckFailure::RateLimited) => Finding::new(
            MODEL,
            Status::Warn,
            format!("the key works, but {error}"),
            None,
        ),
        Some(ModelCheckFailure::Server) => Finding::new(
            MODEL,
            Status::Warn,
            format!("{error}: try again later"),
            None,
        ),
        Some(ModelCheckFailure::Timeout) => Finding::new(MODEL, Status::Warn, error, None),
        None => Finding::new(
            MODEL,
            Status::Fail,
            format!("{provider}/{model} did not answer: {error}"),
            None,
        ),
    }
}

/// Several problems of one check in one finding: the worst status, every
/// problem's words, the first fix of the worst ones.
fn combine(name: &'static str, problems: Vec<Finding>, fine: impl FnOnce() -> String) -> Finding {
    let Some(worst) = problems.iter().map(|p| p.status).max() else {
        return Finding::ok(name, fine());
    };
    let fix = problems
        .iter()
        .filter(|p| p.status == worst)
        .find_map(|p| p.fix.clone());
    let words: Vec<String> = problems.into_iter().map(|p| p.words).collect();
    Finding::new(name, worst, words.join("; "), fix)
}

/// A channel account: (channel, account id).
pub type AccountId = (String, String);

/// An account's `channel.status`, or why it could not be had.
pub type AccountStatus = (AccountId, Result<ChannelStatusRpcResult, String>);

/// `channels.list`, with each listed account's fresh `channel.status`
/// (or why it could not be had): accounts in error, answers not
/// delivered. Asked account by account: a whole channel's status would
/// register again the accounts `channel.stop` let go of.
pub fn channels(list: &ChannelsListResult, statuses: &[AccountStatus]) -> Finding {
    if list.channels.is_empty() {
        return Finding::ok(
            CHANNELS,
            "no chat app account is started (optional: gsv channel start discord)",
        );
    }
    let mut problems = Vec::new();
    let mut fine = Vec::new();
    for entry in &list.channels {
        let (channel, account) = (&entry.channel, &entry.account_id);
        let at = format!("{channel}/{account}");
        let asked = statuses
            .iter()
            .find(|((c, a), _)| c == channel && a == account)
            .map(|(_, s)| s);
        let fresh = match asked {
            Some(Err(e)) => {
                problems.push(Finding::fail(
                    CHANNELS,
                    format!("the {channel} channel did not answer for {at}: {e}"),
                    format!("gsv channel status {channel}"),
                ));
                None
            }
            Some(Ok(r)) => Some(r),
            None => None,
        };
        let now = fresh
            .and_then(|r| r.accounts.iter().find(|a| &a.account_id == account))
            .or(entry.status.as_ref());
        let start = match account.as_str() {
            "default" => format!("gsv channel start {channel}"),
            _ => format!("gsv channel start {channel} --account {account}"),
        };
        match now {
            Some(s) if s.connected => fine.push(at.clone()),
            Some(s) => {
                let why = s.error.as_deref().unwrap_or("no reason given");
                problems.push(Finding::fail(
                    CHANNELS,
                    format!("{at} is not connected: {why}"),
                    start,
                ));
            }
            // Never reported: nothing to say against it.
            None => fine.push(format!("{at} (no status yet)")),
        }
        let undelivered = fresh
            .and_then(|r| r.undelivered.iter().find(|u| &u.account_id == account))
            .map(|u| (u.count, u.last_error.clone()))
            .unwrap_or((entry.failed_deliveries, entry.last_delivery_error.clone()));
        if undelivered.0 > 0 {
            let last = undelivered
                .1
                .map(|e| format!(" (last: {e})"))
                .unwrap_or_default();
            problems.push(Finding::warn(
                CHANNELS,
                format!(
                    "{} could not be delivered through {at}{last}",
                    count(undelivered.0, "answer piece", "answer pieces")
                ),
                format!("gsv channel status {channel} --account {account}"),
            ));
        }
    }
    combine(CHANNELS, problems, || {
        format!("connected: {}", fine.join(", "))
    })
}

/// What `doctor` reads of `skills.status` (the gateway sends more).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SkillsView {
    pub required_bins: Vec<String>,
    pub nodes: Vec<NodeView>,
    pub skills: Vec<SkillView>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeView {
    pub node_id: String,
    pub host_bins: Vec<String>,
    pub host_bin_status_updated_at: Option<u64>,
    pub can_probe_bins: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SkillView {
    pub name: String,
    pub eligible: bool,
    pub reasons: Vec<String>,
    pub disabled: bool,
    pub requirements: NeedsView,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NeedsView {
    pub bins: Vec<String>,
    pub any_bins: Vec<String>,
}

/// The nodes connected, and the binaries the skills need that a node
/// was found to lack.
pub fn nodes(s: &SkillsView) -> Finding {
    if s.nodes.is_empty() {
        let stranded: Vec<&str> = s
            .skills
            .iter()
            .filter(|k| !k.eligible && !k.disabled)
            .filter(|k| {
                k.reasons
                    .iter()
                    .any(|r| r.starts_with("no node is connected"))
            })
            .map(|k| k.name.as_str())
            .collect();
        return match stranded.is_empty() {
            true => Finding::ok(
                NODES,
                "no node is connected: the agent has its own tools only (lend it a machine with gsv node install)",
            ),
            false => Finding::warn(
                NODES,
                format!(
                    "no node is connected, and {} {} {} one",
                    match stranded.len() {
                        1 => "skill",
                        _ => "skills",
                    },
                    stranded.join(", "),
                    match stranded.len() {
                        1 => "needs",
                        _ => "need",
                    },
                ),
                "gsv node install",
            ),
        };
    }
    let mut problems = Vec::new();
    let mut fine = Vec::new();
    for node in &s.nodes {
        let id = &node.node_id;
        if !node.can_probe_bins || s.required_bins.is_empty() {
            fine.push(id.clone());
            continue;
        }
        if node.host_bin_status_updated_at.is_none() {
            problems.push(Finding::warn(
                NODES,
                format!("{id} was not yet asked for the binaries the skills need"),
                "gsv skills update --force",
            ));
            continue;
        }
        let missing: Vec<String> = s
            .required_bins
            .iter()
            .filter(|b| !node.host_bins.contains(b))
            .map(|bin| {
                let users: Vec<&str> = s
                    .skills
                    .iter()
                    .filter(|k| {
                        k.requirements.bins.contains(bin) || k.requirements.any_bins.contains(bin)
                    })
                    .map(|k| k.name.as_str())
                    .collect();
                match users.is_empty() {
                    true => bin.clone(),
                    false => format!("{bin} (skill {})", users.join(", ")),
                }
            })
            .collect();
        match missing.is_empty() {
            true => fine.push(id.clone()),
            false => problems.push(Finding::warn(
                NODES,
                format!(
                    "{id} lacks {}: install {} there, then ask again",
                    missing.join(", "),
                    match missing.len() {
                        1 => "it",
                        _ => "them",
                    }
                ),
                "gsv skills update --force",
            )),
        }
    }
    combine(NODES, problems, || {
        format!(
            "connected: {}, with every binary the skills need",
            fine.join(", ")
        )
    })
}

fn minutes(ms: i64) -> i64 {
    ms / 60_000
}

/// `1 job`, `2 jobs`.
fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    match n.into() {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

/// `cron.status` and `cron.list`: jobs whose last run failed, jobs long
/// overdue, and jobs that cannot run because cron is off.
pub fn cron(status: &CronStatusResult, list: &CronListResult, now_ms: i64) -> Finding {
    let mut problems = Vec::new();
    let enabled = list.jobs.iter().filter(|v| v.job.enabled).count();
    if !status.enabled && enabled > 0 {
        problems.push(Finding::warn(
            CRON,
            format!(
                "cron is off (cron.enabled false): {} will not run",
                count(enabled as u64, "job", "jobs")
            ),
            "gsv config set cron.enabled true",
        ));
    }
    for v in &list.jobs {
        let j = &v.job;
        let state = &j.state;
        if state.last_status == Some(RunStatus::Error) {
            let why = state.last_error.as_deref().unwrap_or("no reason recorded");
            problems.push(Finding::warn(
                CRON,
                format!("job {} ({}) failed its last run: {why}", j.name, j.id),
                format!("gsv cron run {}", j.id),
            ));
        }
        let late = state
            .next_run_at_ms
            .filter(|_| status.enabled && j.enabled && state.running_at_ms.is_none())
            .map(|next| now_ms - next)
            .filter(|late| *late > LATE_MS);
        if let Some(late) = late {
            problems.push(Finding::warn(
                CRON,
                format!(
                    "job {} ({}) should have run {} min ago and has not",
                    j.name,
                    j.id,
                    minutes(late)
                ),
                format!("gsv cron run {}", j.id),
            ));
        }
    }
    combine(CRON, problems, || match (status.count, status.enabled) {
        (0, _) => "no jobs".to_string(),
        (n, true) => format!("{}, none failing or overdue", count(n, "job", "jobs")),
        (n, false) => format!(
            "{}, not run: cron.enabled is false",
            count(n, "job", "jobs")
        ),
    })
}

/// `heartbeat.status`: beats whose last run failed or whose answer could
/// not be delivered, and beats long overdue.
pub fn heartbeat(r: &HeartbeatStatusResult, now_ms: i64) -> Finding {
    let mut problems = Vec::new();
    let mut fine = Vec::new();
    for (agent, s) in &r.agents {
        let trigger = match agent.as_str() {
            "main" => "gsv heartbeat trigger".to_string(),
            _ => format!("gsv heartbeat trigger {agent}"),
        };
        let why = s.last_error.as_deref().unwrap_or("no reason recorded");
        let late = match (s.every_ms, s.next_heartbeat_at) {
            (Some(every), Some(next)) if every > 0 => Some(now_ms - next),
            _ => None,
        }
        .filter(|late| *late > LATE_MS);
        if s.last_status == Some(RunStatus::Error) {
            problems.push(Finding::warn(
                HEARTBEAT,
                format!("{agent}'s last beat failed: {why}"),
                trigger,
            ));
        } else if s.last_outcome.as_deref() == Some("failed") {
            problems.push(Finding::warn(
                HEARTBEAT,
                format!("{agent}'s last beat answered, but the answer was not delivered: {why}"),
                trigger,
            ));
        } else if let Some(late) = late {
            problems.push(Finding::warn(
                HEARTBEAT,
                format!("{agent}'s beat is {} min late", minutes(late)),
                "gsv heartbeat start",
            ));
        } else {
            fine.push(match s.every_ms {
                Some(0) => format!("{agent} off"),
                Some(ms) => format!("{agent} every {} min", minutes(ms)),
                None => agent.clone(),
            });
        }
    }
    combine(HEARTBEAT, problems, || match fine.is_empty() {
        true => "no agent has a heartbeat".into(),
        false => format!("{}, no beat failing", fine.join(", ")),
    })
}

/// `memory.status`: broken memories, index updates given up on, alerts.
pub fn memory(r: &MemoryStatusResult) -> Finding {
    let mut problems = Vec::new();
    if !r.broken.is_empty() || r.by_status.broken > 0 {
        let which: Vec<String> = r
            .broken
            .iter()
            .map(|b| format!("{} (missing {})", b.uri, b.missing.join(", ")))
            .collect();
        let n = r.by_status.broken.max(r.broken.len() as u64);
        problems.push(Finding::warn(
            MEMORY,
            format!(
                "{} lost files and cannot be recalled: {}; restore the files, then repair",
                count(n, "memory", "memories"),
                which.join(", ")
            ),
            "gsv memory repair",
        ));
    }
    if r.dead_lettered > 0 {
        problems.push(Finding::warn(
            MEMORY,
            format!(
                "{} failed for good: those memories may not be found by search",
                count(r.dead_lettered, "index update", "index updates")
            ),
            "gsv memory repair",
        ));
    }
    // The repair's alerts name the broken memories said above.
    let said = |alert: &String| {
        r.broken
            .iter()
            .any(|b| alert.starts_with(&format!("{}:", b.uri)))
    };
    for alert in r.alerts.iter().filter(|a| !said(a)) {
        problems.push(Finding::warn(
            MEMORY,
            format!("the last repair says: {alert}"),
            "gsv memory status",
        ));
    }
    combine(MEMORY, problems, || {
        format!(
            "{}, {} search, nothing broken",
            count(r.nodes, "memory", "memories"),
            r.search_mode
        )
    })
}

/// `workspace.list` of the agent's root: started, and its first-run
/// commissioning (BOOTSTRAP.md) done.
pub fn workspace(r: &WorkspaceListResult) -> Finding {
    if r.files.is_empty() && r.directories.is_empty() {
        return Finding::warn(
            WORKSPACE,
            "the agent's workspace is empty: its files are written on its first run",
            "gsv chat \"hello\"",
        );
    }
    if r.files.iter().any(|f| f == "BOOTSTRAP.md") {
        return Finding::warn(
            WORKSPACE,
            "the agent's first-run ritual is not done: BOOTSTRAP.md is still there, and until the agent \
             deletes it each run is about learning who you are (gsv workspace rm BOOTSTRAP.md skips it)",
            "gsv chat",
        );
    }
    Finding::ok(
        WORKSPACE,
        format!(
            "commissioned, {} at its top",
            count(r.files.len() as u64, "file", "files")
        ),
    )
}

/// Risky settings: `trust.explain`'s warnings (other people in the main
/// session, node, workspace-write, config or cross-session tools below
/// the owner), and chat apps anyone may talk to the agent through.
pub fn trust(explain: &TrustExplainResult, config: &Value) -> Finding {
    let mut problems = Vec::new();
    for w in &explain.warnings {
        let fix = if w.starts_with("session.shareMainWith") {
            "gsv config set session.shareMainWith '[]'".to_string()
        } else if let Some(level) = ["approved", "group"]
            .into_iter()
            .find(|l| w.starts_with(&format!("level {l} ")))
        {
            format!("gsv trust explain --level {level}")
        } else {
            "gsv trust explain".to_string()
        };
        problems.push(Finding::warn(TRUST, w.clone(), fix));
    }
    let channels = config["channels"].as_object().into_iter().flatten();
    for (name, c) in channels {
        if c["dmPolicy"].as_str() == Some("open") {
            problems.push(Finding::warn(
                TRUST,
                format!("anyone who writes to the bot on {name} reaches the agent (channels.{name}.dmPolicy open)"),
                format!("gsv config set channels.{name}.dmPolicy pairing"),
            ));
            continue;
        }
        let allow: Vec<&str> = c["allowFrom"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let open =
            c["dmPolicy"].as_str() != Some("disabled") && allow.iter().any(|a| a.trim() == "*");
        if open {
            let rest: Vec<&str> = allow.into_iter().filter(|a| a.trim() != "*").collect();
            let rest = serde_json::to_string(&rest).unwrap_or_else(|_| "[]".into());
            problems.push(Finding::warn(
                TRUST,
                format!("anyone who writes to the bot on {name} reaches the agent (channels.{name}.allowFrom has *)"),
                format!("gsv config set channels.{name}.allowFrom '{rest}'"),
            ));
        }
    }
    combine(TRUST, problems, || {
        "only you reach the main session, and nobody else gets node, workspace-write, config or \
         cross-session tools"
            .into()
    })
}
