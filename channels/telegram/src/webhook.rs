//! Telegram's webhook: `POST /webhook/{account}`, each update carrying the
//! account's secret in `X-Telegram-Bot-Api-Secret-Token` (set with
//! `setWebhook`'s `secret_token`), compared in constant time. Without the
//! right secret nothing runs: the URL alone is guessable.

use gsv_channel_worker::is_account_name;
use gsv_protocol::channel_key::secrets_match;

pub const SECRET_HEADER: &str = "x-telegram-bot-api-secret-token";

/// The characters `secret_token` may have (Telegram: 1-256 of `A-Z`,
/// `a-z`, `0-9`, `_` and `-`): 64 of them, so a byte's low six bits pick
/// one without bias.
const SECRET_ALPHABET: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";

/// A webhook secret from random bytes (48 bytes: 288 bits of it).
pub fn new_secret(random: &[u8]) -> String {
    random
        .iter()
        .map(|b| SECRET_ALPHABET[usize::from(b & 63)] as char)
        .collect()
}

/// Whether the header carries the account's secret. An account without
/// one (never started with a webhook) lets nothing in.
pub fn secret_ok(expected: Option<&str>, presented: Option<&str>) -> bool {
    match (expected, presented) {
        (Some(expected), Some(presented)) => secrets_match(expected, presented),
        _ => false,
    }
}

/// The account a webhook path names (`/webhook/{account}`, the account
/// percent-encoded), if it names one.
pub fn account_in_path(path: &str) -> Option<String> {
    let segment = path.strip_prefix("/webhook/")?;
    if segment.contains('/') {
        return None;
    }
    let account = decode_segment(segment)?;
    is_account_name(&account).then_some(account)
}

/// `text` as one URL path segment (every byte outside `A-Za-z0-9-._~`
/// percent-encoded).
pub fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn decode_segment(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// An update's `update_id` (what a redelivery is known by), read before
/// the rest of it.
pub fn update_id(body: &[u8]) -> Option<i64> {
    #[derive(serde::Deserialize)]
    struct Id {
        update_id: i64,
    }
    serde_json::from_slice::<Id>(body).ok().map(|u| u.update_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_account_s_secret_lets_an_update_in() {
        assert!(secret_ok(Some("s3cr3t_-X"), Some("s3cr3t_-X")));
        assert!(!secret_ok(Some("s3cr3t_-X"), Some("s3cr3t_-Y")));
        assert!(!secret_ok(Some("s3cr3t_-X"), Some("s3cr3t")));
        assert!(!secret_ok(Some("s3cr3t_-X"), None));
        assert!(!secret_ok(None, Some("")));
        assert!(!secret_ok(Some(""), Some("")));
    }

    #[test]
    fn a_secret_has_only_the_characters_telegram_takes() {
        let random: Vec<u8> = (0..=255u8).cycle().take(48).collect();
        let secret = new_secret(&random);
        assert_eq!(secret.len(), 48);
        assert!(secret
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
        assert_eq!(new_secret(&[0, 63, 64, 255]), "A-A-");
    }

    #[test]
    fn the_path_names_an_account() {
        assert_eq!(account_in_path("/webhook/default"), Some("default".into()));
        assert_eq!(account_in_path("/webhook/my%20bot"), Some("my bot".into()));
        assert_eq!(
            account_in_path(&format!("/webhook/{}", encode_segment("ünï/x"))),
            Some("ünï/x".into())
        );
        for bad in [
            "/webhook/",
            "/webhook/_accounts",
            "/webhook/a/b",
            "/webhook/%zz",
            "/webhook/%ff",
            "/webhook",
            "/other/a",
        ] {
            assert_eq!(account_in_path(bad), None, "{bad}");
        }
        assert_eq!(encode_segment("a b/c"), "a%20b%2Fc");
    }

    #[test]
    fn the_update_id_is_read_first() {
        assert_eq!(
            update_id(br#"{"update_id": 901, "message": {"weird": true}}"#),
            Some(901)
        );
        assert_eq!(update_id(b"{}"), None);
        assert_eq!(update_id(b"not json"), None);
    }
}
