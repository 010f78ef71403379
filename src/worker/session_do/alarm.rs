//! The Session object's one alarm, pointed at the earliest row of its
//! deadlines table: the tick (the run watchdog) and the tool calls' deadline.

use super::error::Res;
use super::store::SessionStore;
use crate::worker::rpc::now_ms;
use std::cell::Cell;
use worker::{console_error, ScheduledTime, Storage};

/// The object's periodic deadline while it has something to watch: a live
/// run proves it is alive at each tick; a run whose loop died with an
/// eviction or restart is resumed at the next one; an idle event link is
/// closed. It is moved only when missing, so a turn costs no alarm write.
pub const TICK: &str = "tick";
pub const TICK_MS: i64 = 10_000;

pub struct Alarm {
    storage: Storage,
    /// The alarm time this instance last set (`None`: unknown or none).
    at: Cell<Option<i64>>,
}

impl Alarm {
    pub fn new(storage: Storage) -> Self {
        Self {
            storage,
            at: Cell::new(None),
        }
    }

    /// The alarm that woke the object is spent.
    pub fn fired(&self) {
        self.at.set(None);
    }

    /// Points the alarm at the earliest deadline.
    pub async fn schedule(&self, store: &SessionStore) {
        let next = store.next_deadline();
        if next.is_some() && next == self.at.get() {
            return;
        }
        let result = match next {
            Some(at) => {
                self.storage
                    .set_alarm(ScheduledTime::new(js_sys::Date::new(&(at as f64).into())))
                    .await
            }
            None => self.storage.delete_alarm().await,
        };
        match result {
            Ok(()) => self.at.set(next),
            Err(e) => console_error!("session: scheduling the alarm failed: {e}"),
        }
    }

    /// Makes sure a tick is pending; true when the deadlines changed (the
    /// alarm must then be scheduled).
    pub fn ensure_tick(&self, store: &SessionStore) -> Res<bool> {
        if store.deadline(TICK)?.is_some_and(|at| at > now_ms()) {
            return Ok(false);
        }
        store.set_deadline(TICK, now_ms() + TICK_MS)?;
        Ok(true)
    }
}
