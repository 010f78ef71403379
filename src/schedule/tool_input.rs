//! One normalization for the `gsv__Cron` tool and the `cron.add` /
//! `cron.update` RPCs: loose input (what a model or a person writes) in,
//! a stored-shape [`Schedule`], [`JobSpec`] and job out, or a typed error
//! whose text tells the writer what to send instead.
//!
//! `schedule` (`"in"` is also accepted without the word "in"):
//! - `{kind:"at"}` with `atMs` | `at` (number: ms; below 10^11: seconds)
//!   | `inMs`/`delayMs`/`inSeconds`/`inMinutes`/`inHours`/`inDays` | `in`
//!   ("in 2 hours", "2h") | `at`/`when`/`atIso`/`atMs` string (see
//!   [`super::when`]); a past time is kept: due at once;
//! - `{kind:"every"}` with `everyMs`/`everySeconds`/`everyMinutes`/
//!   `everyHours`/`everyDays` (at least a minute), anchor `anchorMs`/
//!   `anchor`/`anchorAt`/`startAt` (number or date-time; default: now);
//! - `{kind:"cron", expr, tz?}`: `tz` defaults to the user's zone and is
//!   stored, so the job keeps its meaning if `userTimezone` changes.
//!
//! `spec`: `{kind | mode: "systemEvent", text}` or `{kind | mode: "task",
//! message, model?, thinking?, timeoutSeconds?, deliver?, channel?, to?}`.

use super::when::{parse_relative, parse_when, WhenError};
use super::{resolve_zone, CronError, CronExpr, JobSpec, Schedule, Zones};
use crate::time::{TimeZone, DAY_MS, HOUR_MS, MINUTE_MS};
use serde_json::{Map, Value};

/// The shortest `every`: each run is an agent turn (a model call), so a
/// seconds-long interval would be a storm, not a schedule.
pub const MIN_EVERY_MS: i64 = MINUTE_MS;

/// A numeric `atMs`/`at` below this is epoch seconds, not milliseconds.
const SECONDS_BELOW: i64 = 100_000_000_000;

/// What normalization needs besides the input.
pub struct InputContext<'a> {
    pub now_ms: i64,
    /// `userTimezone` (IANA name).
    pub user_zone: &'a str,
    /// That zone, resolved.
    pub user_tz: &'a dyn TimeZone,
    /// Validates cron `tz` names.
    pub zones: &'a dyn Zones,
}

/// Why an input was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// `field` must be an object (`schedule`, `spec`, the params).
    NotAnObject(&'static str),
    /// A required field is missing or empty.
    Missing(&'static str),
    /// `schedule.kind` / `spec.kind` has an unknown value.
    UnknownKind {
        field: &'static str,
        kind: String,
    },
    /// `at` without any usable time.
    NoTime,
    /// `every` without a positive interval.
    NoInterval,
    /// `every` more often than once a minute ([`MIN_EVERY_MS`]).
    IntervalTooShort,
    /// A number that must not be negative.
    Negative(&'static str),
    /// A field of the wrong JSON type.
    WrongType {
        field: &'static str,
        expected: &'static str,
    },
    When(WhenError),
    Cron(CronError),
    UnknownZone(String),
    /// The schedule never fires (e.g. `0 0 30 2 *`).
    NeverRuns,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::NotAnObject(field) => write!(f, "{field} must be an object"),
            InputError::Missing(field) => write!(f, "{field} is required"),
            InputError::UnknownKind { field, kind } => write!(f, "unknown {field} \"{kind}\""),
            InputError::NoTime => f.write_str(
                "schedule kind \"at\" needs atMs, at (a date-time), or a relative time such as \
                 in: \"2 hours\"",
            ),
            InputError::NoInterval => f.write_str(
                "schedule kind \"every\" needs a positive everyMs, everySeconds, everyMinutes, \
                 everyHours or everyDays",
            ),
            InputError::IntervalTooShort => {
                f.write_str("schedule kind \"every\" runs at most once a minute")
            }
            InputError::Negative(field) => write!(f, "{field} must not be negative"),
            InputError::WrongType { field, expected } => write!(f, "{field} must be {expected}"),
            InputError::When(e) => e.fmt(f),
            InputError::Cron(e) => e.fmt(f),
            InputError::UnknownZone(z) => write!(f, "unknown time zone \"{z}\" (use an IANA name)"),
            InputError::NeverRuns => f.write_str("this schedule never runs"),
        }
    }
}

impl std::error::Error for InputError {}

impl From<WhenError> for InputError {
    fn from(e: WhenError) -> Self {
        InputError::When(e)
    }
}

impl From<CronError> for InputError {
    fn from(e: CronError) -> Self {
        InputError::Cron(e)
    }
}

/// `raw` (the `schedule` value) as a stored schedule.
pub fn normalize_schedule(raw: &Value, cx: &InputContext<'_>) -> Result<Schedule, InputError> {
    let o = raw.as_object().ok_or(InputError::NotAnObject("schedule"))?;
    let kind = text(o, "kind")?.ok_or(InputError::Missing("schedule.kind"))?;
    match kind.to_ascii_lowercase().as_str() {
        "at" => Ok(Schedule::At {
            at_ms: at_ms(o, cx)?.ok_or(InputError::NoTime)?,
        }),
        "every" => {
            let every_ms = every_ms(o)?.ok_or(InputError::NoInterval)?;
            if every_ms < MIN_EVERY_MS {
                return Err(InputError::IntervalTooShort);
            }
            let anchor_ms = match first_of(o, &["anchorMs", "anchor", "anchorAt", "startAt"]) {
                Some(Value::Number(n)) => match number(n, "schedule.anchorMs")? {
                    ms if ms >= 0 => ms,
                    _ => return Err(InputError::Negative("schedule.anchorMs")),
                },
                Some(Value::String(s)) => parse_when(s, cx.now_ms, cx.user_tz)?,
                Some(_) => return Err(wrong("schedule.anchorMs", "a number or a date-time")),
                None => cx.now_ms,
            };
            Ok(Schedule::Every {
                every_ms,
                anchor_ms,
            })
        }
        "cron" => {
            let expr = text(o, "expr")?.ok_or(InputError::Missing("schedule.expr"))?;
            let expr = CronExpr::parse(expr)?.to_string();
            let tz = text(o, "tz")?.unwrap_or(cx.user_zone).to_string();
            if resolve_zone(cx.zones, &tz).is_none() {
                return Err(InputError::UnknownZone(tz));
            }
            Ok(Schedule::Cron { expr, tz: Some(tz) })
        }
        other => Err(InputError::UnknownKind {
            field: "schedule.kind",
            kind: other.to_string(),
        }),
    }
}

fn at_ms(o: &Map<String, Value>, cx: &InputContext<'_>) -> Result<Option<i64>, InputError> {
    for key in ["atMs", "at"] {
        if let Some(Value::Number(n)) = o.get(key) {
            let v = number(n, "schedule.atMs")?;
            // Epoch seconds by mistake (as ms it would be before 1973).
            let v = if (0..SECONDS_BELOW).contains(&v) {
                v * 1000
            } else {
                v
            };
            return Ok(Some(v));
        }
    }
    let relative: [(&str, i64, &'static str); 6] = [
        ("inMs", 1, "schedule.inMs"),
        ("delayMs", 1, "schedule.delayMs"),
        ("inSeconds", 1000, "schedule.inSeconds"),
        ("inMinutes", MINUTE_MS, "schedule.inMinutes"),
        ("inHours", HOUR_MS, "schedule.inHours"),
        ("inDays", DAY_MS, "schedule.inDays"),
    ];
    for (key, unit, name) in relative {
        if let Some(v) = o.get(key) {
            let n = v.as_f64().ok_or(wrong(name, "a number"))?;
            if n < 0.0 {
                return Err(InputError::Negative(name));
            }
            return Ok(Some(
                cx.now_ms.saturating_add((n * unit as f64).round() as i64),
            ));
        }
    }
    if let Some(s) = text(o, "in")? {
        let ms = parse_relative(s).ok_or_else(|| WhenError::Unrecognized(s.to_string()))?;
        return Ok(Some(cx.now_ms.saturating_add(ms)));
    }
    for key in ["atMs", "at", "when", "atIso"] {
        if let Some(s) = text(o, key)? {
            return Ok(Some(parse_when(s, cx.now_ms, cx.user_tz)?));
        }
    }
    Ok(None)
}

fn every_ms(o: &Map<String, Value>) -> Result<Option<i64>, InputError> {
    let units: [(&str, i64); 5] = [
        ("everyMs", 1),
        ("everySeconds", 1000),
        ("everyMinutes", MINUTE_MS),
        ("everyHours", HOUR_MS),
        ("everyDays", DAY_MS),
    ];
    for (key, unit) in units {
        if let Some(v) = o.get(key) {
            let n = v.as_f64().ok_or(wrong("schedule.everyMs", "a number"))?;
            let ms = (n * unit as f64).round();
            return Ok((1.0..1e15).contains(&ms).then_some(ms as i64));
        }
    }
    Ok(None)
}

/// `spec` as stored; `mode` is accepted for `kind` (v1's name).
pub fn normalize_spec(raw: &Value) -> Result<JobSpec, InputError> {
    let o = raw.as_object().ok_or(InputError::NotAnObject("spec"))?;
    let kind = match text(o, "kind")? {
        Some(k) => k,
        None => text(o, "mode")?.ok_or(InputError::Missing("spec.kind"))?,
    };
    let opt = |key: &'static str| text(o, key).map(|v| v.map(str::to_string));
    match kind {
        "systemEvent" => Ok(JobSpec::SystemEvent {
            text: text(o, "text")?
                .ok_or(InputError::Missing("spec.text"))?
                .to_string(),
        }),
        "task" | "agentTurn" => Ok(JobSpec::Task {
            message: text(o, "message")?
                .ok_or(InputError::Missing("spec.message"))?
                .to_string(),
            model: opt("model")?,
            thinking: opt("thinking")?,
            timeout_seconds: match o.get("timeoutSeconds") {
                None | Some(Value::Null) => None,
                Some(v) => Some(
                    v.as_u64()
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or(wrong("spec.timeoutSeconds", "a whole number of seconds"))?,
                ),
            },
            deliver: flag(o, "deliver", "spec.deliver")?,
            channel: opt("channel")?,
            to: opt("to")?,
        }),
        other => Err(InputError::UnknownKind {
            field: "spec.kind",
            kind: other.to_string(),
        }),
    }
}

pub(crate) fn first_of<'a>(o: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|k| o.get(*k).filter(|v| !v.is_null()))
}

/// A trimmed non-empty string field (`None` if absent, null or blank).
pub(crate) fn text<'a>(
    o: &'a Map<String, Value>,
    key: &'static str,
) -> Result<Option<&'a str>, InputError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim()).filter(|s| !s.is_empty())),
        Some(_) if key == "at" => Ok(None),
        Some(_) => Err(wrong(key, "a string")),
    }
}

pub(crate) fn flag(
    o: &Map<String, Value>,
    key: &str,
    name: &'static str,
) -> Result<Option<bool>, InputError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(wrong(name, "true or false")),
    }
}

fn number(n: &serde_json::Number, field: &'static str) -> Result<i64, InputError> {
    n.as_i64()
        .or_else(|| {
            n.as_f64()
                .filter(|f| f.abs() < 1e15)
                .map(|f| f.round() as i64)
        })
        .ok_or(wrong(field, "a number of milliseconds"))
}

pub(crate) fn wrong(field: &'static str, expected: &'static str) -> InputError {
    InputError::WrongType { field, expected }
}
