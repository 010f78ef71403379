//! Reading heartbeat settings from the config: durations, `HH:MM` times,
//! and the merge of the defaults with each agent's overrides.

use super::{ActiveHours, HeartbeatConfig, Target};
use crate::time::{HOUR_MS, MINUTE_MS};
use serde_json::{Map, Value};

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
