use super::*;
use gsv_protocol::{Message, StopReason, ToolResultMessage, UserMessage};
use serde_json::json;

fn assistant_msg(content: Vec<AssistantBlock>, stop: StopReason) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        api: Some("anthropic-messages".into()),
        provider: Some("anthropic".into()),
        model: Some("claude-sonnet-4-5".into()),
        usage: None,
        stop_reason: Some(stop),
        error_message: None,
        timestamp: 2,
    })
}

fn result_msg(id: &str, content: Vec<ContentBlock>, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "laptop__Bash".into(),
        content,
        is_error,
        timestamp: 3,
    })
}

fn text(t: &str) -> ContentBlock {
    ContentBlock::Text { text: t.into() }
}

fn request(messages: &[Message], tools: &[ToolDefinition], thinking: ThinkingLevel) -> Value {
    request_body(&LlmRequest {
        model: "claude-sonnet-4-5",
        system_prompt: "You are gsv.",
        messages,
        tools,
        thinking,
        max_tokens: None,
        prepared: None,
        written: None,
        cache: None,
    })
}

/// The kept system prompt and tools make the very body written fresh,
/// byte for byte, with and without either.
#[test]
fn a_body_with_prepared_parts_is_the_same_text() {
    let messages = vec![Message::User(UserMessage {
        content: UserContent::Text("hi".into()),
        timestamp: 1,
        context: None,
    })];
    let bash = ToolDefinition {
        name: "laptop__Bash".into(),
        description: "Run a shell command".into(),
        input_schema: json!({"type":"object","properties":{"command":{"type":"string"}}}),
    };
    crate::llm::assert_kept_parts_write_the_fresh_body(
        request_json,
        prepare,
        "claude-sonnet-4-5",
        &messages,
        vec![
            ("You are gsv.\nSay \"hi\"", vec![bash.clone()]),
            ("", vec![]),
            ("You are gsv.", vec![own_tool(), bash]),
        ],
    );
}

fn own_tool() -> ToolDefinition {
    ToolDefinition {
        name: "gsv__ConfigGet".into(),
        description: "Read the config".into(),
        input_schema: json!({"type":"object"}),
    }
}

fn user_msg(text: &str, context: Option<&str>) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: 1,
        context: context.map(String::from),
    })
}

/// With caching, the gateway's own tools (before the nodes'), the system
/// prompt, and the conversation's last two entries end cached prefixes;
/// what was recalled for a message follows its words in the same turn.
#[test]
fn caching_marks_four_prefixes_and_context_follows_the_message() {
    let bash = ToolDefinition {
        name: "laptop__Bash".into(),
        description: "Run a shell command".into(),
        input_schema: json!({"type":"object"}),
    };
    let messages = vec![
        user_msg("hi", None),
        assistant_msg(
            vec![
                AssistantBlock::Thinking {
                    thinking: "t".into(),
                    thinking_signature: Some("sig".into()),
                },
                AssistantBlock::Text {
                    text: "Hello.".into(),
                },
            ],
            StopReason::Stop,
        ),
        user_msg("coffee?", Some("## Recalled memories\n- likes tea")),
    ];
    let tools = [own_tool(), bash];
    let body = request_body(&LlmRequest {
        model: "claude-sonnet-4-5",
        system_prompt: "You are gsv.",
        messages: &messages,
        tools: &tools,
        thinking: ThinkingLevel::None,
        max_tokens: None,
        prepared: None,
        written: None,
        cache: Some(crate::llm::PromptCache {
            ttl: CacheTtl::OneHour,
            key: "k",
        }),
    });
    let mark = json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!(
        body,
        json!({
            "model": "claude-sonnet-4-5",
            "system": [{"type": "text", "text": "You are gsv.", "cache_control": mark}],
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "t", "signature": "sig"},
                    {"type": "text", "text": "Hello.", "cache_control": mark},
                ]},
                {"role": "user", "content": [
                    {"type": "text", "text": "coffee?"},
                    {"type": "text", "text": "## Recalled memories\n- likes tea", "cache_control": mark},
                ]},
            ],
            "tools": [
                {"name": "gsv__ConfigGet", "description": "Read the config",
                 "input_schema": {"type": "object"}, "cache_control": mark},
                {"name": "laptop__Bash", "description": "Run a shell command",
                 "input_schema": {"type": "object"}},
            ],
            "max_tokens": 8192,
            "stream": true,
        })
    );
    // Without caching: no marks, the text alone stays a string.
    let plain = request(&messages[..1], &[], ThinkingLevel::None);
    assert_eq!(
        plain["messages"],
        json!([{"role": "user", "content": "hi"}])
    );
    assert_eq!(plain["system"], json!("You are gsv."));
}

#[test]
fn conversation_with_thinking_parallel_tool_calls_and_merged_results() {
    let messages = vec![
        Message::User(UserMessage {
            content: UserContent::Blocks(vec![
                text("What is this, and what is in /tmp and /var?"),
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
        assistant_msg(
            vec![
                AssistantBlock::Thinking {
                    thinking: "Two listings needed.".into(),
                    thinking_signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3h".into()),
                },
                AssistantBlock::Text {
                    text: "A cat. Listing both:".into(),
                },
                AssistantBlock::ToolCall {
                    id: "toolu_01A09q90qw90lq917835lq9".into(),
                    name: "laptop__Bash".into(),
                    arguments: json!({"command":"ls /tmp"}),
                },
                AssistantBlock::ToolCall {
                    id: "call|weird.id".into(),
                    name: "laptop__Bash".into(),
                    arguments: json!({"command":"ls /var"}),
                },
            ],
            StopReason::ToolUse,
        ),
        result_msg("toolu_01A09q90qw90lq917835lq9", vec![text("a.txt")], false),
        result_msg(
            "call|weird.id",
            vec![
                text("permission denied"),
                ContentBlock::Image {
                    data: Some("AAAA".into()),
                    mime_type: "image/jpeg".into(),
                    r2_key: None,
                    filename: None,
                    size: None,
                },
            ],
            true,
        ),
        assistant_msg(
            vec![AssistantBlock::Text {
                text: "/var is locked.".into(),
            }],
            StopReason::Stop,
        ),
        Message::User(UserMessage {
            content: UserContent::Text("ok".into()),
            timestamp: 5,
            context: None,
        }),
    ];
    let tools = [ToolDefinition {
        name: "laptop__Bash".into(),
        description: "Run a shell command".into(),
        input_schema: json!({"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}),
    }];
    assert_eq!(
        request(&messages, &tools, ThinkingLevel::Medium),
        json!({
            "model": "claude-sonnet-4-5",
            "system": "You are gsv.",
            "messages": [
                {"role":"user","content":[
                    {"type":"text","text":"What is this, and what is in /tmp and /var?"},
                    {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}
                ]},
                {"role":"assistant","content":[
                    {"type":"thinking","thinking":"Two listings needed.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
                    {"type":"text","text":"A cat. Listing both:"},
                    {"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"laptop__Bash","input":{"command":"ls /tmp"}},
                    {"type":"tool_use","id":"call_weird_id","name":"laptop__Bash","input":{"command":"ls /var"}}
                ]},
                {"role":"user","content":[
                    {"type":"tool_result","tool_use_id":"toolu_01A09q90qw90lq917835lq9",
                        "content":[{"type":"text","text":"a.txt"}],"is_error":false},
                    {"type":"tool_result","tool_use_id":"call_weird_id","content":[
                        {"type":"text","text":"permission denied"},
                        {"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"AAAA"}}
                    ],"is_error":true}
                ]},
                {"role":"assistant","content":[{"type":"text","text":"/var is locked."}]},
                {"role":"user","content":"ok"}
            ],
            "tools": [{"name":"laptop__Bash","description":"Run a shell command",
                "input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}],
            "max_tokens": 16384,
            "thinking": {"type":"enabled","budget_tokens":8192},
            "stream": true
        })
    );
}

#[test]
fn unsigned_thinking_empty_results_and_no_system() {
    let messages = vec![
        Message::User(UserMessage {
            content: UserContent::Text("go".into()),
            timestamp: 1,
            context: None,
        }),
        assistant_msg(
            vec![
                AssistantBlock::Thinking {
                    thinking: "from gpt".into(),
                    thinking_signature: None,
                },
                AssistantBlock::ToolCall {
                    id: "c1".into(),
                    name: "Noop".into(),
                    arguments: Value::Null,
                },
            ],
            StopReason::ToolUse,
        ),
        result_msg("c1", vec![], false),
    ];
    let body = request_body(&LlmRequest {
        model: "m",
        system_prompt: "",
        messages: &messages,
        tools: &[],
        thinking: ThinkingLevel::None,
        max_tokens: Some(1000),
        prepared: None,
        written: None,
        cache: None,
    });
    assert_eq!(
        body,
        json!({
            "model": "m",
            "messages": [
                {"role":"user","content":"go"},
                {"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"Noop","input":{}}]},
                {"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","is_error":false}]}
            ],
            "max_tokens": 1000,
            "stream": true
        })
    );
}

#[test]
fn thinking_budgets_and_max_tokens() {
    use ThinkingLevel::*;
    let defaults: Vec<_> = [None, Minimal, Low, Medium, High, Xhigh]
        .into_iter()
        .map(|level| max_tokens_and_budget(level, Option::None))
        .collect();
    assert_eq!(
        defaults,
        vec![
            (8192, Option::None),
            (9216, Some(1024)),
            (10240, Some(2048)),
            (16384, Some(8192)),
            (24576, Some(16384)),
            (32000, Some(30976)),
        ]
    );
    // An explicit limit is kept; the budget shrinks, or thinking goes.
    assert_eq!(
        max_tokens_and_budget(High, Some(64000)),
        (64000, Some(16384))
    );
    assert_eq!(max_tokens_and_budget(High, Some(4096)), (4096, Some(3072)));
    assert_eq!(max_tokens_and_budget(Low, Some(1500)), (1500, Option::None));
    assert_eq!(max_tokens_and_budget(None, Some(100)), (100, Option::None));
}

#[test]
fn tool_use_ids_are_sanitized() {
    assert_eq!(
        ["toolu_01A-b", "call|x.y", "", "ü"].map(tool_use_id),
        [
            "toolu_01A-b".to_string(),
            "call_x_y".into(),
            "_".into(),
            "_".into()
        ]
    );
}

/// The Responses API keeps its reasoning item where a signature goes: it
/// is no signature of Anthropic's, so that thinking is dropped.
#[test]
fn responses_reasoning_is_not_sent_as_a_signature() {
    let messages = vec![Message::Assistant(AssistantMessage {
        api: Some(crate::llm::responses::API.into()),
        ..AssistantMessage::new(
            vec![
                AssistantBlock::Thinking {
                    thinking: "Need ls.".into(),
                    thinking_signature: Some(
                        r#"{"encrypted_content":"gAAA","id":"rs_1","summary":[],"type":"reasoning"}"#
                            .into(),
                    ),
                },
                AssistantBlock::Text { text: "Hi.".into() },
            ],
            2,
        )
    })];
    assert_eq!(
        request(&messages, &[], ThinkingLevel::None)["messages"],
        json!([{"role": "assistant", "content": [{"type": "text", "text": "Hi."}]}])
    );
}
