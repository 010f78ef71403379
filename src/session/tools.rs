//! Tool calls of one assistant turn while they are out: what a result
//! becomes in the history (text or image content, capped on a UTF-8
//! boundary), and what the run does next with the calls it is waiting on.

mod error;

pub use error::ToolError;

use gsv_protocol::{ContentBlock, ExecEventKind, Message, NodeExecEventParams, ToolResultMessage};
use serde_json::Value;

/// Default cap on one tool result's text (`tools.maxResultChars`).
pub const DEFAULT_MAX_RESULT_CHARS: usize = 100_000;

/// One call of the turn, as stored while the run waits. Its result is a
/// history message (`R`: the message, or its stored JSON, which the
/// Session appends to the history as it is rather than parse and write it
/// again).
#[derive(Debug, Clone, PartialEq)]
pub struct PendingCall<R = Message> {
    pub call_id: String,
    pub name: String,
    /// Sent to whoever runs it (or run, for native tools).
    pub dispatched: bool,
    pub result: Option<R>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ToolWait<R = Message> {
    /// Nothing is out: call the model.
    Idle,
    /// These calls (indexes) were stored but never sent: send them.
    Dispatch(Vec<usize>),
    /// Sent, not all answered: wait for results or the deadline.
    Waiting,
    /// Every call answered: the results, in the order of the calls.
    Complete(Vec<R>),
}

/// Decides from the stored calls of the turn (in call order).
pub fn tool_wait<R: Clone>(calls: &[PendingCall<R>]) -> ToolWait<R> {
    if calls.is_empty() {
        return ToolWait::Idle;
    }
    let undispatched: Vec<usize> = calls
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.dispatched && c.result.is_none())
        .map(|(i, _)| i)
        .collect();
    if !undispatched.is_empty() {
        return ToolWait::Dispatch(undispatched);
    }
    if calls.iter().all(|c| c.result.is_some()) {
        return ToolWait::Complete(calls.iter().filter_map(|c| c.result.clone()).collect());
    }
    ToolWait::Waiting
}

/// The error result of a call that was not answered in time.
pub fn timed_out<R>(call: &PendingCall<R>, tool_ms: u64, now: i64) -> Message {
    let secs = tool_ms as f64 / 1000.0;
    result_message(
        &call.call_id,
        &call.name,
        Err(ToolError::new(format!(
            "{} did not answer within {secs} s (timeouts.toolMs)",
            call.name
        ))),
        usize::MAX,
        now,
    )
}

/// The history message for one tool outcome. A string result is its text;
/// an object whose `content` holds image blocks keeps them (vision models
/// see the image); anything else is its JSON. Text over `max_chars` is cut
/// on a character boundary, keeping the start, with a note saying so.
pub fn result_message(
    id: &str,
    name: &str,
    outcome: Result<Value, ToolError>,
    max_chars: usize,
    now: i64,
) -> Message {
    let (content, is_error) = match outcome {
        Ok(value) => (result_content(value, max_chars), false),
        Err(e) => (
            vec![ContentBlock::Text {
                text: cap_text(&format!("Error: {e}"), max_chars),
            }],
            true,
        ),
    };
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.to_string(),
        tool_name: name.to_string(),
        content,
        is_error,
        timestamp: now,
    })
}

fn result_content(value: Value, max_chars: usize) -> Vec<ContentBlock> {
    if let Some(blocks) = image_blocks(&value) {
        return blocks
            .into_iter()
            .map(|b| match b {
                ContentBlock::Text { text } => ContentBlock::Text {
                    text: cap_text(&text, max_chars),
                },
                image => image,
            })
            .collect();
    }
    let text = match value {
        Value::String(s) => s,
        other => other.to_string(),
    };
    vec![ContentBlock::Text {
        text: cap_text(&text, max_chars),
    }]
}

fn image_blocks(value: &Value) -> Option<Vec<ContentBlock>> {
    let content = value.get("content")?.as_array()?;
    let blocks: Vec<ContentBlock> = serde_json::from_value(Value::Array(content.clone())).ok()?;
    let has_image = blocks
        .iter()
        .any(|b| matches!(b, ContentBlock::Image { data: Some(_), .. }));
    has_image.then_some(blocks)
}

/// `text` cut to at most `max_chars` characters plus a note.
pub fn cap_text(text: &str, max_chars: usize) -> String {
    let Some((cut, _)) = text.char_indices().nth(max_chars) else {
        return text.to_string();
    };
    let total = text.chars().count();
    format!(
        "{}\n\n[Result truncated: showing the first {max_chars} of {total} characters]",
        &text[..cut]
    )
}

/// The user message that tells the agent a background command ended, so
/// it can report or act on it.
pub fn exec_event_message(node_id: &str, ev: &NodeExecEventParams) -> String {
    let what = match ev.event {
        ExecEventKind::Started => "started",
        ExecEventKind::Finished => "finished",
        ExecEventKind::Failed => "failed",
        ExecEventKind::TimedOut => "timed out",
    };
    let body = serde_json::json!({
        "eventId": ev.event_id,
        "nodeId": node_id,
        "sessionId": ev.session_id,
        "callId": ev.call_id,
        "event": ev.event,
        "exitCode": ev.exit_code,
        "signal": ev.signal,
        "outputTail": ev.output_tail.as_deref().map(|t| tail_chars(t, 4000)),
        "startedAt": ev.started_at,
        "endedAt": ev.ended_at,
    });
    format!(
        "System event: async_exec_completion\nBackground command {} on node {node_id} {what}.\n{body}",
        ev.session_id
    )
}

/// The last `n` characters of `s`.
fn tail_chars(s: &str, n: usize) -> &str {
    let count = s.chars().count();
    if count <= n {
        return s;
    }
    let (start, _) = s.char_indices().nth(count - n).unwrap_or((0, ' '));
    &s[start..]
}

#[cfg(test)]
mod tests;
