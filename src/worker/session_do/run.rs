//! The agent loop of a Session: each queued message becomes a run, and a
//! run goes model call → tool calls → model call until it has its answer,
//! must wait for tool results, fails, or hits `tools.maxIterations`.

use super::*;
use crate::session::early_call::{race, Checked};
use crate::time::today_and_yesterday;
use crate::worker::tz::user_time_zone;

/// Runs the current run (resuming it if it was interrupted), then every
/// queued message in order, each in its own run.
pub(super) async fn run_loop(core: Rc<Core>) {
    if core.running.replace(true) {
        return;
    }
    loop {
        let run = match core.current_run() {
            Ok(Some(run)) => Some(run),
            Ok(None) => match next_run(&core).await {
                Ok(run) => run,
                Err(e) => {
                    console_error!("session: starting a run failed: {}", e.message);
                    // The watchdog tries again.
                    if let Ok(true) = core.ensure_tick() {
                        core.schedule().await;
                    }
                    None
                }
            },
            Err(e) => {
                console_error!("session: reading the run failed: {}", e.message);
                None
            }
        };
        let Some(run) = run else { break };
        match core.ensure_tick() {
            Ok(true) => core.schedule().await,
            Ok(false) => {}
            Err(e) => console_error!("session: {}", e.message),
        }
        if !core.drive_run(&run).await {
            // Waiting on tool calls: a result or the deadline resumes it.
            break;
        }
    }
    // The tick stays: it closes the event link once idle.
    core.running.set(false);
}

/// What a prompt was assembled from, besides the workspace files.
#[derive(Clone, PartialEq)]
pub(in crate::worker) struct PromptInputs {
    /// `r2::writes()` before the assembly began.
    writes: u64,
    config: Config,
    rc: RunConfig,
    nodes: NodeSnapshot,
    /// Today and yesterday in the user's time zone (the daily memory files).
    days: (String, String),
}

fn workspace_error(e: &worker::Error) -> String {
    format!("Could not load the agent's workspace from R2: {e}")
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
    reset::resume_reset(core).await?;
    if reset::head_resets_first(core)? {
        reset::auto_reset(core).await?;
    }
    core.start_next_run()
}

impl Core {
    /// Ends the current run with an error event; its messages stay stored.
    pub(in crate::worker) async fn fail_run(&self, run: &CurrentRun, error: &str) {
        let evt = ChatEvent {
            error: Some(error.to_string()),
            ..self.event(run, ChatState::Error)
        };
        self.emit(evt).await;
        let _ = self.exec("DELETE FROM current_run WHERE id = 1", vec![]);
    }

    async fn finish_run(
        &self,
        run: &CurrentRun,
        message: AssistantMessage,
        usage: Usage,
        tail: Option<String>,
    ) {
        let evt = ChatEvent {
            message: Some(message),
            usage: Some(usage),
            delta: tail,
            ..self.event(run, ChatState::Final)
        };
        self.emit(evt).await;
        let _ = self.exec("DELETE FROM current_run WHERE id = 1", vec![]);
    }

    /// Takes the current run through model calls and tool calls until it
    /// has its answer (true), or must wait for tool results (false).
    async fn drive_run(&self, run: &CurrentRun) -> bool {
        let mut usage: Usage = serde_json::from_str(&run.usage).unwrap_or_default();
        let mut iterations = run.iterations;
        // Config, model and prompt are resolved once per run, not once per
        // model call: the workspace is read from R2 once, and a run that
        // waited on tools resumes with the prompt it kept.
        let (meta, config, nodes) = match (self.meta(""), self.config(), self.nodes()) {
            (Ok(m), Ok(c), Ok(n)) => (m, c, n),
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                self.fail_run(run, &e.message).await;
                return true;
            }
        };
        let overrides: ChatDirectives = run
            .overrides
            .as_deref()
            .and_then(|o| serde_json::from_str(o).ok())
            .unwrap_or_default();
        let mut rc = RunConfig::resolve(&config, &with_directives(&meta.settings, &overrides));
        if let Some(reason) = &rc.unusable {
            self.fail_run(run, reason).await;
            return true;
        }
        let kept = run
            .prompt
            .as_deref()
            .and_then(|p| serde_json::from_str::<prompt_load::RunPrompt>(p).ok());
        let was_kept = kept.is_some();
        // A new run's first call may go out with this session's previous
        // prompt while the workspace is checked (see `early_call`), when
        // nothing this isolate knows of changed since: no workspace write
        // (the agent's own edits), the same config, model, nodes and day.
        // Only a change made elsewhere then costs a discarded call.
        let inputs = PromptInputs {
            writes: r2::writes(),
            config: config.clone(),
            rc: rc.clone(),
            nodes: nodes.clone(),
            days: today_and_yesterday(&*user_time_zone(&config), now_ms()),
        };
        let early = match (&kept, run.iterations, &*self.last_prompt.borrow()) {
            (None, 0, Some((p, was))) if *was == inputs => Some(p.clone()),
            _ => None,
        };
        // Assembled from `inputs.rc`: `rc` takes the prompt once it is known.
        let assemble = || {
            prompt_load::assemble(
                &self.env,
                &config,
                &inputs.rc,
                &meta.session_key,
                &nodes,
                &inputs.days,
            )
        };
        let mut check = None;
        let mut run_prompt = match (kept, early) {
            (Some(p), _) => p,
            (None, Some(p)) => {
                check = Some(assemble());
                p
            }
            (None, None) => match assemble().await {
                Ok(p) => {
                    self.loaded(&p, &inputs, None);
                    p
                }
                Err(e) => {
                    self.fail_run(run, &workspace_error(&e)).await;
                    return true;
                }
            },
        };
        rc.system_prompt = run_prompt.system_prompt.clone();
        let mut compacted = false;
        let mut overflowed = false;
        let mut overflow_error = String::new();
        loop {
            let tool_run = ToolRun {
                prompt: &run_prompt,
                rc: &rc,
                session_key: &meta.session_key,
            };
            match self.settle_tools(run, &tool_run).await {
                Ok(true) => {}
                Ok(false) => {
                    if !was_kept {
                        self.keep_prompt(&run_prompt);
                    }
                    return false;
                }
                Err(e) => {
                    self.fail_run(run, &e.message).await;
                    return true;
                }
            }
            if !self.is_current(run) {
                return true;
            }
            let meta = match self.meta("") {
                Ok(m) => m,
                Err(e) => {
                    self.fail_run(run, &e.message).await;
                    return true;
                }
            };
            let (history, run_messages) = match self.history_from(run.first_idx) {
                Ok(h) => h,
                Err(e) => {
                    self.fail_run(run, &e.message).await;
                    return true;
                }
            };
            if let NextStep::Finished(answer) = next_step(&run_messages) {
                self.finish_run(run, answer, usage, None).await;
                return true;
            }
            // At most one compaction per model call: a context that stays
            // too big after it goes to the model, which may refuse it.
            if !compacted {
                match compaction::maybe_compact(self, run, &config, &rc, &history, overflowed).await
                {
                    Ok(true) => {
                        compacted = true;
                        continue;
                    }
                    Ok(false) => {}
                    // The history is whole; the call may still fit.
                    Err(e) => console_error!("session: compaction failed: {}", e.message),
                }
                if overflowed {
                    // Compaction could not help: report the refusal.
                    self.fail_run(run, &overflow_error).await;
                    return true;
                }
            }
            if iterations >= i64::from(rc.max_iterations) {
                self.stop_runaway(run, rc.max_iterations, usage).await;
                return true;
            }
            iterations += 1;
            let _ = self.exec(
                "UPDATE current_run SET iterations = ? WHERE id = 1",
                vec![iterations.into()],
            );

            let coalescer = Rc::new(RefCell::new(DeltaCoalescer::new(
                now_ms(),
                DELTA_INTERVAL_MS,
            )));
            // Text is held while an early call's prompt is being checked.
            let shown = Rc::new(Cell::new(check.is_none()));
            let on_text = |text: String| {
                let (coalescer, shown) = (coalescer.clone(), shown.clone());
                async move {
                    coalescer.borrow_mut().push(&text);
                    let due = match shown.get() {
                        true => coalescer.borrow_mut().take_due(now_ms()),
                        false => None,
                    };
                    if let Some(delta) = due {
                        self.emit(ChatEvent {
                            delta: Some(delta),
                            ..self.event(run, ChatState::Delta)
                        })
                        .await;
                    }
                }
            };
            let cancel = Cancel::default();
            let call = complete(&rc, &history, &run_prompt.tools, &cancel, on_text);
            let result = match check.take() {
                None => call.await,
                Some(checking) => {
                    let same = |p: &prompt_load::RunPrompt| {
                        p.system_prompt == run_prompt.system_prompt && p.tools == run_prompt.tools
                    };
                    let checked = race(call, checking, same, &shown, || cancel.cancel()).await;
                    match checked {
                        Checked::Same(result, p) => {
                            self.loaded(&p, &inputs, Some(EarlyCall::Kept));
                            result
                        }
                        Checked::Changed(p) => {
                            self.loaded(&p, &inputs, Some(EarlyCall::Discarded));
                            rc.system_prompt = p.system_prompt.clone();
                            run_prompt = p;
                            iterations -= 1;
                            continue;
                        }
                        Checked::Failed(e) => {
                            self.fail_run(run, &workspace_error(&e)).await;
                            return true;
                        }
                    }
                }
            };
            if !self.is_current(run) {
                // Cancelled while the model answered: the answer is dropped.
                return true;
            }
            // The text not yet sent rides on the partial/final event.
            let tail = coalescer.borrow_mut().take_rest();
            compacted = false;
            let answer = match result {
                Ok(a) => a,
                // Once per run: compact and call again.
                Err(e)
                    if e.kind == LlmErrorKind::ContextOverflow && !overflowed && tail.is_none() =>
                {
                    overflowed = true;
                    overflow_error = format!("Model call failed: {}", e.message);
                    iterations -= 1;
                    continue;
                }
                Err(e) => {
                    self.fail_run(run, &format!("Model call failed: {}", e.message))
                        .await;
                    return true;
                }
            };
            if let Some(u) = &answer.usage {
                usage.add(u);
                let mut meta = meta;
                meta.add_usage(u);
                meta.updated_at = now_ms();
                let _ = self.save_meta(&meta, None);
            }
            let _ = self.exec(
                "UPDATE current_run SET usage = ? WHERE id = 1",
                vec![serde_json::to_string(&usage).unwrap_or_default().into()],
            );
            // The turn and its calls are stored in one synchronous step.
            if let Err(e) = self
                .append(&Message::Assistant(answer.clone()))
                .and_then(|_| self.store_calls(&answer))
            {
                self.fail_run(run, &e.message).await;
                return true;
            }
            if !answer.has_tool_calls() {
                self.finish_run(run, answer, usage, tail).await;
                return true;
            }
            if !answer.text().is_empty() {
                self.emit(ChatEvent {
                    message: Some(answer.clone()),
                    delta: tail,
                    ..self.event(run, ChatState::Partial)
                })
                .await;
            }
        }
    }

    /// A prompt assembled and checked against R2 from `inputs`: the next
    /// run's early call may use it, `session.stats` reports its load.
    fn loaded(
        &self,
        prompt: &prompt_load::RunPrompt,
        inputs: &PromptInputs,
        early: Option<EarlyCall>,
    ) {
        let mut prompt = prompt.clone();
        prompt.load.early_call = early;
        *self.last_prompt.borrow_mut() = Some((prompt, inputs.clone()));
    }

    /// Keeps the run's prompt while it waits (a failure only costs a
    /// workspace read when it resumes).
    fn keep_prompt(&self, prompt: &prompt_load::RunPrompt) {
        if let Ok(json) = serde_json::to_string(prompt) {
            let _ = self.exec(
                "UPDATE current_run SET prompt = ? WHERE id = 1",
                vec![json.into()],
            );
        }
    }

    /// Ends a run that keeps calling tools with a final message saying so.
    async fn stop_runaway(&self, run: &CurrentRun, max: u32, usage: Usage) {
        let text = format!(
            "I stopped after {max} model calls in this run without reaching an answer \
             (the limit is tools.maxIterations = {max}). Tell me to continue if you want me to keep going."
        );
        let message = AssistantMessage {
            stop_reason: Some(StopReason::Stop),
            ..AssistantMessage::new(vec![AssistantBlock::Text { text }], now_ms())
        };
        if let Err(e) = self.append(&Message::Assistant(message.clone())) {
            return self.fail_run(run, &e.message).await;
        }
        self.finish_run(run, message, usage, None).await;
    }
}
