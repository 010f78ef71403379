//! The Worker: Telegram's webhook (public: `POST /webhook/{account}`,
//! carrying the account's secret) and the gateway's `/internal/*` paths
//! (the channel key), in front of the `TelegramAccount` objects.
//!
//! An update is stored by its account's object before Telegram gets its
//! 200 (Telegram redelivers what it gets no 200 for, which the object
//! takes once), and handed to the gateway by the object's alarm, set for
//! at once: Telegram's webhook wants a quick answer.

mod account_do;
mod alarm;
mod bot_client;
mod inbox;
mod media;
mod sending;
mod store;
mod typing;

use crate::webhook::{account_in_path, SECRET_HEADER};
use gsv_channel_worker::Accounts;
use worker::*;

/// The `TelegramAccount` objects: one per account, and the registry.
pub(crate) const ACCOUNTS: Accounts = Accounts {
    binding: "TELEGRAM_ACCOUNT",
};
/// Updates are a few kilobytes; anything much larger is not one.
const MAX_UPDATE_BYTES: usize = 1024 * 1024;

#[event(start)]
fn start() {
    gsv_worker_start::start();
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    let path = req.path();
    match (req.method(), path.as_str()) {
        (Method::Get, "/health") => Response::from_json(&serde_json::json!({"status": "healthy"})),
        (Method::Post, p) if p.starts_with("/webhook/") => webhook(req, &env).await,
        (_, p) if p.starts_with("/internal/") => {
            ACCOUNTS
                .internal(req, &env, &crate::api::capabilities())
                .await
        }
        _ => Response::error("Not found", 404),
    }
}

/// An update for one account: checked and stored by its object, which
/// answers 200 once it is kept (401 without the account's secret).
async fn webhook(mut req: Request, env: &Env) -> Result<Response> {
    let Some(account_id) = account_in_path(&req.path()) else {
        return Response::error("Not found", 404);
    };
    let declared = req
        .headers()
        .get("content-length")?
        .and_then(|l| l.parse::<usize>().ok());
    if declared.is_some_and(|l| l > MAX_UPDATE_BYTES) {
        return Response::error("Payload too large", 413);
    }
    let secret = req.headers().get(SECRET_HEADER)?;
    let body = req.text().await?;
    if body.len() > MAX_UPDATE_BYTES {
        return Response::error("Payload too large", 413);
    }
    let headers = Headers::new();
    if let Some(secret) = secret {
        headers.set(SECRET_HEADER, &secret)?;
    }
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_headers(headers)
        .with_body(Some(wasm_bindgen::JsValue::from_str(&body)));
    // Objects are not reachable from outside: the host is a placeholder.
    let forward = Request::new_with_init("https://channel-account/webhook", &init)?;
    let answer = ACCOUNTS
        .account(env, &account_id)?
        .fetch_with_request(forward)
        .await?;
    match answer.status_code() {
        200 => Response::ok(""),
        401 => {
            console_error!("telegram: an update for {account_id} without its secret was refused");
            Response::error("Unauthorized", 401)
        }
        // Not stored: no 200, so Telegram delivers it again.
        status => Response::error("Could not store the update", status.max(500)),
    }
}
