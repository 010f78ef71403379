//! Configs for running a channel Worker beside the gateway in one
//! workerd (`Workerd::start_configs`), on the prebuilt workers.

use crate::fake_discord::{FakeDiscord, FAKE_BOT_TOKEN};
use crate::harness::{gateway_dev_config, repo_root, Workerd};
use crate::ws::Client;
use gsv_protocol::channel_key::derive_channel_key;
use gsv_protocol::ResponseFrame;
use serde_json::json;
use std::time::Duration;

/// The Discord channel's wrangler.toml for a run on its prebuilt worker:
/// no [build], `main` absolute, the Discord URLs pointing at `api_base`
/// and `gateway_url` (empty: asked of `GET /gateway/bot`).
pub fn discord_channel_config(api_base: &str, gateway_url: &str) -> String {
    let dir = repo_root().join("channels").join("discord");
    let main = dir.join("build").join("index.js");
    assert!(
        main.exists(),
        "{} is missing: run the README test command (it builds the channel worker)",
        main.display()
    );
    let text = std::fs::read_to_string(dir.join("wrangler.toml")).unwrap();
    let mut out = String::new();
    let mut in_build = false;
    for line in text.lines() {
        if line.starts_with('[') {
            in_build = line == "[build]";
        }
        if in_build {
            continue;
        }
        let line = if line.starts_with("main = ") {
            format!("main = {:?}", main.display().to_string())
        } else if line.starts_with("DISCORD_API_BASE = ") {
            format!("DISCORD_API_BASE = {api_base:?}")
        } else if line.starts_with("DISCORD_GATEWAY_URL = ") {
            format!("DISCORD_GATEWAY_URL = {gateway_url:?}")
        } else {
            line.to_string()
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The gateway and the Discord channel in one workerd, the channel
/// talking to `discord`, both keyed from the gateway's auth `token`.
pub fn start_gateway_with_discord(discord: &FakeDiscord, token: &str) -> Workerd {
    Workerd::start_configs(
        &[
            // The gateway's own config binds CHANNEL_DISCORD.
            ("wrangler.toml", gateway_dev_config()),
            (
                "channel.toml",
                discord_channel_config(&discord.api_base(), ""),
            ),
        ],
        Some(format!(
            "GSV_AUTH_TOKEN={token}\nGSV_CHANNEL_KEY={}\n",
            derive_channel_key(token)
        )),
    )
}

/// Starts the fake's bot on the channel (`channel.start` with its token)
/// and waits until Discord said READY; the start's answer.
pub async fn start_bot(owner: &mut Client, discord: &FakeDiscord) -> ResponseFrame {
    let started = owner
        .request(
            "channel.start",
            json!({"channel": "discord", "accountId": "default",
                   "config": {"botToken": FAKE_BOT_TOKEN}}),
        )
        .await;
    assert!(started.ok, "channel.start: {started:?}");
    discord
        .wait_for(Duration::from_secs(30), |d| {
            d.gateway_log()
                .iter()
                .any(|r| r.frame["t"] == "READY")
                .then_some(())
        })
        .expect("READY");
    started
}
