//! `model.check`: what one tiny call is made with, and what its outcome
//! says. The Gateway object makes the call (`worker::gateway_do::model_check`).

use crate::config::Config;
use crate::llm::{provider_for, LlmError, LlmErrorKind, ThinkingLevel};
use crate::session::run_config::RunConfig;
use gsv_protocol::{
    AssistantMessage, ModelCheckFailure, ModelCheckParams, ModelCheckResult, SessionSettings,
};

/// The one thing asked.
pub const PROMPT: &str = "Reply with the word OK.";
/// Enough for "OK" (and a reasoning model's preamble), little to pay.
const MAX_TOKENS: u64 = 16;
/// A check is given less time than a run's call.
const TIMEOUT_MS: u64 = 20_000;

/// The call to make: the configured provider, model and key, each
/// replaced by what the params name; or, when no call can be made, the
/// result that says why.
pub fn run_config(
    config: &Config,
    p: &ModelCheckParams,
) -> Result<RunConfig, Box<ModelCheckResult>> {
    let mut config = config.clone();
    // A value the schema refuses (a provider name with a dot) is left out:
    // the run then reports what it lacks, as a run would.
    let set = |config: &mut Config, path: &str, value: &str| {
        let _ = config.set(path, serde_json::Value::String(value.to_string()));
    };
    if let Some(provider) = &p.provider {
        set(&mut config, "model.provider", provider);
        if p.model.is_none() {
            // The provider's own default model, not the configured one.
            let _ = config.set("model.id", serde_json::Value::Null);
        }
    }
    if let Some(model) = &p.model {
        set(&mut config, "model.id", model);
    }
    let provider = RunConfig::model_for(&config, &SessionSettings::default()).provider;
    if let Some(key) = &p.api_key {
        set(&mut config, &format!("apiKeys.{provider}"), key);
    }
    let rc = RunConfig::resolve(&config, &SessionSettings::default());
    if let Some(reason) = &rc.unusable {
        return Err(Box::new(ModelCheckResult {
            failure: Some(ModelCheckFailure::Unusable),
            error: Some(reason.clone()),
            ..untried(&rc)
        }));
    }
    Ok(RunConfig {
        system_prompt: String::new(),
        thinking: ThinkingLevel::None,
        max_tokens: Some(MAX_TOKENS),
        llm_timeout_ms: rc.llm_timeout_ms.min(TIMEOUT_MS),
        cache: None,
        ..rc
    })
}

/// What a check of `rc` found: the answer, or the failure in the
/// provider's words; `latency_ms` from the request to the whole answer.
pub fn result(
    rc: &RunConfig,
    outcome: Result<AssistantMessage, LlmError>,
    latency_ms: u64,
) -> ModelCheckResult {
    let failure = outcome.err().map(|e| {
        let kind = match e.kind {
            LlmErrorKind::Auth => ModelCheckFailure::Auth,
            LlmErrorKind::RateLimited => ModelCheckFailure::RateLimited,
            LlmErrorKind::Server => ModelCheckFailure::Server,
            LlmErrorKind::Network => ModelCheckFailure::Network,
            LlmErrorKind::Timeout => ModelCheckFailure::Timeout,
            // Two words overflow no window: the request itself was refused.
            LlmErrorKind::ContextOverflow | LlmErrorKind::Invalid => ModelCheckFailure::Invalid,
        };
        (kind, e.message)
    });
    ModelCheckResult {
        ok: failure.is_none(),
        failure: failure.as_ref().map(|(kind, _)| *kind),
        error: failure.map(|(_, message)| message),
        latency_ms,
        ..untried(rc)
    }
}

/// The result's fields that name what was (or would be) called.
fn untried(rc: &RunConfig) -> ModelCheckResult {
    let provider = provider_for(&rc.provider, rc.api.as_deref());
    let endpoint = match provider.binding() {
        Some(binding) => format!("binding {binding}"),
        None => rc.endpoint.base_url.clone(),
    };
    ModelCheckResult {
        ok: false,
        provider: rc.provider.clone(),
        model: rc.model.clone(),
        api: provider.api().to_string(),
        endpoint,
        has_key: !rc.endpoint.api_key.is_empty(),
        failure: None,
        error: None,
        latency_ms: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(overrides: serde_json::Value) -> Config {
        Config::from_overrides(overrides)
    }

    fn params(provider: Option<&str>, model: Option<&str>, key: Option<&str>) -> ModelCheckParams {
        ModelCheckParams {
            provider: provider.map(String::from),
            model: model.map(String::from),
            api_key: key.map(String::from),
        }
    }

    #[test]
    fn the_configured_model_or_the_one_named_with_a_key_tried_and_not_kept() {
        let c = config(json!({"apiKeys": {"anthropic": "sk-ant-1"}}));
        let rc = run_config(&c, &params(None, None, None)).unwrap();
        assert_eq!(
            (
                rc.provider.as_str(),
                rc.model.as_str(),
                rc.endpoint.api_key.as_str(),
                rc.max_tokens,
                rc.system_prompt.as_str(),
                rc.cache
            ),
            (
                "anthropic",
                "claude-sonnet-4-20250514",
                "sk-ant-1",
                Some(16),
                "",
                None
            )
        );
        // Another provider alone: its default model, with the key given.
        let rc = run_config(&c, &params(Some("groq"), None, Some("gsk-2"))).unwrap();
        assert_eq!(
            (
                rc.provider.as_str(),
                rc.model.as_str(),
                rc.endpoint.base_url.as_str(),
                rc.endpoint.api_key.as_str()
            ),
            (
                "groq",
                "llama-3.3-70b-versatile",
                "https://api.groq.com/openai/v1",
                "gsk-2"
            )
        );
        // The config asked about is not changed.
        assert_eq!(c.str_at("apiKeys.groq"), None);
        let rc = run_config(&c, &params(None, Some("claude-haiku-4-5"), None)).unwrap();
        assert_eq!(rc.model, "claude-haiku-4-5");
    }

    #[test]
    fn without_a_key_nothing_is_called_and_the_result_says_how_to_set_one() {
        let got = run_config(&config(json!({})), &params(Some("openai"), None, None)).unwrap_err();
        assert_eq!(
            *got,
            ModelCheckResult {
                ok: false,
                provider: "openai".into(),
                model: "gpt-5".into(),
                api: "openai-completions".into(),
                endpoint: "https://api.openai.com/v1".into(),
                has_key: false,
                failure: Some(ModelCheckFailure::Unusable),
                error: Some(
                    "No API key configured for provider 'openai'. Set one with: gsv config set apiKeys.openai <key>"
                        .into()
                ),
                latency_ms: 0,
            }
        );
        // Workers AI needs none; it is reached through its binding.
        let rc = run_config(&config(json!({})), &params(Some("workers-ai"), None, None)).unwrap();
        let ok = result(&rc, Ok(AssistantMessage::new(Vec::new(), 1)), 420);
        assert_eq!(
            (ok.ok, ok.endpoint.as_str(), ok.has_key, ok.latency_ms),
            (true, "binding AI", false, 420)
        );
    }

    #[test]
    fn a_refused_key_is_an_auth_failure_in_the_providers_words() {
        let c = config(json!({"apiKeys": {"anthropic": "sk-bad"}}));
        let rc = run_config(&c, &params(None, None, None)).unwrap();
        let got = result(
            &rc,
            Err(LlmError::new(
                LlmErrorKind::Auth,
                "anthropic rejected the API key (401): invalid x-api-key",
            )),
            80,
        );
        assert_eq!(
            got,
            ModelCheckResult {
                ok: false,
                provider: "anthropic".into(),
                model: "claude-sonnet-4-20250514".into(),
                api: "anthropic-messages".into(),
                endpoint: "https://api.anthropic.com".into(),
                has_key: true,
                failure: Some(ModelCheckFailure::Auth),
                error: Some("anthropic rejected the API key (401): invalid x-api-key".into()),
                latency_ms: 80,
            }
        );
    }
}
