//! Decodes a streamed Chat Completions answer (`chat.completion.chunk`s).

use gsv_protocol::{AssistantBlock, AssistantMessage, StopReason, Usage};
use serde_json::Value;

use super::chunk::Chunk;
use super::API;
use crate::llm::http_error::classify_stream_error;
use crate::llm::{LlmError, LlmErrorKind, SseEvent, StreamDecoder};

pub(crate) struct ChatDecoder {
    provider: String,
    model: String,
    /// Text and thinking in arrival order; tool calls go after them.
    blocks: Vec<AssistantBlock>,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

/// A tool call whose pieces are still arriving.
struct PartialCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

impl ChatDecoder {
    pub(crate) fn new(provider: &str, model: &str) -> Self {
        Self {
            provider: provider.to_string(),
            model: model.to_string(),
            blocks: Vec::new(),
            calls: Vec::new(),
            finish_reason: None,
            usage: None,
            done: false,
        }
    }

    fn push_text(&mut self, delta: &str) {
        if let Some(AssistantBlock::Text { text }) = self.blocks.last_mut() {
            text.push_str(delta);
        } else {
            self.blocks.push(AssistantBlock::Text {
                text: delta.to_string(),
            });
        }
    }

    fn push_thinking(&mut self, delta: &str) {
        if let Some(AssistantBlock::Thinking { thinking, .. }) = self.blocks.last_mut() {
            thinking.push_str(delta);
        } else {
            self.blocks.push(AssistantBlock::Thinking {
                thinking: delta.to_string(),
                thinking_signature: None,
            });
        }
    }

    /// Tool calls arrive in pieces keyed by `index`: id and name first, then
    /// argument fragments. Some compatible servers omit the index (each call
    /// then comes whole, told apart by id) or send arguments as an object.
    fn push_tool_call(&mut self, piece: &Value) {
        let index = piece.get("index").and_then(Value::as_u64);
        let id = piece
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let function = piece.get("function").unwrap_or(&Value::Null);
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let slot = match (index, id, name) {
            (Some(i), _, _) => self.calls.iter().position(|c| c.index == i),
            (None, Some(id), _) => self.calls.iter().position(|c| c.id == id),
            // A name without index or id starts a new call.
            (None, None, Some(_)) => None,
            (None, None, None) => self.calls.len().checked_sub(1),
        };
        let slot = slot.unwrap_or_else(|| {
            let index = index.unwrap_or(self.calls.len() as u64);
            self.calls.push(PartialCall {
                index,
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
            });
            self.calls.len() - 1
        });
        let call = &mut self.calls[slot];
        if let (Some(id), true) = (id, call.id.is_empty()) {
            call.id = id.to_string();
        }
        if let (Some(name), true) = (name, call.name.is_empty()) {
            call.name = name.to_string();
        }
        match function.get("arguments") {
            Some(Value::String(fragment)) => call.arguments.push_str(fragment),
            Some(whole @ (Value::Object(_) | Value::Array(_))) => {
                call.arguments = whole.to_string()
            }
            _ => {}
        }
    }

    fn tool_call_block(&self, call: &PartialCall) -> Result<AssistantBlock, LlmError> {
        let raw = call.arguments.trim();
        let arguments = if raw.is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_str(raw).map_err(|e| {
                let cut_off = if self.finish_reason.as_deref() == Some("length") {
                    " (the answer hit the token limit)"
                } else {
                    ""
                };
                LlmError::new(
                    LlmErrorKind::Invalid,
                    format!(
                        "{} sent invalid JSON arguments for tool `{}`{cut_off}: {e}",
                        self.provider, call.name
                    ),
                )
            })?
        };
        let id = if call.id.is_empty() {
            format!("call_{}", call.index)
        } else {
            call.id.clone()
        };
        Ok(AssistantBlock::ToolCall {
            id,
            name: call.name.clone(),
            arguments,
        })
    }
}

fn usage_from(u: &Value) -> Usage {
    let count = |pointer: &str| u.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
    let prompt = count("/prompt_tokens");
    let cached = count("/prompt_tokens_details/cached_tokens");
    let output = count("/completion_tokens");
    Usage {
        input: prompt.saturating_sub(cached),
        output,
        cache_read: cached,
        cache_write: 0,
        total_tokens: u
            .get("total_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(prompt + output),
    }
}

impl StreamDecoder for ChatDecoder {
    fn on_event(&mut self, event: &SseEvent) -> Result<String, LlmError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(String::new());
        }
        if data.is_empty() {
            return Ok(String::new());
        }
        let chunk = Chunk::parse(data).map_err(|e| {
            LlmError::new(
                LlmErrorKind::Invalid,
                format!("{} sent an undecodable stream chunk: {e}", self.provider),
            )
        })?;
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            return Err(classify_stream_error(&self.provider, &error));
        }
        if let Some(usage) = chunk.usage.filter(Value::is_object) {
            self.usage = Some(usage_from(&usage));
        }
        let Some(choice) = chunk.choices.into_iter().next() else {
            return Ok(String::new()); // e.g. the final usage-only chunk
        };
        let delta = choice.delta;
        // Servers sending both send the same text twice.
        let thinking = [delta.reasoning_content, delta.reasoning]
            .into_iter()
            .flatten()
            .find(|s| !s.is_empty());
        if let Some(thinking) = thinking {
            self.push_thinking(&thinking);
        }
        let mut visible = String::new();
        if let Some(text) = delta.content.filter(|s| !s.is_empty()) {
            self.push_text(&text);
            visible = text;
        }
        if let Some(Value::Array(pieces)) = &delta.tool_calls {
            for piece in pieces {
                self.push_tool_call(piece);
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.finish_reason = Some(reason);
        }
        Ok(visible)
    }

    fn finish(self: Box<Self>, timestamp: i64) -> Result<AssistantMessage, LlmError> {
        if !self.done && self.finish_reason.is_none() {
            return Err(LlmError::new(
                LlmErrorKind::Network,
                format!(
                    "the {} stream ended before the answer was complete",
                    self.provider
                ),
            ));
        }
        let mut content = self.blocks.clone();
        for call in &self.calls {
            content.push(self.tool_call_block(call)?);
        }
        let mut error_message = None;
        let stop_reason = match self.finish_reason.as_deref() {
            Some("length") => StopReason::Length,
            Some("tool_calls" | "function_call") => StopReason::ToolUse,
            Some("content_filter") => {
                error_message = Some(format!(
                    "{} stopped the answer with its content filter",
                    self.provider
                ));
                StopReason::Error
            }
            // Some compatible servers say "stop" even when calling tools.
            _ if !self.calls.is_empty() => StopReason::ToolUse,
            _ => StopReason::Stop,
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
