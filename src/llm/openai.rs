//! OpenAI Chat Completions, streamed (`api: "openai-completions"`).
//!
//! Also spoken by OpenRouter, Gemini's OpenAI-compatible endpoint, Ollama,
//! llama.cpp's server and vLLM, so the decoder accepts their variations.

pub(crate) mod body;
mod chunk;
pub(crate) mod decoder;

use super::http_error::classify_http_error;
use super::{
    CacheTtl, Endpoint, HttpRequest, LlmError, LlmRequest, Prepared, Provider, StreamDecoder,
};
use gsv_protocol::{Message, ToolDefinition};
use serde_json::value::RawValue;

pub const API: &str = "openai-completions";

/// A Chat Completions provider; the name picks the default base URL and is
/// used in error messages (`gsv config set apiKeys.<name>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAi {
    provider: String,
}

impl OpenAi {
    pub fn for_provider(name: &str) -> Self {
        Self {
            provider: name.to_string(),
        }
    }

    /// The configured provider name, e.g. `openrouter`.
    pub fn provider(&self) -> &str {
        &self.provider
    }
}

impl Provider for OpenAi {
    fn api(&self) -> &'static str {
        API
    }

    fn default_base_url(&self) -> &'static str {
        match super::named::named(&self.provider) {
            Some(named) if named.api == API => named.base_url,
            // Anything else is most likely a local server; Ollama's port.
            _ => "http://localhost:11434/v1",
        }
    }

    fn build_request(&self, endpoint: &Endpoint, req: &LlmRequest) -> HttpRequest {
        let headers = super::bearer_json_headers(&endpoint.api_key);
        HttpRequest {
            url: format!(
                "{}/chat/completions",
                endpoint.base_url.trim_end_matches('/')
            ),
            headers,
            body: body::request_json(req),
        }
    }

    fn prepare(
        &self,
        system_prompt: &str,
        tools: &[ToolDefinition],
        ttl: Option<CacheTtl>,
    ) -> Prepared {
        body::prepare(system_prompt, tools, ttl)
    }

    fn write_messages(&self, messages: &[Message]) -> Vec<Box<RawValue>> {
        body::write_messages(messages)
    }

    fn decoder(&self, provider_name: &str, model: &str) -> Box<dyn StreamDecoder> {
        Box::new(decoder::ChatDecoder::new(provider_name, model))
    }

    fn classify_error(&self, status: u16, retry_after: Option<&str>, body: &str) -> LlmError {
        classify_http_error(&self.provider, status, retry_after, body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{provider_for, LlmErrorKind, ThinkingLevel};
    use gsv_protocol::{Message, UserContent, UserMessage};
    use serde_json::json;

    #[test]
    fn default_base_urls() {
        let urls: Vec<_> = ["openai", "openrouter", "google", "ollama", "lmstudio"]
            .iter()
            .map(|name| OpenAi::for_provider(name).default_base_url())
            .collect();
        assert_eq!(
            urls,
            vec![
                "https://api.openai.com/v1",
                "https://openrouter.ai/api/v1",
                "https://generativelanguage.googleapis.com/v1beta/openai",
                "http://localhost:11434/v1",
                "http://localhost:11434/v1",
            ]
        );
        assert_eq!(provider_for("openrouter", None).api(), "openai-completions");
    }

    #[test]
    fn http_request_with_and_without_key() {
        let messages = vec![Message::User(UserMessage {
            content: UserContent::Text("hi".into()),
            timestamp: 1,
            context: None,
        })];
        let req = LlmRequest {
            model: "gpt-4.1",
            system_prompt: "",
            messages: &messages,
            tools: &[],
            thinking: ThinkingLevel::None,
            max_tokens: None,
            prepared: None,
            written: None,
            cache: None,
        };
        let openai = OpenAi::for_provider("openai");
        let endpoint = Endpoint {
            base_url: "https://api.openai.com/v1/".into(),
            api_key: "sk-1".into(),
        };
        let body = json!({"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}],
            "stream":true,"stream_options":{"include_usage":true}});
        let http = openai.build_request(&endpoint, &req);
        assert_eq!(
            (
                http.url,
                http.headers,
                serde_json::from_str::<serde_json::Value>(&http.body).unwrap()
            ),
            (
                "https://api.openai.com/v1/chat/completions".to_string(),
                vec![
                    ("content-type".to_string(), "application/json".to_string()),
                    ("authorization".to_string(), "Bearer sk-1".to_string()),
                ],
                body
            )
        );
        let local = Endpoint {
            base_url: "http://localhost:11434/v1".into(),
            api_key: String::new(),
        };
        assert_eq!(
            OpenAi::for_provider("ollama")
                .build_request(&local, &req)
                .headers,
            vec![("content-type".to_string(), "application/json".to_string())]
        );
    }

    #[test]
    fn classify_error_names_the_configured_provider() {
        let err = OpenAi::for_provider("openrouter").classify_error(
            401,
            None,
            r#"{"error":{"message":"No auth credentials found","code":401}}"#,
        );
        assert_eq!(
            err,
            LlmError {
                kind: LlmErrorKind::Auth,
                message: "openrouter rejected the API key (HTTP 401: No auth credentials found). \
                          Set a valid key with `gsv config set apiKeys.openrouter <key>`."
                    .into(),
                retry_after_ms: None,
            }
        );
    }
}
