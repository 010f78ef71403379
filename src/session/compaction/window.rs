//! Context windows: `providers.<name>.contextWindow`, else a small table of
//! known models, else 128,000 tokens.

use crate::config::Config;

pub const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;

/// Model-id prefixes and their windows; the first match wins, so more
/// specific prefixes come first.
const KNOWN: &[(&str, u64)] = &[
    ("claude-", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-", 1_048_576),
];

/// The window of a known model id (case-insensitive; an OpenRouter-style
/// `vendor/` prefix is ignored).
pub fn known_context_window(model: &str) -> Option<u64> {
    let id = model.trim().to_ascii_lowercase();
    let id = id.rsplit('/').next().unwrap_or(&id);
    KNOWN
        .iter()
        .find(|(p, _)| id.starts_with(p))
        .map(|(_, w)| *w)
}

/// The window to plan with for `provider`/`model`.
pub fn context_window(config: &Config, provider: &str, model: &str) -> u64 {
    config
        .raw("providers")
        .and_then(|p| p.get(provider))
        .and_then(|p| p.get("contextWindow"))
        .and_then(|v| v.as_u64())
        .filter(|w| *w > 0)
        .or_else(|| known_context_window(model))
        .unwrap_or(DEFAULT_CONTEXT_WINDOW)
}
