//! Token checks.

/// Compares two tokens in time that depends only on their lengths, never
/// on where they first differ.
pub use gsv_protocol::channel_key::secrets_match as tokens_match;

/// Shown to a client when the gateway has no token configured at all.
pub const NO_TOKEN_CONFIGURED: &str =
    "This gateway has no auth token configured, so it refuses all connections. \
Set one with `wrangler secret put GSV_AUTH_TOKEN` (locally: GSV_AUTH_TOKEN=... in .dev.vars), \
then give the same token to clients (`gsv local-config set gateway.token <token>`).";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_only_identical_non_empty_tokens() {
        assert!(tokens_match("s3cret", "s3cret"));
        assert!(!tokens_match("s3cret", "s3creT"));
        assert!(!tokens_match("s3cret", "s3cre"));
        assert!(!tokens_match("s3cret", "s3cret-and-more"));
        assert!(!tokens_match("s3cret", ""));
        assert!(!tokens_match("", ""));
    }
}
