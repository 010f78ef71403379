//! `gsv doctor`: checks the setup end to end and says, in plain words,
//! what is wrong and the command that fixes it. The checks are pure
//! functions over the gateway's answers (`checks`); this module asks the
//! gateway (every request at once, on one connection), prints the
//! findings, and picks the exit code: 0 when nothing failed, 1 when
//! something did, 2 when the gateway could not be reached at all.

mod checks;
#[cfg(test)]
mod tests;

use super::GatewayTarget;
use crate::connection::{ConnectError, Connection};
use anyhow::Result;
use checks::{Finding, Missing, SkillsView, Status};
use clap::Args;
use futures_util::future::join_all;
use gsv_protocol::cron::{CronListParams, CronListResult, CronStatusResult, HeartbeatStatusResult};
use gsv_protocol::method::{self, Method};
use gsv_protocol::{
    ChannelStatusRpcParams, ChannelsListResult, ConfigGetParams, ConfigGetResult, HelloOkResult,
    MemoryStatusResult, ModelCheckParams, ModelCheckResult, NoParams, SkillsStatusParams,
    TrustExplainParams, TrustExplainResult, WorkspaceListParams, WorkspaceListResult,
};
use serde_json::Value;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, Args)]
#[command(after_help = "\
Checks, in order: the gateway (reachable, its version), the token, the model
(one tiny call with the configured key), the chat apps, the nodes and the
binaries the skills need, cron jobs, heartbeats, long-term memory, the
workspace's first run, and settings that let other people do more.

Exit code: 0 when nothing failed (warnings allowed), 1 when something failed,
2 when the gateway could not be reached at all.

Examples:
  gsv doctor
  gsv doctor --json      the findings as JSON: [{name, status, words, fix}]")]
pub struct DoctorArgs {
    /// Print the findings as JSON
    #[arg(long)]
    pub json: bool,
}

/// Most answers come from the gateway's own storage.
const ASK_LIMIT: Duration = Duration::from_secs(10);
/// `model.check` waits for the provider (the gateway gives it 20 s).
const MODEL_LIMIT: Duration = Duration::from_secs(25);

type Answer<T> = Result<T, Missing>;

/// What each check reads, as the gateway answered.
pub struct Answers {
    pub config: Answer<Value>,
    pub model: Answer<ModelCheckResult>,
    pub channels: Answer<(ChannelsListResult, Vec<checks::AccountStatus>)>,
    pub skills: Answer<SkillsView>,
    pub cron: Answer<(CronStatusResult, CronListResult)>,
    pub heartbeat: Answer<HeartbeatStatusResult>,
    pub memory: Answer<MemoryStatusResult>,
    pub workspace: Answer<WorkspaceListResult>,
    pub trust: Answer<TrustExplainResult>,
}

pub async fn run(target: &GatewayTarget, args: DoctorArgs) -> Result<ExitCode> {
    let (hello, answers) = match target.connect().await {
        Ok(conn) => match conn.hello().cloned() {
            Some(hello) => {
                let answers = gather(&conn, &hello.features.methods).await;
                (Ok(hello), Some(answers))
            }
            None => (
                Err(ConnectError::BadHello {
                    url: target.url.clone(),
                    detail: "no hello-ok".into(),
                }),
                None,
            ),
        },
        Err(e) => (Err(e), None),
    };
    let found = findings(
        &target.url,
        &hello,
        answers.as_ref(),
        now_ms(),
        env!("CARGO_PKG_VERSION"),
    );
    if args.json {
        println!("{}", serde_json::to_string_pretty(&found)?);
    } else {
        let ansi = matches!(
            crate::markdown::Mode::detect(false),
            crate::markdown::Mode::Ansi
        );
        print!("{}", render(&found, ansi));
    }
    let reached = hello.as_ref().err().is_none_or(|e| !checks::unreachable(e));
    Ok(ExitCode::from(exit_code(&found, reached)))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or_default()
}

/// Calls `M` if the gateway offers it.
async fn ask<M: Method>(
    conn: &Connection,
    offered: &[String],
    params: &M::Params,
    limit: Duration,
) -> Answer<M::Result> {
    if !offered.iter().any(|m| m == M::NAME) {
        return Err(Missing::NotOffered(M::NAME));
    }
    conn.call_with_timeout::<M>(params, limit)
        .await
        .map_err(|e| Missing::Failed(M::NAME, e.to_string()))
}

/// Every request the checks need, all in flight at once.
async fn gather(conn: &Connection, offered: &[String]) -> Answers {
    let config = async {
        let whole = ConfigGetParams { path: None };
        ask::<method::ConfigGet>(conn, offered, &whole, ASK_LIMIT)
            .await
            .map(|r| match r {
                ConfigGetResult::Whole { config } => config,
                ConfigGetResult::Path { value, .. } => value,
            })
    };
    let configured = ModelCheckParams::default();
    let model = ask::<method::ModelCheck>(conn, offered, &configured, MODEL_LIMIT);
    let channels = async {
        let list = ask::<method::ChannelsList>(conn, offered, &NoParams, ASK_LIMIT).await?;
        let statuses = join_all(list.channels.iter().map(|entry| async move {
            let params = ChannelStatusRpcParams {
                channel: entry.channel.clone(),
                account_id: Some(entry.account_id.clone()),
            };
            let status = ask::<method::ChannelStatus>(conn, offered, &params, ASK_LIMIT)
                .await
                .map_err(|e| match e {
                    Missing::Failed(_, e) => e,
                    Missing::NotOffered(m) => format!("the gateway does not offer `{m}`"),
                });
            ((entry.channel.clone(), entry.account_id.clone()), status)
        }))
        .await;
        Ok((list, statuses))
    };
    let skills = async {
        let params = SkillsStatusParams { agent_id: None };
        let map = ask::<method::SkillsStatus>(conn, offered, &params, ASK_LIMIT).await?;
        serde_json::from_value::<SkillsView>(Value::Object(map))
            .map_err(|e| Missing::Failed(method::SkillsStatus::NAME, e.to_string()))
    };
    let cron = async {
        let every = CronListParams {
            include_disabled: Some(true),
            limit: Some(500),
            ..Default::default()
        };
        tokio::try_join!(
            ask::<method::CronStatus>(conn, offered, &NoParams, ASK_LIMIT),
            ask::<method::CronList>(conn, offered, &every, ASK_LIMIT)
        )
    };
    let heartbeat = ask::<method::HeartbeatStatus>(conn, offered, &NoParams, ASK_LIMIT);
    let memory = ask::<method::MemoryStatus>(conn, offered, &NoParams, ASK_LIMIT);
    let root = WorkspaceListParams {
        path: None,
        agent_id: None,
    };
    let workspace = ask::<method::WorkspaceList>(conn, offered, &root, ASK_LIMIT);
    let main = TrustExplainParams::default();
    let trust = ask::<method::TrustExplain>(conn, offered, &main, ASK_LIMIT);
    let (config, model, channels, skills, cron, heartbeat, memory, workspace, trust) =
        tokio::join!(config, model, channels, skills, cron, heartbeat, memory, workspace, trust);
    Answers {
        config,
        model,
        channels,
        skills,
        cron,
        heartbeat,
        memory,
        workspace,
        trust,
    }
}

/// Every finding, in the order they print: the connection's, then (once
/// connected) one per check.
pub fn findings(
    url: &str,
    hello: &Result<HelloOkResult, ConnectError>,
    answers: Option<&Answers>,
    now_ms: i64,
    cli_version: &str,
) -> Vec<Finding> {
    let mut out = checks::connection(url, hello, cli_version);
    let Some(a) = answers else {
        return out;
    };
    let config = a.config.as_ref().unwrap_or(&Value::Null);
    out.extend([
        checks::with(checks::MODEL, &a.model, checks::model),
        checks::with(checks::CHANNELS, &a.channels, |(list, statuses)| {
            checks::channels(list, statuses)
        }),
        checks::with(checks::NODES, &a.skills, checks::nodes),
        checks::with(checks::CRON, &a.cron, |(status, list)| {
            checks::cron(status, list, now_ms)
        }),
        checks::with(checks::HEARTBEAT, &a.heartbeat, |r| {
            checks::heartbeat(r, now_ms)
        }),
        checks::with(checks::MEMORY, &a.memory, checks::memory),
        checks::with(checks::WORKSPACE, &a.workspace, checks::workspace),
        checks::with(checks::TRUST, &a.trust, |t| checks::trust(t, config)),
    ]);
    out
}

/// 2 when nothing answered at the URL, else 1 when a check failed, else 0.
pub fn exit_code(findings: &[Finding], reached: bool) -> u8 {
    match (reached, findings.iter().any(|f| f.status == Status::Fail)) {
        (false, _) => 2,
        (true, true) => 1,
        (true, false) => 0,
    }
}

/// One line per finding: a mark, the check's name, what was found and the
/// fix; then the count. `ansi`: coloured ✓ ! ✗, else plain ASCII.
pub fn render(findings: &[Finding], ansi: bool) -> String {
    let mut out = String::new();
    for f in findings {
        let mark = match (f.status, ansi) {
            (Status::Ok, true) => "\x1b[32m✓\x1b[0m",
            (Status::Warn, true) => "\x1b[33m!\x1b[0m",
            (Status::Fail, true) => "\x1b[31m✗\x1b[0m",
            (Status::Ok, false) => "ok  ",
            (Status::Warn, false) => "warn",
            (Status::Fail, false) => "FAIL",
        };
        let fix = f
            .fix
            .as_deref()
            .map(|fix| format!("  Fix: {fix}"))
            .unwrap_or_default();
        out.push_str(&format!("{mark} {:<9}  {}.{fix}\n", f.name, f.words));
    }
    let count = |s: Status| findings.iter().filter(|f| f.status == s).count();
    let (warned, failed) = (count(Status::Warn), count(Status::Fail));
    out.push_str(&match (warned, failed) {
        (0, 0) => "Everything checked is fine.\n".to_string(),
        (w, 0) => format!("Nothing failed; {w} to look at.\n"),
        (0, f) => format!("{f} failed.\n"),
        (w, f) => format!("{f} failed, {w} more to look at.\n"),
    });
    out
}
