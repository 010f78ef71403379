//! Runs the gateway starts on its own (a cron job's, a heartbeat's, a
//! `gsv__SessionSend` that waits for its answer) and follows to their end. The run is recorded in `agent_runs` BEFORE its
//! message goes to the session: the session may stream the whole answer
//! while the gateway still awaits the send. Its final `chat` event (or an
//! error, or its deadline in the alarm) ends it exactly once
//! (`take_agent_run` removes the row), and the kind's handler decides
//! what becomes of the answer.

use super::store::AgentRun;
use super::Gateway;
use crate::calls::Abort;
use crate::session::internal::{SessionChatSend, SessionChatSendReply, SessionQuery};
use crate::worker::bindings::SessionStub;
use crate::worker::rpc::internal_error;
use gsv_protocol::{ChatDirectives, ChatEvent, ChatState, ErrorShape};
use serde_json::Value;
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

pub(super) const KIND_CRON: &str = "cron";
pub(super) const KIND_HEARTBEAT: &str = "heartbeat";

/// The kind of agent run a `gsv__SessionSend` waits on (session_send.rs).
pub(super) const KIND_SESSION_SEND: &str = "session_send";

/// How an agent run ended.
pub(super) enum RunEnd {
    /// The final answer's text.
    Answered(String),
    Failed(String),
}

/// A run to start.
pub(super) struct AgentTurn<'a> {
    pub kind: &'static str,
    pub ref_id: &'a str,
    pub session_key: &'a str,
    pub chat_run_id: &'a str,
    pub message: String,
    pub directives: Option<ChatDirectives>,
    pub timeout_ms: i64,
    pub work: &'a Value,
    /// `system`, acting as whoever made the job (the owner for a
    /// heartbeat, which the config makes).
    pub trust: gsv_protocol::Trust,
}

impl Gateway {
    /// Records and starts `turn`. `Ok(Some(text))`: the session answered
    /// at once without a run (a slash command); the row is gone again.
    pub(super) async fn start_agent_turn(&self, turn: AgentTurn<'_>) -> Res<Option<String>> {
        let store = self.schedule_store();
        let now = self.sched_now();
        store.start_agent_run(
            turn.chat_run_id,
            turn.kind,
            turn.ref_id,
            turn.session_key,
            now,
            now + turn.timeout_ms,
            turn.work,
        )?;
        self.follow_run(turn.chat_run_id);
        self.touch_session(turn.session_key, None, false)?;
        let send = SessionChatSend {
            directives: turn.directives,
            trust: turn.trust,
            ..self.message_for(turn.session_key, turn.chat_run_id, turn.message)
        };
        let reply = self.send_to_session(send).await;
        match reply {
            Ok(SessionChatSendReply::Started { .. }) => Ok(None),
            Ok(SessionChatSendReply::Command { response, .. }) => {
                store.take_agent_run(turn.chat_run_id)?;
                Ok(Some(response.unwrap_or_default()))
            }
            Ok(SessionChatSendReply::DirectiveOnly { response, .. }) => {
                store.take_agent_run(turn.chat_run_id)?;
                Ok(Some(response.unwrap_or_default()))
            }
            // Only a chat-app message names an inbound id to be taken once.
            Ok(SessionChatSendReply::Taken { run_id, .. }) => {
                store.take_agent_run(turn.chat_run_id)?;
                Err(crate::worker::rpc::internal_error(format!(
                    "the session took run {run_id} as a repeat of a chat message"
                )))
            }
            Err(e) => {
                store.take_agent_run(turn.chat_run_id)?;
                Err(e)
            }
        }
    }

    /// A session's `chat` event: ends the gateway's own run it belongs to.
    pub(in crate::worker::gateway_do) async fn agent_run_event(&self, evt: &ChatEvent) {
        let end = match evt.state {
            ChatState::Final => {
                RunEnd::Answered(evt.message.as_ref().map(|m| m.text()).unwrap_or_default())
            }
            ChatState::Error => {
                RunEnd::Failed(evt.error.clone().unwrap_or_else(|| "run failed".into()))
            }
            ChatState::Delta | ChatState::Partial => return,
        };
        let Some(run_id) = evt.run_id.as_deref() else {
            return;
        };
        match self.schedule_store().take_agent_run(run_id) {
            Ok(Some(run)) => self.end_agent_run(run, end).await,
            Ok(None) => {}
            Err(e) => console_error!("gateway: reading run {run_id} failed: {}", e.message),
        }
    }

    async fn end_agent_run(&self, run: AgentRun, end: RunEnd) {
        let work: Value = serde_json::from_str(&run.work).unwrap_or(Value::Null);
        let result = match run.kind.as_str() {
            KIND_CRON => self.cron_run_ended(&work, end).await,
            KIND_HEARTBEAT => self.heartbeat_ended(&run.ref_id, &work, end).await,
            KIND_SESSION_SEND => self.session_send_ended(&run, end).await,
            other => Err(internal_error(format!("unknown run kind {other}"))),
        };
        if let Err(e) = result {
            console_error!(
                "gateway: ending run {} failed: {}",
                run.chat_run_id,
                e.message
            );
        }
        self.schedule_alarm().await;
    }

    /// The alarm's share: runs past their deadline are stopped in their
    /// session and end as errors.
    pub(super) async fn expire_agent_runs(&self, now: i64) {
        let overdue = match self.schedule_store().overdue_agent_runs(now) {
            Ok(runs) => runs,
            Err(e) => return console_error!("gateway: reading overdue runs: {}", e.message),
        };
        for run in overdue {
            let Ok(Some(run)) = self.schedule_store().take_agent_run(&run.chat_run_id) else {
                continue;
            };
            if run.kind == KIND_SESSION_SEND {
                // Only the sender's wait is over: the run goes on.
                if let Err(e) = self.session_send_timed_out(&run).await {
                    console_error!("gateway: ending a session send's wait: {}", e.message);
                }
                continue;
            }
            let query = SessionQuery {
                session_key: run.session_key.clone(),
                limit: None,
            };
            let abort = SessionStub::for_key(&self.env, &run.session_key)
                .call(&Abort(query))
                .await;
            if let Err(e) = abort {
                console_error!("gateway: stopping a timed-out run failed: {}", e.message);
            }
            // The run's allowance, not the time since it started: the
            // alarm may come late.
            let secs = (run.deadline_at - run.started_at).max(0) / 1000;
            let end = RunEnd::Failed(format!("timed out after {secs} s"));
            self.end_agent_run(run, end).await;
        }
    }
}
