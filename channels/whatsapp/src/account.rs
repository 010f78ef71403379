//! One account: a business phone number of the Meta app, started with
//! its phone-number id and an access token. The token given at
//! `channel.start` is kept (and never shown); without one, the Worker's
//! `WHATSAPP_ACCESS_TOKEN` secret serves.

use gsv_channel_worker::status::Health;
use gsv_protocol::channels::{ChannelAccountConfig, ChannelAccountStatus};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// What the account's object keeps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Account {
    /// Taking webhooks and sending; a stopped account drops its number's
    /// messages (Meta still gets its 200).
    pub started: bool,
    pub phone_number_id: Option<String>,
    /// Given at start; never shown.
    pub access_token: Option<String>,
    pub display_phone_number: Option<String>,
    pub verified_name: Option<String>,
    /// Meta took the token when last asked.
    pub authenticated: bool,
    /// Why it is not working, in plain words.
    pub error: Option<String>,
    /// Milliseconds since the epoch: the last message in or out.
    pub last_activity: Option<i64>,
}

/// What a start settles: the number and the token to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    pub phone_number_id: String,
    /// The token given at start (kept), if any.
    pub given_token: Option<String>,
    pub token: String,
}

/// The number and token a start uses: the config's, else the Worker's
/// (`WHATSAPP_PHONE_NUMBER_ID`, `WHATSAPP_ACCESS_TOKEN`).
pub fn plan_start(
    config: &ChannelAccountConfig,
    env_phone_number_id: Option<&str>,
    env_token: Option<&str>,
) -> Result<Start, String> {
    fn given(v: &Option<String>) -> Option<&str> {
        v.as_deref().map(str::trim).filter(|v| !v.is_empty())
    }
    let phone_number_id = given(&config.phone_number_id)
        .or(env_phone_number_id.map(str::trim).filter(|v| !v.is_empty()))
        .ok_or(
            "no phone number id: start the account with --phone-number-id (config.phoneNumberId) \
             or set WHATSAPP_PHONE_NUMBER_ID",
        )?;
    if !phone_number_id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{phone_number_id:?} is not a phone number id: it is the number's id in the Meta app \
             (digits, under WhatsApp → API Setup), not the phone number"
        ));
    }
    let given_token = given(&config.access_token).map(str::to_string);
    let token = given_token
        .clone()
        .or(env_token
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string))
        .ok_or(
            "no access token: start the account with --access-token (config.accessToken) \
             or set the WHATSAPP_ACCESS_TOKEN secret",
        )?;
    Ok(Start {
        phone_number_id: phone_number_id.to_string(),
        given_token,
        token,
    })
}

impl Account {
    /// The token sends use: the one given at start, else the secret's.
    pub fn token(&self, env_token: Option<&str>) -> Option<String> {
        self.access_token
            .clone()
            .or(env_token.filter(|t| !t.is_empty()).map(str::to_string))
    }

    /// The account as the gateway sees it; never carries the token.
    pub fn status(&self, account_id: &str, has_token: bool) -> ChannelAccountStatus {
        let health = Health {
            started: self.started,
            authenticated: self.authenticated,
            error: self.error.as_deref(),
        };
        health.status(
            account_id,
            Some("webhook".into()),
            self.last_activity,
            json!({
                "phoneNumberId": self.phone_number_id,
                "displayPhoneNumber": self.display_phone_number,
                "verifiedName": self.verified_name,
                "hasToken": has_token,
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(phone: Option<&str>, token: Option<&str>) -> ChannelAccountConfig {
        ChannelAccountConfig {
            phone_number_id: phone.map(str::to_string),
            access_token: token.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn a_start_takes_the_config_first_then_the_worker_s_settings() {
        assert_eq!(
            plan_start(&config(Some("111"), Some("tok")), Some("222"), Some("env")),
            Ok(Start {
                phone_number_id: "111".into(),
                given_token: Some("tok".into()),
                token: "tok".into(),
            })
        );
        assert_eq!(
            plan_start(&config(None, Some(" ")), Some("222"), Some("env")),
            Ok(Start {
                phone_number_id: "222".into(),
                given_token: None,
                token: "env".into(),
            })
        );
    }

    #[test]
    fn a_start_without_a_number_or_a_token_says_how_to_give_them() {
        assert_eq!(
            plan_start(&config(None, None), Some(""), Some("env")),
            Err("no phone number id: start the account with --phone-number-id (config.phoneNumberId) or set WHATSAPP_PHONE_NUMBER_ID".into())
        );
        assert_eq!(
            plan_start(&config(Some("111"), None), None, None),
            Err("no access token: start the account with --access-token (config.accessToken) or set the WHATSAPP_ACCESS_TOKEN secret".into())
        );
        assert_eq!(
            plan_start(&config(Some("+1 555 0100"), Some("t")), None, None),
            Err("\"+1 555 0100\" is not a phone number id: it is the number's id in the Meta app (digits, under WhatsApp → API Setup), not the phone number".into())
        );
    }

    #[test]
    fn the_status_never_shows_the_token() {
        let account = Account {
            started: true,
            phone_number_id: Some("106540352242922".into()),
            access_token: Some("EAAG-secret".into()),
            display_phone_number: Some("+1 555-078-3881".into()),
            verified_name: Some("gsv".into()),
            authenticated: true,
            error: None,
            last_activity: Some(5),
        };
        let status = account.status("default", true);
        assert_eq!(
            status,
            ChannelAccountStatus {
                account_id: "default".into(),
                connected: true,
                authenticated: true,
                mode: Some("webhook".into()),
                last_activity: Some(5),
                error: None,
                extra: Some(json!({"phoneNumberId": "106540352242922",
                    "displayPhoneNumber": "+1 555-078-3881", "verifiedName": "gsv", "hasToken": true})),
            }
        );
        assert!(!serde_json::to_string(&status).unwrap().contains("secret"));
        let stopped = Account {
            started: false,
            ..account
        };
        let s = stopped.status("default", true);
        assert_eq!((s.connected, s.error), (false, Some("not started".into())));
        assert_eq!(
            Account::default().token(Some("env")),
            Some("env".to_string())
        );
        assert_eq!(Account::default().token(Some("")), None);
    }
}
