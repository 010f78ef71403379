//! Turns a provider's error answer (a non-2xx status, or an error object in
//! the middle of a stream) into an [`LlmError`] the shell can act on.
//!
//! Both APIs put the human-readable reason at `error.message`; compatible
//! servers vary (`{"error": "..."}` from Ollama, `{"detail": "..."}` from
//! FastAPI-based ones), so those are accepted too.

use serde_json::Value;

use super::retry::parse_retry_after;
use super::{LlmError, LlmErrorKind};

/// Classifies a non-2xx answer from `provider` (the configured name, used in
/// messages and in the `gsv config set apiKeys.<provider>` hint).
pub(crate) fn classify_http_error(
    provider: &str,
    status: u16,
    retry_after: Option<&str>,
    body: &str,
) -> LlmError {
    let detail = provider_message(body)
        .map(|m| format!(": {m}"))
        .unwrap_or_default();
    let kind = kind_for_status(status, body);
    let message = match kind {
        LlmErrorKind::Auth => format!(
            "{provider} rejected the API key (HTTP {status}{detail}). Set a valid key with \
             `gsv config set apiKeys.{provider} <key>`."
        ),
        LlmErrorKind::RateLimited => format!("{provider} is rate limiting requests (HTTP {status}{detail})"),
        LlmErrorKind::Server => format!("{provider} had a server error (HTTP {status}{detail})"),
        LlmErrorKind::ContextOverflow => format!(
            "The conversation does not fit the model's context window ({provider} HTTP {status}{detail})"
        ),
        _ => format!("{provider} rejected the request (HTTP {status}{detail})"),
    };
    LlmError {
        kind,
        message,
        retry_after_ms: retry_after.and_then(parse_retry_after),
    }
}

/// Classifies an `error` object sent inside an otherwise successful stream:
/// Anthropic's `{"type":"overloaded_error","message":"Overloaded"}`, OpenAI's
/// `{"message":..,"type":"server_error","code":..}` or OpenRouter's
/// `{"code":502,"message":..}`.
pub(crate) fn classify_stream_error(provider: &str, error: &Value) -> LlmError {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
        .unwrap_or("unknown error");
    let label = ["type", "code"]
        .iter()
        .find_map(|k| error.get(*k).and_then(Value::as_str))
        .unwrap_or("");
    let kind = match error.get("code").and_then(Value::as_u64) {
        Some(status) => kind_for_status(status as u16, message),
        None => kind_for_error_type(label, message),
    };
    let label = if label.is_empty() {
        String::new()
    } else {
        format!(" ({label})")
    };
    LlmError::new(
        kind,
        format!("{provider} reported an error mid-stream{label}: {message}"),
    )
}

fn kind_for_status(status: u16, body: &str) -> LlmErrorKind {
    match status {
        401 | 403 => LlmErrorKind::Auth,
        429 => LlmErrorKind::RateLimited,
        // 529 is Anthropic's "overloaded"; 52x are Cloudflare's origin errors.
        500..=599 => LlmErrorKind::Server,
        400 | 413 if mentions_context_overflow(body) => LlmErrorKind::ContextOverflow,
        _ => LlmErrorKind::Invalid,
    }
}

fn kind_for_error_type(label: &str, message: &str) -> LlmErrorKind {
    match label {
        "authentication_error" | "permission_error" | "invalid_api_key" => LlmErrorKind::Auth,
        l if l.contains("rate_limit") => LlmErrorKind::RateLimited,
        "context_length_exceeded" => LlmErrorKind::ContextOverflow,
        "invalid_request_error" | "request_too_large" | "not_found_error" => {
            if mentions_context_overflow(message) {
                LlmErrorKind::ContextOverflow
            } else {
                LlmErrorKind::Invalid
            }
        }
        // overloaded_error, api_error, server_error and unknown ones: failures
        // mid-stream are nearly always transient.
        _ => LlmErrorKind::Server,
    }
}

/// Phrases providers use when the prompt exceeds the context window
/// (OpenAI, Anthropic, Gemini, llama.cpp, vLLM).
fn mentions_context_overflow(text: &str) -> bool {
    const MARKERS: &[&str] = &[
        "context length",
        "context_length",
        "maximum context",
        "context window",
        "context size",
        "prompt is too long",
        "input is too long",
        "too many tokens",
        "exceeds the maximum number of tokens",
    ];
    let text = text.to_ascii_lowercase();
    MARKERS.iter().any(|m| text.contains(m))
}

/// The provider's own explanation from an error body, if it has one.
fn provider_message(body: &str) -> Option<String> {
    const MAX_CHARS: usize = 300;
    let text = match serde_json::from_str::<Value>(body) {
        Ok(json) => {
            // Gemini's endpoints sometimes wrap the error in a one-element array.
            let json = json.get(0).unwrap_or(&json);
            let candidates = [
                json.pointer("/error/message"),
                json.get("error"),
                json.get("message"),
                json.get("detail"),
            ];
            candidates
                .into_iter()
                .flatten()
                .find_map(Value::as_str)?
                .trim()
                .to_string()
        }
        // Not JSON: a proxy's HTML or plain-text page.
        Err(_) => body.trim().to_string(),
    };
    if text.is_empty() {
        return None;
    }
    Some(match text.char_indices().nth(MAX_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    })
}

/// A request to `provider` at `url` that failed in the network: before any
/// answer came (`answered` false: refused, unresolvable, reset) or while
/// the answer streamed. `detail` is the runtime's own text.
pub fn network_error(provider: &str, url: &str, answered: bool, detail: &str) -> LlmError {
    let origin = url_origin(url);
    let message = if answered {
        format!("the connection to {provider} at {origin} broke off during the answer: {detail}")
    } else {
        format!(
            "could not reach {provider} at {origin}: {detail}. Check the network, or \
             `providers.{provider}.baseUrl` if it should point elsewhere."
        )
    };
    LlmError::new(LlmErrorKind::Network, message)
}

/// `scheme://host[:port]` of a URL (the whole text if it has no scheme):
/// enough to say where a request went without repeating its path.
fn url_origin(url: &str) -> &str {
    let Some(scheme_end) = url.find("://") else {
        return url;
    };
    let rest = &url[scheme_end + 3..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    &url[..scheme_end + 3 + end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn network_errors_say_where_the_request_went() {
        assert_eq!(
            network_error(
                "anthropic",
                "https://api.anthropic.com/v1/messages",
                false,
                "Error: internal error; reference = abc"
            ),
            err(
                LlmErrorKind::Network,
                "could not reach anthropic at https://api.anthropic.com: Error: internal error; \
                 reference = abc. Check the network, or `providers.anthropic.baseUrl` if it \
                 should point elsewhere.",
                None
            )
        );
        assert_eq!(
            network_error("ollama", "http://127.0.0.1:11434/v1/chat/completions", true, "reset"),
            err(
                LlmErrorKind::Network,
                "the connection to ollama at http://127.0.0.1:11434 broke off during the answer: reset",
                None
            )
        );
        assert_eq!(url_origin("http://h:1?x=1"), "http://h:1");
        assert_eq!(url_origin("not a url"), "not a url");
    }

    fn err(kind: LlmErrorKind, message: &str, retry_after_ms: Option<u64>) -> LlmError {
        LlmError {
            kind,
            message: message.into(),
            retry_after_ms,
        }
    }

    #[test]
    fn openai_rate_limit_with_retry_after() {
        let body = r#"{"error":{"message":"Rate limit reached for gpt-4.1 on tokens per min (TPM).","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#;
        assert_eq!(
            classify_http_error("openai", 429, Some("20"), body),
            err(
                LlmErrorKind::RateLimited,
                "openai is rate limiting requests (HTTP 429: Rate limit reached for gpt-4.1 on tokens per min (TPM).)",
                Some(20_000)
            )
        );
    }

    #[test]
    fn auth_errors_name_the_config_key() {
        let body = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
        assert_eq!(
            classify_http_error("anthropic", 401, None, body),
            err(
                LlmErrorKind::Auth,
                "anthropic rejected the API key (HTTP 401: invalid x-api-key). Set a valid key with \
                 `gsv config set apiKeys.anthropic <key>`.",
                None
            )
        );
        assert_eq!(
            classify_http_error("openrouter", 403, None, "").kind,
            LlmErrorKind::Auth
        );
    }

    #[test]
    fn server_errors_including_overloaded_and_cloudflare() {
        let body = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(
            classify_http_error(
                "anthropic",
                529,
                Some("Wed, 21 Oct 2015 07:28:00 GMT"),
                body
            ),
            err(
                LlmErrorKind::Server,
                "anthropic had a server error (HTTP 529: Overloaded)",
                None
            )
        );
        for status in [500, 502, 503, 504, 522] {
            assert_eq!(
                classify_http_error("openai", status, None, "").kind,
                LlmErrorKind::Server
            );
        }
    }

    #[test]
    fn context_overflow_from_each_provider() {
        let bodies = [
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#,
            r#"[{"error":{"code":400,"message":"The input token count exceeds the maximum number of tokens allowed.","status":"INVALID_ARGUMENT"}}]"#,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#,
        ];
        for body in bodies {
            assert_eq!(
                classify_http_error("p", 400, None, body).kind,
                LlmErrorKind::ContextOverflow,
                "{body}"
            );
        }
        assert_eq!(
            classify_http_error("anthropic", 400, None, bodies[1]),
            err(
                LlmErrorKind::ContextOverflow,
                "The conversation does not fit the model's context window (anthropic HTTP 400: prompt is too long: 210000 tokens > 200000 maximum)",
                None
            )
        );
    }

    #[test]
    fn other_client_errors_are_invalid_with_the_provider_message() {
        assert_eq!(
            classify_http_error("ollama", 404, None, r#"{"error":"model \"llama9\" not found, try pulling it first"}"#),
            err(
                LlmErrorKind::Invalid,
                "ollama rejected the request (HTTP 404: model \"llama9\" not found, try pulling it first)",
                None
            )
        );
        assert_eq!(
            classify_http_error("vllm", 400, None, r#"{"detail":"bad tool schema"}"#).message,
            "vllm rejected the request (HTTP 400: bad tool schema)"
        );
        let html = format!("<html>{}</html>", "x".repeat(400));
        let msg = classify_http_error("proxy", 418, None, &html).message;
        assert_eq!(
            msg,
            format!(
                "proxy rejected the request (HTTP 418: <html>{}…)",
                "x".repeat(294)
            )
        );
    }

    #[test]
    fn stream_errors() {
        assert_eq!(
            classify_stream_error(
                "anthropic",
                &json!({"type":"overloaded_error","message":"Overloaded"})
            ),
            err(
                LlmErrorKind::Server,
                "anthropic reported an error mid-stream (overloaded_error): Overloaded",
                None
            )
        );
        assert_eq!(
            classify_stream_error(
                "openrouter",
                &json!({"code":429,"message":"Provider returned error"})
            ),
            err(
                LlmErrorKind::RateLimited,
                "openrouter reported an error mid-stream: Provider returned error",
                None
            )
        );
        let cases = [
            (
                json!({"type":"rate_limit_error","message":"slow down"}),
                LlmErrorKind::RateLimited,
            ),
            (
                json!({"type":"invalid_request_error","message":"bad"}),
                LlmErrorKind::Invalid,
            ),
            (
                json!({"type":"invalid_request_error","message":"prompt is too long"}),
                LlmErrorKind::ContextOverflow,
            ),
            (
                json!({"message":"boom","type":"server_error","code":null}),
                LlmErrorKind::Server,
            ),
            (
                json!({"type":"authentication_error","message":"no"}),
                LlmErrorKind::Auth,
            ),
            (json!("weird"), LlmErrorKind::Server),
        ];
        for (error, kind) in cases {
            assert_eq!(classify_stream_error("p", &error).kind, kind, "{error}");
        }
    }
}
