//! The shared key of the internal channel calls (`x-gsv-channel-key`).
//!
//! A channel Worker holds it as its secret `GSV_CHANNEL_KEY`; the gateway
//! derives the same value from its `GSV_AUTH_TOKEN`, so the operator keeps
//! one token and the token itself never reaches a channel Worker.

use crate::channels::CHANNEL_KEY_LABEL;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Lowercase hex `HMAC-SHA256(key = auth_token, message = "gsv-channel-key")`.
pub fn derive_channel_key(auth_token: &str) -> String {
    // HMAC takes keys of any length, so this cannot fail; the fallback
    // keeps the path free of panics all the same (and matches nothing).
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(auth_token.as_bytes()) else {
        return String::new();
    };
    mac.update(CHANNEL_KEY_LABEL.as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Compares a secret as presented with the one expected in time that
/// depends only on their lengths, never on where they first differ. An
/// empty expected secret matches nothing: an unset secret lets no one in.
pub fn secrets_match(expected: &str, given: &str) -> bool {
    let (a, b) = (expected.as_bytes(), given.as_bytes());
    let mut diff = (a.len() ^ b.len()) as u64;
    for i in 0..a.len().max(b.len()) {
        let x = a.get(i).copied().unwrap_or(0);
        let y = b.get(i).copied().unwrap_or(0);
        diff |= u64::from(x ^ y);
    }
    diff == 0 && !a.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivation_matches_an_independent_hmac() {
        // printf gsv-channel-key | openssl dgst -sha256 -hmac test-token
        assert_eq!(
            derive_channel_key("test-token"),
            "84b998bf7b4b4027a81588376d6dab72a1dfc4a5cda08cdd4f775492d649962f"
        );
    }

    #[test]
    fn matches_only_identical_non_empty_secrets() {
        assert!(secrets_match("s3cret", "s3cret"));
        assert!(!secrets_match("s3cret", "s3creT"));
        assert!(!secrets_match("s3cret", "s3cre"));
        assert!(!secrets_match("s3cret", "s3cret-and-more"));
        assert!(!secrets_match("s3cret", ""));
        assert!(!secrets_match("", ""));
    }
}
