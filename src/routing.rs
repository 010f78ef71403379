//! Session keys: which session a `chat.send` lands in (reference §3.8).
//! This covers the main key, its aliases and DM collapse under dmScope
//! `main`; channel routing builds on it.

/// `agent:{agentId}:{mainKey}` for the default agent.
pub fn main_session_key(agent_id: &str, main_key: &str) -> String {
    format!("agent:{agent_id}:{main_key}")
}

/// The canonical form of a client-supplied key:
/// - `main` (or the configured main key) → `agent:main:{mainKey}`;
/// - `agent:{id}:main` → `agent:{id}:{mainKey}`;
/// - a DM key (`agent:{id}:…:dm:{peer}`) under dmScope `main` collapses to
///   the agent's main key, so CLI, web and DMs share one conversation;
/// - anything else is kept as given (trimmed).
pub fn canonicalize_session_key(key: &str, main_key: &str, dm_scope: &str) -> String {
    let key = key.trim();
    if key.is_empty() || key == "main" || key == main_key {
        return main_session_key("main", main_key);
    }
    let parts: Vec<&str> = key.split(':').collect();
    if parts.len() >= 3 && parts[0] == "agent" && !parts[1].is_empty() {
        let agent = parts[1].to_ascii_lowercase();
        let rest = &parts[2..];
        if rest == ["main"] || rest == [main_key] {
            return main_session_key(&agent, main_key);
        }
        let is_dm = rest.len() >= 2 && rest.contains(&"dm");
        if is_dm && dm_scope == "main" {
            return main_session_key(&agent, main_key);
        }
    }
    key.to_string()
}

/// The agent a canonical key belongs to (`main` when it names none).
pub fn agent_id_of(key: &str) -> &str {
    match key.split(':').collect::<Vec<_>>().as_slice() {
        ["agent", id, _, ..] if !id.is_empty() => id,
        _ => "main",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn main_aliases() {
        assert_eq!(
            canonicalize_session_key("main", "main", "main"),
            "agent:main:main"
        );
        assert_eq!(
            canonicalize_session_key("", "main", "main"),
            "agent:main:main"
        );
        assert_eq!(
            canonicalize_session_key("home", "home", "main"),
            "agent:main:home"
        );
        assert_eq!(
            canonicalize_session_key("agent:main:main", "home", "main"),
            "agent:main:home"
        );
        assert_eq!(
            canonicalize_session_key("agent:Work:main", "main", "main"),
            "agent:work:main"
        );
    }

    #[test]
    fn dm_keys_collapse_under_main_scope_only() {
        assert_eq!(
            canonicalize_session_key("agent:main:cli:dm:main", "main", "main"),
            "agent:main:main"
        );
        assert_eq!(
            canonicalize_session_key("agent:main:web:dm:local", "main", "main"),
            "agent:main:main"
        );
        assert_eq!(
            canonicalize_session_key("agent:main:cli:dm:main", "main", "per-channel-peer"),
            "agent:main:cli:dm:main"
        );
        assert_eq!(
            canonicalize_session_key("agent:main:discord:group:123", "main", "main"),
            "agent:main:discord:group:123"
        );
        assert_eq!(
            canonicalize_session_key("scratch", "main", "main"),
            "scratch"
        );
    }

    #[test]
    fn agent_ids() {
        assert_eq!(agent_id_of("agent:work:main"), "work");
        assert_eq!(agent_id_of("scratch"), "main");
    }
}
