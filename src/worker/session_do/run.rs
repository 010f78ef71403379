//! The agent loop of a Session: each queued message becomes a run, and a
//! run goes model call → tool calls → model call until it has its answer,
//! must wait for tool results, fails, or hits `tools.maxIterations`. What
//! comes next is decided by `RunMachine` (pure, tested natively); this
//! file does each step's I/O and reports what it found.

use super::compaction;
use super::core::{Core, KeptPrompt, PromptInputs};
use super::error::{Res, SessionError};
use super::reset::Reset;
use super::run_prompt::{
    self, kept_prompt, loaded, memory_caller, recall, workspace_error, Checking,
};
use super::store::CurrentRun;
use super::tools::{ToolRun, Tools};
use crate::config::Config;
use crate::llm::{LlmErrorKind, WrittenHistory};
use crate::memory::calls::Caller;
use crate::session::coalesce::DeltaCoalescer;
use crate::session::early_call::{race, Checked};
use crate::session::fallback::{fallbacks, hands_over};
use crate::session::run::{next_step, RunEvent, RunMachine, RunStep};
use crate::session::run_config::{with_directives, RunConfig};
use crate::time::today_and_yesterday;
use crate::trust::ToolPolicy;
use crate::worker::llm_call::{complete_request, request_for_prompt, Cancel};
use crate::worker::r2;
use crate::worker::rpc::{new_id, now_ms};
use crate::worker::tz::user_time_zone;
use crate::worker::workspace::prompt_load::RunPrompt;
use gsv_protocol::*;
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use worker::{console_error, console_log};

/// Streamed text is sent to the gateway at most this often.
const DELTA_INTERVAL_MS: i64 = 40;

/// Runs the current run (resuming it if it was interrupted), then every
/// queued message in order, each in its own run.
pub async fn run_loop(core: Rc<Core>) {
    if core.running.replace(true) {
        return;
    }
    loop {
        let run = match core.store.current_run() {
            Ok(Some(run)) => Some(run),
            Ok(None) => match next_run(&core).await {
                Ok(run) => run,
                Err(e) => {
                    console_error!("session: starting a run failed: {e}");
                    // The watchdog tries again.
                    let _ = core.ensure_tick().await;
                    None
                }
            },
            Err(e) => {
                console_error!("session: reading the run failed: {e}");
                None
            }
        };
        let Some(run) = run else { break };
        if let Err(e) = core.ensure_tick().await {
            console_error!("session: {e}");
        }
        if !drive_run(&core, &run).await {
            // Waiting on tool calls: a result or the deadline resumes it.
            break;
        }
    }
    // The tick stays: it closes the event link once idle.
    core.running.set(false);
}

/// The next queued message as the current run, once no reset stands in
/// the way: no run starts over a half-done reset (one an eviction cut is
/// finished first) and a message the reset policy marked resets the
/// session before it joins the history. `None` when the queue is empty or
/// a reset is running in another request of this instance (which restarts
/// the loop when it ends).
async fn next_run(core: &Core) -> Res<Option<CurrentRun>> {
    if core.resetting.get() || core.paused.get() {
        return Ok(None);
    }
    let bucket = core.bucket()?;
    let reset = Reset {
        store: &core.store,
        bucket: &bucket,
        env: &core.env,
        busy: &core.resetting,
    };
    reset.resume().await?;
    if core.store.head_resets_first()? {
        reset.auto().await?;
    }
    core.store.start_next_run()
}

/// One run as it goes: what it was set up with and what its steps found.
struct Drive<'a> {
    core: &'a Core,
    run: &'a CurrentRun,
    config: Rc<Config>,
    rc: RunConfig,
    inputs: PromptInputs,
    session_key: String,
    /// Names the session to a provider's prompt cache.
    cache_key: String,
    /// How many of `model.fallbacks` took over so far.
    fallbacks_used: usize,
    /// The session's settings with the message's directives.
    settings: SessionSettings,
    /// Who the run's memory calls act for.
    memory: Caller,
    /// Shared with the session's last prompt while it is the same one.
    prompt: Rc<RunPrompt>,
    /// The prompt came with the run (it had waited on tools).
    was_kept: bool,
    /// The workspace check behind an early model call, until it is done.
    check: Option<Checking<'a>>,
    usage: Usage,
    /// Shared with the store, from reading it until the model call is sent
    /// (then let go, so storing the answer copies nothing).
    history: Rc<Vec<Message>>,
    /// The token estimate of each message of `history`.
    history_tokens: Rc<Vec<u64>>,
    /// The generation of the kept history `history` was read from.
    history_generation: Option<u64>,
    /// The model's last answer and the text not yet streamed with it.
    answer: Option<(AssistantMessage, Option<String>)>,
}

/// Takes the current run through model calls and tool calls until it has
/// its answer (true), or must wait for tool results (false).
async fn drive_run(core: &Core, run: &CurrentRun) -> bool {
    let mut drive = match Drive::start(core, run).await {
        Ok(d) => d,
        Err(error) => {
            core.fail_run(run, &error.to_string()).await;
            return true;
        }
    };
    drive.steps().await
}

impl Drive<'_> {
    /// The run's steps as the machine decides them: true once the run
    /// ended, false while it waits on tool results.
    async fn steps(&mut self) -> bool {
        let (core, run, drive) = (self.core, self.run, self);
        let mut machine = RunMachine::new(run.iterations, drive.rc.max_iterations);
        let mut step = machine.next(RunEvent::Started);
        loop {
            let event = match step {
                RunStep::SettleTools => drive.settle_tools().await,
                RunStep::ReadHistory => drive.read_history(),
                RunStep::Compact { overflow } => drive.compact(overflow).await,
                RunStep::CallModel { iteration } => drive.call_model(iteration).await,
                RunStep::StopRunaway { max_iterations } => {
                    drive.stop_runaway(max_iterations).await;
                    return true;
                }
                RunStep::Finish(answer) => {
                    core.finish_run(run, answer, std::mem::take(&mut drive.usage), None)
                        .await;
                    return true;
                }
                RunStep::FinishWithAnswer => {
                    if let Some((answer, tail)) = drive.answer.take() {
                        core.finish_run(run, answer, std::mem::take(&mut drive.usage), tail)
                            .await;
                    }
                    return true;
                }
                RunStep::Wait => {
                    if !drive.was_kept {
                        drive.keep_prompt();
                    }
                    return false;
                }
                RunStep::Stop => return true,
                RunStep::Fail(error) => {
                    core.fail_run(run, &error).await;
                    return true;
                }
            };
            step = machine.next(event);
        }
    }
}

impl<'a> Drive<'a> {
    /// Config, model and prompt are resolved once per run, not once per
    /// model call: the workspace is read from R2 once, and a run that
    /// waited on tools resumes with the prompt it kept.
    async fn start(core: &'a Core, run: &'a CurrentRun) -> Res<Drive<'a>> {
        let store = &core.store;
        let usage: Usage = serde_json::from_str(&run.usage).unwrap_or_default();
        let meta = store.meta("")?;
        let (config_rev, config) = store.config_entry()?;
        let (nodes_rev, nodes) = store.nodes_entry()?;
        let overrides: ChatDirectives = run
            .overrides
            .as_deref()
            .and_then(|o| serde_json::from_str(o).ok())
            .unwrap_or_default();
        let settings = with_directives(&meta.settings, &overrides);
        let rc = RunConfig::resolve(&config, &settings);
        if let Some(reason) = &rc.unusable {
            return Err(SessionError::Unusable(reason.clone()));
        }
        let kept = kept_prompt(core, run);
        // The schedule clock: the real one, but under the test harness.
        let now = now_ms() + core.clock_offset.get();
        let days = today_and_yesterday(&*user_time_zone(&config), now);
        let memory = memory_caller(&config, &meta.session_key, run.person.clone());
        // What is recalled for a new run's message goes with the message
        // (a run resuming with its kept prompt has sent it already).
        if kept.is_none() && run.iterations == 0 {
            let recalled = recall(
                core,
                &config,
                &memory,
                run,
                &meta.session_key,
                (&days.0, now),
            )
            .await;
            let context = crate::memory::recall::render(&recalled);
            store.set_message_context(run.first_idx, &context)?;
            *core.last_recalled.borrow_mut() = recalled.into_iter().map(|c| c.uri).collect();
        }
        // A new run may take this session's previous prompt when nothing
        // this isolate knows of changed since: no workspace write here or
        // at the gateway (the agent's own edits, workspace RPCs), the same
        // config, model, nodes and day. Checked against R2 within
        // `workspace.recheckSeconds` it holds as it is; older, the first
        // call goes out with it while the workspace is checked (see
        // `early_call`), and only a change made elsewhere costs a
        // discarded call.
        let inputs = PromptInputs {
            writes: r2::writes(),
            config_rev,
            rc: rc.clone(),
            nodes_rev,
            workspace_rev: core.workspace_rev.borrow().clone(),
            days,
            trust: run.trust(),
        };
        let was_kept = kept.is_some();
        let (prompt, check) =
            run_prompt::choose(core, run, &config, &nodes, &inputs, kept, &meta.session_key)
                .await?;
        // `rc.system_prompt` stays the base the prompt was built on: the
        // model is called with the prompt's own (`request_for_prompt`).
        Ok(Drive {
            core,
            run,
            config,
            rc,
            inputs,
            cache_key: crate::llm::cache_key(&meta.session_key),
            fallbacks_used: 0,
            settings,
            session_key: meta.session_key,
            memory,
            was_kept,
            prompt,
            check,
            usage,
            history: Rc::default(),
            history_tokens: Rc::default(),
            history_generation: None,
            answer: None,
        })
    }

    fn tools(&self) -> Tools<'a> {
        Tools { core: self.core }
    }

    async fn settle_tools(&mut self) -> RunEvent {
        let policy = ToolPolicy::for_level(
            &self.config,
            &self.prompt.agent_id,
            self.prompt.trust.acts_as,
        );
        let tool_run = ToolRun {
            run_id: &self.run.run_id,
            prompt: &self.prompt,
            rc: &self.rc,
            session_key: &self.session_key,
            send_depth: self.run.send_depth.max(0) as u32,
            memory: &self.memory,
            recheck_ms: run_prompt::recheck_ms(&self.config).max(0) as u64,
            policy: &policy,
            ask_timeout_ms: self
                .config
                .u64_at("tools.policy.askTimeoutSeconds")
                .unwrap_or(300)
                .saturating_mul(1000),
        };
        match self.tools().settle(&tool_run).await {
            Ok(true) => RunEvent::ToolsSettled,
            Ok(false) => RunEvent::ToolsPending,
            Err(e) => RunEvent::Failed(e.to_string()),
        }
    }

    fn read_history(&mut self) -> RunEvent {
        let store = &self.core.store;
        if !store.is_current(&self.run.run_id) {
            return RunEvent::Cancelled;
        }
        match store.history_from(self.run.first_idx) {
            Ok(read) => {
                let next = next_step(&read.all[read.from..]);
                self.history = read.all;
                self.history_tokens = read.tokens;
                self.history_generation = read.generation;
                RunEvent::HistoryRead(next)
            }
            Err(e) => RunEvent::Failed(e.to_string()),
        }
    }

    async fn compact(&self, overflow: bool) -> RunEvent {
        let compacted = match self.core.bucket() {
            Ok(bucket) => {
                compaction::maybe_compact(
                    &self.core.env,
                    &self.core.store,
                    &bucket,
                    &self.run.run_id,
                    &self.config,
                    &self.rc,
                    (&self.history[..], &self.history_tokens[..]),
                    self.prompt.system_tokens(),
                    overflow,
                )
                .await
            }
            Err(e) => Err(e),
        };
        match compacted {
            Ok(true) => RunEvent::Compacted,
            Ok(false) => RunEvent::NotCompacted,
            // The history is whole; the call may still fit.
            Err(e) => {
                console_error!("session: compaction failed: {e}");
                RunEvent::NotCompacted
            }
        }
    }

    async fn call_model(&mut self, iteration: i64) -> RunEvent {
        let (core, run) = (self.core, self.run);
        let coalescer = Rc::new(RefCell::new(DeltaCoalescer::new(
            now_ms(),
            DELTA_INTERVAL_MS,
        )));
        // Text is held while an early call's prompt is being checked.
        let shown = Rc::new(Cell::new(self.check.is_none()));
        let heard = Cell::new(false);
        let cancel = Cancel::default();
        let on_text = |text: String| {
            heard.set(true);
            // Stopped (`chat.abort`) while the model answers: nothing more
            // of it is shown, and the request is aborted so the provider
            // stops generating.
            let current = core.store.is_current(&run.run_id);
            if !current {
                cancel.cancel();
            }
            let (coalescer, shown) = (coalescer.clone(), shown.clone());
            async move {
                if !current {
                    return;
                }
                coalescer.borrow_mut().push(&text);
                let due = match shown.get() {
                    true => coalescer.borrow_mut().take_due(now_ms()),
                    false => None,
                };
                if let Some(delta) = due {
                    core.emit(ChatEvent {
                        delta: Some(delta),
                        ..core.event(run, ChatState::Delta)
                    })
                    .await;
                }
            }
        };
        // Read again before the next call (RunStep::ReadHistory).
        let history = std::mem::take(&mut self.history);
        self.history_tokens = Rc::default();
        // Files named in the history are read (or noted) for this call.
        let sent = match core.bucket() {
            Ok(bucket) => {
                crate::worker::media::for_call(
                    &core.env,
                    &bucket,
                    &core.store,
                    &self.config,
                    &self.rc,
                    &history,
                )
                .await
            }
            Err(e) => return RunEvent::Failed(e.to_string()),
        };
        // Written from what earlier calls wrote, unless files or
        // transcripts changed this call's copy of the history.
        let generation = self.history_generation.take();
        let http = {
            let mut written = core.written.borrow_mut();
            let kept = match (&sent, generation) {
                (Cow::Borrowed(_), Some(generation)) => Some((&mut *written, generation)),
                (Cow::Owned(_), Some(_)) => None,
                // A history too long to keep: nor is what was written of it.
                (_, None) => {
                    *written = WrittenHistory::default();
                    None
                }
            };
            request_for_prompt(&self.rc, &sent, &self.prompt, kept, &self.cache_key)
        };
        // The images inlined for this call live on in the request only.
        drop(sent);
        drop(history);
        let call = complete_request(&self.core.env, &self.rc, &http, &cancel, on_text);
        let result = match self.check.take() {
            None => call.await,
            Some(checking) => {
                let current = &self.prompt;
                let same = |p: &RunPrompt| {
                    p.system_prompt == current.system_prompt && p.tools == current.tools
                };
                match race(call, checking, same, &shown, || cancel.cancel()).await {
                    Checked::Same(result, p) => {
                        loaded(
                            self.core,
                            &Rc::new(p),
                            &self.inputs,
                            Some(EarlyCall::Kept),
                            true,
                        );
                        result
                    }
                    Checked::Changed(p) => {
                        let p = Rc::new(p);
                        loaded(
                            self.core,
                            &p,
                            &self.inputs,
                            Some(EarlyCall::Discarded),
                            true,
                        );
                        self.prompt = p;
                        return RunEvent::PromptChanged;
                    }
                    Checked::Failed(e) => return RunEvent::Failed(workspace_error(&e)),
                }
            }
        };
        if !core.store.is_current(&run.run_id) {
            // Cancelled while the model answered: the answer is dropped.
            return RunEvent::Cancelled;
        }
        // The text not yet sent rides on the partial/final event.
        let tail = coalescer.borrow_mut().take_rest();
        let answer = match result {
            Ok(a) => a,
            Err(e) if !heard.get() && hands_over(&e) && self.fall_back(&e) => {
                return RunEvent::FellBack;
            }
            Err(e) => {
                return RunEvent::ModelFailed {
                    overflow: e.kind == LlmErrorKind::ContextOverflow,
                    streamed: tail.is_some(),
                    message: e.message,
                }
            }
        };
        self.store_answer(answer, tail, iteration).await
    }

    /// Hands the run to the next of `model.fallbacks` after the model
    /// failed with `error` (nothing of its answer came): false when none
    /// is left. The answer the next one gives names its model.
    fn fall_back(&mut self, error: &crate::llm::LlmError) -> bool {
        let chain = fallbacks(&self.config, &self.rc.provider);
        let Some(next) = chain.get(self.fallbacks_used).cloned() else {
            return false;
        };
        self.fallbacks_used += 1;
        console_log!(
            "llm: {}/{} failed ({}); {}/{} answers instead",
            self.rc.provider,
            self.rc.model,
            error.message,
            next.provider,
            next.id
        );
        let settings = SessionSettings {
            model: Some(next),
            ..self.settings.clone()
        };
        self.rc = RunConfig::resolve(&self.config, &settings);
        true
    }

    /// Counts the answer's usage, stores it with its calls in one
    /// synchronous step, and shows the text of a turn that goes on.
    /// `iteration`: the model calls answered so far in this run.
    async fn store_answer(
        &mut self,
        answer: AssistantMessage,
        tail: Option<String>,
        iteration: i64,
    ) -> RunEvent {
        let store = &self.core.store;
        if let Some(u) = &answer.usage {
            self.usage.add(u);
            if let Ok(mut meta) = store.meta("") {
                meta.add_usage(u, self.rc.prices.as_ref(), iteration == 0);
                meta.updated_at = now_ms();
                let _ = store.save_meta(&meta);
            }
            // By the user's day, as the run saw it (under the test clock too).
            let cost = self.rc.prices.map(|p| p.cost(u));
            if let Err(e) = store.add_usage_day(&self.inputs.days.0, u, cost) {
                console_error!("session: counting the day's usage failed: {e}");
            }
        }
        let tool_calls = answer.has_tool_calls();
        // The run's usage and model calls are kept for a run that goes on
        // (it may resume after an eviction, and `tools.maxIterations`
        // counts across it); one that ends here reports its usage in its
        // event. A call cut off by an eviction is not counted: the resumed
        // run makes it again, and `MAX_RESUMES` bounds how often.
        if tool_calls {
            let usage = serde_json::to_string(&self.usage).unwrap_or_default();
            let _ = store.set_run_progress(usage, iteration);
        }
        if let Err(e) = store
            .append(&Message::Assistant(answer.clone()))
            .and_then(|_| self.tools().store_calls(&answer))
        {
            return RunEvent::Failed(e.to_string());
        }
        if tool_calls && !answer.text().is_empty() {
            self.core
                .emit(ChatEvent {
                    message: Some(answer),
                    delta: tail,
                    ..self.core.event(self.run, ChatState::Partial)
                })
                .await;
        } else if !tool_calls {
            self.answer = Some((answer, tail));
        }
        RunEvent::Answered { tool_calls }
    }

    /// Keeps the run's prompt while it waits (a failure only costs a
    /// workspace read when it resumes).
    fn keep_prompt(&self) {
        let core = self.core;
        let prompt = &self.prompt;
        let same = core
            .kept_prompt
            .borrow()
            .as_ref()
            .and_then(|k| Rc::ptr_eq(&k.prompt, prompt).then(|| k.rev.clone()));
        let rev = same.unwrap_or_else(new_id);
        let body = || serde_json::to_string(&**prompt).unwrap_or_default();
        if core.store.keep_run_prompt(&rev, body).is_ok() {
            core.kept_prompt.replace(Some(KeptPrompt {
                rev,
                prompt: prompt.clone(),
            }));
        }
    }

    /// Ends a run that keeps calling tools with a final message saying so.
    async fn stop_runaway(&self, max: u32) {
        let text = format!(
            "I stopped after {max} model calls in this run without reaching an answer \
             (the limit is tools.maxIterations = {max}). Tell me to continue if you want me to keep going."
        );
        let message = AssistantMessage {
            stop_reason: Some(StopReason::Stop),
            ..AssistantMessage::new(vec![AssistantBlock::Text { text }], now_ms())
        };
        if let Err(e) = self.core.store.append(&Message::Assistant(message.clone())) {
            return self.core.fail_run(self.run, &e.to_string()).await;
        }
        self.core
            .finish_run(self.run, message, self.usage.clone(), None)
            .await;
    }
}
