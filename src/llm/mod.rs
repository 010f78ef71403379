//! LLM providers behind one small trait.
//!
//! A provider is pure: it turns an [`LlmRequest`] into an [`HttpRequest`] and
//! decodes the server-sent events of the streamed answer into text deltas and
//! a final [`AssistantMessage`]. The Worker shell (`crate::worker::llm_call`)
//! does the HTTP, the timeouts and the retries, so everything here is unit
//! tested natively.

pub mod anthropic;
mod http_error;
pub use http_error::network_error;
pub mod named;
pub mod openai;
pub mod prices;
pub mod responses;
pub mod retry;
pub mod sse;
#[cfg(test)]
mod test_messages;
mod transcript;
pub mod workers_ai;
mod written;

use gsv_protocol::{AssistantMessage, Message, ToolDefinition};
use serde::{Deserialize, Serialize};

pub use retry::RetryPolicy;
pub use sse::{SseEvent, SseParser, StreamReader};
pub use written::{WrittenHistory, WrittenPrefix};

/// How hard the model should think.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    #[default]
    None,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
}

impl ThinkingLevel {
    /// Accepts the v1 spellings: `off|none|0`, `minimal|min|1`, `low|2`,
    /// `medium|med|3`, `high|4`, `xhigh|max|5`.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" | "0" => Self::None,
            "minimal" | "min" | "1" => Self::Minimal,
            "low" | "2" => Self::Low,
            "medium" | "med" | "3" => Self::Medium,
            "high" | "4" => Self::High,
            "xhigh" | "max" | "5" => Self::Xhigh,
            _ => return None,
        })
    }
}

/// Where and how to reach a provider.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// Base URL without a trailing slash, e.g. `https://api.openai.com/v1`
    /// or `https://api.anthropic.com`.
    pub base_url: String,
    pub api_key: String,
}

/// How long a provider keeps a prompt prefix it cached
/// (`providers.<name>.cacheTtl`: `5m`, the default, or `1h`; `off` asks
/// for no caching).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheTtl {
    #[default]
    FiveMinutes,
    OneHour,
}

impl CacheTtl {
    /// The setting's value: `Some(None)` is `off`; `None` an unknown value.
    pub fn parse(s: &str) -> Option<Option<Self>> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "5m" => Some(Self::FiveMinutes),
            "1h" => Some(Self::OneHour),
            "off" => None,
            _ => return None,
        })
    }
}

/// Asks the provider to cache the request's prefix for later calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptCache<'a> {
    pub ttl: CacheTtl,
    /// Names the conversation for providers that route requests to the
    /// cache holding their prefix (OpenAI's `prompt_cache_key`).
    pub key: &'a str,
}

/// A conversation's `PromptCache::key`: its session key hashed, so the
/// provider is not told whom the session is with.
pub fn cache_key(session_key: &str) -> String {
    use sha2::{Digest, Sha256};
    let hash = Sha256::digest(session_key.as_bytes());
    let hex: String = hash.iter().take(12).map(|b| format!("{b:02x}")).collect();
    format!("gsv-{hex}")
}

/// One model call.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmRequest<'a> {
    pub model: &'a str,
    pub system_prompt: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolDefinition],
    pub thinking: ThinkingLevel,
    pub max_tokens: Option<u64>,
    /// `system_prompt` and `tools` as this provider writes them, when a
    /// caller kept them from an earlier call: then they are not written again.
    pub prepared: Option<&'a Prepared>,
    /// The first messages as this provider writes them, when a caller kept
    /// them from an earlier call (`WrittenHistory`): the rest is written.
    pub written: Option<WrittenPrefix<'a>>,
    /// Whether and how the provider should cache the prompt's prefix.
    pub cache: Option<PromptCache<'a>>,
}

/// The parts of a body that stay the same while a prompt does (a large
/// system prompt, every tool's schema), serialized once for a provider.
#[derive(Debug)]
pub struct Prepared {
    /// The system prompt as a JSON string.
    pub system: Box<serde_json::value::RawValue>,
    /// The tools as the provider's JSON array.
    pub tools: Box<serde_json::value::RawValue>,
}

impl PartialEq for Prepared {
    fn eq(&self, other: &Self) -> bool {
        self.system.get() == other.system.get() && self.tools.get() == other.tools.get()
    }
}

impl Prepared {
    /// The system prompt and the tools, each as the provider writes one.
    pub(crate) fn new<T: Serialize>(system_prompt: &str, tools: impl Iterator<Item = T>) -> Self {
        Self {
            system: raw(system_prompt),
            tools: raw(&tools.collect::<Vec<_>>()),
        }
    }
}

/// `value` as JSON text kept for later bodies.
fn raw<T: Serialize + ?Sized>(value: &T) -> Box<serde_json::value::RawValue> {
    // Text, schemas and messages (string-keyed maps) always serialize.
    serde_json::value::to_raw_value(value)
        .unwrap_or_else(|_| serde_json::value::RawValue::NULL.to_owned())
}

/// A body field written from where it is, or as kept JSON.
#[derive(serde::Serialize)]
#[serde(untagged)]
pub(crate) enum Kept<'a, T: serde::Serialize> {
    Fresh(T),
    Json(&'a serde_json::value::RawValue),
}

impl<'a, T: Serialize> Kept<'a, T> {
    /// The kept JSON when there is some, else `fresh()`.
    pub(crate) fn or_fresh(
        kept: Option<&'a serde_json::value::RawValue>,
        fresh: impl FnOnce() -> T,
    ) -> Self {
        match kept {
            Some(json) => Kept::Json(json),
            None => Kept::Fresh(fresh()),
        }
    }
}

/// Test support for both providers: for each `(system prompt, tools)`, the
/// body written with the parts `prepare` kept is the body written fresh,
/// byte for byte, with caching off and at each TTL.
#[cfg(test)]
pub(crate) fn assert_kept_parts_write_the_fresh_body(
    request_json: fn(&LlmRequest) -> String,
    prepare: fn(&str, &[ToolDefinition], Option<CacheTtl>) -> Prepared,
    model: &str,
    messages: &[Message],
    cases: Vec<(&str, Vec<ToolDefinition>)>,
) {
    let ttls = [None, Some(CacheTtl::FiveMinutes), Some(CacheTtl::OneHour)];
    for (system, tools) in cases {
        for ttl in ttls {
            let fresh = LlmRequest {
                model,
                system_prompt: system,
                messages,
                tools: &tools,
                thinking: ThinkingLevel::None,
                max_tokens: None,
                prepared: None,
                written: None,
                cache: ttl.map(|ttl| PromptCache { ttl, key: "k" }),
            };
            let prepared = prepare(system, &tools, ttl);
            let kept = LlmRequest {
                prepared: Some(&prepared),
                ..fresh.clone()
            };
            assert_eq!(
                request_json(&kept),
                request_json(&fresh),
                "{system:?} {ttl:?}"
            );
        }
    }
}

/// An HTTP request for the shell to send (always a POST with a JSON body).
#[derive(Debug, Clone, PartialEq)]
pub struct HttpRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// A JSON body's headers with `Authorization: Bearer` (OpenAI and the
/// servers speaking its APIs); none for an empty key: local servers need
/// none, and an empty Bearer upsets some.
pub(crate) fn bearer_json_headers(api_key: &str) -> Vec<(String, String)> {
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    if !api_key.is_empty() {
        headers.push(("authorization".to_string(), format!("Bearer {api_key}")));
    }
    headers
}

/// Why a model call failed, classified so the shell knows whether to retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LlmErrorKind {
    /// 429.
    RateLimited,
    /// 5xx or an overloaded error.
    Server,
    /// Connection failed or the stream broke.
    Network,
    /// No answer within `timeouts.llmMs`.
    Timeout,
    /// 401/403: the key is wrong.
    Auth,
    /// The prompt does not fit the model's context window.
    ContextOverflow,
    /// Any other 4xx, or an answer that cannot be decoded.
    Invalid,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmError {
    pub kind: LlmErrorKind,
    pub message: String,
    /// From `Retry-After` / `retry-after-ms`, when the server sent one.
    pub retry_after_ms: Option<u64>,
}

impl LlmError {
    pub fn new(kind: LlmErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            retry_after_ms: None,
        }
    }
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.kind,
            LlmErrorKind::RateLimited | LlmErrorKind::Server | LlmErrorKind::Network
        )
    }
}

impl std::fmt::Display for LlmError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Decodes one streamed answer, event by event.
pub trait StreamDecoder {
    /// Feed one SSE event; returns the text that became visible (may be empty).
    fn on_event(&mut self, event: &SseEvent) -> Result<String, LlmError>;
    /// The stream ended: the whole assistant message, with usage and stop reason.
    fn finish(self: Box<Self>, timestamp: i64) -> Result<AssistantMessage, LlmError>;
}

/// An LLM API (Anthropic Messages, OpenAI Chat Completions and compatibles).
pub trait Provider {
    /// The `api` name stored on assistant messages, e.g. `anthropic-messages`.
    fn api(&self) -> &'static str;
    /// Default base URL when `providers.<name>.baseUrl` is not configured.
    fn default_base_url(&self) -> &'static str;
    /// The Worker binding the calls go through instead of HTTP (its
    /// `run(model, body)`), for a provider reached that way.
    fn binding(&self) -> Option<&'static str> {
        None
    }
    fn build_request(&self, endpoint: &Endpoint, req: &LlmRequest) -> HttpRequest;
    /// `system_prompt` and `tools` serialized as `build_request` writes
    /// them for a request whose `cache` has `ttl`.
    fn prepare(
        &self,
        system_prompt: &str,
        tools: &[ToolDefinition],
        ttl: Option<CacheTtl>,
    ) -> Prepared;
    /// Each entry of a body's `messages` that `messages` make, as
    /// `build_request` writes it (for `WrittenHistory`).
    fn write_messages(&self, messages: &[Message]) -> Vec<Box<serde_json::value::RawValue>>;
    fn decoder(&self, provider_name: &str, model: &str) -> Box<dyn StreamDecoder>;
    /// Classifies a non-2xx answer (status, `Retry-After` header value, body).
    fn classify_error(&self, status: u16, retry_after: Option<&str>, body: &str) -> LlmError;
}

/// The provider implementation for a configured provider name: a named
/// provider's API (`named::NAMED`), else Chat Completions (llama.cpp's
/// server, vLLM and other compatible servers); `providers.<name>.api`
/// overrides either.
pub fn provider_for(name: &str, api_override: Option<&str>) -> Box<dyn Provider> {
    let api = named::named(name).map_or(openai::API, |n| n.api);
    match api_override.unwrap_or(api) {
        "anthropic-messages" | "anthropic" => Box::new(anthropic::Anthropic),
        responses::API => Box::new(responses::Responses::for_provider(name)),
        workers_ai::API => Box::new(workers_ai::WorkersAi),
        _ => Box::new(openai::OpenAi::for_provider(name)),
    }
}
