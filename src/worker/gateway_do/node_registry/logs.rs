//! Node logs on the Gateway: `logs.get` from a client and `gsv__LogsGet`
//! from a session both become a `logs.get` event to the node and a row in
//! `log_calls` (so a call survives hibernation; the alarm times it out);
//! the node's `logs.result` is handed to whoever asked. A node whose
//! connection closes, or is replaced by a newer one, fails its calls at
//! once. The decisions are in `crate::gateway::logs`.

use super::store::{LogCall, NewLogCall};
use super::Gateway;
use crate::gateway::logs::{
    line_count, logs_answer, node_gone, node_replaced, pick_node, timed_out, LOGS_TIMEOUT_MS,
};
use crate::worker::bindings::SessionStub;
use crate::worker::gateway_do::{to_value, Attachment};
use crate::worker::rpc::{internal_error, new_id, now_ms};
use gsv_protocol::*;
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

/// Who waits for a node's log.
pub(in crate::worker::gateway_do) enum LogsAsker<'a> {
    Client { conn_id: &'a str, frame_id: &'a str },
    Session { key: &'a str, tool_call_id: &'a str },
}

impl Gateway {
    /// `logs.get` from a client: answered when the node answers.
    pub(in crate::worker::gateway_do) async fn logs_get(
        &self,
        att: &Attachment,
        frame_id: &str,
        p: LogsGetParams,
    ) -> Res<()> {
        let lines = line_count(p.lines)?;
        let asker = LogsAsker::Client {
            conn_id: &att.conn_id,
            frame_id,
        };
        self.ask_logs(p.node_id.as_deref(), lines, asker).await
    }

    /// Sends `logs.get` to the node named (or the only one) and records
    /// who waits, for [`LOGS_TIMEOUT_MS`].
    pub(in crate::worker::gateway_do) async fn ask_logs(
        &self,
        node_id: Option<&str>,
        lines: u32,
        asker: LogsAsker<'_>,
    ) -> Res<()> {
        let live = self.live_nodes()?;
        let ids: Vec<String> = live.iter().map(|(id, _)| id.clone()).collect();
        let node_id = pick_node(node_id, &ids)?;
        let Some((_, node)) = live.iter().find(|(id, _)| *id == node_id) else {
            return Err(internal_error("the node picked is not live"));
        };
        let call_id = new_id();
        let (conn_id, frame_id, session_key, tool_call_id) = match asker {
            LogsAsker::Client { conn_id, frame_id } => (Some(conn_id), Some(frame_id), None, None),
            LogsAsker::Session { key, tool_call_id } => (None, None, Some(key), Some(tool_call_id)),
        };
        self.node_store().add_log_call(&NewLogCall {
            call_id: &call_id,
            node_id: &node_id,
            node_conn: &node.conn_id,
            lines: i64::from(lines),
            conn_id,
            frame_id,
            session_key,
            tool_call_id,
            deadline_at: now_ms() + LOGS_TIMEOUT_MS,
        })?;
        let evt = LogsGetEvent {
            call_id: call_id.clone(),
            lines,
        };
        let frame = Frame::event_json(event::LOGS_GET, &evt).map_err(internal_error)?;
        if node.ws.send_with_str(&frame).is_err() {
            self.take_log_call(&call_id)?;
            return Err(node_gone(&node_id));
        }
        self.schedule_alarm().await;
        Ok(())
    }

    /// Removes a call; `None` when it was settled already.
    fn take_log_call(&self, call_id: &str) -> Res<Option<LogCall>> {
        self.node_store().take_log_call(call_id)
    }

    /// `logs.result` from a node: handed to whoever waits for it.
    pub(in crate::worker::gateway_do) async fn logs_result(
        &self,
        node_id: &str,
        p: LogsResultParams,
    ) -> Res<AckResult> {
        let Some(call) = self.node_store().log_call(&p.call_id)? else {
            return Ok(AckResult {
                ok: true,
                dropped: Some(true),
            });
        };
        if call.node_id != node_id {
            return Err(ErrorShape::new(
                codes::FORBIDDEN,
                format!(
                    "Logs call {} was sent to node {}, not to {node_id}",
                    p.call_id, call.node_id
                ),
            ));
        }
        let Some(call) = self.take_log_call(&call.call_id)? else {
            return Ok(AckResult {
                ok: true,
                dropped: Some(true),
            });
        };
        let answer = logs_answer(node_id, call.lines.max(0) as u32, p);
        let delivered = self.answer_logs(&call, answer).await;
        Ok(AckResult {
            ok: true,
            dropped: (!delivered).then_some(true),
        })
    }

    /// Sends the answer to the asker; false when nobody got it.
    async fn answer_logs(&self, call: &LogCall, answer: Res<LogsGetResult>) -> bool {
        match (&call.session_key, &call.tool_call_id) {
            (Some(key), Some(tool_call_id)) => {
                let outcome = answer.and_then(|r| to_value(&r)).map_err(|e| e.message);
                let p = ToolResultParams::answer(tool_call_id.clone(), outcome);
                match SessionStub::for_key(&self.env, key).call(&p).await {
                    Ok(ack) => ack.dropped != Some(true),
                    Err(e) => {
                        console_error!("gateway: a node log for {key} was lost: {}", e.message);
                        false
                    }
                }
            }
            _ => {
                let frame_id = call.frame_id.clone().unwrap_or_default();
                let frame = match answer.and_then(|r| to_value(&r)) {
                    Ok(v) => Frame::ok(frame_id, v),
                    Err(e) => Frame::err(frame_id, e),
                };
                let asker = self
                    .sockets()
                    .iter()
                    .find(|(_, a)| Some(&a.conn_id) == call.conn_id.as_ref())
                    .cloned();
                asker.is_some_and(|(ws, _)| ws.send_with_str(frame.to_json()).is_ok())
            }
        }
    }

    /// Fails every call in `calls` with `why(node_id)`.
    async fn fail_log_calls(&self, calls: Vec<LogCall>, why: fn(&str) -> ErrorShape) -> Res<()> {
        for call in calls {
            if let Some(call) = self.take_log_call(&call.call_id)? {
                self.answer_logs(&call, Err(why(&call.node_id))).await;
            }
        }
        Ok(())
    }

    /// The node's connection `conn_id` closed: what it owed fails now.
    pub(super) async fn node_logs_gone(&self, conn_id: &str) -> Res<()> {
        let owed = self.node_store().log_calls_of_conn(conn_id)?;
        self.fail_log_calls(owed, node_gone).await
    }

    /// A newer connection of `node_id` took over: the older one will not
    /// answer, so its calls fail now rather than at their timeout.
    pub(in crate::worker::gateway_do) async fn node_logs_replaced(
        &self,
        node_id: &str,
        conn_id: &str,
    ) -> Res<()> {
        let owed = self.node_store().log_calls_of_old_conns(node_id, conn_id)?;
        self.fail_log_calls(owed, node_replaced).await
    }

    /// A client went away: nobody waits for its calls.
    pub(in crate::worker::gateway_do) fn client_logs_gone(&self, conn_id: &str) -> Res<()> {
        self.node_store().delete_client_log_calls(conn_id)
    }

    /// Calls past their deadline fail as timed out.
    pub(super) async fn expire_log_calls(&self, now: i64) -> Res<()> {
        let due = self.node_store().due_log_calls(now)?;
        self.fail_log_calls(due, timed_out).await
    }
}
