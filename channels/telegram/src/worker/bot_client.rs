//! Performs `api` calls against `TELEGRAM_API_BASE` with the bot's token:
//! one try each (the gateway's ledger retries a send that may pass later;
//! the alarm retries polls). The token is in every URL, so no error
//! message leaves here with it.

use crate::api::{answer, ApiCall, ApiError};
use serde::Deserialize;
use worker::{Env, Fetch, Headers, Method, Request, RequestInit, Response};

const DEFAULT_API_BASE: &str = "https://api.telegram.org";

pub fn api_base(env: &Env) -> String {
    env.var("TELEGRAM_API_BASE")
        .map(|v| v.to_string())
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_API_BASE.to_string())
}

/// Telegram not reached, in words without the token.
fn unreached(e: impl std::fmt::Display, token: &str) -> ApiError {
    ApiError::unreached(format!(
        "Telegram could not be reached: {}",
        e.to_string().replace(token, "<token>")
    ))
}

async fn post(
    base: &str,
    token: &str,
    method: &str,
    content_type: &str,
    body: wasm_bindgen::JsValue,
) -> Result<(u16, String), ApiError> {
    let url = format!("{}/bot{token}/{method}", base.trim_end_matches('/'));
    let build = || -> worker::Result<Request> {
        let headers = Headers::new();
        headers.set("content-type", content_type)?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(body));
        Request::new_with_init(&url, &init)
    };
    let request = build().map_err(|e| unreached(e, token))?;
    let mut resp = Fetch::Request(request)
        .send()
        .await
        .map_err(|e| unreached(e, token))?;
    let status = resp.status_code();
    Ok((status, resp.text().await.unwrap_or_default()))
}

/// The call's answer: its `result` as `T`, or why not.
pub async fn call<T: for<'de> Deserialize<'de>>(
    base: &str,
    token: &str,
    call: &ApiCall,
) -> Result<T, ApiError> {
    let body = wasm_bindgen::JsValue::from_str(&call.body.to_string());
    let (status, text) = post(base, token, call.method, "application/json", body).await?;
    answer(status, &text)
}

/// The answer's status and body as they came (a send, read by `outbound`).
pub async fn call_raw(base: &str, token: &str, call: &ApiCall) -> Result<(u16, String), ApiError> {
    let body = wasm_bindgen::JsValue::from_str(&call.body.to_string());
    post(base, token, call.method, "application/json", body).await
}

/// `method` with a `multipart/form-data` body (a file's upload).
pub async fn upload(
    base: &str,
    token: &str,
    method: &str,
    content_type: &str,
    body: &[u8],
) -> Result<(u16, String), ApiError> {
    let body = js_sys::Uint8Array::from(body).into();
    post(base, token, method, content_type, body).await
}

/// `GET {base}/file/bot{token}/{file_path}`: the answer as it comes, its
/// body unread (streamed on to the gateway).
pub async fn download(base: &str, token: &str, file_path: &str) -> Result<Response, ApiError> {
    let url = format!(
        "{}/file/bot{token}/{}",
        base.trim_end_matches('/'),
        file_path.trim_start_matches('/')
    );
    let mut init = RequestInit::new();
    init.with_method(Method::Get);
    let request = Request::new_with_init(&url, &init).map_err(|e| unreached(e, token))?;
    Fetch::Request(request)
        .send()
        .await
        .map_err(|e| unreached(e, token))
}
