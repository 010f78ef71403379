//! Makes a stored history safe to send, whatever happened to it.
//!
//! Both APIs reject a tool call without exactly one result right after it,
//! and a result without its call. A history can break those rules when a
//! turn errored or was aborted, a tool never answered, or a result arrived
//! twice, or a user message was stored while tools were still running. Like
//! pi-ai's `transformMessages`, this drops errored/aborted and empty
//! assistant messages (with their results), drops orphaned and duplicate
//! results, and answers unanswered calls with an error result. User messages
//! that arrived while calls were open move after the results.

use std::borrow::Cow;

use gsv_protocol::{
    AssistantBlock, AssistantMessage, ContentBlock, Message, StopReason, UserMessage,
};

/// One sendable step of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Turn<'a> {
    User(&'a UserMessage),
    Assistant(&'a AssistantMessage),
    /// The results for the previous assistant message's tool calls.
    ToolResults(Vec<ToolResult<'a>>),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolResult<'a> {
    pub tool_call_id: &'a str,
    pub tool_name: &'a str,
    pub content: Cow<'a, [ContentBlock]>,
    pub is_error: bool,
}

/// The text of the result made up for a call that never got one.
pub(crate) const MISSING_RESULT_TEXT: &str = "No result provided";

pub(crate) fn turns(messages: &[Message]) -> Vec<Turn<'_>> {
    let mut turns = Vec::new();
    let mut open_calls: Vec<(&str, &str)> = Vec::new();
    let mut results: Vec<ToolResult> = Vec::new();
    let mut waiting_users: Vec<&UserMessage> = Vec::new();
    for message in messages {
        match message {
            Message::ToolResult(r) => {
                let expected = open_calls.iter().any(|(id, _)| *id == r.tool_call_id);
                let duplicate = results.iter().any(|x| x.tool_call_id == r.tool_call_id);
                if expected && !duplicate {
                    results.push(ToolResult {
                        tool_call_id: &r.tool_call_id,
                        tool_name: &r.tool_name,
                        content: Cow::Borrowed(&r.content),
                        is_error: r.is_error,
                    });
                }
            }
            Message::User(u) if !open_calls.is_empty() => waiting_users.push(u),
            Message::User(u) => turns.push(Turn::User(u)),
            Message::Assistant(a) => {
                close_calls(&mut turns, &mut open_calls, &mut results);
                turns.extend(waiting_users.drain(..).map(Turn::User));
                if is_sendable(a) {
                    turns.push(Turn::Assistant(a));
                    open_calls = a.tool_calls().map(|(id, name, _)| (id, name)).collect();
                }
            }
        }
    }
    close_calls(&mut turns, &mut open_calls, &mut results);
    turns.extend(waiting_users.into_iter().map(Turn::User));
    turns
}

/// Where the history's last assistant message is (0 when it has none).
/// The history splits there without changing what is sent:
/// `turns(h[..i]) ++ turns(h[i..]) == turns(h)` whenever `h[i]` is an
/// assistant message, because one first closes every open call and
/// places every waiting user message, as the end of a history does, and
/// then starts from nothing open. So what was written of `h[..i]` stays
/// written while the history grows.
pub(crate) fn stable_end(messages: &[Message]) -> usize {
    messages
        .iter()
        .rposition(|m| matches!(m, Message::Assistant(_)))
        .unwrap_or(0)
}

fn is_sendable(a: &AssistantMessage) -> bool {
    if matches!(a.stop_reason, Some(StopReason::Error | StopReason::Aborted)) {
        return false; // an incomplete turn; replaying it confuses the model
    }
    a.content.iter().any(|b| match b {
        AssistantBlock::Text { text } => !text.trim().is_empty(),
        AssistantBlock::Thinking { thinking, .. } => !thinking.trim().is_empty(),
        AssistantBlock::ToolCall { .. } => true,
    })
}

fn close_calls<'a>(
    turns: &mut Vec<Turn<'a>>,
    open_calls: &mut Vec<(&'a str, &'a str)>,
    results: &mut Vec<ToolResult<'a>>,
) {
    for (id, name) in open_calls.drain(..) {
        if !results.iter().any(|r| r.tool_call_id == id) {
            results.push(ToolResult {
                tool_call_id: id,
                tool_name: name,
                content: Cow::Owned(vec![ContentBlock::Text {
                    text: MISSING_RESULT_TEXT.into(),
                }]),
                is_error: true,
            });
        }
    }
    if !results.is_empty() {
        turns.push(Turn::ToolResults(std::mem::take(results)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::test_messages::{assistant, call, message, result, user, PICKS};

    fn as_ref(m: &Message) -> Turn<'_> {
        match m {
            Message::User(u) => Turn::User(u),
            Message::Assistant(a) => Turn::Assistant(a),
            Message::ToolResult(_) => unreachable!(),
        }
    }
    fn ok_result<'a>(m: &'a Message) -> ToolResult<'a> {
        let Message::ToolResult(r) = m else {
            unreachable!()
        };
        ToolResult {
            tool_call_id: &r.tool_call_id,
            tool_name: &r.tool_name,
            content: Cow::Borrowed(&r.content),
            is_error: false,
        }
    }
    fn missing(id: &str) -> ToolResult<'_> {
        ToolResult {
            tool_call_id: id,
            tool_name: "Bash",
            content: Cow::Owned(vec![ContentBlock::Text {
                text: MISSING_RESULT_TEXT.into(),
            }]),
            is_error: true,
        }
    }

    proptest::proptest! {
        #[test]
        fn a_history_splits_at_its_assistant_messages(picks in proptest::collection::vec(0..PICKS, 0..24)) {
            let h: Vec<Message> = picks.into_iter().map(message).collect();
            let whole = turns(&h);
            let splits = (0..h.len()).filter(|&i| matches!(h[i], Message::Assistant(_)));
            for i in splits.chain([0, stable_end(&h)]) {
                let mut joined = turns(&h[..i]);
                joined.extend(turns(&h[i..]));
                proptest::prop_assert_eq!(&joined, &whole, "split at {}", i);
            }
        }
    }

    #[test]
    fn the_stable_end_is_the_last_assistant_message() {
        let h = vec![
            user("hi"),
            message(2),
            result("a", "1"),
            message(1),
            user("more"),
        ];
        assert_eq!(
            (stable_end(&h), stable_end(&h[..3]), stable_end(&h[..1])),
            (3, 1, 0)
        );
    }

    #[test]
    fn a_clean_history_passes_through_with_results_grouped() {
        let h = vec![
            user("hi"),
            assistant(
                vec![
                    AssistantBlock::Text { text: "ok".into() },
                    call("a"),
                    call("b"),
                ],
                StopReason::ToolUse,
            ),
            result("a", "1"),
            result("b", "2"),
            assistant(
                vec![AssistantBlock::Text {
                    text: "done".into(),
                }],
                StopReason::Stop,
            ),
        ];
        assert_eq!(
            turns(&h),
            vec![
                as_ref(&h[0]),
                as_ref(&h[1]),
                Turn::ToolResults(vec![ok_result(&h[2]), ok_result(&h[3])]),
                as_ref(&h[4]),
            ]
        );
    }

    #[test]
    fn errored_aborted_and_empty_turns_are_dropped_with_their_results() {
        let h = vec![
            user("hi"),
            assistant(vec![call("x")], StopReason::Error),
            result("x", "late"),
            assistant(
                vec![AssistantBlock::Text {
                    text: "partial".into(),
                }],
                StopReason::Aborted,
            ),
            assistant(
                vec![AssistantBlock::Text { text: "  ".into() }],
                StopReason::Stop,
            ),
            user("again"),
        ];
        assert_eq!(turns(&h), vec![as_ref(&h[0]), as_ref(&h[5])]);
    }

    #[test]
    fn unanswered_calls_get_an_error_result_and_strays_are_dropped() {
        let h = vec![
            user("hi"),
            assistant(vec![call("a"), call("b")], StopReason::ToolUse),
            result("b", "2"),
            result("b", "duplicate"),
            result("zzz", "orphan"),
            assistant(vec![call("c")], StopReason::ToolUse),
        ];
        assert_eq!(
            turns(&h),
            vec![
                as_ref(&h[0]),
                as_ref(&h[1]),
                Turn::ToolResults(vec![ok_result(&h[2]), missing("a")]),
                as_ref(&h[5]),
                Turn::ToolResults(vec![missing("c")]),
            ]
        );
    }

    #[test]
    fn a_user_message_stored_while_tools_ran_moves_after_the_results() {
        let h = vec![
            user("hi"),
            assistant(vec![call("a")], StopReason::ToolUse),
            user("also check the logs"),
            result("a", "1"),
            assistant(
                vec![AssistantBlock::Text { text: "ok".into() }],
                StopReason::Stop,
            ),
        ];
        assert_eq!(
            turns(&h),
            vec![
                as_ref(&h[0]),
                as_ref(&h[1]),
                Turn::ToolResults(vec![ok_result(&h[3])]),
                as_ref(&h[2]),
                as_ref(&h[4]),
            ]
        );
    }
}
