//! The internal calls between the objects as types: each names its path
//! (`session::internal::path`) and its reply, so a caller cannot pair a
//! request with the wrong path or decode the wrong answer. The Worker's
//! typed stubs (`worker/bindings.rs`) send them.
//!
//! A request body used on several paths (`SessionQuery`) is wrapped once
//! per path; the wrapper serializes as the body itself.

use crate::session::internal::{path, AgentSessionsQuery, SessionQuery};
use gsv_protocol::{SessionPreviewResult, SessionStatsResult, SessionsListResult};
use serde::{de::DeserializeOwned, Serialize};

/// A request to another object: its body, where it goes, what comes back.
pub trait InternalCall: Serialize {
    const PATH: &'static str;
    type Reply: DeserializeOwned;
}

/// Session → Gateway: the registry's sessions of one agent.
impl InternalCall for AgentSessionsQuery {
    const PATH: &'static str = path::AGENT_SESSIONS;
    type Reply = SessionsListResult;
}

/// → Session: its id, key and size.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Stats(pub SessionQuery);

impl InternalCall for Stats {
    const PATH: &'static str = path::STATS;
    type Reply = SessionStatsResult;
}

/// → Session: its id and history.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Preview(pub SessionQuery);

impl InternalCall for Preview {
    const PATH: &'static str = path::PREVIEW;
    type Reply = SessionPreviewResult;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wrapper is invisible on the wire: the Session reads a
    /// `SessionQuery` body whatever the path.
    #[test]
    fn wrappers_serialize_as_their_body() {
        let q = SessionQuery {
            session_key: "agent:main:main".into(),
            limit: None,
        };
        let plain = serde_json::to_value(&q).unwrap();
        assert_eq!(serde_json::to_value(Stats(q.clone())).unwrap(), plain);
        assert_eq!(serde_json::to_value(Preview(q)).unwrap(), plain);
        assert_eq!(
            [Stats::PATH, Preview::PATH, AgentSessionsQuery::PATH],
            [
                "/session.stats",
                "/session.preview",
                "/internal/agent-sessions"
            ]
        );
    }
}
