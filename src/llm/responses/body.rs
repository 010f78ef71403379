//! The Responses API request body.
//!
//! The whole conversation goes in `input` with every call (`store: false`:
//! nothing is kept at OpenAI between calls), as items: a user message, what
//! the assistant said, each tool call and each result are items of their
//! own, so one stored message may make several.

use gsv_protocol::{
    join_text, AssistantBlock, AssistantMessage, ContentBlock, Message, ToolDefinition,
    UserContent, UserMessage,
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

use super::API;
use crate::llm::transcript::{turns, ToolResult, Turn};
use crate::llm::written::{unwritten, write_entries};
use crate::llm::{raw, CacheTtl, Kept, LlmRequest, Prepared, ThinkingLevel, WrittenPrefix};

/// What `include` asks for when the model reasons: its reasoning,
/// encrypted, to send back with the next call (nothing is stored).
const ENCRYPTED_REASONING: &str = "reasoning.encrypted_content";

/// The body as JSON text. The system prompt and the tools' schemas are
/// written from where they are (borrowed, not copied into a `Value`): they
/// are the bulk of a body and the same in every call of a run.
pub(super) fn request_json(req: &LlmRequest) -> String {
    serde_json::to_string(&Body::of(req)).unwrap_or_default()
}

/// The system prompt and tools as `request_json` writes them (the API
/// caches a prefix on its own: nothing in them marks one).
pub(super) fn prepare(
    system_prompt: &str,
    tools: &[ToolDefinition],
    _ttl: Option<CacheTtl>,
) -> Prepared {
    Prepared::new(system_prompt, tools.iter().map(tool))
}

/// Each item `messages` make in a body's `input`, as written there.
pub(super) fn write_messages(messages: &[Message]) -> Vec<Box<RawValue>> {
    items(messages).iter().map(raw).collect()
}

/// The body as a value (the tests read it).
#[cfg(test)]
pub(super) fn request_body(req: &LlmRequest) -> Value {
    serde_json::to_value(Body::of(req)).unwrap_or_default()
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    /// The system prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<Kept<'a, &'a str>>,
    input: Input<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Kept<'a, Vec<Tool<'a>>>>,
    stream: bool,
    store: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Reasoning>,
    #[serde(skip_serializing_if = "Option::is_none")]
    include: Option<[&'static str; 1]>,
    /// Routes a conversation's calls to the servers caching its prefix.
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
}

impl<'a> Body<'a> {
    fn of(req: &'a LlmRequest) -> Self {
        let reasoning = effort(req.thinking).map(|effort| Reasoning {
            effort,
            summary: "auto",
        });
        Body {
            model: req.model,
            instructions: (!req.system_prompt.is_empty())
                .then(|| Kept::or_fresh(req.prepared.map(|p| &*p.system), || req.system_prompt)),
            input: Input {
                written: req.written,
                fresh: items(unwritten(req.messages, req.written)),
            },
            tools: (!req.tools.is_empty()).then(|| {
                Kept::or_fresh(req.prepared.map(|p| &*p.tools), || {
                    req.tools.iter().map(tool).collect()
                })
            }),
            stream: true,
            store: false,
            max_output_tokens: req.max_tokens,
            include: reasoning.as_ref().map(|_| [ENCRYPTED_REASONING]),
            reasoning,
            prompt_cache_key: req.cache.map(|c| c.key).filter(|k| !k.is_empty()),
        }
    }
}

#[derive(Serialize)]
struct Reasoning {
    effort: &'static str,
    /// Summaries are what can be shown of the reasoning (`auto`: the most
    /// detailed the model offers).
    summary: &'static str,
}

/// The API's effort for a level; `None` leaves the model's default.
fn effort(level: ThinkingLevel) -> Option<&'static str> {
    match level {
        ThinkingLevel::None => None,
        ThinkingLevel::Minimal => Some("minimal"),
        ThinkingLevel::Low => Some("low"),
        ThinkingLevel::Medium => Some("medium"),
        // The API has no level above "high".
        ThinkingLevel::High | ThinkingLevel::Xhigh => Some("high"),
    }
}

/// The items already written, then the rest.
struct Input<'a> {
    written: Option<WrittenPrefix<'a>>,
    fresh: Vec<Item<'a>>,
}

impl Serialize for Input<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        write_entries(&mut seq, self.written, &self.fresh)?;
        seq.end()
    }
}

/// A function tool: flat, not nested under `function` as in Chat
/// Completions.
#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
    /// The API makes tools strict unless told not to, and strict schemas
    /// must list every property as required and forbid others: the
    /// gateway's and the nodes' schemas do neither.
    strict: bool,
}

fn tool(t: &ToolDefinition) -> Tool<'_> {
    Tool {
        kind: "function",
        name: &t.name,
        description: &t.description,
        parameters: &t.input_schema,
        strict: false,
    }
}

/// One item of `input`, written from the message it comes from.
#[derive(Serialize)]
#[serde(untagged)]
enum Item<'a> {
    User {
        role: &'static str,
        content: Vec<Part<'a>>,
    },
    /// What the assistant said.
    Said {
        #[serde(rename = "type")]
        kind: &'static str,
        role: &'static str,
        content: [OutputText<'a>; 1],
    },
    Call {
        #[serde(rename = "type")]
        kind: &'static str,
        call_id: &'a str,
        name: &'a str,
        /// The arguments as JSON text, as the API has them.
        arguments: String,
    },
    Output {
        #[serde(rename = "type")]
        kind: &'static str,
        call_id: &'a str,
        output: String,
    },
    /// A reasoning item, sent back as it came.
    Reasoning(&'a RawValue),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    InputText {
        text: Cow<'a, str>,
    },
    InputImage {
        image_url: String,
        /// Required by the API; `auto` lets it choose.
        detail: &'static str,
    },
}

#[derive(Serialize)]
struct OutputText<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

/// The body's items for `messages` (the system prompt is `instructions`).
fn items(messages: &[Message]) -> Vec<Item<'_>> {
    let mut out = Vec::with_capacity(messages.len());
    for turn in turns(messages) {
        match turn {
            Turn::User(u) => out.push(user(u)),
            Turn::Assistant(a) => assistant(a, &mut out),
            Turn::ToolResults(results) => tool_results(&results, &mut out),
        }
    }
    out
}

/// A user message, then what the gateway attached to it (after its text,
/// or as one more text part), as Chat Completions sends it.
fn user(u: &UserMessage) -> Item<'_> {
    let context = u.context.as_deref().filter(|c| !c.is_empty());
    let content = match (&u.content, context) {
        (UserContent::Text(text), None) => vec![Part::InputText {
            text: Cow::Borrowed(text),
        }],
        (UserContent::Text(text), Some(context)) => vec![Part::InputText {
            text: match text.is_empty() {
                true => Cow::Borrowed(context),
                false => Cow::Owned(format!("{text}\n\n{context}")),
            },
        }],
        (UserContent::Blocks(blocks), context) => {
            let mut parts: Vec<Part> = blocks.iter().map(part).collect();
            parts.extend(context.map(|c| Part::InputText {
                text: Cow::Borrowed(c),
            }));
            parts
        }
    };
    Item::User {
        role: "user",
        content,
    }
}

fn part(block: &ContentBlock) -> Part<'_> {
    match block {
        ContentBlock::Text { text } => Part::InputText {
            text: Cow::Borrowed(text),
        },
        ContentBlock::Image { .. } => image(block),
        // The shell turns files into text before calling; the fallback names the file.
        ContentBlock::Attachment(a) => Part::InputText {
            text: Cow::Owned(crate::media::notes::unprepared(a)),
        },
    }
}

/// An image as a data URL (owned: a tool result's images outlive it).
fn image(block: &ContentBlock) -> Part<'static> {
    match block {
        ContentBlock::Image {
            data: Some(data),
            mime_type,
            ..
        } => Part::InputImage {
            image_url: format!("data:{mime_type};base64,{data}"),
            detail: "auto",
        },
        // The shell loads R2 images before calling; say so if one is missing.
        _ => Part::InputText {
            text: Cow::Borrowed("[image unavailable]"),
        },
    }
}

/// Text and tool calls, each an item, in the order the model made them.
/// Reasoning goes back only to this API, which made it (another API's
/// thinking cannot be sent as reasoning), and only before what it led to:
/// the API refuses a reasoning item that nothing follows.
fn assistant<'a>(a: &'a AssistantMessage, out: &mut Vec<Item<'a>>) {
    let replayed = a.api.as_deref() == Some(API);
    let mut items = Vec::new();
    for block in &a.content {
        match block {
            AssistantBlock::Thinking {
                thinking_signature: Some(signature),
                ..
            } if replayed => items.extend(reasoning_item(signature).map(Item::Reasoning)),
            AssistantBlock::Thinking { .. } => {}
            AssistantBlock::Text { text } if text.is_empty() => {}
            AssistantBlock::Text { text } => items.push(Item::Said {
                kind: "message",
                role: "assistant",
                content: [OutputText {
                    kind: "output_text",
                    text,
                }],
            }),
            AssistantBlock::ToolCall {
                id,
                name,
                arguments,
            } => items.push(Item::Call {
                kind: "function_call",
                call_id: id,
                name,
                arguments: arguments.to_string(),
            }),
        }
    }
    while matches!(items.last(), Some(Item::Reasoning(_))) {
        items.pop();
    }
    out.extend(items);
}

/// The reasoning item a thinking block keeps (the decoder stores it, as
/// the API sent it, in the signature), when it is one.
fn reasoning_item(signature: &str) -> Option<&RawValue> {
    #[derive(Deserialize)]
    struct Kind<'a> {
        #[serde(rename = "type", borrow)]
        kind: Cow<'a, str>,
    }
    let item: &RawValue = serde_json::from_str(signature).ok()?;
    let kind: Kind = serde_json::from_str(item.get()).ok()?;
    (kind.kind == "reasoning").then_some(item)
}

/// Each result is the output of its call. Outputs are text here, so images
/// from tool results follow in one user message, as in Chat Completions.
fn tool_results<'a>(results: &[ToolResult<'a>], out: &mut Vec<Item<'a>>) {
    let mut images = Vec::new();
    for r in results {
        let text = join_text(&r.content);
        let mut has_image = false;
        for block in r.content.iter() {
            if let ContentBlock::Image { .. } = block {
                has_image = true;
                images.push(image(block));
            }
        }
        out.push(Item::Output {
            kind: "function_call_output",
            call_id: r.tool_call_id,
            output: match text.is_empty() && has_image {
                true => "(see attached image)".to_string(),
                false => text,
            },
        });
    }
    if !images.is_empty() {
        let mut content = vec![Part::InputText {
            text: Cow::Borrowed("Attached image(s) from tool result:"),
        }];
        content.extend(images);
        out.push(Item::User {
            role: "user",
            content,
        });
    }
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
