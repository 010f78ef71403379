//! The providers people name: `model.provider` alone picks the API, the
//! base URL and a sensible model, so `gsv config set model.provider groq`
//! and a key are all it takes. `providers.<name>.baseUrl` / `.api` and
//! `model.id` still win.

/// A provider known by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named {
    pub name: &'static str,
    /// The wire format (`anthropic-messages`, `openai-completions`,
    /// `workers-ai`).
    pub api: &'static str,
    /// Without a trailing slash; empty for a provider reached through a
    /// binding.
    pub base_url: &'static str,
    /// The model used when `model.id` is not set.
    pub default_model: &'static str,
    /// Its hosted API refuses calls without a key.
    pub needs_key: bool,
}

const fn hosted(
    name: &'static str,
    api: &'static str,
    base_url: &'static str,
    model: &'static str,
) -> Named {
    Named {
        name,
        api,
        base_url,
        default_model: model,
        needs_key: true,
    }
}

const COMPLETIONS: &str = "openai-completions";

/// Every named provider. `gemini` is another name for `google`.
pub const NAMED: &[Named] = &[
    hosted(
        "anthropic",
        "anthropic-messages",
        "https://api.anthropic.com",
        "claude-sonnet-4-20250514",
    ),
    hosted("openai", COMPLETIONS, "https://api.openai.com/v1", "gpt-5"),
    hosted(
        "google",
        COMPLETIONS,
        "https://generativelanguage.googleapis.com/v1beta/openai",
        "gemini-2.5-flash",
    ),
    hosted(
        "groq",
        COMPLETIONS,
        "https://api.groq.com/openai/v1",
        "llama-3.3-70b-versatile",
    ),
    hosted(
        "mistral",
        COMPLETIONS,
        "https://api.mistral.ai/v1",
        "mistral-large-latest",
    ),
    hosted(
        "deepseek",
        COMPLETIONS,
        "https://api.deepseek.com/v1",
        "deepseek-chat",
    ),
    hosted("xai", COMPLETIONS, "https://api.x.ai/v1", "grok-4"),
    hosted(
        "openrouter",
        COMPLETIONS,
        "https://openrouter.ai/api/v1",
        "anthropic/claude-sonnet-4.5",
    ),
    Named {
        name: "ollama",
        api: COMPLETIONS,
        base_url: "http://localhost:11434/v1",
        default_model: "llama3.2",
        needs_key: false,
    },
    // Through the Worker's `AI` binding: no address, no key.
    Named {
        name: "workers-ai",
        api: crate::llm::workers_ai::API,
        base_url: "",
        default_model: "@cf/moonshotai/kimi-k2.5",
        needs_key: false,
    },
];

/// The named provider `name` (case as configured; `gemini` is `google`).
pub fn named(name: &str) -> Option<&'static Named> {
    let name = match name {
        "gemini" => "google",
        other => other,
    };
    NAMED.iter().find(|n| n.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_once_with_a_model_and_an_address() {
        for (i, n) in NAMED.iter().enumerate() {
            assert!(NAMED[..i].iter().all(|m| m.name != n.name), "{}", n.name);
            assert!(!n.default_model.is_empty() && !n.base_url.ends_with('/'));
            assert!(
                n.base_url.starts_with("https://") || !n.needs_key,
                "{}",
                n.name
            );
        }
        assert_eq!(named("gemini"), named("google"));
        assert_eq!(named("llama.cpp"), None);
    }
}
