use super::*;
use crate::llm::{provider_for, ThinkingLevel};
use gsv_protocol::{AssistantBlock, StopReason, Usage, UserContent, UserMessage};

fn decode(events: &[&str]) -> AssistantMessage {
    let mut decoder = WorkersAi.decoder("workers-ai", "@cf/moonshotai/kimi-k2.5");
    let mut shown = String::new();
    for data in events {
        let event = SseEvent {
            event: None,
            data: data.to_string(),
            id: None,
        };
        shown.push_str(&decoder.on_event(&event).unwrap());
    }
    let message = decoder.finish(7).unwrap();
    assert_eq!(shown, message.text(), "what was shown is the answer's text");
    message
}

fn answer(content: Vec<AssistantBlock>, usage: Usage, stop: StopReason) -> AssistantMessage {
    AssistantMessage {
        content,
        api: Some("workers-ai".into()),
        provider: Some("workers-ai".into()),
        model: Some("@cf/moonshotai/kimi-k2.5".into()),
        usage: Some(usage),
        stop_reason: Some(stop),
        error_message: None,
        timestamp: 7,
    }
}

fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input,
        output,
        cache_read: 0,
        cache_write: 0,
        total_tokens: input + output,
    }
}

#[test]
fn named_it_goes_through_the_binding_with_the_chat_completions_body() {
    let provider = provider_for("workers-ai", None);
    assert_eq!(
        (
            provider.api(),
            provider.binding(),
            provider.default_base_url()
        ),
        ("workers-ai", Some("AI"), "")
    );
    let messages = vec![Message::User(UserMessage {
        content: UserContent::Text("hi".into()),
        timestamp: 1,
        context: None,
    })];
    let req = LlmRequest {
        model: "@cf/moonshotai/kimi-k2.5",
        system_prompt: "Be brief.",
        messages: &messages,
        tools: &[],
        thinking: ThinkingLevel::None,
        max_tokens: Some(500),
        prepared: None,
        written: None,
        cache: None,
    };
    let endpoint = Endpoint {
        base_url: String::new(),
        api_key: String::new(),
    };
    let http = provider.build_request(&endpoint, &req);
    assert_eq!(
        (
            http.url.as_str(),
            http.headers.len(),
            serde_json::from_str::<Value>(&http.body).unwrap()
        ),
        (
            "workers-ai:@cf/moonshotai/kimi-k2.5",
            0,
            json!({"model": "@cf/moonshotai/kimi-k2.5",
                "messages": [{"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "hi"}],
                "stream": true, "stream_options": {"include_usage": true},
                "max_completion_tokens": 500})
        )
    );
    // Any other provider is reached over HTTP.
    assert_eq!(provider_for("openai", None).binding(), None);
}

#[test]
fn streamed_chat_completion_chunks_with_a_tool_call() {
    let message = decode(&[
        r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me look."},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"chatcmpl-tool-1","type":"function","function":{"name":"gsv__ReadFile","arguments":"{\"path\":"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"SOUL.md\"}"}}]},"finish_reason":"tool_calls"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":9,"total_tokens":129}}"#,
        "[DONE]",
    ]);
    assert_eq!(
        message,
        answer(
            vec![
                AssistantBlock::Text {
                    text: "Let me look.".into()
                },
                AssistantBlock::ToolCall {
                    id: "chatcmpl-tool-1".into(),
                    name: "gsv__ReadFile".into(),
                    arguments: json!({"path": "SOUL.md"}),
                },
            ],
            usage(120, 9),
            StopReason::ToolUse
        )
    );
}

#[test]
fn the_older_response_events_with_text_tool_calls_and_usage() {
    let message = decode(&[
        r#"{"response":"Hel","p":"abc"}"#,
        r#"{"response":"lo","p":"abcdef"}"#,
        r#"{"response":"","tool_calls":[{"name":"gsv__Bash","arguments":{"command":"ls"}}]}"#,
        r#"{"response":"","usage":{"prompt_tokens":40,"completion_tokens":3,"total_tokens":43}}"#,
        "[DONE]",
    ]);
    assert_eq!(
        message,
        answer(
            vec![
                AssistantBlock::Text {
                    text: "Hello".into()
                },
                AssistantBlock::ToolCall {
                    id: "call_0".into(),
                    name: "gsv__Bash".into(),
                    arguments: json!({"command": "ls"}),
                },
            ],
            usage(40, 3),
            StopReason::ToolUse
        )
    );
}

#[test]
fn an_answer_given_whole() {
    let whole = json!({"id": "c", "object": "chat.completion", "created": 1, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done.",
            "refusal": null}, "finish_reason": "stop", "logprobs": null}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}});
    let events: Vec<String> = whole_answer_events(&whole.to_string())
        .into_iter()
        .map(|e| e.data)
        .collect();
    let events: Vec<&str> = events.iter().map(String::as_str).collect();
    assert_eq!(
        decode(&events),
        answer(
            vec![AssistantBlock::Text {
                text: "Done.".into()
            }],
            usage(10, 2),
            StopReason::Stop
        )
    );
    let legacy = decode(&[
        r#"{"response":"Hi.","usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}"#,
        "[DONE]",
    ]);
    assert_eq!(legacy.text(), "Hi.");
}

#[test]
fn thrown_errors_are_classified_by_their_code_then_their_words() {
    use LlmErrorKind::*;
    let cases = [
        (
            "3040: No more data centers to forward the request to",
            RateLimited,
        ),
        (
            "AiError: 3036: You have used up your daily free allocation of 10,000 neurons.",
            RateLimited,
        ),
        ("3007: Request timeout", Server),
        ("5016: User has not agreed to Llama3.2 model terms", Auth),
        ("3006: Request is too large", ContextOverflow),
        ("5007: No such model @cf/nobody/nothing or task", Invalid),
        ("InferenceUpstreamError: internal server error", Server),
        (
            "Capacity temporarily exceeded, please try again.",
            RateLimited,
        ),
        ("Something else", Invalid),
    ];
    let got: Vec<(&str, LlmErrorKind)> = cases
        .iter()
        .map(|(message, _)| (*message, classify_thrown(message).kind))
        .collect();
    assert_eq!(got, cases.to_vec());
    assert_eq!(
        classify_thrown(" AiError: 3040: No more data centers to forward the request to ").message,
        "Workers AI: 3040: No more data centers to forward the request to"
    );
}
