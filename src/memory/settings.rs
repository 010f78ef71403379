//! The `memory.*` settings as the gateway and the sessions read them.

use super::calls::{EmbeddingsConfig, IndexSettings};
use super::outbox::DEFAULT_MAX_RETRY;
use super::recall::DEFAULT_BUDGET_TOKENS;
use crate::config::Config;

#[derive(Debug, Clone, PartialEq)]
pub struct MemorySettings {
    pub account: String,
    pub index: IndexSettings,
    pub recall: bool,
    pub recall_budget_tokens: u32,
    pub dream: bool,
    /// The local hour of the nightly dream.
    pub dream_at_hour: u32,
    /// Promotion threshold, 0..1.
    pub dream_threshold: f64,
}

impl MemorySettings {
    pub fn from_config(config: &Config) -> Self {
        let str_at = |p: &str| {
            config
                .str_at(p)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let bool_at = |p: &str, d: bool| config.raw(p).and_then(|v| v.as_bool()).unwrap_or(d);
        let embeddings = match (
            str_at("memory.embeddings.url"),
            str_at("memory.embeddings.model"),
        ) {
            (Some(url), Some(model)) => Some(EmbeddingsConfig {
                url,
                model,
                api_key: str_at("memory.embeddings.apiKey"),
            }),
            _ => None,
        };
        Self {
            account: str_at("memory.account").unwrap_or_else(|| "default".into()),
            index: IndexSettings {
                max_retry: config
                    .u64_at("memory.maxRetry")
                    .map_or(DEFAULT_MAX_RETRY, |n| n.clamp(1, 100) as u32),
                embeddings,
            },
            recall: bool_at("memory.recall.enabled", true),
            recall_budget_tokens: config
                .u64_at("memory.recall.budgetTokens")
                .map_or(DEFAULT_BUDGET_TOKENS as u32, |n| n.min(10_000) as u32),
            dream: bool_at("memory.dream.enabled", true),
            dream_at_hour: config
                .u64_at("memory.dream.atHour")
                .map_or(3, |h| h.min(23) as u32),
            dream_threshold: config
                .u64_at("memory.dream.minScore")
                .map_or(super::dream::DEFAULT_THRESHOLD, |n| {
                    n.min(100) as f64 / 100.0
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_overrides() {
        let d = MemorySettings::from_config(&Config::from_overrides(json!({})));
        assert_eq!(
            d,
            MemorySettings {
                account: "default".into(),
                index: IndexSettings {
                    max_retry: 5,
                    embeddings: None
                },
                recall: true,
                recall_budget_tokens: 400,
                dream: true,
                dream_at_hour: 3,
                dream_threshold: 0.6,
            }
        );
        let c = Config::from_overrides(json!({"memory": {
            "account": "acme", "maxRetry": 2, "recall": {"enabled": false, "budgetTokens": 50},
            "dream": {"atHour": 4, "minScore": 45},
            "embeddings": {"url": "http://127.0.0.1:9/v1/embeddings", "model": "e5", "apiKey": "k"}
        }}));
        let s = MemorySettings::from_config(&c);
        assert_eq!(
            (
                s.account.as_str(),
                s.index.max_retry,
                s.recall,
                s.recall_budget_tokens,
                s.dream_at_hour,
                s.dream_threshold
            ),
            ("acme", 2, false, 50, 4, 0.45)
        );
        assert_eq!(
            s.index.embeddings,
            Some(EmbeddingsConfig {
                url: "http://127.0.0.1:9/v1/embeddings".into(),
                model: "e5".into(),
                api_key: Some("k".into())
            })
        );
    }
}
