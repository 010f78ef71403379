//! Decodes a streamed Messages API answer: `message_start`, then per content
//! block `content_block_start` / `_delta`s / `_stop`, then `message_delta`
//! (stop reason, output tokens) and `message_stop`; `ping`s and `error`s may
//! come at any point.

use gsv_protocol::{AssistantBlock, AssistantMessage, StopReason, Usage};
use serde_json::Value;

use super::API;
use crate::llm::http_error::classify_stream_error;
use crate::llm::{LlmError, LlmErrorKind, SseEvent, StreamDecoder};

pub(super) struct MessagesDecoder {
    provider: String,
    model: String,
    /// Content blocks with the stream's `index` for each.
    blocks: Vec<(u64, Block)>,
    usage: Usage,
    stop_reason: Option<String>,
    stopped: bool,
}

enum Block {
    Text(String),
    Thinking {
        thinking: String,
        signature: String,
    },
    ToolUse {
        id: String,
        name: String,
        partial_json: String,
        start_input: Value,
    },
    /// Blocks gsv does not keep (redacted thinking, server tool results).
    Ignored,
}

impl MessagesDecoder {
    pub(super) fn new(provider: &str, model: &str) -> Self {
        Self {
            provider: provider.to_string(),
            model: model.to_string(),
            blocks: Vec::new(),
            usage: Usage::default(),
            stop_reason: None,
            stopped: false,
        }
    }

    fn block_mut(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, b)| b)
    }

    /// `message_start` carries input and cache counts; `message_delta` the
    /// cumulative output (and, on newer API versions, the others again).
    fn read_usage(&mut self, usage: &Value) {
        let fields: [(&str, &mut u64); 4] = [
            ("input_tokens", &mut self.usage.input),
            ("output_tokens", &mut self.usage.output),
            ("cache_read_input_tokens", &mut self.usage.cache_read),
            ("cache_creation_input_tokens", &mut self.usage.cache_write),
        ];
        for (key, slot) in fields {
            if let Some(n) = usage.get(key).and_then(Value::as_u64) {
                *slot = n;
            }
        }
    }

    fn start_block(&mut self, index: u64, block: &Value) -> String {
        let str_field = |key: &str| {
            block
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let (block, visible) = match block.get("type").and_then(Value::as_str) {
            Some("text") => (Block::Text(str_field("text")), str_field("text")),
            Some("thinking") => (
                Block::Thinking {
                    thinking: str_field("thinking"),
                    signature: str_field("signature"),
                },
                String::new(),
            ),
            Some("tool_use") => (
                Block::ToolUse {
                    id: str_field("id"),
                    name: str_field("name"),
                    partial_json: String::new(),
                    start_input: block.get("input").cloned().unwrap_or(Value::Null),
                },
                String::new(),
            ),
            _ => (Block::Ignored, String::new()),
        };
        self.blocks.push((index, block));
        visible
    }

    fn apply_delta(&mut self, index: u64, delta: &Value) -> String {
        let text = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or("");
        let kind = delta.get("type").and_then(Value::as_str).unwrap_or("");
        match (self.block_mut(index), kind) {
            (Some(Block::Text(t)), "text_delta") => {
                t.push_str(text("text"));
                return text("text").to_string();
            }
            (Some(Block::Thinking { thinking, .. }), "thinking_delta") => {
                thinking.push_str(text("thinking"))
            }
            (Some(Block::Thinking { signature, .. }), "signature_delta") => {
                signature.push_str(text("signature"))
            }
            (Some(Block::ToolUse { partial_json, .. }), "input_json_delta") => {
                partial_json.push_str(text("partial_json"))
            }
            _ => {} // citations_delta, or a block we ignore
        }
        String::new()
    }

    fn final_block(&self, block: &Block) -> Result<Option<AssistantBlock>, LlmError> {
        Ok(match block {
            Block::Text(text) if text.is_empty() => None,
            Block::Text(text) => Some(AssistantBlock::Text { text: text.clone() }),
            Block::Thinking {
                thinking,
                signature,
            } => Some(AssistantBlock::Thinking {
                thinking: thinking.clone(),
                thinking_signature: (!signature.is_empty()).then(|| signature.clone()),
            }),
            Block::ToolUse {
                id,
                name,
                partial_json,
                start_input,
            } => {
                let arguments = if partial_json.trim().is_empty() {
                    match start_input {
                        Value::Object(_) => start_input.clone(),
                        _ => Value::Object(Default::default()),
                    }
                } else {
                    serde_json::from_str(partial_json).map_err(|e| {
                        let cut_off = if self.stop_reason.as_deref() == Some("max_tokens") {
                            " (the answer hit the token limit)"
                        } else {
                            ""
                        };
                        LlmError::new(
                            LlmErrorKind::Invalid,
                            format!(
                                "{} sent invalid JSON input for tool `{name}`{cut_off}: {e}",
                                self.provider
                            ),
                        )
                    })?
                };
                Some(AssistantBlock::ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments,
                })
            }
            Block::Ignored => None,
        })
    }
}

impl StreamDecoder for MessagesDecoder {
    fn on_event(&mut self, event: &SseEvent) -> Result<String, LlmError> {
        if event.data.trim().is_empty() {
            return Ok(String::new());
        }
        let data: Value = serde_json::from_str(&event.data).map_err(|e| {
            LlmError::new(
                LlmErrorKind::Invalid,
                format!("{} sent an undecodable stream event: {e}", self.provider),
            )
        })?;
        // `type` inside the data is authoritative; the `event:` line repeats it.
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .or(event.event.as_deref())
            .unwrap_or("");
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    self.read_usage(usage);
                }
            }
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                return Ok(self.start_block(index, block));
            }
            "content_block_delta" => {
                return Ok(self.apply_delta(index, data.get("delta").unwrap_or(&Value::Null)));
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(usage) = data.get("usage") {
                    self.read_usage(usage);
                }
            }
            "message_stop" => self.stopped = true,
            "error" => {
                return Err(classify_stream_error(
                    &self.provider,
                    data.get("error").unwrap_or(&Value::Null),
                ));
            }
            _ => {} // ping, content_block_stop, and event types added later
        }
        Ok(String::new())
    }

    fn finish(self: Box<Self>, timestamp: i64) -> Result<AssistantMessage, LlmError> {
        if !self.stopped && self.stop_reason.is_none() {
            return Err(LlmError::new(
                LlmErrorKind::Network,
                format!(
                    "the {} stream ended before the answer was complete",
                    self.provider
                ),
            ));
        }
        let mut content = Vec::new();
        for (_, block) in &self.blocks {
            content.extend(self.final_block(block)?);
        }
        let mut error_message = None;
        let stop_reason = match self.stop_reason.as_deref() {
            Some("tool_use") => StopReason::ToolUse,
            Some("max_tokens" | "model_context_window_exceeded") => StopReason::Length,
            Some("refusal") => {
                error_message = Some(format!("{} declined to answer (refusal)", self.provider));
                StopReason::Error
            }
            // end_turn, stop_sequence, pause_turn
            _ => StopReason::Stop,
        };
        let u = &self.usage;
        let usage = Usage {
            total_tokens: u.input + u.output + u.cache_read + u.cache_write,
            ..u.clone()
        };
        Ok(AssistantMessage {
            content,
            api: Some(API.to_string()),
            provider: Some(self.provider),
            model: Some(self.model),
            usage: Some(usage),
            stop_reason: Some(stop_reason),
            error_message,
            timestamp,
        })
    }
}

#[cfg(test)]
#[path = "decoder_tests.rs"]
mod tests;
