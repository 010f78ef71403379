//! The fake driven over real HTTP by the gateway's own providers: request
//! building, SSE parsing and decoding, exactly as the Worker shell will.

use std::time::{Duration, Instant};

use gsv_gateway::llm::sse::StreamReader;
use gsv_gateway::llm::{provider_for, Endpoint, LlmError, LlmErrorKind, LlmRequest, ThinkingLevel};
use gsv_protocol::{
    AssistantBlock, AssistantMessage, ContentBlock, Message, StopReason, ToolResultMessage, Usage,
    UserContent, UserMessage,
};
use serde_json::{json, Value};

use super::checks::{estimate_tokens, prompt_chars};
use super::*;

const TS: i64 = 1_700_000_000_000;

/// What a call produced: status, visible deltas, outcome.
struct Outcome {
    status: u16,
    content_type: String,
    deltas: Vec<String>,
    result: Result<AssistantMessage, LlmError>,
}

fn network(e: impl std::fmt::Display) -> LlmError {
    LlmError::new(LlmErrorKind::Network, e.to_string())
}

/// One model call the way the Worker shell makes it.
async fn call(llm: &FakeLlm, provider_name: &str, key: &str, req: &LlmRequest<'_>) -> Outcome {
    call_with_timeout(llm, provider_name, key, req, Duration::from_secs(10)).await
}

async fn call_with_timeout(
    llm: &FakeLlm,
    provider_name: &str,
    key: &str,
    req: &LlmRequest<'_>,
    timeout: Duration,
) -> Outcome {
    let provider = provider_for(provider_name, None);
    let base_url = if provider.api() == "anthropic-messages" {
        llm.base_url_anthropic()
    } else {
        llm.base_url_openai()
    };
    let http = provider.build_request(
        &Endpoint {
            base_url,
            api_key: key.into(),
        },
        req,
    );
    let client = reqwest::Client::builder().timeout(timeout).build().unwrap();
    let mut builder = client.post(&http.url).body(http.body.clone());
    for (name, value) in &http.headers {
        builder = builder.header(name, value);
    }
    let failed = |result| Outcome {
        status: 0,
        content_type: String::new(),
        deltas: vec![],
        result,
    };
    let mut response = match builder.send().await {
        Ok(r) => r,
        Err(e) => return failed(Err(network(e))),
    };
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let content_type = header("content-type").unwrap_or_default();
    if status != 200 {
        let retry_after = header("retry-after-ms")
            .map(|ms| format!("{ms}ms"))
            .or_else(|| header("retry-after"));
        let body = response.text().await.unwrap_or_default();
        let result = Err(provider.classify_error(status, retry_after.as_deref(), &body));
        return Outcome {
            status,
            content_type,
            deltas: vec![],
            result,
        };
    }
    let mut reader = StreamReader::new(provider.decoder(provider_name, req.model));
    let mut deltas = Vec::new();
    let outcome = |deltas, result| Outcome {
        status,
        content_type: content_type.clone(),
        deltas,
        result,
    };
    loop {
        match response.chunk().await {
            Ok(Some(bytes)) => match reader.push(&bytes) {
                Ok(text) if text.is_empty() => {}
                Ok(text) => deltas.push(text),
                Err(e) => return outcome(deltas, Err(e)),
            },
            Ok(None) => break,
            Err(e) => return outcome(deltas, Err(network(e))),
        }
    }
    let result = reader.finish(TS).map(|(tail, message)| {
        assert_eq!(tail, "");
        message
    });
    outcome(deltas, result)
}

fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: 1,
        context: None,
    })
}

fn request<'a>(model: &'a str, messages: &'a [Message]) -> LlmRequest<'a> {
    LlmRequest {
        model,
        system_prompt: "You are gsv.",
        messages,
        tools: &[],
        thinking: ThinkingLevel::None,
        max_tokens: None,
        prepared: None,
        written: None,
        cache: None,
    }
}

fn expected_message(
    provider: &str,
    model: &str,
    content: Vec<AssistantBlock>,
    usage: Usage,
    stop: StopReason,
) -> AssistantMessage {
    let api = if provider == "anthropic" {
        "anthropic-messages"
    } else {
        "openai-completions"
    };
    AssistantMessage {
        content,
        api: Some(api.into()),
        provider: Some(provider.into()),
        model: Some(model.into()),
        usage: Some(usage),
        stop_reason: Some(stop),
        error_message: None,
        timestamp: TS,
    }
}

/// The usage the fake reports for `body` and `output_chars` of answer.
fn fake_usage(body: &Value, output_chars: usize) -> Usage {
    let (input, output) = (
        estimate_tokens(super::view::on(body, prompt_chars)),
        estimate_tokens(output_chars),
    );
    Usage {
        input,
        output,
        cache_read: 0,
        cache_write: 0,
        total_tokens: input + output,
    }
}

const PROVIDERS: [(&str, &str); 2] = [("openai", "gpt-4.1"), ("anthropic", "claude-sonnet-4-5")];

#[tokio::test]
async fn echo_reply_streams_word_by_word_on_both_apis() {
    let llm = FakeLlm::start().await;
    llm.set_token_delay_ms(5); // one TCP read per frame, so the deltas show
    let messages = vec![user("héllo 👋 there")];
    for (name, model) in PROVIDERS {
        llm.clear_requests();
        let out = call(&llm, name, FAKE_API_KEY, &request(model, &messages)).await;
        assert_eq!(
            (out.status, out.content_type.as_str()),
            (200, "text/event-stream; charset=utf-8")
        );
        assert_eq!(
            out.deltas,
            vec!["echo: ", "héllo ", "👋 ", "there"],
            "{name}"
        );
        let recorded = llm.requests();
        assert_eq!(recorded.len(), 1);
        let text = "echo: héllo 👋 there";
        assert_eq!(
            out.result,
            Ok(expected_message(
                name,
                model,
                vec![AssistantBlock::Text { text: text.into() }],
                fake_usage(&recorded[0].body, text.chars().count()),
                StopReason::Stop,
            )),
            "{name}"
        );
    }
}

/// The gateway's Anthropic body with caching, against the fake's caching
/// rules: the first call writes the prefix, the next reads it and writes
/// only what it added; marks the API refuses are refused.
#[tokio::test]
async fn anthropic_prompt_caching_reads_what_the_last_call_wrote() {
    use gsv_gateway::llm::{CacheTtl, PromptCache};
    let llm = FakeLlm::start().await;
    let system = "Be thorough. ".repeat(400); // about 1 300 tokens
    fn cached<'a>(system: &'a str, messages: &'a [Message]) -> LlmRequest<'a> {
        LlmRequest {
            system_prompt: system,
            cache: Some(PromptCache {
                ttl: CacheTtl::FiveMinutes,
                key: "k",
            }),
            ..request("claude-sonnet-4-5", messages)
        }
    }
    let usage = |out: Outcome| out.result.unwrap().usage.unwrap();
    let mut history = vec![user("first")];
    let first = usage(call(&llm, "anthropic", FAKE_API_KEY, &cached(&system, &history)).await);
    assert_eq!((first.input, first.cache_read), (0, 0));
    assert!(first.cache_write > 1300, "{first:?}");
    history.push(Message::Assistant(expected_message(
        "anthropic",
        "claude-sonnet-4-5",
        vec![AssistantBlock::Text {
            text: "echo: first".into(),
        }],
        first.clone(),
        StopReason::Stop,
    )));
    history.push(user("second"));
    let second = usage(call(&llm, "anthropic", FAKE_API_KEY, &cached(&system, &history)).await);
    assert_eq!(second.cache_read, first.cache_write);
    assert!(
        second.cache_write > 0 && second.cache_write < 20,
        "{second:?}"
    );
    assert_eq!(second.input, 0);
    // Uncached, the same conversation bills all of it as input.
    let plain = LlmRequest {
        cache: None,
        ..cached(&system, &history)
    };
    let whole = usage(call(&llm, "anthropic", FAKE_API_KEY, &plain).await);
    assert_eq!((whole.cache_read, whole.cache_write), (0, 0));
    assert!(whole.input >= second.cache_read + second.cache_write);
}

#[tokio::test]
async fn requests_are_recorded_as_sent() {
    let llm = FakeLlm::start().await;
    let messages = vec![user("hi")];
    let req = request("gpt-4.1", &messages);
    let before = Instant::now();
    call(&llm, "openai", FAKE_API_KEY, &req).await;
    let after = Instant::now();
    let sent = provider_for("openai", None).build_request(
        &Endpoint {
            base_url: llm.base_url_openai(),
            api_key: FAKE_API_KEY.into(),
        },
        &req,
    );
    let recorded = llm.requests();
    let (received_at, checked_at, answered_at) = (
        recorded[0].received_at,
        recorded[0].checked_at,
        recorded[0].answered_at,
    );
    assert_eq!(
        recorded,
        vec![RecordedRequest {
            api: Api::OpenAi,
            body: serde_json::from_str(&sent.body).unwrap(),
            api_key: Some(FAKE_API_KEY.into()),
            received_at,
            checked_at,
            answered_at,
        }]
    );
    // Received, then answered (the stream ended) before the call returned.
    let answered_at = answered_at.expect("the answer was sent whole");
    assert!(before <= received_at && received_at <= checked_at);
    assert!(checked_at <= answered_at && answered_at <= after);
}

#[tokio::test]
async fn answers_are_timed_for_streams_and_errors_and_survive_clears() {
    let llm = FakeLlm::start().await;
    let messages = vec![user("slow")];
    let req = request("gpt-4.1", &messages);
    llm.script("slow", vec![Step::text("one two three four")]);
    llm.set_token_delay_ms(20);
    call(&llm, "openai", FAKE_API_KEY, &req).await;
    llm.set_token_delay_ms(0);
    let streamed = llm.requests().remove(0);
    let took = streamed.answered_at.unwrap() - streamed.received_at;
    // Several frames 20 ms apart: the end is the stream's, not the head's.
    assert!(took >= Duration::from_millis(60), "{took:?}");

    // A rejected request (a JSON error body) is answered too.
    call(&llm, "openai", "sk-wrong", &req).await;
    let rejected = llm.requests().remove(1);
    assert!(rejected.answered_at.unwrap() >= rejected.received_at);

    // A request cleared while its answer streams is not confused with a
    // later one; a broken stream never counts as answered.
    llm.script("slow", vec![Step::delay(200, Step::text("late"))]);
    let slow = tokio::spawn({
        let url = llm.base_url_openai();
        async move {
            reqwest::Client::new()
                .post(format!("{url}/chat/completions"))
                .bearer_auth(FAKE_API_KEY)
                .body(r#"{"model":"gpt-4.1","stream":true,"messages":[{"role":"user","content":"slow"}]}"#)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap()
        }
    });
    while llm.requests().len() < 3 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    llm.clear_requests();
    llm.script("broken", vec![Step::StreamError]);
    let messages = vec![user("broken")];
    call(&llm, "openai", FAKE_API_KEY, &request("gpt-4.1", &messages)).await;
    assert!(slow.await.unwrap().contains("late"));
    let after_clear = llm.requests();
    assert_eq!(after_clear.len(), 1);
    assert_eq!(after_clear[0].answered_at, None);
}

#[tokio::test]
async fn scripted_tool_loop_round_trips_through_the_real_request_builders() {
    let llm = FakeLlm::start().await;
    for (name, model) in PROVIDERS {
        let trigger = format!("weather via {name}");
        llm.script(
            &trigger,
            vec![
                Step::ToolCalls {
                    text: "Checking.".into(),
                    calls: vec![
                        (
                            "toolu_01".into(),
                            "laptop__Bash".into(),
                            json!({"command": "curl wttr.in/Paris"}),
                        ),
                        ("toolu_02".into(), "laptop__Read".into(), json!({})),
                    ],
                },
                Step::text("Sunny, 21°C."),
            ],
        );
        let mut history = vec![user(&format!("What's the {trigger}?"))];
        let first = call(&llm, name, FAKE_API_KEY, &request(model, &history))
            .await
            .result
            .unwrap();
        assert_eq!(
            (first.content.clone(), first.stop_reason),
            (
                vec![
                    AssistantBlock::Text {
                        text: "Checking.".into()
                    },
                    AssistantBlock::ToolCall {
                        id: "toolu_01".into(),
                        name: "laptop__Bash".into(),
                        arguments: json!({"command": "curl wttr.in/Paris"}),
                    },
                    AssistantBlock::ToolCall {
                        id: "toolu_02".into(),
                        name: "laptop__Read".into(),
                        arguments: json!({})
                    },
                ],
                Some(StopReason::ToolUse)
            ),
            "{name}"
        );
        history.push(Message::Assistant(first));
        for (id, output) in [("toolu_01", "sunny 21C"), ("toolu_02", "ok")] {
            history.push(Message::ToolResult(ToolResultMessage {
                tool_call_id: id.into(),
                tool_name: "laptop__Bash".into(),
                content: vec![ContentBlock::Text {
                    text: output.into(),
                }],
                is_error: false,
                timestamp: 3,
            }));
        }
        let second = call(&llm, name, FAKE_API_KEY, &request(model, &history)).await;
        assert_eq!(second.result.unwrap().text(), "Sunny, 21°C.", "{name}");
        // Exhausted: back to echoing.
        let third = call(&llm, name, FAKE_API_KEY, &request(model, &history)).await;
        assert_eq!(
            third.result.unwrap().text(),
            format!("echo: What's the {trigger}?")
        );
    }
}

#[tokio::test]
async fn thinking_comes_back_and_can_be_replayed() {
    let llm = FakeLlm::start().await;
    llm.script(
        "think",
        vec![
            Step::Thinking {
                thinking: "Let me see.".into(),
                text: "42.".into()
            };
            2
        ],
    );
    for (name, model) in PROVIDERS {
        let mut history = vec![user("think hard")];
        let mut req = request(model, &history);
        req.thinking = ThinkingLevel::High;
        let out = call(&llm, name, FAKE_API_KEY, &req).await;
        let signature = (name == "anthropic").then(|| frames::FAKE_SIGNATURE.to_string());
        let message = out.result.unwrap();
        assert_eq!(
            message.content,
            vec![
                AssistantBlock::Thinking {
                    thinking: "Let me see.".into(),
                    thinking_signature: signature
                },
                AssistantBlock::Text { text: "42.".into() },
            ],
            "{name}"
        );
        assert_eq!(out.deltas.concat(), "42.");
        // Replaying the signed thinking passes the fake's checks.
        history.push(Message::Assistant(message));
        history.push(user("and again"));
        assert!(call(&llm, name, FAKE_API_KEY, &request(model, &history))
            .await
            .result
            .is_ok());
    }
}

#[tokio::test]
async fn wrong_or_missing_key_is_rejected_like_the_real_apis() {
    let llm = FakeLlm::start().await;
    let messages = vec![user("hi")];
    let out = call(
        &llm,
        "openai",
        "sk-wrong-key-123",
        &request("gpt-4.1", &messages),
    )
    .await;
    assert_eq!(
        (out.status, out.content_type.as_str()),
        (401, "application/json")
    );
    assert_eq!(
        out.result,
        Err(LlmError {
            kind: LlmErrorKind::Auth,
            message: "openai rejected the API key (HTTP 401: Incorrect API key provided: sk-*********-123. \
                      You can find your API key at https://platform.openai.com/account/api-keys.). \
                      Set a valid key with `gsv config set apiKeys.openai <key>`."
                .into(),
            retry_after_ms: None,
        })
    );
    let out = call(
        &llm,
        "anthropic",
        "",
        &request("claude-sonnet-4-5", &messages),
    )
    .await;
    assert_eq!(
        out.result.unwrap_err().message,
        "anthropic rejected the API key (HTTP 401: invalid x-api-key). \
         Set a valid key with `gsv config set apiKeys.anthropic <key>`."
    );
    // A local server takes no key: the header is omitted and accepted.
    llm.set_expected_key(None);
    let out = call(&llm, "ollama", "", &request("llama3.2", &messages)).await;
    assert_eq!(out.result.unwrap().text(), "echo: hi");
    assert_eq!(llm.requests().last().unwrap().api_key, None);
}

#[tokio::test]
async fn error_statuses_classify_as_the_shell_needs() {
    let llm = FakeLlm::start().await;
    let messages = vec![user("fail please")];
    llm.script(
        "fail",
        vec![
            Step::rate_limited(2),
            Step::status(500),
            Step::ContextOverflow,
            Step::status(529),
            Step::Status {
                code: 400,
                retry_after: None,
                body: Some(json!({"error": {"message": "custom"}})),
            },
        ],
    );
    let mut seen = Vec::new();
    for (name, model) in [
        ("openai", "gpt-4.1"),
        ("openai", "gpt-4.1"),
        ("openai", "gpt-4.1"),
        ("anthropic", "claude"),
        ("openai", "m"),
    ] {
        let err = call(&llm, name, FAKE_API_KEY, &request(model, &messages))
            .await
            .result
            .unwrap_err();
        seen.push((err.kind, err.retry_after_ms));
    }
    assert_eq!(
        seen,
        vec![
            (LlmErrorKind::RateLimited, Some(2_000)),
            (LlmErrorKind::Server, None),
            (LlmErrorKind::ContextOverflow, None),
            (LlmErrorKind::Server, None),
            (LlmErrorKind::Invalid, None),
        ]
    );
}

#[tokio::test]
async fn broken_streams_fail_as_network_or_server_errors() {
    let llm = FakeLlm::start().await;
    llm.set_token_delay_ms(2);
    let messages = vec![user("break it now")];
    for (name, model) in PROVIDERS {
        llm.script("break", vec![Step::StreamError, Step::ErrorEvent]);
        let cut = call(&llm, name, FAKE_API_KEY, &request(model, &messages)).await;
        assert_eq!(
            cut.result.unwrap_err().kind,
            LlmErrorKind::Network,
            "{name}"
        );
        assert!(
            !cut.deltas.is_empty() && "echo: break it now".starts_with(&cut.deltas.concat()),
            "{name}"
        );
        let event = call(&llm, name, FAKE_API_KEY, &request(model, &messages)).await;
        assert_eq!(
            event.result.unwrap_err().kind,
            LlmErrorKind::Server,
            "{name}"
        );
    }
}

#[tokio::test]
async fn delay_hang_and_token_delay() {
    let llm = FakeLlm::start().await;
    let messages = vec![user("slow")];
    llm.script(
        "slow",
        vec![Step::delay(150, Step::text("finally")), Step::Hang],
    );
    let started = Instant::now();
    let out = call(&llm, "openai", FAKE_API_KEY, &request("m", &messages)).await;
    assert_eq!(out.result.unwrap().text(), "finally");
    assert!(started.elapsed() >= Duration::from_millis(150));

    let out = call_with_timeout(
        &llm,
        "openai",
        FAKE_API_KEY,
        &request("m", &messages),
        Duration::from_millis(200),
    )
    .await;
    assert_eq!(out.result.unwrap_err().kind, LlmErrorKind::Network); // reqwest's timeout

    // echo of "slow": role, 2 text, finish, usage and [DONE] frames = 5 pauses.
    llm.set_token_delay_ms(40);
    let started = Instant::now();
    let out = call(&llm, "openai", FAKE_API_KEY, &request("m", &messages)).await;
    assert_eq!(out.deltas, vec!["echo: ", "slow"]);
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn stop_refuses_connections_until_restart() {
    let llm = FakeLlm::start().await;
    let port = llm.port();
    let messages = vec![user("up?")];
    assert!(
        call(&llm, "anthropic", FAKE_API_KEY, &request("c", &messages))
            .await
            .result
            .is_ok()
    );
    llm.stop();
    let down = call(&llm, "anthropic", FAKE_API_KEY, &request("c", &messages)).await;
    assert_eq!(
        (down.status, down.result.unwrap_err().kind),
        (0, LlmErrorKind::Network)
    );
    llm.restart().unwrap();
    assert_eq!(llm.port(), port);
    assert_eq!(
        call(&llm, "anthropic", FAKE_API_KEY, &request("c", &messages))
            .await
            .result
            .unwrap()
            .text(),
        "echo: up?"
    );
}

#[tokio::test]
async fn malformed_histories_and_unknown_paths_are_rejected() {
    let llm = FakeLlm::start().await;
    let client = reqwest::Client::new();
    let body = json!({"model": "m", "stream": true, "messages": [
        {"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "nope", "content": "x"}]});
    let response = client
        .post(format!("{}/chat/completions", llm.base_url_openai()))
        .header("authorization", format!("Bearer {FAKE_API_KEY}"))
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    assert_eq!(
        serde_json::from_str::<Value>(&response.text().await.unwrap()).unwrap(),
        json!({"error": {"message": "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
            "type": "invalid_request_error", "param": null, "code": null}})
    );
    let response = client
        .post(format!("{}/v1/messages", llm.base_url_anthropic()))
        .header("x-api-key", FAKE_API_KEY)
        .body(json!({"model": "c", "max_tokens": 10, "stream": true, "messages": [{"role": "user", "content": "hi"}]}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(
        (
            response.status().as_u16(),
            serde_json::from_str::<Value>(&response.text().await.unwrap()).unwrap()
        ),
        (
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "anthropic-version: header is required"},
            "request_id": "req_fake000000000000000000"})
        )
    );
    let response = client
        .get(format!("{}/v1/models", llm.base_url_anthropic()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 404);
}

#[test]
fn works_without_an_async_runtime() {
    let llm = FakeLlm::start_blocking();
    llm.script("x", vec![Step::text("y")]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let messages = vec![user("x")];
    let out = runtime.block_on(call(&llm, "openai", FAKE_API_KEY, &request("m", &messages)));
    assert_eq!(out.result.unwrap().text(), "y");
}

#[tokio::test]
async fn transcriptions_take_openais_multipart_and_answer_its_json() {
    let llm = FakeLlm::start().await;
    let url = format!("{}/audio/transcriptions", llm.base_url_openai());
    let form = |name: &str, key: &str| {
        let (content_type, body) = gsv_gateway::media::transcribe::openai_request(
            "X",
            name,
            "audio/ogg",
            b"OggS..",
            "whisper-1",
        );
        reqwest::Client::new()
            .post(&url)
            .header("authorization", format!("Bearer {key}"))
            .header("content-type", content_type)
            .body(body)
    };
    let ok = form("voice.ogg", FAKE_API_KEY).send().await.unwrap();
    assert_eq!(ok.status().as_u16(), 200);
    assert_eq!(
        serde_json::from_str::<Value>(&ok.text().await.unwrap()).unwrap(),
        json!({"text": "transcript of voice.ogg"})
    );
    llm.set_transcript("hello there");
    let ok = form("memo.m4a", FAKE_API_KEY).send().await.unwrap();
    assert_eq!(ok.text().await.unwrap(), r#"{"text":"hello there"}"#);
    let bad = form("voice.opus", FAKE_API_KEY).send().await.unwrap();
    assert_eq!(bad.status().as_u16(), 400);
    assert!(bad.text().await.unwrap().contains("Invalid file format"));
    assert_eq!(
        form("voice.ogg", "sk-wrong")
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        401
    );
    let seen = llm.transcriptions();
    assert_eq!(
        seen.iter()
            .map(|t| (t.filename.clone().unwrap_or_default(), t.status))
            .collect::<Vec<_>>(),
        // A wrong key is refused before the form is read.
        [
            ("voice.ogg".to_string(), 200),
            ("memo.m4a".into(), 200),
            ("voice.opus".into(), 400),
            (String::new(), 401)
        ]
    );
    assert_eq!(seen[0].bytes, b"OggS..");
    // Not model requests.
    assert!(llm.requests().is_empty());
}
