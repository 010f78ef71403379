//! Workers AI through the Worker's `AI` binding (`api: "workers-ai"`): a
//! deployed gateway answers with no API key at all.
//!
//! The binding's `run(model, inputs)` takes, for the chat models that call
//! tools (Kimi, GLM, Llama 4, gpt-oss, …), Chat Completions input, so the
//! body is the Chat Completions one. With `stream: true` it answers a stream
//! of server-sent events: `chat.completion.chunk`s for those models, or the
//! older `{"response": …}` events of the first text models; both are read
//! here. Errors are thrown, not answered, with Workers AI's internal codes
//! (<https://developers.cloudflare.com/workers-ai/platform/errors/>).

use super::openai::{body, decoder::ChatDecoder};
use super::{
    CacheTtl, Endpoint, HttpRequest, LlmError, LlmErrorKind, LlmRequest, Prepared, Provider,
    SseEvent, StreamDecoder,
};
use gsv_protocol::{AssistantMessage, Message, ToolDefinition};
use serde_json::{json, Value};

pub const API: &str = "workers-ai";
/// The binding the calls go through (`[ai] binding = "AI"`).
pub const BINDING: &str = "AI";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkersAi;

impl Provider for WorkersAi {
    fn api(&self) -> &'static str {
        API
    }

    /// No address: the binding is the way in.
    fn default_base_url(&self) -> &'static str {
        ""
    }

    fn binding(&self) -> Option<&'static str> {
        Some(BINDING)
    }

    /// The binding's inputs as the body; the URL only names the call in
    /// messages (`workers-ai:@cf/…`).
    fn build_request(&self, _endpoint: &Endpoint, req: &LlmRequest) -> HttpRequest {
        HttpRequest {
            url: format!("{API}:{}", req.model),
            headers: Vec::new(),
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

    fn write_messages(&self, messages: &[Message]) -> Vec<Box<serde_json::value::RawValue>> {
        body::write_messages(messages)
    }

    fn decoder(&self, provider_name: &str, model: &str) -> Box<dyn StreamDecoder> {
        Box::new(Decoder {
            chat: Box::new(ChatDecoder::new(provider_name, model)),
            legacy_calls: 0,
        })
    }

    /// The binding throws rather than answering a status; a status only
    /// comes from a double or a proxy in front of it.
    fn classify_error(&self, status: u16, _retry_after: Option<&str>, body: &str) -> LlmError {
        classify_thrown(&format!("{status}: {body}"))
    }
}

/// What the binding's thrown error says, classified: by Workers AI's
/// internal code when the message carries one, else by its words.
pub fn classify_thrown(message: &str) -> LlmError {
    use LlmErrorKind::*;
    // "AiError: 3040: …": the error's class adds nothing to its words.
    let message = message.trim();
    let message = match message.split_once(": ") {
        Some((class, rest))
            if class.ends_with("Error") && class.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            rest
        }
        _ => message,
    };
    let code = message
        .split(|c: char| !c.is_ascii_digit())
        .find(|digits| digits.len() == 4 && matches!(digits.as_bytes()[0], b'3' | b'5'));
    let lower = message.to_ascii_lowercase();
    let kind = match code {
        // Account limited (the day's free neurons), out of capacity.
        Some("3036" | "3040") => RateLimited,
        Some("3007" | "3008" | "3001") => Server,
        Some("3023" | "3041" | "5016" | "5018") => Auth,
        Some("3006" | "5021") => ContextOverflow,
        Some(_) => Invalid,
        None if lower.contains("context window") || lower.contains("too large") => ContextOverflow,
        None if ["capacity", "rate limit", "too many"]
            .iter()
            .any(|w| lower.contains(w)) =>
        {
            RateLimited
        }
        None if ["internal", "upstream", "timeout", "unavailable"]
            .iter()
            .any(|w| lower.contains(w)) =>
        {
            Server
        }
        None => Invalid,
    };
    let hint = match kind {
        Auth => {
            " (the account may not use this model: check its terms in the Cloudflare dashboard)"
        }
        _ => "",
    };
    LlmError::new(kind, format!("Workers AI: {message}{hint}"))
}

/// The events of an answer the binding gave whole (no stream): the
/// decoder reads them like a stream's.
pub fn whole_answer_events(answer: &str) -> Vec<SseEvent> {
    [answer, "[DONE]"]
        .into_iter()
        .map(|data| SseEvent {
            event: None,
            data: data.to_string(),
            id: None,
        })
        .collect()
}

/// Reads chunks as Chat Completions does; the older events (and whole
/// answers) are first written as the chunk they stand for.
struct Decoder {
    chat: Box<ChatDecoder>,
    /// Tool calls seen in older events (they carry no ids).
    legacy_calls: u64,
}

impl Decoder {
    /// `value` as a `chat.completion.chunk`, when it is not one.
    fn as_chunk(&mut self, value: Value) -> Value {
        if value.get("choices").is_some() || value.get("error").is_some() {
            return with_deltas(value);
        }
        let mut delta = serde_json::Map::new();
        if let Some(text) = value.get("response").and_then(Value::as_str) {
            delta.insert("content".into(), json!(text));
        }
        if let Some(Value::Array(calls)) = value.get("tool_calls") {
            let pieces: Vec<Value> = calls
                .iter()
                .map(|call| {
                    let index = self.legacy_calls;
                    self.legacy_calls += 1;
                    let arguments = match call.get("arguments") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => "{}".into(),
                    };
                    json!({"index": index, "id": format!("call_{index}"), "type": "function",
                        "function": {"name": call.get("name").cloned().unwrap_or_default(),
                            "arguments": arguments}})
                })
                .collect();
            delta.insert("tool_calls".into(), Value::Array(pieces));
        }
        let mut chunk = json!({"choices": [{"index": 0, "delta": delta}]});
        if let Some(usage) = value.get("usage") {
            chunk["usage"] = usage.clone();
        }
        chunk
    }
}

/// A whole answer's `message` read as its `delta`.
fn with_deltas(mut chunk: Value) -> Value {
    if let Some(Value::Array(choices)) = chunk.get_mut("choices") {
        for choice in choices {
            if let Some(message) = choice.as_object_mut().and_then(|c| c.remove("message")) {
                choice["delta"] = message;
            }
        }
    }
    chunk
}

impl StreamDecoder for Decoder {
    fn on_event(&mut self, event: &SseEvent) -> Result<String, LlmError> {
        let data = event.data.trim();
        // A streamed chunk as it is; only other shapes are rewritten.
        if data.contains("\"delta\"") {
            return self.chat.on_event(event);
        }
        let Ok(value @ Value::Object(_)) = serde_json::from_str::<Value>(data) else {
            return self.chat.on_event(event);
        };
        let chunk = self.as_chunk(value);
        self.chat.on_event(&SseEvent {
            event: event.event.clone(),
            data: chunk.to_string(),
            id: event.id.clone(),
        })
    }

    fn finish(self: Box<Self>, timestamp: i64) -> Result<AssistantMessage, LlmError> {
        let mut message = self.chat.finish(timestamp)?;
        message.api = Some(API.to_string());
        Ok(message)
    }
}

#[cfg(test)]
#[path = "workers_ai_tests.rs"]
mod tests;
