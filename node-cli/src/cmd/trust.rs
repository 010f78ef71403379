//! `gsv trust explain [--session KEY] [--level L]`: who a session's
//! speaker is to the gateway, where such people land, and every tool the
//! agent has with the rule that offers or refuses it (`trust.explain`).
//! `gsv logs audit` (logs.rs) reads what such turns called.

use super::{print_answer, GatewayTarget};
use anyhow::Result;
use clap::{Subcommand, ValueEnum};
use gsv_protocol::{
    dates::iso_utc_seconds, method, ApprovalDecideParams, ApprovalsListResult, AuditListResult,
    NoParams, TrustExplainParams, TrustExplainResult, TrustLevel,
};

#[derive(Debug, Subcommand)]
pub enum TrustCommand {
    /// The level a session's turns run at, the rule that lands people in
    /// it, and which tools its model is offered or refused and why
    #[command(after_help = "\
Examples:
  gsv trust explain                                  the main session
  gsv trust explain --session agent:main:discord:group:123
  gsv trust explain --level group                    what any group may do")]
    Explain {
        /// The session [default: main]
        #[arg(long, short, value_name = "KEY")]
        session: Option<String>,
        /// Explain this level instead of the session's last message's
        #[arg(long, value_enum)]
        level: Option<Level>,
        /// Print the gateway's whole answer as JSON
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// Tool calls waiting for your decision: who asked, the tool, its
    /// exact arguments, and when they are denied by themselves
    List {
        /// Print the gateway's whole answer as JSON
        #[arg(long)]
        json: bool,
    },
    /// Let a waiting call run
    Approve {
        /// The code the request showed
        code: String,
        /// Also let this person (or group) make later calls of the same
        /// tool without asking
        #[arg(long)]
        always: bool,
    },
    /// Refuse a waiting call (the agent is told the owner said no)
    Deny {
        /// The code the request showed
        code: String,
    },
}

pub async fn approvals(target: &GatewayTarget, command: ApprovalsCommand) -> Result<()> {
    let conn = target.connect().await?;
    let decide = |code: String, approve, always| ApprovalDecideParams {
        code,
        approve,
        always,
    };
    let params = match command {
        ApprovalsCommand::List { json } => {
            return print_answer::<method::ApprovalsList>(&conn, &NoParams, json, render_approvals)
                .await
        }
        ApprovalsCommand::Approve { code, always } => decide(code, true, always),
        ApprovalsCommand::Deny { code } => decide(code, false, false),
    };
    let r = conn.call::<method::ApprovalsDecide>(&params).await?;
    println!(
        "{} {} for {} ({}).",
        r.approval.tool,
        r.decision,
        r.approval.who.as_deref().unwrap_or(&r.approval.session_key),
        r.approval.code
    );
    Ok(())
}

pub fn render_approvals(r: &ApprovalsListResult) -> String {
    if r.approvals.is_empty() {
        return "No call waits for your approval.\n".into();
    }
    let mut out = String::new();
    for a in &r.approvals {
        out.push_str(&format!(
            "{}  {}  {} ({})  in {}  until {}\n  {}\n",
            a.code,
            a.tool,
            a.who.as_deref().unwrap_or("-"),
            a.trust,
            a.session_key,
            iso_utc_seconds(a.expires_at_ms),
            a.args
        ));
    }
    out
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Level {
    Owner,
    Approved,
    Group,
    System,
}

impl From<Level> for TrustLevel {
    fn from(l: Level) -> Self {
        match l {
            Level::Owner => TrustLevel::Owner,
            Level::Approved => TrustLevel::Approved,
            Level::Group => TrustLevel::Group,
            Level::System => TrustLevel::System,
        }
    }
}

pub async fn run(target: &GatewayTarget, command: TrustCommand) -> Result<()> {
    let conn = target.connect().await?;
    match command {
        TrustCommand::Explain {
            session,
            level,
            json,
        } => {
            let params = TrustExplainParams {
                session_key: session,
                level: level.map(Into::into),
            };
            print_answer::<method::TrustExplain>(&conn, &params, json, render_explain).await
        }
    }
}

pub fn render_explain(r: &TrustExplainResult) -> String {
    let offered = r.tools.iter().filter(|t| t.allowed).count();
    let changes = match r.may_change_session {
        true => "taken",
        false => "refused (only the owner, or a person in their own session)",
    };
    let mut out = format!(
        "Session   {}\nTrust     {} ({})\nLands     {}\nCommands  /reset, /new, /model, /think, /compact: {changes}\nTools     {offered} offered, {} refused\n",
        r.session_key,
        r.trust,
        r.trust_source,
        r.landing,
        r.tools.len() - offered,
    );
    let width = r.tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    for t in &r.tools {
        let mark = match (t.allowed, t.ask) {
            (false, _) => "refused",
            (true, true) => "ask",
            (true, false) => "offered",
        };
        out.push_str(&format!(
            "  {mark:7}  {:width$}  {}\n",
            t.name,
            t.rule,
            width = width
        ));
    }
    for w in &r.warnings {
        out.push_str(&format!("! {w}\n"));
    }
    out
}

pub fn render_audit(r: &AuditListResult) -> String {
    if r.entries.is_empty() {
        return "No tool call from anyone but the owner is recorded.\n".into();
    }
    let mut out = String::new();
    for e in &r.entries {
        out.push_str(&format!(
            "{}  {}  {}  {}  {}  {}  args {}  {}\n",
            iso_utc_seconds(e.at_ms),
            e.session_key,
            e.who.as_deref().unwrap_or("-"),
            e.trust,
            e.tool,
            e.decision,
            e.args_digest,
            e.rule
        ));
    }
    out.push_str(&format!("{} of {} recorded\n", r.entries.len(), r.count));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use gsv_protocol::{AuditEntry, ToolVerdict, Trust};

    #[test]
    fn an_explanation_lists_each_tool_with_its_rule() {
        let r = TrustExplainResult {
            session_key: "agent:main:discord:group:g1".into(),
            trust: Trust::GROUP,
            trust_source: "the session's last message".into(),
            is_main: false,
            landing: "the group g1 on discord: everyone in it, at level group".into(),
            may_change_session: false,
            tools: vec![
                ToolVerdict {
                    name: "gsv__MemorySearch".into(),
                    allowed: true,
                    ask: false,
                    rule: "tools.policy.group.allow: gsv__MemorySearch".into(),
                },
                ToolVerdict {
                    name: "laptop__Bash".into(),
                    allowed: false,
                    ask: false,
                    rule: "not in tools.policy.group.allow".into(),
                },
                ToolVerdict {
                    name: "laptop__Read".into(),
                    allowed: true,
                    ask: true,
                    rule: "tools.policy.group.ask: laptop__*".into(),
                },
            ],
            warnings: vec!["level group may use a node tool".into()],
        };
        assert_eq!(
            render_explain(&r),
            "\
Session   agent:main:discord:group:g1
Trust     group (the session's last message)
Lands     the group g1 on discord: everyone in it, at level group
Commands  /reset, /new, /model, /think, /compact: refused (only the owner, or a person in their own session)
Tools     2 offered, 1 refused
  offered  gsv__MemorySearch  tools.policy.group.allow: gsv__MemorySearch
  refused  laptop__Bash       not in tools.policy.group.allow
  ask      laptop__Read       tools.policy.group.ask: laptop__*
! level group may use a node tool
"
        );
    }

    #[test]
    fn waiting_approvals_show_the_exact_arguments() {
        let r = ApprovalsListResult {
            approvals: vec![gsv_protocol::Approval {
                code: "ABCD2345".into(),
                session_key: "agent:main:discord:dm:82".into(),
                who: Some("discord:82".into()),
                trust: Trust::APPROVED,
                tool: "laptop__Bash".into(),
                args: serde_json::json!({"command": "ls"}),
                created_at_ms: 0,
                expires_at_ms: 300_000,
            }],
        };
        assert_eq!(
            render_approvals(&r),
            "ABCD2345  laptop__Bash  discord:82 (approved)  in agent:main:discord:dm:82  until 1970-01-01T00:05:00Z\n  {\"command\":\"ls\"}\n"
        );
        assert_eq!(
            render_approvals(&ApprovalsListResult { approvals: vec![] }),
            "No call waits for your approval.\n"
        );
    }

    #[test]
    fn the_audit_log_reads_one_line_per_call() {
        let r = AuditListResult {
            entries: vec![AuditEntry {
                at_ms: 1_795_910_400_000,
                session_key: "agent:main:discord:dm:82".into(),
                who: Some("discord:82".into()),
                trust: Trust::APPROVED,
                tool: "laptop__Bash".into(),
                args_digest: "0123456789abcdef".into(),
                decision: "refused".into(),
                rule: "not in tools.policy.approved.allow".into(),
            }],
            count: 3,
        };
        assert_eq!(
            render_audit(&r),
            "2026-11-29T00:00:00Z  agent:main:discord:dm:82  discord:82  approved  laptop__Bash  refused  args 0123456789abcdef  not in tools.policy.approved.allow\n1 of 3 recorded\n"
        );
        assert_eq!(
            render_audit(&AuditListResult {
                entries: vec![],
                count: 0
            }),
            "No tool call from anyone but the owner is recorded.\n"
        );
    }
}
