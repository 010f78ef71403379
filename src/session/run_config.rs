//! Everything one run needs from the configuration, resolved once at the
//! start of the run: session settings override the global config.

use crate::config::{Config, DEFAULT_SYSTEM_PROMPT};
use crate::llm::named::named;
use crate::llm::{provider_for, CacheTtl, Endpoint, ThinkingLevel};
use crate::session::run::DEFAULT_MAX_ITERATIONS;
use crate::session::tools::DEFAULT_MAX_RESULT_CHARS;
use gsv_protocol::{ChatDirectives, ModelSelection, SessionSettings};

#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    pub provider: String,
    /// `providers.<name>.api`, when the operator forces an API.
    pub api: Option<String>,
    pub model: String,
    pub endpoint: Endpoint,
    pub system_prompt: String,
    pub thinking: ThinkingLevel,
    pub max_tokens: Option<u64>,
    pub llm_timeout_ms: u64,
    /// How long a tool call may take before it becomes an error result.
    pub tool_timeout_ms: u64,
    /// Tool result text beyond this many characters is cut (with a note).
    pub max_result_chars: usize,
    /// Model calls one run may make (ends runaway tool loops).
    pub max_iterations: u32,
    /// Set when the run cannot call the model: the reason, worded for the user.
    pub unusable: Option<String>,
    /// How long the provider is asked to keep the prompt's prefix cached
    /// (`None`: it is not asked).
    pub cache: Option<CacheTtl>,
    /// What the model's tokens cost, when known.
    pub prices: Option<crate::llm::prices::Prices>,
}

impl RunConfig {
    pub fn resolve(config: &Config, settings: &SessionSettings) -> Self {
        let ModelSelection {
            provider,
            id: model,
        } = Self::model_for(config, settings);
        let api = config
            .str_at(&format!("providers.{provider}.api"))
            .map(String::from);
        let configured_base = config.str_at(&format!("providers.{provider}.baseUrl"));
        let base_url = configured_base
            .unwrap_or_else(|| provider_for(&provider, api.as_deref()).default_base_url())
            .trim_end_matches('/')
            .to_string();
        let api_key = config
            .str_at(&format!("apiKeys.{provider}"))
            .filter(|k| !k.is_empty())
            .map(String::from);
        let unusable = if model.is_empty() {
            Some("No model configured. Set one with: gsv config set model.id <model>".to_string())
        } else if api_key.is_none()
            && (configured_base.is_none() || named(&provider).is_some_and(|n| n.needs_key))
            && named(&provider).is_none_or(|n| n.needs_key)
        {
            Some(format!(
                "No API key configured for provider '{provider}'. Set one with: gsv config set apiKeys.{provider} <key>"
            ))
        } else {
            None
        };
        let thinking = settings
            .thinking_level
            .as_deref()
            .or(config.str_at("model.thinkingLevel"))
            .and_then(ThinkingLevel::parse)
            .unwrap_or_default();
        let cache = Self::cache_in(config, &provider, api.as_deref());
        let prices = crate::llm::prices::Prices::of(config, &provider, &model, cache);
        let system_prompt = settings
            .system_prompt
            .clone()
            .or_else(|| config.str_at("systemPrompt").map(String::from))
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_SYSTEM_PROMPT.to_string());
        Self {
            provider,
            api,
            model,
            endpoint: Endpoint {
                base_url,
                api_key: api_key.unwrap_or_default(),
            },
            system_prompt,
            thinking,
            max_tokens: settings.max_tokens.or(config.u64_at("model.maxTokens")),
            llm_timeout_ms: config.u64_at("timeouts.llmMs").unwrap_or(300_000),
            tool_timeout_ms: Self::tool_timeout_ms_in(config),
            max_result_chars: Self::max_result_chars_in(config),
            max_iterations: config
                .u64_at("tools.maxIterations")
                .map_or(DEFAULT_MAX_ITERATIONS, |n| {
                    n.min(u64::from(u32::MAX)) as u32
                }),
            unusable,
            cache,
            prices,
        }
    }
}

impl RunConfig {
    /// The model a run would call (the session's choice, else the
    /// config's), without resolving the rest: a message's directives are
    /// read against it before any run starts.
    pub fn model_for(config: &Config, settings: &SessionSettings) -> ModelSelection {
        match &settings.model {
            Some(m) if !m.provider.is_empty() && !m.id.is_empty() => m.clone(),
            _ => {
                let provider = config.str_at("model.provider").unwrap_or("anthropic");
                // The configured model, else the provider's own default (the
                // default config's model is Anthropic's).
                let set = config
                    .overrides()
                    .pointer("/model/id")
                    .and_then(|v| v.as_str());
                let id = set
                    .or_else(|| named(provider).map(|n| n.default_model))
                    .unwrap_or_default();
                ModelSelection {
                    provider: provider.to_string(),
                    id: id.to_string(),
                }
            }
        }
    }

    /// How long a tool call may take. The config alone says, so a node's
    /// answer or a timeout reads it without resolving a whole run.
    pub fn tool_timeout_ms_in(config: &Config) -> u64 {
        config.u64_at("timeouts.toolMs").unwrap_or(60_000)
    }

    /// Where a tool result's text is cut (the config alone says).
    pub fn max_result_chars_in(config: &Config) -> usize {
        config
            .u64_at("tools.maxResultChars")
            .map_or(DEFAULT_MAX_RESULT_CHARS, |n| n as usize)
    }

    /// `providers.<name>.cacheTtl`, else what the provider is known to
    /// accept: the Messages API takes `cache_control` (on by default),
    /// OpenAI's own API `prompt_cache_key`; a compatible server that may
    /// reject unknown fields is asked only when configured to be.
    fn cache_in(config: &Config, provider: &str, api: Option<&str>) -> Option<CacheTtl> {
        if let Some(setting) = config.str_at(&format!("providers.{provider}.cacheTtl")) {
            return CacheTtl::parse(setting).unwrap_or(Some(CacheTtl::FiveMinutes));
        }
        let messages_api = provider_for(provider, api).api() == crate::llm::anthropic::API;
        (messages_api || provider == "openai").then_some(CacheTtl::FiveMinutes)
    }

    /// The model this run calls, as `/status` and `/model` name it.
    pub fn model_selection(&self) -> ModelSelection {
        ModelSelection {
            provider: self.provider.clone(),
            id: self.model.clone(),
        }
    }
}

/// The session's settings with one message's inline directives applied
/// (`/t:high`, `/m:sel`): they win over the session's own for that run.
pub fn with_directives(settings: &SessionSettings, d: &ChatDirectives) -> SessionSettings {
    SessionSettings {
        model: d.model.clone().or_else(|| settings.model.clone()),
        thinking_level: d
            .thinking_level
            .clone()
            .or_else(|| settings.thinking_level.clone()),
        ..settings.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_model_alone_is_the_one_a_run_resolves() {
        let mut c = Config::default();
        c.set("model", json!({"provider": "openai", "id": "gpt-4.1"}))
            .unwrap();
        let chosen = ModelSelection {
            provider: "ollama".into(),
            id: "llama3".into(),
        };
        let half_chosen = ModelSelection {
            provider: "ollama".into(),
            id: String::new(),
        };
        let cases = [
            (None, "openai", "gpt-4.1"),
            (Some(chosen), "ollama", "llama3"),
            // A choice without an id is no choice.
            (Some(half_chosen), "openai", "gpt-4.1"),
        ];
        for (model, provider, id) in cases {
            let settings = SessionSettings {
                model,
                ..Default::default()
            };
            let expected = ModelSelection {
                provider: provider.into(),
                id: id.into(),
            };
            assert_eq!(RunConfig::model_for(&c, &settings), expected);
            assert_eq!(
                RunConfig::resolve(&c, &settings).model_selection(),
                expected
            );
        }
    }

    #[test]
    fn defaults_without_key_are_unusable_with_the_fix() {
        let rc = RunConfig::resolve(&Config::default(), &SessionSettings::default());
        assert_eq!(
            rc,
            RunConfig {
                provider: "anthropic".into(),
                api: None,
                model: "claude-sonnet-4-20250514".into(),
                endpoint: Endpoint { base_url: "https://api.anthropic.com".into(), api_key: String::new() },
                system_prompt: DEFAULT_SYSTEM_PROMPT.into(),
                thinking: ThinkingLevel::None,
                max_tokens: None,
                llm_timeout_ms: 300_000,
                tool_timeout_ms: 60_000,
                max_result_chars: 100_000,
                max_iterations: 25,
                unusable: Some(
                    "No API key configured for provider 'anthropic'. Set one with: gsv config set apiKeys.anthropic <key>"
                        .into()
                ),
                cache: Some(CacheTtl::FiveMinutes),
                prices: Some(crate::llm::prices::Prices {
                    input: 3.0,
                    output: 15.0,
                    cache_read: 0.3,
                    cache_write: 3.75,
                }),
            }
        );
    }

    #[test]
    fn configured_openai_compatible_server() {
        let mut c = Config::default();
        c.set(
            "model",
            json!({"provider":"openai","id":"gpt-4.1","thinkingLevel":"high"}),
        )
        .unwrap();
        c.set("apiKeys.openai", json!("sk-1")).unwrap();
        c.set(
            "providers.openai.baseUrl",
            json!("http://127.0.0.1:9999/v1/"),
        )
        .unwrap();
        c.set("timeouts.llmMs", json!(5000)).unwrap();
        c.set("systemPrompt", json!("Be brief.")).unwrap();
        c.set("timeouts.toolMs", json!(2000)).unwrap();
        c.set("tools", json!({"maxResultChars": 5000, "maxIterations": 3}))
            .unwrap();
        let rc = RunConfig::resolve(&c, &SessionSettings::default());
        assert_eq!(
            rc,
            RunConfig {
                provider: "openai".into(),
                api: None,
                model: "gpt-4.1".into(),
                endpoint: Endpoint {
                    base_url: "http://127.0.0.1:9999/v1".into(),
                    api_key: "sk-1".into()
                },
                system_prompt: "Be brief.".into(),
                thinking: ThinkingLevel::High,
                max_tokens: None,
                llm_timeout_ms: 5000,
                tool_timeout_ms: 2000,
                max_result_chars: 5000,
                max_iterations: 3,
                unusable: None,
                cache: Some(CacheTtl::FiveMinutes),
                prices: Some(crate::llm::prices::Prices {
                    input: 2.0,
                    output: 8.0,
                    cache_read: 0.5,
                    cache_write: 2.0,
                }),
            }
        );
    }

    #[test]
    fn a_named_provider_alone_brings_its_address_api_and_model() {
        let resolve = |provider: &str, key: bool| {
            let mut c = Config::default();
            c.set("model.provider", json!(provider)).unwrap();
            if key {
                c.set(&format!("apiKeys.{provider}"), json!("k")).unwrap();
            }
            RunConfig::resolve(&c, &SessionSettings::default())
        };
        let cases = [
            (
                "anthropic",
                "https://api.anthropic.com",
                "claude-sonnet-4-20250514",
            ),
            ("openai", "https://api.openai.com/v1", "gpt-5"),
            (
                "google",
                "https://generativelanguage.googleapis.com/v1beta/openai",
                "gemini-2.5-flash",
            ),
            (
                "gemini",
                "https://generativelanguage.googleapis.com/v1beta/openai",
                "gemini-2.5-flash",
            ),
            (
                "groq",
                "https://api.groq.com/openai/v1",
                "llama-3.3-70b-versatile",
            ),
            (
                "mistral",
                "https://api.mistral.ai/v1",
                "mistral-large-latest",
            ),
            ("deepseek", "https://api.deepseek.com/v1", "deepseek-chat"),
            ("xai", "https://api.x.ai/v1", "grok-4"),
            (
                "openrouter",
                "https://openrouter.ai/api/v1",
                "anthropic/claude-sonnet-4.5",
            ),
            ("ollama", "http://localhost:11434/v1", "llama3.2"),
        ];
        for (provider, url, model) in cases {
            let rc = resolve(provider, true);
            assert_eq!(
                (
                    rc.endpoint.base_url.as_str(),
                    rc.model.as_str(),
                    &rc.unusable
                ),
                (url, model, &None),
                "{provider}"
            );
            let api = provider_for(provider, None).api();
            let expected = match provider {
                "anthropic" => "anthropic-messages",
                _ => "openai-completions",
            };
            assert_eq!(api, expected, "{provider}");
        }
        // Ollama runs locally without a key; a hosted one needs its key.
        assert_eq!(resolve("ollama", false).unusable, None);
        assert!(resolve("groq", false)
            .unusable
            .unwrap()
            .contains("apiKeys.groq"));
        // An unknown provider has no model of its own to offer.
        let unknown = resolve("llamacpp", true);
        assert_eq!(
            unknown.unusable.as_deref(),
            Some("No model configured. Set one with: gsv config set model.id <model>")
        );
        // A model set explicitly wins.
        let mut c = Config::default();
        c.set("model", json!({"provider": "groq", "id": "qwen-qwq-32b"}))
            .unwrap();
        let rc = RunConfig::resolve(&c, &SessionSettings::default());
        assert_eq!(rc.model, "qwen-qwq-32b");
    }

    #[test]
    fn prompt_caching_is_asked_of_providers_known_to_take_it() {
        let cache = |provider: &str, setting: Option<&str>| {
            let mut c = Config::default();
            c.set("model.provider", json!(provider)).unwrap();
            if let Some(ttl) = setting {
                c.set(&format!("providers.{provider}.cacheTtl"), json!(ttl))
                    .unwrap();
            }
            RunConfig::resolve(&c, &SessionSettings::default()).cache
        };
        let five = Some(CacheTtl::FiveMinutes);
        assert_eq!(cache("anthropic", None), five);
        assert_eq!(cache("anthropic", Some("1h")), Some(CacheTtl::OneHour));
        assert_eq!(cache("anthropic", Some("off")), None);
        assert_eq!(cache("openai", None), five);
        // OpenAI's Responses API takes `prompt_cache_key` as well.
        let mut c = Config::default();
        c.set("model.provider", json!("openai")).unwrap();
        c.set("providers.openai.api", json!("openai-responses"))
            .unwrap();
        let rc = RunConfig::resolve(&c, &SessionSettings::default());
        assert_eq!(
            (rc.cache, rc.endpoint.base_url.as_str()),
            (five, "https://api.openai.com/v1")
        );
        assert_eq!(cache("ollama", None), None);
        assert_eq!(cache("ollama", Some("5m")), five);
    }

    #[test]
    fn local_server_needs_no_key_and_session_settings_win() {
        let mut c = Config::default();
        c.set(
            "providers.ollama.baseUrl",
            json!("http://127.0.0.1:11434/v1"),
        )
        .unwrap();
        let settings = SessionSettings {
            model: Some(ModelSelection {
                provider: "ollama".into(),
                id: "llama3".into(),
            }),
            thinking_level: Some("low".into()),
            system_prompt: Some("Session prompt".into()),
            max_tokens: Some(512),
        };
        let rc = RunConfig::resolve(&c, &settings);
        assert_eq!(rc.provider, "ollama");
        assert_eq!(rc.model, "llama3");
        assert_eq!(rc.endpoint.base_url, "http://127.0.0.1:11434/v1");
        assert_eq!(rc.unusable, None);
        assert_eq!(rc.thinking, ThinkingLevel::Low);
        assert_eq!(rc.system_prompt, "Session prompt");
        assert_eq!(rc.max_tokens, Some(512));
    }

    #[test]
    fn directives_win_over_session_settings_for_one_run() {
        let settings = SessionSettings {
            model: Some(ModelSelection {
                provider: "anthropic".into(),
                id: "claude-sonnet-4".into(),
            }),
            thinking_level: Some("low".into()),
            max_tokens: Some(100),
            ..Default::default()
        };
        let d = ChatDirectives {
            thinking_level: Some("high".into()),
            model: None,
        };
        assert_eq!(
            with_directives(&settings, &d),
            SessionSettings {
                thinking_level: Some("high".into()),
                ..settings.clone()
            }
        );
        assert_eq!(
            with_directives(&settings, &ChatDirectives::default()),
            settings
        );
    }
}
