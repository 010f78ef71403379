//! Turns the `chat` events of one run into terminal output. No I/O here, so
//! the rules are tested by feeding events and comparing text.
//!
//! A run is one or more assistant turns: each `partial` closes a turn that
//! called tools, `final` closes the last one. Text arrives as `delta`s when
//! the gateway streams, else only in the `partial`/`final` message, so a
//! turn's message text is printed only when none of it was streamed.
//!
//! The text goes through a [`MarkdownStream`], which prints it as it came
//! (`Mode::Raw`) or styled, a line at a time as far as each is known.

use crate::markdown::{MarkdownStream, Mode};
use gsv_protocol::{ChatEvent, ChatState, StopReason};

#[derive(Debug, Clone, PartialEq)]
pub enum ReplyEnd {
    Done,
    Failed(String),
}

/// What to print for one event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    pub stdout: String,
    pub stderr: String,
    /// Set when the run is over.
    pub end: Option<ReplyEnd>,
}

pub struct ReplyRenderer {
    run_id: String,
    /// Some text of the current turn came as deltas.
    turn_streamed: bool,
    printed_any: bool,
    /// The text received so far ends with a newline.
    ends_with_newline: bool,
    ended: bool,
    markdown: MarkdownStream,
}

impl ReplyRenderer {
    pub fn new(run_id: impl Into<String>, mode: Mode) -> Self {
        Self {
            run_id: run_id.into(),
            turn_streamed: false,
            printed_any: false,
            ends_with_newline: false,
            ended: false,
            markdown: MarkdownStream::new(mode),
        }
    }

    /// `None` when the event belongs to another run (v1 gateways send every
    /// client every run's events) or arrives after this run ended.
    pub fn handle(&mut self, event: &ChatEvent) -> Option<Rendered> {
        if self.ended || event.run_id.as_deref() != Some(self.run_id.as_str()) {
            return None;
        }
        let mut out = Rendered::default();
        let message_text = || event.message.as_ref().map(|m| m.text()).unwrap_or_default();
        match event.state {
            ChatState::Delta => {
                let delta = event.delta.as_deref().unwrap_or_default();
                self.print(&mut out.stdout, delta);
                self.turn_streamed |= !delta.is_empty();
            }
            ChatState::Partial => {
                self.print_tail(&mut out.stdout, event);
                if !self.turn_streamed {
                    self.print(&mut out.stdout, &message_text());
                }
                self.turn_streamed = false;
                // The next turn starts on a new line; ending this one now
                // shows its last line while the tools run.
                self.finish_line(&mut out.stdout);
            }
            ChatState::Final => {
                self.print_tail(&mut out.stdout, event);
                if !self.turn_streamed {
                    self.print(&mut out.stdout, &message_text());
                }
                self.finish_line(&mut out.stdout);
                out.end = Some(match final_error(event) {
                    Some(error) => ReplyEnd::Failed(error),
                    None => {
                        if !self.printed_any {
                            out.stderr.push_str("(the agent sent an empty reply)\n");
                        }
                        ReplyEnd::Done
                    }
                });
            }
            ChatState::Error => {
                self.finish_line(&mut out.stdout);
                let error = event.error.clone().filter(|e| !e.is_empty());
                out.end = Some(ReplyEnd::Failed(error.unwrap_or_else(|| {
                    "the run failed (the gateway gave no reason)".into()
                })));
            }
        }
        self.ended = out.end.is_some();
        Some(out)
    }

    /// For when waiting stops early (socket closed, timeout): the text to end
    /// a half-printed line with, so the error starts on its own line.
    pub fn abandon(&mut self) -> String {
        self.ended = true;
        let mut stdout = String::new();
        self.finish_line(&mut stdout);
        stdout
    }

    /// The gateway sends a turn's last streamed text on its `partial` or
    /// `final` event (one hop fewer than a separate `delta`).
    fn print_tail(&mut self, stdout: &mut String, event: &ChatEvent) {
        if let Some(tail) = event.delta.as_deref().filter(|t| !t.is_empty()) {
            if self.turn_streamed {
                self.print(stdout, tail);
            }
        }
    }

    fn print(&mut self, stdout: &mut String, text: &str) {
        if text.is_empty() {
            return;
        }
        stdout.push_str(&self.markdown.push(text));
        self.printed_any = true;
        self.ends_with_newline = text.ends_with('\n');
    }

    /// Leaves the cursor at the start of a line for whatever comes next,
    /// and closes a code fence the turn left open.
    fn finish_line(&mut self, stdout: &mut String) {
        if self.printed_any && !self.ends_with_newline {
            stdout.push_str(&self.markdown.push("\n"));
            self.ends_with_newline = true;
        }
        stdout.push_str(&self.markdown.finish());
    }
}

/// A `final` whose message says the model call failed.
fn final_error(event: &ChatEvent) -> Option<String> {
    let message = event.message.as_ref()?;
    if message.stop_reason != Some(StopReason::Error) {
        return None;
    }
    Some(
        message
            .error_message
            .clone()
            .unwrap_or_else(|| "the model call failed".into()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use gsv_protocol::{AssistantBlock, AssistantMessage};
    use serde_json::json;

    const RUN: &str = "run-1";

    fn delta(text: &str) -> ChatEvent {
        event(RUN, ChatState::Delta, Some(text), None)
    }
    fn partial(text: &str) -> ChatEvent {
        event(RUN, ChatState::Partial, None, Some(message(text, true)))
    }
    fn final_(text: &str) -> ChatEvent {
        event(RUN, ChatState::Final, None, Some(message(text, false)))
    }
    fn event(
        run: &str,
        state: ChatState,
        delta: Option<&str>,
        message: Option<AssistantMessage>,
    ) -> ChatEvent {
        ChatEvent {
            run_id: Some(run.into()),
            session_key: "agent:main:main".into(),
            state,
            delta: delta.map(str::to_string),
            message,
            usage: None,
            error: None,
        }
    }
    fn message(text: &str, with_tool_call: bool) -> AssistantMessage {
        let mut content = vec![AssistantBlock::Text { text: text.into() }];
        if with_tool_call {
            content.push(AssistantBlock::ToolCall {
                id: "c1".into(),
                name: "laptop__Bash".into(),
                arguments: json!({"command": "ls"}),
            });
        }
        AssistantMessage::new(content, 0)
    }

    /// Feeds events like the chat loop does: (stdout, stderr, exit code once ended).
    fn render(events: &[ChatEvent]) -> (String, String, Option<i32>) {
        let mut renderer = ReplyRenderer::new(RUN, Mode::Raw);
        let (mut stdout, mut stderr, mut code) = (String::new(), String::new(), None);
        for event in events {
            if let Some(out) = renderer.handle(event) {
                stdout += &out.stdout;
                stderr += &out.stderr;
                if let Some(end) = out.end {
                    code = Some(match end {
                        ReplyEnd::Done => 0,
                        ReplyEnd::Failed(error) => {
                            stderr += &format!("error: {error}\n");
                            1
                        }
                    });
                }
            }
        }
        (stdout, stderr, code)
    }

    #[test]
    fn streamed_reply_prints_deltas_once() {
        let events = [delta("Hel"), delta("lo!"), final_("Hello!")];
        assert_eq!(render(&events), ("Hello!\n".into(), "".into(), Some(0)));
    }

    #[test]
    fn the_tail_riding_on_the_final_completes_the_streamed_text() {
        let tail_final = |tail: &str, text: &str| ChatEvent {
            delta: Some(tail.into()),
            ..final_(text)
        };
        assert_eq!(
            render(&[delta("Hel"), tail_final("lo!", "Hello!")]),
            render(&[delta("Hel"), delta("lo!"), final_("Hello!")])
        );
        // Nothing streamed before: the message is printed once, not the tail too.
        assert_eq!(
            render(&[tail_final("Hello!", "Hello!")]),
            render(&[final_("Hello!")])
        );
    }

    #[test]
    fn each_delta_is_printed_as_it_comes() {
        let mut renderer = ReplyRenderer::new(RUN, Mode::Raw);
        assert_eq!(
            renderer.handle(&delta("Hel")),
            Some(Rendered {
                stdout: "Hel".into(),
                stderr: "".into(),
                end: None
            })
        );
        assert_eq!(
            renderer.handle(&final_("Hello")),
            Some(Rendered {
                stdout: "\n".into(),
                stderr: "".into(),
                end: Some(ReplyEnd::Done)
            })
        );
    }

    #[test]
    fn unstreamed_v1_reply_prints_final_text() {
        assert_eq!(
            render(&[final_("Hi there!")]),
            ("Hi there!\n".into(), "".into(), Some(0))
        );
    }

    #[test]
    fn tool_turns_print_partial_text_when_not_streamed() {
        let events = [partial("Let me look."), partial(""), final_("Two files.\n")];
        assert_eq!(
            render(&events),
            ("Let me look.\nTwo files.\n".into(), "".into(), Some(0))
        );
    }

    #[test]
    fn streamed_tool_turn_is_not_printed_twice() {
        let events = [
            delta("Let me "),
            delta("look."),
            partial("Let me look."),
            delta("Done."),
            final_("Done."),
        ];
        assert_eq!(
            render(&events),
            ("Let me look.\nDone.\n".into(), "".into(), Some(0))
        );
    }

    #[test]
    fn final_turn_not_streamed_after_streamed_partial_is_printed() {
        let events = [delta("Looking."), partial("Looking."), final_("Found it.")];
        assert_eq!(
            render(&events),
            ("Looking.\nFound it.\n".into(), "".into(), Some(0))
        );
    }

    #[test]
    fn other_runs_are_ignored() {
        let other = |state, d: Option<&str>| event("run-2", state, d, None);
        let events = [
            other(ChatState::Delta, Some("not ours")),
            delta("ours"),
            other(ChatState::Final, None),
            ChatEvent {
                run_id: None,
                ..delta("no run id")
            },
            final_("ours"),
        ];
        assert_eq!(render(&events), ("ours\n".into(), "".into(), Some(0)));
    }

    #[test]
    fn error_ends_the_run_with_exit_1() {
        let error = ChatEvent {
            error: Some("Run cancelled by user".into()),
            ..event(RUN, ChatState::Error, None, None)
        };
        assert_eq!(
            render(&[delta("Half a sent"), error]),
            (
                "Half a sent\n".into(),
                "error: Run cancelled by user\n".into(),
                Some(1)
            )
        );
    }

    #[test]
    fn error_without_text_still_fails() {
        assert_eq!(
            render(&[event(RUN, ChatState::Error, None, None)]),
            (
                "".into(),
                "error: the run failed (the gateway gave no reason)\n".into(),
                Some(1)
            )
        );
    }

    #[test]
    fn final_with_model_error_fails() {
        let mut failed = message("", false);
        failed.stop_reason = Some(StopReason::Error);
        failed.error_message = Some("401 invalid x-api-key".into());
        let events = [event(RUN, ChatState::Final, None, Some(failed))];
        assert_eq!(
            render(&events),
            ("".into(), "error: 401 invalid x-api-key\n".into(), Some(1))
        );
    }

    #[test]
    fn empty_reply_says_so() {
        assert_eq!(
            render(&[final_("")]),
            (
                "".into(),
                "(the agent sent an empty reply)\n".into(),
                Some(0)
            )
        );
    }

    #[test]
    fn abandon_ends_a_half_line_once() {
        let mut renderer = ReplyRenderer::new(RUN, Mode::Raw);
        assert_eq!(renderer.abandon(), "");
        let mut renderer = ReplyRenderer::new(RUN, Mode::Raw);
        renderer.handle(&delta("Hal"));
        assert_eq!(
            (renderer.abandon(), renderer.abandon()),
            ("\n".into(), "".into())
        );
        assert_eq!(renderer.handle(&final_("late")), None);
    }

    #[test]
    fn events_after_the_end_are_ignored() {
        assert_eq!(
            render(&[final_("A"), delta("late"), final_("B")]),
            ("A\n".into(), "".into(), Some(0))
        );
    }

    /// Each event's output, markdown shown as tags.
    fn styled(events: &[ChatEvent]) -> Vec<String> {
        let mut renderer = ReplyRenderer::new(RUN, Mode::Tags);
        let mut printed: Vec<String> = events
            .iter()
            .filter_map(|event| renderer.handle(event))
            .map(|out| out.stdout)
            .collect();
        printed.push(renderer.abandon());
        printed
    }

    #[test]
    fn styled_text_is_shown_as_far_as_known() {
        assert_eq!(
            styled(&[
                delta("## Look"),
                delta("ing **he"),
                delta("re**"),
                partial("## Looking **here**"),
                final_("- **Found** it."),
            ]),
            [
                "<h2>Look",
                "ing ",
                "", // `**` at the end may yet be `***`
                "<b>here</b></h2>\n",
                "<bullet>•</bullet> <b>Found</b> it.\n",
                ""
            ]
        );
    }

    #[test]
    fn a_turn_end_closes_its_fence_and_an_abandoned_line_is_shown() {
        assert_eq!(
            styled(&[delta("```\ncode"), partial("```\ncode"), delta("**a")]),
            ["<fence>```</fence>\n<pre>code", "</pre>\n", "", "**a\n"]
        );
    }
}
