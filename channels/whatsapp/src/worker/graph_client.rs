//! Performs `graph` requests against `WHATSAPP_API_BASE` with the
//! account's bearer token: one try each (the gateway's ledger retries a
//! send that may pass later).

use crate::graph::{GraphRequest, Method as GraphMethod};
use worker::{Env, Fetch, Headers, Method, Request, RequestInit, Response};

const DEFAULT_API_BASE: &str = "https://graph.facebook.com/v23.0";

pub fn api_base(env: &Env) -> String {
    env.var("WHATSAPP_API_BASE")
        .map(|v| v.to_string())
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_API_BASE.to_string())
}

/// The answer's status and body; `Err` when Meta was not reached.
pub async fn call(base: &str, token: &str, req: &GraphRequest) -> Result<(u16, String), String> {
    let request = build(base, token, req).map_err(|e| e.to_string())?;
    let mut resp = Fetch::Request(request)
        .send()
        .await
        .map_err(|e| format!("WhatsApp could not be reached: {e}"))?;
    let status = resp.status_code();
    Ok((status, resp.text().await.unwrap_or_default()))
}

fn build(base: &str, token: &str, req: &GraphRequest) -> worker::Result<Request> {
    let headers = Headers::new();
    headers.set("authorization", &format!("Bearer {token}"))?;
    let mut init = RequestInit::new();
    init.with_method(match req.method {
        GraphMethod::Get => Method::Get,
        GraphMethod::Post => Method::Post,
    });
    if let Some(body) = &req.body {
        headers.set("content-type", "application/json")?;
        init.with_body(Some(wasm_bindgen::JsValue::from_str(&body.to_string())));
    }
    init.with_headers(headers);
    Request::new_with_init(
        &format!("{}{}", base.trim_end_matches('/'), req.path),
        &init,
    )
}

/// `POST {base}{path}` of a `multipart/form-data` body (a media upload).
pub async fn upload(
    base: &str,
    token: &str,
    path: &str,
    content_type: &str,
    body: &[u8],
) -> Result<(u16, String), String> {
    let build = || -> worker::Result<Request> {
        let headers = Headers::new();
        headers.set("authorization", &format!("Bearer {token}"))?;
        headers.set("content-type", content_type)?;
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(js_sys::Uint8Array::from(body).into()));
        Request::new_with_init(&format!("{}{path}", base.trim_end_matches('/')), &init)
    };
    let request = build().map_err(|e| e.to_string())?;
    let mut resp = Fetch::Request(request)
        .send()
        .await
        .map_err(|e| format!("WhatsApp could not be reached: {e}"))?;
    let status = resp.status_code();
    Ok((status, resp.text().await.unwrap_or_default()))
}

/// `GET url` with the bearer token (a media file's short-lived URL): the
/// answer as it comes, its body unread.
pub async fn download(url: &str, token: &str) -> Result<Response, String> {
    let headers = Headers::new();
    headers
        .set("authorization", &format!("Bearer {token}"))
        .map_err(|e| e.to_string())?;
    let mut init = RequestInit::new();
    init.with_method(Method::Get).with_headers(headers);
    let request = Request::new_with_init(url, &init).map_err(|e| e.to_string())?;
    Fetch::Request(request)
        .send()
        .await
        .map_err(|e| format!("WhatsApp could not be reached: {e}"))
}
