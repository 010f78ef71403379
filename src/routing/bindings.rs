//! Agent bindings (`agents.bindings`): which agent answers an inbound
//! message. First match wins; without a match the default agent does.

use super::identity::normalize_e164;
use super::normalize::{
    normalize_account_id, normalize_agent_id, normalize_channel, normalize_peer_id,
    normalize_peer_kind,
};
use serde_json::Value;

/// One `agents.bindings` entry, normalized. `None` fields match anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentBinding {
    pub agent_id: String,
    pub channel: Option<String>,
    pub account_id: Option<String>,
    pub peer_kind: Option<String>,
    pub peer_id: Option<String>,
}

/// One `agents.list` entry as far as routing cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentEntry {
    pub id: String,
    pub default: bool,
}

/// Where an inbound message comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inbound<'a> {
    pub channel: &'a str,
    pub account_id: Option<&'a str>,
    pub peer_kind: &'a str,
    pub peer_id: &'a str,
}

impl AgentBinding {
    /// Parses `{agentId, match:{channel?, accountId?, peer?:{kind?, id?}}}`;
    /// `None` when `agentId` is missing or not a string.
    pub fn from_json(v: &Value) -> Option<Self> {
        let agent_id = normalize_agent_id(v.get("agentId")?.as_str()?);
        let m = v.get("match");
        let field = |path: &[&str]| -> Option<&str> {
            path.iter()
                .try_fold(m?, |v, seg| v.get(seg))?
                .as_str()
                .filter(|s| !s.trim().is_empty())
        };
        Some(Self {
            agent_id,
            channel: field(&["channel"]).map(normalize_channel),
            account_id: field(&["accountId"]).map(normalize_account_id),
            peer_kind: field(&["peer", "kind"]).map(normalize_peer_kind),
            peer_id: field(&["peer", "id"]).map(|s| s.trim().to_string()),
        })
    }

    /// Whether every field the binding sets matches. A peer id matches the
    /// sender's id or its identity-link canonical name, as a peer id, or —
    /// when the binding's id starts with `+` — as an E.164 number.
    pub fn matches(&self, inbound: &Inbound, linked_identity: Option<&str>) -> bool {
        let eq = |want: &Option<String>, got: String| want.as_ref().is_none_or(|w| *w == got);
        eq(&self.channel, normalize_channel(inbound.channel))
            && eq(
                &self.account_id,
                normalize_account_id(inbound.account_id.unwrap_or("")),
            )
            && eq(&self.peer_kind, normalize_peer_kind(inbound.peer_kind))
            && self.peer_id.as_ref().is_none_or(|want| {
                let token = normalize_peer_id(want);
                let phone = want.starts_with('+').then(|| normalize_e164(want));
                std::iter::once(inbound.peer_id)
                    .chain(linked_identity)
                    .any(|id| {
                        normalize_peer_id(id) == token
                            || phone.as_ref().is_some_and(|p| normalize_e164(id) == *p)
                    })
            })
    }
}

impl AgentEntry {
    /// Parses `{id, default?}`; `None` without a string `id`.
    pub fn from_json(v: &Value) -> Option<Self> {
        Some(Self {
            id: normalize_agent_id(v.get("id")?.as_str()?),
            default: v.get("default").and_then(Value::as_bool).unwrap_or(false),
        })
    }
}

/// The default agent: the first `agents.list` entry marked `default`, else
/// `main`.
pub fn default_agent_id(agents: &[AgentEntry]) -> String {
    agents
        .iter()
        .find(|a| a.default)
        .map(|a| a.id.clone())
        .unwrap_or_else(|| normalize_agent_id(""))
}

/// The agent for `inbound` and the index of the binding that chose it.
pub fn resolve_agent(
    bindings: &[AgentBinding],
    default_agent: &str,
    inbound: &Inbound,
    linked_identity: Option<&str>,
) -> (String, Option<usize>) {
    match bindings
        .iter()
        .position(|b| b.matches(inbound, linked_identity))
    {
        Some(i) => (bindings[i].agent_id.clone(), Some(i)),
        None => (default_agent.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn inbound<'a>(
        channel: &'a str,
        account: Option<&'a str>,
        kind: &'a str,
        id: &'a str,
    ) -> Inbound<'a> {
        Inbound {
            channel,
            account_id: account,
            peer_kind: kind,
            peer_id: id,
        }
    }

    #[test]
    fn parses_bindings() {
        assert_eq!(
            AgentBinding::from_json(&json!({"agentId": "Work",
                "match": {"channel": "Discord", "accountId": "Bot 1", "peer": {"kind": "group", "id": "G1"}}})),
            Some(AgentBinding {
                agent_id: "work".into(),
                channel: Some("discord".into()),
                account_id: Some("bot-1".into()),
                peer_kind: Some("group".into()),
                peer_id: Some("G1".into()),
            })
        );
        assert_eq!(
            AgentBinding::from_json(&json!({"agentId": "w"})),
            Some(AgentBinding {
                agent_id: "w".into(),
                channel: None,
                account_id: None,
                peer_kind: None,
                peer_id: None,
            })
        );
        assert_eq!(AgentBinding::from_json(&json!({"match": {}})), None);
    }

    #[test]
    fn first_match_wins_else_default() {
        let bindings: Vec<AgentBinding> = [
            json!({"agentId": "family", "match": {"channel": "whatsapp", "peer": {"kind": "group"}}}),
            json!({"agentId": "work", "match": {"channel": "discord", "accountId": "workbot"}}),
            json!({"agentId": "boss", "match": {"peer": {"id": "+31628552611"}}}),
            json!({"agentId": "steve", "match": {"peer": {"id": "steve"}}}),
            json!({"agentId": "never", "match": {"channel": "discord"}}),
        ]
        .iter()
        .filter_map(AgentBinding::from_json)
        .collect();
        let cases = [
            (
                inbound("whatsapp", None, "group", "123@g.us"),
                None,
                ("family", Some(0)),
            ),
            (
                inbound("Discord", Some("WorkBot"), "dm", "1"),
                None,
                ("work", Some(1)),
            ),
            (
                inbound("whatsapp", None, "dm", "31628552611@s.whatsapp.net"),
                None,
                ("boss", Some(2)),
            ),
            (
                inbound("telegram", None, "dm", "777"),
                Some("steve"),
                ("steve", Some(3)),
            ),
            (
                inbound("discord", Some("other"), "dm", "1"),
                None,
                ("never", Some(4)),
            ),
            (inbound("cli", None, "dm", "local"), None, ("home", None)),
        ];
        for (msg, linked, (agent, idx)) in cases {
            assert_eq!(
                resolve_agent(&bindings, "home", &msg, linked),
                (agent.to_string(), idx),
                "{msg:?}"
            );
        }
    }

    #[test]
    fn default_agent() {
        let list: Vec<AgentEntry> = [
            json!({"id": "a"}),
            json!({"id": "B", "default": true}),
            json!({"x": 1}),
        ]
        .iter()
        .filter_map(AgentEntry::from_json)
        .collect();
        assert_eq!(
            list,
            vec![
                AgentEntry {
                    id: "a".into(),
                    default: false
                },
                AgentEntry {
                    id: "b".into(),
                    default: true
                },
            ]
        );
        assert_eq!(default_agent_id(&list), "b");
        assert_eq!(default_agent_id(&list[..1]), "main");
        assert_eq!(default_agent_id(&[]), "main");
    }
}
