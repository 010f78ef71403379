//! Session routing: which
//! session — and so which Session Durable Object — a conversation lands in.
//!
//! - [`keys`]: building and parsing `agent:…` keys;
//! - [`normalize`]: the component rules (agentId, accountId, channel, …);
//! - [`identity`]: identity links and E.164 numbers;
//! - [`bindings`]: which agent answers an inbound message;
//! - here: [`RoutingConfig`], [`canonicalize_session_key`],
//!   [`is_main_session_key`] and [`resolve_route`].

pub mod bindings;
pub mod identity;
pub mod keys;
pub mod normalize;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

use crate::config::Config;
use serde_json::Value;

pub use bindings::{AgentBinding, AgentEntry, Inbound};
pub use identity::{normalize_e164, resolve_linked_identity, IdentityLink};
pub use keys::{
    build_session_key, cron_session_key, heartbeat_session_key, main_session_key,
    parse_session_key, KeyParts, ParsedSessionKey, Peer,
};
pub use normalize::{normalize_agent_id, normalize_main_key, DEFAULT_AGENT_ID, DEFAULT_MAIN_KEY};

/// How DMs map to sessions (`session.dmScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DmScope {
    /// All DMs share the agent's main session.
    #[default]
    Main,
    /// One session per peer, across channels.
    PerPeer,
    /// One session per channel and peer.
    PerChannelPeer,
    /// One session per channel, bot account and peer.
    PerAccountChannelPeer,
}

impl DmScope {
    pub const ALL: [DmScope; 4] = [
        DmScope::Main,
        DmScope::PerPeer,
        DmScope::PerChannelPeer,
        DmScope::PerAccountChannelPeer,
    ];

    /// The config spelling; `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == s.trim())
    }

    pub fn as_str(self) -> &'static str {
        match self {
            DmScope::Main => "main",
            DmScope::PerPeer => "per-peer",
            DmScope::PerChannelPeer => "per-channel-peer",
            DmScope::PerAccountChannelPeer => "per-account-channel-peer",
        }
    }
}

/// The routing part of the configuration, read once so callers don't walk
/// the JSON per message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutingConfig {
    /// `session.mainKey`, normalized.
    pub main_key: String,
    /// `session.dmScope` (unknown values → `main`).
    pub dm_scope: DmScope,
    /// `session.identityLinks`, in configuration order.
    pub identity_links: Vec<IdentityLink>,
    /// `agents.bindings`, invalid entries dropped.
    pub bindings: Vec<AgentBinding>,
    /// `agents.list`, invalid entries dropped.
    pub agents: Vec<AgentEntry>,
    /// `agents.list[].default`, else `main`.
    pub default_agent_id: String,
    /// `owner.identities`: the owner's own chat identities.
    pub owner_identities: Vec<String>,
    /// `session.shareMainWith`: other people whose DMs land in main.
    pub share_main_with: Vec<String>,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        Self::from_value(&Value::Null)
    }
}

impl RoutingConfig {
    pub fn from_config(config: &Config) -> Self {
        Self::from_value(config.effective())
    }

    /// From an effective-config JSON document; missing or ill-typed values
    /// fall back to the defaults.
    pub fn from_value(root: &Value) -> Self {
        let at = |path: &[&str]| path.iter().try_fold(root, |v, seg| v.get(seg));
        let list = |path: &[&str]| {
            at(path)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let identity_links = at(&["session", "identityLinks"])
            .and_then(Value::as_object)
            .map(|links| {
                links
                    .iter()
                    .map(|(canonical, ids)| IdentityLink {
                        canonical: canonical.clone(),
                        ids: ids
                            .as_array()
                            .map(|a| {
                                a.iter()
                                    .filter_map(Value::as_str)
                                    .map(String::from)
                                    .collect()
                            })
                            .unwrap_or_default(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let agents: Vec<AgentEntry> = list(&["agents", "list"])
            .iter()
            .filter_map(AgentEntry::from_json)
            .collect();
        Self {
            main_key: normalize_main_key(
                at(&["session", "mainKey"])
                    .and_then(Value::as_str)
                    .unwrap_or(""),
            ),
            dm_scope: at(&["session", "dmScope"])
                .and_then(Value::as_str)
                .and_then(DmScope::parse)
                .unwrap_or_default(),
            identity_links,
            bindings: list(&["agents", "bindings"])
                .iter()
                .filter_map(AgentBinding::from_json)
                .collect(),
            default_agent_id: bindings::default_agent_id(&agents),
            agents,
            owner_identities: strings(at(&["owner", "identities"])),
            share_main_with: strings(at(&["session", "shareMainWith"])),
        }
    }

    /// Whether the DM peer `peer` (on `channel`, when known) is the
    /// owner: named in `owner.identities` as `channel:id`, as a phone
    /// number, or through the name of an identity link.
    pub fn is_owner(&self, channel: Option<&str>, peer: &str) -> bool {
        // v1's CLI and web keys (`agent:main:cli:dm:main`): the gateway's
        // own clients, which hold its token.
        let own_client = channel.is_some_and(|c| {
            let c = normalize::normalize_channel(c);
            c == "cli" || c == "web"
        });
        own_client || self.names(&self.owner_identities, channel, peer)
    }

    /// Whether DMs from `peer` land in the main session when `dmScope` is
    /// `main`: the owner's, and those the owner shares it with. Anyone
    /// else gets a session of their own, whatever `dmScope` says.
    pub fn shares_main(&self, channel: Option<&str>, peer: &str) -> bool {
        self.is_owner(channel, peer) || self.names(&self.share_main_with, channel, peer)
    }

    /// The dmScope a DM from `peer` is keyed by: `main` only for those
    /// who share it; others per channel and peer (per peer when the
    /// channel is not known, as in a per-peer key).
    pub fn dm_scope_for(&self, channel: Option<&str>, peer: &str) -> DmScope {
        // Only `main` asks who the peer is.
        if self.dm_scope != DmScope::Main || self.shares_main(channel, peer) {
            return self.dm_scope;
        }
        match channel {
            Some(c) if !c.trim().is_empty() => DmScope::PerChannelPeer,
            _ => DmScope::PerPeer,
        }
    }

    fn names(&self, ids: &[String], channel: Option<&str>, peer: &str) -> bool {
        // The peer's forms are made only when an entry needs them: every
        // canonicalization of a DM key asks, and most configs name nobody.
        let peer_name = std::cell::OnceCell::new();
        let peer_number = std::cell::OnceCell::new();
        let linked = std::cell::OnceCell::new();
        ids.iter().any(|id| {
            let id_ = id.trim();
            if id_.starts_with('+') || id_.chars().all(|c| c.is_ascii_digit()) {
                let peer_number = peer_number.get_or_init(|| normalize_e164(peer));
                return !peer_number.is_empty() && normalize_e164(id_) == *peer_number;
            }
            match id.split_once(':') {
                Some(_) => channel.is_some_and(|c| {
                    let link = IdentityLink {
                        canonical: "_".into(),
                        ids: vec![id.clone()],
                    };
                    resolve_linked_identity(&[link], c, peer).is_some()
                }),
                // A link's name: the peer it resolves to, or a key's peer
                // already written as that name.
                None => {
                    let name = normalize::normalize_peer_id(id);
                    let linked = linked.get_or_init(|| {
                        channel.and_then(|c| resolve_linked_identity(&self.identity_links, c, peer))
                    });
                    linked.as_deref() == Some(name.as_str())
                        || *peer_name.get_or_init(|| normalize::normalize_peer_id(peer)) == name
                }
            }
        })
    }

    /// `agent:{agentId}:{mainKey}` under this configuration.
    pub fn main_session_key(&self, agent_id: &str) -> String {
        main_session_key(agent_id, &self.main_key)
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// The canonical form of a client-supplied key:
/// - blank, `main` or the main key (case-insensitive) → the default
///   agent's main session;
/// - `agent:{id}:main` / `agent:{id}:{mainKey}` → `agent:{id}:{mainKey}`;
/// - structured keys are parsed and rebuilt: components normalized, DMs
///   re-keyed for the configured dmScope (collapsing to the main session
///   under `main` for the owner and those who share it, see
///   [`RoutingConfig::dm_scope_for`]);
/// - anything else is kept as given (trimmed).
///
/// Identity links are not applied here (only to inbound routing), so a key
/// stays stable when links change. Idempotent.
pub fn canonicalize_session_key(key: &str, cfg: &RoutingConfig) -> String {
    let key = key.trim();
    if !key.starts_with("agent:") {
        let lower = key.to_ascii_lowercase();
        if key.is_empty() || lower == DEFAULT_MAIN_KEY || lower == cfg.main_key {
            return cfg.main_session_key(&cfg.default_agent_id);
        }
        return key.to_string();
    }
    if let Some(p) = parse_session_key(key) {
        let parts = KeyParts {
            agent_id: &p.agent_id,
            channel: p.channel.as_deref().unwrap_or(""),
            account_id: p.account_id.as_deref(),
            peer_kind: &p.peer.kind,
            peer_id: &p.peer.id,
        };
        let scope = cfg.dm_scope_for(p.channel.as_deref(), &p.peer.id);
        return build_session_key(&parts, scope, &cfg.main_key);
    }
    let parts: Vec<&str> = key.split(':').collect();
    if let [_, agent, rest] = parts.as_slice() {
        let rest = rest.to_ascii_lowercase();
        if rest == DEFAULT_MAIN_KEY || rest == cfg.main_key {
            return cfg.main_session_key(agent);
        }
    }
    key.to_string()
}

/// The agent a key belongs to (normalized; `main` when it names none).
pub fn agent_id_of(key: &str) -> String {
    match key.trim().split(':').collect::<Vec<_>>().as_slice() {
        ["agent", id, _, ..] => normalize_agent_id(id),
        _ => DEFAULT_AGENT_ID.to_string(),
    }
}

/// Whether `key` is its agent's main session once canonicalized. Gates
/// `MEMORY.md` and the session type in the prompt's runtime section.
pub fn is_main_session_key(key: &str, cfg: &RoutingConfig) -> bool {
    let canonical = canonicalize_session_key(key, cfg);
    canonical == cfg.main_session_key(&agent_id_of(&canonical))
}

/// Where an inbound channel message goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub agent_id: String,
    pub session_key: String,
    /// The agent's main session (for "last active" bookkeeping).
    pub main_session_key: String,
    /// The identity-link canonical name used as peer id, if one matched.
    pub linked_identity: Option<String>,
    /// Index into `agents.bindings` of the binding that chose the agent.
    pub binding: Option<usize>,
    /// A DM from one of the owner's own identities.
    pub from_owner: bool,
}

/// Routes an inbound message: identity link, then agent binding, then the
/// session key for the configured dmScope.
pub fn resolve_route(cfg: &RoutingConfig, inbound: &Inbound) -> Route {
    let linked = resolve_linked_identity(&cfg.identity_links, inbound.channel, inbound.peer_id);
    let (agent_id, binding) = bindings::resolve_agent(
        &cfg.bindings,
        &cfg.default_agent_id,
        inbound,
        linked.as_deref(),
    );
    let parts = KeyParts {
        agent_id: &agent_id,
        channel: inbound.channel,
        account_id: inbound.account_id,
        peer_kind: inbound.peer_kind,
        peer_id: linked.as_deref().unwrap_or(inbound.peer_id),
    };
    let is_dm = normalize::normalize_peer_kind(inbound.peer_kind) == normalize::DEFAULT_PEER_KIND;
    let channel = Some(inbound.channel);
    let scope = cfg.dm_scope_for(channel, inbound.peer_id);
    Route {
        session_key: build_session_key(&parts, scope, &cfg.main_key),
        from_owner: is_dm && cfg.is_owner(channel, inbound.peer_id),
        main_session_key: cfg.main_session_key(&agent_id),
        agent_id,
        linked_identity: linked,
        binding,
    }
}
