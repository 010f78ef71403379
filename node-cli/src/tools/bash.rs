//! Bash: run a shell command in the workspace, in the foreground or the
//! background (see `session.rs` for how commands are run).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use gsv_protocol::capability;
use serde_json::{json, Value};

use super::session::{self, Session, OUTPUT_CAP, TAIL_CAP};
use super::text::tail_chars;
use super::{show, Args, Ctx, Tool, ToolResult};

const DEFAULT_TIMEOUT_MS: u64 = 300_000;

pub struct Bash;

impl Tool for Bash {
    fn name(&self) -> &'static str {
        "Bash"
    }

    fn description(&self) -> &'static str {
        "Run a shell command on this node (in the user's login shell, stdout and stderr \
         merged). The working directory defaults to the workspace root. Output is capped \
         at 200000 characters (the end is kept). Long-running commands (servers, watchers) \
         should use background:true or yieldMs, then the Process tool to poll, read logs, \
         write to stdin or kill them."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "Shell command to run."},
                "workdir": {"type": "string", "description": "Working directory, relative to the workspace root (default: the root)."},
                "timeout": {"type": "integer", "minimum": 0, "description": "Kill the command (and what it started) after this many milliseconds, in the background too (default 300000; 0 = no limit)."},
                "background": {"type": "boolean", "description": "Start in the background and return a sessionId at once."},
                "yieldMs": {"type": "integer", "minimum": 10, "maximum": 120000, "description": "Wait this long for the command; if it is still running, leave it in the background and return its sessionId."}
            },
            "required": ["command"]
        })
    }

    fn capabilities(&self) -> &'static [&'static str] {
        &[capability::SHELL_EXEC]
    }

    fn call(
        &self,
        ctx: Arc<Ctx>,
        args: Args,
        call_id: Option<String>,
    ) -> BoxFuture<'static, ToolResult> {
        Box::pin(run(ctx, args, call_id))
    }
}

async fn run(ctx: Arc<Ctx>, args: Args, call_id: Option<String>) -> ToolResult {
    let command = args.non_empty_str("command")?;
    let workdir = args.opt_str("workdir")?;
    let workdir = ctx
        .workspace
        .resolve_or_root("workdir", workdir.as_deref())?;
    if !workdir.is_dir() {
        return Err(format!(
            "workdir {} is not an existing directory",
            show(&workdir)
        ));
    }
    let timeout_ms = args.opt_u64("timeout")?.unwrap_or(DEFAULT_TIMEOUT_MS);
    let timeout = (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms));
    let background = args.bool("background")?;
    let yield_ms = args.opt_u64("yieldMs")?.map(|y| y.clamp(10, 120_000));

    let session = session::spawn(
        &ctx.shell,
        &ctx.sessions,
        ctx.events.clone(),
        &command,
        &workdir,
        timeout,
        background,
        background || yield_ms.is_some(),
        call_id,
    )
    .map_err(|e| format!("cannot start {}: {e}", show(&ctx.shell.program)))?;

    if background {
        return Ok(running(&session));
    }
    if let Some(ms) = yield_ms {
        let waited = tokio::time::timeout(Duration::from_millis(ms), session.wait()).await;
        if waited.is_err() && session.background(&ctx.sessions) {
            return Ok(running(&session));
        }
    }
    session.wait().await;
    Ok(completed(&session))
}

/// The answer for a session left running in the background.
fn running(session: &Session) -> Value {
    let (tail, _) = session.state().output.tail(TAIL_CAP);
    json!({
        "status": "running",
        "sessionId": session.id,
        "pid": session.pid,
        "startedAt": session.started_at,
        "tail": tail,
        "workdir": show(&session.workdir),
        "note": format!(
            "Running in the background. Use the Process tool with sessionId \"{}\" to poll, \
             read the log, write to stdin or kill it.",
            session.id
        ),
    })
}

/// The answer for a session that has ended.
pub fn completed(session: &Session) -> Value {
    let state = session.state();
    let Some(exit) = state.exit else {
        return Value::Null;
    };
    let (output, truncated) = state.output.tail(OUTPUT_CAP);
    let tail = tail_chars(&output, TAIL_CAP).0.to_string();
    json!({
        "status": if exit.success() { "completed" } else { "failed" },
        "sessionId": session.id,
        "exitCode": exit.code,
        "signal": exit.signal.map(session::signal_name),
        "timedOut": exit.timed_out,
        "startedAt": session.started_at,
        "endedAt": exit.ended_at,
        "durationMs": (exit.ended_at - session.started_at).max(0),
        "output": output,
        "tail": tail,
        "truncated": truncated,
        "workdir": show(&session.workdir),
    })
}

#[cfg(test)]
#[path = "bash_tests.rs"]
mod tests;
