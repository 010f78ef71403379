//! The SSE frames of a streamed answer, byte for byte as each real API
//! frames them. Pure, so the exact wire shapes are unit tested.

use serde_json::{json, Value};

/// What the fake answers with.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Reply {
    pub thinking: String,
    pub text: String,
    /// (id, name, arguments)
    pub calls: Vec<(String, String, Value)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokenCounts {
    pub input: u64,
    pub output: u64,
    /// Input read from a prompt cache, and written to one.
    pub cache_read: u64,
    pub cache_write: u64,
}

/// The created/id values are fixed: the fake is deterministic.
const CREATED: u64 = 1_741_570_283;
const CHAT_ID: &str = "chatcmpl-fake0000000000000000000000";
const MESSAGE_ID: &str = "msg_fake00000000000000000000";
/// A stand-in for Anthropic's opaque thinking signature.
pub(crate) const FAKE_SIGNATURE: &str = "RmFrZVNpZ25hdHVyZQ==";

/// Splits text the way models stream it: a word with its trailing spaces
/// per piece (so pieces carry multi-byte characters whole).
pub(crate) fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if !c.is_whitespace() && current.ends_with(char::is_whitespace) {
            out.push(std::mem::take(&mut current));
        }
        current.push(c);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// JSON arguments stream as fragments of a few characters.
fn fragments(json: &str) -> Vec<String> {
    let chars: Vec<char> = json.chars().collect();
    chars.chunks(8).map(|c| c.iter().collect()).collect()
}

/// Chat Completions chunks. With `include_usage` every chunk carries
/// `"usage": null` and a last chunk with empty `choices` carries the usage.
pub(crate) fn openai_frames(
    model: &str,
    reply: &Reply,
    tokens: TokenCounts,
    include_usage: bool,
) -> Vec<String> {
    let chunk = |choices: Value, usage: Option<Value>| {
        let mut c = json!({
            "id": CHAT_ID,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "system_fingerprint": "fp_fake",
            "choices": choices,
        });
        if include_usage {
            c["usage"] = usage.unwrap_or(Value::Null);
        }
        format!("data: {c}\n\n")
    };
    let delta = |delta: Value, finish: Option<&str>| {
        chunk(
            json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]),
            None,
        )
    };
    let first_content = if reply.text.is_empty() && !reply.calls.is_empty() {
        Value::Null
    } else {
        json!("")
    };
    let mut frames = vec![delta(
        json!({"role": "assistant", "content": first_content, "refusal": null}),
        None,
    )];
    // api.openai.com does not stream reasoning; compatible servers do, so.
    frames.extend(
        pieces(&reply.thinking)
            .iter()
            .map(|p| delta(json!({"reasoning_content": p}), None)),
    );
    frames.extend(
        pieces(&reply.text)
            .iter()
            .map(|p| delta(json!({"content": p}), None)),
    );
    for (index, (id, name, args)) in reply.calls.iter().enumerate() {
        frames.push(delta(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
        for fragment in fragments(&args.to_string()) {
            frames.push(delta(
                json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}),
                None,
            ));
        }
    }
    let finish = if reply.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    frames.push(delta(json!({}), Some(finish)));
    if include_usage {
        frames.push(chunk(
            json!([]),
            Some(json!({
                "prompt_tokens": tokens.input + tokens.cache_read,
                "completion_tokens": tokens.output,
                "total_tokens": tokens.input + tokens.cache_read + tokens.output,
                "prompt_tokens_details": {"cached_tokens": tokens.cache_read, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                    "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
            })),
        ));
    }
    frames.push("data: [DONE]\n\n".to_string());
    frames
}

/// A Chat Completions error chunk, as sent when a stream fails midway.
pub(crate) fn openai_error_frame() -> String {
    let error = json!({"error": {"message": "The server had an error while processing your request. Sorry about that!",
        "type": "server_error", "param": null, "code": null}});
    format!("data: {error}\n\n")
}

fn anthropic_event(data: Value) -> String {
    format!(
        "event: {}\ndata: {data}\n\n",
        data["type"].as_str().unwrap_or("message")
    )
}

/// Messages API events: `message_start`, a `ping`, each content block's
/// start/deltas/stop, `message_delta` and `message_stop`.
pub(crate) fn anthropic_frames(model: &str, reply: &Reply, tokens: TokenCounts) -> Vec<String> {
    let mut frames = vec![anthropic_event(json!({
        "type": "message_start",
        "message": {"id": MESSAGE_ID, "type": "message", "role": "assistant", "content": [],
            "model": model, "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": tokens.input,
                "cache_creation_input_tokens": tokens.cache_write,
                "cache_read_input_tokens": tokens.cache_read, "output_tokens": 1,
                "service_tier": "standard"}},
    }))];
    let mut index = 0;
    let mut block = |frames: &mut Vec<String>, start: Value, deltas: Vec<Value>| {
        frames.push(anthropic_event(
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        if index == 0 {
            frames.push(anthropic_event(json!({"type": "ping"})));
        }
        for delta in deltas {
            frames.push(anthropic_event(
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        frames.push(anthropic_event(
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    };
    if !reply.thinking.is_empty() {
        let mut deltas: Vec<Value> = pieces(&reply.thinking)
            .iter()
            .map(|p| json!({"type": "thinking_delta", "thinking": p}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": FAKE_SIGNATURE}));
        block(
            &mut frames,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
        );
    }
    if !reply.text.is_empty() || reply.calls.is_empty() {
        let deltas = pieces(&reply.text)
            .iter()
            .map(|p| json!({"type": "text_delta", "text": p}))
            .collect();
        block(&mut frames, json!({"type": "text", "text": ""}), deltas);
    }
    for (id, name, args) in &reply.calls {
        let mut deltas = vec![json!({"type": "input_json_delta", "partial_json": ""})];
        deltas.extend(
            fragments(&args.to_string())
                .iter()
                .map(|f| json!({"type": "input_json_delta", "partial_json": f})),
        );
        block(
            &mut frames,
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            deltas,
        );
    }
    let stop_reason = if reply.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    frames.push(anthropic_event(json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": tokens.output},
    })));
    frames.push(anthropic_event(json!({"type": "message_stop"})));
    frames
}

/// Anthropic's in-stream error event.
pub(crate) fn anthropic_error_frame() -> String {
    anthropic_event(
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_keep_words_with_their_spaces() {
        assert_eq!(
            pieces("echo: héllo  👋 x"),
            vec!["echo: ", "héllo  ", "👋 ", "x"]
        );
        assert_eq!(pieces(""), Vec::<String>::new());
        assert_eq!(
            fragments(r#"{"command":"ls"}"#),
            vec![r#"{"comman"#, r#"d":"ls"}"#]
        );
    }

    /// Each frame is one `data:` line and a blank line; returns the JSONs.
    fn openai_chunks(frames: &[String]) -> Vec<Value> {
        frames
            .iter()
            .map(|f| {
                let data = f
                    .strip_prefix("data: ")
                    .and_then(|d| d.strip_suffix("\n\n"))
                    .unwrap();
                assert!(!data.contains('\n'), "{f:?}");
                serde_json::from_str(data).unwrap_or(json!(data))
            })
            .collect()
    }

    #[test]
    fn openai_text_frames() {
        let reply = Reply {
            text: "hi there".into(),
            ..Default::default()
        };
        let frames = openai_frames(
            "gpt-x",
            &reply,
            TokenCounts {
                input: 3,
                output: 2,
                cache_read: 0,
                cache_write: 0,
            },
            true,
        );
        let chunk = |choices: Value, usage: Value| {
            json!({"id":"chatcmpl-fake0000000000000000000000","object":"chat.completion.chunk",
                "created":1741570283,"model":"gpt-x","system_fingerprint":"fp_fake","choices":choices,"usage":usage})
        };
        let delta = |delta: Value, finish: Value| {
            chunk(
                json!([{"index":0,"delta":delta,"logprobs":null,"finish_reason":finish}]),
                Value::Null,
            )
        };
        assert_eq!(
            openai_chunks(&frames),
            vec![
                delta(
                    json!({"role":"assistant","content":"","refusal":null}),
                    Value::Null
                ),
                delta(json!({"content":"hi "}), Value::Null),
                delta(json!({"content":"there"}), Value::Null),
                delta(json!({}), json!("stop")),
                chunk(
                    json!([]),
                    json!({"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,
                        "prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},
                        "completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,
                            "accepted_prediction_tokens":0,"rejected_prediction_tokens":0}})
                ),
                json!("[DONE]"),
            ]
        );
    }

    #[test]
    fn openai_tool_call_frames_without_usage() {
        let reply = Reply {
            calls: vec![("call_1".into(), "Bash".into(), json!({"command": "ls -la"}))],
            ..Default::default()
        };
        let frames = openai_frames(
            "m",
            &reply,
            TokenCounts {
                input: 1,
                output: 1,
                cache_read: 0,
                cache_write: 0,
            },
            false,
        );
        let chunks = openai_chunks(&frames);
        let deltas: Vec<Value> = chunks
            .iter()
            .filter(|c| c.is_object())
            .map(|c| c["choices"][0].clone())
            .collect();
        assert!(chunks.iter().all(|c| c.get("usage").is_none()));
        assert_eq!(
            deltas,
            vec![
                json!({"index":0,"delta":{"role":"assistant","content":null,"refusal":null},"logprobs":null,"finish_reason":null}),
                json!({"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Bash","arguments":""}}]},"logprobs":null,"finish_reason":null}),
                json!({"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"comman"}}]},"logprobs":null,"finish_reason":null}),
                json!({"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"d\":\"ls -"}}]},"logprobs":null,"finish_reason":null}),
                json!({"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"la\"}"}}]},"logprobs":null,"finish_reason":null}),
                json!({"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}),
            ]
        );
        assert_eq!(frames.last().unwrap(), "data: [DONE]\n\n");
    }

    #[test]
    fn anthropic_frames_for_thinking_text_and_tool_use() {
        let reply = Reply {
            thinking: "Hmm.".into(),
            text: "On it.".into(),
            calls: vec![("toolu_1".into(), "Bash".into(), json!({"c": 1}))],
        };
        let frames = anthropic_frames(
            "claude-x",
            &reply,
            TokenCounts {
                input: 10,
                output: 4,
                cache_read: 0,
                cache_write: 0,
            },
        );
        let events: Vec<(String, Value)> = frames
            .iter()
            .map(|f| {
                let (event, data) = f.trim_end().split_once('\n').unwrap();
                let data = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
                (event.strip_prefix("event: ").unwrap().to_string(), data)
            })
            .collect();
        let expected: Vec<Value> = vec![
            json!({"type":"message_start","message":{"id":"msg_fake00000000000000000000","type":"message","role":"assistant",
                "content":[],"model":"claude-x","stop_reason":null,"stop_sequence":null,
                "usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,
                    "output_tokens":1,"service_tier":"standard"}}}),
            json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}),
            json!({"type":"ping"}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hmm."}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":FAKE_SIGNATURE}}),
            json!({"type":"content_block_stop","index":0}),
            json!({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}),
            json!({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"On "}}),
            json!({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"it."}}),
            json!({"type":"content_block_stop","index":1}),
            json!({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}),
            json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}),
            json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"c\":1}"}}),
            json!({"type":"content_block_stop","index":2}),
            json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":4}}),
            json!({"type":"message_stop"}),
        ];
        let expected: Vec<(String, Value)> = expected
            .into_iter()
            .map(|d| (d["type"].as_str().unwrap().to_string(), d))
            .collect();
        assert_eq!(events, expected);
    }
}
