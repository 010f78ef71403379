//! The nightly memory sweep, on the Gateway's schedule: at
//! `memory.dream.atHour` in the user's zone, the repair job over the
//! account's memory, then each agent's dream (promotions into its
//! MEMORY.md, a DREAMS.md entry). One row holds when it next runs.

use super::Gateway;
use crate::memory::calls::{Caller, IndexDream, IndexRepair};
use crate::memory::dream::{next_sweep_at, stamp};
use crate::memory::settings::MemorySettings;
use crate::worker::bindings::MemoryStub;
use gsv_protocol::ErrorShape;
use worker::console_error;

type Res<T> = std::result::Result<T, ErrorShape>;

impl Gateway {
    /// When the sweep next runs (schedule clock), if it is scheduled.
    pub(super) fn memory_sweep_deadline(&self) -> Option<i64> {
        self.schedule_store().sweep_at()
    }

    /// Schedules the sweep from the config (its hour and the user's zone
    /// may have changed); a sweep already due is left to run (after
    /// downtime it runs once, late); with dreaming off it is unscheduled.
    pub(super) fn memory_sweep_sync(&self, now: i64) {
        let settings = MemorySettings::from_config(&self.config.borrow());
        let result = match (settings.dream, self.memory_sweep_deadline()) {
            (false, _) => self.schedule_store().drop_sweep(),
            (true, Some(at)) if at <= now => Ok(()),
            (true, _) => self.set_memory_sweep(now, &settings),
        };
        if let Err(e) = result {
            console_error!("gateway: scheduling the memory sweep failed: {}", e.message);
        }
    }

    fn set_memory_sweep(&self, now: i64, settings: &MemorySettings) -> Res<()> {
        let zone = self.user_zone();
        let next = next_sweep_at(self.zone_of(&zone).as_ref(), now, settings.dream_at_hour);
        self.schedule_store().set_sweep_at(next)
    }

    /// Runs the sweep when it is due, and schedules the next one first (a
    /// sweep that fails is not retried until the next night).
    pub(super) async fn memory_sweep_alarm(&self, now: i64) {
        if self.memory_sweep_deadline().is_none_or(|at| at > now) {
            return;
        }
        let settings = MemorySettings::from_config(&self.config.borrow());
        if let Err(e) = self.set_memory_sweep(now, &settings) {
            return console_error!("gateway: scheduling the memory sweep failed: {}", e.message);
        }
        let caller = |agent_id: &str| Caller {
            account: settings.account.clone(),
            agent_id: agent_id.to_string(),
            user: None,
            operator: true,
            settings: settings.index.clone(),
        };
        let index = MemoryStub::for_account(&self.env, &settings.account);
        let agents = self.beat_agents();
        let first = agents.first().cloned().unwrap_or_else(|| "main".into());
        if let Err(e) = index
            .call(&IndexRepair {
                caller: caller(&first),
            })
            .await
        {
            console_error!("gateway: memory repair failed: {}", e.message);
        }
        let zone = self.user_zone();
        let tz = self.zone_of(&zone);
        for agent in agents {
            let dream = IndexDream {
                caller: caller(&agent),
                stamp: stamp(tz.as_ref(), &zone, now),
                threshold: settings.dream_threshold,
                now_ms: now,
            };
            if let Err(e) = index.call(&dream).await {
                console_error!("gateway: the dream of {agent} failed: {}", e.message);
            }
        }
    }
}
