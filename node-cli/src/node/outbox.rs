//! What the node owes the gateway: tool results and background-command
//! events, kept until the gateway acknowledges them, across reconnects.
//! A command's events wait until the result of the call that started it
//! is acknowledged, so the gateway knows the command before it hears of
//! its end.

use crate::connection::{Connection, RequestError};
use gsv_protocol::{method, NodeExecEventParams, ToolResultParams};
use serde_json::Value;
use std::collections::{HashSet, VecDeque};
use std::time::Duration;

/// Events kept at most while the gateway is unreachable (oldest dropped).
pub const MAX_EVENTS: usize = 2048;

#[derive(Debug, Clone, PartialEq)]
pub enum Outgoing {
    ToolResult(ToolResultParams),
    ExecEvent(NodeExecEventParams),
}

impl Outgoing {
    /// Sends it to the gateway. Any answer settles it, so it is not read.
    pub async fn send(&self, conn: &Connection, limit: Duration) -> Result<Value, RequestError> {
        match self {
            Outgoing::ToolResult(p) => conn.call_value::<method::ToolResult>(p, limit).await,
            Outgoing::ExecEvent(p) => conn.call_value::<method::NodeExecEvent>(p, limit).await,
        }
    }

    /// The call this item belongs to.
    pub fn call_id(&self) -> Option<&str> {
        match self {
            Outgoing::ToolResult(p) => Some(&p.call_id),
            Outgoing::ExecEvent(p) => p.call_id.as_deref(),
        }
    }
}

#[derive(Debug, Default)]
pub struct Outbox {
    items: VecDeque<Outgoing>,
    /// Calls whose result the gateway has not acknowledged yet.
    open_calls: HashSet<String>,
}

impl Outbox {
    /// A call arrived: its events wait for its result.
    pub fn call_started(&mut self, call_id: &str) {
        self.open_calls.insert(call_id.to_string());
    }

    pub fn push(&mut self, item: Outgoing) {
        if let Outgoing::ExecEvent(_) = item {
            let is_event = |i: &Outgoing| matches!(i, Outgoing::ExecEvent(_));
            if self.items.iter().filter(|i| is_event(i)).count() >= MAX_EVENTS {
                if let Some(pos) = self.items.iter().position(is_event) {
                    self.items.remove(pos);
                }
            }
        }
        self.items.push_back(item);
    }

    /// The gateway took `item` (or refused it for good).
    pub fn settled(&mut self, item: &Outgoing) {
        if let Outgoing::ToolResult(p) = item {
            self.open_calls.remove(&p.call_id);
        }
    }

    /// Takes every item that may be sent now, in order; events of calls
    /// whose result is still out stay behind.
    pub fn take_ready(&mut self) -> Vec<Outgoing> {
        let mut ready = Vec::new();
        let mut held = VecDeque::new();
        for item in self.items.drain(..) {
            let blocked = matches!(&item, Outgoing::ExecEvent(_))
                && item.call_id().is_some_and(|c| self.open_calls.contains(c));
            if blocked {
                held.push_back(item);
            } else {
                ready.push(item);
            }
        }
        self.items = held;
        ready
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gsv_protocol::method::Method;
    use gsv_protocol::ExecEventKind;
    use serde_json::json;

    /// The method and params `send` puts on the wire.
    impl Outgoing {
        fn method(&self) -> &'static str {
            match self {
                Outgoing::ToolResult(_) => method::ToolResult::NAME,
                Outgoing::ExecEvent(_) => method::NodeExecEvent::NAME,
            }
        }

        fn params(&self) -> Value {
            match self {
                Outgoing::ToolResult(p) => serde_json::to_value(p),
                Outgoing::ExecEvent(p) => serde_json::to_value(p),
            }
            .unwrap()
        }
    }

    fn result(call: &str) -> Outgoing {
        Outgoing::ToolResult(ToolResultParams {
            call_id: call.into(),
            result: Some(json!({"status": "running", "sessionId": "s1"})),
            error: None,
        })
    }

    fn event(id: &str, call: &str) -> Outgoing {
        Outgoing::ExecEvent(NodeExecEventParams {
            event_id: id.into(),
            session_id: "s1".into(),
            event: ExecEventKind::Finished,
            call_id: Some(call.into()),
            exit_code: Some(0),
            signal: None,
            output_tail: None,
            started_at: None,
            ended_at: None,
        })
    }

    #[test]
    fn events_wait_for_their_call_result() {
        let mut outbox = Outbox::default();
        outbox.call_started("c1");
        outbox.push(event("e1", "c1"));
        outbox.push(event("e2", "other"));
        assert_eq!(outbox.take_ready(), vec![event("e2", "other")]);
        outbox.push(result("c1"));
        assert_eq!(outbox.take_ready(), vec![result("c1")]);
        assert_eq!(outbox.len(), 1);
        outbox.settled(&result("c1"));
        assert_eq!(outbox.take_ready(), vec![event("e1", "c1")]);
        assert_eq!(outbox.len(), 0);
    }

    #[test]
    fn oldest_events_go_first_when_full() {
        let mut outbox = Outbox::default();
        outbox.push(result("r"));
        for i in 0..MAX_EVENTS + 2 {
            outbox.push(event(&format!("e{i}"), "x"));
        }
        let ready = outbox.take_ready();
        assert_eq!(ready.len(), MAX_EVENTS + 1);
        assert_eq!(ready[0], result("r"));
        assert_eq!(ready[1], event("e2", "x"));
        assert_eq!(
            ready.last(),
            Some(&event(&format!("e{}", MAX_EVENTS + 1), "x"))
        );
    }

    #[test]
    fn wire_shapes() {
        assert_eq!(result("c1").method(), "tool.result");
        assert_eq!(
            result("c1").params(),
            json!({"callId": "c1", "result": {"status": "running", "sessionId": "s1"}})
        );
        assert_eq!(event("e1", "c1").method(), "node.exec.event");
        assert_eq!(
            event("e1", "c1").params(),
            json!({"eventId": "e1", "sessionId": "s1", "event": "finished", "callId": "c1", "exitCode": 0})
        );
    }
}
