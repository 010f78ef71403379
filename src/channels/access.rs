//! Who may reach the agent through a chat app (`channels.<ch>.dmPolicy`,
//! `allowFrom`, `groups.requireMention`), decided before anything is stored
//! or run. Unknown senders pair first by default: a bot token or a phone
//! number is public, the agent's tools and memory are not.

use crate::config::Config;
use crate::routing::normalize_e164;

/// `channels.<ch>.dmPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DmPolicy {
    /// Anyone may talk to the agent.
    Open,
    /// Only `allowFrom`; others are ignored.
    Allowlist,
    /// `allowFrom`, and unknown senders get a pairing code the owner approves.
    Pairing,
    /// Nobody: the channel's messages are ignored.
    Disabled,
}

impl DmPolicy {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "open" => Some(Self::Open),
            "allowlist" => Some(Self::Allowlist),
            "pairing" => Some(Self::Pairing),
            "disabled" => Some(Self::Disabled),
            _ => None,
        }
    }
}

/// A channel's access settings, read once per message from the config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelAccess {
    pub policy: DmPolicy,
    /// Sender ids (or E.164 numbers on phone channels); `*` allows all.
    pub allow_from: Vec<String>,
    /// A group message runs only when the bot is mentioned or replied to.
    pub require_mention: bool,
    /// Sender ids are phone numbers, compared as E.164.
    pub phone_ids: bool,
}

impl ChannelAccess {
    /// `channel`'s settings; a missing or unknown policy is `pairing`.
    pub fn from_config(config: &Config, channel: &str) -> Self {
        let at = |leaf: &str| format!("channels.{channel}.{leaf}");
        let allow_from = config
            .raw(&at("allowFrom"))
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        Self {
            policy: config
                .str_at(&at("dmPolicy"))
                .and_then(DmPolicy::parse)
                .unwrap_or(DmPolicy::Pairing),
            allow_from,
            require_mention: config
                .raw(&at("groups.requireMention"))
                .and_then(|v| v.as_bool())
                .unwrap_or(true),
            phone_ids: is_phone_channel(channel),
        }
    }

    /// Whether `sender_id` is on the allow list.
    pub fn allows(&self, sender_id: &str) -> bool {
        let sender = self.normalize(sender_id);
        !sender.is_empty()
            && self
                .allow_from
                .iter()
                .any(|entry| entry.trim() == "*" || self.normalize(entry) == sender)
    }

    /// How this channel compares sender ids.
    pub fn normalize(&self, id: &str) -> String {
        match self.phone_ids {
            true => normalize_e164(id),
            false => id.trim().to_string(),
        }
    }
}

/// Channels whose sender ids are phone numbers.
pub fn is_phone_channel(channel: &str) -> bool {
    matches!(channel, "whatsapp" | "sms" | "signal")
}

/// What happens to a message, before anything is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Route it to the agent.
    Allow,
    /// An unknown sender under `pairing`: offer a code (in a DM only).
    Pair,
    /// Drop it, for this reason (logged, nothing sent back).
    Ignore(&'static str),
}

/// The decision for one message. A paired sender is in `allowFrom` (an
/// approval adds it there). `is_group`: the message came from a group chat,
/// where a code is never posted and only mentions of the bot or replies to
/// it (`addressed_to_bot`) run.
pub fn decide(
    access: &ChannelAccess,
    sender_id: &str,
    is_group: bool,
    addressed_to_bot: bool,
) -> Access {
    let known = access.allows(sender_id);
    let sender_ok = match access.policy {
        DmPolicy::Disabled => return Access::Ignore("the channel's dmPolicy is disabled"),
        DmPolicy::Open => true,
        DmPolicy::Allowlist | DmPolicy::Pairing => known,
    };
    if !sender_ok {
        return match (access.policy, is_group) {
            (DmPolicy::Pairing, false) => Access::Pair,
            (DmPolicy::Pairing, true) => Access::Ignore("an unpaired sender in a group"),
            _ => Access::Ignore("the sender is not in allowFrom"),
        };
    }
    if is_group && access.require_mention && !addressed_to_bot {
        return Access::Ignore("a group message that does not mention the bot");
    }
    Access::Allow
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn access(policy: DmPolicy, allow: &[&str], phone: bool) -> ChannelAccess {
        ChannelAccess {
            policy,
            allow_from: allow.iter().map(|s| s.to_string()).collect(),
            require_mention: true,
            phone_ids: phone,
        }
    }

    #[test]
    fn reads_the_config_with_pairing_as_the_default() {
        let config = Config::from_overrides(json!({
            "channels": {"discord": {"dmPolicy": "allowlist", "allowFrom": ["81"], "groups": {"requireMention": false}}}
        }));
        assert_eq!(
            ChannelAccess::from_config(&config, "discord"),
            ChannelAccess {
                policy: DmPolicy::Allowlist,
                allow_from: vec!["81".into()],
                require_mention: false,
                phone_ids: false,
            }
        );
        assert_eq!(
            ChannelAccess::from_config(&Config::default(), "telegram"),
            ChannelAccess {
                policy: DmPolicy::Pairing,
                allow_from: vec![],
                require_mention: true,
                phone_ids: false,
            }
        );
    }

    #[test]
    fn decisions_for_each_policy() {
        let cases = [
            // (policy, allowFrom, sender, group, addressed, expected)
            (DmPolicy::Open, vec![], "1", false, false, Access::Allow),
            (
                DmPolicy::Open,
                vec![],
                "1",
                true,
                false,
                Access::Ignore("a group message that does not mention the bot"),
            ),
            (DmPolicy::Open, vec![], "1", true, true, Access::Allow),
            (
                DmPolicy::Allowlist,
                vec!["1"],
                "1",
                false,
                false,
                Access::Allow,
            ),
            (
                DmPolicy::Allowlist,
                vec!["1"],
                "2",
                false,
                false,
                Access::Ignore("the sender is not in allowFrom"),
            ),
            (
                DmPolicy::Allowlist,
                vec!["*"],
                "2",
                false,
                false,
                Access::Allow,
            ),
            (
                DmPolicy::Pairing,
                vec!["1"],
                "1",
                false,
                false,
                Access::Allow,
            ),
            (
                DmPolicy::Pairing,
                vec!["1"],
                "2",
                false,
                false,
                Access::Pair,
            ),
            (
                DmPolicy::Pairing,
                vec!["1"],
                "2",
                true,
                true,
                Access::Ignore("an unpaired sender in a group"),
            ),
            (DmPolicy::Pairing, vec!["1"], "1", true, true, Access::Allow),
            (
                DmPolicy::Disabled,
                vec!["1"],
                "1",
                false,
                false,
                Access::Ignore("the channel's dmPolicy is disabled"),
            ),
        ];
        for (policy, allow, sender, group, addressed, expected) in cases {
            assert_eq!(
                decide(&access(policy, &allow, false), sender, group, addressed),
                expected,
                "{policy:?} {allow:?} {sender} group={group} addressed={addressed}"
            );
        }
    }

    #[test]
    fn phone_channels_compare_numbers_as_e164() {
        let a = access(DmPolicy::Allowlist, &["+49 151 2345 6789"], true);
        assert!(a.allows("4915123456789@s.whatsapp.net"));
        assert!(a.allows("+4915123456789"));
        assert!(!a.allows("+4915100000000"));
        assert!(!a.allows(""));
        // Discord ids are compared as they are.
        assert!(!access(DmPolicy::Allowlist, &["0081"], false).allows("81"));
    }
}
