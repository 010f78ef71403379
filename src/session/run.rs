//! What a run does next. `next_step` decides from the stored history
//! alone, so a run resumed after eviction picks up exactly where it
//! stopped; `RunMachine` decides each step of a run's loop from what the
//! last step found (the Session's `drive_run` does the I/O of each step
//! and reports back), so every transition is tested natively.

use gsv_protocol::{AssistantMessage, Message};

/// Model calls one run may make before it is ended (runaway tool loops),
/// unless `tools.maxIterations` says otherwise.
pub const DEFAULT_MAX_ITERATIONS: u32 = 25;

#[derive(Debug, Clone, PartialEq)]
pub enum NextStep {
    /// Call the model with the history as it stands.
    CallModel,
    /// The run already produced its answer (stored before an interruption):
    /// announce it and finish.
    Finished(AssistantMessage),
}

/// Decides from the stored messages of the current run.
pub fn next_step(history: &[Message]) -> NextStep {
    match history.last() {
        Some(Message::Assistant(m)) if !m.has_tool_calls() => NextStep::Finished(m.clone()),
        _ => NextStep::CallModel,
    }
}

/// What the last step of a run found.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// The run begins (or resumes) its loop.
    Started,
    /// Every tool call of the last turn is answered and its result stored,
    /// or the turn had none.
    ToolsSettled,
    /// Tool calls are still out: a result or their deadline resumes the run.
    ToolsPending,
    /// The history was read; `Finished` when it already ends the run.
    HistoryRead(NextStep),
    /// Older messages were replaced by a summary.
    Compacted,
    /// Compaction was not needed, not possible, or failed (the history is whole).
    NotCompacted,
    /// An early model call was cancelled: the checked workspace gave
    /// another prompt. The call is made again with it.
    PromptChanged,
    /// The model kept failing and the next of `model.fallbacks` takes
    /// over: the call is made again with it.
    FellBack,
    /// The model's answer is stored; `tool_calls` when it asks for tools.
    Answered { tool_calls: bool },
    /// The model call failed. `overflow`: the provider refused the prompt
    /// as too long; `streamed`: some of the answer was already shown.
    ModelFailed {
        overflow: bool,
        streamed: bool,
        message: String,
    },
    /// The run is no longer the current run (cancelled or reset meanwhile).
    Cancelled,
    /// A step's I/O failed.
    Failed(String),
}

/// What the run does next.
#[derive(Debug, Clone, PartialEq)]
pub enum RunStep {
    /// Send what is unsent, store what arrived; then report `ToolsSettled`
    /// or `ToolsPending`.
    SettleTools,
    /// Read the history (after checking the run is still current).
    ReadHistory,
    /// Compact if the context needs it (`overflow`: the provider refused it).
    Compact { overflow: bool },
    /// Call the model: this is the run's `iteration`-th call.
    CallModel { iteration: i64 },
    /// End the run with a final message saying it hit `tools.maxIterations`.
    StopRunaway { max_iterations: u32 },
    /// End the run with the answer the history already holds.
    Finish(AssistantMessage),
    /// End the run with the model's last answer.
    FinishWithAnswer,
    /// Leave the loop until a tool result or the deadline comes.
    Wait,
    /// End the run with this error.
    Fail(String),
    /// Leave the loop: the run was ended elsewhere.
    Stop,
}

/// The decisions of one run's loop: at most one compaction per model call,
/// one compaction and repeat when the provider refuses the prompt as too
/// long, at most `max_iterations` model calls, and a model call repeated
/// (not counted twice) when an early call's prompt turned out stale.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMachine {
    iterations: i64,
    max_iterations: u32,
    /// A compaction happened since the last model call.
    compacted: bool,
    /// The provider's refusal, once it refused the prompt as too long.
    overflow: Option<String>,
}

impl RunMachine {
    /// A run that has already made `iterations` model calls.
    pub fn new(iterations: i64, max_iterations: u32) -> Self {
        Self {
            iterations,
            max_iterations,
            compacted: false,
            overflow: None,
        }
    }

    /// Model calls made so far. The run stores the `iteration` of each
    /// answered call that goes on to tools, and a resumed run starts from
    /// it; this reads the same count back in the tests.
    #[cfg(test)]
    pub fn iterations(&self) -> i64 {
        self.iterations
    }

    pub fn next(&mut self, event: RunEvent) -> RunStep {
        match event {
            RunEvent::Started => RunStep::SettleTools,
            RunEvent::Compacted => {
                self.compacted = true;
                RunStep::SettleTools
            }
            RunEvent::PromptChanged | RunEvent::FellBack => {
                self.iterations -= 1;
                RunStep::SettleTools
            }
            RunEvent::ToolsSettled => RunStep::ReadHistory,
            RunEvent::ToolsPending => RunStep::Wait,
            RunEvent::HistoryRead(NextStep::Finished(answer)) => RunStep::Finish(answer),
            RunEvent::HistoryRead(NextStep::CallModel) if !self.compacted => RunStep::Compact {
                overflow: self.overflow.is_some(),
            },
            RunEvent::HistoryRead(NextStep::CallModel) => self.call_model(),
            RunEvent::NotCompacted => match &self.overflow {
                // Compaction could not help: report the refusal.
                Some(refusal) => RunStep::Fail(refusal.clone()),
                None => self.call_model(),
            },
            RunEvent::Answered { tool_calls } => {
                self.compacted = false;
                match tool_calls {
                    true => RunStep::SettleTools,
                    false => RunStep::FinishWithAnswer,
                }
            }
            RunEvent::ModelFailed {
                overflow,
                streamed,
                message,
            } => {
                self.compacted = false;
                let message = format!("Model call failed: {message}");
                // Once per run, and only before any text was shown:
                // compact and call again.
                if overflow && !streamed && self.overflow.is_none() {
                    self.overflow = Some(message);
                    self.iterations -= 1;
                    RunStep::SettleTools
                } else {
                    RunStep::Fail(message)
                }
            }
            RunEvent::Cancelled => RunStep::Stop,
            RunEvent::Failed(message) => RunStep::Fail(message),
        }
    }

    fn call_model(&mut self) -> RunStep {
        if self.iterations >= i64::from(self.max_iterations) {
            return RunStep::StopRunaway {
                max_iterations: self.max_iterations,
            };
        }
        self.iterations += 1;
        RunStep::CallModel {
            iteration: self.iterations,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gsv_protocol::{AssistantBlock, UserContent, UserMessage};
    use serde_json::json;

    fn assistant(blocks: Vec<AssistantBlock>) -> AssistantMessage {
        AssistantMessage::new(blocks, 2)
    }

    #[test]
    fn decides_from_history() {
        let user = Message::User(UserMessage {
            content: UserContent::Text("hi".into()),
            timestamp: 1,
            context: None,
        });
        assert_eq!(next_step(std::slice::from_ref(&user)), NextStep::CallModel);
        let done = assistant(vec![AssistantBlock::Text {
            text: "hello".into(),
        }]);
        assert_eq!(
            next_step(&[user.clone(), Message::Assistant(done.clone())]),
            NextStep::Finished(done)
        );
        let calling = assistant(vec![AssistantBlock::ToolCall {
            id: "c1".into(),
            name: "x__Bash".into(),
            arguments: json!({}),
        }]);
        assert_eq!(
            next_step(&[user, Message::Assistant(calling)]),
            NextStep::CallModel
        );
    }

    fn text_answer(text: &str) -> AssistantMessage {
        assistant(vec![AssistantBlock::Text { text: text.into() }])
    }

    /// Feeds `events` to a machine and returns the steps it chose.
    fn steps(machine: &mut RunMachine, events: Vec<RunEvent>) -> Vec<RunStep> {
        events.into_iter().map(|e| machine.next(e)).collect()
    }

    fn overflow() -> RunEvent {
        RunEvent::ModelFailed {
            overflow: true,
            streamed: false,
            message: "prompt is too long".into(),
        }
    }

    #[test]
    fn a_plain_turn_compacts_if_needed_calls_and_finishes() {
        let mut m = RunMachine::new(0, 25);
        assert_eq!(
            steps(
                &mut m,
                vec![
                    RunEvent::Started,
                    RunEvent::ToolsSettled,
                    RunEvent::HistoryRead(NextStep::CallModel),
                    RunEvent::NotCompacted,
                    RunEvent::Answered { tool_calls: false },
                ]
            ),
            [
                RunStep::SettleTools,
                RunStep::ReadHistory,
                RunStep::Compact { overflow: false },
                RunStep::CallModel { iteration: 1 },
                RunStep::FinishWithAnswer,
            ]
        );
        assert_eq!(m.iterations(), 1);
    }

    #[test]
    fn tool_turns_loop_through_the_tools_and_wait_for_results() {
        let mut m = RunMachine::new(0, 25);
        assert_eq!(
            steps(
                &mut m,
                vec![
                    RunEvent::Started,
                    RunEvent::ToolsSettled,
                    RunEvent::HistoryRead(NextStep::CallModel),
                    RunEvent::NotCompacted,
                    RunEvent::Answered { tool_calls: true },
                    RunEvent::ToolsPending,
                ]
            ),
            [
                RunStep::SettleTools,
                RunStep::ReadHistory,
                RunStep::Compact { overflow: false },
                RunStep::CallModel { iteration: 1 },
                RunStep::SettleTools,
                RunStep::Wait,
            ]
        );
        // Resumed by the results: the count goes on from the stored one.
        let mut m = RunMachine::new(m.iterations(), 25);
        assert_eq!(
            steps(
                &mut m,
                vec![
                    RunEvent::Started,
                    RunEvent::ToolsSettled,
                    RunEvent::HistoryRead(NextStep::CallModel),
                    RunEvent::NotCompacted,
                ]
            ),
            [
                RunStep::SettleTools,
                RunStep::ReadHistory,
                RunStep::Compact { overflow: false },
                RunStep::CallModel { iteration: 2 },
            ]
        );
    }

    #[test]
    fn a_resumed_run_whose_answer_is_stored_finishes_with_it() {
        let answer = text_answer("done");
        let mut m = RunMachine::new(3, 25);
        assert_eq!(
            steps(
                &mut m,
                vec![
                    RunEvent::Started,
                    RunEvent::ToolsSettled,
                    RunEvent::HistoryRead(NextStep::Finished(answer.clone())),
                ]
            ),
            [
                RunStep::SettleTools,
                RunStep::ReadHistory,
                RunStep::Finish(answer),
            ]
        );
    }

    #[test]
    fn one_compaction_per_model_call() {
        let mut m = RunMachine::new(0, 25);
        assert_eq!(
            steps(
                &mut m,
                vec![
                    RunEvent::Started,
                    RunEvent::ToolsSettled,
                    RunEvent::HistoryRead(NextStep::CallModel),
                    RunEvent::Compacted,
                    RunEvent::ToolsSettled,
                    // Still big after compacting: the model is called anyway.
                    RunEvent::HistoryRead(NextStep::CallModel),
                    RunEvent::Answered { tool_calls: true },
                    RunEvent::ToolsSettled,
                    // A new model call may compact again.
                    RunEvent::HistoryRead(NextStep::CallModel),
                ]
            ),
            [
                RunStep::SettleTools,
                RunStep::ReadHistory,
                RunStep::Compact { overflow: false },
                RunStep::SettleTools,
                RunStep::ReadHistory,
                RunStep::CallModel { iteration: 1 },
                RunStep::SettleTools,
                RunStep::ReadHistory,
                RunStep::Compact { overflow: false },
            ]
        );
    }

    #[test]
    fn a_context_overflow_compacts_once_and_calls_again_without_counting() {
        let mut m = RunMachine::new(0, 25);
        assert_eq!(
            steps(
                &mut m,
                vec![
                    RunEvent::Started,
                    RunEvent::ToolsSettled,
                    RunEvent::HistoryRead(NextStep::CallModel),
                    RunEvent::NotCompacted,
                    overflow(),
                    RunEvent::ToolsSettled,
                    RunEvent::HistoryRead(NextStep::CallModel),
                    RunEvent::Compacted,
                    RunEvent::ToolsSettled,
                    RunEvent::HistoryRead(NextStep::CallModel),
                    // Refused again: this time it is the run's error.
                    overflow(),
                ]
            ),
            [
                RunStep::SettleTools,
                RunStep::ReadHistory,
                RunStep::Compact { overflow: false },
                RunStep::CallModel { iteration: 1 },
                RunStep::SettleTools,
                RunStep::ReadHistory,
                RunStep::Compact { overflow: true },
                RunStep::SettleTools,
                RunStep::ReadHistory,
                RunStep::CallModel { iteration: 1 },
                RunStep::Fail("Model call failed: prompt is too long".into()),
            ]
        );
    }

    #[test]
    fn an_overflow_compaction_cannot_help_reports_the_refusal() {
        let mut m = RunMachine::new(0, 25);
        assert_eq!(
            steps(
                &mut m,
                vec![
                    RunEvent::Started,
                    RunEvent::ToolsSettled,
                    RunEvent::HistoryRead(NextStep::CallModel),
                    RunEvent::NotCompacted,
                    overflow(),
                    RunEvent::ToolsSettled,
                    RunEvent::HistoryRead(NextStep::CallModel),
                    RunEvent::NotCompacted,
                ]
            )
            .pop(),
            Some(RunStep::Fail(
                "Model call failed: prompt is too long".into()
            ))
        );
    }

    #[test]
    fn an_overflow_after_text_was_shown_fails_at_once() {
        let mut m = RunMachine::new(0, 25);
        m.next(RunEvent::Started);
        assert_eq!(
            m.next(RunEvent::ModelFailed {
                overflow: true,
                streamed: true,
                message: "too long".into(),
            }),
            RunStep::Fail("Model call failed: too long".into())
        );
        assert_eq!(
            RunMachine::new(0, 25).next(RunEvent::ModelFailed {
                overflow: false,
                streamed: false,
                message: "503".into(),
            }),
            RunStep::Fail("Model call failed: 503".into())
        );
    }

    #[test]
    fn the_iteration_cap_stops_a_runaway_run() {
        let mut m = RunMachine::new(24, 25);
        assert_eq!(
            steps(
                &mut m,
                vec![
                    RunEvent::HistoryRead(NextStep::CallModel),
                    RunEvent::NotCompacted,
                    RunEvent::Answered { tool_calls: true },
                    RunEvent::ToolsSettled,
                    RunEvent::HistoryRead(NextStep::CallModel),
                    RunEvent::NotCompacted,
                ]
            ),
            [
                RunStep::Compact { overflow: false },
                RunStep::CallModel { iteration: 25 },
                RunStep::SettleTools,
                RunStep::ReadHistory,
                RunStep::Compact { overflow: false },
                RunStep::StopRunaway { max_iterations: 25 },
            ]
        );
    }

    #[test]
    fn a_stale_early_prompt_repeats_the_call_without_counting_it() {
        let mut m = RunMachine::new(0, 25);
        assert_eq!(
            steps(
                &mut m,
                vec![
                    RunEvent::Started,
                    RunEvent::ToolsSettled,
                    RunEvent::HistoryRead(NextStep::CallModel),
                    RunEvent::NotCompacted,
                    RunEvent::PromptChanged,
                    RunEvent::ToolsSettled,
                    RunEvent::HistoryRead(NextStep::CallModel),
                    RunEvent::NotCompacted,
                ]
            ),
            [
                RunStep::SettleTools,
                RunStep::ReadHistory,
                RunStep::Compact { overflow: false },
                RunStep::CallModel { iteration: 1 },
                RunStep::SettleTools,
                RunStep::ReadHistory,
                RunStep::Compact { overflow: false },
                RunStep::CallModel { iteration: 1 },
            ]
        );
    }

    #[test]
    fn a_fallback_repeats_the_call_without_counting_it() {
        let mut m = RunMachine::new(0, 25);
        let call = [
            RunEvent::ToolsSettled,
            RunEvent::HistoryRead(NextStep::CallModel),
            RunEvent::NotCompacted,
        ];
        let mut events = vec![RunEvent::Started];
        events.extend(call.clone());
        events.push(RunEvent::FellBack);
        events.extend(call);
        let last = steps(&mut m, events).pop();
        assert_eq!(last, Some(RunStep::CallModel { iteration: 1 }));
    }

    #[test]
    fn cancellation_and_failures_end_the_loop() {
        let mut m = RunMachine::new(0, 25);
        assert_eq!(m.next(RunEvent::Cancelled), RunStep::Stop);
        assert_eq!(
            m.next(RunEvent::Failed("disk full".into())),
            RunStep::Fail("disk full".into())
        );
    }
}
