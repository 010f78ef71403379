//! `gsv__Cron` in the Gateway: the same actions as the `cron.*` methods,
//! acting for the calling agent, each answer carrying what a model needs
//! to talk about time: the schedule and next run in words, the current
//! time and the user's zone.

use super::Gateway;
use crate::schedule::human;
use crate::schedule::tool::{add_fields, CronToolReply, CronToolRequest};
use gsv_protocol::cron::*;
use gsv_protocol::{codes, ErrorShape};
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

type Res<T> = std::result::Result<T, ErrorShape>;

fn params<T: DeserializeOwned>(args: &Value) -> Res<T> {
    serde_json::from_value(args.clone())
        .map_err(|e| ErrorShape::new(codes::BAD_REQUEST, e.to_string()))
}

fn id_of(args: &Value) -> Res<String> {
    args.get("id")
        .or_else(|| args.get("jobId"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| ErrorShape::new(codes::BAD_REQUEST, "id is required"))
}

impl Gateway {
    pub(in crate::worker::gateway_do) async fn cron_tool(
        &self,
        r: CronToolRequest,
    ) -> Res<CronToolReply> {
        let args = &r.args;
        let action = args.get("action").and_then(Value::as_str).unwrap_or("");
        // Below the owner, a conversation sees and changes only its own jobs.
        let owner = r.trust.is_owner();
        if !owner && matches!(action, "update" | "remove" | "run" | "runs") {
            self.own_job(&r, &id_of(args)?)?;
        }
        let mut result = match action {
            "status" => serde_json::to_value(self.cron_status()?),
            "list" => {
                let mut p: CronListParams = params(args)?;
                p.agent_id = p.agent_id.or(Some(r.agent_id.clone()));
                let mut list = self.cron_list(p)?;
                if !owner {
                    list.jobs
                        .retain(|j| j.job.made_by.session_key.as_deref() == Some(&r.session_key));
                    list.count = list.jobs.len() as u64;
                }
                serde_json::to_value(list)
            }
            "add" => {
                let mut fields = add_fields(args);
                if let Some(o) = fields.as_object_mut() {
                    if !owner {
                        o.remove("agentId");
                    }
                    o.entry("agentId").or_insert(json!(r.agent_id));
                }
                let p: CronAddParams = params(&fields)?;
                let made_by = JobMaker {
                    // A job runs as `system`, acting at its maker's level.
                    trust: gsv_protocol::Trust::of(r.trust.acts_as),
                    session_key: Some(r.session_key.clone()),
                    chat: self.chat_of_session(&r.session_key)?,
                };
                let job = self.cron_add(p, made_by)?.job;
                self.schedule_alarm().await;
                Ok(self.job_answer(job))
            }
            "update" => {
                let p = CronUpdateParams {
                    id: id_of(args)?,
                    patch: args.get("patch").cloned().unwrap_or(Value::Object(Map::new())),
                };
                let job = self.cron_update(p)?.job;
                self.schedule_alarm().await;
                Ok(self.job_answer(job))
            }
            "remove" => {
                let r = self.cron_remove(CronIdParams { id: id_of(args)? })?;
                self.schedule_alarm().await;
                serde_json::to_value(r)
            }
            "run" => {
                let p = CronRunParams {
                    id: id_of(args).ok(),
                    mode: params::<CronRunParams>(args)?.mode.or(Some(CronRunMode::Force)),
                };
                serde_json::to_value(self.cron_run(p).await?)
            }
            "runs" => {
                let mut p: CronRunsParams = params(args)?;
                if !owner {
                    p.job_id = Some(id_of(args)?);
                }
                serde_json::to_value(self.cron_runs(p)?)
            }
            other => {
                return Err(ErrorShape::new(
                    codes::BAD_REQUEST,
                    format!(
                        "unknown action \"{other}\": use status, list, add, update, remove, run or runs"
                    ),
                ))
            }
        }
        .map_err(crate::worker::rpc::internal_error)?;
        if let Some(o) = result.as_object_mut() {
            let zone = self.user_zone();
            let tz = self.zone_of(&zone);
            o.insert(
                "currentTime".into(),
                human::current_time(tz.as_ref(), &zone, self.sched_now()).into(),
            );
            o.insert("timezone".into(), zone.into());
        }
        Ok(CronToolReply { result })
    }

    /// Job `id`, when the asking session made it; else as if there were
    /// no such job (a person or group learns nothing of others' jobs).
    fn own_job(&self, r: &CronToolRequest, id: &str) -> Res<CronJob> {
        self.schedule_store()
            .job(id)?
            .filter(|j| j.made_by.session_key.as_deref() == Some(&r.session_key))
            .ok_or_else(|| {
                ErrorShape::new(
                    codes::NOT_FOUND,
                    format!("no job {id} made in this conversation"),
                )
            })
    }

    /// A job with its schedule and next run in words.
    fn job_answer(&self, job: CronJob) -> Value {
        let zone = self.user_zone();
        let own = job.schedule.zone_name(&zone).to_string();
        let sched = human::schedule_human(&job.schedule, self.zone_of(&own).as_ref(), &own);
        let next = human::next_run_human(
            job.state.next_run_at_ms,
            self.zone_of(&zone).as_ref(),
            self.sched_now(),
        );
        json!({"ok": true, "job": job, "scheduleHuman": sched, "nextRunHuman": next})
    }
}
