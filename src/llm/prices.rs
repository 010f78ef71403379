//! What model calls cost, estimated from a price table: the config's
//! `providers.<name>.prices` (per model id prefix, USD per million tokens),
//! else the providers' published prices for their current models. A
//! model with no price has no estimate (a local model costs nothing, an
//! unknown one is not guessed).

use crate::config::Config;
use crate::llm::CacheTtl;
use gsv_protocol::{TokenCounts, Usage};
use serde_json::Value;

/// Prices per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    pub input: f64,
    pub output: f64,
    /// Input read from the prompt cache.
    pub cache_read: f64,
    /// Input written to the prompt cache.
    pub cache_write: f64,
}

impl Prices {
    /// What `usage` costs at these prices.
    pub fn cost(&self, usage: &Usage) -> f64 {
        (usage.input as f64 * self.input
            + usage.output as f64 * self.output
            + usage.cache_read as f64 * self.cache_read
            + usage.cache_write as f64 * self.cache_write)
            / 1_000_000.0
    }

    /// The prices of `model` of `provider`: the longest configured prefix
    /// of the model id (`providers.<provider>.prices.<prefix>`), else the
    /// longest known one. A configured entry may give `input` and
    /// `output` alone: cache reads and writes are then priced as the
    /// provider prices them (Anthropic: 0.1 × and 1.25 × input, 2 × for
    /// an hour's cache; others: cached input at a quarter, writes free).
    pub fn of(config: &Config, provider: &str, model: &str, ttl: Option<CacheTtl>) -> Option<Self> {
        let anthropic = provider == "anthropic";
        let configured = config
            .raw(&format!("providers.{provider}.prices"))
            .and_then(|v| v.as_object().cloned())
            .and_then(|table| {
                let key = table
                    .keys()
                    .filter(|prefix| model.starts_with(prefix.as_str()))
                    .max_by_key(|prefix| prefix.len())?
                    .clone();
                from_config(&table[&key], anthropic, ttl)
            });
        configured.or_else(|| known(provider, model, ttl))
    }
}

fn from_config(entry: &Value, anthropic: bool, ttl: Option<CacheTtl>) -> Option<Prices> {
    let input = entry["input"].as_f64()?;
    let output = entry["output"].as_f64()?;
    let (read, write) = cache_prices(input, anthropic, ttl);
    Some(Prices {
        input,
        output,
        cache_read: entry["cacheRead"].as_f64().unwrap_or(read),
        cache_write: entry["cacheWrite"].as_f64().unwrap_or(write),
    })
}

/// How a provider prices cache reads and writes, from its input price.
fn cache_prices(input: f64, anthropic: bool, ttl: Option<CacheTtl>) -> (f64, f64) {
    match (anthropic, ttl) {
        (true, Some(CacheTtl::OneHour)) => (input * 0.1, input * 2.0),
        (true, _) => (input * 0.1, input * 1.25),
        (false, _) => (input * 0.25, input),
    }
}

/// Published prices (USD per million tokens: input, output, cached input)
/// of the named providers' current models, by model id prefix.
const KNOWN: &[(&str, &str, f64, f64, f64)] = &[
    ("anthropic", "claude-opus-4-5", 5.0, 25.0, 0.5),
    ("anthropic", "claude-opus-4", 15.0, 75.0, 1.5),
    ("anthropic", "claude-sonnet-4", 3.0, 15.0, 0.3),
    ("anthropic", "claude-3-7-sonnet", 3.0, 15.0, 0.3),
    ("anthropic", "claude-haiku-4-5", 1.0, 5.0, 0.1),
    ("anthropic", "claude-3-5-haiku", 0.8, 4.0, 0.08),
    ("openai", "gpt-5-nano", 0.05, 0.4, 0.005),
    ("openai", "gpt-5-mini", 0.25, 2.0, 0.025),
    ("openai", "gpt-5", 1.25, 10.0, 0.125),
    ("openai", "gpt-4.1-nano", 0.1, 0.4, 0.025),
    ("openai", "gpt-4.1-mini", 0.4, 1.6, 0.1),
    ("openai", "gpt-4.1", 2.0, 8.0, 0.5),
    ("openai", "gpt-4o-mini", 0.15, 0.6, 0.075),
    ("openai", "gpt-4o", 2.5, 10.0, 1.25),
    ("openai", "o4-mini", 1.1, 4.4, 0.275),
    ("openai", "o3", 2.0, 8.0, 0.5),
];

fn known(provider: &str, model: &str, ttl: Option<CacheTtl>) -> Option<Prices> {
    let anthropic = provider == "anthropic";
    KNOWN
        .iter()
        .filter(|(p, prefix, ..)| *p == provider && model.starts_with(prefix))
        .max_by_key(|(_, prefix, ..)| prefix.len())
        .map(|&(_, _, input, output, cached)| Prices {
            input,
            output,
            cache_read: cached,
            cache_write: cache_prices(input, anthropic, ttl).1,
        })
}

/// Adds `usage` to `tokens`, and its cost at `prices` when known.
pub fn count(tokens: &mut TokenCounts, usage: &Usage, prices: Option<&Prices>) {
    tokens.input += usage.input;
    tokens.output += usage.output;
    tokens.cache_read += usage.cache_read;
    tokens.cache_write += usage.cache_write;
    tokens.total += usage.total();
    if let Some(prices) = prices {
        tokens.cost = Some(tokens.cost.unwrap_or(0.0) + prices.cost(usage));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
        Usage {
            input,
            output,
            cache_read: read,
            cache_write: write,
            total_tokens: 0,
        }
    }

    #[test]
    fn known_models_by_their_longest_prefix() {
        let c = Config::default();
        let sonnet = Prices::of(&c, "anthropic", "claude-sonnet-4-5-20250929", None).unwrap();
        assert_eq!(
            sonnet,
            Prices {
                input: 3.0,
                output: 15.0,
                cache_read: 0.3,
                cache_write: 3.75
            }
        );
        let hour = Prices::of(&c, "anthropic", "claude-opus-4-5", Some(CacheTtl::OneHour));
        assert_eq!(hour.map(|p| (p.input, p.cache_write)), Some((5.0, 10.0)));
        let mini = Prices::of(&c, "openai", "gpt-5-mini-2025-08-07", None).unwrap();
        assert_eq!(
            (mini.input, mini.cache_read, mini.cache_write),
            (0.25, 0.025, 0.25)
        );
        assert_eq!(Prices::of(&c, "ollama", "llama3.2", None), None);
        assert_eq!(Prices::of(&c, "openai", "claude-sonnet-4", None), None);
    }

    #[test]
    fn configured_prices_win_and_fill_in_the_cache_prices() {
        let c = Config::from_overrides(json!({"providers": {
            "ollama": {"prices": {"llama": {"input": 0.0, "output": 0.0}}},
            "anthropic": {"prices": {"claude-sonnet-4": {"input": 2.0, "output": 10.0, "cacheRead": 0.5}}},
        }}));
        assert_eq!(
            Prices::of(&c, "anthropic", "claude-sonnet-4-5", None),
            Some(Prices {
                input: 2.0,
                output: 10.0,
                cache_read: 0.5,
                cache_write: 2.5
            })
        );
        let free = Prices::of(&c, "ollama", "llama3.2", None).unwrap();
        assert_eq!(free.cost(&usage(1000, 1000, 0, 0)), 0.0);
    }

    #[test]
    fn counting_adds_tokens_and_cost() {
        let sonnet = Prices::of(&Config::default(), "anthropic", "claude-sonnet-4-5", None);
        let mut tokens = TokenCounts::default();
        count(&mut tokens, &usage(1_000, 500, 0, 10_000), sonnet.as_ref());
        count(&mut tokens, &usage(200, 500, 10_000, 300), sonnet.as_ref());
        let cost = tokens.cost.take().unwrap();
        assert_eq!(
            tokens,
            TokenCounts {
                input: 1_200,
                output: 1_000,
                total: 22_500,
                cache_read: 10_000,
                cache_write: 10_300,
                cost: None,
            }
        );
        // 1 200 × 3 + 1 000 × 15 + 10 000 × 0.3 + 10 300 × 3.75, per million.
        assert!((cost - 0.060_225).abs() < 1e-9, "{cost}");
        // A model without a price adds tokens, and no cost.
        let mut local = TokenCounts::default();
        count(&mut local, &usage(10, 10, 0, 0), None);
        assert_eq!(local.cost, None);
    }
}
