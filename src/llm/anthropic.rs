//! Anthropic Messages API, streamed (`api: "anthropic-messages"`).

mod body;
mod decoder;

use super::http_error::classify_http_error;
use super::{
    CacheTtl, Endpoint, HttpRequest, LlmError, LlmRequest, Prepared, Provider, StreamDecoder,
};
use gsv_protocol::{Message, ToolDefinition};
use serde_json::value::RawValue;

pub const API: &str = "anthropic-messages";
pub const API_VERSION: &str = "2023-06-01";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Anthropic;

impl Provider for Anthropic {
    fn api(&self) -> &'static str {
        API
    }

    fn default_base_url(&self) -> &'static str {
        "https://api.anthropic.com"
    }

    fn build_request(&self, endpoint: &Endpoint, req: &LlmRequest) -> HttpRequest {
        HttpRequest {
            url: format!("{}/v1/messages", endpoint.base_url.trim_end_matches('/')),
            headers: vec![
                ("x-api-key".to_string(), endpoint.api_key.clone()),
                ("anthropic-version".to_string(), API_VERSION.to_string()),
                ("content-type".to_string(), "application/json".to_string()),
            ],
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
        Box::new(decoder::MessagesDecoder::new(provider_name, model))
    }

    fn classify_error(&self, status: u16, retry_after: Option<&str>, body: &str) -> LlmError {
        classify_http_error("anthropic", status, retry_after, body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{provider_for, LlmErrorKind, ThinkingLevel};
    use gsv_protocol::{Message, UserContent, UserMessage};
    use serde_json::{json, Value};

    #[test]
    fn http_request() {
        let messages = vec![Message::User(UserMessage {
            content: UserContent::Text("hi".into()),
            timestamp: 1,
            context: None,
        })];
        let req = LlmRequest {
            model: "claude-sonnet-4-5",
            system_prompt: "Be brief.",
            messages: &messages,
            tools: &[],
            thinking: ThinkingLevel::None,
            max_tokens: None,
            prepared: None,
            written: None,
            cache: None,
        };
        let endpoint = Endpoint {
            base_url: "https://api.anthropic.com".into(),
            api_key: "sk-ant-1".into(),
        };
        let http = Anthropic.build_request(&endpoint, &req);
        assert_eq!(
            (
                http.url,
                http.headers,
                serde_json::from_str::<Value>(&http.body).unwrap()
            ),
            (
                "https://api.anthropic.com/v1/messages".to_string(),
                vec![
                    ("x-api-key".to_string(), "sk-ant-1".to_string()),
                    ("anthropic-version".to_string(), "2023-06-01".to_string()),
                    ("content-type".to_string(), "application/json".to_string()),
                ],
                json!({"model":"claude-sonnet-4-5","system":"Be brief.","max_tokens":8192,
                    "messages":[{"role":"user","content":"hi"}],"stream":true}),
            )
        );
        assert_eq!(Anthropic.default_base_url(), "https://api.anthropic.com");
        assert_eq!(provider_for("anthropic", None).api(), "anthropic-messages");
        assert_eq!(
            provider_for("proxy", Some("anthropic-messages")).api(),
            "anthropic-messages"
        );
    }

    #[test]
    fn classify_error_real_bodies() {
        let overloaded = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}"#;
        assert_eq!(
            Anthropic.classify_error(529, None, overloaded),
            LlmError {
                kind: LlmErrorKind::Server,
                message: "anthropic had a server error (HTTP 529: Overloaded)".into(),
                retry_after_ms: None,
            }
        );
        let rate = r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 50 requests per minute."}}"#;
        assert_eq!(
            Anthropic.classify_error(429, Some("13"), rate),
            LlmError {
                kind: LlmErrorKind::RateLimited,
                message: "anthropic is rate limiting requests (HTTP 429: This request would exceed the rate \
                          limit for your organization of 50 requests per minute.)"
                    .into(),
                retry_after_ms: Some(13_000),
            }
        );
    }
}
