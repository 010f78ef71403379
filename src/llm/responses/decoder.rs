//! Decodes a streamed Responses API answer.
//!
//! The answer is a list of output items (reasoning, a message, function
//! calls), each announced (`response.output_item.added`), streamed in
//! deltas and then sent whole (`response.output_item.done`); the whole
//! item is what is kept, the deltas are what is shown meanwhile. The
//! stream ends with `response.completed` (or `.incomplete`), which carries
//! the usage, or fails with `response.failed` or an `error` event.

use gsv_protocol::{AssistantBlock, AssistantMessage, StopReason, Usage};
use serde::Deserialize;
use serde_json::{json, Value};

use super::API;
use crate::llm::http_error::classify_stream_error;
use crate::llm::{LlmError, LlmErrorKind, SseEvent, StreamDecoder};

pub(super) struct ResponsesDecoder {
    provider: String,
    model: String,
    /// The output items by `output_index`, in the order they came.
    items: Vec<(u64, Item)>,
    usage: Option<Usage>,
    end: Option<End>,
}

/// An output item as far as it came.
enum Item {
    /// Summary parts; the whole item once done, kept to be sent back.
    Reasoning {
        summary: Vec<String>,
        whole: Option<Value>,
    },
    Message {
        text: String,
    },
    Call {
        call_id: String,
        name: String,
        arguments: String,
    },
    /// Something the gateway does not use (a built-in tool's call).
    Other,
}

/// How the response ended.
#[derive(Debug, Clone, PartialEq)]
enum End {
    Completed,
    /// `incomplete_details.reason`: `max_output_tokens` or `content_filter`.
    Incomplete(String),
}

/// The parts of an event the decoder reads; the rest (ids, logprobs, the
/// echoed request in `response`) is skipped without being built.
#[derive(Debug, Default, Deserialize)]
struct Event {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    summary_index: Option<usize>,
    #[serde(default)]
    delta: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
    #[serde(default)]
    item: Option<Value>,
    #[serde(default)]
    response: Option<Response>,
    /// An `error` event's own fields, or its `error` object.
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
struct Response {
    #[serde(default)]
    usage: Option<Value>,
    #[serde(default)]
    incomplete_details: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
}

impl ResponsesDecoder {
    pub(super) fn new(provider: &str, model: &str) -> Self {
        Self {
            provider: provider.to_string(),
            model: model.to_string(),
            items: Vec::new(),
            usage: None,
            end: None,
        }
    }

    /// The item at `index`, made from `fresh` if it did not come yet.
    fn item(&mut self, index: Option<u64>, fresh: impl FnOnce() -> Item) -> &mut Item {
        // Without an index, the last item is the one streaming.
        let index = index
            .or_else(|| self.items.last().map(|(i, _)| *i))
            .unwrap_or(0);
        let at = match self.items.iter().position(|(i, _)| *i == index) {
            Some(at) => at,
            None => {
                self.items.push((index, fresh()));
                self.items.len() - 1
            }
        };
        &mut self.items[at].1
    }

    fn error(&self, error: &Value) -> LlmError {
        let code = error.get("code").and_then(Value::as_str).unwrap_or("");
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("unknown error");
        let mut err =
            classify_stream_error(&self.provider, &json!({"code": code, "message": message}));
        // The request's own faults (`invalid_prompt`, `invalid_image`,
        // `image_too_large`, …) fail again when retried.
        if err.kind == LlmErrorKind::Server
            && (code.starts_with("invalid") || code.contains("image"))
        {
            err.kind = LlmErrorKind::Invalid;
        }
        err
    }

    fn tool_call_block(
        &self,
        call_id: &str,
        name: &str,
        arguments: &str,
    ) -> Result<AssistantBlock, LlmError> {
        let raw = arguments.trim();
        let arguments = if raw.is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_str(raw).map_err(|e| {
                let cut_off = match &self.end {
                    Some(End::Incomplete(reason)) if reason == "max_output_tokens" => {
                        " (the answer hit the token limit)"
                    }
                    _ => "",
                };
                LlmError::new(
                    LlmErrorKind::Invalid,
                    format!(
                        "{} sent invalid JSON arguments for tool `{name}`{cut_off}: {e}",
                        self.provider
                    ),
                )
            })?
        };
        Ok(AssistantBlock::ToolCall {
            id: call_id.to_string(),
            name: name.to_string(),
            arguments,
        })
    }
}

/// An item as it was announced or finished.
fn item_of(item: &Value) -> Item {
    let text = |key: &str| {
        item.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    match item.get("type").and_then(Value::as_str) {
        Some("reasoning") => Item::Reasoning {
            summary: item
                .get("summary")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|s| s.get("text").and_then(Value::as_str))
                .map(str::to_string)
                .collect(),
            whole: None,
        },
        // Text and refusals alike are what the model said.
        Some("message") => Item::Message {
            text: item
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|part| {
                    part.get("text")
                        .or_else(|| part.get("refusal"))
                        .and_then(Value::as_str)
                })
                .collect(),
        },
        Some("function_call") => Item::Call {
            call_id: text("call_id"),
            name: text("name"),
            arguments: text("arguments"),
        },
        _ => Item::Other,
    }
}

fn usage_from(u: &Value) -> Usage {
    let count = |pointer: &str| u.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let input = count("/input_tokens");
    let cached = count("/input_tokens_details/cached_tokens");
    let output = count("/output_tokens");
    Usage {
        input: input.saturating_sub(cached),
        output,
        cache_read: cached,
        cache_write: 0,
        total_tokens: u
            .get("total_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(input + output),
    }
}

impl StreamDecoder for ResponsesDecoder {
    fn on_event(&mut self, event: &SseEvent) -> Result<String, LlmError> {
        let data = event.data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(String::new());
        }
        let mut e: Event = serde_json::from_str(data).map_err(|e| {
            LlmError::new(
                LlmErrorKind::Invalid,
                format!("{} sent an undecodable stream event: {e}", self.provider),
            )
        })?;
        if e.kind.is_empty() {
            e.kind = event.event.clone().unwrap_or_default();
        }
        match e.kind.as_str() {
            "response.output_item.added" => {
                if let Some(item) = &e.item {
                    let fresh = item_of(item);
                    *self.item(e.output_index, || Item::Other) = fresh;
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let delta = e.delta.unwrap_or_default();
                if let Item::Message { text } = self.item(e.output_index, || Item::Message {
                    text: String::new(),
                }) {
                    text.push_str(&delta);
                }
                return Ok(delta);
            }
            "response.reasoning_summary_text.delta" => {
                let at = e.summary_index.unwrap_or(0);
                let fresh = || Item::Reasoning {
                    summary: Vec::new(),
                    whole: None,
                };
                if let Item::Reasoning { summary, .. } = self.item(e.output_index, fresh) {
                    if summary.len() <= at {
                        summary.resize(at + 1, String::new());
                    }
                    summary[at].push_str(&e.delta.unwrap_or_default());
                }
            }
            "response.function_call_arguments.delta" | "response.function_call_arguments.done" => {
                let fresh = || Item::Call {
                    call_id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                };
                if let Item::Call { arguments, .. } = self.item(e.output_index, fresh) {
                    match (e.delta, e.arguments) {
                        (_, Some(whole)) => *arguments = whole,
                        (Some(delta), None) => arguments.push_str(&delta),
                        (None, None) => {}
                    }
                }
            }
            "response.output_item.done" => {
                if let Some(item) = e.item {
                    let mut done = item_of(&item);
                    if let Item::Reasoning { whole, .. } = &mut done {
                        *whole = Some(item);
                    }
                    *self.item(e.output_index, || Item::Other) = done;
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = e.response.unwrap_or_default();
                if let Some(usage) = response.usage.filter(Value::is_object) {
                    self.usage = Some(usage_from(&usage));
                }
                let reason = response
                    .incomplete_details
                    .as_ref()
                    .and_then(|d| d.get("reason"))
                    .and_then(Value::as_str);
                self.end = Some(match (e.kind.as_str(), reason) {
                    ("response.completed", None) => End::Completed,
                    (_, reason) => End::Incomplete(reason.unwrap_or("unknown").to_string()),
                });
            }
            "response.failed" => {
                let error = e.response.and_then(|r| r.error).unwrap_or(Value::Null);
                return Err(self.error(&error));
            }
            "error" => {
                let error = match e.error {
                    Some(error) if error.is_object() => error,
                    _ => json!({"code": e.code, "message": e.message}),
                };
                return Err(self.error(&error));
            }
            // Created, in progress, content and summary parts, the done
            // events of deltas: nothing the whole items will not say.
            _ => {}
        }
        Ok(String::new())
    }

    fn finish(self: Box<Self>, timestamp: i64) -> Result<AssistantMessage, LlmError> {
        let Some(end) = self.end.clone() else {
            return Err(LlmError::new(
                LlmErrorKind::Network,
                format!(
                    "the {} stream ended before the answer was complete",
                    self.provider
                ),
            ));
        };
        let mut items: Vec<&(u64, Item)> = self.items.iter().collect();
        items.sort_by_key(|(index, _)| *index);
        let mut content = Vec::new();
        let mut calls = false;
        for (_, item) in items {
            match item {
                Item::Reasoning { summary, whole } => {
                    let thinking = summary.join("\n\n");
                    if !thinking.is_empty() || whole.is_some() {
                        content.push(AssistantBlock::Thinking {
                            thinking,
                            // The item as it came, to be sent back.
                            thinking_signature: whole.as_ref().map(Value::to_string),
                        });
                    }
                }
                Item::Message { text } if text.is_empty() => {}
                Item::Message { text } => content.push(AssistantBlock::Text { text: text.clone() }),
                Item::Call {
                    call_id,
                    name,
                    arguments,
                } => {
                    calls = true;
                    content.push(self.tool_call_block(call_id, name, arguments)?);
                }
                Item::Other => {}
            }
        }
        let mut error_message = None;
        let stop_reason = match end {
            End::Incomplete(reason) if reason == "content_filter" => {
                error_message = Some(format!(
                    "{} stopped the answer with its content filter",
                    self.provider
                ));
                StopReason::Error
            }
            End::Incomplete(_) => StopReason::Length,
            End::Completed if calls => StopReason::ToolUse,
            End::Completed => StopReason::Stop,
        };
        Ok(AssistantMessage {
            content,
            api: Some(API.to_string()),
            provider: Some(self.provider),
            model: Some(self.model),
            usage: Some(self.usage.unwrap_or_default()),
            stop_reason: Some(stop_reason),
            error_message,
            timestamp,
        })
    }
}

#[cfg(test)]
#[path = "decoder_tests.rs"]
mod tests;
