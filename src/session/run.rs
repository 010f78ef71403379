//! What a run does next, decided from the stored history alone, so a run
//! resumed after eviction picks up exactly where it stopped.

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
}
