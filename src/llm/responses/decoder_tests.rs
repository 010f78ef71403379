//! Streams shaped exactly like api.openai.com's `/v1/responses`: an
//! `event:` line naming the type, then a `data:` line with the JSON (which
//! repeats the type, with a `sequence_number`).

use super::*;
use crate::llm::sse::decode_raw_stream;

const TS: i64 = 1_700_000_000_000;
const MSG: &str = "msg_68c1a3b1f0d88190a5c4e2b9c1b2d3e40a1b2c3d4e5f6a7b";
const RS: &str = "rs_68c1a3b0e7a48190b1d2c3e4f5a6b7c80a1b2c3d4e5f6a7b";
const FC: &str = "fc_68c1a3b2a1b081909f8e7d6c5b4a39280a1b2c3d4e5f6a7b";

fn stream(events: &[Value]) -> String {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut e = e.clone();
            e["sequence_number"] = json!(i);
            format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap())
        })
        .collect()
}

/// The response object as `response.*` events carry it.
fn response(status: &str, output: Value, usage: Value, incomplete: Value) -> Value {
    json!({"id": "resp_68c1a3af6c3c8190b0a1b2c3d4e5f6a7", "object": "response",
        "created_at": 1757520815, "status": status, "background": false, "error": null,
        "incomplete_details": incomplete, "instructions": "You are gsv.",
        "max_output_tokens": null, "model": "gpt-5-2025-08-07", "output": output,
        "parallel_tool_calls": true, "previous_response_id": null,
        "reasoning": {"effort": "medium", "summary": "auto"}, "store": false,
        "temperature": 1.0, "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto", "tools": [], "top_p": 1.0, "truncation": "disabled",
        "usage": usage, "user": null, "metadata": {}})
}

fn created() -> [Value; 2] {
    let r = response("in_progress", json!([]), Value::Null, Value::Null);
    [
        json!({"type": "response.created", "response": r}),
        json!({"type": "response.in_progress", "response": r}),
    ]
}

fn usage(input: u64, cached: u64, output: u64, reasoning: u64) -> Value {
    json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output, "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input + output})
}

fn completed(output: Value, usage: Value) -> Value {
    json!({"type": "response.completed", "response": response("completed", output, usage, Value::Null)})
}

/// A message item's events, its text in `pieces`.
fn message_events(index: u64, pieces: &[&str]) -> (Vec<Value>, Value) {
    let part = |text: &str| json!({"type": "output_text", "annotations": [], "logprobs": [], "text": text});
    let whole: String = pieces.concat();
    let done = json!({"id": MSG, "type": "message", "status": "completed",
        "content": [part(&whole)], "role": "assistant"});
    let mut events = vec![
        json!({"type": "response.output_item.added", "output_index": index,
            "item": {"id": MSG, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}}),
        json!({"type": "response.content_part.added", "item_id": MSG, "output_index": index,
            "content_index": 0, "part": part("")}),
    ];
    events.extend(pieces.iter().map(|p| {
        json!({"type": "response.output_text.delta", "item_id": MSG, "output_index": index,
            "content_index": 0, "delta": p, "logprobs": [], "obfuscation": "x1"})
    }));
    events.extend([
        json!({"type": "response.output_text.done", "item_id": MSG, "output_index": index,
            "content_index": 0, "text": whole, "logprobs": []}),
        json!({"type": "response.content_part.done", "item_id": MSG, "output_index": index,
            "content_index": 0, "part": part(&whole)}),
        json!({"type": "response.output_item.done", "output_index": index, "item": done}),
    ]);
    (events, done)
}

fn reasoning_events(index: u64, pieces: &[&str]) -> (Vec<Value>, Value) {
    let whole: String = pieces.concat();
    let done = json!({"id": RS, "type": "reasoning", "encrypted_content": "gAAAAABowaOw-enc==",
        "summary": [{"type": "summary_text", "text": whole}]});
    let mut events = vec![
        json!({"type": "response.output_item.added", "output_index": index,
            "item": {"id": RS, "type": "reasoning", "encrypted_content": "gAAAAABowaOw-enc0==", "summary": []}}),
        json!({"type": "response.reasoning_summary_part.added", "item_id": RS, "output_index": index,
            "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
    ];
    events.extend(pieces.iter().map(|p| {
        json!({"type": "response.reasoning_summary_text.delta", "item_id": RS,
            "output_index": index, "summary_index": 0, "delta": p, "obfuscation": "x"})
    }));
    events.extend([
        json!({"type": "response.reasoning_summary_text.done", "item_id": RS, "output_index": index,
            "summary_index": 0, "text": whole}),
        json!({"type": "response.reasoning_summary_part.done", "item_id": RS, "output_index": index,
            "summary_index": 0, "part": {"type": "summary_text", "text": whole}}),
        json!({"type": "response.output_item.done", "output_index": index, "item": done}),
    ]);
    (events, done)
}

fn call_events(index: u64, call_id: &str, name: &str, fragments: &[&str]) -> (Vec<Value>, Value) {
    let arguments: String = fragments.concat();
    let done = json!({"id": FC, "type": "function_call", "status": "completed",
        "arguments": arguments, "call_id": call_id, "name": name});
    let mut events = vec![
        json!({"type": "response.output_item.added", "output_index": index,
        "item": {"id": FC, "type": "function_call", "status": "in_progress", "arguments": "",
            "call_id": call_id, "name": name}}),
    ];
    events.extend(fragments.iter().map(|f| {
        json!({"type": "response.function_call_arguments.delta", "item_id": FC,
            "output_index": index, "delta": f, "obfuscation": "x"})
    }));
    events.extend([
        json!({"type": "response.function_call_arguments.done", "item_id": FC,
            "output_index": index, "arguments": arguments}),
        json!({"type": "response.output_item.done", "output_index": index, "item": done}),
    ]);
    (events, done)
}

fn decode(raw: &str, chunk_size: usize) -> (Vec<String>, Result<AssistantMessage, LlmError>) {
    decode_raw_stream(
        Box::new(ResponsesDecoder::new("openai", "gpt-5")),
        raw,
        chunk_size,
    )
}

fn message(content: Vec<AssistantBlock>, usage: Usage, stop: StopReason) -> AssistantMessage {
    AssistantMessage {
        content,
        api: Some("openai-responses".into()),
        provider: Some("openai".into()),
        model: Some("gpt-5".into()),
        usage: Some(usage),
        stop_reason: Some(stop),
        error_message: None,
        timestamp: TS,
    }
}

#[test]
fn text_with_cached_usage_whatever_the_chunking() {
    let (events, done) = message_events(0, &["héllo", " 👋"]);
    let mut all = created().to_vec();
    all.extend(events);
    all.push(completed(json!([done]), usage(1117, 1024, 46, 0)));
    let raw = stream(&all);
    let expected = message(
        vec![AssistantBlock::Text {
            text: "héllo 👋".into(),
        }],
        Usage {
            input: 93,
            output: 46,
            cache_read: 1024,
            cache_write: 0,
            total_tokens: 1163,
        },
        StopReason::Stop,
    );
    for chunk_size in [1, 2, 3, 7, 64, raw.len()] {
        let (deltas, result) = decode(&raw, chunk_size);
        assert_eq!(deltas.concat(), "héllo 👋", "chunk size {chunk_size}");
        assert_eq!(result, Ok(expected.clone()), "chunk size {chunk_size}");
    }
    assert_eq!(decode(&raw, raw.len()).0, vec!["héllo 👋"]);
}

/// Reasoning, text and two calls: the reasoning item is kept whole, as
/// the API sent it when done, to go back with the next call; the calls'
/// ids are the `call_id`s their outputs will name.
#[test]
fn reasoning_text_and_tool_calls() {
    let (reasoning, rs_done) = reasoning_events(0, &["**Listing**\n\n", "Need ls."]);
    let (text, msg_done) = message_events(1, &["Checking."]);
    let (first, fc1) = call_events(
        2,
        "call_DdmO9pD3",
        "laptop__Bash",
        &["{\"comm", "and\":\"ls\"}"],
    );
    let (second, fc2) = call_events(3, "call_ABCDEF", "gsv__ConfigGet", &[]);
    let mut all = created().to_vec();
    all.extend(reasoning);
    all.extend(text);
    all.extend(first);
    all.extend(second);
    all.push(completed(
        json!([rs_done, msg_done, fc1, fc2]),
        usage(80, 0, 40, 12),
    ));
    let (deltas, result) = decode(&stream(&all), 5);
    assert_eq!(deltas.concat(), "Checking.");
    assert_eq!(
        result,
        Ok(message(
            vec![
                AssistantBlock::Thinking {
                    thinking: "**Listing**\n\nNeed ls.".into(),
                    thinking_signature: Some(rs_done.to_string()),
                },
                AssistantBlock::Text {
                    text: "Checking.".into()
                },
                AssistantBlock::ToolCall {
                    id: "call_DdmO9pD3".into(),
                    name: "laptop__Bash".into(),
                    arguments: json!({"command": "ls"}),
                },
                AssistantBlock::ToolCall {
                    id: "call_ABCDEF".into(),
                    name: "gsv__ConfigGet".into(),
                    arguments: json!({}),
                },
            ],
            Usage {
                input: 80,
                output: 40,
                cache_read: 0,
                cache_write: 0,
                total_tokens: 120,
            },
            StopReason::ToolUse,
        ))
    );
}

/// Reasoning with nothing shown of it (no summary) is still kept, to go
/// back; several summary parts are paragraphs.
#[test]
fn summaries_in_parts_and_reasoning_without_one() {
    let silent =
        json!({"id": RS, "type": "reasoning", "encrypted_content": "gAAA==", "summary": []});
    let (text, msg_done) = message_events(1, &["Hi."]);
    let mut all = created().to_vec();
    all.extend([
        json!({"type": "response.output_item.added", "output_index": 0,
            "item": {"id": RS, "type": "reasoning", "summary": []}}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": silent}),
    ]);
    all.extend(text);
    all.push(completed(json!([silent, msg_done]), usage(5, 0, 3, 2)));
    let (_, result) = decode(&stream(&all), 64);
    assert_eq!(
        result.unwrap().content,
        vec![
            AssistantBlock::Thinking {
                thinking: String::new(),
                thinking_signature: Some(silent.to_string()),
            },
            AssistantBlock::Text { text: "Hi.".into() },
        ]
    );
    // Two summary parts, streamed only (the stream ends before `done`).
    let parts = [
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 0, "delta": "One."}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 1, "delta": "Two."}),
        completed(json!([]), usage(5, 0, 3, 2)),
    ];
    assert_eq!(
        decode(&stream(&parts), 64).1.unwrap().content,
        vec![AssistantBlock::Thinking {
            thinking: "One.\n\nTwo.".into(),
            thinking_signature: None,
        }]
    );
}

#[test]
fn incomplete_answers_stop_for_length_or_the_filter() {
    let incomplete = |reason: &str| {
        json!({"type": "response.incomplete", "response": response("incomplete", json!([]),
            usage(10, 0, 16, 16), json!({"reason": reason}))})
    };
    let (text, _) = message_events(0, &["Partial"]);
    let mut all = created().to_vec();
    all.extend(text);
    all.push(incomplete("max_output_tokens"));
    let result = decode(&stream(&all), 64).1.unwrap();
    assert_eq!(
        (
            result.text(),
            result.stop_reason,
            result.usage.unwrap().output
        ),
        ("Partial".to_string(), Some(StopReason::Length), 16)
    );
    let filtered = decode(&stream(&[incomplete("content_filter")]), 64)
        .1
        .unwrap();
    assert_eq!(
        (filtered.stop_reason, filtered.error_message.as_deref()),
        (
            Some(StopReason::Error),
            Some("openai stopped the answer with its content filter")
        )
    );
    // Arguments cut off by the limit are invalid, and say why.
    let (call, _) = call_events(0, "call_1", "laptop__Bash", &["{\"command\":\"l"]);
    let mut cut = call[..2].to_vec();
    cut.push(incomplete("max_output_tokens"));
    let err = decode(&stream(&cut), 64).1.unwrap_err();
    assert_eq!(err.kind, LlmErrorKind::Invalid);
    assert!(
        err.message
            .starts_with("openai sent invalid JSON arguments for tool `laptop__Bash` (the answer hit the token limit): "),
        "{}",
        err.message
    );
}

#[test]
fn failures_mid_stream_are_classified() {
    let failed = |code: &str, message: &str| {
        let mut r = response("failed", json!([]), Value::Null, Value::Null);
        r["error"] = json!({"code": code, "message": message});
        json!({"type": "response.failed", "response": r})
    };
    let cases = [
        (
            failed("server_error", "The server had an error while processing your request."),
            LlmError::new(
                LlmErrorKind::Server,
                "openai reported an error mid-stream (server_error): The server had an error while processing your request.",
            ),
        ),
        (
            failed("rate_limit_exceeded", "Rate limit reached for gpt-5."),
            LlmError::new(
                LlmErrorKind::RateLimited,
                "openai reported an error mid-stream (rate_limit_exceeded): Rate limit reached for gpt-5.",
            ),
        ),
        (
            failed("invalid_image", "Invalid image."),
            LlmError::new(
                LlmErrorKind::Invalid,
                "openai reported an error mid-stream (invalid_image): Invalid image.",
            ),
        ),
        // The `error` event, with its fields at the top …
        (
            json!({"type": "error", "code": "context_length_exceeded",
                "message": "Your input exceeds the context window of this model.", "param": "input"}),
            LlmError::new(
                LlmErrorKind::ContextOverflow,
                "openai reported an error mid-stream (context_length_exceeded): Your input exceeds the context window of this model.",
            ),
        ),
        // … or in an `error` object.
        (
            json!({"type": "error", "error": {"type": "server_error", "code": "server_error",
                "message": "Something went wrong.", "param": null}}),
            LlmError::new(
                LlmErrorKind::Server,
                "openai reported an error mid-stream (server_error): Something went wrong.",
            ),
        ),
    ];
    for (event, expected) in cases {
        let (text, _) = message_events(0, &["Some "]);
        let mut all = created().to_vec();
        all.extend(text[..3].iter().cloned());
        all.push(event);
        let (deltas, result) = decode(&stream(&all), 64);
        assert_eq!(
            (deltas.concat(), result),
            ("Some ".to_string(), Err(expected))
        );
    }
}

#[test]
fn a_stream_that_stops_early_or_is_not_json_fails() {
    let (text, _) = message_events(0, &["Some ", "more"]);
    let mut all = created().to_vec();
    all.extend(text);
    assert_eq!(
        decode(&stream(&all), 64).1,
        Err(LlmError::new(
            LlmErrorKind::Network,
            "the openai stream ended before the answer was complete"
        ))
    );
    let err = decode("event: response.created\ndata: {not json\n\n", 64)
        .1
        .unwrap_err();
    assert_eq!(err.kind, LlmErrorKind::Invalid);
}
