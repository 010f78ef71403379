//! The Chat Completions request body.

use gsv_protocol::{
    join_text, AssistantBlock, AssistantMessage, ContentBlock, Message, ToolDefinition,
    UserContent, UserMessage,
};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use std::borrow::Cow;

use crate::llm::transcript::{turns, ToolResult, Turn};
use crate::llm::written::{unwritten, write_entries};
use crate::llm::{raw, CacheTtl, Kept, LlmRequest, Prepared, ThinkingLevel, WrittenPrefix};

/// The body as JSON text. The system prompt and the tools' schemas are
/// written from where they are (borrowed, not copied into a `Value`): they
/// are the bulk of a body and the same in every call of a run.
pub(crate) fn request_json(req: &LlmRequest) -> String {
    serde_json::to_string(&Body::of(req)).unwrap_or_default()
}

/// The system prompt and tools as `request_json` writes them (the API
/// caches a prefix on its own: nothing in them marks one).
pub(crate) fn prepare(
    system_prompt: &str,
    tools: &[ToolDefinition],
    _ttl: Option<CacheTtl>,
) -> Prepared {
    Prepared::new(system_prompt, tools.iter().map(tool))
}

/// Each entry `messages` make in a body's `messages`, as written there.
pub(crate) fn write_messages(messages: &[Message]) -> Vec<Box<RawValue>> {
    msgs(messages).iter().map(raw).collect()
}

/// The body as a value (the tests read it).
#[cfg(test)]
pub(super) fn request_body(req: &LlmRequest) -> Value {
    serde_json::to_value(Body::of(req)).unwrap_or_default()
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Messages<'a>,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Kept<'a, Vec<Tool<'a>>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
    /// Routes a conversation's calls to the servers caching its prefix.
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
}

impl<'a> Body<'a> {
    fn of(req: &'a LlmRequest) -> Self {
        Body {
            model: req.model,
            messages: Messages {
                system: (!req.system_prompt.is_empty()).then_some(System {
                    role: "system",
                    content: Kept::or_fresh(req.prepared.map(|p| &*p.system), || req.system_prompt),
                }),
                written: req.written,
                turns: msgs(unwritten(req.messages, req.written)),
            },
            stream: true,
            stream_options: StreamOptions {
                include_usage: true,
            },
            tools: (!req.tools.is_empty()).then(|| {
                Kept::or_fresh(req.prepared.map(|p| &*p.tools), || {
                    req.tools.iter().map(tool).collect()
                })
            }),
            max_completion_tokens: req.max_tokens,
            reasoning_effort: reasoning_effort(req.thinking),
            prompt_cache_key: req.cache.map(|c| c.key).filter(|k| !k.is_empty()),
        }
    }
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// The system message, then the conversation's: those already written,
/// then the rest.
struct Messages<'a> {
    system: Option<System<'a>>,
    written: Option<WrittenPrefix<'a>>,
    turns: Vec<Msg<'a>>,
}

#[derive(Serialize)]
struct System<'a> {
    role: &'static str,
    content: Kept<'a, &'a str>,
}

impl Serialize for Messages<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        if let Some(system) = &self.system {
            seq.serialize_element(system)?;
        }
        write_entries(&mut seq, self.written, &self.turns)?;
        seq.end()
    }
}

#[derive(Serialize)]
struct Tool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

fn reasoning_effort(level: ThinkingLevel) -> Option<&'static str> {
    match level {
        ThinkingLevel::None => None,
        ThinkingLevel::Minimal => Some("minimal"),
        ThinkingLevel::Low => Some("low"),
        ThinkingLevel::Medium => Some("medium"),
        // The API has no level above "high".
        ThinkingLevel::High | ThinkingLevel::Xhigh => Some("high"),
    }
}

fn tool(t: &ToolDefinition) -> Tool<'_> {
    Tool {
        kind: "function",
        function: Function {
            name: &t.name,
            description: &t.description,
            parameters: &t.input_schema,
        },
    }
}

/// The body's entries for `messages` (the system message is written apart).
fn msgs(messages: &[Message]) -> Vec<Msg<'_>> {
    let mut out = Vec::with_capacity(messages.len());
    for turn in turns(messages) {
        match turn {
            Turn::User(u) => out.push(user(u)),
            Turn::Assistant(a) => out.extend(assistant(a)),
            Turn::ToolResults(results) => tool_results(&results, &mut out),
        }
    }
    out
}

/// A user message, then what the gateway attached to it (after its
/// text, or as one more text part).
fn user(u: &UserMessage) -> Msg<'_> {
    let context = u.context.as_deref().filter(|c| !c.is_empty());
    match (&u.content, context) {
        (UserContent::Text(text), None) => Msg::Plain {
            role: "user",
            content: Cow::Borrowed(text),
        },
        (UserContent::Text(text), Some(context)) => Msg::Plain {
            role: "user",
            content: Cow::Owned(match text.is_empty() {
                true => context.to_string(),
                false => format!("{text}\n\n{context}"),
            }),
        },
        (UserContent::Blocks(blocks), context) => {
            let mut parts: Vec<Value> = blocks.iter().map(content_part).collect();
            parts.extend(context.map(|c| json!({ "type": "text", "text": c })));
            Msg::Other(json!({ "role": "user", "content": parts }))
        }
    }
}

/// One message of the body: the shapes a conversation is mostly made of
/// (text, tool calls, tool results), written from where they are, or any
/// other shape.
#[derive(Serialize)]
#[serde(untagged)]
enum Msg<'a> {
    Plain {
        role: &'static str,
        content: Cow<'a, str>,
    },
    Calls {
        role: &'static str,
        /// `null` when the model said nothing besides its calls.
        content: Option<Cow<'a, str>>,
        tool_calls: Vec<Call<'a>>,
    },
    Tool {
        role: &'static str,
        tool_call_id: &'a str,
        content: String,
    },
    Other(Value),
}

#[derive(Serialize)]
struct Call<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    /// The arguments as JSON text, as the API has them.
    arguments: String,
}

fn content_part(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Text { text } => json!({ "type": "text", "text": text }),
        ContentBlock::Image {
            data: Some(data),
            mime_type,
            ..
        } => json!({
            "type": "image_url",
            "image_url": { "url": format!("data:{mime_type};base64,{data}") },
        }),
        // The shell loads R2 images before calling; say so if one is missing.
        ContentBlock::Image { data: None, .. } => {
            json!({ "type": "text", "text": "[image unavailable]" })
        }
        // The shell turns files into text before calling; the fallback names the file.
        ContentBlock::Attachment(a) => {
            json!({ "type": "text", "text": crate::media::notes::unprepared(a) })
        }
    }
}

/// Text and tool calls; thinking cannot be sent back through this API.
fn assistant(a: &AssistantMessage) -> Option<Msg<'_>> {
    let texts: Vec<&str> = a
        .content
        .iter()
        .filter_map(|b| match b {
            AssistantBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let text: Cow<str> = match texts.as_slice() {
        [one] => Cow::Borrowed(one),
        many => Cow::Owned(many.concat()),
    };
    let calls: Vec<Call> = a
        .tool_calls()
        .map(|(id, name, arguments)| Call {
            id,
            kind: "function",
            function: CallFunction {
                name,
                arguments: arguments.to_string(),
            },
        })
        .collect();
    if text.is_empty() && calls.is_empty() {
        return None; // thinking only
    }
    if calls.is_empty() {
        return Some(Msg::Plain {
            role: "assistant",
            content: text,
        });
    }
    Some(Msg::Calls {
        role: "assistant",
        content: (!text.is_empty()).then_some(text),
        tool_calls: calls,
    })
}

/// `tool` messages carry text only, so images from tool results follow in
/// one user message.
fn tool_results<'a>(results: &[ToolResult<'a>], out: &mut Vec<Msg<'a>>) {
    let mut images = Vec::new();
    for r in results {
        let text = join_text(&r.content);
        let has_image = r
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::Image { .. }));
        images.extend(
            r.content
                .iter()
                .filter(|b| matches!(b, ContentBlock::Image { .. }))
                .map(content_part),
        );
        let text = if text.is_empty() && has_image {
            "(see attached image)".to_string()
        } else {
            text
        };
        out.push(Msg::Tool {
            role: "tool",
            tool_call_id: r.tool_call_id,
            content: text,
        });
    }
    if !images.is_empty() {
        let mut parts =
            vec![json!({ "type": "text", "text": "Attached image(s) from tool result:" })];
        parts.extend(images);
        out.push(Msg::Other(json!({ "role": "user", "content": parts })));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gsv_protocol::{Message, StopReason, ToolResultMessage, UserMessage};

    fn conversation() -> Vec<Message> {
        vec![
            Message::User(UserMessage {
                content: UserContent::Blocks(vec![
                    ContentBlock::Text {
                        text: "What is in this picture, and list /tmp".into(),
                    },
                    ContentBlock::Image {
                        data: Some("iVBORw0KGgo=".into()),
                        mime_type: "image/png".into(),
                        r2_key: None,
                        filename: None,
                        size: None,
                    },
                ]),
                timestamp: 1,
                context: None,
            }),
            Message::Assistant(AssistantMessage {
                content: vec![
                    AssistantBlock::Thinking {
                        thinking: "Need ls.".into(),
                        thinking_signature: None,
                    },
                    AssistantBlock::Text {
                        text: "A cat. Listing:".into(),
                    },
                    AssistantBlock::ToolCall {
                        id: "call_abc".into(),
                        name: "laptop__Bash".into(),
                        arguments: json!({"command":"ls /tmp"}),
                    },
                ],
                api: Some("openai-completions".into()),
                provider: Some("openai".into()),
                model: Some("gpt-4.1".into()),
                usage: None,
                stop_reason: Some(StopReason::ToolUse),
                error_message: None,
                timestamp: 2,
            }),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "call_abc".into(),
                tool_name: "laptop__Bash".into(),
                content: vec![ContentBlock::Text {
                    text: "a.txt\nb.txt".into(),
                }],
                is_error: false,
                timestamp: 3,
            }),
            Message::User(UserMessage {
                content: UserContent::Text("thanks".into()),
                timestamp: 4,
                context: None,
            }),
        ]
    }

    fn bash_tool() -> ToolDefinition {
        ToolDefinition {
            name: "laptop__Bash".into(),
            description: "Run a shell command".into(),
            input_schema: json!({"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}),
        }
    }

    /// The kept system prompt and tools make the very body written fresh,
    /// byte for byte, with and without either.
    #[test]
    fn a_body_with_prepared_parts_is_the_same_text() {
        let messages = conversation();
        crate::llm::assert_kept_parts_write_the_fresh_body(
            request_json,
            prepare,
            "gpt-5",
            &messages,
            vec![
                ("You are gsv.\nSay \"hi\" \u{1F600}", vec![bash_tool()]),
                ("", vec![]),
            ],
        );
        // The kept parts are what is written (the fresh ones are not read).
        let other = prepare("Other.", &[], None);
        let req = LlmRequest {
            model: "gpt-5",
            system_prompt: "You are gsv.",
            messages: &[],
            tools: &[],
            thinking: ThinkingLevel::None,
            max_tokens: None,
            prepared: Some(&other),
            written: None,
            cache: None,
        };
        assert_eq!(
            serde_json::from_str::<Value>(&request_json(&req)).unwrap(),
            json!({"model": "gpt-5", "messages": [{"role": "system", "content": "Other."}],
                   "stream": true, "stream_options": {"include_usage": true}})
        );
    }

    /// The API caches prefixes itself: the body names the conversation,
    /// and what was recalled for a message follows its words.
    #[test]
    fn a_cached_call_names_its_conversation_and_context_follows_the_message() {
        let messages = [
            Message::User(UserMessage {
                content: UserContent::Text("coffee?".into()),
                timestamp: 1,
                context: Some("## Recalled memories\n- likes tea".into()),
            }),
            Message::User(UserMessage {
                content: UserContent::Blocks(vec![ContentBlock::Text {
                    text: "and this?".into(),
                }]),
                timestamp: 2,
                context: Some("## Recalled memories\n- likes cake".into()),
            }),
        ];
        let req = LlmRequest {
            model: "gpt-5",
            system_prompt: "",
            messages: &messages,
            tools: &[],
            thinking: ThinkingLevel::None,
            max_tokens: None,
            prepared: None,
            written: None,
            cache: Some(crate::llm::PromptCache {
                ttl: CacheTtl::FiveMinutes,
                key: "gsv-0123",
            }),
        };
        assert_eq!(
            request_body(&req),
            json!({
                "model": "gpt-5",
                "messages": [
                    {"role": "user", "content": "coffee?\n\n## Recalled memories\n- likes tea"},
                    {"role": "user", "content": [
                        {"type": "text", "text": "and this?"},
                        {"type": "text", "text": "## Recalled memories\n- likes cake"},
                    ]},
                ],
                "stream": true,
                "stream_options": {"include_usage": true},
                "prompt_cache_key": "gsv-0123",
            })
        );
    }

    #[test]
    fn full_conversation_with_tools_thinking_and_limits() {
        let messages = conversation();
        let tools = [bash_tool()];
        let req = LlmRequest {
            model: "gpt-5",
            system_prompt: "You are gsv.",
            messages: &messages,
            tools: &tools,
            thinking: ThinkingLevel::Xhigh,
            max_tokens: Some(4096),
            prepared: None,
            written: None,
            cache: None,
        };
        assert_eq!(
            request_body(&req),
            json!({
                "model": "gpt-5",
                "messages": [
                    {"role":"system","content":"You are gsv."},
                    {"role":"user","content":[
                        {"type":"text","text":"What is in this picture, and list /tmp"},
                        {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}
                    ]},
                    {"role":"assistant","content":"A cat. Listing:","tool_calls":[
                        {"id":"call_abc","type":"function","function":{"name":"laptop__Bash","arguments":"{\"command\":\"ls /tmp\"}"}}
                    ]},
                    {"role":"tool","tool_call_id":"call_abc","content":"a.txt\nb.txt"},
                    {"role":"user","content":"thanks"}
                ],
                "tools": [{"type":"function","function":{"name":"laptop__Bash","description":"Run a shell command",
                    "parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}}],
                "stream": true,
                "stream_options": {"include_usage": true},
                "max_completion_tokens": 4096,
                "reasoning_effort": "high"
            })
        );
    }

    #[test]
    fn reasoning_effort_levels() {
        let levels = [
            ThinkingLevel::None,
            ThinkingLevel::Minimal,
            ThinkingLevel::Low,
            ThinkingLevel::Medium,
            ThinkingLevel::High,
            ThinkingLevel::Xhigh,
        ];
        assert_eq!(
            levels.map(reasoning_effort),
            [
                None,
                Some("minimal"),
                Some("low"),
                Some("medium"),
                Some("high"),
                Some("high")
            ]
        );
    }

    #[test]
    fn tool_call_only_turns_images_in_results_and_missing_images() {
        let messages = vec![
            Message::Assistant(AssistantMessage {
                stop_reason: Some(StopReason::ToolUse),
                ..AssistantMessage::new(
                    vec![AssistantBlock::ToolCall {
                        id: "c1".into(),
                        name: "Screenshot".into(),
                        arguments: json!({}),
                    }],
                    1,
                )
            }),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "c1".into(),
                tool_name: "Screenshot".into(),
                content: vec![ContentBlock::Image {
                    data: Some("AAAA".into()),
                    mime_type: "image/jpeg".into(),
                    r2_key: None,
                    filename: None,
                    size: None,
                }],
                is_error: false,
                timestamp: 2,
            }),
            Message::User(UserMessage {
                content: UserContent::Blocks(vec![ContentBlock::Image {
                    data: None,
                    mime_type: "image/png".into(),
                    r2_key: Some("media/x.png".into()),
                    filename: None,
                    size: None,
                }]),
                timestamp: 3,
                context: None,
            }),
        ];
        let req = LlmRequest {
            model: "m",
            system_prompt: "",
            messages: &messages,
            tools: &[],
            thinking: ThinkingLevel::None,
            max_tokens: None,
            prepared: None,
            written: None,
            cache: None,
        };
        assert_eq!(
            request_body(&req)["messages"],
            json!([
                {"role":"assistant","content":null,"tool_calls":[
                    {"id":"c1","type":"function","function":{"name":"Screenshot","arguments":"{}"}}]},
                {"role":"tool","tool_call_id":"c1","content":"(see attached image)"},
                {"role":"user","content":[
                    {"type":"text","text":"Attached image(s) from tool result:"},
                    {"type":"image_url","image_url":{"url":"data:image/jpeg;base64,AAAA"}}]},
                {"role":"user","content":[{"type":"text","text":"[image unavailable]"}]}
            ])
        );
    }
}
