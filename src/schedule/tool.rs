//! `gsv__Cron`: the agent schedules on its own ("remind me tomorrow at
//! 9"). The tool runs in the Session and is executed by the Gateway,
//! which owns the jobs (`CronToolRequest` on an internal path); the
//! schedule is normalized from loose input ([`super::tool_input`]) and the
//! answer worded for the model ([`super::human`]).

use gsv_protocol::ToolDefinition;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const CRON_TOOL: &str = "gsv__Cron";

pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: CRON_TOOL.into(),
        description: "Schedule things: reminders, recurring tasks, one-off jobs. Times are in \
            the user's time zone unless you give one. action=add with schedule \
            {kind:\"at\", in:\"20 minutes\"} or {kind:\"at\", at:\"tomorrow 9am\"} or \
            {kind:\"every\", everyMinutes:30} or {kind:\"cron\", expr:\"0 9 * * 1-5\"}, and spec \
            {kind:\"systemEvent\", text} (a note to yourself in this conversation: use it for \
            reminders) or {kind:\"task\", message} (a separate run whose answer is delivered to \
            the user's last chat). Other actions: list, status, update {id, patch}, remove {id}, \
            run {id}, runs {jobId}. Answers say when jobs run next, in words."
            .into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["status", "list", "add", "update", "remove", "run", "runs"]},
                "name": {"type": "string"},
                "description": {"type": "string"},
                "schedule": {"type": "object", "description": "kind: at | every | cron, with the fields above"},
                "spec": {"type": "object", "description": "kind: systemEvent {text} | task {message, model?, thinking?, timeoutSeconds?, deliver?, channel?, to?}"},
                "deleteAfterRun": {"type": "boolean"},
                "enabled": {"type": "boolean"},
                "job": {"type": "object", "description": "for add: the job's fields, instead of giving them at the top level"},
                "id": {"type": "string", "description": "the job, for update, remove, run"},
                "patch": {"type": "object", "description": "for update: the fields to change"},
                "mode": {"type": "string", "enum": ["due", "force"]},
                "jobId": {"type": "string", "description": "for runs"},
                "agentId": {"type": "string"},
                "includeDisabled": {"type": "boolean"},
                "limit": {"type": "integer"},
                "offset": {"type": "integer"}
            },
            "required": ["action"]
        }),
    }
}

/// Session → Gateway: one `gsv__Cron` call of `agent_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CronToolRequest {
    pub agent_id: String,
    pub args: Value,
    /// The asking run's trust: below the owner's, it sees and changes
    /// only the jobs made in its own session, and makes jobs that run at
    /// its level.
    #[serde(default)]
    pub trust: gsv_protocol::Trust,
    /// The asking session.
    #[serde(default)]
    pub session_key: String,
}

/// The action's answer, as the model reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CronToolReply {
    pub result: Value,
}

/// For `add`: the job's fields, from `job` or from the top level.
pub fn add_fields(args: &Value) -> Value {
    match args.get("job") {
        Some(job @ Value::Object(_)) => job.clone(),
        _ => {
            let mut o = args.as_object().cloned().unwrap_or_default();
            o.remove("action");
            Value::Object(o)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_reads_job_or_top_level_fields() {
        let nested = json!({"action": "add", "job": {"name": "a", "schedule": {"kind": "at"}}});
        assert_eq!(
            add_fields(&nested),
            json!({"name": "a", "schedule": {"kind": "at"}})
        );
        let flat = json!({"action": "add", "name": "b", "spec": {"text": "x"}});
        assert_eq!(
            add_fields(&flat),
            json!({"name": "b", "spec": {"text": "x"}})
        );
    }
}
