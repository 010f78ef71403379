//! Heartbeats: the agent wakes every
//! `every`, reads HEARTBEAT.md and says something only if something needs
//! saying. Here: the config, whether a beat runs now or why not, and (in
//! [`output`]) what of its answer reaches the user.
//!
//! Active hours are read in `activeHours.timezone`, else the USER's zone
//! (`userTimezone`) — never silently UTC.

mod config;
pub mod light;
pub mod output;

#[cfg(test)]
mod output_tests;
#[cfg(test)]
mod tests;

use crate::time::{local_date_time, TimeZone};

pub use config::{heartbeat_config, parse_clock_time, parse_duration, HeartbeatError};
pub use output::{
    decide_delivery, heartbeat_md_is_empty, strip_token, Delivery, LastDelivery, Suppressed,
    DEDUPE_WINDOW_MS, HEARTBEAT_TOKEN,
};

/// Where a beat's answer goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The agent's last active channel conversation.
    Last,
    /// Nowhere: the beat works silently.
    None,
    /// The last active conversation, only if it is on this channel.
    Channel(String),
}

impl Target {
    /// Whether the answer is delivered, given the last active channel.
    pub fn delivers_to(&self, last_channel: Option<&str>) -> bool {
        match self {
            Target::Last => last_channel.is_some(),
            Target::None => false,
            Target::Channel(c) => last_channel.is_some_and(|l| l.eq_ignore_ascii_case(c)),
        }
    }
}

/// `activeHours`: minutes after local midnight, `end` exclusive (1440 =
/// `24:00`); `start > end` spans midnight; `start == end` is all day.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveHours {
    pub start_min: u32,
    pub end_min: u32,
    /// An IANA zone; `None`: the user's zone.
    pub timezone: Option<String>,
}

impl ActiveHours {
    /// The zone to read the hours in.
    pub fn zone_name<'a>(&'a self, user_zone: &'a str) -> &'a str {
        self.timezone.as_deref().unwrap_or(user_zone)
    }

    /// Whether `now_ms` falls inside, on the wall clock of `tz` (the zone
    /// [`Self::zone_name`] names).
    pub fn contains(&self, tz: &dyn TimeZone, now_ms: i64) -> bool {
        let t = local_date_time(tz, now_ms);
        let m = t.hour * 60 + t.minute;
        match self.start_min.cmp(&self.end_min) {
            std::cmp::Ordering::Equal => true,
            std::cmp::Ordering::Less => self.start_min <= m && m < self.end_min,
            std::cmp::Ordering::Greater => m >= self.start_min || m < self.end_min,
        }
    }
}

/// One agent's effective heartbeat settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatConfig {
    /// 0: disabled.
    pub every_ms: i64,
    pub prompt: String,
    pub target: Target,
    /// `None`: all day.
    pub active_hours: Option<ActiveHours>,
    /// A model for beats (e.g. a cheaper one); `None`: the agent's.
    pub model: Option<String>,
    /// Beats get a lighter prompt (no skills list, no history beyond the
    /// heartbeat session); default true.
    pub light_context: bool,
}

/// Why a beat did not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    Disabled,
    OutsideActiveHours,
    NoHeartbeatFile,
    EmptyHeartbeatFile,
    /// The session the answer would go to is mid-run or has a queue.
    SessionBusy,
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SkipReason::Disabled => "heartbeats are disabled (every: 0)",
            SkipReason::OutsideActiveHours => "outside active hours",
            SkipReason::NoHeartbeatFile => "no HEARTBEAT.md in the workspace",
            SkipReason::EmptyHeartbeatFile => "HEARTBEAT.md has nothing to do",
            SkipReason::SessionBusy => "the target session is busy",
        })
    }
}

/// What a beat decision looks at.
pub struct BeatCheck<'a> {
    pub config: &'a HeartbeatConfig,
    /// `heartbeat.trigger`: runs whatever the checks say.
    pub manual: bool,
    pub now_ms: i64,
    /// The active-hours zone ([`ActiveHours::zone_name`]), resolved.
    pub tz: &'a dyn TimeZone,
    /// HEARTBEAT.md's text, `None` if there is no such file.
    pub heartbeat_md: Option<&'a str>,
    /// The previous beat still runs, or a reply in the agent's last
    /// active chat (where the beat would speak) is still being written.
    pub session_busy: bool,
}

/// Whether a beat runs now (`Ok`) or why not.
pub fn check(c: &BeatCheck<'_>) -> Result<(), SkipReason> {
    if c.manual {
        return Ok(());
    }
    if c.config.every_ms <= 0 {
        return Err(SkipReason::Disabled);
    }
    if let Some(hours) = &c.config.active_hours {
        if !hours.contains(c.tz, c.now_ms) {
            return Err(SkipReason::OutsideActiveHours);
        }
    }
    match c.heartbeat_md {
        None => Err(SkipReason::NoHeartbeatFile),
        Some(md) if heartbeat_md_is_empty(md) => Err(SkipReason::EmptyHeartbeatFile),
        Some(_) if c.session_busy => Err(SkipReason::SessionBusy),
        Some(_) => Ok(()),
    }
}

/// The next beat after one at (or a start at) `now_ms`: `now + every`,
/// whether it ran or was skipped; `None` when disabled.
pub fn next_beat(config: &HeartbeatConfig, now_ms: i64) -> Option<i64> {
    (config.every_ms > 0).then(|| now_ms.saturating_add(config.every_ms))
}
