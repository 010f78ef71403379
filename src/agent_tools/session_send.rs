//! `gsv__SessionSend`, the decisions: which sessions may be written to,
//! how deep a chain of sends may go, what the receiving model reads, and
//! the results the sender gets. The Gateway sends the message and follows
//! the run it starts (an agent run of kind `session_send`); the receiving
//! Session stores the chain's depth with the run, so a run started by a
//! send that sends again carries it on.

use crate::routing::agent_id_of;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Default wait for the answer.
pub const DEFAULT_WAIT_SECONDS: u32 = 30;
pub const MAX_WAIT_SECONDS: u32 = 120;
/// The longest chain of sends: a run started by a send may send on, but
/// the run started by the third send in a row may not (two sessions
/// writing to each other stop there).
pub const MAX_SEND_DEPTH: u32 = 3;

/// Where a relayed message came from, stored with its run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRelay {
    /// The sending session's key.
    pub from: String,
    /// 1 for a send from a person's run, one more per send after it.
    pub depth: u32,
}

/// `waitSeconds` as given: default 30, refused outside 0–120.
pub fn wait_seconds(given: Option<i64>) -> Result<u32, String> {
    match given {
        None => Ok(DEFAULT_WAIT_SECONDS),
        Some(n) if (0..=i64::from(MAX_WAIT_SECONDS)).contains(&n) => Ok(n as u32),
        Some(n) => Err(format!(
            "waitSeconds must be between 0 and {MAX_WAIT_SECONDS}, not {n}"
        )),
    }
}

/// Checks a send from `from` (a run at `depth`) of `agent_id` to `target`
/// (both canonical); the relay the message carries.
pub fn plan_send(
    from: &str,
    agent_id: &str,
    depth: u32,
    target: &str,
) -> Result<SessionRelay, String> {
    if target == from {
        return Err(format!(
            "{target} is this session: answer here instead of sending to yourself"
        ));
    }
    let owner = agent_id_of(target);
    if owner != agent_id || !target.starts_with("agent:") {
        return Err(format!(
            "{target} is not one of your sessions (agent {agent_id}): pick a key from gsv__SessionsList"
        ));
    }
    if depth >= MAX_SEND_DEPTH {
        return Err(format!(
            "This run was started by a chain of {depth} gsv__SessionSend messages; \
             it may not send another (at most {MAX_SEND_DEPTH} in a row, so sessions \
             cannot keep writing to each other). Answer here instead."
        ));
    }
    Ok(SessionRelay {
        from: from.to_string(),
        depth: depth + 1,
    })
}

/// The message as the receiving model reads it: who sent it, then the text.
pub fn relayed_text(relay: &SessionRelay, message: &str) -> String {
    format!(
        "[Message from your session {} (gsv__SessionSend). Your answer goes back to that session, not to any chat app.]\n\n{message}",
        relay.from
    )
}

/// Sent without waiting.
pub fn accepted(target: &str, run_id: &str, queued: bool) -> Value {
    json!({"status": "accepted", "sessionKey": target, "runId": run_id, "queued": queued})
}

/// The run's final answer.
pub fn answered(target: &str, reply: &str) -> Value {
    json!({"status": "ok", "sessionKey": target, "reply": reply})
}

/// No answer within the wait.
pub fn timed_out(target: &str, waited_seconds: i64) -> Value {
    json!({
        "status": "timeout",
        "sessionKey": target,
        "waitedSeconds": waited_seconds,
        "note": "The run goes on; its answer will be in that session's history (gsv__SessionsList with messageLimit, or session_logs)."
    })
}

/// The run failed.
pub fn failed(target: &str, error: &str) -> String {
    format!("The run in {target} failed: {error}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_default_to_30_seconds_and_stay_within_2_minutes() {
        assert_eq!(wait_seconds(None), Ok(30));
        assert_eq!(wait_seconds(Some(0)), Ok(0));
        assert_eq!(wait_seconds(Some(120)), Ok(120));
        assert_eq!(
            wait_seconds(Some(-1)),
            Err("waitSeconds must be between 0 and 120, not -1".into())
        );
    }

    #[test]
    fn sends_go_to_other_sessions_of_the_same_agent() {
        let main = "agent:main:main";
        assert_eq!(
            plan_send(main, "main", 0, "agent:main:discord:dm:1"),
            Ok(SessionRelay {
                from: main.into(),
                depth: 1
            })
        );
        assert_eq!(
            plan_send(main, "main", 0, main),
            Err(
                "agent:main:main is this session: answer here instead of sending to yourself"
                    .into()
            )
        );
        assert_eq!(
            plan_send(main, "main", 0, "agent:work:main"),
            Err("agent:work:main is not one of your sessions (agent main): pick a key from gsv__SessionsList".into())
        );
        // A key outside the agent namespace belongs to no agent's list.
        assert_eq!(
            plan_send(main, "main", 0, "scratch"),
            Err("scratch is not one of your sessions (agent main): pick a key from gsv__SessionsList".into())
        );
    }

    #[test]
    fn chains_of_sends_stop_at_the_limit() {
        let (a, b) = ("agent:main:main", "agent:main:b");
        assert_eq!(plan_send(a, "main", 2, b).map(|r| r.depth), Ok(3));
        assert_eq!(
            plan_send(b, "main", 3, a),
            Err("This run was started by a chain of 3 gsv__SessionSend messages; it may not send another (at most 3 in a row, so sessions cannot keep writing to each other). Answer here instead.".into())
        );
    }

    #[test]
    fn the_receiver_reads_who_sent_it_and_the_sender_reads_plain_results() {
        let relay = SessionRelay {
            from: "agent:main:main".into(),
            depth: 1,
        };
        assert_eq!(
            relayed_text(&relay, "Summarize your day."),
            "[Message from your session agent:main:main (gsv__SessionSend). Your answer goes back to that session, not to any chat app.]\n\nSummarize your day."
        );
        assert_eq!(
            accepted("agent:main:b", "r1", false),
            json!({"status": "accepted", "sessionKey": "agent:main:b", "runId": "r1", "queued": false})
        );
        assert_eq!(
            answered("agent:main:b", "Done."),
            json!({"status": "ok", "sessionKey": "agent:main:b", "reply": "Done."})
        );
        assert_eq!(
            timed_out("agent:main:b", 5),
            json!({"status": "timeout", "sessionKey": "agent:main:b", "waitedSeconds": 5,
                   "note": "The run goes on; its answer will be in that session's history (gsv__SessionsList with messageLimit, or session_logs)."})
        );
        assert_eq!(
            failed("agent:main:b", "model down"),
            "The run in agent:main:b failed: model down"
        );
    }
}
