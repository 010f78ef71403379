//! The Worker: Meta's webhook (public: `GET /webhook` for the subscription
//! handshake, `POST /webhook` signed with the app secret) and the
//! gateway's `/internal/*` paths (the channel key), in front of the
//! `WhatsAppAccount` objects.
//!
//! A delivery is stored by its account's object before Meta gets its 200
//! (so nothing Meta delivered is lost to an eviction), and handed to the
//! gateway after, in `waitUntil`: Meta's webhook wants a quick answer and
//! redelivers what it does not get one for, which the object takes once.

mod account_do;
mod graph_client;
mod inbox;
mod sending;
mod store;

use crate::webhook::{parse, signature_ok, subscription, SIGNATURE_HEADER};
use account_do::Accept;
use gsv_channel_worker::{internal_post, Accounts};
use worker::*;

/// The `WhatsAppAccount` objects: one per account, and the registry of the
/// accounts and their numbers.
pub(crate) const ACCOUNTS: Accounts = Accounts {
    binding: "WHATSAPP_ACCOUNT",
};
/// Meta's deliveries are a few kilobytes (at most 3 MB); anything larger
/// is not read into memory before its signature could even be checked.
const MAX_DELIVERY_BYTES: usize = 4 * 1024 * 1024;

#[event(start)]
fn start() {
    gsv_worker_start::start();
}

#[event(fetch)]
async fn fetch(req: Request, env: Env, ctx: Context) -> Result<Response> {
    match (req.method(), req.path().as_str()) {
        (Method::Get, "/health") => Response::from_json(&serde_json::json!({"status": "healthy"})),
        (Method::Get, "/webhook") => verify(&req, &env),
        (Method::Post, "/webhook") => webhook(req, env, ctx).await,
        (_, path) if path.starts_with("/internal/") => {
            ACCOUNTS
                .internal(req, &env, &crate::graph::capabilities())
                .await
        }
        _ => Response::error("Not found", 404),
    }
}

fn secret(env: &Env, name: &str) -> String {
    env.secret(name).map(|s| s.to_string()).unwrap_or_default()
}

/// Meta's subscription handshake: the challenge back for the verify token.
fn verify(req: &Request, env: &Env) -> Result<Response> {
    let token = secret(env, "WHATSAPP_VERIFY_TOKEN");
    if token.is_empty() {
        console_error!(
            "whatsapp: WHATSAPP_VERIFY_TOKEN is not set; the webhook cannot be verified"
        );
    }
    let url = req.url()?;
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let query = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    match subscription(query, &token) {
        Some(challenge) => Response::ok(challenge),
        None => Response::error("Forbidden", 403),
    }
}

/// A delivery: signed, read, each number's part stored by its account,
/// then 200 and the hand-over to the gateway in `waitUntil`.
async fn webhook(mut req: Request, env: Env, ctx: Context) -> Result<Response> {
    let app_secret = secret(&env, "WHATSAPP_APP_SECRET");
    if app_secret.is_empty() {
        console_error!("whatsapp: WHATSAPP_APP_SECRET is not set; refusing deliveries");
        return Response::error("WHATSAPP_APP_SECRET is not set", 503);
    }
    let signature = req.headers().get(SIGNATURE_HEADER)?;
    let declared = req
        .headers()
        .get("content-length")?
        .and_then(|l| l.parse::<usize>().ok());
    if declared.is_some_and(|l| l > MAX_DELIVERY_BYTES) {
        return Response::error("Payload too large", 413);
    }
    let body = req.bytes().await?;
    if body.len() > MAX_DELIVERY_BYTES {
        return Response::error("Payload too large", 413);
    }
    if !signature_ok(&app_secret, &body, signature.as_deref()) {
        console_error!("whatsapp: a webhook delivery without a valid signature was refused");
        return Response::error("Unauthorized", 401);
    }
    let delivery = match parse(&body) {
        Ok(d) => d,
        Err(e) => {
            console_error!("whatsapp: a signed delivery could not be read: {e}");
            return Response::error(format!("Bad request: {e}"), 400);
        }
    };
    for why in &delivery.skipped {
        console_log!("whatsapp: skipped {why}");
    }
    let mut accounts = Vec::new();
    for batch in delivery.batches {
        for why in &batch.skipped {
            console_log!("whatsapp: {}: skipped {why}", batch.phone_number_id);
        }
        if batch.messages.is_empty() && batch.receipts.is_empty() {
            continue;
        }
        let mut routed = ACCOUNTS
            .registry(&env)?
            .fetch_with_request(internal_post("/route", batch.phone_number_id.clone())?)
            .await?;
        let Some(account_id) = routed.json::<Option<String>>().await? else {
            console_error!(
                "whatsapp: no account has phone number id {}: `gsv channel start whatsapp --phone-number-id {}`; \
                 dropping {} message(s)",
                batch.phone_number_id,
                batch.phone_number_id,
                batch.messages.len()
            );
            continue;
        };
        let accept = serde_json::to_string(&Accept {
            account_id: account_id.clone(),
            batch,
        })?;
        // Not stored: no 200, so Meta delivers it again.
        let stored = ACCOUNTS
            .account(&env, &account_id)?
            .fetch_with_request(internal_post("/accept", accept)?)
            .await?;
        if stored.status_code() != 200 {
            return Response::error("Could not store the delivery", 500);
        }
        accounts.push(account_id);
    }
    ctx.wait_until(async move {
        for id in accounts {
            let flushed = match (
                ACCOUNTS.account(&env, &id),
                internal_post("/flush", String::new()),
            ) {
                (Ok(stub), Ok(req)) => stub.fetch_with_request(req).await.map(|_| ()),
                (Err(e), _) | (_, Err(e)) => Err(e),
            };
            if let Err(e) = flushed {
                console_error!(
                    "whatsapp: handing account {id}'s messages to the gateway failed: {e}"
                );
            }
        }
    });
    Response::ok("")
}
