//! The clock schedules read: cron slots, run timeouts, heartbeats. In
//! production it is the real clock. Under the end-to-end tests, whose
//! harness puts `GSV_TEST_CLOCK=1` in the gateway's `.dev.vars`, the
//! internal path `/internal/test/clock` (forwarded by the Worker only when
//! that variable is set; a deployed gateway never has it) moves it
//! forward, so "in 2 minutes" can come now. The offset lives in memory:
//! a restart resets it.

use super::Gateway;
use crate::worker::rpc::now_ms;
use serde::{Deserialize, Serialize};

pub const TEST_CLOCK_VAR: &str = "GSV_TEST_CLOCK";

/// `POST /internal/test/clock`: moves the schedule clock by `advanceMs`;
/// with `dropAlarm`, deletes the object's alarm instead of setting it
/// again, as if the platform had lost it (the Worker's cron trigger must
/// bring it back).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(in crate::worker::gateway_do) struct AdvanceClock {
    pub advance_ms: i64,
    #[serde(default)]
    pub drop_alarm: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(in crate::worker::gateway_do) struct ClockState {
    pub offset_ms: i64,
}

/// Whether this Worker runs under the test harness.
pub fn test_clock_enabled(env: &worker::Env) -> bool {
    env.var(TEST_CLOCK_VAR)
        .map(|v| v.to_string() == "1")
        .or_else(|_| env.secret(TEST_CLOCK_VAR).map(|v| v.to_string() == "1"))
        .unwrap_or(false)
}

impl Gateway {
    /// Now, on the schedule clock.
    pub(in crate::worker::gateway_do) fn sched_now(&self) -> i64 {
        now_ms() + self.scheduler.clock_offset.get()
    }

    /// A schedule-clock instant as a real one (for the alarm).
    pub(super) fn to_real(&self, at: f64) -> f64 {
        at - self.scheduler.clock_offset.get() as f64
    }

    pub(in crate::worker::gateway_do) async fn advance_clock(&self, a: AdvanceClock) -> ClockState {
        self.scheduler
            .clock_offset
            .set(self.scheduler.clock_offset.get() + a.advance_ms.max(0));
        if a.drop_alarm {
            self.drop_alarm().await;
        } else {
            self.schedule_alarm().await;
        }
        ClockState {
            offset_ms: self.scheduler.clock_offset.get(),
        }
    }
}
