//! `usage.daily`: the sessions active in the window are asked for their
//! days, all at once, and `crate::usage` adds them up.

use super::Gateway;
use crate::session::internal::UsageDays;
use crate::time::date_string;
use crate::worker::bindings::SessionStub;
use crate::worker::rpc::now_ms;
use crate::worker::tz::user_time_zone;
use gsv_protocol::*;

const DAY_MS: i64 = 86_400_000;

impl Gateway {
    pub(super) async fn usage_daily(
        &self,
        p: UsageDailyParams,
    ) -> Result<UsageDailyResult, ErrorShape> {
        let tz = user_time_zone(&self.config.borrow());
        let window = crate::usage::window(&date_string(&*tz, self.sched_now()), p.days);
        let from = window.first().cloned().unwrap_or_default();
        // Touched since the window began (a day more for time zones); a
        // session's calls always touch it.
        let since = now_ms() - (window.len() as i64 + 1) * DAY_MS;
        let keys = self.active_since(since)?;
        let asks = keys.iter().map(|key| {
            let call = UsageDays { from: from.clone() };
            async move { SessionStub::for_key(&self.env, key).call(&call).await }
        });
        let answers = futures::future::join_all(asks).await;
        let mut sessions = Vec::with_capacity(keys.len());
        for (key, days) in keys.into_iter().zip(answers) {
            sessions.push((key, days?));
        }
        Ok(crate::usage::daily(&window, sessions))
    }
}
