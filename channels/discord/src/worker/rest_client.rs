//! Performs `rest` requests against `DISCORD_API_BASE`, retrying as
//! `rest::decide` says.

use crate::rest::{
    decide, Decision, Method as RestMethod, MultipartRequest, RestError, RestRequest, RestResponse,
};
use std::time::Duration;
use worker::{Delay, Env, Fetch, Headers, Method, Request, RequestInit};

const DEFAULT_API_BASE: &str = "https://discord.com/api/v10";
const USER_AGENT: &str = "DiscordBot (https://github.com/gsv, 0.1)";

pub fn api_base(env: &Env) -> String {
    env.var("DISCORD_API_BASE")
        .map(|v| v.to_string())
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_API_BASE.to_string())
}

/// What goes to Discord: a JSON request or an upload.
enum Payload<'a> {
    Json(&'a RestRequest),
    Multipart(&'a MultipartRequest),
}

/// Sends `req` until it succeeds or `decide` gives up; the body of the
/// successful answer.
pub async fn call(api_base: &str, token: &str, req: &RestRequest) -> Result<String, RestError> {
    call_payload(api_base, token, Payload::Json(req)).await
}

/// The same for a message with files.
pub async fn call_multipart(
    api_base: &str,
    token: &str,
    req: &MultipartRequest,
) -> Result<String, RestError> {
    call_payload(api_base, token, Payload::Multipart(req)).await
}

async fn call_payload(api_base: &str, token: &str, req: Payload<'_>) -> Result<String, RestError> {
    let mut attempt = 0;
    loop {
        let answer = send_once(api_base, token, &req).await;
        match decide(answer.as_ref(), attempt, js_sys::Math::random()) {
            Decision::Done => return Ok(answer.map(|a| a.body).unwrap_or_default()),
            Decision::RetryAfterMs(ms) => {
                Delay::from(Duration::from_millis(ms.max(0) as u64)).await;
                attempt += 1;
            }
            Decision::Fail(e) => return Err(e),
        }
    }
}

/// One try; `None` when Discord was not reached.
async fn send_once(api_base: &str, token: &str, req: &Payload<'_>) -> Option<RestResponse> {
    let request = match req {
        Payload::Json(req) => build(api_base, token, req).ok()?,
        Payload::Multipart(req) => build_multipart(api_base, token, req).ok()?,
    };
    let mut resp = Fetch::Request(request).send().await.ok()?;
    let headers = resp.headers();
    let number = |name: &str| {
        headers
            .get(name)
            .ok()
            .flatten()
            .and_then(|v| v.parse::<f64>().ok())
    };
    let retry_after = number("retry-after");
    let reset_after = number("x-ratelimit-reset-after");
    let global = headers
        .get("x-ratelimit-global")
        .ok()
        .flatten()
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let status = resp.status_code();
    let body = resp.text().await.unwrap_or_default();
    Some(RestResponse {
        status,
        retry_after,
        reset_after,
        global,
        body,
    })
}

fn build(api_base: &str, token: &str, req: &RestRequest) -> worker::Result<Request> {
    let headers = Headers::new();
    headers.set("authorization", &format!("Bot {token}"))?;
    headers.set("user-agent", USER_AGENT)?;
    let mut init = RequestInit::new();
    init.with_headers(headers.clone());
    match req.method {
        RestMethod::Get => {
            init.with_method(Method::Get);
        }
        RestMethod::Post => {
            init.with_method(Method::Post);
        }
    }
    if let Some(body) = &req.body {
        headers.set("content-type", "application/json")?;
        init.with_headers(headers)
            .with_body(Some(wasm_bindgen::JsValue::from_str(&body.to_string())));
    }
    Request::new_with_init(
        &format!("{}{}", api_base.trim_end_matches('/'), req.path),
        &init,
    )
}

fn build_multipart(api_base: &str, token: &str, req: &MultipartRequest) -> worker::Result<Request> {
    let headers = Headers::new();
    headers.set("authorization", &format!("Bot {token}"))?;
    headers.set("user-agent", USER_AGENT)?;
    headers.set("content-type", &req.content_type)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(js_sys::Uint8Array::from(req.body.as_slice()).into()));
    Request::new_with_init(
        &format!("{}{}", api_base.trim_end_matches('/'), req.path),
        &init,
    )
}

/// Downloads an attachment (Discord's CDN needs no token): the answer,
/// its body unread.
pub async fn download(url: &str) -> worker::Result<worker::Response> {
    let headers = Headers::new();
    headers.set("user-agent", USER_AGENT)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(headers);
    Fetch::Request(Request::new_with_init(url, &init)?)
        .send()
        .await
}
