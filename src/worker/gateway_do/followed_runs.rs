//! The chat runs the gateway itself follows: those started from a chat app
//! (their answers go back there) and its own agent runs (cron jobs,
//! heartbeats, `gsv__SessionSend` waits). Their ids mirror the two tables
//! that hold them, read once per instance, so the chat events of every
//! other run (a client's, the bulk of them) cost no lookup.

use super::Gateway;
use crate::worker::rpc::internal_error;
use gsv_protocol::{ChatEvent, ChatState, ErrorShape};
use serde::Deserialize;
use std::cell::RefCell;
use std::collections::HashSet;

#[derive(Default)]
pub(super) struct FollowedRuns(RefCell<Option<HashSet<String>>>);

impl Gateway {
    /// Every run id in `channel_runs` and `agent_runs`.
    fn followed_ids(&self) -> Result<HashSet<String>, ErrorShape> {
        #[derive(Deserialize)]
        struct Row {
            id: String,
        }
        let rows: Vec<Row> = self
            .state
            .storage()
            .sql()
            .exec(
                "SELECT run_id AS id FROM channel_runs UNION SELECT chat_run_id AS id FROM agent_runs",
                None,
            )
            .and_then(|c| c.to_array())
            .map_err(internal_error)?;
        Ok(rows.into_iter().map(|r| r.id).collect())
    }

    /// A run was recorded in one of the two tables.
    pub(super) fn follow_run(&self, run_id: &str) {
        if let Some(ids) = self.followed.0.borrow_mut().as_mut() {
            ids.insert(run_id.to_string());
        }
    }

    /// Whether `evt` may concern a followed run: deltas never do (neither a
    /// chat nor an agent run acts on them); an unreadable table says yes.
    pub(super) fn may_follow(&self, evt: &ChatEvent) -> bool {
        let Some(run_id) = evt.run_id.as_deref() else {
            return false;
        };
        if evt.state == ChatState::Delta {
            return false;
        }
        if self.followed.0.borrow().is_none() {
            match self.followed_ids() {
                Ok(ids) => {
                    self.followed.0.replace(Some(ids));
                }
                Err(_) => return true,
            }
        }
        let followed = self.followed.0.borrow();
        let known = followed.as_ref().is_some_and(|ids| ids.contains(run_id));
        drop(followed);
        if known && matches!(evt.state, ChatState::Final | ChatState::Error) {
            // Its end is handled now; the tables forget it too.
            if let Some(ids) = self.followed.0.borrow_mut().as_mut() {
                ids.remove(run_id);
            }
        }
        known
    }
}
