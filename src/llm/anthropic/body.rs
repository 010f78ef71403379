//! The Messages API request body.

use gsv_protocol::{
    AssistantBlock, AssistantMessage, ContentBlock, Message, ToolDefinition, UserContent,
    UserMessage,
};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;

use crate::llm::transcript::{turns, ToolResult, Turn};
use crate::llm::written::{unwritten, write_entries};
use crate::llm::{raw, CacheTtl, Kept, LlmRequest, Prepared, ThinkingLevel, WrittenPrefix};

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
pub(super) fn prepare(
    system_prompt: &str,
    tools: &[ToolDefinition],
    ttl: Option<CacheTtl>,
) -> Prepared {
    Prepared {
        system: raw(&System::of(system_prompt, ttl)),
        tools: raw(&tools_of(tools, ttl)),
    }
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
    system: Option<Kept<'a, System<'a>>>,
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
    #[serde(serialize_with = "marked_content")]
    content: (MsgContent<'a>, Option<CacheControl>),
}

impl<'a> Msg<'a> {
    fn new(role: &'static str, content: MsgContent<'a>) -> Self {
        Msg {
            role,
            content: (content, None),
        }
    }
}

/// A message's content, its last block marked when the message ends a
/// prefix to cache (plain text becomes one text block for that; thinking
/// cannot be marked, so a block before it is).
fn marked_content<S: serde::Serializer>(
    (content, mark): &(MsgContent, Option<CacheControl>),
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let text_block;
    let blocks: &[Block] = match (content, mark) {
        (_, None) => return content.serialize(s),
        (MsgContent::Text(text), Some(_)) => {
            text_block = [Block::Text {
                text: Cow::Borrowed(text),
            }];
            &text_block
        }
        (MsgContent::Blocks(blocks), Some(_)) => blocks,
    };
    let marked = blocks
        .iter()
        .rposition(|b| !matches!(b, Block::Thinking { .. }));
    let mut seq = s.serialize_seq(Some(blocks.len()))?;
    for (i, block) in blocks.iter().enumerate() {
        if Some(i) != marked {
            seq.serialize_element(block)?;
            continue;
        }
        let mut block = serde_json::to_value(block).map_err(serde::ser::Error::custom)?;
        if let Value::Object(fields) = &mut block {
            fields.insert("cache_control".into(), serde_json::json!(mark));
        }
        seq.serialize_element(&block)?;
    }
    seq.end()
}

/// Marks the end of a prefix the API is to cache (`cache_control`).
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
    /// Absent for the API's default of five minutes.
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl: Option<&'static str>,
}

impl CacheControl {
    fn of(ttl: CacheTtl) -> Self {
        CacheControl {
            kind: "ephemeral",
            ttl: match ttl {
                CacheTtl::FiveMinutes => None,
                CacheTtl::OneHour => Some("1h"),
            },
        }
    }
}

/// The system prompt: plain text, or one text block marked for caching
/// (with the tools before it, the prefix every call of a session shares).
#[derive(Serialize)]
#[serde(untagged)]
enum System<'a> {
    Text(&'a str),
    Marked([SystemText<'a>; 1]),
}

#[derive(Serialize)]
struct SystemText<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    cache_control: CacheControl,
}

impl<'a> System<'a> {
    fn of(text: &'a str, ttl: Option<CacheTtl>) -> Self {
        match ttl {
            None => System::Text(text),
            Some(ttl) => System::Marked([SystemText {
                kind: "text",
                text,
                cache_control: CacheControl::of(ttl),
            }]),
        }
    }
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
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

impl<'a> Body<'a> {
    fn of(req: &'a LlmRequest, turns: &'a [Turn<'a>]) -> Self {
        let (max_tokens, budget) = max_tokens_and_budget(req.thinking, req.max_tokens);
        let ttl = req.cache.map(|c| c.ttl);
        let mut fresh = messages_of(turns);
        if let Some(ttl) = ttl {
            mark_history(&mut fresh, CacheControl::of(ttl));
        }
        Body {
            model: req.model,
            system: (!req.system_prompt.is_empty()).then(|| {
                Kept::or_fresh(req.prepared.map(|p| &*p.system), || {
                    System::of(req.system_prompt, ttl)
                })
            }),
            messages: Messages {
                written: req.written,
                fresh,
            },
            tools: (!req.tools.is_empty()).then(|| {
                Kept::or_fresh(req.prepared.map(|p| &*p.tools), || tools_of(req.tools, ttl))
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

/// The tools; with caching, the last of the gateway's own is marked when
/// node tools follow, so the nodes coming and going leave that prefix
/// cached (the system prompt, after all tools, is marked as well).
fn tools_of(tools: &[ToolDefinition], ttl: Option<CacheTtl>) -> Vec<Tool<'_>> {
    let first_node = tools.iter().position(|t| t.is_node_tool());
    let marked = match (ttl, first_node) {
        (Some(ttl), Some(i)) if i > 0 => Some((i - 1, CacheControl::of(ttl))),
        _ => None,
    };
    tools
        .iter()
        .enumerate()
        .map(|(i, t)| Tool {
            name: &t.name,
            description: &t.description,
            input_schema: &t.input_schema,
            cache_control: marked.filter(|(at, _)| *at == i).map(|(_, mark)| mark),
        })
        .collect()
}

/// Marks the conversation for caching: its last entry, so the next call
/// (a tool round or the next message) reads all of this one, and the entry
/// before it, the end of what earlier calls sent, so a prefix cached then
/// is found even when this call's last entry is long. With the tools' and
/// the system prompt's, at most the API's four breakpoints. Both entries
/// are always written fresh (what was written before ends at the last
/// assistant message, which is at most the second to last entry); below
/// the model's minimum cacheable length the API caches nothing.
fn mark_history(fresh: &mut [Msg], mark: CacheControl) {
    let n = fresh.len();
    for msg in fresh.iter_mut().skip(n.saturating_sub(2)) {
        let empty = match &msg.content.0 {
            MsgContent::Text(text) => text.is_empty(),
            MsgContent::Blocks(blocks) => blocks.is_empty(),
        };
        if !empty {
            msg.content.1 = Some(mark);
        }
    }
}

fn messages_of<'a>(turns: &'a [Turn<'a>]) -> Vec<Msg<'a>> {
    let mut out = Vec::with_capacity(turns.len());
    for turn in turns {
        match turn {
            Turn::User(u) => out.push(Msg::new("user", user_content(u))),
            Turn::Assistant(a) => out.extend(assistant(a)),
            // All results of one assistant turn go back in one user message.
            Turn::ToolResults(results) => out.push(Msg::new(
                "user",
                MsgContent::Blocks(results.iter().map(tool_result).collect()),
            )),
        }
    }
    out
}

/// A user message's content, then what the gateway attached to it.
fn user_content(u: &UserMessage) -> MsgContent<'_> {
    let context = u.context.as_deref().filter(|c| !c.is_empty());
    match (&u.content, context) {
        (UserContent::Text(text), None) => MsgContent::Text(text),
        (content, context) => {
            let mut blocks = match content {
                UserContent::Text(text) if text.is_empty() => Vec::new(),
                UserContent::Text(text) => vec![Block::Text {
                    text: Cow::Borrowed(text),
                }],
                UserContent::Blocks(blocks) => content_blocks(blocks),
            };
            blocks.extend(context.map(|c| Block::Text {
                text: Cow::Borrowed(c),
            }));
            MsgContent::Blocks(blocks)
        }
    }
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
    // The Responses API keeps its reasoning item where a signature goes;
    // it is no signature of Anthropic's.
    let signed = a.api.as_deref() != Some(crate::llm::responses::API);
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
            } if signed && !signature.is_empty() => Some(Block::Thinking {
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
    (!blocks.is_empty()).then_some(Msg::new("assistant", MsgContent::Blocks(blocks)))
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
