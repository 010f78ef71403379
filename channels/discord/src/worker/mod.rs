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

use gsv_channel_worker::{account_id_of, internal_post, refuse_internal, Accounts};
use worker::*;

/// The `DiscordGateway` objects: one per bot account, and the registry.
pub(crate) const ACCOUNTS: Accounts = Accounts {
    binding: "DISCORD_GATEWAY",
};

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
    if let Some(refused) = refuse_internal(&req, &env)? {
        return Ok(refused);
    }
    match path.as_str() {
        "/internal/capabilities" => Response::from_json(&crate::rest::capabilities()),
        "/internal/media/fetch" => fetch_media(req, &env).await,
        "/internal/status" => ACCOUNTS.status(&env, req.text().await?).await,
        "/internal/start" | "/internal/stop" | "/internal/send" | "/internal/typing"
        | "/internal/login" | "/internal/logout" => {
            let body = req.text().await?;
            let account_id = match account_id_of(&body) {
                Ok(id) => id,
                Err(why) => return Response::error(why, 400),
            };
            if path == "/internal/start" {
                ACCOUNTS
                    .registry(&env)?
                    .fetch_with_request(internal_post("/register", account_id.clone())?)
                    .await?;
            }
            let sub = path.trim_start_matches("/internal");
            ACCOUNTS.forward(&env, &account_id, sub, body).await
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
