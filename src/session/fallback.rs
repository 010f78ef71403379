//! `model.fallbacks`: the models that answer, in order, when the
//! configured one keeps failing. Only a provider's own trouble hands a
//! call over (rate limits after the retries, server errors and
//! overloading, the network, no answer in time); a refusal of the request
//! itself (a wrong key, a prompt too long, a malformed answer) is the
//! same on any model's turn and is reported.

use crate::config::Config;
use crate::llm::{LlmError, LlmErrorKind};
use gsv_protocol::ModelSelection;

/// The fallbacks, in order: `provider/id`, or an id alone for the
/// configured provider's. Entries that do not read as a model are skipped
/// (`config.set` refuses anything but a list of strings).
pub fn fallbacks(config: &Config, provider: &str) -> Vec<ModelSelection> {
    config
        .raw("model.fallbacks")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str())
        .filter_map(|s| crate::commands::parse_model_selector(s).ok())
        .map(|s| s.resolve(provider))
        .collect()
}

/// Whether a failure of this kind hands the call to the next model: what
/// the call's own retries were for, or no answer in time.
pub fn hands_over(error: &LlmError) -> bool {
    error.is_retryable() || error.kind == LlmErrorKind::Timeout
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fallbacks_read_in_order_with_the_provider_filled_in() {
        let config = Config::from_overrides(json!({"model": {
            "provider": "anthropic",
            "fallbacks": ["openai/gpt-5", "claude-haiku-4-5", "groq/llama-3.3-70b-versatile"],
        }}));
        let names: Vec<String> = fallbacks(&config, "anthropic")
            .iter()
            .map(|m| format!("{}/{}", m.provider, m.id))
            .collect();
        assert_eq!(
            names,
            [
                "openai/gpt-5",
                "anthropic/claude-haiku-4-5",
                "groq/llama-3.3-70b-versatile"
            ]
        );
        assert!(fallbacks(&Config::default(), "anthropic").is_empty());
    }

    #[test]
    fn only_a_providers_own_trouble_hands_over() {
        use LlmErrorKind::*;
        let over: Vec<bool> = [
            RateLimited,
            Server,
            Network,
            Timeout,
            Auth,
            ContextOverflow,
            Invalid,
        ]
        .into_iter()
        .map(|kind| hands_over(&LlmError::new(kind, "")))
        .collect();
        assert_eq!(over, [true, true, true, true, false, false, false]);
    }
}
