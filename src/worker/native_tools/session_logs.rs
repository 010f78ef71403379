//! `session_logs`' reads of the agent's other live sessions: the Gateway's
//! registry, then each Session object (`crate::selfreport::logs::run`
//! decides what to read).

use crate::calls::{Preview, Stats};
use crate::selfreport::logs::OtherSessions;
use crate::session::internal::{AgentSessionsQuery, SessionQuery};
use crate::worker::bindings::{GatewayStub, SessionStub};
use gsv_protocol::{ErrorShape, SessionPreviewResult, SessionStatsResult, SessionsListResult};
use worker::Env;

pub struct LiveSessions<'a> {
    pub env: &'a Env,
}

fn query(session_key: &str, limit: Option<u32>) -> SessionQuery {
    SessionQuery {
        session_key: session_key.to_string(),
        limit,
    }
}

impl OtherSessions for LiveSessions<'_> {
    async fn of_agent(
        &self,
        agent_id: &str,
        limit: u32,
        offset: u32,
    ) -> Result<SessionsListResult, ErrorShape> {
        let q = AgentSessionsQuery {
            agent_id: agent_id.to_string(),
            limit,
            offset,
        };
        GatewayStub::get(self.env).call(&q).await
    }

    async fn stats(&self, session_key: &str) -> Result<SessionStatsResult, ErrorShape> {
        let stub = SessionStub::for_key(self.env, session_key);
        stub.call(&Stats(query(session_key, None))).await
    }

    async fn preview(
        &self,
        session_key: &str,
        limit: Option<u32>,
    ) -> Result<SessionPreviewResult, ErrorShape> {
        let stub = SessionStub::for_key(self.env, session_key);
        stub.call(&Preview(query(session_key, limit))).await
    }
}
