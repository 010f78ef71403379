//! OpenAI's Responses API, streamed (`api: "openai-responses"`): what
//! OpenAI's reasoning models are made for. Their reasoning comes back
//! encrypted and goes back with the next call as it came, so a model keeps
//! its train of thought across tool calls while OpenAI stores nothing
//! (`store: false`).

mod body;
mod decoder;

use super::http_error::classify_http_error;
use super::{
    CacheTtl, Endpoint, HttpRequest, LlmError, LlmRequest, Prepared, Provider, StreamDecoder,
};
use gsv_protocol::{Message, ToolDefinition};
use serde_json::value::RawValue;

pub const API: &str = "openai-responses";

/// Where the API is when the provider is not one known by name.
const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// A Responses API provider; the name picks the default base URL and is
/// used in error messages (`gsv config set apiKeys.<name>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Responses {
    provider: String,
}

impl Responses {
    pub fn for_provider(name: &str) -> Self {
        Self {
            provider: name.to_string(),
        }
    }
}

impl Provider for Responses {
    fn api(&self) -> &'static str {
        API
    }

    /// A named provider's OpenAI-style base (`/v1`, where `/responses`
    /// is), else OpenAI's own.
    fn default_base_url(&self) -> &'static str {
        match super::named::named(&self.provider) {
            Some(named) if named.api == super::openai::API => named.base_url,
            _ => OPENAI_BASE_URL,
        }
    }

    fn build_request(&self, endpoint: &Endpoint, req: &LlmRequest) -> HttpRequest {
        let headers = super::bearer_json_headers(&endpoint.api_key);
        HttpRequest {
            url: format!("{}/responses", endpoint.base_url.trim_end_matches('/')),
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
        Box::new(decoder::ResponsesDecoder::new(provider_name, model))
    }

    /// OpenAI's error shape, as Chat Completions answers it.
    fn classify_error(&self, status: u16, retry_after: Option<&str>, body: &str) -> LlmError {
        classify_http_error(&self.provider, status, retry_after, body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{provider_for, LlmErrorKind, ThinkingLevel};
    use gsv_protocol::{UserContent, UserMessage};
    use serde_json::{json, Value};

    #[test]
    fn provider_for_picks_it_by_api_and_the_base_by_name() {
        let picked: Vec<(&str, &str)> = [
            ("openai", Some(API)),
            ("openrouter", Some(API)),
            ("my-proxy", Some(API)),
            ("openai", None),
        ]
        .iter()
        .map(|(name, api)| {
            let p = provider_for(name, *api);
            (p.api(), p.default_base_url())
        })
        .collect();
        assert_eq!(
            picked,
            vec![
                ("openai-responses", "https://api.openai.com/v1"),
                ("openai-responses", "https://openrouter.ai/api/v1"),
                ("openai-responses", "https://api.openai.com/v1"),
                ("openai-completions", "https://api.openai.com/v1"),
            ]
        );
    }

    #[test]
    fn http_request_goes_to_responses_with_the_key() {
        let messages = vec![Message::User(UserMessage {
            content: UserContent::Text("hi".into()),
            timestamp: 1,
            context: None,
        })];
        let req = LlmRequest {
            model: "gpt-5",
            system_prompt: "",
            messages: &messages,
            tools: &[],
            thinking: ThinkingLevel::None,
            max_tokens: None,
            prepared: None,
            written: None,
            cache: None,
        };
        let endpoint = Endpoint {
            base_url: "https://api.openai.com/v1/".into(),
            api_key: "sk-1".into(),
        };
        let http = Responses::for_provider("openai").build_request(&endpoint, &req);
        assert_eq!(
            (
                http.url,
                http.headers,
                serde_json::from_str::<Value>(&http.body).unwrap()
            ),
            (
                "https://api.openai.com/v1/responses".to_string(),
                vec![
                    ("content-type".to_string(), "application/json".to_string()),
                    ("authorization".to_string(), "Bearer sk-1".to_string()),
                ],
                json!({"model": "gpt-5",
                    "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
                    "stream": true, "store": false})
            )
        );
    }

    #[test]
    fn http_errors_are_read_as_openai_words_them() {
        let body = r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#;
        assert_eq!(
            Responses::for_provider("openai").classify_error(400, None, body),
            LlmError {
                kind: LlmErrorKind::ContextOverflow,
                message:
                    "The conversation does not fit the model's context window (openai HTTP 400: \
                          Your input exceeds the context window of this model. Please adjust your \
                          input and try again.)"
                        .into(),
                retry_after_ms: None,
            }
        );
    }
}
