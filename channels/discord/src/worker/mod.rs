//! The Worker: a `fetch` router in front of the `DiscordGateway` objects.
//! Every `/internal/*` path needs the channel key; `/health` says only that
//! the Worker runs. In production the Worker has no route at all
//! (`workers_dev = false`): the gateway reaches it through its service
//! binding.

mod driver;
mod gateway_client;
mod gateway_do;
mod rest_client;
mod store;

use gsv_protocol::channel_key::secrets_match;
use gsv_protocol::channels::{ChannelStatusQuery, ChannelStatusResult, CHANNEL_KEY_HEADER};
use serde::Deserialize;
use worker::*;

/// The object that lists the accounts ever started (for a status of all).
pub(crate) const REGISTRY: &str = "_accounts";

#[event(start)]
fn start() {
    gsv_worker_start::start();
}

#[event(fetch)]
async fn fetch(mut req: Request, env: Env, _ctx: Context) -> Result<Response> {
    let path = req.path();
    if req.method() == Method::Get && path == "/health" {
        return Response::from_json(&serde_json::json!({"status": "healthy"}));
    }
    if !path.starts_with("/internal/") {
        return Response::error("Not found", 404);
    }
    let expected = env
        .secret("GSV_CHANNEL_KEY")
        .map(|s| s.to_string())
        .unwrap_or_default();
    if expected.is_empty() {
        return Response::error(
            "GSV_CHANNEL_KEY is not set: `wrangler secret put GSV_CHANNEL_KEY` with the key `gsv` derives from the gateway's token",
            503,
        );
    }
    let presented = req.headers().get(CHANNEL_KEY_HEADER)?.unwrap_or_default();
    if !secrets_match(&expected, &presented) {
        return Response::error("Unauthorized", 401);
    }
    if req.method() != Method::Post {
        return Response::error("Method not allowed", 405);
    }
    match path.as_str() {
        "/internal/capabilities" => Response::from_json(&crate::rest::capabilities()),
        "/internal/media/fetch" => fetch_media(req, &env).await,
        "/internal/status" => {
            let body = req.text().await?;
            let query: ChannelStatusQuery = parse_or_default(&body);
            match query.account_id {
                Some(id) => forward(&env, &id, "/status", body).await,
                None => all_statuses(&env).await,
            }
        }
        "/internal/start" | "/internal/stop" | "/internal/send" | "/internal/typing"
        | "/internal/login" | "/internal/logout" => {
            let body = req.text().await?;
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct Account {
                account_id: String,
            }
            let Ok(Account { account_id }) = serde_json::from_str::<Account>(&body) else {
                return Response::error("the body needs an accountId", 400);
            };
            if account_id.is_empty() || account_id == REGISTRY {
                return Response::error("invalid accountId", 400);
            }
            if path == "/internal/start" {
                registry(&env)?
                    .fetch_with_request(internal_post("/register", account_id.clone())?)
                    .await?;
            }
            let sub = path.trim_start_matches("/internal");
            forward(&env, &account_id, sub, body).await
        }
        _ => Response::error("Not found", 404),
    }
}

/// An attachment someone sent, downloaded for the gateway and streamed
/// back (the Worker does it; no account state is needed).
async fn fetch_media(mut req: Request, env: &Env) -> Result<Response> {
    use gsv_protocol::channels::{ChannelMediaFetchParams, MediaFetchRefusal};
    let refuse = |status: u16, error: String, size: Option<u64>| {
        Ok(Response::from_json(&MediaFetchRefusal { error, size })?.with_status(status))
    };
    let Ok(p) = req.json::<ChannelMediaFetchParams>().await else {
        return refuse(400, "the body must be a media fetch".into(), None);
    };
    if let Some(size) = p.media.size.filter(|s| *s > p.max_bytes) {
        return refuse(413, "larger than the gateway takes".into(), Some(size));
    }
    let Some(url) = p.media.url.as_deref() else {
        return refuse(400, "the attachment has no URL".into(), None);
    };
    if !crate::rest::attachment_url_allowed(url, &rest_client::api_base(env)) {
        return refuse(403, format!("{url} is not a Discord attachment URL"), None);
    }
    match rest_client::download(url).await {
        Ok(resp) if resp.status_code() == 200 => Ok(resp),
        Ok(resp) => refuse(
            502,
            format!("Discord answered {} for the attachment", resp.status_code()),
            None,
        ),
        Err(e) => refuse(502, format!("Discord could not be reached: {e}"), None),
    }
}

fn parse_or_default<T: for<'de> Deserialize<'de> + Default>(body: &str) -> T {
    if body.trim().is_empty() {
        return T::default();
    }
    serde_json::from_str(body).unwrap_or_default()
}

fn registry(env: &Env) -> Result<Stub> {
    env.durable_object("DISCORD_GATEWAY")?.get_by_name(REGISTRY)
}

/// A POST to an object's internal path (objects are not reachable from
/// outside, so the URL's host is only a placeholder).
fn internal_post(path: &str, body: String) -> Result<Request> {
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(wasm_bindgen::JsValue::from_str(&body)));
    Request::new_with_init(&format!("https://discord-gateway{path}"), &init)
}

async fn forward(env: &Env, account_id: &str, path: &str, body: String) -> Result<Response> {
    env.durable_object("DISCORD_GATEWAY")?
        .get_by_name(account_id)?
        .fetch_with_request(internal_post(path, body)?)
        .await
}

async fn all_statuses(env: &Env) -> Result<Response> {
    let mut resp = registry(env)?
        .fetch_with_request(internal_post("/accounts", String::new())?)
        .await?;
    let ids: Vec<String> = resp.json().await?;
    let mut accounts = Vec::with_capacity(ids.len());
    for id in ids {
        let body = serde_json::json!({ "accountId": id }).to_string();
        let mut resp = forward(env, &id, "/status", body).await?;
        let one: ChannelStatusResult = resp.json().await?;
        accounts.extend(one.accounts);
    }
    Response::from_json(&ChannelStatusResult { accounts })
}
