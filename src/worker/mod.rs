//! The Worker: a thin `fetch` router in front of the Durable Objects.
//! `/health` and `/ws` are public; `/media/upload` takes a client's file
//! with the auth token; `/internal/channel/*` answers channel Workers that
//! present the channel key; the objects' other internal paths are
//! reachable only from inside the Worker.

mod bindings;
pub(crate) mod body;
mod channels;
pub(crate) mod fault;
mod gateway_do;
mod llm_call;
mod media;
mod memory_do;
mod native_tools;
mod r2;
mod rpc;
mod session_do;
mod tz;
mod workspace;

use worker::*;

#[event(start)]
fn start() {
    gsv_worker_start::start();
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    match (req.method(), req.path().as_str()) {
        (Method::Get, "/health") => Response::from_json(&serde_json::json!({"status": "healthy"})),
        (Method::Get, "/ws") => {
            let upgrade = req.headers().get("Upgrade")?.unwrap_or_default();
            if !upgrade.eq_ignore_ascii_case("websocket") {
                return Response::error("Expected a WebSocket upgrade", 426);
            }
            bindings::gateway_object(&env)?
                .fetch_with_request(req)
                .await
        }
        // `gsv chat --attach`: a file for a session, with the auth token.
        (Method::Post, gsv_protocol::MEDIA_UPLOAD_PATH) => Box::pin(media::upload(req, &env)).await,
        // Channel Workers, through their service binding to this Worker.
        (Method::Post, path) if path.starts_with("/internal/channel/") => {
            channel_call(req, &env).await
        }
        // Tests only: the gateway's schedule clock (gateway_do/scheduler/clock.rs).
        (Method::Post, crate::session::internal::path::TEST_CLOCK)
            if gateway_do::test_clock_enabled(&env) =>
        {
            bindings::gateway_object(&env)?
                .fetch_with_request(req)
                .await
        }
        _ => Response::error("Not found", 404),
    }
}

/// The cron trigger (`[triggers]` in wrangler.toml), every five minutes:
/// wakes the Gateway, which runs what is due and re-arms its alarm, so a
/// lost alarm delays a reminder by minutes, not forever.
#[event(scheduled)]
async fn scheduled(_event: ScheduledEvent, env: Env, _ctx: ScheduleContext) {
    let url = format!("https://gateway{}", crate::session::internal::path::WAKE);
    let woke = match bindings::gateway_object(&env) {
        Ok(stub) => stub.fetch_with_str(&url).await.map(|_| ()),
        Err(e) => Err(e),
    };
    if let Err(e) = woke {
        console_error!("scheduled: waking the gateway failed: {e}");
    }
}

/// An internal channel call is forwarded to the Gateway only with the
/// channel key (derived from `GSV_AUTH_TOKEN`): the path is reachable from
/// the internet like any other, the key is not.
async fn channel_call(req: Request, env: &Env) -> Result<Response> {
    use gsv_protocol::channel_key::{derive_channel_key, secrets_match};
    use gsv_protocol::channels::CHANNEL_KEY_HEADER;
    let token = env
        .secret("GSV_AUTH_TOKEN")
        .map(|s| s.to_string())
        .unwrap_or_default();
    if token.is_empty() {
        return Response::error("The gateway has no GSV_AUTH_TOKEN configured", 503);
    }
    let given = req.headers().get(CHANNEL_KEY_HEADER)?.unwrap_or_default();
    if !secrets_match(&derive_channel_key(&token), &given) {
        return Response::error("Unauthorized: missing or wrong channel key", 401);
    }
    // A file to send: read from R2 here, not through the Gateway object.
    if req.path() == gsv_protocol::channels::ChannelMediaGetParams::PATH {
        return Box::pin(media::channel_read(req, env)).await;
    }
    bindings::gateway_object(env)?.fetch_with_request(req).await
}
