//! What every channel Worker shares in front of its account objects (one
//! Durable Object per account, named by its id, and one more, the
//! registry, that lists them): the gateway's `/internal/*` calls are
//! checked against the channel key, must be POSTs, and name a valid
//! account, then go to that account's object. A status without an
//! account asks every registered one.
//!
//! Behind them, what every account object does the same way: the client
//! of the gateway (`gateway`), the tables they all keep (`tables`), the
//! account's state kept in them (`kept`), the
//! durable inbox of calls owed to the gateway (`inbox`); and the
//! `multipart/form-data` of file uploads (`multipart`) and an account's
//! status (`status`).

use serde::Deserialize;

#[cfg(target_arch = "wasm32")]
pub mod fault;
#[cfg(target_arch = "wasm32")]
pub mod gateway;
#[cfg(target_arch = "wasm32")]
pub mod inbox;
#[cfg(target_arch = "wasm32")]
pub mod kept;
pub mod multipart;
#[cfg(target_arch = "wasm32")]
mod route;
pub mod status;
#[cfg(target_arch = "wasm32")]
pub mod tables;
#[cfg(target_arch = "wasm32")]
pub use route::{internal_post, refuse_internal, Accounts};

/// The name of the object that lists the accounts (never an account's).
pub const REGISTRY: &str = "_accounts";

/// Whether `id` may name an account's object.
pub fn is_account_name(id: &str) -> bool {
    !id.is_empty() && id != REGISTRY
}

/// The account an `/internal/*` call's JSON body names, or why it names
/// none the Worker will hand the call to (a 400's text).
pub fn account_id_of(body: &str) -> Result<String, &'static str> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Account {
        account_id: String,
    }
    let Ok(Account { account_id }) = serde_json::from_str::<Account>(body) else {
        return Err("the body needs an accountId");
    };
    match is_account_name(&account_id) {
        true => Ok(account_id),
        false => Err("invalid accountId"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_names_an_account_that_is_not_the_registry() {
        let cases = [
            (
                r#"{"accountId":"bot1","text":"hi"}"#,
                Ok("bot1".to_string()),
            ),
            (r#"{"accountId":""}"#, Err("invalid accountId")),
            (r#"{"accountId":"_accounts"}"#, Err("invalid accountId")),
            (r#"{"text":"hi"}"#, Err("the body needs an accountId")),
            (r#"{"accountId":7}"#, Err("the body needs an accountId")),
            ("not json", Err("the body needs an accountId")),
            ("", Err("the body needs an accountId")),
        ];
        for (body, expected) in cases {
            assert_eq!(account_id_of(body), expected, "{body}");
        }
    }
}
