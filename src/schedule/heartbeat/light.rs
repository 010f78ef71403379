//! A heartbeat's light context: its runs read SOUL.md, IDENTITY.md,
//! HEARTBEAT.md and today's memory only (no USER/AGENTS/TOOLS/MEMORY, no
//! yesterday, no skills list), so a beat every 30 minutes costs a fraction
//! of a conversation's prompt. On unless `lightContext: false`.
//!
//! The Session tells a beat by its key (`agent:{id}:heartbeat:system:internal`,
//! the only session beats run in) and reads the setting from the config
//! that rides with every message: no flag needs to be carried with the
//! message through the queue and the stored run.

use super::heartbeat_config;
use crate::config::Config;
use crate::prompt::Workspace;
use crate::routing::agent_id_of;

/// The session heartbeats of `agent_id` run in.
pub fn heartbeat_session_key(agent_id: &str) -> String {
    format!("agent:{agent_id}:heartbeat:system:internal")
}

/// Whether a run of `session_key` gets the light context.
pub fn is_light(session_key: &str, config: &Config) -> bool {
    let agent = agent_id_of(session_key);
    session_key == heartbeat_session_key(&agent)
        && heartbeat_config(config.effective().get("agents"), &agent)
            .map_or(true, |c| c.light_context)
}

/// `ws` with only what a beat reads.
pub fn light(ws: Workspace) -> Workspace {
    Workspace {
        soul: ws.soul,
        identity: ws.identity,
        heartbeat: ws.heartbeat,
        today: ws.today,
        ..Workspace::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::DailyMemory;
    use serde_json::json;

    #[test]
    fn only_the_heartbeat_session_and_only_unless_turned_off() {
        let on = Config::default();
        let off = Config::from_overrides(
            json!({"agents": {"defaultHeartbeat": {"lightContext": false}}}),
        );
        let key = "agent:main:heartbeat:system:internal";
        assert_eq!(
            [
                is_light(key, &on),
                is_light(key, &off),
                is_light("agent:main:main", &on)
            ],
            [true, false, false]
        );
    }

    #[test]
    fn keeps_soul_identity_heartbeat_and_today() {
        let day = |d: &str| DailyMemory {
            date: d.into(),
            content: d.into(),
        };
        let full = Workspace {
            soul: Some("soul".into()),
            identity: Some("id".into()),
            user: Some("user".into()),
            agents: Some("agents".into()),
            memory: Some("memory".into()),
            tools: Some("tools".into()),
            heartbeat: Some("beat".into()),
            bootstrap: None,
            yesterday: Some(day("2026-11-23")),
            today: Some(day("2026-11-24")),
            skills: vec![],
            ineligible_skills: 3,
        };
        assert_eq!(
            light(full),
            Workspace {
                soul: Some("soul".into()),
                identity: Some("id".into()),
                heartbeat: Some("beat".into()),
                today: Some(day("2026-11-24")),
                ..Workspace::default()
            }
        );
    }
}
