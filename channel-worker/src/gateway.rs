//! The gateway, as a channel Worker reaches it (service binding
//! `GATEWAY`): every call carries the channel key. The calls a channel
//! owes the gateway are stored as path and JSON (`tables`), so one untyped
//! post serves them all; each reply says `ok` and maybe why not.

use gsv_protocol::channels::{
    ChannelMediaGetParams, ChannelStatusParams, InternalCall, CHANNEL_KEY_HEADER,
};
use serde::Deserialize;
use worker::{Env, Headers, Method, Request, RequestInit, Response};

/// What every internal reply has (`ChannelInboundResult`, `OkResult`).
#[derive(Debug, Deserialize)]
pub struct Acknowledged {
    pub ok: bool,
    #[serde(default)]
    pub error: Option<String>,
}

/// Why a call did not reach the gateway, or was not understood.
#[derive(Debug)]
pub enum CallError {
    /// Worth another try later: the gateway was away or failing.
    Retry(String),
    /// The gateway judged the call; repeating it changes nothing.
    Refused(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Retry(e) | Self::Refused(e) => f.write_str(e),
        }
    }
}

/// `POST {path}` with `body` to the gateway, the channel key attached.
/// `Err` is why it did not reach the gateway (worth another try).
async fn send(env: &Env, path: &str, body: &str) -> Result<Response, String> {
    let gateway = env
        .service("GATEWAY")
        .map_err(|_| "the GATEWAY service binding is not configured".to_string())?;
    let key = env
        .secret("GSV_CHANNEL_KEY")
        .map(|s| s.to_string())
        .map_err(|_| "GSV_CHANNEL_KEY is not set".to_string())?;
    let headers = Headers::new();
    let mut init = RequestInit::new();
    let sent = async {
        headers.set(CHANNEL_KEY_HEADER, &key)?;
        headers.set("content-type", "application/json")?;
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(wasm_bindgen::JsValue::from_str(body)));
        // A service binding ignores the host; the path is what the gateway routes.
        let req = Request::new_with_init(&format!("https://gsv{path}"), &init)?;
        gateway.fetch_request(req).await
    };
    sent.await
        .map_err(|e| format!("the gateway could not be reached: {e}"))
}

pub async fn post(env: &Env, path: &str, body: &str) -> Result<Acknowledged, CallError> {
    let mut resp = send(env, path, body).await.map_err(CallError::Retry)?;
    let status = resp.status_code();
    match status {
        200 => resp.json().await.map_err(|e| {
            CallError::Refused(format!("the gateway's answer was not understood: {e}"))
        }),
        401 | 404 | 408 | 429 | 500..=599 => {
            Err(CallError::Retry(format!("the gateway answered {status}")))
        }
        _ => Err(CallError::Refused(format!("the gateway answered {status}"))),
    }
}

/// Tells the gateway how an account is doing now (a refused token).
pub async fn report_status(env: &Env, params: &ChannelStatusParams) {
    let body = serde_json::to_string(params).unwrap_or_default();
    if let Err(e) = post(env, ChannelStatusParams::PATH, &body).await {
        worker::console_error!("{}: reporting status failed: {e}", params.channel);
    }
}

/// The bytes of a file the gateway asked the channel to send (its R2
/// key), read from the gateway.
pub async fn read_media(env: &Env, key: &str) -> Result<Vec<u8>, String> {
    let body = serde_json::to_string(&ChannelMediaGetParams {
        key: key.to_string(),
    })
    .map_err(|e| e.to_string())?;
    let mut resp = send(env, ChannelMediaGetParams::PATH, &body).await?;
    let status = resp.status_code();
    if status != 200 {
        let why = resp.text().await.unwrap_or_default();
        return Err(format!(
            "the gateway could not give the file {key} ({status}): {why}"
        ));
    }
    resp.bytes()
        .await
        .map_err(|e| format!("reading the file {key} from the gateway failed: {e}"))
}
