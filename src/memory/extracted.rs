//! What compaction's and a reset's memory extraction found, as memory
//! nodes: each bullet tagged with its category (`- [preferences] …`)
//! becomes one node, about the session's person for what describes a
//! person, the agent's own for what it learnt (cases, patterns, skills).

use super::calls::OWNER;
use super::node::MAX_ABSTRACT;
use super::uri::{slugify, Category};
use crate::routing::{is_main_session_key, parse_session_key, RoutingConfig};
use gsv_protocol::{MemoryPutParams, MemoryScope};

/// What the extraction prompts ask each bullet to start with.
pub const CATEGORY_HINT: &str = "Start each bullet with its category in brackets: [profile] (who the person is), \
[preferences], [entities] (people, places, things), [events], [cases] (problems and how they were solved) or [patterns] (what tends to work).";

/// Longest slug made from a bullet (the rest of the text is in the node).
const SLUG_CHARS: usize = 60;

/// The bullets that name a category, with it.
pub fn categorized(bullets: &str) -> Vec<(Category, String)> {
    bullets
        .lines()
        .filter_map(|l| {
            let rest = l
                .trim()
                .strip_prefix("- ")?
                .trim_start()
                .strip_prefix('[')?;
            let (cat, text) = rest.split_once(']')?;
            let category = Category::parse(cat.trim().to_ascii_lowercase().as_str()).ok()?;
            let text = text.trim();
            (!text.is_empty()).then(|| (category, text.to_string()))
        })
        .collect()
}

/// The nodes to write for `bullets`; `source` (`compaction`, `reset`)
/// becomes a tag.
pub fn extracted_puts(bullets: &str, source: &str) -> Vec<MemoryPutParams> {
    categorized(bullets)
        .into_iter()
        .filter_map(|(category, text)| {
            let slug: String = slugify(&text)?.chars().take(SLUG_CHARS).collect();
            let space = match category {
                Category::Cases | Category::Patterns | Category::Skills => MemoryScope::Agent,
                _ => MemoryScope::User,
            };
            Some(MemoryPutParams {
                category: category.as_str().into(),
                slug: Some(slug.trim_end_matches('_').to_string()),
                abstract_text: Some(text.chars().take(MAX_ABSTRACT).collect()),
                content: text,
                tags: vec![source.to_string()],
                space: Some(space),
                ..Default::default()
            })
        })
        .collect()
}

/// The person a session's conversation is with, as memory knows people:
/// the owner in the main session, the peer of a direct-message session
/// (`channel:id`, or the name identity links gave it), nobody in a group.
pub fn session_person(session_key: &str, routing: &RoutingConfig) -> Option<String> {
    if is_main_session_key(session_key, routing) {
        return Some(OWNER.into());
    }
    let parsed = parse_session_key(session_key)?;
    if parsed.peer.kind != "dm" {
        return None;
    }
    Some(match parsed.channel {
        Some(ch)
            if !routing
                .identity_links
                .iter()
                .any(|l| l.canonical == parsed.peer.id) =>
        {
            format!("{ch}:{}", parsed.peer.id)
        }
        _ => parsed.peer.id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use serde_json::json;

    #[test]
    fn tagged_bullets_become_nodes_in_the_right_space() {
        let bullets = "- [preferences] Alice takes her coffee black\n- untagged fact\n- [moods] bad tag\n- [Cases] Deploys need the VPN up first";
        let puts = extracted_puts(bullets, "reset");
        assert_eq!(
            puts,
            vec![
                MemoryPutParams {
                    category: "preferences".into(),
                    slug: Some("alice_takes_her_coffee_black".into()),
                    content: "Alice takes her coffee black".into(),
                    abstract_text: Some("Alice takes her coffee black".into()),
                    tags: vec!["reset".into()],
                    space: Some(MemoryScope::User),
                    ..Default::default()
                },
                MemoryPutParams {
                    category: "cases".into(),
                    slug: Some("deploys_need_the_vpn_up_first".into()),
                    content: "Deploys need the VPN up first".into(),
                    abstract_text: Some("Deploys need the VPN up first".into()),
                    tags: vec!["reset".into()],
                    space: Some(MemoryScope::Agent),
                    ..Default::default()
                },
            ]
        );
    }

    #[test]
    fn a_sessions_person_is_the_owner_the_dm_peer_or_nobody() {
        let cfg = RoutingConfig::from_config(&Config::from_overrides(json!({
            "session": {"dmScope": "per-channel-peer", "identityLinks": {"steve": ["discord:81234"]}}
        })));
        assert_eq!(
            session_person("agent:main:main", &cfg).as_deref(),
            Some("owner")
        );
        assert_eq!(
            session_person("agent:main:discord:dm:999", &cfg).as_deref(),
            Some("discord:999")
        );
        assert_eq!(
            session_person("agent:main:discord:dm:steve", &cfg).as_deref(),
            Some("steve")
        );
        assert_eq!(session_person("agent:main:discord:group:123", &cfg), None);
    }
}
