//! One model call over HTTP: streams the answer, hands visible text to the
//! caller as it arrives, enforces `timeouts.llmMs`, and retries rate limits,
//! server errors and network failures with backoff — but only before any
//! text was shown, so a retry never repeats words to the user.

use super::body::BodyReader;
use super::rpc::now_ms;
use crate::llm::{
    network_error, provider_for, HttpRequest, LlmError, LlmErrorKind, LlmRequest, Prepared,
    PromptCache, Provider, RetryPolicy, StreamReader, WrittenHistory, WrittenPrefix,
};
use crate::session::run_config::RunConfig;
use crate::workspace::load::RunPrompt;
use futures::future::{select, Either};
use gsv_protocol::{AssistantMessage, Message, ToolDefinition};
use std::cell::RefCell;
use std::future::Future;
use std::time::Duration;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use worker::{web_sys, AbortController, AbortSignal, Delay, Headers, Response};

/// Cancels the attempt of a model call in flight: the request is aborted,
/// not just left unread (a provider would go on generating into it).
#[derive(Default)]
pub struct Cancel(RefCell<Option<AbortController>>);

impl Cancel {
    /// A new attempt's signal.
    fn arm(&self) -> AbortSignal {
        let controller = AbortController::default();
        let signal = controller.signal();
        *self.0.borrow_mut() = Some(controller);
        signal
    }

    /// Aborts the attempt in flight, if any.
    pub fn cancel(&self) {
        if let Some(controller) = self.0.borrow_mut().take() {
            controller.abort();
        }
    }
}

pub async fn complete<F, Fut>(
    env: &worker::Env,
    rc: &RunConfig,
    history: &[Message],
    tools: &[ToolDefinition],
    cancel: &Cancel,
    on_text: F,
) -> Result<AssistantMessage, LlmError>
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let http = request_for(rc, history, tools);
    complete_request(env, rc, &http, cancel, on_text).await
}

/// The HTTP request of a one-off model call (nothing for a cache to
/// keep).
fn request_for(rc: &RunConfig, history: &[Message], tools: &[ToolDefinition]) -> HttpRequest {
    let provider = provider_for(&rc.provider, rc.api.as_deref());
    let parts = Parts {
        system_prompt: &rc.system_prompt,
        tools,
        prepared: None,
        cache: None,
    };
    build(rc, &*provider, parts, history, None)
}

/// The HTTP request of one call of a run with its prompt (its system
/// prompt and tools, not `rc`'s): they are serialized once per prompt, body
/// kind and cache setting, not for every call. With `kept`, a history of
/// that generation is written only where it grew since the last call
/// (`WrittenHistory`). The provider is asked to cache the prefix under
/// `cache_key` (the session's) as `rc` says. Built apart from the call so
/// a caller holding a large history (images inlined for this call) can
/// drop it before the call waits on the model.
pub fn request_for_prompt(
    rc: &RunConfig,
    history: &[Message],
    prompt: &RunPrompt,
    kept: Option<(&mut WrittenHistory, u64)>,
    cache_key: &str,
) -> HttpRequest {
    let provider = provider_for(&rc.provider, rc.api.as_deref());
    let prepared = prompt.prepared_for((provider.api(), rc.cache), || {
        provider.prepare(&prompt.system_prompt, &prompt.tools, rc.cache)
    });
    let written = kept.map(|(kept, generation)| kept.update(&*provider, generation, history));
    let parts = Parts {
        system_prompt: &prompt.system_prompt,
        tools: &prompt.tools,
        prepared: Some(&prepared),
        cache: rc.cache.map(|ttl| PromptCache {
            ttl,
            key: cache_key,
        }),
    };
    build(rc, &*provider, parts, history, written)
}

/// What a body has besides its messages.
struct Parts<'a> {
    system_prompt: &'a str,
    tools: &'a [ToolDefinition],
    prepared: Option<&'a Prepared>,
    cache: Option<PromptCache<'a>>,
}

fn build(
    rc: &RunConfig,
    provider: &dyn Provider,
    parts: Parts,
    history: &[Message],
    written: Option<WrittenPrefix>,
) -> HttpRequest {
    let request = LlmRequest {
        model: &rc.model,
        system_prompt: parts.system_prompt,
        messages: history,
        tools: parts.tools,
        thinking: rc.thinking,
        max_tokens: rc.max_tokens,
        prepared: parts.prepared,
        written,
        cache: parts.cache,
    };
    provider.build_request(&rc.endpoint, &request)
}

/// [`complete`] of a request already built.
pub async fn complete_request<F, Fut>(
    env: &worker::Env,
    rc: &RunConfig,
    http: &HttpRequest,
    cancel: &Cancel,
    mut on_text: F,
) -> Result<AssistantMessage, LlmError>
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let provider = provider_for(&rc.provider, rc.api.as_deref());
    let policy = RetryPolicy::default();
    let mut attempt = 0;
    loop {
        let mut shown = false;
        let signal = cancel.arm();
        let call = Box::pin(attempt_once(
            env,
            &*provider,
            rc,
            http,
            &signal,
            &mut on_text,
            &mut shown,
        ));
        let timeout = Delay::from(Duration::from_millis(rc.llm_timeout_ms));
        let result = match select(call, timeout).await {
            Either::Left((result, _)) => result,
            Either::Right((_, call)) => {
                drop(call);
                cancel.cancel();
                Err(LlmError::new(
                    LlmErrorKind::Timeout,
                    format!(
                        "{} did not answer within {} ms (timeouts.llmMs)",
                        rc.provider, rc.llm_timeout_ms
                    ),
                ))
            }
        };
        let err = match result {
            Ok(message) => return Ok(message),
            Err(err) if shown => return Err(err),
            Err(err) => err,
        };
        match policy.delay_ms(attempt, &err, js_sys::Math::random()) {
            Some(delay) => {
                worker::console_log!(
                    "llm: {} (attempt {}), retrying in {delay} ms",
                    err.message,
                    attempt + 1
                );
                Delay::from(Duration::from_millis(delay)).await;
                attempt += 1;
            }
            None => return Err(err),
        }
    }
}

async fn attempt_once<F, Fut>(
    env: &worker::Env,
    provider: &dyn Provider,
    rc: &RunConfig,
    http: &HttpRequest,
    signal: &AbortSignal,
    on_text: &mut F,
    shown: &mut bool,
) -> Result<AssistantMessage, LlmError>
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = ()>,
{
    if let Some(binding) = provider.binding() {
        let answer = call_binding(env, binding, rc, http).await?;
        return read_answer(provider, rc, http, answer, on_text, shown).await;
    }
    let unreached =
        |e: worker::Error| network_error(&rc.provider, &http.url, false, &e.to_string());
    let headers = Headers::new();
    for (name, value) in &http.headers {
        headers.set(name, value).map_err(unreached)?;
    }
    // `fetch(url, init)` with the signal in the same init: worker's
    // `Fetch::Request` builds a `Request` and `fetch` then builds a second
    // one from it to add the signal.
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_headers(&headers.0);
    // Copied into JS as bytes, not cloned first (it can hold megabytes of
    // images) nor made a JS string (UTF-16, encoded back to UTF-8 by the
    // request: twice the work on the body of every call).
    init.set_body(&js_sys::Uint8Array::from(http.body.as_bytes()));
    init.set_signal(Some(&**signal));
    let global: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    let resp = JsFuture::from(global.fetch_with_str_and_init(&http.url, &init))
        .await
        .map_err(|e| unreached(e.into()))?;
    let resp: Response = resp
        .dyn_into::<web_sys::Response>()
        .map_err(|e| unreached(e.into()))?
        .into();
    let status = resp.status_code();
    if !(200..300).contains(&status) {
        let headers = resp.headers();
        // OpenAI's `retry-after-ms` is more precise than `Retry-After`.
        let retry_after = match headers.get("retry-after-ms").ok().flatten() {
            Some(ms) => Some(format!("{ms}ms")),
            None => headers.get("retry-after").ok().flatten(),
        };
        let body = BodyReader::new(&resp).read_text().await.unwrap_or_default();
        return Err(provider.classify_error(status, retry_after.as_deref(), &body));
    }
    read_answer(
        provider,
        rc,
        http,
        Answer::Stream(BodyReader::new(&resp)),
        on_text,
        shown,
    )
    .await
}

/// What a model answered: a stream of server-sent events, or (a binding
/// not asked to stream) the whole answer as JSON.
enum Answer {
    Stream(BodyReader),
    Whole(String),
}

/// Calls `binding.run(model, body)` (Workers AI): the body is the
/// binding's inputs. What it throws is classified by the provider's words.
async fn call_binding(
    env: &worker::Env,
    binding: &str,
    rc: &RunConfig,
    http: &HttpRequest,
) -> Result<Answer, LlmError> {
    let missing = || {
        LlmError::new(
            LlmErrorKind::Invalid,
            format!(
                "{} is reached through the Worker's {binding} binding, which this gateway \
                 does not have: it is there when deployed (wrangler.toml [ai] binding = \"{binding}\"); \
                 a local gateway has none, Workers AI running on Cloudflare",
                rc.provider
            ),
        )
    };
    let ai = crate::worker::bindings::ai(env, binding).ok_or_else(missing)?;
    let inputs = js_sys::JSON::parse(&http.body)
        .map_err(|_| LlmError::new(LlmErrorKind::Invalid, "the request body is not JSON"))?;
    let thrown = |e: wasm_bindgen::JsValue| {
        let message = e
            .dyn_ref::<js_sys::Error>()
            .map(|e| String::from(e.message()))
            .or_else(|| e.as_string())
            .unwrap_or_else(|| format!("{e:?}"));
        crate::llm::workers_ai::classify_thrown(&message)
    };
    let promise = ai.run(&rc.model, &inputs).map_err(thrown)?;
    let output = JsFuture::from(js_sys::Promise::resolve(&promise))
        .await
        .map_err(thrown)?;
    if let Some(stream) = output.dyn_ref::<web_sys::ReadableStream>() {
        return Ok(Answer::Stream(BodyReader::from_stream(stream)));
    }
    let whole = js_sys::JSON::stringify(&output)
        .ok()
        .and_then(|s| s.as_string())
        .unwrap_or_default();
    Ok(Answer::Whole(whole))
}

/// Reads an answer through the provider's decoder, showing its text as it
/// comes.
async fn read_answer<F, Fut>(
    provider: &dyn Provider,
    rc: &RunConfig,
    http: &HttpRequest,
    answer: Answer,
    on_text: &mut F,
    shown: &mut bool,
) -> Result<AssistantMessage, LlmError>
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let broke_off = |e: worker::Error| network_error(&rc.provider, &http.url, true, &e.to_string());
    let mut reader = StreamReader::new(provider.decoder(&rc.provider, &rc.model));
    let mut body = match answer {
        Answer::Stream(body) => body,
        Answer::Whole(json) => {
            // One event, as a stream would bring it.
            let mut decoder = provider.decoder(&rc.provider, &rc.model);
            let mut text = String::new();
            for event in crate::llm::workers_ai::whole_answer_events(&json) {
                text.push_str(&decoder.on_event(&event)?);
            }
            let message = decoder.finish(now_ms())?;
            if !text.is_empty() {
                *shown = true;
                on_text(text).await;
            }
            return Ok(message);
        }
    };
    while let Some(chunk) = body.next().await {
        let visible = reader.push(&chunk.map_err(broke_off)?)?;
        if !visible.is_empty() {
            *shown = true;
            on_text(visible).await;
        }
    }
    let (tail, message) = reader.finish(now_ms())?;
    if !tail.is_empty() {
        *shown = true;
        on_text(tail).await;
    }
    Ok(message)
}
