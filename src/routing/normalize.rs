//! Normalization of session-key components. Every function is total: any input, however odd,
//! yields a component that is safe to put between colons.

/// Agent used when a key or binding names none.
pub const DEFAULT_AGENT_ID: &str = "main";
/// Account used in `per-account-channel-peer` keys when none is given.
pub const DEFAULT_ACCOUNT_ID: &str = "default";
/// Default `session.mainKey`.
pub const DEFAULT_MAIN_KEY: &str = "main";
/// Channel used when none is given.
pub const DEFAULT_CHANNEL: &str = "unknown";
/// Peer kind used when none is given; the only kind that `dmScope` affects.
pub const DEFAULT_PEER_KIND: &str = "dm";
/// Peer id used when none is given.
pub const DEFAULT_PEER_ID: &str = "unknown";

const MAX_ID_LEN: usize = 64;

/// `agentId`: lower-cased, runs of characters outside `[a-z0-9_-]` become
/// one `-`, leading `-`/`_` and trailing `-` are stripped, at most 64
/// characters; empty → `main`. The result always matches
/// `[a-z0-9][a-z0-9_-]{0,63}`.
pub fn normalize_agent_id(raw: &str) -> String {
    normalize_id(raw, DEFAULT_AGENT_ID)
}

/// `accountId`: the same rules as [`normalize_agent_id`]; empty → `default`.
pub fn normalize_account_id(raw: &str) -> String {
    normalize_id(raw, DEFAULT_ACCOUNT_ID)
}

/// `mainKey`: lower-cased token (see [`normalize_token`]); empty → `main`.
/// Unlike v1 a colon is replaced too, so a main key can never be mistaken
/// for a structured key.
pub fn normalize_main_key(raw: &str) -> String {
    normalize_token(raw, DEFAULT_MAIN_KEY)
}

/// `channel`: lower-cased token; empty → `unknown`.
pub fn normalize_channel(raw: &str) -> String {
    normalize_token(raw, DEFAULT_CHANNEL)
}

/// `peerKind`: lower-cased token; empty → `dm`.
pub fn normalize_peer_kind(raw: &str) -> String {
    normalize_token(raw, DEFAULT_PEER_KIND)
}

/// `peerId`: lower-cased token; empty → `unknown`.
pub fn normalize_peer_id(raw: &str) -> String {
    normalize_token(raw, DEFAULT_PEER_ID)
}

fn normalize_id(raw: &str, fallback: &str) -> String {
    let mut out = String::with_capacity(raw.len().min(MAX_ID_LEN * 2));
    let mut in_invalid_run = false;
    for c in raw.trim().chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' {
            out.push(c);
            in_invalid_run = false;
        } else if !in_invalid_run {
            out.push('-');
            in_invalid_run = true;
        }
    }
    // The first character must be alphanumeric, the last must not be a dash.
    let start = out.trim_start_matches(['-', '_']);
    let capped = &start[..start.len().min(MAX_ID_LEN)];
    let id = capped.trim_end_matches('-');
    if id.is_empty() {
        fallback.to_string()
    } else {
        id.to_string()
    }
}

/// Lower-cases `raw` and replaces each run of characters outside
/// `[a-z0-9+\-_@.]` with one `_`; blank input → `fallback`.
pub fn normalize_token(raw: &str, fallback: &str) -> String {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return fallback.to_string();
    }
    let mut out = String::with_capacity(trimmed.len());
    let mut in_invalid_run = false;
    for c in trimmed.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() || "+-_@.".contains(c) {
            out.push(c);
            in_invalid_run = false;
        } else if !in_invalid_run {
            out.push('_');
            in_invalid_run = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_id_rules() {
        // Valid ids are only lower-cased.
        assert_eq!(normalize_agent_id("Work"), "work");
        assert_eq!(normalize_agent_id("a_b-1"), "a_b-1");
        // Invalid characters → "-", runs collapse.
        assert_eq!(normalize_agent_id("my agent!!x"), "my-agent-x");
        // Leading/trailing dashes stripped (and a leading underscore, which
        // the valid pattern does not allow first).
        assert_eq!(normalize_agent_id("--x--"), "x");
        assert_eq!(normalize_agent_id(" _x"), "x");
        // Empty or all-invalid → main.
        assert_eq!(normalize_agent_id(""), "main");
        assert_eq!(normalize_agent_id("   "), "main");
        assert_eq!(normalize_agent_id("!!!"), "main");
        assert_eq!(normalize_agent_id("ÄÖÜ"), "main");
        // Max 64 characters, no trailing dash after the cut.
        assert_eq!(normalize_agent_id(&"a".repeat(70)), "a".repeat(64));
        let cut_on_dash = format!("{}-b", "a".repeat(63));
        assert_eq!(normalize_agent_id(&cut_on_dash), "a".repeat(63));
    }

    #[test]
    fn account_id_rules() {
        assert_eq!(normalize_account_id("Bot2"), "bot2");
        assert_eq!(normalize_account_id("my bot"), "my-bot");
        assert_eq!(normalize_account_id(""), "default");
        assert_eq!(normalize_account_id("@@"), "default");
        assert_eq!(normalize_account_id(&"b".repeat(65)), "b".repeat(64));
    }

    #[test]
    fn channel_rules() {
        assert_eq!(normalize_channel("WhatsApp"), "whatsapp");
        assert_eq!(normalize_channel("cli"), "cli");
        assert_eq!(normalize_channel("my channel/x"), "my_channel_x");
        assert_eq!(normalize_channel("a+b-c_d@e.f"), "a+b-c_d@e.f");
        assert_eq!(normalize_channel(""), "unknown");
    }

    #[test]
    fn peer_kind_rules() {
        assert_eq!(normalize_peer_kind("Group"), "group");
        assert_eq!(normalize_peer_kind("DM"), "dm");
        assert_eq!(normalize_peer_kind("a b"), "a_b");
        assert_eq!(normalize_peer_kind(""), "dm");
    }

    #[test]
    fn peer_id_rules() {
        assert_eq!(
            normalize_peer_id("31628552611@s.whatsapp.net"),
            "31628552611@s.whatsapp.net"
        );
        assert_eq!(normalize_peer_id("+31 6 2855"), "+31_6_2855");
        assert_eq!(normalize_peer_id("Steve"), "steve");
        assert_eq!(normalize_peer_id("a:b"), "a_b");
        assert_eq!(normalize_peer_id(" "), "unknown");
    }

    #[test]
    fn main_key_rules() {
        assert_eq!(normalize_main_key("Home"), "home");
        assert_eq!(normalize_main_key(""), "main");
        assert_eq!(normalize_main_key("my:home"), "my_home");
    }
}
