//! The Worker's media routes. `POST /media/upload` takes a client's file
//! (`gsv chat --attach`) into a session's media, streamed into R2 with its
//! declared length; `/internal/channel/media` hands a channel the file it
//! was asked to send. Both are answered by the Worker itself, not the
//! Gateway object: the bytes never pass through the object.

use super::{put_stream, NewFile};
use crate::media::key::{is_media_key, media_key, query_pairs};
use crate::media::{mime, too_large_reason, MAX_MEDIA_BYTES};
use crate::session::internal::CanonicalKey;
use crate::worker::bindings::{self, GatewayStub};
use crate::worker::rpc::new_id;
use gsv_protocol::channel_key::secrets_match;
use gsv_protocol::channels::{ChannelMedia, ChannelMediaGetParams};
use serde_json::json;
use worker::{Env, Headers, Request, Response, ResponseBody, Result};

fn refuse(status: u16, error: &str) -> Result<Response> {
    Ok(Response::from_json(&json!({ "error": error }))?.with_status(status))
}

/// `POST /media/upload?sessionKey=KEY&filename=NAME`, with the gateway's
/// token as `Authorization: Bearer`: the file, answered with its
/// `ChannelMedia` for `chat.send`.
pub async fn upload(req: Request, env: &Env) -> Result<Response> {
    let token = env
        .secret("GSV_AUTH_TOKEN")
        .map(|s| s.to_string())
        .unwrap_or_default();
    if token.is_empty() {
        return refuse(503, "The gateway has no GSV_AUTH_TOKEN configured");
    }
    let given = req.headers().get("authorization")?.unwrap_or_default();
    let given = given.strip_prefix("Bearer ").unwrap_or_default();
    if !secrets_match(&token, given) {
        return refuse(401, "Unauthorized: missing or wrong token");
    }
    // The raw URL, not `req.url()`: parsing it with the `url` crate would
    // add its IDNA tables to the Wasm for two query parameters.
    let pairs = query_pairs(&req.inner().url());
    let query = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.trim().is_empty())
    };
    let session_key = query("sessionKey").unwrap_or_else(|| "main".into());
    let filename = query("filename").filter(|f| !f.contains(['/', '\\', '\r', '\n']));
    let Some(len) = req
        .headers()
        .get("content-length")?
        .and_then(|l| l.trim().parse::<u64>().ok())
    else {
        return refuse(
            411,
            "Content-Length is required (the file is stored as it streams)",
        );
    };
    if len > MAX_MEDIA_BYTES {
        return refuse(
            413,
            &format!("The file is too large: {}", too_large_reason(len)),
        );
    }
    if len == 0 {
        return refuse(400, "The file is empty");
    }
    let Some(body) = req.inner().body() else {
        return refuse(400, "The request has no body");
    };
    let canonical = GatewayStub::get(env)
        .call(&CanonicalKey { session_key })
        .await
        .map_err(|e| worker::Error::RustError(e.message))?
        .session_key;
    let declared = req.headers().get("content-type")?;
    let mime_type = mime::resolve(declared.as_deref(), filename.as_deref());
    let key = media_key(&canonical, &new_id(), &mime_type);
    let file = NewFile {
        key: &key,
        mime: &mime_type,
        filename: filename.as_deref(),
        session_key: &canonical,
    };
    if let Err(e) = put_stream(&bindings::bucket(env)?, &file, body, len).await {
        return refuse(500, &format!("Storing the file failed: {e}"));
    }
    Response::from_json(&ChannelMedia {
        media_type: mime::media_type(&mime_type),
        mime_type,
        data: None,
        r2_key: Some(key),
        id: None,
        url: None,
        filename,
        size: Some(len),
        duration: None,
    })
}

/// A channel reads a file it was asked to send (its channel key checked
/// by the caller): a session's media or a workspace file, nothing else.
pub async fn channel_read(mut req: Request, env: &Env) -> Result<Response> {
    let Ok(p) = req.json::<ChannelMediaGetParams>().await else {
        return Response::error("The body must be {\"key\": …}", 400);
    };
    let allowed = is_media_key(&p.key)
        || (p.key.starts_with("agents/") || p.key.starts_with("skills/")) && !p.key.contains("..");
    if !allowed {
        return Response::error("Not a file a channel may read", 403);
    }
    let Some(object) = bindings::bucket(env)?.get(&p.key).execute().await? else {
        return Response::error(format!("No such file: {}", p.key), 404);
    };
    let headers = Headers::new();
    let mime = object
        .http_metadata()
        .content_type
        .unwrap_or_else(|| "application/octet-stream".into());
    headers.set("content-type", &mime)?;
    headers.set("content-length", &object.size().to_string())?;
    let body = match object.body() {
        Some(b) => b.response_body()?,
        None => ResponseBody::Empty,
    };
    Ok(Response::from_body(body)?.with_headers(headers))
}
