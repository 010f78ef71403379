use super::*;
use crate::llm::PromptCache;
use gsv_protocol::{StopReason, ToolResultMessage};
use serde_json::json;

/// A reasoning item as the API sends it (and the decoder keeps it).
const REASONING: &str = r#"{"encrypted_content":"gAAAAABo-enc","id":"rs_68c1","summary":[{"text":"Need ls.","type":"summary_text"}],"type":"reasoning"}"#;

fn reply(api: &str, content: Vec<AssistantBlock>, stop: StopReason) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        api: Some(api.into()),
        provider: Some("openai".into()),
        model: Some("gpt-5".into()),
        usage: None,
        stop_reason: Some(stop),
        error_message: None,
        timestamp: 2,
    })
}

fn thinking(text: &str, signature: Option<&str>) -> AssistantBlock {
    AssistantBlock::Thinking {
        thinking: text.into(),
        thinking_signature: signature.map(str::to_string),
    }
}

fn text(text: &str) -> AssistantBlock {
    AssistantBlock::Text { text: text.into() }
}

fn call(id: &str) -> AssistantBlock {
    AssistantBlock::ToolCall {
        id: id.into(),
        name: "laptop__Bash".into(),
        arguments: json!({"command": "ls /tmp"}),
    }
}

fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: 1,
        context: None,
    })
}

fn result(id: &str, content: Vec<ContentBlock>) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "laptop__Bash".into(),
        content,
        is_error: false,
        timestamp: 3,
    })
}

fn png(data: Option<&str>) -> ContentBlock {
    ContentBlock::Image {
        data: data.map(str::to_string),
        mime_type: "image/png".into(),
        r2_key: None,
        filename: None,
        size: None,
    }
}

fn conversation() -> Vec<Message> {
    vec![
        Message::User(UserMessage {
            content: UserContent::Blocks(vec![
                ContentBlock::Text {
                    text: "What is in this picture, and list /tmp".into(),
                },
                png(Some("iVBORw0KGgo=")),
            ]),
            timestamp: 1,
            context: None,
        }),
        reply(
            API,
            vec![
                thinking("Need ls.", Some(REASONING)),
                text("A cat. Listing:"),
                call("call_abc"),
            ],
            StopReason::ToolUse,
        ),
        result(
            "call_abc",
            vec![ContentBlock::Text {
                text: "a.txt\nb.txt".into(),
            }],
        ),
        user("thanks"),
    ]
}

fn bash_tool() -> ToolDefinition {
    ToolDefinition {
        name: "laptop__Bash".into(),
        description: "Run a shell command".into(),
        input_schema: json!({"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}),
    }
}

fn request<'a>(messages: &'a [Message], tools: &'a [ToolDefinition]) -> LlmRequest<'a> {
    LlmRequest {
        model: "gpt-5",
        system_prompt: "You are gsv.",
        messages,
        tools,
        thinking: ThinkingLevel::None,
        max_tokens: None,
        prepared: None,
        written: None,
        cache: None,
    }
}

#[test]
fn full_conversation_with_reasoning_tools_cache_and_limits() {
    let messages = conversation();
    let tools = [bash_tool()];
    let req = LlmRequest {
        thinking: ThinkingLevel::Xhigh,
        max_tokens: Some(4096),
        cache: Some(PromptCache {
            ttl: CacheTtl::FiveMinutes,
            key: "gsv-0123",
        }),
        ..request(&messages, &tools)
    };
    let reasoning: Value = serde_json::from_str(REASONING).unwrap();
    assert_eq!(
        request_body(&req),
        json!({
            "model": "gpt-5",
            "instructions": "You are gsv.",
            "input": [
                {"role": "user", "content": [
                    {"type": "input_text", "text": "What is in this picture, and list /tmp"},
                    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}
                ]},
                reasoning,
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "A cat. Listing:"}]},
                {"type": "function_call", "call_id": "call_abc", "name": "laptop__Bash",
                 "arguments": "{\"command\":\"ls /tmp\"}"},
                {"type": "function_call_output", "call_id": "call_abc", "output": "a.txt\nb.txt"},
                {"role": "user", "content": [{"type": "input_text", "text": "thanks"}]}
            ],
            "tools": [{"type": "function", "name": "laptop__Bash", "description": "Run a shell command",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
                "strict": false}],
            "stream": true,
            "store": false,
            "max_output_tokens": 4096,
            "reasoning": {"effort": "high", "summary": "auto"},
            "include": ["reasoning.encrypted_content"],
            "prompt_cache_key": "gsv-0123"
        })
    );
    // The reasoning item goes back byte for byte.
    assert!(request_json(&req).contains(REASONING));
}

#[test]
fn effort_levels() {
    let levels = [
        ThinkingLevel::None,
        ThinkingLevel::Minimal,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
        ThinkingLevel::Xhigh,
    ];
    assert_eq!(
        levels.map(effort),
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

/// Only this API's reasoning goes back, and only before what it led to;
/// other thinking (another API's, or unsigned) is dropped, as Chat
/// Completions drops it.
#[test]
fn reasoning_goes_back_only_where_it_came_from_and_with_what_followed() {
    let messages = vec![
        user("one"),
        reply(
            "anthropic-messages",
            vec![thinking("Hm.", Some("EqQBCkYIBxgC")), text("From Claude.")],
            StopReason::Stop,
        ),
        user("two"),
        reply(
            "openai-completions",
            vec![thinking("Hm.", None), text("From chat.")],
            StopReason::Stop,
        ),
        user("three"),
        // Cut off while reasoning: nothing followed it.
        reply(
            API,
            vec![thinking("Hm.", Some(REASONING))],
            StopReason::Length,
        ),
        user("four"),
        // Not an item: dropped rather than sent.
        reply(
            API,
            vec![thinking("Hm.", Some("not json")), text("Four.")],
            StopReason::Stop,
        ),
    ];
    let said = |t: &str| json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": t}]});
    let asked = |t: &str| json!({"role": "user", "content": [{"type": "input_text", "text": t}]});
    assert_eq!(
        request_body(&request(&messages, &[]))["input"],
        json!([
            asked("one"),
            said("From Claude."),
            asked("two"),
            said("From chat."),
            asked("three"),
            asked("four"),
            said("Four.")
        ])
    );
}

/// What was recalled for a message follows its words; images in tool
/// results follow the outputs in one user message; missing images say so.
#[test]
fn context_tool_images_and_missing_images() {
    let messages = vec![
        Message::User(UserMessage {
            content: UserContent::Text("coffee?".into()),
            timestamp: 1,
            context: Some("## Recalled memories\n- likes tea".into()),
        }),
        reply(API, vec![call("c1")], StopReason::ToolUse),
        result("c1", vec![png(Some("AAAA"))]),
        Message::User(UserMessage {
            content: UserContent::Blocks(vec![png(None)]),
            timestamp: 4,
            context: Some("## Recalled memories\n- likes cake".into()),
        }),
    ];
    assert_eq!(
        request_body(&request(&messages, &[]))["input"],
        json!([
            {"role": "user", "content": [
                {"type": "input_text", "text": "coffee?\n\n## Recalled memories\n- likes tea"}]},
            {"type": "function_call", "call_id": "c1", "name": "laptop__Bash",
             "arguments": "{\"command\":\"ls /tmp\"}"},
            {"type": "function_call_output", "call_id": "c1", "output": "(see attached image)"},
            {"role": "user", "content": [
                {"type": "input_text", "text": "Attached image(s) from tool result:"},
                {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "auto"}]},
            {"role": "user", "content": [
                {"type": "input_text", "text": "[image unavailable]"},
                {"type": "input_text", "text": "## Recalled memories\n- likes cake"}]}
        ])
    );
}

/// A broken history is repaired as for the other APIs: an unanswered call
/// gets an error output, a stray result is dropped.
#[test]
fn broken_histories_are_repaired() {
    let messages = vec![
        user("hi"),
        reply(API, vec![call("a")], StopReason::ToolUse),
        result("zzz", vec![]),
        user("well?"),
    ];
    assert_eq!(
        request_body(&request(&messages, &[]))["input"],
        json!([
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "a", "name": "laptop__Bash",
             "arguments": "{\"command\":\"ls /tmp\"}"},
            {"type": "function_call_output", "call_id": "a", "output": "No result provided"},
            {"role": "user", "content": [{"type": "input_text", "text": "well?"}]}
        ])
    );
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
        prepared: Some(&other),
        ..request(&[], &[])
    };
    assert_eq!(
        serde_json::from_str::<Value>(&request_json(&req)).unwrap(),
        json!({"model": "gpt-5", "instructions": "Other.", "input": [],
               "stream": true, "store": false})
    );
}

/// What `WrittenHistory` keeps of a history is the body's own items, so
/// a body from kept items is the body written whole, even where one
/// message makes several items.
#[test]
fn a_body_from_kept_items_is_the_body_written_whole() {
    let provider = crate::llm::provider_for("openai", Some(API));
    let mut history = conversation();
    history.push(reply(API, vec![text("You're welcome.")], StopReason::Stop));
    history.push(user("bye"));
    let mut kept = crate::llm::WrittenHistory::default();
    for n in 0..=history.len() {
        let so_far = &history[..n];
        let written = kept.update(&*provider, 1, so_far);
        let with = LlmRequest {
            written: Some(written),
            ..request(so_far, &[])
        };
        assert_eq!(
            request_json(&with),
            request_json(&request(so_far, &[])),
            "after {n} messages"
        );
    }
    // The first reply alone makes three items (reasoning, text, call).
    assert_eq!(write_messages(&history[..3]).len(), 5);
}
