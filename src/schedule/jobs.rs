//! Whole jobs from loose input: `cron.add` / the tool's "add" build one,
//! `cron.update` / "update" patch one. Both recompute `nextRunAtMs` when
//! the schedule or `enabled` changes.

use super::next::first_run;
use super::tool_input::{first_of, flag, normalize_schedule, normalize_spec, text, wrong};
use super::tool_input::{InputContext, InputError};
use super::{resolve_zone, CronJob, JobState, Schedule};
use serde_json::{Map, Value};

/// A name for a job given none: the first line of its text, shortened.
const DERIVED_NAME_CHARS: usize = 40;

/// A new job `id` (the caller's uuid) from `raw` (`{agentId?, name?,
/// description?, enabled?, deleteAfterRun?, schedule, spec}`); `agentId`
/// defaults to `default_agent`, `name` to the start of the spec's text.
pub fn new_job(
    id: &str,
    raw: &Value,
    default_agent: &str,
    cx: &InputContext<'_>,
) -> Result<CronJob, InputError> {
    let o = raw.as_object().ok_or(InputError::NotAnObject("job"))?;
    let schedule = normalize_schedule(
        o.get("schedule").ok_or(InputError::Missing("schedule"))?,
        cx,
    )?;
    let spec = normalize_spec(o.get("spec").ok_or(InputError::Missing("spec"))?)?;
    let name = match text(o, "name")? {
        Some(n) => n.to_string(),
        None => derived_name(&spec),
    };
    let mut job = CronJob {
        id: id.to_string(),
        agent_id: text(o, "agentId")?.unwrap_or(default_agent).to_string(),
        name,
        description: text(o, "description")?.map(str::to_string),
        enabled: flag(o, "enabled", "enabled")?.unwrap_or(true),
        delete_after_run: flag(o, "deleteAfterRun", "deleteAfterRun")?.unwrap_or(false),
        created_at_ms: cx.now_ms,
        updated_at_ms: cx.now_ms,
        schedule,
        spec,
        state: JobState::default(),
        made_by: Default::default(),
    };
    if job.enabled {
        job.state.next_run_at_ms = Some(first(&job.schedule, cx)?);
    }
    Ok(job)
}

/// `job` with `patch` applied (any of the fields of [`new_job`]; a `spec`
/// of the same kind, or without one, merges into the current spec;
/// `description: null` clears it). Disabling clears `nextRunAtMs`;
/// enabling or a new schedule computes it afresh.
pub fn update_job(
    job: &CronJob,
    patch: &Value,
    cx: &InputContext<'_>,
) -> Result<CronJob, InputError> {
    let o = patch.as_object().ok_or(InputError::NotAnObject("patch"))?;
    let mut next = job.clone();
    if let Some(agent) = text(o, "agentId")? {
        next.agent_id = agent.to_string();
    }
    if let Some(name) = text(o, "name")? {
        next.name = name.to_string();
    }
    match o.get("description") {
        Some(Value::Null) => next.description = None,
        Some(_) => next.description = text(o, "description")?.map(str::to_string),
        None => {}
    }
    if let Some(d) = flag(o, "deleteAfterRun", "deleteAfterRun")? {
        next.delete_after_run = d;
    }
    if let Some(spec) = first_of(o, &["spec"]) {
        next.spec = normalize_spec(&merge_spec(job, spec)?)?;
    }
    let mut reschedule = false;
    if let Some(schedule) = first_of(o, &["schedule"]) {
        next.schedule = normalize_schedule(schedule, cx)?;
        reschedule = true;
    }
    if let Some(enabled) = flag(o, "enabled", "enabled")? {
        reschedule |= enabled && !job.enabled;
        next.enabled = enabled;
    }
    if !next.enabled {
        next.state.next_run_at_ms = None;
    } else if reschedule {
        next.state.next_run_at_ms = Some(first(&next.schedule, cx)?);
    }
    next.updated_at_ms = cx.now_ms;
    Ok(next)
}

/// The first run in the schedule's own zone; an error if there is none.
fn first(schedule: &Schedule, cx: &InputContext<'_>) -> Result<i64, InputError> {
    let name = schedule.zone_name(cx.user_zone);
    let tz = resolve_zone(cx.zones, name).ok_or_else(|| InputError::UnknownZone(name.into()))?;
    first_run(schedule, cx.now_ms, tz.as_ref())?.ok_or(InputError::NeverRuns)
}

/// The patch's spec over the current one when the kinds agree.
fn merge_spec(job: &CronJob, patch: &Value) -> Result<Value, InputError> {
    let p = patch.as_object().ok_or(InputError::NotAnObject("spec"))?;
    let current = serde_json::to_value(&job.spec).unwrap_or(Value::Null);
    let current_kind = current.get("kind").and_then(Value::as_str);
    let kind = text(p, "kind")?.or(text(p, "mode")?);
    if kind.is_some() && kind != current_kind {
        return Ok(patch.clone());
    }
    let mut merged: Map<String, Value> = current.as_object().cloned().unwrap_or_default();
    for (k, v) in p {
        if k != "mode" {
            merged.insert(k.clone(), v.clone());
        }
    }
    if !merged.contains_key("kind") {
        return Err(wrong("spec.kind", "systemEvent or task"));
    }
    Ok(Value::Object(merged))
}

fn derived_name(spec: &super::JobSpec) -> String {
    let text = match spec {
        super::JobSpec::SystemEvent { text } => text,
        super::JobSpec::Task { message, .. } => message,
    };
    let line = text.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(DERIVED_NAME_CHARS) {
        Some((cut, _)) => format!("{}…", line[..cut].trim_end()),
        None => line.to_string(),
    }
}
