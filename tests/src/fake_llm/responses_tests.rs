use super::*;
use crate::fake_llm::view::on;
use crate::fake_llm::{FakeLlm, Step, FAKE_API_KEY};

/// The events of some frames: each an `event:` line naming the type its
/// `data:` line repeats, numbered in order.
fn events(frames: &[String]) -> Vec<Value> {
    frames
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (event, data) = f.strip_suffix("\n\n").unwrap().split_once('\n').unwrap();
            let mut data: Value =
                serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
            assert_eq!(event.strip_prefix("event: "), data["type"].as_str(), "{f}");
            assert_eq!(data["sequence_number"], json!(i), "{f}");
            data.as_object_mut().unwrap().remove("sequence_number");
            data
        })
        .collect()
}

fn request(body: Value) -> Request {
    on(&body, Request::of)
}

#[test]
fn reasoning_text_and_call_frames_in_the_apis_order() {
    let asked = request(
        json!({"model": "gpt-5", "instructions": "Be brief.", "input": "hi",
        "stream": true, "store": false, "reasoning": {"effort": "low", "summary": "auto"},
        "include": ["reasoning.encrypted_content"], "prompt_cache_key": "gsv-1"}),
    );
    let reply = Reply {
        thinking: "Need ls.".into(),
        text: "On it.".into(),
        calls: vec![("call_1".into(), "Bash".into(), json!({"command": "ls -la"}))],
    };
    let tokens = TokenCounts {
        input: 10,
        output: 9,
        cache_read: 1024,
        cache_write: 0,
    };
    let mut response = asked.response.clone();
    let created = json!({"type": "response.created", "response": response});
    let in_progress = json!({"type": "response.in_progress", "response": response});
    let rs = json!({"id": REASONING_ID, "type": "reasoning", "encrypted_content": FAKE_ENCRYPTED,
        "summary": [{"type": "summary_text", "text": "Need ls."}]});
    let text =
        |t: &str| json!({"type": "output_text", "annotations": [], "logprobs": [], "text": t});
    let msg = json!({"id": MESSAGE_ID, "type": "message", "status": "completed",
        "content": [text("On it.")], "role": "assistant"});
    let fc_id = "fc_fake00000000000000000000000000";
    let fc = json!({"id": fc_id, "type": "function_call", "status": "completed",
        "arguments": "{\"command\":\"ls -la\"}", "call_id": "call_1", "name": "Bash"});
    let at = |i: u64| json!({"item_id": MESSAGE_ID, "output_index": i, "content_index": 0});
    let with = |mut v: Value, extra: Value| {
        for (k, x) in extra.as_object().unwrap() {
            v[k] = x.clone();
        }
        v
    };
    response["status"] = json!("completed");
    response["output"] = json!([rs, msg, fc]);
    response["usage"] = json!({"input_tokens": 1034, "input_tokens_details": {"cached_tokens": 1024},
        "output_tokens": 9, "output_tokens_details": {"reasoning_tokens": 2}, "total_tokens": 1043});
    assert_eq!(
        events(&frames(&asked, &reply, tokens)),
        vec![
            created,
            in_progress,
            json!({"type": "response.output_item.added", "output_index": 0, "item":
                {"id": REASONING_ID, "type": "reasoning", "encrypted_content": FAKE_ENCRYPTED, "summary": []}}),
            json!({"type": "response.reasoning_summary_part.added", "item_id": REASONING_ID,
                "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
            json!({"type": "response.reasoning_summary_text.delta", "item_id": REASONING_ID,
                "output_index": 0, "summary_index": 0, "delta": "Need "}),
            json!({"type": "response.reasoning_summary_text.delta", "item_id": REASONING_ID,
                "output_index": 0, "summary_index": 0, "delta": "ls."}),
            json!({"type": "response.reasoning_summary_text.done", "item_id": REASONING_ID,
                "output_index": 0, "summary_index": 0, "text": "Need ls."}),
            json!({"type": "response.reasoning_summary_part.done", "item_id": REASONING_ID,
                "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": "Need ls."}}),
            json!({"type": "response.output_item.done", "output_index": 0, "item": rs}),
            json!({"type": "response.output_item.added", "output_index": 1, "item":
                {"id": MESSAGE_ID, "type": "message", "status": "in_progress", "content": [], "role": "assistant"}}),
            with(
                at(1),
                json!({"type": "response.content_part.added", "part": text("")})
            ),
            with(
                at(1),
                json!({"type": "response.output_text.delta", "delta": "On ", "logprobs": []})
            ),
            with(
                at(1),
                json!({"type": "response.output_text.delta", "delta": "it.", "logprobs": []})
            ),
            with(
                at(1),
                json!({"type": "response.output_text.done", "text": "On it.", "logprobs": []})
            ),
            with(
                at(1),
                json!({"type": "response.content_part.done", "part": text("On it.")})
            ),
            json!({"type": "response.output_item.done", "output_index": 1, "item": msg}),
            json!({"type": "response.output_item.added", "output_index": 2, "item":
                {"id": fc_id, "type": "function_call", "status": "in_progress", "arguments": "",
                 "call_id": "call_1", "name": "Bash"}}),
            json!({"type": "response.function_call_arguments.delta", "item_id": fc_id,
                "output_index": 2, "delta": "{\"comman"}),
            json!({"type": "response.function_call_arguments.delta", "item_id": fc_id,
                "output_index": 2, "delta": "d\":\"ls -"}),
            json!({"type": "response.function_call_arguments.delta", "item_id": fc_id,
                "output_index": 2, "delta": "la\"}"}),
            json!({"type": "response.function_call_arguments.done", "item_id": fc_id,
                "output_index": 2, "arguments": "{\"command\":\"ls -la\"}"}),
            json!({"type": "response.output_item.done", "output_index": 2, "item": fc}),
            json!({"type": "response.completed", "response": response}),
        ]
    );
}

#[test]
fn the_response_echoes_its_request_and_reasoning_is_encrypted_only_on_request() {
    let asked = request(json!({"model": "o4-mini", "input": "hi", "stream": true,
        "tools": [{"type": "function", "name": "f", "parameters": {}, "strict": false}],
        "reasoning": {"effort": "high", "summary": "auto"}}));
    let r = &asked.response;
    assert_eq!(
        (
            &r["model"],
            &r["instructions"],
            &r["tools"],
            &r["reasoning"],
            &r["store"],
            asked.encrypted_reasoning
        ),
        (
            &json!("o4-mini"),
            &Value::Null,
            &json!([{"type": "function", "name": "f", "parameters": {}, "strict": false}]),
            &json!({"effort": "high", "summary": "auto"}),
            &json!(true),
            false
        )
    );
    let reply = Reply {
        thinking: "Hm.".into(),
        text: "Hi.".into(),
        calls: vec![],
    };
    let tokens = TokenCounts {
        input: 1,
        output: 2,
        cache_read: 0,
        cache_write: 0,
    };
    let done = events(&frames(&asked, &reply, tokens))
        .into_iter()
        .find(|e| e["type"] == "response.output_item.done")
        .unwrap();
    assert_eq!(
        done["item"],
        json!({"id": REASONING_ID, "type": "reasoning", "summary": [{"type": "summary_text", "text": "Hm."}]})
    );
    assert_eq!(
        events(&[error_frame(0)]),
        vec![
            json!({"type": "error", "code": "server_error", "param": null,
            "message": "The server had an error processing your request. Sorry about that! You can retry your request."})
        ]
    );
}

fn check(body: &Value) -> Result<(), Rejection> {
    on(body, super::check)
}

fn refusal(message: &str, param: Option<&str>, code: Option<&str>) -> Result<(), Rejection> {
    Err(Rejection {
        status: 400,
        body: json!({"error": {"message": message, "type": "invalid_request_error",
            "param": param, "code": code}}),
    })
}

#[test]
fn calls_and_outputs_must_pair_up_by_call_id() {
    let body = |input: Value| json!({"model": "gpt-5", "stream": true, "input": input});
    let asked = json!({"role": "user", "content": [{"type": "input_text", "text": "hi"}]});
    let call =
        json!({"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"});
    let output = |id: &str| json!({"type": "function_call_output", "call_id": id, "output": "ok"});
    assert_eq!(check(&body(json!([asked, call, output("call_1")]))), Ok(()));
    assert_eq!(
        check(&body(json!([asked, call]))),
        refusal(
            "No tool output found for function call call_1.",
            Some("input"),
            None
        )
    );
    assert_eq!(
        check(&body(json!([asked, output("call_9")]))),
        refusal(
            "No tool call found for function call output with call_id call_9.",
            Some("input"),
            None
        )
    );
    let object_arguments =
        json!({"type": "function_call", "call_id": "c", "name": "f", "arguments": {}});
    assert_eq!(
        check(&body(json!([object_arguments]))),
        refusal(
            "Invalid type for 'input[0].arguments': expected a string, but got an object instead.",
            Some("input[0].arguments"),
            Some("invalid_type")
        )
    );
}

#[test]
fn unknown_items_parts_tools_and_parameters_are_refused() {
    let body = |input: Value| json!({"model": "gpt-5", "stream": true, "input": input});
    assert_eq!(
        check(&body(json!([{"type": "tool_result", "call_id": "c"}]))),
        refusal(
            "Invalid value: 'tool_result'. Supported values are: 'message', 'reasoning', \
             'function_call', and 'function_call_output'.",
            Some("input[0].type"),
            Some("invalid_value")
        )
    );
    assert_eq!(
        check(&body(
            json!([{"type": "message", "role": "assistant", "content": [{"type": "input_text", "text": "x"}]}])
        )),
        refusal(
            "Invalid value: 'input_text'. Supported values are: 'output_text', and 'refusal'.",
            Some("input[0].content[0].type"),
            Some("invalid_value")
        )
    );
    let nested = json!({"model": "gpt-5", "stream": true, "input": "hi",
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]});
    assert_eq!(
        check(&nested),
        refusal(
            "Unknown parameter: 'tools[0].function'.",
            Some("tools[0].function"),
            Some("unknown_parameter")
        )
    );
    let chat = json!({"model": "gpt-5", "stream": true, "messages": []});
    assert_eq!(
        check(&chat),
        refusal(
            "Unknown parameter: 'messages'.",
            Some("messages"),
            Some("unknown_parameter")
        )
    );
    assert_eq!(
        check(&json!({"model": "gpt-5", "stream": true})),
        refusal(
            "Missing required parameter: 'input'.",
            Some("input"),
            Some("missing_required_parameter")
        )
    );
    let image = |url: &str| {
        body(json!([{"role": "user", "content": [
            {"type": "input_image", "image_url": url, "detail": "auto"}]}]))
    };
    assert_eq!(check(&image("data:image/png;base64,iVBORw0KGgo=")), Ok(()));
    assert_eq!(
        check(&image("data:text/plain;base64,aGk=")),
        refusal(
            "Invalid MIME type \"text/plain;base64\": the image must be png, jpeg, gif or webp, base64-encoded.",
            Some("input[0].content[0].image_url"),
            Some("invalid_image_url")
        )
    );
}

#[test]
fn reasoning_comes_back_whole_and_before_what_it_led_to() {
    let body =
        |input: Value| json!({"model": "gpt-5", "stream": true, "store": false, "input": input});
    let reasoning =
        json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"});
    let said = json!({"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": "Hi."}]});
    let asked = json!({"role": "user", "content": [{"type": "input_text", "text": "more"}]});
    assert_eq!(check(&body(json!([reasoning, said, asked]))), Ok(()));
    assert_eq!(
        check(&body(json!([reasoning, asked]))),
        refusal(
            "Item 'rs_1' of type 'reasoning' was provided without its required following item.",
            Some("input"),
            None
        )
    );
    let stored = json!({"type": "reasoning", "id": "rs_1", "summary": []});
    assert_eq!(
        check(&body(json!([stored, said]))),
        refusal(
            "Item with id 'rs_1' not found. Items are not persisted when `store` is set to false. \
             Try again with `store` set to true, or remove this item from your input.",
            Some("input"),
            None
        )
    );
}

#[test]
fn the_last_user_text_skips_outputs_and_the_assistant() {
    let text = |body: Value| on(&body, last_user_text);
    let input = json!([
        {"role": "user", "content": [{"type": "input_text", "text": "look up"},
            {"type": "input_image", "image_url": "data:image/png;base64,AA==", "detail": "auto"},
            {"type": "input_text", "text": "the weather"}]},
        {"type": "function_call", "call_id": "c", "name": "w", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c", "output": "sunny"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]}
    ]);
    assert_eq!(text(json!({"input": input})), "look up\nthe weather");
    assert_eq!(text(json!({"input": "plain"})), "plain");
    assert_eq!(text(json!({})), "");
}

/// The gateway's own Responses provider against the fake over HTTP: a
/// reasoning model's tool call, then its result with the reasoning sent
/// back as it came; the conversation's cache is read on the second call.
#[tokio::test]
async fn the_gateways_provider_round_trips_reasoning_and_a_tool_call() {
    use gsv_gateway::llm::sse::StreamReader;
    use gsv_gateway::llm::{
        provider_for, CacheTtl, Endpoint, LlmRequest, PromptCache, ThinkingLevel,
    };
    use gsv_protocol::{
        AssistantBlock, ContentBlock, Message, StopReason, ToolResultMessage, UserContent,
        UserMessage,
    };
    let llm = FakeLlm::start().await;
    llm.script(
        "list /tmp",
        vec![
            Step::Thinking {
                thinking: "Need ls.".into(),
                text: String::new(),
            },
            Step::tool_call("call_ls", "laptop__Bash", json!({"command": "ls /tmp"})),
            Step::text("Two files."),
        ],
    );
    let provider = provider_for("openai", Some("openai-responses"));
    let system = "Be thorough. ".repeat(400); // about 1 300 tokens
    let call = |messages: &[Message]| {
        let req = LlmRequest {
            model: "gpt-5",
            system_prompt: &system,
            messages,
            tools: &[],
            thinking: ThinkingLevel::Low,
            max_tokens: None,
            prepared: None,
            written: None,
            cache: Some(PromptCache {
                ttl: CacheTtl::FiveMinutes,
                key: "gsv-conversation",
            }),
        };
        let endpoint = Endpoint {
            base_url: llm.base_url_openai(),
            api_key: FAKE_API_KEY.into(),
        };
        let http = provider.build_request(&endpoint, &req);
        let decoder = provider.decoder("openai", "gpt-5");
        async move {
            let mut builder = reqwest::Client::new().post(&http.url).body(http.body);
            for (name, value) in &http.headers {
                builder = builder.header(name, value);
            }
            let mut response = builder.send().await.unwrap();
            assert_eq!(response.status(), 200);
            let mut reader = StreamReader::new(decoder);
            while let Some(bytes) = response.chunk().await.unwrap() {
                reader.push(&bytes).unwrap();
            }
            reader.finish(1).unwrap().1
        }
    };
    let mut history = vec![Message::User(UserMessage {
        content: UserContent::Text("list /tmp".into()),
        timestamp: 0,
        context: None,
    })];
    // Reasoning alone, then a call after it, then the answer.
    let thought = call(&history).await;
    assert_eq!(
        thought.content,
        vec![AssistantBlock::Thinking {
            thinking: "Need ls.".into(),
            thinking_signature: Some(
                json!({"id": REASONING_ID, "type": "reasoning", "encrypted_content": FAKE_ENCRYPTED,
                    "summary": [{"type": "summary_text", "text": "Need ls."}]})
                .to_string()
            ),
        }]
    );
    let called = call(&history).await;
    let mut turn = thought.clone();
    turn.content.extend(called.content.clone());
    turn.stop_reason = called.stop_reason;
    assert_eq!(
        (called.content, called.stop_reason),
        (
            vec![AssistantBlock::ToolCall {
                id: "call_ls".into(),
                name: "laptop__Bash".into(),
                arguments: json!({"command": "ls /tmp"}),
            }],
            Some(StopReason::ToolUse)
        )
    );
    history.push(Message::Assistant(turn));
    history.push(Message::ToolResult(ToolResultMessage {
        tool_call_id: "call_ls".into(),
        tool_name: "laptop__Bash".into(),
        content: vec![ContentBlock::Text {
            text: "a.txt\nb.txt".into(),
        }],
        is_error: false,
        timestamp: 0,
    }));
    let answer = call(&history).await;
    assert_eq!(answer.text(), "Two files.");
    assert!(answer.usage.unwrap().cache_read >= 1024);
    let last = llm.requests().pop().unwrap();
    assert_eq!(last.api, crate::fake_llm::Api::Responses);
    assert_eq!(
        last.body["input"],
        json!([
            {"role": "user", "content": [{"type": "input_text", "text": "list /tmp"}]},
            {"id": REASONING_ID, "type": "reasoning", "encrypted_content": FAKE_ENCRYPTED,
             "summary": [{"type": "summary_text", "text": "Need ls."}]},
            {"type": "function_call", "call_id": "call_ls", "name": "laptop__Bash",
             "arguments": "{\"command\":\"ls /tmp\"}"},
            {"type": "function_call_output", "call_id": "call_ls", "output": "a.txt\nb.txt"}
        ])
    );
}
