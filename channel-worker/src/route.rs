//! The Worker side: the channel key, the account objects, the registry.

use crate::{account_id_of, is_account_name};
use gsv_protocol::channel_key::secrets_match;
use gsv_protocol::channels::{
    ChannelCapabilities, ChannelStatusQuery, ChannelStatusResult, CHANNEL_KEY_HEADER,
};
use worker::*;

/// Why an `/internal/*` call is refused before it reaches an account:
/// no channel key configured (503), a wrong one (401), not a POST (405).
pub fn refuse_internal(req: &Request, env: &Env) -> Result<Option<Response>> {
    let expected = env
        .secret("GSV_CHANNEL_KEY")
        .map(|s| s.to_string())
        .unwrap_or_default();
    if expected.is_empty() {
        return Response::error(
            "GSV_CHANNEL_KEY is not set: `wrangler secret put GSV_CHANNEL_KEY` with the key `gsv` derives from the gateway's token",
            503,
        )
        .map(Some);
    }
    let presented = req.headers().get(CHANNEL_KEY_HEADER)?.unwrap_or_default();
    if !secrets_match(&expected, &presented) {
        return Response::error("Unauthorized", 401).map(Some);
    }
    if req.method() != Method::Post {
        return Response::error("Method not allowed", 405).map(Some);
    }
    Ok(None)
}

/// A POST to an object's internal path (objects are not reachable from
/// outside, so the URL's host is only a placeholder).
pub fn internal_post(path: &str, body: String) -> Result<Request> {
    let mut init = RequestInit::new();
    init.with_method(Method::Post)
        .with_body(Some(wasm_bindgen::JsValue::from_str(&body)));
    Request::new_with_init(&format!("https://channel-account{path}"), &init)
}

/// A channel's account objects: the Durable Object binding they live in.
pub struct Accounts {
    pub binding: &'static str,
}

impl Accounts {
    /// The object that lists the accounts (`/register`, `/accounts`).
    pub fn registry(&self, env: &Env) -> Result<Stub> {
        self.account(env, crate::REGISTRY)
    }

    pub fn account(&self, env: &Env, account_id: &str) -> Result<Stub> {
        env.durable_object(self.binding)?.get_by_name(account_id)
    }

    /// Hands a call to the account's object at `path`.
    pub async fn forward(
        &self,
        env: &Env,
        account_id: &str,
        path: &str,
        body: String,
    ) -> Result<Response> {
        self.account(env, account_id)?
            .fetch_with_request(internal_post(path, body)?)
            .await
    }

    /// The gateway's `/internal/*` calls, for a channel whose account
    /// objects take them all (at the same path without `/internal`): the
    /// channel key checked, the capabilities answered here, a status of
    /// one account or all, anything else handed to the account it names.
    pub async fn internal(
        &self,
        mut req: Request,
        env: &Env,
        capabilities: &ChannelCapabilities,
    ) -> Result<Response> {
        if let Some(refused) = refuse_internal(&req, env)? {
            return Ok(refused);
        }
        let path = req.path();
        match path.as_str() {
            "/internal/capabilities" => Response::from_json(capabilities),
            "/internal/status" => self.status(env, req.text().await?).await,
            "/internal/start"
            | "/internal/stop"
            | "/internal/send"
            | "/internal/typing"
            | "/internal/login"
            | "/internal/logout"
            | "/internal/media/fetch" => {
                let body = req.text().await?;
                let account_id = match account_id_of(&body) {
                    Ok(id) => id,
                    Err(why) => return Response::error(why, 400),
                };
                let sub = path.trim_start_matches("/internal");
                self.forward(env, &account_id, sub, body).await
            }
            _ => Response::error("Not found", 404),
        }
    }

    /// `/internal/status`: one account's, or every registered one's.
    pub async fn status(&self, env: &Env, body: String) -> Result<Response> {
        let query: ChannelStatusQuery = serde_json::from_str(&body).unwrap_or_default();
        match query.account_id {
            Some(id) if is_account_name(&id) => self.forward(env, &id, "/status", body).await,
            Some(_) => Response::error("invalid accountId", 400),
            None => self.all_statuses(env).await,
        }
    }

    async fn all_statuses(&self, env: &Env) -> Result<Response> {
        let mut resp = self
            .registry(env)?
            .fetch_with_request(internal_post("/accounts", String::new())?)
            .await?;
        let ids: Vec<String> = resp.json().await?;
        let mut accounts = Vec::with_capacity(ids.len());
        for id in ids {
            let body = serde_json::json!({ "accountId": id }).to_string();
            let mut resp = self.forward(env, &id, "/status", body).await?;
            let one: ChannelStatusResult = resp.json().await?;
            accounts.extend(one.accounts);
        }
        Response::from_json(&ChannelStatusResult { accounts })
    }
}
