//! The Worker: a thin `fetch` router in front of the Durable Objects.
//! Only `/health` and `/ws` are public; the objects' internal paths are
//! reachable only from inside the Worker.

mod bindings;
mod gateway_do;
mod llm_call;
mod native_tools;
mod r2;
mod rpc;
mod session_do;
mod session_view;
mod sql;
mod tz;
mod workspace;

use worker::*;

#[event(start)]
fn start() {
    console_error_panic_hook::set_once();
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
        _ => Response::error("Not found", 404),
    }
}
