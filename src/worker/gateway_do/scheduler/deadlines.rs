//! The Gateway object's one alarm, set to the earliest of every part's
//! deadlines: the node registry's (tool calls, followed background
//! commands, bin probes, log calls), the channel plane's (deliveries,
//! typing renewals), approvals, and the scheduler's own: cron slots,
//! agent runs' timeouts (`gsv__SessionSend`'s waits among them),
//! heartbeats, the memory sweep. `alarm()` handles everything due; each handler is safe to
//! run twice (cron by its run ids, deliveries by the ledger, the rest by
//! deleting what they handled).

use super::Gateway;
use crate::schedule::alarm::{alarm_change, moves_for, AlarmChange};
use crate::schedule::slots::STALE_RUNNING_MS;
use crate::worker::rpc::now_ms;
use worker::*;

impl Gateway {
    /// The alarm's run: everything due, counted in `cron.status`.
    pub(in crate::worker::gateway_do) async fn alarm_run(&self) {
        let started = now_ms();
        self.scheduler.in_alarm.set(true);
        self.run_deadlines(started).await;
        self.scheduler.in_alarm.set(false);
        let (count, longest) = self.scheduler.alarm_stats.get();
        let took = (now_ms() - started).max(0) as u64;
        self.scheduler
            .alarm_stats
            .set((count + 1, longest.max(took)));
    }

    /// The earliest deadline of all, if any (ms since the epoch).
    pub(super) fn next_deadline(&self) -> Option<f64> {
        let store = self.schedule_store();
        let limits = self.cron_limits();
        let stale_before = self.sched_now() - STALE_RUNNING_MS;
        let full = store
            .running_count(stale_before)
            .is_ok_and(|n| n as usize >= limits.max_concurrent_runs);
        let cron = limits
            .enabled
            .then(|| store.next_deadline(full, stale_before))
            .flatten();
        // The schedule tables are on the schedule clock (see clock.rs).
        let scheduled = [
            cron,
            store.agent_runs_deadline(),
            store.heartbeats_deadline(),
            self.memory_sweep_deadline().map(|at| at as f64),
        ]
        .into_iter()
        .flatten()
        .map(|at| self.to_real(at));
        [
            self.node_deadline(),
            self.channel_deadline(),
            self.approvals_deadline(),
        ]
        .into_iter()
        .flatten()
        .chain(scheduled)
        .reduce(f64::min)
    }

    /// Points the alarm at the next deadline (a past one: at once).
    pub(in crate::worker::gateway_do) async fn schedule_alarm(&self) {
        let storage = self.state.storage();
        let sched = &self.scheduler;
        let change = alarm_change(
            self.next_deadline(),
            now_ms(),
            sched.in_alarm.get(),
            sched.alarm_set.get(),
        );
        // A burst of runs ending asks for the same alarm hundreds of times.
        let result = match change {
            AlarmChange::Keep => return,
            AlarmChange::Set(at) => {
                sched.alarm_set.set(Some(at));
                storage
                    .set_alarm(ScheduledTime::new(js_sys::Date::new(&(at as f64).into())))
                    .await
            }
            AlarmChange::Delete => {
                sched.alarm_set.set(None);
                storage.delete_alarm().await
            }
        };
        if let Err(e) = result {
            console_error!("gateway: scheduling the alarm failed: {e}");
        }
    }

    /// A deadline at `at` was just added: the alarm moves only when it is
    /// set later than that, or not at all. (A deadline removed leaves the
    /// alarm as it is; it then finds nothing due and is set again.)
    pub(in crate::worker::gateway_do) async fn schedule_alarm_by(&self, at: i64) {
        let sched = &self.scheduler;
        if moves_for(at, sched.in_alarm.get(), sched.alarm_set.get()) {
            self.schedule_alarm().await;
        }
    }

    /// Everything due at `now`, in order; the alarm is set again after.
    pub(super) async fn run_deadlines(&self, now: i64) {
        self.node_alarm(now).await;
        self.channel_alarm(now).await;
        let sched = self.sched_now();
        self.expire_agent_runs(sched).await;
        self.heartbeat_alarm(sched).await;
        self.cron_alarm(sched).await;
        self.memory_sweep_alarm(sched).await;
        self.expire_approvals(now).await;
        self.schedule_alarm().await;
    }

    /// Deletes the alarm (the test clock's "lost alarm").
    pub(super) async fn drop_alarm(&self) {
        self.scheduler.alarm_set.set(None);
        if let Err(e) = self.state.storage().delete_alarm().await {
            console_error!("gateway: deleting the alarm failed: {e}");
        }
    }

    /// The gateway was woken (this instance's first client, the Worker's
    /// cron trigger, a config change): after downtime, whatever came due
    /// meanwhile runs now; heartbeats of agents new to the config are
    /// scheduled.
    pub(in crate::worker::gateway_do) async fn wake(&self) {
        self.scheduler.woke.set(true);
        self.heartbeat_sync(self.sched_now());
        self.memory_sweep_sync(self.sched_now());
        self.schedule_alarm().await;
    }
}
