//! Building and parsing structured session keys.

use super::normalize::{
    normalize_account_id, normalize_agent_id, normalize_channel, normalize_main_key,
    normalize_peer_id, normalize_peer_kind, DEFAULT_PEER_KIND,
};

/// The segment that marks a DM key.
const DM_MARKER: &str = DEFAULT_PEER_KIND;
use super::DmScope;

/// The remote side of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// `dm`, `group`, `channel`, `thread`, …
    pub kind: String,
    pub id: String,
}

impl Peer {
    pub fn new(kind: impl Into<String>, id: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            id: id.into(),
        }
    }
}

/// What a structured key is made of, as written in the key (not normalized).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedSessionKey {
    pub agent_id: String,
    pub channel: Option<String>,
    pub account_id: Option<String>,
    pub peer: Peer,
}

/// The inputs of [`build_session_key`]; every component is normalized when
/// the key is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyParts<'a> {
    pub agent_id: &'a str,
    pub channel: &'a str,
    pub account_id: Option<&'a str>,
    pub peer_kind: &'a str,
    /// The peer id, or the identity-link canonical name when one matched.
    pub peer_id: &'a str,
}

/// `agent:{agentId}:{mainKey}`, both normalized.
pub fn main_session_key(agent_id: &str, main_key: &str) -> String {
    format!(
        "agent:{}:{}",
        normalize_agent_id(agent_id),
        normalize_main_key(main_key)
    )
}

/// The key a conversation lives under:
///
/// | peer kind | dmScope | key |
/// |---|---|---|
/// | `dm` | `main` | `agent:{agentId}:{mainKey}` |
/// | `dm` | `per-peer` | `agent:{agentId}:dm:{peerId}` |
/// | `dm` | `per-channel-peer` | `agent:{agentId}:{channel}:dm:{peerId}` |
/// | `dm` | `per-account-channel-peer` | `agent:{agentId}:{channel}:{accountId}:dm:{peerId}` |
/// | other | any | `agent:{agentId}:{channel}:{peerKind}:{peerId}` |
///
/// A channel or account named `dm` would read as the DM marker when the
/// key is parsed again, so it is written `dm_`.
pub fn build_session_key(parts: &KeyParts, dm_scope: DmScope, main_key: &str) -> String {
    let agent = normalize_agent_id(parts.agent_id);
    let channel = not_marker(normalize_channel(parts.channel));
    let kind = normalize_peer_kind(parts.peer_kind);
    let peer = normalize_peer_id(parts.peer_id);
    if kind != DEFAULT_PEER_KIND {
        return format!("agent:{agent}:{channel}:{kind}:{peer}");
    }
    match dm_scope {
        DmScope::Main => main_session_key(&agent, main_key),
        DmScope::PerPeer => format!("agent:{agent}:dm:{peer}"),
        DmScope::PerChannelPeer => format!("agent:{agent}:{channel}:dm:{peer}"),
        DmScope::PerAccountChannelPeer => {
            let account = not_marker(normalize_account_id(parts.account_id.unwrap_or("")));
            format!("agent:{agent}:{channel}:{account}:dm:{peer}")
        }
    }
}

fn not_marker(component: String) -> String {
    if component == DM_MARKER {
        format!("{DM_MARKER}_")
    } else {
        component
    }
}

fn is_marker(segment: &str) -> bool {
    segment.trim().eq_ignore_ascii_case(DM_MARKER)
}

/// `agent:{agentId}:heartbeat:system:internal`: where heartbeats run.
pub fn heartbeat_session_key(agent_id: &str) -> String {
    format!(
        "agent:{}:heartbeat:system:internal",
        normalize_agent_id(agent_id)
    )
}

/// `agent:{agentId}:cron:{jobId}`: the isolated session of a cron `task`.
/// The job id is normalized like a peer id so the key stays colon-safe.
pub fn cron_session_key(agent_id: &str, job_id: &str) -> String {
    format!(
        "agent:{}:cron:{}",
        normalize_agent_id(agent_id),
        normalize_peer_id(job_id)
    )
}

/// Splits a structured key into its parts. The first `dm` segment (any
/// case) that is not the last one marks a DM: the (at most two) segments before it are
/// channel and account, everything after it — colons included — is the
/// peer id. Otherwise `agent:{id}:{channel}:{kind}:{peer…}`.
///
/// `None` for keys without the `agent:` prefix, with fewer than four
/// colon-separated parts, or of another shape (`agent:{id}:cron:{job}`).
pub fn parse_session_key(raw: &str) -> Option<ParsedSessionKey> {
    let trimmed = raw.trim();
    if !trimmed.starts_with("agent:") {
        return None;
    }
    let parts: Vec<&str> = trimmed.split(':').collect();
    if parts.len() < 4 {
        return None;
    }
    let agent_id = parts[1].to_string();
    let rest = &parts[2..];
    if let Some(dm) = rest.iter().position(|s| is_marker(s)) {
        if dm + 1 < rest.len() {
            return Some(ParsedSessionKey {
                agent_id,
                channel: rest[..dm].first().map(|s| s.to_string()),
                account_id: rest[..dm].get(1).map(|s| s.to_string()),
                peer: Peer::new("dm", rest[dm + 1..].join(":")),
            });
        }
    }
    if rest.len() >= 3 {
        return Some(ParsedSessionKey {
            agent_id,
            channel: Some(rest[0].to_string()),
            account_id: None,
            peer: Peer::new(rest[1], rest[2..].join(":")),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dm<'a>(channel: &'a str, account: Option<&'a str>, peer: &'a str) -> KeyParts<'a> {
        KeyParts {
            agent_id: "main",
            channel,
            account_id: account,
            peer_kind: "dm",
            peer_id: peer,
        }
    }

    #[test]
    fn main_key_format() {
        assert_eq!(main_session_key("main", "main"), "agent:main:main");
        assert_eq!(main_session_key("Work", "Home"), "agent:work:home");
        assert_eq!(main_session_key("", ""), "agent:main:main");
    }

    // One test per DM scope.
    #[test]
    fn dm_scope_main_row() {
        let p = dm("whatsapp", Some("bot1"), "31628552611@s.whatsapp.net");
        assert_eq!(
            build_session_key(&p, DmScope::Main, "main"),
            "agent:main:main"
        );
        assert_eq!(
            build_session_key(&p, DmScope::Main, "home"),
            "agent:main:home"
        );
    }

    #[test]
    fn dm_scope_per_peer_row() {
        let p = dm("whatsapp", Some("bot1"), "31628552611@s.whatsapp.net");
        assert_eq!(
            build_session_key(&p, DmScope::PerPeer, "main"),
            "agent:main:dm:31628552611@s.whatsapp.net"
        );
    }

    #[test]
    fn dm_scope_per_channel_peer_row() {
        let p = dm("Discord", None, "123456");
        assert_eq!(
            build_session_key(&p, DmScope::PerChannelPeer, "main"),
            "agent:main:discord:dm:123456"
        );
    }

    #[test]
    fn dm_scope_per_account_channel_peer_row() {
        let p = dm("whatsapp", Some("Bot 2"), "steve");
        assert_eq!(
            build_session_key(&p, DmScope::PerAccountChannelPeer, "main"),
            "agent:main:whatsapp:bot-2:dm:steve"
        );
        let no_account = dm("whatsapp", None, "steve");
        assert_eq!(
            build_session_key(&no_account, DmScope::PerAccountChannelPeer, "main"),
            "agent:main:whatsapp:default:dm:steve"
        );
    }

    #[test]
    fn non_dm_keys_ignore_dm_scope() {
        for (kind, id, want) in [
            ("group", "G1", "agent:ops:discord:group:g1"),
            ("channel", "999", "agent:ops:discord:channel:999"),
            ("thread", "t:1", "agent:ops:discord:thread:t_1"),
        ] {
            let p = KeyParts {
                agent_id: "Ops",
                channel: "discord",
                account_id: Some("x"),
                peer_kind: kind,
                peer_id: id,
            };
            for scope in DmScope::ALL {
                assert_eq!(build_session_key(&p, scope, "main"), want);
            }
        }
    }

    #[test]
    fn dm_named_channel_or_account_is_escaped() {
        let p = dm("DM", Some("-dm-"), "x");
        assert_eq!(
            build_session_key(&p, DmScope::PerAccountChannelPeer, "main"),
            "agent:main:dm_:dm_:dm:x"
        );
    }

    #[test]
    fn heartbeat_and_cron_keys() {
        assert_eq!(
            heartbeat_session_key("Main"),
            "agent:main:heartbeat:system:internal"
        );
        assert_eq!(
            cron_session_key("work", "3f2a-JOB"),
            "agent:work:cron:3f2a-job"
        );
    }

    #[test]
    fn parse_shapes() {
        assert_eq!(
            parse_session_key("agent:main:dm:steve"),
            Some(ParsedSessionKey {
                agent_id: "main".into(),
                channel: None,
                account_id: None,
                peer: Peer::new("dm", "steve"),
            })
        );
        assert_eq!(
            parse_session_key("agent:main:whatsapp:bot1:dm:3162:12@s.whatsapp.net"),
            Some(ParsedSessionKey {
                agent_id: "main".into(),
                channel: Some("whatsapp".into()),
                account_id: Some("bot1".into()),
                peer: Peer::new("dm", "3162:12@s.whatsapp.net"),
            })
        );
        assert_eq!(
            parse_session_key("agent:main:heartbeat:system:internal"),
            Some(ParsedSessionKey {
                agent_id: "main".into(),
                channel: Some("heartbeat".into()),
                account_id: None,
                peer: Peer::new("system", "internal"),
            })
        );
        // A trailing `dm` is a peer id, not a marker.
        assert_eq!(
            parse_session_key("agent:main:discord:group:dm"),
            Some(ParsedSessionKey {
                agent_id: "main".into(),
                channel: Some("discord".into()),
                account_id: None,
                peer: Peer::new("group", "dm"),
            })
        );
    }

    #[test]
    fn parse_rejects() {
        assert_eq!(parse_session_key("agent:main:main"), None);
        assert_eq!(parse_session_key("agent:main"), None);
        assert_eq!(parse_session_key("main"), None);
        assert_eq!(parse_session_key("user:main:cli:dm:x"), None);
        assert_eq!(parse_session_key("agent:main:cron:job1"), None);
    }
}
