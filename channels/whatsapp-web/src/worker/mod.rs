//! The Worker: the gateway's `/internal/*` paths (the channel key), in
//! front of the `WhatsAppWebAccount` objects. Nothing public: WhatsApp is
//! reached by the objects' own sockets, never by webhook.

mod account_do;
mod alarm;
mod http;
mod inbox;
mod link;
mod login;
mod media;
mod platform;
mod sending;
mod socket;
mod sql;
mod tables;

use gsv_channel_worker::Accounts;
use worker::*;

/// The `WhatsAppWebAccount` objects: one per account, and the registry.
pub(crate) const ACCOUNTS: Accounts = Accounts {
    binding: "WHATSAPP_WEB_ACCOUNT",
};

#[event(start)]
fn start() {
    gsv_worker_start::start();
    platform::install_clocks();
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    let path = req.path();
    match (req.method(), path.as_str()) {
        (Method::Get, "/health") => Response::from_json(&serde_json::json!({"status": "healthy"})),
        (_, p) if p.starts_with("/internal/") => {
            ACCOUNTS.internal(req, &env, &crate::capabilities()).await
        }
        _ => Response::error("Not found", 404),
    }
}
