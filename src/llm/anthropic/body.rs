//! The Messages API request body.

use gsv_protocol::{
    AssistantBlock, AssistantMessage, ContentBlock, Message, ToolDefinition, UserContent,
};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

use crate::llm::transcript::{turns, ToolResult, Turn};
use crate::llm::written::{unwritten, write_entries};
use crate::llm::{raw, Kept, LlmRequest, Prepared, ThinkingLevel, WrittenPrefix};

/// `max_tokens` when the request sets none (the API requires one).
const DEFAULT_MAX_TOKENS: u64 = 8192;
/// The API's smallest thinking budget.
const MIN_BUDGET: u64 = 1024;
/// The default `max_tokens` with thinking stays within the smallest output
/// limit of Anthropic's thinking models (Claude Opus 4/4.1: 32000).
const MAX_DEFAULT_WITH_THINKING: u64 = 32_000;

/// The body as JSON text. The system prompt and the tools' schemas are
/// written from where they are (borrowed, not copied into a `Value`): they
/// are the bulk of a body and the same in every call of a run. So are the
/// messages' texts.
pub(super) fn request_json(req: &LlmRequest) -> String {
    let turns = turns(unwritten(req.messages, req.written));
    serde_json::to_string(&Body::of(req, &turns)).unwrap_or_default()
}

/// Each entry `messages` make in a body's `messages`, as written there.
pub(super) fn write_messages(messages: &[Message]) -> Vec<Box<RawValue>> {
    messages_of(&turns(messages)).iter().map(raw).collect()
}

/// The system prompt and tools as `request_json` writes them.
pub(super) fn prepare(system_prompt: &str, tools: &[ToolDefinition]) -> Prepared {
    Prepared::new(system_prompt, tools.iter().map(tool))
}

/// The body as a value (the tests read it).
#[cfg(test)]
pub(super) fn request_body(req: &LlmRequest) -> Value {
    let turns = turns(unwritten(req.messages, req.written));
    serde_json::to_value(Body::of(req, &turns)).unwrap_or_default()
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<Kept<'a, &'a str>>,
    messages: Messages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Kept<'a, Vec<Tool<'a>>>>,
    max_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    stream: bool,
}

/// The messages already written, then the rest.
struct Messages<'a> {
    written: Option<WrittenPrefix<'a>>,
    fresh: Vec<Msg<'a>>,
}

impl Serialize for Messages<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        write_entries(&mut seq, self.written, &self.fresh)?;
        seq.end()
    }
}

#[derive(Serialize)]
struct Msg<'a> {
    role: &'static str,
    content: MsgContent<'a>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum MsgContent<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

/// A content block, written from the message it comes from.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Text {
        text: Cow<'a, str>,
    },
    Image {
        source: ImageSource<'a>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    ToolUse {
        id: String,
        name: &'a str,
        input: Cow<'a, Value>,
    },
    ToolResult {
        tool_use_id: String,
        /// Optional in the API; empty is rejected.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        content: Vec<Block<'a>>,
        is_error: bool,
    },
}

#[derive(Serialize)]
struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
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
    fn of(req: &'a LlmRequest, turns: &'a [Turn<'a>]) -> Self {
        let (max_tokens, budget) = max_tokens_and_budget(req.thinking, req.max_tokens);
        Body {
            model: req.model,
            system: (!req.system_prompt.is_empty())
                .then(|| Kept::or_fresh(req.prepared.map(|p| &*p.system), || req.system_prompt)),
            messages: Messages {
                written: req.written,
                fresh: messages_of(turns),
            },
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

fn messages_of<'a>(turns: &'a [Turn<'a>]) -> Vec<Msg<'a>> {
    let mut out = Vec::with_capacity(turns.len());
    for turn in turns {
        match turn {
            Turn::User(u) => out.push(Msg {
                role: "user",
                content: match &u.content {
                    UserContent::Text(text) => MsgContent::Text(text),
                    UserContent::Blocks(blocks) => MsgContent::Blocks(content_blocks(blocks)),
                },
            }),
            Turn::Assistant(a) => out.extend(assistant(a)),
            // All results of one assistant turn go back in one user message.
            Turn::ToolResults(results) => out.push(Msg {
                role: "user",
                content: MsgContent::Blocks(results.iter().map(tool_result).collect()),
            }),
        }
    }
    out
}

/// Text and image blocks; the API rejects empty text blocks.
fn content_blocks(blocks: &[ContentBlock]) -> Vec<Block<'_>> {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } if text.is_empty() => None,
            ContentBlock::Text { text } => Some(Block::Text {
                text: Cow::Borrowed(text),
            }),
            ContentBlock::Image {
                data: Some(data),
                mime_type,
                ..
            } => Some(Block::Image {
                source: ImageSource {
                    kind: "base64",
                    media_type: mime_type,
                    data,
                },
            }),
            // The shell loads R2 images before calling; say so if one is missing.
            ContentBlock::Image { data: None, .. } => Some(Block::Text {
                text: Cow::Borrowed("[image unavailable]"),
            }),
            // The shell turns files into text before calling; the fallback names the file.
            ContentBlock::Attachment(a) => Some(Block::Text {
                text: Cow::Owned(crate::media::notes::unprepared(a)),
            }),
        })
        .collect()
}

fn assistant(a: &AssistantMessage) -> Option<Msg<'_>> {
    let blocks: Vec<Block> = a
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Text { text } if text.is_empty() => None,
            AssistantBlock::Text { text } => Some(Block::Text {
                text: Cow::Borrowed(text),
            }),
            // Only signed thinking can go back (the API verifies it); thinking
            // from another provider is dropped.
            AssistantBlock::Thinking {
                thinking,
                thinking_signature: Some(signature),
            } if !signature.is_empty() => Some(Block::Thinking {
                thinking,
                signature,
            }),
            AssistantBlock::Thinking { .. } => None,
            AssistantBlock::ToolCall {
                id,
                name,
                arguments,
            } => Some(Block::ToolUse {
                id: tool_use_id(id),
                name,
                input: match arguments.is_object() {
                    true => Cow::Borrowed(arguments),
                    false => Cow::Owned(Value::Object(Default::default())),
                },
            }),
        })
        .collect();
    (!blocks.is_empty()).then_some(Msg {
        role: "assistant",
        content: MsgContent::Blocks(blocks),
    })
}

fn tool_result<'a>(r: &'a ToolResult<'a>) -> Block<'a> {
    Block::ToolResult {
        tool_use_id: tool_use_id(r.tool_call_id),
        content: content_blocks(&r.content),
        is_error: r.is_error,
    }
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
