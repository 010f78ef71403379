//! Tool calls of the Session's current run. The calls of one assistant turn
//! are stored with it (same synchronous step), sent together (node calls
//! through the Gateway, native ones run here), and their results stored as
//! they come. The run waits with nothing in memory: a result arriving, or
//! the `tools` deadline (`timeouts.toolMs`), resumes it, so the object may
//! hibernate or be evicted meanwhile.

use super::{Core, CurrentRun, Res};
use crate::gateway::transfer::{TransferArgs, TransferRequest, TRANSFER};
use crate::session::internal::path;
use crate::session::run_config::RunConfig;
use crate::session::tools::{result_message, timed_out, tool_wait, PendingCall, ToolWait};
use crate::worker::native_tools;
use crate::worker::rpc::{call_object, internal_error, now_ms};
use crate::worker::workspace::prompt_load::RunPrompt;
use gsv_protocol::{
    codes, AckResult, AssistantMessage, ErrorShape, Message, ToolRequestParams, ToolResultParams,
};
use serde::Deserialize;
use serde_json::Value;

/// The deadline kind of the current turn's tool calls.
pub(super) const TOOLS_DEADLINE: &str = "tools";

#[derive(Debug, Deserialize)]
struct CallRow {
    call_id: String,
    name: String,
    args: String,
    dispatched: i64,
    result: Option<String>,
}

impl CallRow {
    fn pending(&self) -> Res<PendingCall> {
        let result = match &self.result {
            Some(r) => Some(serde_json::from_str::<Message>(r).map_err(internal_error)?),
            None => None,
        };
        Ok(PendingCall {
            call_id: self.call_id.clone(),
            name: self.name.clone(),
            dispatched: self.dispatched != 0,
            result,
        })
    }
}

/// What dispatching needs from the run.
pub(super) struct ToolRun<'a> {
    pub prompt: &'a RunPrompt,
    pub rc: &'a RunConfig,
    pub session_key: &'a str,
}

impl Core {
    /// Stores the calls of an assistant turn. Called right after the turn
    /// is appended, with no await between: both land or neither.
    pub(super) fn store_calls(&self, answer: &AssistantMessage) -> Res<()> {
        for (seq, (id, name, args)) in answer.tool_calls().enumerate() {
            self.exec(
                "INSERT INTO tool_calls (seq, call_id, name, args) VALUES (?, ?, ?, ?)",
                vec![
                    (seq as i64).into(),
                    id.into(),
                    name.into(),
                    args.to_string().into(),
                ],
            )?;
        }
        Ok(())
    }

    fn call_rows(&self) -> Res<Vec<CallRow>> {
        self.exec(
            "SELECT call_id, name, args, dispatched, result FROM tool_calls ORDER BY seq",
            vec![],
        )?
        .to_array()
        .map_err(internal_error)
    }

    /// Sends what is unsent and, once every call is answered, appends the
    /// results in call order. True: call the model. False: wait.
    pub(super) async fn settle_tools(&self, run: &CurrentRun, t: &ToolRun<'_>) -> Res<bool> {
        loop {
            let rows = self.call_rows()?;
            match tool_wait(&pending(&rows)?) {
                ToolWait::Idle => return Ok(true),
                ToolWait::Waiting => return Ok(false),
                ToolWait::Complete(results) => {
                    for r in &results {
                        self.append(r)?;
                    }
                    self.clear_calls()?;
                    return Ok(true);
                }
                ToolWait::Dispatch(indexes) => {
                    self.exec(
                        "INSERT INTO deadlines (kind, at_ms) VALUES (?, ?) ON CONFLICT(kind) DO NOTHING",
                        vec![
                            TOOLS_DEADLINE.into(),
                            (now_ms() + t.rc.tool_timeout_ms as i64).into(),
                        ],
                    )?;
                    self.schedule().await;
                    let sends = indexes.iter().map(|&i| self.dispatch(&rows[i], t));
                    for r in futures::future::join_all(sends).await {
                        r?;
                    }
                    if !self.is_current(run) {
                        return Ok(false);
                    }
                }
            }
        }
    }

    /// Runs a native call here, or hands the call to the Gateway: a node
    /// tool, or a `gsv__Transfer` whose bytes the Gateway relays. Either
    /// way the result arrives later on `/tool.result`.
    async fn dispatch(&self, row: &CallRow, t: &ToolRun<'_>) -> Res<()> {
        let args: Value = serde_json::from_str(&row.args).unwrap_or(Value::Null);
        let max_chars = t.rc.max_result_chars;
        if native_tools::is_native(&row.name, t.prompt.is_main) {
            let outcome = match self.env.bucket("STORAGE") {
                Ok(bucket) => {
                    let ctx = native_tools::ToolContext {
                        bucket: &bucket,
                        agent_id: &t.prompt.agent_id,
                        model: &t.rc.model,
                        is_main: t.prompt.is_main,
                        env: &self.env,
                        session: self,
                        max_result_chars: max_chars,
                    };
                    native_tools::execute(&ctx, &row.name, &args)
                        .await
                        .map(Value::String)
                }
                Err(e) => Err(e.to_string()),
            };
            return self.store_outcome(&row.call_id, &row.name, outcome, max_chars);
        }
        let sent = match row.name == TRANSFER {
            true => self.request_transfer(row, args, t).await,
            false => {
                let request = ToolRequestParams {
                    call_id: row.call_id.clone(),
                    tool: row.name.clone(),
                    args,
                    session_key: t.session_key.to_string(),
                };
                call_object::<_, Value>(
                    &self.env,
                    "GATEWAY",
                    "singleton",
                    path::TOOL_REQUEST,
                    &request,
                )
                .await
            }
        };
        match sent {
            Ok(_) => {
                self.exec(
                    "UPDATE tool_calls SET dispatched = 1 WHERE call_id = ?",
                    vec![row.call_id.as_str().into()],
                )?;
                Ok(())
            }
            Err(e) => self.store_outcome(&row.call_id, &row.name, Err(e.message), max_chars),
        }
    }

    /// Asks the Gateway to start a `gsv__Transfer`.
    async fn request_transfer(&self, row: &CallRow, args: Value, t: &ToolRun<'_>) -> Res<Value> {
        let a: TransferArgs = serde_json::from_value(args)
            .map_err(|e| ErrorShape::new(codes::BAD_REQUEST, format!("invalid arguments: {e}")))?;
        let req = TransferRequest {
            call_id: row.call_id.clone(),
            session_key: t.session_key.to_string(),
            agent_id: t.prompt.agent_id.clone(),
            source: a.source,
            destination: a.destination,
        };
        call_object(&self.env, "GATEWAY", "singleton", path::TRANSFER, &req).await
    }

    /// Stores a call's outcome unless it already has one (the first of a
    /// result, a timeout and a cancellation wins).
    fn store_outcome(
        &self,
        call_id: &str,
        name: &str,
        outcome: Result<Value, String>,
        max_chars: usize,
    ) -> Res<()> {
        self.save_result(&result_message(call_id, name, outcome, max_chars, now_ms()))
    }

    fn save_result(&self, message: &Message) -> Res<()> {
        let Message::ToolResult(r) = message else {
            return Err(internal_error("only tool results answer calls"));
        };
        let data = serde_json::to_string(message).map_err(internal_error)?;
        self.exec(
            "UPDATE tool_calls SET result = ?, dispatched = 1 WHERE call_id = ? AND result IS NULL",
            vec![data.into(), r.tool_call_id.as_str().into()],
        )?;
        Ok(())
    }

    /// A node's answer, relayed by the Gateway. `dropped` when no call of
    /// the current turn waits for it (answered already, timed out, aborted).
    /// The flag is true when this answer completed the turn.
    pub(super) fn take_tool_result(&self, p: ToolResultParams) -> Res<(AckResult, bool)> {
        #[derive(Deserialize)]
        struct Open {
            name: String,
        }
        let open: Vec<Open> = self
            .exec(
                "SELECT name FROM tool_calls WHERE call_id = ? AND result IS NULL",
                vec![p.call_id.as_str().into()],
            )?
            .to_array()
            .map_err(internal_error)?;
        let Some(Open { name }) = open.into_iter().next() else {
            return Ok((dropped(), false));
        };
        let outcome = match (p.error, p.result) {
            (Some(e), _) => Err(e),
            (None, r) => Ok(r.unwrap_or(Value::Null)),
        };
        let max_chars = self.run_config()?.max_result_chars;
        self.store_outcome(&p.call_id, &name, outcome, max_chars)?;
        let complete = matches!(self.tool_state()?, ToolWait::Complete(_));
        Ok((
            AckResult {
                ok: true,
                dropped: None,
            },
            complete,
        ))
    }

    pub(super) fn tool_state(&self) -> Res<ToolWait> {
        Ok(tool_wait(&pending(&self.call_rows()?)?))
    }

    /// Turns every unanswered call into a timeout error.
    pub(super) fn time_out_tools(&self) -> Res<()> {
        let tool_ms = self.run_config()?.tool_timeout_ms;
        let now = now_ms();
        for call in pending(&self.call_rows()?)? {
            if call.result.is_none() {
                self.save_result(&timed_out(&call, tool_ms, now))?;
            }
        }
        Ok(())
    }

    /// Forgets the turn's calls (the run was cancelled); how many were out.
    pub(super) fn cancel_tools(&self) -> Res<u32> {
        let open = self
            .call_rows()?
            .iter()
            .filter(|r| r.result.is_none())
            .count();
        self.clear_calls()?;
        Ok(open as u32)
    }

    /// The turn is over: its calls and their deadline go.
    pub(super) fn clear_calls(&self) -> Res<()> {
        self.exec("DELETE FROM tool_calls", vec![])?;
        self.exec(
            "DELETE FROM deadlines WHERE kind = ?",
            vec![TOOLS_DEADLINE.into()],
        )?;
        Ok(())
    }
}

fn pending(rows: &[CallRow]) -> Res<Vec<PendingCall>> {
    rows.iter().map(CallRow::pending).collect()
}

fn dropped() -> AckResult {
    AckResult {
        ok: true,
        dropped: Some(true),
    }
}
