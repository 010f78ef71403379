//! The node registry: connected nodes and their tools, tool calls out at
//! nodes and who waits for each, background commands a session waits on,
//! skill bin probes, log calls and file transfers. Its state and its
//! store are its own; the rest of the Gateway reaches them through the
//! methods in its files.

mod logs;
mod nodes;
mod probes;
mod store;
mod transfer;

use super::Gateway;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use store::NodeStore;
use worker::console_error;

pub(super) use logs::LogsAsker;
pub(super) use nodes::Asker;
pub(super) use store::{LOG_CALLS_MIGRATION, MIGRATION, PROBES_MIGRATION};

/// The node registry's state in this instance.
#[derive(Default)]
pub(super) struct NodeRegistry {
    /// File transfers in progress, by transfer id.
    transfers: RefCell<HashMap<u32, transfer::Transfer>>,
    next_transfer: Cell<u32>,
    /// Sessions' node calls answered, their routes not deleted yet (nodes.rs).
    answered_routes: RefCell<Vec<String>>,
    /// The routes of node calls this instance wrote (nodes.rs).
    kept_routes: nodes::KeptRoutes,
    /// Sessions' node calls answered lately, deleted or not (nodes.rs).
    answered_calls: RefCell<crate::gateway::nodes::AnsweredCalls>,
}

impl Gateway {
    fn node_store(&self) -> NodeStore {
        NodeStore::new(self.state.storage().sql())
    }

    /// The node registry's earliest deadline: tool calls, followed
    /// background commands, log calls, bin probes.
    pub(super) fn node_deadline(&self) -> Option<f64> {
        self.node_store().next_deadline()
    }

    /// Everything of the registry due at `now`: unanswered tool calls and
    /// followed commands, bin probes, log calls.
    pub(super) async fn node_alarm(&self, now: i64) {
        if let Err(e) = self.expire_tool_calls(now).await {
            console_error!("gateway: expiring tool calls failed: {}", e.message);
        }
        if let Err(e) = self.expire_probes(now).await {
            console_error!("gateway: expiring bin probes failed: {}", e.message);
        }
        if let Err(e) = self.expire_log_calls(now).await {
            console_error!("gateway: expiring log calls failed: {}", e.message);
        }
    }
}
