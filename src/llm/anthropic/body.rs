//! The Messages API request body.

use gsv_protocol::{AssistantBlock, AssistantMessage, ContentBlock, ToolDefinition, UserContent};
use serde::Serialize;
use serde_json::{json, Value};

use crate::llm::transcript::{turns, ToolResult, Turn};
use crate::llm::{Kept, LlmRequest, Prepared, ThinkingLevel};

/// `max_tokens` when the request sets none (the API requires one).
const DEFAULT_MAX_TOKENS: u64 = 8192;
/// The API's smallest thinking budget.
const MIN_BUDGET: u64 = 1024;
/// The default `max_tokens` with thinking stays within the smallest output
/// limit of Anthropic's thinking models (Claude Opus 4/4.1: 32000).
const MAX_DEFAULT_WITH_THINKING: u64 = 32_000;

/// The body as JSON text. The system prompt and the tools' schemas are
/// written from where they are (borrowed, not copied into a `Value`): they
/// are the bulk of a body and the same in every call of a run.
pub(super) fn request_json(req: &LlmRequest) -> String {
    serde_json::to_string(&Body::of(req)).unwrap_or_default()
}

/// The system prompt and tools as `request_json` writes them.
pub(super) fn prepare(system_prompt: &str, tools: &[ToolDefinition]) -> Prepared {
    Prepared::new(system_prompt, tools.iter().map(tool))
}

/// The body as a value (the tests read it).
#[cfg(test)]
pub(super) fn request_body(req: &LlmRequest) -> Value {
    serde_json::to_value(Body::of(req)).unwrap_or_default()
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<Kept<'a, &'a str>>,
    messages: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Kept<'a, Vec<Tool<'a>>>>,
    max_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    stream: bool,
}

#[derive(Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u64,
}

#[derive(Serialize)]
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

impl<'a> Body<'a> {
    fn of(req: &'a LlmRequest) -> Self {
        let (max_tokens, budget) = max_tokens_and_budget(req.thinking, req.max_tokens);
        Body {
            model: req.model,
            system: (!req.system_prompt.is_empty())
                .then(|| Kept::or_fresh(req.prepared.map(|p| &*p.system), || req.system_prompt)),
            messages: messages(req),
            tools: (!req.tools.is_empty()).then(|| {
                Kept::or_fresh(req.prepared.map(|p| &*p.tools), || {
                    req.tools.iter().map(tool).collect()
                })
            }),
            max_tokens,
            thinking: budget.map(|budget_tokens| Thinking {
                kind: "enabled",
                budget_tokens,
            }),
            stream: true,
        }
    }
}

fn thinking_budget(level: ThinkingLevel) -> Option<u64> {
    match level {
        ThinkingLevel::None => None,
        ThinkingLevel::Minimal => Some(1024),
        ThinkingLevel::Low => Some(2048),
        ThinkingLevel::Medium => Some(8192),
        ThinkingLevel::High => Some(16384),
        ThinkingLevel::Xhigh => Some(32000),
    }
}

/// `max_tokens` counts thinking too and must exceed the budget. Without an
/// explicit limit the answer gets `DEFAULT_MAX_TOKENS` on top of the budget
/// (capped); an explicit limit is kept and the budget shrinks to leave at
/// least `MIN_BUDGET` for the answer, or thinking is dropped if it cannot.
fn max_tokens_and_budget(level: ThinkingLevel, requested: Option<u64>) -> (u64, Option<u64>) {
    let Some(budget) = thinking_budget(level) else {
        return (requested.unwrap_or(DEFAULT_MAX_TOKENS), None);
    };
    let max_tokens =
        requested.unwrap_or((budget + DEFAULT_MAX_TOKENS).min(MAX_DEFAULT_WITH_THINKING));
    let budget = budget.min(max_tokens.saturating_sub(MIN_BUDGET));
    (max_tokens, (budget >= MIN_BUDGET).then_some(budget))
}

fn tool(t: &ToolDefinition) -> Tool<'_> {
    Tool {
        name: &t.name,
        description: &t.description,
        input_schema: &t.input_schema,
    }
}

fn messages(req: &LlmRequest) -> Vec<Value> {
    let mut out = Vec::new();
    for turn in turns(req.messages) {
        match turn {
            Turn::User(u) => out.push(match &u.content {
                UserContent::Text(text) => json!({ "role": "user", "content": text }),
                UserContent::Blocks(blocks) => {
                    json!({ "role": "user", "content": content_blocks(blocks) })
                }
            }),
            Turn::Assistant(a) => out.extend(assistant(a)),
            // All results of one assistant turn go back in one user message.
            Turn::ToolResults(results) => out.push(json!({
                "role": "user",
                "content": results.iter().map(tool_result).collect::<Vec<_>>(),
            })),
        }
    }
    out
}

/// Text and image blocks; the API rejects empty text blocks.
fn content_blocks(blocks: &[ContentBlock]) -> Vec<Value> {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } if text.is_empty() => None,
            ContentBlock::Text { text } => Some(json!({ "type": "text", "text": text })),
            ContentBlock::Image {
                data: Some(data),
                mime_type,
                ..
            } => Some(json!({
                "type": "image",
                "source": { "type": "base64", "media_type": mime_type, "data": data },
            })),
            // The shell loads R2 images before calling; say so if one is missing.
            ContentBlock::Image { data: None, .. } => {
                Some(json!({ "type": "text", "text": "[image unavailable]" }))
            }
            // The shell turns files into text before calling; the fallback names the file.
            ContentBlock::Attachment(a) => {
                Some(json!({ "type": "text", "text": crate::media::notes::unprepared(a) }))
            }
        })
        .collect()
}

fn assistant(a: &AssistantMessage) -> Option<Value> {
    let blocks: Vec<Value> = a
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Text { text } if text.is_empty() => None,
            AssistantBlock::Text { text } => Some(json!({ "type": "text", "text": text })),
            // Only signed thinking can go back (the API verifies it); thinking
            // from another provider is dropped.
            AssistantBlock::Thinking {
                thinking,
                thinking_signature: Some(signature),
            } if !signature.is_empty() => {
                Some(json!({ "type": "thinking", "thinking": thinking, "signature": signature }))
            }
            AssistantBlock::Thinking { .. } => None,
            AssistantBlock::ToolCall {
                id,
                name,
                arguments,
            } => Some(json!({
                "type": "tool_use",
                "id": tool_use_id(id),
                "name": name,
                "input": if arguments.is_object() { arguments.clone() } else { json!({}) },
            })),
        })
        .collect();
    (!blocks.is_empty()).then(|| json!({ "role": "assistant", "content": blocks }))
}

fn tool_result(r: &ToolResult) -> Value {
    let mut block = json!({ "type": "tool_result", "tool_use_id": tool_use_id(r.tool_call_id) });
    let content = content_blocks(&r.content);
    if !content.is_empty() {
        block["content"] = Value::Array(content); // optional in the API; empty is rejected
    }
    block["is_error"] = json!(r.is_error);
    block
}

/// The API requires ids matching `^[a-zA-Z0-9_-]+$`; calls made by other
/// providers may use other characters.
fn tool_use_id(id: &str) -> String {
    let id: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if id.is_empty() {
        "_".into()
    } else {
        id
    }
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
