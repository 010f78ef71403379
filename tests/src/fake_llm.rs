//! A fake LLM provider for end-to-end tests and the benchmark.
//!
//! It speaks the streaming APIs over real HTTP on 127.0.0.1, framed exactly
//! like the real servers: `POST /v1/chat/completions` (OpenAI Chat
//! Completions: `chat.completion.chunk`s, a usage chunk when
//! `stream_options.include_usage`, `data: [DONE]`), `POST /v1/responses`
//! (OpenAI's Responses API: typed events, `responses.rs`) and `POST
//! /v1/messages` (Anthropic Messages: `event:` + `data:` lines). It checks
//! the API key and the shape of the history (tool calls and results must
//! pair up, as the real APIs insist), and records every request.
//!
//! Both providers' prompt caches are simulated as their documentation
//! states them (`cache.rs`): Anthropic's breakpoints, OpenAI's automatic
//! prefix cache for requests naming their conversation (`prompt_cache_key`,
//! in both of its APIs).
//!
//! `POST /v1/audio/transcriptions` speaks OpenAI's transcription API: a
//! `multipart/form-data` upload (`file` with a supported extension,
//! `model`, `response_format`) answered `{"text": …}` — the text set with
//! [`FakeLlm::set_transcript`], or `transcript of <file name>`.
//!
//! By default it answers `echo: <last user text>`, streamed a word at a time.
//! Scripts change that: a request whose last user-authored message contains
//! a script's trigger consumes that script's next [`Step`]. Tool results are
//! not user-authored, so one trigger drives a whole tool loop:
//!
//! ```text
//! let llm = FakeLlm::start().await;
//! llm.script("weather", vec![
//!     Step::tool_call("call_1", "laptop__Bash", json!({"command": "curl wttr.in"})),
//!     Step::text("Sunny."),
//! ]);
//! // configure the gateway with llm.base_url_openai() and FAKE_API_KEY
//! ```
//!
//! The server runs on its own runtime thread, so it keeps answering while a
//! test blocks (e.g. on a child process).

mod cache;
mod checks;
pub mod embeddings;
mod frames;
mod responses;
#[cfg(test)]
mod tests;
mod view;
mod workers_ai;

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{combinators::UnsyncBoxBody, BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::HeaderValue;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::{TcpListener, TcpSocket};
use tokio::task::{JoinHandle, JoinSet};

use checks::{
    check_body, check_key, context_overflow_body, error_body, estimate_tokens, last_user_text,
    prompt_chars, Rejection,
};
use frames::{Reply, TokenCounts};

/// The key the fake expects unless told otherwise ([`FakeLlm::set_expected_key`]).
pub const FAKE_API_KEY: &str = "sk-fake-llm-test-key";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// `POST /v1/chat/completions`
    OpenAi,
    /// `POST /v1/messages`
    Anthropic,
    /// `POST /v1/responses` (`responses.rs`)
    Responses,
    /// `POST /client/v4/accounts/{account_id}/ai/run/{model}`
    /// (`workers_ai.rs`).
    WorkersAi,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub api: Api,
    /// The JSON body (a JSON string holding the raw text if it was not JSON).
    pub body: Value,
    /// The key presented (`Authorization: Bearer` or `x-api-key`).
    pub api_key: Option<String>,
    /// When the whole request (head and body) had been read.
    pub received_at: Instant,
    /// When the fake had parsed and checked it: from `received_at` to this
    /// is the double's own time before it answers, which a bench leaves out
    /// of what it puts down to the gateway.
    pub checked_at: Instant,
    /// When the fake finished sending its answer: the last frame of the
    /// body handed to the connection (the end of an SSE stream, or a JSON
    /// error body). `None` while the answer is still being sent, and for
    /// answers that never end (`Hang`, `StreamError`). The benchmark's tool
    /// round trip is this instant of a tool-call answer to the
    /// `received_at` of the request carrying the results.
    pub answered_at: Option<Instant>,
}

/// A request as the double keeps it: the bytes, read into a `Value` the
/// first time a test asks for the requests.
#[derive(Debug)]
struct Recorded {
    api: Api,
    raw: Bytes,
    body: OnceLock<Value>,
    api_key: Option<String>,
    received_at: Instant,
    checked_at: Instant,
    answered_at: Option<Instant>,
}

impl Recorded {
    fn public(&self) -> RecordedRequest {
        let body = self.body.get_or_init(|| {
            serde_json::from_slice(&self.raw)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&self.raw).into_owned()))
        });
        RecordedRequest {
            api: self.api,
            body: body.clone(),
            api_key: self.api_key.clone(),
            received_at: self.received_at,
            checked_at: self.checked_at,
            answered_at: self.answered_at,
        }
    }
}

/// One transcription request, as received.
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptionRequest {
    pub api_key: Option<String>,
    pub model: Option<String>,
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub bytes: Vec<u8>,
    /// The answer's status.
    pub status: u16,
}

/// One scripted answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A streamed text reply.
    Text(String),
    /// Tool calls `(id, name, arguments)`, after some text when `text` is not
    /// empty; stop reason `tool_calls` / `tool_use`.
    ToolCalls {
        text: String,
        calls: Vec<(String, String, Value)>,
    },
    /// Reasoning then text (`reasoning_content` deltas for OpenAI, a signed
    /// thinking block for Anthropic).
    Thinking { thinking: String, text: String },
    /// An HTTP error. `retry_after` (seconds) sets `Retry-After`; `body`
    /// `None` sends the provider's usual error body for the status.
    Status {
        code: u16,
        retry_after: Option<u64>,
        body: Option<Value>,
    },
    /// The provider's real "prompt is too long" 400.
    ContextOverflow,
    /// Waits `ms` before answering with `then`.
    Delay { ms: u64, then: Box<Step> },
    /// Never answers (not even headers): for timeouts.
    Hang,
    /// Streams part of the default echo reply, then drops the connection.
    StreamError,
    /// Streams part of the default echo reply, then the provider's in-stream
    /// error event (OpenAI error chunk, Anthropic `overloaded_error`).
    ErrorEvent,
}

impl Step {
    pub fn text(text: impl Into<String>) -> Self {
        Step::Text(text.into())
    }
    pub fn tool_call(id: &str, name: &str, arguments: Value) -> Self {
        Step::ToolCalls {
            text: String::new(),
            calls: vec![(id.into(), name.into(), arguments)],
        }
    }
    pub fn tool_calls(calls: Vec<(&str, &str, Value)>) -> Self {
        let calls = calls
            .into_iter()
            .map(|(id, name, args)| (id.into(), name.into(), args))
            .collect();
        Step::ToolCalls {
            text: String::new(),
            calls,
        }
    }
    pub fn status(code: u16) -> Self {
        Step::Status {
            code,
            retry_after: None,
            body: None,
        }
    }
    /// A 429 with `Retry-After: secs`.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Step::Status {
            code: 429,
            retry_after: Some(retry_after_secs),
            body: None,
        }
    }
    pub fn delay(ms: u64, then: Step) -> Self {
        Step::Delay {
            ms,
            then: Box::new(then),
        }
    }
}

#[derive(Debug)]
struct Script {
    trigger: String,
    steps: VecDeque<Step>,
}

#[derive(Debug)]
struct State {
    expected_key: Option<String>,
    token_delay: Duration,
    scripts: Vec<Script>,
    requests: Vec<Recorded>,
    /// How many requests [`FakeLlm::clear_requests`] removed in all, so an
    /// answer ending after a clear finds its request (or knows it is gone).
    cleared: usize,
    /// `/v1/embeddings` answers 500 while set.
    embeddings_failing: bool,
    /// `/v1/embeddings` never answers while set.
    embeddings_hanging: bool,
    /// `/v1/embeddings` requests held unanswered so far.
    embeddings_held: usize,
    /// `/v1/embeddings` requests answered with vectors.
    embedding_calls: usize,
    transcript: Option<String>,
    transcriptions: Vec<TranscriptionRequest>,
    /// Anthropic's prompt cache (cache.rs).
    prompt_cache: cache::PromptCache,
}

type Shared = Arc<Mutex<State>>;

pub struct FakeLlm {
    state: Shared,
    addr: SocketAddr,
    /// Its own runtime, so the fake answers even while a test blocks.
    runtime: Option<tokio::runtime::Runtime>,
    server: Mutex<Option<JoinHandle<()>>>,
}

impl FakeLlm {
    /// Starts listening on `127.0.0.1:0`.
    pub async fn start() -> FakeLlm {
        Self::start_blocking()
    }

    /// The same, for tests without an async runtime.
    pub fn start_blocking() -> FakeLlm {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("fake-llm")
            .enable_all()
            .build()
            .expect("fake LLM runtime");
        let state = Arc::new(Mutex::new(State {
            expected_key: Some(FAKE_API_KEY.to_string()),
            token_delay: Duration::ZERO,
            scripts: Vec::new(),
            requests: Vec::new(),
            cleared: 0,
            embeddings_failing: false,
            embeddings_hanging: false,
            embeddings_held: 0,
            embedding_calls: 0,
            transcript: None,
            transcriptions: Vec::new(),
            prompt_cache: cache::PromptCache::default(),
        }));
        let listener = {
            let _context = runtime.enter();
            bind("127.0.0.1:0".parse().unwrap()).expect("fake LLM bind")
        };
        let addr = listener.local_addr().unwrap();
        let server = runtime.spawn(serve(listener, state.clone()));
        FakeLlm {
            state,
            addr,
            runtime: Some(runtime),
            server: Mutex::new(Some(server)),
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT/v1`, the Chat Completions base URL.
    pub fn base_url_openai(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// `http://127.0.0.1:PORT`, the Messages API base URL.
    pub fn base_url_anthropic(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The key requests must present; `None` accepts any key or none
    /// (like a local server). Default: [`FAKE_API_KEY`].
    pub fn set_expected_key(&self, key: Option<&str>) {
        self.lock().expected_key = key.map(str::to_string);
    }

    /// A pause before each streamed frame after the first (default 0):
    /// simulates generation speed for the benchmark and slow streams.
    pub fn set_token_delay_ms(&self, ms: u64) {
        self.lock().token_delay = Duration::from_millis(ms);
    }

    /// While set, `/v1/embeddings` answers 500.
    pub fn set_embeddings_failing(&self, failing: bool) {
        self.lock().embeddings_failing = failing;
    }

    /// While set, `/v1/embeddings` requests are read and never answered
    /// (a service that hangs, or a call cut off by a restart).
    pub fn set_embeddings_hanging(&self, hanging: bool) {
        self.lock().embeddings_hanging = hanging;
    }

    /// `/v1/embeddings` requests held unanswered so far.
    pub fn embeddings_held(&self) -> usize {
        self.lock().embeddings_held
    }

    /// `/v1/embeddings` requests answered with vectors so far.
    pub fn embedding_calls(&self) -> usize {
        self.lock().embedding_calls
    }

    /// Adds steps for requests whose last user text contains `trigger`
    /// (appended if the trigger already has a script). Scripts are tried in
    /// the order added; an exhausted one falls back to the echo reply. The
    /// empty trigger matches every request.
    pub fn script(&self, trigger: &str, steps: Vec<Step>) {
        let mut state = self.lock();
        match state.scripts.iter_mut().find(|s| s.trigger == trigger) {
            Some(script) => script.steps.extend(steps),
            None => state.scripts.push(Script {
                trigger: trigger.to_string(),
                steps: steps.into(),
            }),
        }
    }

    /// What `/v1/audio/transcriptions` answers from now on.
    pub fn set_transcript(&self, text: &str) {
        self.lock().transcript = Some(text.to_string());
    }

    /// Every transcription request received so far.
    pub fn transcriptions(&self) -> Vec<TranscriptionRequest> {
        self.lock().transcriptions.clone()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.iter().map(Recorded::public).collect()
    }

    pub fn clear_requests(&self) {
        let mut state = self.lock();
        state.cleared += state.requests.len();
        state.requests.clear();
    }

    /// Closes the listener and every open connection: the provider is down
    /// (connections are refused) until [`FakeLlm::restart`].
    pub fn stop(&self) {
        let Some(server) = self.server.lock().unwrap().take() else {
            return;
        };
        server.abort();
        // Wait (briefly) until the listener is really closed.
        let deadline = Instant::now() + Duration::from_secs(2);
        while !server.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Listens again on the same port after [`FakeLlm::stop`].
    pub fn restart(&self) -> std::io::Result<()> {
        let mut server = self.server.lock().unwrap();
        if server.is_some() {
            return Ok(());
        }
        let runtime = self.runtime.as_ref().expect("runtime lives until drop");
        let listener = {
            let _context = runtime.enter();
            bind(self.addr)?
        };
        *server = Some(runtime.spawn(serve(listener, self.state.clone())));
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Does not block, so dropping inside an async test is fine.
            runtime.shutdown_background();
        }
    }
}

/// SO_REUSEADDR so a restart can take the port back from TIME_WAIT sockets.
fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

/// Accepts connections until aborted; aborting drops the `JoinSet`, which
/// aborts every connection task too.
async fn serve(listener: TcpListener, state: Shared) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let state = state.clone();
                connections.spawn(async move {
                    let service = hyper::service::service_fn(move |req| handle(state.clone(), req));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

type Body = UnsyncBoxBody<Bytes, std::io::Error>;

async fn handle(state: Shared, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    let (response, recorded) = reply(&state, req).await;
    let Some(index) = recorded else {
        return Ok(response);
    };
    Ok(response.map(move |inner| {
        Timed {
            inner,
            state,
            index,
            done: false,
        }
        .boxed_unsync()
    }))
}

/// `POST /v1/embeddings` (`embeddings.rs`), keyed like Chat Completions.
async fn embed(state: &Shared, req: Request<Incoming>) -> Response<Body> {
    let key = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let raw = req
        .into_body()
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    let hanging = {
        let mut s = state.lock().unwrap();
        s.embeddings_held += usize::from(s.embeddings_hanging);
        s.embeddings_hanging
    };
    if hanging {
        return std::future::pending().await;
    }
    let mut s = state.lock().unwrap();
    let key_ok = s
        .expected_key
        .as_ref()
        .is_none_or(|k| key.as_ref() == Some(k));
    let (status, answer) = embeddings::answer(&body, key_ok, s.embeddings_failing);
    if status == 200 {
        s.embedding_calls += 1;
    }
    json_response(status, &answer, None)
}

/// The answer to one request, and its index among all requests recorded
/// (`None` when it was not recorded: unknown path, unreadable body).
async fn reply(state: &Shared, req: Request<Incoming>) -> (Response<Body>, Option<usize>) {
    if (req.method().as_str(), req.uri().path()) == ("POST", "/v1/embeddings") {
        return (embed(state, req).await, None);
    }
    if req.method() == hyper::Method::POST && req.uri().path() == "/v1/audio/transcriptions" {
        return (transcribe(state, req).await, None);
    }
    let api = match (req.method().as_str(), req.uri().path()) {
        ("POST", "/v1/chat/completions") => Api::OpenAi,
        ("POST", "/v1/messages") => Api::Anthropic,
        ("POST", "/v1/responses") => Api::Responses,
        ("POST", path) if workers_ai::model_in_path(path).is_some() => Api::WorkersAi,
        (_, path) => {
            let body = serde_json::json!({"error": {"message": format!("Unknown request URL: {path}"),
                "type": "invalid_request_error", "param": null, "code": "unknown_url"}});
            return (json_response(404, &body, None), None);
        }
    };
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let api_key = match api {
        Api::OpenAi | Api::WorkersAi | Api::Responses => {
            header("authorization").and_then(|v| v.strip_prefix("Bearer ").map(str::to_string))
        }
        Api::Anthropic => header("x-api-key"),
    };
    let has_version = header("anthropic-version").is_some();
    let raw = match req.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) => {
            let body = error_body(api, 400, Some("could not read the body"));
            return (json_response(400, &body, None), None);
        }
    };
    let received_at = Instant::now();
    // Read as slices of the bytes, not a `Value`: the double's own time is
    // in the turn it answers (see view.rs).
    let parsed = view::Body::parse(&raw);
    let checked = match api {
        Api::Anthropic if !has_version => Err(Rejection {
            status: 400,
            body: error_body(api, 400, Some("anthropic-version: header is required")),
        }),
        _ => Ok(()),
    }
    .and_then(|_| match &parsed {
        Ok(fields) => check_body(api, fields),
        Err(e) => Err(Rejection {
            status: 400,
            body: error_body(api, 400, Some(&format!("invalid JSON: {e}"))),
        }),
    });
    let mut asked = Asked::of(api, &parsed.unwrap_or_default());
    // Marks for Anthropic's cache: checked, then read and written as the
    // API would (the body is read whole only when it has some).
    // OpenAI's, for a request naming its conversation: the common prefix.
    let has = |field: &[u8]| raw.windows(field.len()).any(|w| w == field);
    let marked = api == Api::Anthropic && has(b"\"cache_control\"");
    let keyed = matches!(api, Api::OpenAi | Api::Responses) && has(b"\"prompt_cache_key\"");
    let checked = checked.and_then(|()| {
        if !marked && !keyed {
            return Ok(());
        }
        let body: Value = serde_json::from_slice(&raw).unwrap_or_default();
        let mut s = state.lock().unwrap();
        if keyed {
            let cached = s.prompt_cache.openai(&body);
            let all = estimate_tokens(asked.prompt_chars);
            asked.cache = Some(cache::CacheUsage {
                input: all.saturating_sub(cached),
                read: cached.min(all),
                write: 0,
            });
            return Ok(());
        }
        cache::check_marks(&body).map_err(|m| Rejection {
            status: 400,
            body: error_body(api, 400, Some(&m)),
        })?;
        asked.cache = s.prompt_cache.anthropic(&body);
        Ok(())
    });

    let (expected_key, token_delay, index) = {
        let mut s = state.lock().unwrap();
        let index = s.cleared + s.requests.len();
        s.requests.push(Recorded {
            api,
            raw,
            body: OnceLock::new(),
            api_key: api_key.clone(),
            received_at,
            checked_at: Instant::now(),
            answered_at: None,
        });
        (s.expected_key.clone(), s.token_delay, index)
    };
    // The key is checked first, as the real APIs do.
    let checked = check_key(api, api_key.as_deref(), expected_key.as_deref()).and(checked);
    if let Err(rejection) = checked {
        return (
            json_response(rejection.status, &rejection.body, None),
            Some(index),
        );
    }

    let step = next_step(state, &asked.user_text)
        .unwrap_or_else(|| Step::Text(format!("echo: {}", asked.user_text)));
    (answer(api, &asked, step, token_delay).await, Some(index))
}

/// What an answer needs of its request, read before the body is recorded.
struct Asked {
    model: String,
    user_text: String,
    /// The characters of the system prompt, messages and tools (the usage).
    prompt_chars: usize,
    /// OpenAI's `stream_options.include_usage`.
    include_usage: bool,
    /// The input as a cache bills it, when the request asked for caching.
    cache: Option<cache::CacheUsage>,
    /// What a Responses API answer echoes of its request.
    responses: Option<responses::Request>,
}

impl Asked {
    fn of(api: Api, body: &view::Body) -> Self {
        Self {
            model: body
                .fields
                .str("model")
                .map_or_else(|| "fake-model".to_string(), String::from),
            user_text: last_user_text(api, body),
            prompt_chars: prompt_chars(body),
            include_usage: view::is_true(body.fields.object("stream_options").get("include_usage")),
            cache: None,
            responses: (api == Api::Responses).then(|| responses::Request::of(body)),
        }
    }
}

/// OpenAI's `POST /v1/audio/transcriptions`, checked as OpenAI checks it.
async fn transcribe(state: &Shared, req: Request<Incoming>) -> Response<Body> {
    const FORMATS: [&str; 9] = [
        "flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "wav",
    ];
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let api_key =
        header("authorization").and_then(|v| v.strip_prefix("Bearer ").map(str::to_string));
    let content_type = header("content-type").unwrap_or_default();
    let raw = req
        .into_body()
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let mut record = TranscriptionRequest {
        api_key: api_key.clone(),
        model: None,
        filename: None,
        content_type: None,
        bytes: Vec::new(),
        status: 200,
    };
    let expected = state.lock().unwrap().expected_key.clone();
    let outcome = check_key(Api::OpenAi, api_key.as_deref(), expected.as_deref()).and_then(|()| {
        let bad = |m: String| Rejection {
            status: 400,
            body: error_body(Api::OpenAi, 400, Some(&m)),
        };
        let parts = crate::multipart::parse(&content_type, &raw).map_err(bad)?;
        let field = |n: &str| parts.iter().find(|p| p.name == n);
        record.model = field("model").map(|p| p.text());
        if record.model.is_none() {
            return Err(bad("you must provide a model parameter".into()));
        }
        let file = field("file").ok_or_else(|| bad("file: Field required".into()))?;
        record.filename = file.filename.clone();
        record.content_type = file.content_type.clone();
        record.bytes = file.data.clone();
        let ext = file
            .filename
            .as_deref()
            .and_then(|f| f.rsplit_once('.'))
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        if !FORMATS.contains(&ext.as_str()) {
            return Err(bad(format!(
                "Invalid file format. Supported formats: {}",
                serde_json::to_string(&FORMATS).unwrap_or_default()
            )));
        }
        Ok(())
    });
    let mut s = state.lock().unwrap();
    let response = match outcome {
        Ok(()) => {
            let text = s.transcript.clone().unwrap_or_else(|| {
                format!(
                    "transcript of {}",
                    record.filename.clone().unwrap_or_default()
                )
            });
            json_response(200, &serde_json::json!({ "text": text }), None)
        }
        Err(rejection) => {
            record.status = rejection.status;
            json_response(rejection.status, &rejection.body, None)
        }
    };
    s.transcriptions.push(record);
    response
}

/// The next step of the first script whose trigger the text contains.
fn next_step(state: &Shared, user_text: &str) -> Option<Step> {
    let mut s = state.lock().unwrap();
    s.scripts
        .iter_mut()
        .filter(|sc| user_text.contains(&sc.trigger))
        .find_map(|sc| sc.steps.pop_front())
}

async fn answer(api: Api, asked: &Asked, step: Step, token_delay: Duration) -> Response<Body> {
    let echo = || Reply {
        text: format!("echo: {}", asked.user_text),
        ..Default::default()
    };
    let (reply, ending) = match step {
        Step::Delay { ms, then } => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            return Box::pin(answer(api, asked, *then, token_delay)).await;
        }
        Step::Hang => std::future::pending().await,
        Step::Status {
            code,
            retry_after,
            body: error,
        } => {
            let error = error.unwrap_or_else(|| error_body(api, code, None));
            return json_response(code, &error, retry_after);
        }
        Step::ContextOverflow => {
            let status = if api == Api::WorkersAi { 413 } else { 400 };
            return json_response(status, &context_overflow_body(api), None);
        }
        Step::Text(text) => (
            Reply {
                text,
                ..Default::default()
            },
            Ending::Complete,
        ),
        Step::ToolCalls { text, calls } => (
            Reply {
                text,
                calls,
                ..Default::default()
            },
            Ending::Complete,
        ),
        Step::Thinking { thinking, text } => (
            Reply {
                thinking,
                text,
                ..Default::default()
            },
            Ending::Complete,
        ),
        Step::StreamError => (echo(), Ending::DropConnection),
        Step::ErrorEvent => (echo(), Ending::ErrorEvent),
    };
    let model = &asked.model;
    let output_chars = reply.thinking.chars().count()
        + reply.text.chars().count()
        + reply
            .calls
            .iter()
            .map(|(_, name, args)| name.len() + args.to_string().len())
            .sum::<usize>();
    let billed = asked.cache.unwrap_or(cache::CacheUsage {
        input: estimate_tokens(asked.prompt_chars),
        ..Default::default()
    });
    let tokens = TokenCounts {
        input: billed.input,
        output: estimate_tokens(output_chars),
        cache_read: billed.read,
        cache_write: billed.write,
    };
    let mut frames = match api {
        Api::OpenAi | Api::WorkersAi => {
            frames::openai_frames(model, &reply, tokens, asked.include_usage)
        }
        Api::Anthropic => frames::anthropic_frames(model, &reply, tokens),
        Api::Responses => match &asked.responses {
            Some(request) => responses::frames(request, &reply, tokens),
            None => Vec::new(),
        },
    };
    if ending != Ending::Complete {
        frames.truncate(frames.len() / 2); // cut midway: some text, no end
    }
    if ending == Ending::ErrorEvent {
        frames.push(match api {
            Api::OpenAi | Api::WorkersAi => frames::openai_error_frame(),
            Api::Anthropic => frames::anthropic_error_frame(),
            Api::Responses => responses::error_frame(frames.len()),
        });
    }
    sse_response(frames, token_delay, ending == Ending::DropConnection)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Complete,
    DropConnection,
    ErrorEvent,
}

fn sse_response(frames: Vec<String>, token_delay: Duration, then_fail: bool) -> Response<Body> {
    let mut items: Vec<Option<String>> = frames.into_iter().map(Some).collect();
    if then_fail {
        items.push(None);
    }
    let stream =
        futures::stream::iter(items.into_iter().enumerate()).then(move |(i, item)| async move {
            if i > 0 && !token_delay.is_zero() {
                tokio::time::sleep(token_delay).await;
            }
            match item {
                Some(frame) => Ok(Frame::data(Bytes::from(frame))),
                None => {
                    // Let the partial answer reach the client before the cut.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    Err(std::io::Error::new(
                        std::io::ErrorKind::ConnectionReset,
                        "fake stream error",
                    ))
                }
            }
        });
    let mut response = Response::new(StreamBody::new(stream).boxed_unsync());
    let headers = response.headers_mut();
    headers.insert(
        "content-type",
        HeaderValue::from_static("text/event-stream; charset=utf-8"),
    );
    headers.insert("cache-control", HeaderValue::from_static("no-cache"));
    headers.insert(
        "x-request-id",
        HeaderValue::from_static("req_fake000000000000000000"),
    );
    response
}

/// A response body that notes in its request's record when its last frame
/// has been handed to the connection ([`RecordedRequest::answered_at`]).
struct Timed {
    inner: Body,
    state: Shared,
    /// The request's index among all requests recorded (see `State::cleared`).
    index: usize,
    done: bool,
}

impl Timed {
    fn mark_answered(&mut self) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        let at = Instant::now();
        let mut s = self.state.lock().unwrap();
        if let Some(i) = self.index.checked_sub(s.cleared) {
            if let Some(request) = s.requests.get_mut(i) {
                request.answered_at = Some(at);
            }
        }
    }
}

impl hyper::body::Body for Timed {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            // A stream's end, or the last frame of a body that knows its end
            // (hyper polls no further then).
            Poll::Ready(None) => self.mark_answered(),
            Poll::Ready(Some(Ok(_))) if self.inner.is_end_stream() => self.mark_answered(),
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

fn json_response(status: u16, body: &Value, retry_after: Option<u64>) -> Response<Body> {
    let full = Full::new(Bytes::from(body.to_string()))
        .map_err(|never| match never {})
        .boxed_unsync();
    let mut response = Response::new(full);
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert("content-type", HeaderValue::from_static("application/json"));
    if let Some(secs) = retry_after {
        headers.insert("retry-after", HeaderValue::from(secs));
    }
    response
}
