//! Tool calls of the Session's current run. The calls of one assistant turn
//! are stored with it (same synchronous step), sent together (node calls
//! and the tools the Gateway runs through the Gateway, native ones run
//! here), and their results stored as they come. The run waits with
//! nothing in memory: a result arriving, or the `tools` deadline
//! (`timeouts.toolMs`, longer for a `gsv__SessionSend` that waits longer),
//! resumes it, so the object may hibernate or be evicted meanwhile. A
//! turn whose calls all run here sets no deadline: the watchdog tick
//! resumes a run an eviction cut off.

use super::core::Core;
use super::error::{Res, SessionError};
use super::store::CallRow;
use crate::agent_tools::{self, GatewayTool, GatewayToolCall, GatewayToolReply};
use crate::gateway::transfer::{TransferArgs, TransferRequest, TRANSFER};
use crate::session::internal::{ApprovalDecided, AskApproval, AskReply, AuditRecord};
use crate::session::run_config::RunConfig;
use crate::session::tools::{
    result_message, timed_out, tool_wait, PendingCall, ToolError, ToolWait,
};
use crate::storage::Reuse;
use crate::trust::explain::args_digest;
use crate::trust::{memory_refusal, ToolPolicy, Trust};
use crate::worker::bindings::GatewayStub;
use crate::worker::native_tools;
use crate::worker::r2;
use crate::worker::rpc::now_ms;
use crate::worker::workspace::prompt_load::RunPrompt;
use gsv_protocol::AuditEntry;
use gsv_protocol::{AckResult, AssistantMessage, Message, ToolRequestParams, ToolResultParams};
use serde_json::Value;

/// The deadline kind of the current turn's tool calls.
pub const TOOLS_DEADLINE: &str = "tools";

/// The tool calls over the Session's parts: its store, its alarm (the
/// calls' deadline), its event link (node calls go on it while it is
/// open), and the bindings to reach the Gateway and R2.
pub struct Tools<'a> {
    pub core: &'a Core,
}

/// What dispatching needs from the run.
pub struct ToolRun<'a> {
    pub run_id: &'a str,
    pub prompt: &'a RunPrompt,
    pub rc: &'a RunConfig,
    pub session_key: &'a str,
    /// The run's depth in a chain of `gsv__SessionSend` (0: a person's).
    pub send_depth: u32,
    /// Who its memory tools act for.
    pub memory: &'a crate::memory::calls::Caller,
    /// `workspace.recheckSeconds` in ms: how long a listing a prompt was
    /// made from also answers the workspace tools' reads.
    pub recheck_ms: u64,
    /// The tools the run's trust level may call: any other call is
    /// refused here, never run, whatever name the model sent.
    pub policy: &'a ToolPolicy,
    /// `tools.policy.askTimeoutSeconds` in ms.
    pub ask_timeout_ms: u64,
}

impl Tools<'_> {
    /// Stores the calls of an assistant turn. Called right after the turn
    /// is appended, with no await between: both land or neither.
    pub fn store_calls(&self, answer: &AssistantMessage) -> Res<()> {
        self.core.store.store_calls(answer.tool_calls())
    }

    /// Sends what is unsent and, once every call is answered, appends the
    /// results in call order. True: call the model. False: wait.
    pub async fn settle(&self, t: &ToolRun<'_>) -> Res<bool> {
        loop {
            let rows = self.core.store.call_rows()?;
            match tool_wait(&pending(&rows)) {
                ToolWait::Idle => return Ok(true),
                ToolWait::Waiting => return Ok(false),
                ToolWait::Complete(results) => {
                    for r in &results {
                        self.core.store.append_stored(r)?;
                    }
                    self.clear()?;
                    return Ok(true);
                }
                ToolWait::Dispatch(indexes) => {
                    // Calls this object runs are answered before the run
                    // goes on, and one cut off by an eviction is run again
                    // when the watchdog tick resumes the run (which ends
                    // with an error after `MAX_RESUMES`): only calls
                    // answered from elsewhere need the deadline.
                    let here = |i: &usize| runs_at(&rows[*i], t).is_here();
                    if !indexes.iter().all(here) {
                        // A call waiting for the owner may wait the whole
                        // ask timeout, then run.
                        let asks = indexes.iter().any(|&i| runs_at(&rows[i], t) == RunsAt::Ask);
                        let ask_allowance = match asks {
                            true => t.ask_timeout_ms + t.rc.tool_timeout_ms,
                            false => 0,
                        };
                        let allowance = indexes
                            .iter()
                            .filter_map(|&i| gateway_call(&rows[i], t))
                            .filter_map(|c| c.ok())
                            .map(|c| agent_tools::allowance_ms(&c))
                            .fold(t.rc.tool_timeout_ms.max(ask_allowance), u64::max);
                        self.core
                            .store
                            .set_deadline_once(TOOLS_DEADLINE, now_ms() + allowance as i64)?;
                        self.core.alarm.schedule(&self.core.store).await;
                    }
                    let sends = indexes.iter().map(|&i| self.dispatch(&rows[i], t));
                    for r in futures::future::join_all(sends).await {
                        r?;
                    }
                    if !self.core.store.is_current(t.run_id) {
                        return Ok(false);
                    }
                }
            }
        }
    }

    /// Runs a native call here, or hands the call to the Gateway: one of
    /// the tools it runs (answered now or later), a node tool, or a
    /// `gsv__Transfer` whose bytes the Gateway relays. A result that comes
    /// later arrives on `/tool.result`.
    async fn dispatch(&self, row: &CallRow, t: &ToolRun<'_>) -> Res<()> {
        let args: Value = serde_json::from_str(&row.args).unwrap_or(Value::Null);
        let max_chars = t.rc.max_result_chars;
        let at = runs_at(row, t);
        let memory_refused = match at {
            RunsAt::Memory => {
                memory_refusal(t.prompt.trust, &row.name, &args, t.memory.user.as_deref())
            }
            _ => None,
        };
        // A call put to the owner is logged by the Gateway as it asks.
        if !t.prompt.trust.is_owner() && at != RunsAt::Ask {
            let refused = matches!(at, RunsAt::Refused(_)) || memory_refused.is_some();
            let decision = if refused { "refused" } else { "ran" };
            let rule = memory_refused
                .clone()
                .unwrap_or_else(|| t.policy.decide(&row.name).rule);
            self.audit(row, t, decision, rule).await;
        }
        if let Some(why) = match &at {
            RunsAt::Refused(why) => Some(why.clone()),
            _ => memory_refused,
        } {
            let outcome = Err(ToolError::new(why));
            return self.store_outcome(&row.call_id, &row.name, outcome, max_chars);
        }
        if at == RunsAt::Ask {
            let ask = AskApproval {
                session_key: t.session_key.to_string(),
                call_id: row.call_id.clone(),
                tool: row.name.clone(),
                args: args.clone(),
                who: t.memory.user.clone(),
                trust: t.prompt.trust,
            };
            return match GatewayStub::get(&self.core.env).call(&ask).await {
                // A standing approval: run it as approved, now.
                Ok(AskReply::Approved) => {
                    self.core.store.approve_call(&row.call_id)?;
                    Box::pin(self.dispatch(&row.approved(), t)).await
                }
                Ok(AskReply::Pending) => self.core.store.mark_dispatched(&row.call_id),
                Err(e) => {
                    let outcome = Err(ToolError::new(e.message));
                    self.store_outcome(&row.call_id, &row.name, outcome, max_chars)
                }
            };
        }
        if at == RunsAt::Gateway {
            let tool = agent_tools::parse(&row.name, &args);
            return match self.ask_gateway(row, tool, t).await {
                Ok(GatewayToolReply::Pending) => self.core.store.mark_dispatched(&row.call_id),
                Ok(GatewayToolReply::Done { result }) => {
                    self.store_outcome(&row.call_id, &row.name, Ok(result), max_chars)
                }
                Err(e) => self.store_outcome(&row.call_id, &row.name, Err(e), max_chars),
            };
        }
        if at == RunsAt::Memory {
            let outcome =
                native_tools::memory::run(&self.core.env, t.memory, &row.name, &args).await;
            return self.store_outcome(
                &row.call_id,
                &row.name,
                outcome.map(Value::String),
                max_chars,
            );
        }
        if at == RunsAt::Native {
            // A read sees a file as the prompt does only while this session
            // hears of every workspace change the gateway makes or is told
            // of (the revision comes on the event link); else it reads R2.
            let workspace_rev = self.core.workspace_rev.borrow().clone();
            let reuse = self.core.link.hears_workspace().then(|| Reuse {
                now_ms: crate::worker::workspace::prompt_load::now(),
                within_ms: t.recheck_ms,
                workspace_rev: &workspace_rev,
                writes: r2::writes(),
            });
            let outcome = match self.core.bucket() {
                Ok(bucket) => {
                    let ctx = native_tools::ToolContext {
                        bucket: &bucket,
                        agent_id: &t.prompt.agent_id,
                        session_key: t.session_key,
                        trust: t.prompt.trust,
                        model: &t.rc.model,
                        is_main: t.prompt.is_main,
                        session: &self.core.store,
                        env: &self.core.env,
                        max_result_chars: max_chars,
                        call_id: &row.call_id,
                        memory: t.memory,
                        reuse,
                    };
                    let writes = r2::writes();
                    let outcome = native_tools::execute(&ctx, &row.name, &args).await;
                    // It wrote the workspace: the gateway hears of it now, and
                    // tells the other sessions' links (their reads may take
                    // what their prompts were made from without R2).
                    if r2::writes() != writes {
                        self.core.workspace_written().await;
                    }
                    outcome.map(Value::String)
                }
                Err(e) => Err(ToolError::new(e.to_string())),
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
                match self.core.link.send_tool_request(&request) {
                    true => Ok(()),
                    false => GatewayStub::get(&self.core.env)
                        .call(&request)
                        .await
                        .map(|_| ())
                        .map_err(SessionError::Wire),
                }
            }
        };
        match sent {
            Ok(_) => self.core.store.mark_dispatched(&row.call_id),
            Err(e) => {
                let outcome = Err(ToolError::new(e.to_string()));
                self.store_outcome(&row.call_id, &row.name, outcome, max_chars)
            }
        }
    }

    /// Tells the Gateway's audit log of a call below the owner. A failure
    /// to record is logged and does not hold the call back: the decision
    /// was made here, in code, either way.
    async fn audit(&self, row: &CallRow, t: &ToolRun<'_>, decision: &str, rule: String) {
        let record = AuditRecord {
            entry: AuditEntry {
                at_ms: now_ms(),
                session_key: t.session_key.to_string(),
                who: t.memory.user.clone(),
                trust: t.prompt.trust,
                tool: row.name.clone(),
                args_digest: args_digest(&row.args),
                decision: decision.to_string(),
                rule,
            },
        };
        if let Err(e) = GatewayStub::get(&self.core.env).call(&record).await {
            worker::console_error!(
                "session: recording a call in the audit log failed: {}",
                e.message
            );
        }
    }

    /// Hands a tool the Gateway runs to it: its answer now, or `Pending`
    /// (the result comes on `/tool.result`).
    async fn ask_gateway(
        &self,
        row: &CallRow,
        tool: Result<GatewayTool, String>,
        t: &ToolRun<'_>,
    ) -> Result<GatewayToolReply, ToolError> {
        let call = GatewayToolCall {
            call_id: row.call_id.clone(),
            session_key: t.session_key.to_string(),
            agent_id: t.prompt.agent_id.clone(),
            depth: t.send_depth,
            trust: t.prompt.trust,
            tool: tool.map_err(ToolError::new)?,
        };
        GatewayStub::get(&self.core.env)
            .call(&call)
            .await
            .map_err(ToolError::from)
    }

    /// Asks the Gateway to start a `gsv__Transfer`.
    async fn request_transfer(&self, row: &CallRow, args: Value, t: &ToolRun<'_>) -> Res<()> {
        let a: TransferArgs = serde_json::from_value(args)
            .map_err(|e| SessionError::Invalid(format!("invalid arguments: {e}")))?;
        let req = TransferRequest {
            call_id: row.call_id.clone(),
            session_key: t.session_key.to_string(),
            agent_id: t.prompt.agent_id.clone(),
            source: a.source,
            destination: a.destination,
        };
        GatewayStub::get(&self.core.env).call(&req).await?;
        Ok(())
    }

    /// Stores a call's outcome unless it already has one (the first of a
    /// result, a timeout and a cancellation wins).
    fn store_outcome(
        &self,
        call_id: &str,
        name: &str,
        outcome: Result<Value, ToolError>,
        max_chars: usize,
    ) -> Res<()> {
        self.save_result(&result_message(call_id, name, outcome, max_chars, now_ms()))
    }

    fn save_result(&self, message: &Message) -> Res<()> {
        let Message::ToolResult(r) = message else {
            return Err(SessionError::Storage(
                "only tool results answer calls".into(),
            ));
        };
        self.core.store.save_call_result(&r.tool_call_id, message)
    }

    /// The owner's decision on a call that waited: approved, it is sent
    /// again to run (true: the run must go on to send it); denied or timed
    /// out, its result is the refusal (true when that completed the turn).
    pub fn take_decision(&self, d: ApprovalDecided) -> Res<(AckResult, bool)> {
        let Some(name) = self.core.store.open_call(&d.call_id)? else {
            return Ok((dropped(), false));
        };
        if d.approved {
            self.core.store.approve_call(&d.call_id)?;
            return Ok((
                AckResult {
                    ok: true,
                    dropped: None,
                },
                true,
            ));
        }
        let why = crate::trust::approvals::refusal_text(&name, &d.reason);
        self.take_outcome(&d.call_id, &name, Err(ToolError::new(why)))
    }

    /// A node's answer, relayed by the Gateway. `dropped` when no call of
    /// the current turn waits for it (answered already, timed out, aborted).
    /// The flag is true when this answer completed the turn.
    pub fn take_result(&self, p: ToolResultParams) -> Res<(AckResult, bool)> {
        let Some(name) = self.core.store.open_call(&p.call_id)? else {
            return Ok((dropped(), false));
        };
        let outcome = match (p.error, p.result) {
            (Some(e), _) => Err(ToolError::new(e)),
            (None, r) => Ok(r.unwrap_or(Value::Null)),
        };
        self.take_outcome(&p.call_id, &name, outcome)
    }

    /// Stores an outcome that came from outside the run (a node's answer,
    /// the owner's refusal); true when it completed the turn.
    fn take_outcome(
        &self,
        call_id: &str,
        name: &str,
        outcome: Result<Value, ToolError>,
    ) -> Res<(AckResult, bool)> {
        let max_chars = RunConfig::max_result_chars_in(&*self.core.store.config()?);
        self.store_outcome(call_id, name, outcome, max_chars)?;
        let complete = matches!(self.state()?, ToolWait::Complete(_));
        Ok((
            AckResult {
                ok: true,
                dropped: None,
            },
            complete,
        ))
    }

    pub fn state(&self) -> Res<ToolWait<String>> {
        Ok(tool_wait(&pending(&self.core.store.call_rows()?)))
    }

    /// Turns every unanswered call into a timeout error.
    pub fn time_out(&self) -> Res<()> {
        let tool_ms = RunConfig::tool_timeout_ms_in(&*self.core.store.config()?);
        let now = now_ms();
        for call in pending(&self.core.store.call_rows()?) {
            if call.result.is_none() {
                self.save_result(&timed_out(&call, tool_ms, now))?;
            }
        }
        Ok(())
    }

    /// Forgets the turn's calls (the run was cancelled); how many were out.
    pub fn cancel(&self) -> Res<u32> {
        let open = self
            .core
            .store
            .call_rows()?
            .iter()
            .filter(|r| !r.answered())
            .count();
        self.clear()?;
        Ok(open as u32)
    }

    /// The turn is over: its calls and their deadline go.
    pub fn clear(&self) -> Res<()> {
        self.core.link.tool_calls_settled();
        self.core.store.clear_calls(TOOLS_DEADLINE)
    }
}

/// A call of a tool the Gateway runs, its arguments read (an `Err` is
/// the model's to fix); `None` for every other tool.
fn gateway_call(row: &CallRow, t: &ToolRun<'_>) -> Option<Result<GatewayTool, String>> {
    (runs_at(row, t) == RunsAt::Gateway).then(|| {
        let args: Value = serde_json::from_str(&row.args).unwrap_or(Value::Null);
        agent_tools::parse(&row.name, &args)
    })
}

/// Where a call runs: `dispatch` sends it there, and `settle` sets the
/// deadline for the calls answered from elsewhere.
#[derive(Clone, PartialEq, Eq)]
enum RunsAt {
    /// Not allowed at the run's trust level: answered with this refusal,
    /// here, and run nowhere.
    Refused(String),
    /// An `ask` tool not approved yet: the Gateway asks the owner.
    Ask,
    /// One of the tools the Gateway runs (the main agent's only).
    Gateway,
    /// A memory tool, run here.
    Memory,
    /// A native tool, run here.
    Native,
    /// A node tool or a transfer.
    Elsewhere,
}

impl RunsAt {
    /// Run by this object, answered before the run goes on.
    fn is_here(&self) -> bool {
        matches!(self, RunsAt::Refused(_) | RunsAt::Memory | RunsAt::Native)
    }
}

fn runs_at(row: &CallRow, t: &ToolRun<'_>) -> RunsAt {
    let name = row.name.as_str();
    let is_main = t.prompt.is_main;
    let decision = t.policy.decide(name);
    if !decision.allowed {
        return RunsAt::Refused(refusal(name, t.prompt.trust, &decision.rule));
    }
    if decision.ask && row.approved == 0 {
        return RunsAt::Ask;
    }
    if is_main && agent_tools::runs_on_gateway(name) {
        RunsAt::Gateway
    } else if crate::memory::tools::is_memory_tool(name) {
        RunsAt::Memory
    } else if native_tools::is_native(name, is_main) {
        RunsAt::Native
    } else {
        RunsAt::Elsewhere
    }
}

/// What the model reads for a call its run may not make.
pub(super) fn refusal(name: &str, trust: Trust, rule: &str) -> String {
    format!(
        "{name} is not allowed in this conversation (trust level {trust}; {rule}). It was not run. Tell the person you cannot do this here."
    )
}

fn pending(rows: &[CallRow]) -> Vec<PendingCall<String>> {
    rows.iter().map(CallRow::pending).collect()
}

fn dropped() -> AckResult {
    AckResult {
        ok: true,
        dropped: Some(true),
    }
}
