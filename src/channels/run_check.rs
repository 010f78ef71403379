//! A chat's run whose end the gateway may have missed (a dropped event
//! link, a restart): the gateway asks its session how it stands
//! (`RunOutcome`) and decides here what to do with the answer.

use crate::session::internal::RunOutcome;

/// A run is first asked after this long, then every `CHECK_EVERY_MS`
/// while it goes on (most runs end before anyone asks).
pub const FIRST_CHECK_MS: i64 = 20_000;
pub const CHECK_EVERY_MS: i64 = 30_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunCheck {
    /// It ended: its answer goes to the chat as if its event had come.
    Deliver,
    /// It goes on, or its session could not be asked: ask again later.
    AskAgain,
    /// Its session does not know it (the hand-over failed and the
    /// channel sent the message again under another run, or it ended
    /// too long ago): no answer is owed for it.
    LetGo,
}

/// `outcome`: the session's answer (`None`: it could not be asked);
/// `age_ms`: how long ago the run was recorded. A run the session does not
/// know yet may still be on its way to it, so it is let go only once it is
/// older than the first check.
pub fn after_asking(outcome: Option<&RunOutcome>, age_ms: i64) -> RunCheck {
    match outcome {
        Some(RunOutcome::Ended { .. }) => RunCheck::Deliver,
        Some(RunOutcome::Unknown) if age_ms >= FIRST_CHECK_MS => RunCheck::LetGo,
        Some(RunOutcome::Unknown | RunOutcome::Queued | RunOutcome::Running) | None => {
            RunCheck::AskAgain
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gsv_protocol::{ChatEvent, ChatState};

    #[test]
    fn an_ended_run_is_delivered_and_an_unknown_one_let_go_once_old() {
        let ended = RunOutcome::Ended {
            event: Box::new(ChatEvent {
                run_id: Some("r1".into()),
                session_key: "agent:main:whatsapp:dm:+1".into(),
                state: ChatState::Final,
                delta: None,
                message: None,
                usage: None,
                error: None,
            }),
        };
        let cases = [
            (Some(&ended), 0),
            (Some(&RunOutcome::Running), 3_600_000),
            (Some(&RunOutcome::Queued), 0),
            (Some(&RunOutcome::Unknown), FIRST_CHECK_MS - 1),
            (Some(&RunOutcome::Unknown), FIRST_CHECK_MS),
            (None, 3_600_000),
        ]
        .map(|(o, age)| after_asking(o, age));
        assert_eq!(
            cases,
            [
                RunCheck::Deliver,
                RunCheck::AskAgain,
                RunCheck::AskAgain,
                RunCheck::AskAgain,
                RunCheck::LetGo,
                RunCheck::AskAgain,
            ]
        );
    }
}
