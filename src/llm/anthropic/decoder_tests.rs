//! Streams shaped exactly like api.anthropic.com's: an `event:` line naming
//! the type, then a `data:` line with the JSON (which repeats the type).

use super::*;
use crate::llm::sse::decode_raw_stream;
use serde_json::json;

const TS: i64 = 1_700_000_000_000;

fn stream(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

fn message_start(input: u64, cache_read: u64, cache_write: u64) -> Value {
    json!({"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message",
        "role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,
        "stop_sequence":null,"usage":{"input_tokens":input,"cache_creation_input_tokens":cache_write,
        "cache_read_input_tokens":cache_read,"output_tokens":1,"service_tier":"standard"}}})
}

fn block_start(index: u64, block: Value) -> Value {
    json!({"type":"content_block_start","index":index,"content_block":block})
}

fn delta(index: u64, delta: Value) -> Value {
    json!({"type":"content_block_delta","index":index,"delta":delta})
}

fn block_stop(index: u64) -> Value {
    json!({"type":"content_block_stop","index":index})
}

fn message_end(stop_reason: &str, output: u64) -> [Value; 2] {
    [
        json!({"type":"message_delta","delta":{"stop_reason":stop_reason,"stop_sequence":null},
            "usage":{"output_tokens":output}}),
        json!({"type":"message_stop"}),
    ]
}

fn decode(raw: &str, chunk_size: usize) -> (Vec<String>, Result<AssistantMessage, LlmError>) {
    decode_raw_stream(
        Box::new(MessagesDecoder::new("anthropic", "claude-sonnet-4-5")),
        raw,
        chunk_size,
    )
}

fn message(content: Vec<AssistantBlock>, usage: Usage, stop: StopReason) -> AssistantMessage {
    AssistantMessage {
        content,
        api: Some("anthropic-messages".into()),
        provider: Some("anthropic".into()),
        model: Some("claude-sonnet-4-5".into()),
        usage: Some(usage),
        stop_reason: Some(stop),
        error_message: None,
        timestamp: TS,
    }
}

#[test]
fn text_stream_with_ping_and_cache_usage_whatever_the_chunking() {
    let mut events = vec![
        message_start(25, 1000, 200),
        block_start(0, json!({"type":"text","text":""})),
        json!({"type":"ping"}),
        delta(0, json!({"type":"text_delta","text":"héllo"})),
        delta(0, json!({"type":"text_delta","text":" 👋"})),
        block_stop(0),
    ];
    events.extend(message_end("end_turn", 15));
    let raw = stream(&events);
    let expected = message(
        vec![AssistantBlock::Text {
            text: "héllo 👋".into(),
        }],
        Usage {
            input: 25,
            output: 15,
            cache_read: 1000,
            cache_write: 200,
            total_tokens: 1240,
        },
        StopReason::Stop,
    );
    for chunk_size in [1, 2, 5, 13, raw.len()] {
        let (deltas, result) = decode(&raw, chunk_size);
        assert_eq!(deltas.concat(), "héllo 👋", "chunk size {chunk_size}");
        assert_eq!(result, Ok(expected.clone()), "chunk size {chunk_size}");
    }
    assert_eq!(decode(&raw, raw.len()).0, vec!["héllo 👋"]);
}

#[test]
fn thinking_text_and_tool_use() {
    let mut events = vec![
        message_start(472, 0, 0),
        block_start(0, json!({"type":"thinking","thinking":"","signature":""})),
        delta(
            0,
            json!({"type":"thinking_delta","thinking":"The user wants "}),
        ),
        delta(
            0,
            json!({"type":"thinking_delta","thinking":"the weather."}),
        ),
        delta(
            0,
            json!({"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"}),
        ),
        block_stop(0),
        block_start(1, json!({"type":"text","text":""})),
        delta(1, json!({"type":"text_delta","text":"Checking."})),
        block_stop(1),
        block_start(
            2,
            json!({"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}),
        ),
        delta(2, json!({"type":"input_json_delta","partial_json":""})),
        delta(
            2,
            json!({"type":"input_json_delta","partial_json":"{\"location\": \"San Fra"}),
        ),
        delta(
            2,
            json!({"type":"input_json_delta","partial_json":"ncisco, CA\", \"unit\": \"fahrenheit\"}"}),
        ),
        block_stop(2),
        block_start(
            3,
            json!({"type":"tool_use","id":"toolu_02","name":"list_files","input":{}}),
        ),
        block_stop(3),
    ];
    events.extend(message_end("tool_use", 89));
    let (deltas, result) = decode(&stream(&events), 11);
    assert_eq!(deltas.concat(), "Checking.");
    assert_eq!(
        result,
        Ok(message(
            vec![
                AssistantBlock::Thinking {
                    thinking: "The user wants the weather.".into(),
                    thinking_signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3h".into()),
                },
                AssistantBlock::Text {
                    text: "Checking.".into()
                },
                AssistantBlock::ToolCall {
                    id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
                    name: "get_weather".into(),
                    arguments: json!({"location": "San Francisco, CA", "unit": "fahrenheit"}),
                },
                AssistantBlock::ToolCall {
                    id: "toolu_02".into(),
                    name: "list_files".into(),
                    arguments: json!({})
                },
            ],
            Usage {
                input: 472,
                output: 89,
                cache_read: 0,
                cache_write: 0,
                total_tokens: 561
            },
            StopReason::ToolUse,
        ))
    );
}

#[test]
fn stop_reasons() {
    let cases = [
        ("end_turn", StopReason::Stop, None),
        ("stop_sequence", StopReason::Stop, None),
        ("max_tokens", StopReason::Length, None),
        ("tool_use", StopReason::ToolUse, None),
        (
            "refusal",
            StopReason::Error,
            Some("anthropic declined to answer (refusal)".to_string()),
        ),
    ];
    for (reason, stop, error_message) in cases {
        let mut events = vec![message_start(1, 0, 0)];
        events.extend(message_end(reason, 2));
        let mut expected = message(
            vec![],
            Usage {
                input: 1,
                output: 2,
                cache_read: 0,
                cache_write: 0,
                total_tokens: 3,
            },
            stop,
        );
        expected.error_message = error_message;
        assert_eq!(decode(&stream(&events), 50).1, Ok(expected), "{reason}");
    }
}

#[test]
fn overloaded_error_mid_stream() {
    let raw = stream(&[
        message_start(10, 0, 0),
        block_start(0, json!({"type":"text","text":""})),
        delta(0, json!({"type":"text_delta","text":"Hel"})),
        json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
    ]);
    assert_eq!(
        decode(&raw, 7),
        (
            vec!["Hel".to_string()],
            Err(LlmError::new(
                LlmErrorKind::Server,
                "anthropic reported an error mid-stream (overloaded_error): Overloaded"
            ))
        )
    );
}

#[test]
fn truncated_stream_is_a_network_error() {
    let raw = stream(&[
        message_start(10, 0, 0),
        block_start(0, json!({"type":"text","text":""})),
        delta(0, json!({"type":"text_delta","text":"Hel"})),
    ]);
    assert_eq!(
        decode(&raw, 7).1,
        Err(LlmError::new(
            LlmErrorKind::Network,
            "the anthropic stream ended before the answer was complete"
        ))
    );
}

#[test]
fn invalid_tool_json_names_the_tool() {
    let mut events = vec![
        message_start(10, 0, 0),
        block_start(
            0,
            json!({"type":"tool_use","id":"toolu_1","name":"Write","input":{}}),
        ),
        delta(
            0,
            json!({"type":"input_json_delta","partial_json":"{\"path\": \"/a\", \"con"}),
        ),
        block_stop(0),
    ];
    events.extend(message_end("max_tokens", 4096));
    assert_eq!(
        decode(&stream(&events), 64).1,
        Err(LlmError::new(
            LlmErrorKind::Invalid,
            "anthropic sent invalid JSON input for tool `Write` (the answer hit the token limit): \
             EOF while parsing a string at line 1 column 19"
        ))
    );
}

#[test]
fn redacted_thinking_and_unknown_events_are_skipped() {
    let mut events = vec![
        message_start(3, 0, 0),
        block_start(
            0,
            json!({"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"}),
        ),
        block_stop(0),
        block_start(1, json!({"type":"text","text":"Hi"})),
        delta(
            1,
            json!({"type":"citations_delta","citation":{"type":"char_location"}}),
        ),
        block_stop(1),
        json!({"type":"some_future_event","x":1}),
    ];
    events.extend(message_end("end_turn", 1));
    assert_eq!(
        decode(&stream(&events), 64),
        (
            vec!["Hi".to_string()],
            Ok(message(
                vec![AssistantBlock::Text { text: "Hi".into() }],
                Usage {
                    input: 3,
                    output: 1,
                    cache_read: 0,
                    cache_write: 0,
                    total_tokens: 4
                },
                StopReason::Stop,
            ))
        )
    );
}
