//! Small helpers shared by the objects: time, ids, and JSON `fetch` calls
//! between Durable Objects.

use super::body::BodyReader;
use gsv_protocol::{codes, ErrorShape};
use serde::{de::DeserializeOwned, Serialize};
use worker::{Env, Headers, Method, Request, RequestInit, Response};

/// `Date.now()`: no `Date` object made and dropped (as `worker::Date::now`
/// does) for every timestamp.
pub fn now_ms() -> i64 {
    js_sys::Date::now() as i64
}

pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub fn internal_error(e: impl std::fmt::Display) -> ErrorShape {
    ErrorShape::new(codes::INTERNAL, e.to_string())
}

/// POSTs `body` as JSON to `path` on the named object of `binding`, and
/// decodes the answer (an `ErrorShape` body on a non-2xx status).
pub async fn call_object<B: Serialize, R: DeserializeOwned>(
    env: &Env,
    binding: &str,
    name: &str,
    path: &str,
    body: &B,
) -> Result<R, ErrorShape> {
    let stub = env
        .durable_object(binding)
        .and_then(|ns| ns.get_by_name(name))
        .map_err(internal_error)?;
    let headers = Headers::new();
    headers
        .set("content-type", "application/json")
        .map_err(internal_error)?;
    // Bytes both ways: a JS string would be transcoded to UTF-16 and back.
    let json = serde_json::to_vec(body).map_err(internal_error)?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(js_sys::Uint8Array::from(json.as_slice()).into()));
    let req = Request::new_with_init(&format!("https://{binding}.internal{path}"), &init)
        .map_err(internal_error)?;
    let res = stub.fetch_with_request(req).await.map_err(internal_error)?;
    let bytes = BodyReader::new(&res)
        .read_all()
        .await
        .map_err(internal_error)?;
    if (200..300).contains(&res.status_code()) {
        serde_json::from_slice(&bytes).map_err(internal_error)
    } else {
        Err(
            serde_json::from_slice::<ErrorShape>(&bytes).unwrap_or_else(|_| {
                let text = String::from_utf8_lossy(&bytes);
                internal_error(format!("{path} failed: {text}"))
            }),
        )
    }
}

/// The answer to an internal call: the value, or the error with its status.
pub fn reply<T: Serialize>(result: Result<T, ErrorShape>) -> worker::Result<Response> {
    match result {
        Ok(v) => Response::from_json(&v),
        Err(e) => {
            let status = match e.code {
                400..=599 => e.code as u16,
                _ => 500,
            };
            Ok(Response::from_json(&e)?.with_status(status))
        }
    }
}

/// Reads a JSON request body, refusing a malformed one with a 400.
pub async fn read_json<T: DeserializeOwned>(req: &mut Request) -> Result<T, ErrorShape> {
    let bytes = req.bytes().await.map_err(internal_error)?;
    serde_json::from_slice(&bytes).map_err(|e| {
        ErrorShape::new(
            codes::BAD_REQUEST,
            format!("Malformed internal request: {e}"),
        )
    })
}
