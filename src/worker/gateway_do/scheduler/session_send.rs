//! `gsv__SessionSend` on the Gateway: the message goes to the other
//! session marked as relayed (with the chain's depth); a sender that waits
//! gets that run's answer when its final `chat` event passes through here,
//! or `timeout` at its deadline. The wait is an agent run of kind
//! `session_send` (`agent_runs.rs`), recorded before the message goes out,
//! so it survives hibernation and the alarm ends it. The decisions are in
//! `crate::agent_tools::session_send`.

use super::agent_runs::{RunEnd, KIND_SESSION_SEND};
use super::store::AgentRun;
use super::Gateway;
use crate::agent_tools::session_send::{accepted, answered, failed, plan_send, timed_out};
use crate::agent_tools::{GatewayTool, GatewayToolCall, GatewayToolReply};
use crate::session::internal::{SessionChatSend, SessionChatSendReply};
use crate::worker::bindings::SessionStub;
use crate::worker::rpc::{internal_error, new_id};
use gsv_protocol::{codes, ErrorShape, ToolResultParams};
use serde::{Deserialize, Serialize};
use serde_json::Value;

type Res<T> = std::result::Result<T, ErrorShape>;

/// What a waiting send needs when the run ends: the sender's call.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Waiter {
    session_key: String,
    call_id: String,
}

impl Gateway {
    pub(in crate::worker::gateway_do) async fn session_send(
        &self,
        call: &GatewayToolCall,
    ) -> Res<GatewayToolReply> {
        let GatewayTool::SessionSend {
            target,
            message,
            wait_seconds,
        } = &call.tool
        else {
            return Err(internal_error("not a gsv__SessionSend call"));
        };
        let from = self.canonical_key(&call.session_key);
        let target = self.canonical_key(target);
        let relay = plan_send(&from, &call.agent_id, call.depth, &target)
            .map_err(|e| ErrorShape::new(codes::BAD_REQUEST, e))?;
        let run_id = new_id();
        let store = self.schedule_store();
        if *wait_seconds > 0 {
            let now = self.sched_now();
            let waiter = Waiter {
                session_key: from.clone(),
                call_id: call.call_id.clone(),
            };
            let deadline = now + i64::from(*wait_seconds) * 1000;
            store.start_agent_run(
                &run_id,
                KIND_SESSION_SEND,
                &call.call_id,
                &target,
                now,
                deadline,
                &waiter,
            )?;
            self.follow_run(&run_id);
            self.schedule_alarm().await;
        }
        self.touch_session(&target, None, false)?;
        let send = SessionChatSend {
            relay: Some(relay),
            trust: call.trust,
            ..self.message_for(&target, &run_id, message.clone())
        };
        let reply = self.send_to_session(send).await;
        match reply {
            Ok(SessionChatSendReply::Started { queued, .. }) if *wait_seconds == 0 => {
                Ok(GatewayToolReply::Done {
                    result: accepted(&target, &run_id, queued),
                })
            }
            Ok(SessionChatSendReply::Started { .. }) => Ok(GatewayToolReply::Pending),
            // A relayed message is never read as a command.
            Ok(_) => {
                store.take_agent_run(&run_id)?;
                Err(internal_error("the session answered without a run"))
            }
            Err(e) => {
                store.take_agent_run(&run_id)?;
                Err(e)
            }
        }
    }

    /// The run a waiting send started ended: the sender gets its answer.
    pub(super) async fn session_send_ended(&self, run: &AgentRun, end: RunEnd) -> Res<()> {
        let (result, error) = match end {
            RunEnd::Answered(text) => (Some(answered(&run.session_key, &text)), None),
            RunEnd::Failed(e) => (None, Some(failed(&run.session_key, &e))),
        };
        self.answer_sender(run, result, error).await
    }

    /// The wait is over before the run: the sender hears so; the run goes
    /// on (its answer stays in its session).
    pub(super) async fn session_send_timed_out(&self, run: &AgentRun) -> Res<()> {
        let waited = (run.deadline_at - run.started_at).max(0) / 1000;
        let result = timed_out(&run.session_key, waited);
        self.answer_sender(run, Some(result), None).await
    }

    async fn answer_sender(
        &self,
        run: &AgentRun,
        result: Option<Value>,
        error: Option<String>,
    ) -> Res<()> {
        let waiter: Waiter = serde_json::from_str(&run.work).map_err(internal_error)?;
        let p = ToolResultParams {
            call_id: waiter.call_id,
            result,
            error,
        };
        SessionStub::for_key(&self.env, &waiter.session_key)
            .call(&p)
            .await?;
        Ok(())
    }
}
