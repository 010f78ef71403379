//! The typed client of the gateway (service binding `GATEWAY`): inbound
//! messages and status changes, each with the channel key.

use gsv_protocol::channels::{ChannelMediaGetParams, InternalCall, CHANNEL_KEY_HEADER};
use worker::{Env, Headers, Method, Request, RequestInit};

/// Why a call to the gateway failed.
#[derive(Debug)]
pub enum GatewayCallError {
    /// No `GATEWAY` binding or no `GSV_CHANNEL_KEY`.
    NotConfigured(&'static str),
    Transport(worker::Error),
    /// The gateway answered with this HTTP status.
    Status(u16),
    /// The gateway answered 200 with a body that is not the reply type.
    BadReply(worker::Error),
}

impl GatewayCallError {
    /// Whether the same call may succeed later (the gateway was away, or is
    /// being fixed); else the gateway has judged this call and repeating it
    /// changes nothing.
    pub fn worth_retrying(&self) -> bool {
        match self {
            Self::NotConfigured(_) | Self::Transport(_) => true,
            Self::Status(s) => matches!(s, 401 | 404 | 408 | 429 | 500..=599),
            Self::BadReply(_) => false,
        }
    }
}

impl std::fmt::Display for GatewayCallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotConfigured(what) => write!(f, "{what} is not configured"),
            Self::Transport(e) => write!(f, "the gateway could not be reached: {e}"),
            Self::Status(s) => write!(f, "the gateway answered {s}"),
            Self::BadReply(e) => write!(f, "the gateway's answer was not understood: {e}"),
        }
    }
}

impl From<worker::Error> for GatewayCallError {
    fn from(e: worker::Error) -> Self {
        Self::Transport(e)
    }
}

pub async fn call<P: InternalCall>(env: &Env, params: &P) -> Result<P::Reply, GatewayCallError> {
    let mut resp = post(
        env,
        P::PATH,
        &serde_json::to_string(params).map_err(worker::Error::from)?,
    )
    .await?;
    if resp.status_code() != 200 {
        return Err(GatewayCallError::Status(resp.status_code()));
    }
    resp.json().await.map_err(GatewayCallError::BadReply)
}

/// The bytes of a file the gateway asked the channel to send (its R2 key).
pub async fn read_media(env: &Env, key: &str) -> Result<Vec<u8>, GatewayCallError> {
    let body = serde_json::to_string(&ChannelMediaGetParams {
        key: key.to_string(),
    })
    .map_err(worker::Error::from)?;
    let mut resp = post(env, ChannelMediaGetParams::PATH, &body).await?;
    if resp.status_code() != 200 {
        return Err(GatewayCallError::Status(resp.status_code()));
    }
    Ok(resp.bytes().await?)
}

async fn post(env: &Env, path: &str, body: &str) -> Result<worker::Response, GatewayCallError> {
    let gateway = env
        .service("GATEWAY")
        .map_err(|_| GatewayCallError::NotConfigured("the GATEWAY service binding"))?;
    let key = env
        .secret("GSV_CHANNEL_KEY")
        .map(|s| s.to_string())
        .map_err(|_| GatewayCallError::NotConfigured("GSV_CHANNEL_KEY"))?;
    let headers = Headers::new();
    headers.set(CHANNEL_KEY_HEADER, &key)?;
    headers.set("content-type", "application/json")?;
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(wasm_bindgen::JsValue::from_str(body)));
    // A service binding ignores the host; the path is what the gateway routes.
    let req = Request::new_with_init(&format!("https://gsv{path}"), &init)?;
    Ok(gateway.fetch_request(req).await?)
}
