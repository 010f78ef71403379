//! Streams shaped exactly like api.openai.com's (`stream_options.include_usage`
//! on: every chunk has `"usage":null`, the last one has empty `choices`).

use super::*;
use crate::llm::sse::decode_raw_stream;
use serde_json::json;

const TS: i64 = 1_700_000_000_000;

/// Wraps `choices[0]` payloads into full chunks, then the usage chunk and
/// `[DONE]`, as the real API frames them.
fn stream(choices: &[Value], usage: Option<Value>) -> String {
    let frame = |choices: Value, usage: Value| {
        let chunk = json!({
            "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
            "object": "chat.completion.chunk",
            "created": 1741570283,
            "model": "gpt-4.1-2025-04-14",
            "service_tier": "default",
            "system_fingerprint": "fp_fc9f1d7035",
            "choices": choices,
            "usage": usage,
        });
        format!("data: {chunk}\n\n")
    };
    let mut out: String = choices
        .iter()
        .map(|c| frame(json!([c]), Value::Null))
        .collect();
    if let Some(usage) = usage {
        out.push_str(&frame(json!([]), usage));
    }
    out.push_str("data: [DONE]\n\n");
    out
}

fn delta(delta: Value, finish: Option<&str>) -> Value {
    json!({"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish})
}

fn decode(raw: &str, chunk_size: usize) -> (Vec<String>, Result<AssistantMessage, LlmError>) {
    decode_raw_stream(
        Box::new(ChatDecoder::new("openai", "gpt-4.1")),
        raw,
        chunk_size,
    )
}

fn message(content: Vec<AssistantBlock>, usage: Usage, stop: StopReason) -> AssistantMessage {
    AssistantMessage {
        content,
        api: Some("openai-completions".into()),
        provider: Some("openai".into()),
        model: Some("gpt-4.1".into()),
        usage: Some(usage),
        stop_reason: Some(stop),
        error_message: None,
        timestamp: TS,
    }
}

fn real_usage() -> Value {
    json!({"prompt_tokens":1117,"completion_tokens":46,"total_tokens":1163,
        "prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":0},
        "completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,
            "accepted_prediction_tokens":0,"rejected_prediction_tokens":0}})
}

#[test]
fn text_stream_with_usage_whatever_the_chunking() {
    let raw = stream(
        &[
            delta(
                json!({"role":"assistant","content":"","refusal":null}),
                None,
            ),
            delta(json!({"content":"héllo"}), None),
            delta(json!({"content":" 👋"}), None),
            delta(json!({}), Some("stop")),
        ],
        Some(real_usage()),
    );
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

#[test]
fn parallel_tool_calls_accumulate_by_index() {
    let call = |index: u64, id: Option<&str>, name: Option<&str>, args: &str| {
        let mut function = json!({"arguments": args});
        if let Some(name) = name {
            function["name"] = json!(name);
        }
        let mut piece = json!({"index": index, "function": function});
        if let Some(id) = id {
            piece["id"] = json!(id);
            piece["type"] = json!("function");
        }
        delta(json!({"tool_calls": [piece]}), None)
    };
    let raw = stream(
        &[
            delta(json!({"role":"assistant","content":"Checking both."}), None),
            call(
                0,
                Some("call_DdmO9pD3xa9XTPNJ32zg2hcA"),
                Some("get_weather"),
                "",
            ),
            call(0, None, None, "{\"lo"),
            call(0, None, None, "cation\": \"Paris, Fr"),
            call(0, None, None, "ance\"}"),
            call(1, Some("call_ABCDEF"), Some("laptop__Bash"), ""),
            call(1, None, None, "{\"command\":\"ls\"}"),
            delta(json!({}), Some("tool_calls")),
        ],
        Some(
            json!({"prompt_tokens":80,"completion_tokens":40,"total_tokens":120,
            "prompt_tokens_details":{"cached_tokens":0}}),
        ),
    );
    let (deltas, result) = decode(&raw, 5);
    assert_eq!(deltas.concat(), "Checking both.");
    assert_eq!(
        result,
        Ok(message(
            vec![
                AssistantBlock::Text {
                    text: "Checking both.".into()
                },
                AssistantBlock::ToolCall {
                    id: "call_DdmO9pD3xa9XTPNJ32zg2hcA".into(),
                    name: "get_weather".into(),
                    arguments: json!({"location": "Paris, France"}),
                },
                AssistantBlock::ToolCall {
                    id: "call_ABCDEF".into(),
                    name: "laptop__Bash".into(),
                    arguments: json!({"command": "ls"}),
                },
            ],
            Usage {
                input: 80,
                output: 40,
                cache_read: 0,
                cache_write: 0,
                total_tokens: 120
            },
            StopReason::ToolUse,
        ))
    );
}

#[test]
fn compatible_server_variations() {
    // Ollama-style: no index, whole call with object arguments, "stop" as the
    // finish reason, no usage chunk, reasoning in `reasoning`.
    let raw = stream(
        &[
            delta(json!({"role":"assistant","reasoning":"Let me "}), None),
            delta(json!({"reasoning":"think."}), None),
            delta(
                json!({"content":"","tool_calls":[{"id":"call_x","function":{"name":"Read","arguments":{"path":"/a"}}}]}),
                None,
            ),
            delta(
                json!({"tool_calls":[{"function":{"name":"NoArgs","arguments":""}}]}),
                Some("stop"),
            ),
        ],
        None,
    );
    assert_eq!(
        decode(&raw, 9).1,
        Ok(message(
            vec![
                AssistantBlock::Thinking {
                    thinking: "Let me think.".into(),
                    thinking_signature: None
                },
                AssistantBlock::ToolCall {
                    id: "call_x".into(),
                    name: "Read".into(),
                    arguments: json!({"path":"/a"})
                },
                AssistantBlock::ToolCall {
                    id: "call_1".into(),
                    name: "NoArgs".into(),
                    arguments: json!({})
                },
            ],
            Usage::default(),
            StopReason::ToolUse,
        ))
    );
}

#[test]
fn reasoning_content_then_text_and_length_stop() {
    let raw = stream(
        &[
            delta(
                json!({"role":"assistant","content":null,"reasoning_content":"Hmm."}),
                None,
            ),
            delta(json!({"content":"Par"}), None),
            delta(json!({"content":"tial"}), Some("length")),
        ],
        None,
    );
    assert_eq!(
        decode(&raw, 4),
        (
            vec!["Par".to_string(), "tial".to_string()],
            Ok(message(
                vec![
                    AssistantBlock::Thinking {
                        thinking: "Hmm.".into(),
                        thinking_signature: None
                    },
                    AssistantBlock::Text {
                        text: "Partial".into()
                    },
                ],
                Usage::default(),
                StopReason::Length,
            ))
        )
    );
}

#[test]
fn content_filter_is_an_error_stop() {
    let raw = stream(&[delta(json!({}), Some("content_filter"))], None);
    let mut expected = message(vec![], Usage::default(), StopReason::Error);
    expected.error_message = Some("openai stopped the answer with its content filter".into());
    assert_eq!(decode(&raw, 100).1, Ok(expected));
}

#[test]
fn invalid_tool_arguments_name_the_tool() {
    let raw = stream(
        &[
            delta(
                json!({"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"Write","arguments":"{\"path\": \"/a\", \"con"}}]}),
                None,
            ),
            delta(json!({}), Some("length")),
        ],
        None,
    );
    let err = decode(&raw, 100).1.unwrap_err();
    assert_eq!(
        err,
        LlmError::new(
            LlmErrorKind::Invalid,
            "openai sent invalid JSON arguments for tool `Write` (the answer hit the token limit): \
             EOF while parsing a string at line 1 column 19"
        )
    );
}

#[test]
fn error_object_mid_stream() {
    let mut raw = stream(&[delta(json!({"content":"Hel"}), None)], None);
    raw = raw.replace(
        "data: [DONE]\n\n",
        "data: {\"error\":{\"message\":\"The server had an error while processing your request.\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n",
    );
    assert_eq!(
        decode(&raw, 10),
        (
            vec!["Hel".to_string()],
            Err(LlmError::new(
                LlmErrorKind::Server,
                "openai reported an error mid-stream (server_error): The server had an error while processing your request."
            ))
        )
    );
}

#[test]
fn truncated_stream_is_a_network_error() {
    let raw =
        stream(&[delta(json!({"content":"Hel"}), None)], None).replace("data: [DONE]\n\n", "");
    assert_eq!(
        decode(&raw, 10).1,
        Err(LlmError::new(
            LlmErrorKind::Network,
            "the openai stream ended before the answer was complete"
        ))
    );
    // Cut inside a chunk: the partial line is discarded, not misparsed.
    let cut = &raw[..raw.len() - 20];
    assert_eq!(decode(cut, 10).1.unwrap_err().kind, LlmErrorKind::Network);
}

#[test]
fn garbage_chunk_is_invalid() {
    assert_eq!(
        decode("data: {nope\n\n", 100).1.unwrap_err().kind,
        LlmErrorKind::Invalid
    );
}

#[test]
fn comment_lines_are_ignored() {
    let raw = format!(
        ": OPENROUTER PROCESSING\n\n{}",
        stream(
            &[delta(json!({"content":"ok"}), Some("stop"))],
            Some(json!({"prompt_tokens":5,"completion_tokens":1,"total_tokens":6})),
        )
    );
    assert_eq!(
        decode(&raw, 3).1,
        Ok(message(
            vec![AssistantBlock::Text { text: "ok".into() }],
            Usage {
                input: 5,
                output: 1,
                cache_read: 0,
                cache_write: 0,
                total_tokens: 6
            },
            StopReason::Stop,
        ))
    );
}
