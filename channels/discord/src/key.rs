//! The shared key of the internal channel calls (`x-gsv-channel-key`).
//!
//! The channel Worker holds it as the secret `GSV_CHANNEL_KEY`; the gateway
//! derives it from its own `GSV_AUTH_TOKEN`, so an operator sets one token and
//! copies the derived key once (`gsv` can print it). Deriving rather than
//! reusing the auth token keeps the token itself out of the channel Worker.

use gsv_protocol::channels::CHANNEL_KEY_LABEL;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Lowercase hex `HMAC-SHA256(key = auth_token, message = "gsv-channel-key")`.
pub fn derive_channel_key(auth_token: &str) -> String {
    // HMAC accepts keys of any length, so `new_from_slice` cannot fail here;
    // the fallback keeps this path free of panics all the same.
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

/// Compares a presented key with the expected one in time independent of
/// where they differ. An empty expected key never matches (an unset secret
/// must not let an empty header through).
pub fn key_matches(presented: &str, expected: &str) -> bool {
    if expected.is_empty() || presented.len() != expected.len() {
        return false;
    }
    presented
        .bytes()
        .zip(expected.bytes())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivation_matches_the_contract_s_known_answer() {
        // The vector was computed independently with openssl (see its doc).
        let (token, key) = gsv_protocol::channels::CHANNEL_KEY_TEST_VECTOR;
        assert_eq!(derive_channel_key(token), key);
        assert_ne!(derive_channel_key("other-token"), key);
    }

    #[test]
    fn comparison() {
        let k = derive_channel_key("t");
        assert!(key_matches(&k, &k));
        assert!(!key_matches(&k[1..], &k));
        let mut other = k.clone().into_bytes();
        other[63] = if other[63] == b'0' { b'1' } else { b'0' };
        assert!(!key_matches(&String::from_utf8(other).unwrap(), &k));
        assert!(!key_matches("", ""));
    }
}
