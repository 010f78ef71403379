//! Heartbeats in the Gateway: per agent, every `every`, the agent reads
//! HEARTBEAT.md in the session `agent:{id}:heartbeat:system:internal` and
//! says something only if something needs saying. Whether a beat runs and
//! what of its answer reaches the user are `crate::schedule::heartbeat`'s
//! decisions; the state per agent is a row of `heartbeats`.

use super::super::channel_plane::ChatTarget;
use super::agent_runs::{AgentTurn, RunEnd, KIND_HEARTBEAT};
use super::cron::zones;
use super::Gateway;
use crate::commands::parse_model_selector;
use crate::schedule::heartbeat::{
    check, decide_delivery, heartbeat_config, next_beat, BeatCheck, Delivery, HeartbeatConfig,
    LastDelivery, Suppressed,
};
use crate::schedule::resolve_zone;
use crate::time::Utc;
use crate::worker::rpc::{internal_error, now_ms};
use crate::worker::workspace::rpc as workspace_rpc;
use gsv_protocol::cron::*;
use gsv_protocol::{codes, ChatDirectives, ErrorShape, WorkspaceReadParams};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

/// A beat's run may take this long before it is stopped.
const BEAT_TIMEOUT_MS: i64 = 10 * 60_000;

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BeatWork {
    run_id: String,
    target: Option<ChatTarget>,
}

use crate::schedule::heartbeat::light::heartbeat_session_key as heartbeat_session;

impl Gateway {
    /// The agents with heartbeats: `agents.list`, else the default agent.
    pub(super) fn beat_agents(&self) -> Vec<String> {
        let routing = self.routing.borrow();
        match routing.agents.is_empty() {
            true => vec![routing.default_agent_id.clone()],
            false => routing.agents.iter().map(|a| a.id.clone()).collect(),
        }
    }

    fn beat_config(&self, agent: &str) -> Res<HeartbeatConfig> {
        let config = self.config.borrow();
        heartbeat_config(config.effective().get("agents"), agent)
            .map_err(|e| ErrorShape::new(codes::BAD_REQUEST, e.to_string()))
    }

    fn beat_state(&self, agent: &str) -> Res<HeartbeatState> {
        Ok(match self.schedule_store().heartbeat(agent)? {
            Some((state, _)) => state,
            None => HeartbeatState {
                agent_id: agent.to_string(),
                ..Default::default()
            },
        })
    }

    /// Brings the state in line with the config: new agents get their
    /// first beat, disabled ones none, removed ones are forgotten;
    /// `restart` recomputes every next beat from now.
    pub(super) fn heartbeat_sync(&self, now: i64) {
        if let Err(e) = self.sync_beats(now, false) {
            console_error!("gateway: scheduling heartbeats failed: {}", e.message);
        }
    }

    fn sync_beats(&self, now: i64, restart: bool) -> Res<()> {
        let store = self.schedule_store();
        let agents = self.beat_agents();
        for agent in &agents {
            let mut state = self.beat_state(agent)?;
            let before = state.clone();
            let every = self.beat_config(agent).map_or(0, |c| c.every_ms);
            state.every_ms = Some(every);
            if every <= 0 {
                state.next_heartbeat_at = None;
            } else if restart || state.next_heartbeat_at.is_none() || before.every_ms != Some(every)
            {
                state.next_heartbeat_at = Some(now + every);
            }
            if state != before || store.heartbeat(agent)?.is_none() {
                store.save_heartbeat(&state)?;
            }
        }
        store.forget_heartbeats_except(&agents)
    }

    fn beat_states(&self) -> Res<BTreeMap<String, HeartbeatState>> {
        let mut agents = BTreeMap::new();
        for mut state in self.schedule_store().heartbeat_agents()? {
            state.last_active = self.last_chat(&state.agent_id).map(|t| t.label());
            agents.insert(state.agent_id.clone(), state);
        }
        Ok(agents)
    }

    pub(in crate::worker::gateway_do) fn heartbeat_status(&self) -> Res<HeartbeatStatusResult> {
        self.sync_beats(self.sched_now(), false)?;
        Ok(HeartbeatStatusResult {
            agents: self.beat_states()?,
        })
    }

    pub(in crate::worker::gateway_do) async fn heartbeat_start(&self) -> Res<HeartbeatStartResult> {
        self.sync_beats(self.sched_now(), true)?;
        self.schedule_alarm().await;
        Ok(HeartbeatStartResult {
            message: "Heartbeat scheduler started".into(),
            agents: self.beat_states()?,
        })
    }

    /// `heartbeat.trigger`: a beat now, whatever the checks would say.
    pub(in crate::worker::gateway_do) async fn heartbeat_trigger(
        &self,
        p: HeartbeatTriggerParams,
    ) -> Res<HeartbeatTriggerResult> {
        let agent = p
            .agent_id
            .unwrap_or_else(|| self.routing.borrow().default_agent_id.clone());
        let result = self.beat(&agent, true, self.sched_now()).await;
        self.schedule_alarm().await;
        result
    }

    /// The alarm's share: the beats that are due.
    pub(super) async fn heartbeat_alarm(&self, now: i64) {
        let due: Vec<String> = match self.schedule_store().heartbeat_agents() {
            Ok(states) => states
                .into_iter()
                .filter(|s| s.next_heartbeat_at.is_some_and(|t| t <= now))
                .map(|s| s.agent_id)
                .collect(),
            Err(e) => return console_error!("gateway: reading heartbeats: {}", e.message),
        };
        for agent in due {
            if let Err(e) = self.beat(&agent, false, now).await {
                console_error!("gateway: heartbeat of {agent} failed: {}", e.message);
            }
        }
    }

    async fn beat(&self, agent: &str, manual: bool, now: i64) -> Res<HeartbeatTriggerResult> {
        let store = self.schedule_store();
        let config = self.beat_config(agent)?;
        let mut state = self.beat_state(agent)?;
        state.every_ms = Some(config.every_ms);
        if !manual {
            state.next_heartbeat_at = next_beat(&config, now);
        }
        let user_zone = self.user_zone();
        let zone = config
            .active_hours
            .as_ref()
            .map_or(user_zone.as_str(), |h| h.zone_name(&user_zone));
        let tz = resolve_zone(&zones(), zone).unwrap_or_else(|| Box::new(Utc));
        let md = self.heartbeat_md(agent).await?;
        let verdict = check(&BeatCheck {
            config: &config,
            manual,
            now_ms: now,
            tz: tz.as_ref(),
            heartbeat_md: md.as_deref(),
            session_busy: store.agent_run_for(KIND_HEARTBEAT, agent)?
                || self.chat_replying(agent, now_ms() - BEAT_TIMEOUT_MS)?,
        });
        if let Err(reason) = verdict {
            state.last_status = Some(RunStatus::Skipped);
            state.last_skip_reason = Some(reason.to_string());
            store.save_heartbeat(&state)?;
            return Ok(HeartbeatTriggerResult {
                ok: true,
                message: format!("Heartbeat skipped: {reason}"),
                skipped: Some(true),
                skip_reason: Some(reason.to_string()),
                run_id: None,
            });
        }
        let last = self.last_chat(agent);
        let target = last.filter(|t| config.target.delivers_to(Some(&t.channel)));
        let run_id = format!("heartbeat:{agent}:{now}");
        let work = serde_json::to_value(BeatWork {
            run_id: run_id.clone(),
            target,
        })
        .map_err(internal_error)?;
        state.last_heartbeat_at = Some(now);
        state.last_status = Some(RunStatus::Running);
        state.last_skip_reason = None;
        state.last_error = None;
        store.save_heartbeat(&state)?;
        let directives = config.model.as_deref().and_then(|m| {
            let provider = self
                .config
                .borrow()
                .str_at("model.provider")
                .unwrap_or("anthropic")
                .to_string();
            parse_model_selector(m).ok().map(|s| ChatDirectives {
                model: Some(s.resolve(&provider)),
                thinking_level: None,
            })
        });
        let session_key = heartbeat_session(agent);
        let turn = AgentTurn {
            kind: KIND_HEARTBEAT,
            ref_id: agent,
            session_key: &session_key,
            chat_run_id: &run_id,
            message: config.prompt.clone(),
            directives,
            timeout_ms: BEAT_TIMEOUT_MS,
            work: &work,
            // The config makes heartbeats: the owner's.
            trust: gsv_protocol::Trust::system(gsv_protocol::Trust::OWNER),
        };
        if let Some(answer) = self.start_agent_turn(turn).await? {
            self.heartbeat_ended(agent, &work, RunEnd::Answered(answer))
                .await?;
        }
        Ok(HeartbeatTriggerResult {
            ok: true,
            message: "Heartbeat started".into(),
            skipped: None,
            skip_reason: None,
            run_id: Some(run_id),
        })
    }

    /// HEARTBEAT.md's text, `None` when there is none.
    async fn heartbeat_md(&self, agent: &str) -> Res<Option<String>> {
        let (bucket, agent) = self.workspace(Some(agent))?;
        let p = WorkspaceReadParams {
            path: "HEARTBEAT.md".into(),
            agent_id: None,
        };
        match workspace_rpc::read(&bucket, &agent, p).await {
            Ok(r) => Ok(Some(r.content)),
            Err(e) if e.code == codes::NOT_FOUND => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A beat's run ended: its answer is delivered unless it is only the
    /// acknowledgement, empty, or said within the last 24 hours.
    pub(super) async fn heartbeat_ended(&self, agent: &str, work: &Value, end: RunEnd) -> Res<()> {
        let work: BeatWork = serde_json::from_value(work.clone()).map_err(internal_error)?;
        let store = self.schedule_store();
        let (mut state, last) = match store.heartbeat(agent)? {
            Some((state, last)) => (state, last),
            None => return Ok(()),
        };
        let now = self.sched_now();
        match end {
            RunEnd::Failed(error) => {
                state.last_status = Some(RunStatus::Error);
                state.last_error = Some(error);
            }
            RunEnd::Answered(answer) => {
                state.last_status = Some(RunStatus::Ok);
                let last: Option<LastDelivery> = last.and_then(|l| serde_json::from_str(&l).ok());
                state.last_outcome = Some(match decide_delivery(&answer, last.as_ref(), now) {
                    Delivery::Suppress(Suppressed::Ack) => "ack".into(),
                    Delivery::Suppress(Suppressed::Empty) => "empty".into(),
                    Delivery::Suppress(Suppressed::Duplicate) => "duplicate".into(),
                    Delivery::Deliver(text) => match &work.target {
                        None => "noTarget".into(),
                        Some(target) => match self.deliver_to(target, &work.run_id, &text).await {
                            Some(failed) => {
                                state.last_error = Some(failed);
                                "failed".into()
                            }
                            None => {
                                let sent = LastDelivery { text, at_ms: now };
                                let sent = serde_json::to_string(&sent).map_err(internal_error)?;
                                store.save_last_delivery(agent, &sent)?;
                                "delivered".into()
                            }
                        },
                    },
                });
            }
        }
        store.save_heartbeat(&state)
    }
}
