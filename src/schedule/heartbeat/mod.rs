//! Heartbeats (reference §2.4, done better): the agent wakes every
//! `every`, reads HEARTBEAT.md and says something only if something needs
//! saying. Here: the config, whether a beat runs now or why not, and (in
//! [`output`]) what of its answer reaches the user.
//!
//! Active hours are read in `activeHours.timezone`, else the USER's zone
//! (`userTimezone`) — never silently UTC (v1 defect §12 #5).

pub mod output;

#[cfg(test)]
mod tests;

use crate::time::{local_date_time, TimeZone, HOUR_MS, MINUTE_MS};
use serde_json::{Map, Value};

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

/// A heartbeat setting that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeartbeatError {
    /// `every` is not like `30m`, `1h30m`, `45s` or `0`.
    BadDuration(String),
    /// An `activeHours` time is not `HH:MM`.
    BadTime(String),
    WrongType {
        field: &'static str,
        expected: &'static str,
    },
}

impl std::fmt::Display for HeartbeatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeartbeatError::BadDuration(s) => write!(
                f,
                "heartbeat interval \"{s}\" is not a duration like 30m, 1h30m, 45s (0 disables)"
            ),
            HeartbeatError::BadTime(s) => write!(f, "active hours time \"{s}\" is not HH:MM"),
            HeartbeatError::WrongType { field, expected } => {
                write!(f, "heartbeat {field} must be {expected}")
            }
        }
    }
}

impl std::error::Error for HeartbeatError {}

/// `1h30m`, `30m`, `45s`, `2d`, `1h 30m` → ms; `0` (or `0m`…) is 0:
/// disabled. A bare number other than 0 is refused (minutes? seconds?).
pub fn parse_duration(text: &str) -> Result<i64, HeartbeatError> {
    let bad = || HeartbeatError::BadDuration(text.to_string());
    let s: String = text
        .split_whitespace()
        .collect::<String>()
        .to_ascii_lowercase();
    if s == "0" {
        return Ok(0);
    }
    let (mut total, mut rest) = (0i64, s.as_str());
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let n: i64 = rest[..digits].parse().map_err(|_| bad())?;
        let unit = match rest.as_bytes()[digits] {
            b'd' => 24 * HOUR_MS,
            b'h' => HOUR_MS,
            b'm' => MINUTE_MS,
            b's' => 1000,
            _ => return Err(bad()),
        };
        total = n
            .checked_mul(unit)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(bad)?;
        rest = &rest[digits + 1..];
    }
    Ok(total)
}

/// `HH:MM` → minutes after midnight (`24:00` → 1440).
pub fn parse_clock_time(text: &str) -> Result<u32, HeartbeatError> {
    let bad = || HeartbeatError::BadTime(text.to_string());
    let (h, m) = text.trim().split_once(':').ok_or_else(bad)?;
    let ok = |p: &str| (1..=2).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit());
    if !ok(h) || m.len() != 2 || !ok(m) {
        return Err(bad());
    }
    let (h, m): (u32, u32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    match (h, m) {
        (24, 0) => Ok(1440),
        (0..=23, 0..=59) => Ok(h * 60 + m),
        _ => Err(bad()),
    }
}

/// The settings of `agent_id` from the effective config's `agents`:
/// built-in defaults ← `agents.defaultHeartbeat` ← `agents.list[i].heartbeat`,
/// each a shallow merge (a `null` removes the key, e.g. `activeHours: null`
/// for all day).
pub fn heartbeat_config(
    agents: Option<&Value>,
    agent_id: &str,
) -> Result<HeartbeatConfig, HeartbeatError> {
    let defaults = crate::config::default_config();
    let mut merged = Map::new();
    let layers = [
        defaults.pointer("/agents/defaultHeartbeat"),
        agents.and_then(|a| a.get("defaultHeartbeat")),
        agents
            .and_then(|a| a.get("list"))
            .and_then(Value::as_array)
            .and_then(|l| {
                l.iter()
                    .find(|e| e.get("id").and_then(Value::as_str) == Some(agent_id))
            })
            .and_then(|e| e.get("heartbeat")),
    ];
    for layer in layers.into_iter().flatten().filter_map(Value::as_object) {
        for (k, v) in layer {
            if v.is_null() {
                merged.remove(k);
            } else {
                merged.insert(k.clone(), v.clone());
            }
        }
    }
    from_merged(&merged)
}

fn from_merged(o: &Map<String, Value>) -> Result<HeartbeatConfig, HeartbeatError> {
    let string = |field: &'static str| match o.get(field) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim()).filter(|s| !s.is_empty())),
        Some(_) => Err(HeartbeatError::WrongType {
            field,
            expected: "a string",
        }),
    };
    let every_ms = match o.get("every") {
        None => 0,
        Some(Value::Number(n)) if n.as_u64() == Some(0) => 0,
        Some(Value::String(s)) => parse_duration(s)?,
        Some(_) => {
            return Err(HeartbeatError::WrongType {
                field: "every",
                expected: "a duration such as \"30m\"",
            })
        }
    };
    let target = match string("target")? {
        None => Target::Last,
        Some(t) if t.eq_ignore_ascii_case("last") => Target::Last,
        Some(t) if t.eq_ignore_ascii_case("none") => Target::None,
        Some(t) => Target::Channel(t.to_string()),
    };
    let active_hours = match o.get("activeHours") {
        None => None,
        Some(Value::Object(h)) => Some(active_hours(h)?),
        Some(_) => {
            return Err(HeartbeatError::WrongType {
                field: "activeHours",
                expected: "an object {start, end, timezone?}",
            })
        }
    };
    let light_context = match o.get("lightContext") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(HeartbeatError::WrongType {
                field: "lightContext",
                expected: "true or false",
            })
        }
    };
    Ok(HeartbeatConfig {
        every_ms,
        prompt: string("prompt")?.unwrap_or_default().to_string(),
        target,
        active_hours,
        model: string("model")?.map(str::to_string),
        light_context,
    })
}

fn active_hours(h: &Map<String, Value>) -> Result<ActiveHours, HeartbeatError> {
    let time = |field: &'static str, default: u32| match h.get(field) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::String(s)) => parse_clock_time(s),
        Some(_) => Err(HeartbeatError::WrongType {
            field,
            expected: "\"HH:MM\"",
        }),
    };
    let timezone = match h.get("timezone") {
        None | Some(Value::Null) => None,
        // "user" (v1 mapped it to UTC) and "" mean the user's zone.
        Some(Value::String(s)) if s.trim().is_empty() || s.trim() == "user" => None,
        Some(Value::String(s)) => Some(s.trim().to_string()),
        Some(_) => {
            return Err(HeartbeatError::WrongType {
                field: "activeHours.timezone",
                expected: "an IANA zone name",
            })
        }
    };
    Ok(ActiveHours {
        start_min: time("start", 0)?,
        end_min: time("end", 0)?,
        timezone,
    })
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
