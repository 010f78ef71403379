//! Process: manage the Bash sessions left running in the background.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use gsv_protocol::capability;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use super::session::{signal_name, Session};
use super::text::head_chars;
use super::{now_ms, show, Args, Ctx, Tool, ToolResult};

const DEFAULT_LOG_LINES: usize = 200;

pub struct Process;

impl Tool for Process {
    fn name(&self) -> &'static str {
        "Process"
    }

    fn description(&self) -> &'static str {
        "Manage background Bash sessions. Actions: list (all sessions), poll (status and \
         output since the last poll), log (output lines: offset/limit, default the last \
         200), write (send data to stdin), submit (data plus a newline), kill (SIGKILL the \
         session's process group). Finished sessions are kept for 30 minutes."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["list", "poll", "log", "write", "submit", "kill"]},
                "sessionId": {"type": "string", "description": "Session id from Bash (all actions but list)."},
                "data": {"type": "string", "description": "Text for write/submit."},
                "eof": {"type": "boolean", "description": "write: close stdin after the data."},
                "offset": {"type": "integer", "minimum": 0, "description": "log: first line (0-based; default: the last `limit` lines)."},
                "limit": {"type": "integer", "minimum": 1, "description": "log: number of lines (default 200)."}
            },
            "required": ["action"]
        })
    }

    fn capabilities(&self) -> &'static [&'static str] {
        &[capability::SHELL_EXEC]
    }

    fn call(
        &self,
        ctx: Arc<Ctx>,
        args: Args,
        _call_id: Option<String>,
    ) -> BoxFuture<'static, ToolResult> {
        Box::pin(run(ctx, args))
    }
}

async fn run(ctx: Arc<Ctx>, args: Args) -> ToolResult {
    let action = args.non_empty_str("action")?;
    if action == "list" {
        return Ok(list(&ctx));
    }
    let id = args.non_empty_str("sessionId")?;
    let session = ctx.sessions.get(&id).ok_or_else(|| {
        format!("no background session \"{id}\" (use action \"list\" to see the sessions)")
    })?;
    match action.as_str() {
        "poll" => Ok(poll(&session)),
        "log" => log(&session, &args),
        "write" => {
            let data = args.str("data")?;
            write(&session, data, args.bool("eof")?).await
        }
        "submit" => {
            let data = args.opt_str("data")?.unwrap_or_default();
            write(&session, data + "\n", false).await
        }
        "kill" => Ok(kill(&session).await),
        other => Err(format!(
            "argument `action` must be one of list, poll, log, write, submit, kill; got \"{other}\""
        )),
    }
}

fn status(session: &Session) -> (&'static str, Value) {
    let state = session.state();
    match state.exit {
        None => ("running", json!({"status": "running"})),
        Some(exit) => {
            let status = if exit.success() {
                "completed"
            } else {
                "failed"
            };
            (
                status,
                json!({
                    "status": status,
                    "exitCode": exit.code,
                    "signal": exit.signal.map(signal_name),
                    "timedOut": exit.timed_out,
                    "endedAt": exit.ended_at,
                }),
            )
        }
    }
}

fn with_status(session: &Session, mut value: Value) -> Value {
    let (_, status) = status(session);
    if let (Value::Object(out), Value::Object(status)) = (&mut value, status) {
        out.extend(status);
    }
    value
}

fn list(ctx: &Ctx) -> Value {
    let now = now_ms();
    let mut text = Vec::new();
    let sessions: Vec<Value> = ctx
        .sessions
        .list()
        .iter()
        .map(|s| {
            let (status, _) = status(s);
            let end = s.state().exit.map_or(now, |e| e.ended_at);
            let runtime_ms = (end - s.started_at).max(0);
            let (cmd, cut) = head_chars(&s.command, 80);
            let ell = if cut { "…" } else { "" };
            text.push(format!(
                "{} {status} {}s {cmd}{ell}",
                s.id,
                runtime_ms / 1000
            ));
            with_status(
                s,
                json!({
                    "sessionId": s.id,
                    "command": s.command,
                    "pid": s.pid,
                    "workdir": show(&s.workdir),
                    "startedAt": s.started_at,
                    "runtimeMs": runtime_ms,
                }),
            )
        })
        .collect();
    let text = if text.is_empty() {
        "No background sessions.".to_string()
    } else {
        text.join("\n")
    };
    json!({"sessions": sessions, "count": sessions.len(), "text": text})
}

fn poll(session: &Session) -> Value {
    let (output, lost) = {
        let mut state = session.state();
        let finished = state.exit.is_some();
        let (output, stop, lost) = state.output.since(state.poll_cursor, finished);
        state.poll_cursor = stop;
        (output, lost)
    };
    with_status(
        session,
        json!({"sessionId": session.id, "output": output, "truncated": lost}),
    )
}

fn log(session: &Session, args: &Args) -> ToolResult {
    let limit = args
        .opt_u64("limit")?
        .map_or(DEFAULT_LOG_LINES, |l| l.max(1) as usize);
    let offset = args.opt_u64("offset")?;
    let (text, lost) = {
        let state = session.state();
        let (text, _, lost) = state.output.since(0, state.exit.is_some());
        (text, lost)
    };
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    let start = match offset {
        Some(o) => (o as usize).min(total),
        None => total.saturating_sub(limit),
    };
    let end = start.saturating_add(limit).min(total);
    Ok(with_status(
        session,
        json!({
            "sessionId": session.id,
            "content": lines[start..end].join("\n"),
            "offset": start,
            "lines": end - start,
            "totalLines": total,
            "truncated": lost,
        }),
    ))
}

async fn write(session: &Session, data: String, eof: bool) -> ToolResult {
    if session.state().exit.is_some() {
        return Err(format!("session {} has already ended", session.id));
    }
    let mut stdin = session.stdin.lock().await;
    let pipe = stdin
        .as_mut()
        .ok_or_else(|| format!("stdin of session {} is closed", session.id))?;
    let result = async {
        pipe.write_all(data.as_bytes()).await?;
        pipe.flush().await
    }
    .await;
    if let Err(e) = result {
        *stdin = None;
        return Err(format!("cannot write to session {}: {e}", session.id));
    }
    if eof {
        *stdin = None; // dropping the pipe closes it
    }
    Ok(json!({"sessionId": session.id, "bytes": data.len(), "stdinClosed": eof}))
}

async fn kill(session: &Session) -> Value {
    if session.state().exit.is_some() {
        return with_status(
            session,
            json!({"sessionId": session.id, "killed": false, "note": "the session had already ended"}),
        );
    }
    session.kill();
    let _ = tokio::time::timeout(Duration::from_secs(2), session.wait()).await;
    with_status(session, json!({"sessionId": session.id, "killed": true}))
}

#[cfg(test)]
#[path = "process_tests.rs"]
mod tests;
