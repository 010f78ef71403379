//! One account: a bot of @BotFather's, started with its token. The token
//! given at `channel.start` is kept (and never shown); without one, the
//! Worker's `TELEGRAM_BOT_TOKEN` secret serves. It takes its updates by
//! webhook when the Worker has a public URL, else by long polling.

use crate::webhook::encode_segment;
use gsv_channel_worker::status::Health;
use gsv_protocol::channels::{ChannelAccountConfig, ChannelAccountStatus};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// How updates reach the account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Telegram posts them to `/webhook/{account}`.
    Webhook,
    /// The account's alarm asks `getUpdates`.
    Polling,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Self::Webhook => "webhook",
            Self::Polling => "polling",
        }
    }
}

/// What the account's object keeps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Account {
    /// Taking updates and sending.
    pub started: bool,
    /// Given at start; never shown.
    pub bot_token: Option<String>,
    pub bot_id: Option<i64>,
    pub bot_username: Option<String>,
    /// False: privacy mode is on (in groups the bot sees only what
    /// addresses it).
    pub can_read_all_group_messages: Option<bool>,
    pub mode: Option<Mode>,
    pub webhook_url: Option<String>,
    /// What Telegram sends in `X-Telegram-Bot-Api-Secret-Token`; never shown.
    pub webhook_secret: Option<String>,
    /// The next `getUpdates` offset (the last update's id + 1).
    pub offset: Option<i64>,
    /// Polls failed in a row (they back off).
    pub poll_failures: u32,
    /// Telegram took the token when last asked.
    pub authenticated: bool,
    /// Why it is not working, in plain words.
    pub error: Option<String>,
    /// Milliseconds since the epoch: the last message in or out.
    pub last_activity: Option<i64>,
    /// Edits of earlier messages, not run again.
    pub edited_ignored: u64,
}

/// What a start settles: the token and where updates go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Start {
    /// The token given at start (kept), if any.
    pub given_token: Option<String>,
    pub token: String,
    /// The webhook's URL; `None`: long polling.
    pub webhook_url: Option<String>,
}

/// The token and mode a start uses: the config's token, else the
/// Worker's `TELEGRAM_BOT_TOKEN`; a webhook at `config.publicUrl`, else
/// at the Worker's `TELEGRAM_PUBLIC_URL`, else long polling.
pub fn plan_start(
    account_id: &str,
    config: &ChannelAccountConfig,
    env_token: Option<&str>,
    env_public_url: Option<&str>,
) -> Result<Start, String> {
    fn given(v: Option<&str>) -> Option<&str> {
        v.map(str::trim).filter(|v| !v.is_empty())
    }
    let given_token = given(config.bot_token.as_deref()).map(str::to_string);
    let token = given_token
        .clone()
        .or(given(env_token).map(str::to_string))
        .ok_or(
            "no bot token: start the account with --bot-token (config.botToken, from \
             @BotFather) or set the TELEGRAM_BOT_TOKEN secret",
        )?;
    // The token goes into every URL: it must not be able to change the path.
    let shaped = token.contains(':')
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b':' || b == b'_' || b == b'-');
    if !shaped {
        return Err(
            "that is not a Telegram bot token: @BotFather gives tokens like 123456789:AAF…".into(),
        );
    }
    let public_url =
        given(config.extra.get("publicUrl").and_then(|v| v.as_str())).or(given(env_public_url));
    let webhook_url = match public_url {
        Some(url) if url.starts_with("https://") || url.starts_with("http://") => Some(format!(
            "{}/webhook/{}",
            url.trim_end_matches('/'),
            encode_segment(account_id)
        )),
        Some(url) => {
            return Err(format!(
                "{url:?} is not a public URL: give the Worker's origin, like \
                 https://gsv-channel-telegram.<subdomain>.workers.dev"
            ))
        }
        None => None,
    };
    Ok(Start {
        given_token,
        token,
        webhook_url,
    })
}

/// A start refused because Telegram refused the token, in plain words.
pub fn token_refused(description: &str) -> String {
    format!(
        "Telegram refused the bot token ({description}): copy it again from @BotFather \
         (/mybots → the bot → API Token), or /revoke it there for a new one"
    )
}

impl Account {
    /// The token calls use: the one given at start, else the secret's.
    pub fn token(&self, env_token: Option<&str>) -> Option<String> {
        self.bot_token
            .clone()
            .or(env_token.filter(|t| !t.is_empty()).map(str::to_string))
    }

    /// The account as the gateway sees it; never carries the token or the
    /// webhook's secret.
    pub fn status(&self, account_id: &str, has_token: bool) -> ChannelAccountStatus {
        let health = Health {
            started: self.started,
            authenticated: self.authenticated,
            error: self.error.as_deref(),
        };
        health.status(
            account_id,
            self.mode.map(|m| m.name().to_string()),
            self.last_activity,
            json!({
                "botId": self.bot_id,
                "botUsername": self.bot_username,
                "hasToken": has_token,
                "webhookUrl": self.webhook_url,
                "privacyMode": self.can_read_all_group_messages.map(|all| !all),
                "editedIgnored": self.edited_ignored,
            }),
        )
    }
}

#[cfg(test)]
#[path = "account_tests.rs"]
mod tests;
