//! Messages for the tests of what a history sends (`transcript`,
//! `written`): a few of each kind, and a generator of histories that
//! exercise every rule of `transcript::turns`.

use gsv_protocol::{
    AssistantBlock, AssistantMessage, ContentBlock, Message, StopReason, ToolResultMessage,
    UserContent, UserMessage,
};
use serde_json::json;

pub(crate) fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: 0,
        context: None,
    })
}

pub(crate) fn assistant(blocks: Vec<AssistantBlock>, stop: StopReason) -> Message {
    Message::Assistant(AssistantMessage {
        stop_reason: Some(stop),
        ..AssistantMessage::new(blocks, 0)
    })
}

pub(crate) fn text(t: &str) -> AssistantBlock {
    AssistantBlock::Text { text: t.into() }
}

pub(crate) fn call(id: &str) -> AssistantBlock {
    AssistantBlock::ToolCall {
        id: id.into(),
        name: "Bash".into(),
        arguments: json!({"command": "ls"}),
    }
}

pub(crate) fn result(id: &str, text: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "Bash".into(),
        content: vec![ContentBlock::Text { text: text.into() }],
        is_error: false,
        timestamp: 0,
    })
}

/// How many messages `message` picks from.
pub(crate) const PICKS: u8 = 10;

/// One of a few messages that exercise every rule: calls answered,
/// unanswered, twice or never asked; users while calls are open; errored,
/// empty and thinking-only assistant turns; text that needs escaping.
pub(crate) fn message(pick: u8) -> Message {
    match pick % PICKS {
        0 => user("what is \"here\"?\n"),
        1 => assistant(vec![text("Here.")], StopReason::Stop),
        2 => assistant(vec![call("a")], StopReason::ToolUse),
        3 => assistant(
            vec![text("Two:"), call("a"), call("b")],
            StopReason::ToolUse,
        ),
        4 => assistant(vec![call("b")], StopReason::Error),
        5 => assistant(vec![text(" ")], StopReason::Stop),
        6 => result("a", "file.txt"),
        7 => result("b", "ü ✓"),
        8 => result("z", "stray"),
        _ => assistant(
            vec![AssistantBlock::Thinking {
                thinking: "hm".into(),
                thinking_signature: Some("sig".into()),
            }],
            StopReason::Stop,
        ),
    }
}
