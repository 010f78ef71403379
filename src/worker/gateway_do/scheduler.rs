//! The scheduler: cron jobs and their runs, heartbeats, the nightly memory
//! sweep, the runs the gateway starts on its own and follows (theirs and
//! `gsv__SessionSend`'s waits), the schedule clock, and the object's one
//! alarm over every part's deadlines. Its state and its store are its own.

mod agent_runs;
mod clock;
mod cron;
mod cron_tool;
mod deadlines;
mod heartbeat;
mod memory_sweep;
mod session_send;
mod store;

use super::Gateway;
use std::cell::Cell;
use store::ScheduleStore;

pub(super) use clock::AdvanceClock;
pub use clock::{test_clock_enabled, TEST_CLOCK_VAR};
pub(super) use store::{MIGRATION, RUNNING_INDEX_MIGRATION, SWEEP_MIGRATION};

/// The scheduler's state in this instance.
#[derive(Default)]
pub(super) struct Scheduler {
    /// The test clock's offset (clock.rs); 0 in production.
    clock_offset: Cell<i64>,
    /// This instance has brought its schedules in line (`wake`): a client
    /// connecting wakes the object only the first time, not on every
    /// connection (each wake writes the schedules' rows, and the write
    /// would hold back the connection's answer).
    woke: Cell<bool>,
    /// Alarm invocations since start and the longest one (ms).
    alarm_stats: Cell<(u64, u64)>,
    /// The alarm this instance last set (deadlines.rs).
    alarm_set: Cell<Option<i64>>,
    in_alarm: Cell<bool>,
}

impl Gateway {
    fn schedule_store(&self) -> ScheduleStore {
        ScheduleStore::new(self.state.storage().sql())
    }

    /// Whether this instance has woken (`wake`) yet.
    pub(super) fn woke(&self) -> bool {
        self.scheduler.woke.get()
    }

    /// The test clock's offset (0 in production).
    pub(super) fn clock_offset_ms(&self) -> i64 {
        self.scheduler.clock_offset.get()
    }
}
