//! Identity links (`session.identityLinks`): several channel-specific peer
//! ids that route to one canonical peer, and the E.164 normalization they
//! (and the sender allow-lists) compare phone numbers with.

use super::normalize::{normalize_channel, normalize_peer_id};

/// One `session.identityLinks` entry: `canonical` ← any of `ids`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityLink {
    /// The name used as peer id when one of `ids` matches (e.g. `steve`).
    pub canonical: String,
    /// `+31628552611` (any channel, compared as E.164) or
    /// `telegram:123456789` (that channel only, case-insensitive).
    pub ids: Vec<String>,
}

/// A phone-number-like id in E.164 form: strips a WhatsApp suffix
/// (`@s.whatsapp.net`, `@c.us`) and a `:device` suffix, keeps the digits,
/// and prefixes `+` when the input had one or has at least 10 digits.
/// Empty when there are no digits.
pub fn normalize_e164(raw: &str) -> String {
    let mut s = raw.trim();
    for suffix in ["@s.whatsapp.net", "@c.us"] {
        if s.len() >= suffix.len()
            && s.is_char_boundary(s.len() - suffix.len())
            && s[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
        {
            s = &s[..s.len() - suffix.len()];
            break;
        }
    }
    if let Some((number, device)) = s.rsplit_once(':') {
        if !device.is_empty() && device.chars().all(|c| c.is_ascii_digit()) {
            s = number;
        }
    }
    let had_plus = s.starts_with('+');
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if digits.is_empty() {
        String::new()
    } else if had_plus || digits.len() >= 10 {
        format!("+{digits}")
    } else {
        digits
    }
}

/// The canonical name (normalized as a peer id) of the first link with an
/// entry matching `peer_id` on `channel`, in configuration order.
///
/// - A plain entry matches on any channel when both sides have the same
///   non-empty E.164 form.
/// - A `channel:id` entry matches only on that channel (case-insensitive),
///   when the ids are equal as peer ids or as non-empty E.164 numbers.
pub fn resolve_linked_identity(
    links: &[IdentityLink],
    channel: &str,
    peer_id: &str,
) -> Option<String> {
    if peer_id.trim().is_empty() {
        return None;
    }
    let channel = normalize_channel(channel);
    let peer_token = normalize_peer_id(peer_id);
    let peer_e164 = normalize_e164(peer_id);
    let same_number = |id: &str| !peer_e164.is_empty() && normalize_e164(id) == peer_e164;
    for link in links {
        if link.canonical.trim().is_empty() {
            continue;
        }
        let matched = link.ids.iter().any(|entry| match entry.split_once(':') {
            Some((entry_channel, id)) => {
                normalize_channel(entry_channel) == channel
                    && (normalize_peer_id(id) == peer_token || same_number(id))
            }
            None => same_number(entry),
        });
        if matched {
            return Some(normalize_peer_id(&link.canonical));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steve() -> Vec<IdentityLink> {
        // One person under two channel ids.
        vec![IdentityLink {
            canonical: "steve".into(),
            ids: vec![
                "+31628552611".into(),
                "telegram:123456789".into(),
                "whatsapp:+34675706329".into(),
            ],
        }]
    }

    #[test]
    fn e164() {
        assert_eq!(normalize_e164("+31628552611"), "+31628552611");
        assert_eq!(normalize_e164("31628552611@s.whatsapp.net"), "+31628552611");
        assert_eq!(
            normalize_e164("31628552611:12@s.whatsapp.net"),
            "+31628552611"
        );
        assert_eq!(normalize_e164("31628552611@C.US"), "+31628552611");
        assert_eq!(normalize_e164("+1 (555) 010-9999"), "+15550109999");
        assert_eq!(normalize_e164("+123"), "+123");
        assert_eq!(normalize_e164("123456789"), "123456789");
        assert_eq!(normalize_e164("steve"), "");
        assert_eq!(normalize_e164(""), "");
    }

    // Row "Plain (no prefix)": matched on any channel after E.164 normalization.
    #[test]
    fn plain_entry_matches_any_channel() {
        let links = steve();
        for (channel, peer) in [
            ("whatsapp", "31628552611@s.whatsapp.net"),
            ("signal", "+31628552611"),
            ("cli", "31628552611"),
        ] {
            assert_eq!(
                resolve_linked_identity(&links, channel, peer),
                Some("steve".to_string()),
                "{channel} {peer}"
            );
        }
        assert_eq!(
            resolve_linked_identity(&links, "whatsapp", "31600000000"),
            None
        );
    }

    // Row "Channel-prefixed": matched only when the channel name matches.
    #[test]
    fn prefixed_entry_matches_its_channel_only() {
        let links = steve();
        assert_eq!(
            resolve_linked_identity(&links, "whatsapp", "34675706329@s.whatsapp.net"),
            Some("steve".to_string())
        );
        assert_eq!(
            resolve_linked_identity(&links, "WhatsApp", "+34675706329"),
            Some("steve".to_string())
        );
        assert_eq!(
            resolve_linked_identity(&links, "telegram", "123456789"),
            Some("steve".to_string())
        );
        assert_eq!(
            resolve_linked_identity(&links, "discord", "123456789"),
            None
        );
        assert_eq!(
            resolve_linked_identity(&links, "signal", "+34675706329"),
            None
        );
    }

    #[test]
    fn first_link_wins_and_canonical_is_normalized() {
        let links = vec![
            IdentityLink {
                canonical: "Steve B".into(),
                ids: vec!["discord:42".into()],
            },
            IdentityLink {
                canonical: "other".into(),
                ids: vec!["discord:42".into()],
            },
        ];
        assert_eq!(
            resolve_linked_identity(&links, "discord", "42"),
            Some("steve_b".to_string())
        );
        assert_eq!(resolve_linked_identity(&links, "discord", ""), None);
    }
}
