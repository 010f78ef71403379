//! Configs for running a channel Worker beside the gateway in one
//! workerd (`Workerd::start_configs`), on the prebuilt workers.

use crate::harness::{gateway_dev_config, repo_root};

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

/// The gateway's dev config (it binds `CHANNEL_DISCORD` itself).
pub fn gateway_config() -> String {
    gateway_dev_config()
}
