//! `trust.explain` and the audit log, over plain values: who lands in a
//! session and by which rule, the level a session without a message yet
//! would run at, the verdict on each tool, the settings that widen what
//! other people may do, and the digest that records a call's arguments
//! without keeping them.

use super::policy::ToolPolicy;
use crate::config::Config;
use crate::routing::{agent_id_of, is_main_session_key, parse_session_key, RoutingConfig};
use gsv_protocol::{ToolVerdict, Trust, TrustLevel};
use sha2::{Digest, Sha256};

/// Who lands in session `key`, and by which rule.
pub fn landing(routing: &RoutingConfig, key: &str) -> String {
    if is_main_session_key(key, routing) {
        let mut who = vec![
            "the gateway's own clients (CLI, web)".to_string(),
            "the owner's chat identities (owner.identities)".to_string(),
        ];
        if !routing.share_main_with.is_empty() {
            who.push(format!(
                "the people in session.shareMainWith ({})",
                routing.share_main_with.join(", ")
            ));
        }
        return format!("the agent's main session: {}", who.join(", "));
    }
    let parts: Vec<&str> = key.split(':').collect();
    match parts.as_slice() {
        ["agent", _, "cron", id] => {
            return format!("cron job {id}'s own session: its turns, at its maker's level")
        }
        ["agent", _, "heartbeat", ..] => {
            return "the heartbeat's session: the owner's, made by the config".into()
        }
        _ => {}
    }
    match parse_session_key(key) {
        Some(p) if p.peer.kind == "dm" => {
            let on = p.channel.as_deref().unwrap_or("any channel");
            format!(
                "DMs from {} on {on}: a session of their own, since only the owner and session.shareMainWith land in main (session.dmScope {})",
                p.peer.id,
                routing.dm_scope.as_str()
            )
        }
        Some(p) => format!(
            "the {} {} on {}: everyone in it, at level group",
            p.peer.kind,
            p.peer.id,
            p.channel.as_deref().unwrap_or("a channel")
        ),
        None => "a session named by a client: the gateway's clients (the owner)".into(),
    }
}

/// The level a session's turns run at when it has had no message to
/// say so: its kind's.
pub fn inferred_trust(routing: &RoutingConfig, key: &str) -> Trust {
    if is_main_session_key(key, routing) {
        return Trust::OWNER;
    }
    let parts: Vec<&str> = key.split(':').collect();
    if let ["agent", _, "heartbeat", ..] = parts.as_slice() {
        return Trust::system(Trust::OWNER);
    }
    match parse_session_key(key) {
        Some(p) if p.peer.kind == "dm" => {
            match routing.is_owner(p.channel.as_deref(), &p.peer.id) {
                true => Trust::OWNER,
                false => Trust::APPROVED,
            }
        }
        Some(_) => Trust::GROUP,
        // Keys clients make up (`scratch`): only clients reach them.
        None if !key.starts_with("agent:") => Trust::OWNER,
        None => Trust::GROUP,
    }
}

/// Each of `tools` under the policy of `trust` for session `key`'s agent.
pub fn verdicts(config: &Config, key: &str, trust: Trust, tools: &[String]) -> Vec<ToolVerdict> {
    let policy = ToolPolicy::for_level(config, &agent_id_of(key), trust.acts_as);
    tools
        .iter()
        .map(|name| {
            let d = policy.decide(name);
            ToolVerdict {
                name: name.clone(),
                allowed: d.allowed,
                ask: d.ask,
                rule: d.rule,
            }
        })
        .collect()
}

/// Settings that let people other than the owner do more than the
/// defaults allow: other people in the main session, and node,
/// workspace-write, config or cross-session tools below the owner.
pub fn warnings(config: &Config, routing: &RoutingConfig) -> Vec<String> {
    let mut out = Vec::new();
    if !routing.share_main_with.is_empty() {
        out.push(format!(
            "session.shareMainWith puts other people in your main session ({}): they read MEMORY.md and your conversation there, at level approved",
            routing.share_main_with.join(", ")
        ));
    }
    let risky = [
        ("a node tool", "laptop__Bash"),
        ("workspace writes", "gsv__WriteFile"),
        ("the config", "gsv__ConfigGet"),
        ("other sessions", "gsv__SessionSend"),
    ];
    for level in [TrustLevel::Approved, TrustLevel::Group] {
        let agents = agent_ids(config);
        for agent in &agents {
            let policy = ToolPolicy::for_level(config, agent, level);
            for (what, example) in risky {
                let d = policy.decide(example);
                if d.allowed {
                    out.push(format!(
                        "level {} may use {what} (agent {agent}, {example}: {})",
                        level.as_str(),
                        d.rule
                    ));
                }
            }
        }
    }
    out
}

fn agent_ids(config: &Config) -> Vec<String> {
    let mut ids = vec![crate::routing::DEFAULT_AGENT_ID.to_string()];
    for a in config
        .raw("agents.list")
        .and_then(|l| l.as_array())
        .into_iter()
        .flatten()
    {
        if let Some(id) = a.get("id").and_then(|i| i.as_str()) {
            if !ids.iter().any(|i| i == id) {
                ids.push(id.to_string());
            }
        }
    }
    ids
}

/// The first 16 hex digits of SHA-256 over a call's arguments as sent.
pub fn args_digest(args: &str) -> String {
    let hash = Sha256::digest(args.as_bytes());
    hash.iter().take(8).map(|b| format!("{b:02x}")).collect()
}
