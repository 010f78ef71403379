//! Configs for running a channel Worker beside the gateway in one
//! workerd (`Workerd::start_configs`), on the prebuilt workers.

use crate::fake_discord::{FakeDiscord, FAKE_BOT_TOKEN};
use crate::fake_telegram::{self, FakeTelegram};
use crate::fake_whatsapp::{self, FakeWhatsApp};
use crate::fake_whatsapp_web::FakeWhatsAppWeb;
use crate::harness::{gateway_dev_config, only_services, repo_root, require_web_ui, Workerd};
use crate::ws::Client;
use gsv_protocol::channel_key::derive_channel_key;
use gsv_protocol::ResponseFrame;
use serde_json::json;
use std::time::Duration;

/// The Discord channel's wrangler.toml for a run on its prebuilt worker:
/// no [build], `main` absolute, the Discord URLs pointing at `api_base`
/// and `gateway_url` (empty: asked of `GET /gateway/bot`).
pub fn discord_channel_config(api_base: &str, gateway_url: &str) -> String {
    channel_config(
        "discord",
        &[
            ("DISCORD_API_BASE", api_base),
            ("DISCORD_GATEWAY_URL", gateway_url),
        ],
    )
}

/// The WhatsApp channel's wrangler.toml for a run on its prebuilt worker,
/// the Graph API at `api_base` and the fake's number as the default.
pub fn whatsapp_channel_config(api_base: &str) -> String {
    channel_config(
        "whatsapp",
        &[
            ("WHATSAPP_API_BASE", api_base),
            ("WHATSAPP_PHONE_NUMBER_ID", fake_whatsapp::PHONE_NUMBER_ID),
        ],
    )
}

/// The Telegram channel's wrangler.toml for a run on its prebuilt worker:
/// the Bot API at `api_base`, `public_url` its public origin (empty: the
/// accounts long-poll), `getUpdates` held `poll_timeout` seconds.
pub fn telegram_channel_config(api_base: &str, public_url: &str, poll_timeout: u32) -> String {
    channel_config(
        "telegram",
        &[
            ("TELEGRAM_API_BASE", api_base),
            ("TELEGRAM_PUBLIC_URL", public_url),
            ("TELEGRAM_POLL_TIMEOUT", &poll_timeout.to_string()),
        ],
    )
}

/// The WhatsApp Web channel's wrangler.toml for a run on its test build
/// (`build-test/`, which trusts the double's certificate chain), its
/// socket at `ws_url`; `deployable` runs the deployable build instead.
pub fn whatsapp_web_channel_config(ws_url: &str, deployable: bool) -> String {
    channel_config_in(
        "whatsapp-web",
        if deployable { "build" } else { "build-test" },
        &[
            ("WHATSAPP_WEB_URL", ws_url),
            ("WHATSAPP_WEB_VERSION", WHATSAPP_WEB_VERSION),
            (
                "WHATSAPP_WEB_LOG",
                &std::env::var("WHATSAPP_WEB_LOG").unwrap_or_else(|_| "warn".into()),
            ),
        ],
    )
}

/// The version the channel claims in tests (unset, it would ask
/// web.whatsapp.com).
pub const WHATSAPP_WEB_VERSION: &str = "2.3000.1027934701";

/// `channels/{name}/wrangler.toml` without [build], `main` absolute, the
/// `vars` given set.
fn channel_config(name: &str, vars: &[(&str, &str)]) -> String {
    channel_config_in(name, "build", vars)
}

/// As [`channel_config`], on the build in `build_dir`.
fn channel_config_in(name: &str, build_dir: &str, vars: &[(&str, &str)]) -> String {
    let dir = repo_root().join("channels").join(name);
    let main = dir.join(build_dir).join("index.js");
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
        let var = vars
            .iter()
            .find(|(k, _)| line.starts_with(&format!("{k} = ")));
        let line = if line.starts_with("main = ") {
            format!("main = {:?}", main.display().to_string())
        } else if let Some((k, v)) = var {
            format!("{k} = {v:?}")
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
            (
                "wrangler.toml",
                only_services(&gateway_dev_config(), &["CHANNEL_DISCORD"]),
            ),
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

/// The WhatsApp channel's secrets for a run against the fake: the Meta
/// app's, the number's token, and the channel key.
pub fn whatsapp_secrets(channel_key: &str) -> String {
    format!(
        "GSV_CHANNEL_KEY={channel_key}\nWHATSAPP_APP_SECRET={}\nWHATSAPP_VERIFY_TOKEN={}\nWHATSAPP_ACCESS_TOKEN={}\n",
        fake_whatsapp::APP_SECRET,
        fake_whatsapp::VERIFY_TOKEN,
        fake_whatsapp::ACCESS_TOKEN
    )
}

/// The gateway and the WhatsApp channel in one workerd, the channel's
/// webhook on a port of its own and given to the fake, both keyed from
/// the gateway's auth `token`.
pub fn start_gateway_with_whatsapp(wa: &FakeWhatsApp, token: &str) -> Workerd {
    let workerd = Workerd::start_configs_exposing(
        &[
            (
                "wrangler.toml",
                only_services(&gateway_dev_config(), &["CHANNEL_WHATSAPP"]),
            ),
            ("channel.toml", whatsapp_channel_config(&wa.api_base())),
        ],
        Some(format!(
            "GSV_AUTH_TOKEN={token}\n{}",
            whatsapp_secrets(&derive_channel_key(token))
        )),
        &["gsv-channel-whatsapp"],
    );
    wa.set_webhook_url(&format!(
        "{}/webhook",
        workerd.exposed_url("gsv-channel-whatsapp")
    ));
    workerd
}

/// `channel.start whatsapp` for the default account (the Worker's number
/// and token); the start's answer.
pub async fn start_number(owner: &mut Client) -> ResponseFrame {
    let started = owner
        .request(
            "channel.start",
            json!({"channel": "whatsapp", "accountId": "default"}),
        )
        .await;
    assert!(started.ok, "channel.start: {started:?}");
    started
}

/// The gateway and the WhatsApp Web channel (its test build, or the
/// deployable one) in one workerd, the channel's socket going to `wa`,
/// both keyed from the gateway's auth `token`.
pub fn start_gateway_with_whatsapp_web(
    wa: &FakeWhatsAppWeb,
    token: &str,
    deployable: bool,
) -> Workerd {
    let mut gateway = only_services(&gateway_dev_config(), &["CHANNEL_WHATSAPP_WEB"]);
    if !gateway.contains("binding = \"CHANNEL_WHATSAPP_WEB\"") {
        gateway.push_str(
            "\n[[services]]\nbinding = \"CHANNEL_WHATSAPP_WEB\"\nservice = \"gsv-channel-whatsapp-web\"\n",
        );
    }
    Workerd::start_configs(
        &[
            ("wrangler.toml", gateway),
            (
                "channel.toml",
                whatsapp_web_channel_config(&wa.ws_url(), deployable),
            ),
        ],
        Some(format!(
            "GSV_AUTH_TOKEN={token}\nGSV_CHANNEL_KEY={}\nGSV_TEST_CLOCK=1\n",
            derive_channel_key(token)
        )),
    )
}

/// The gateway with its web UI at `/` (the dev config's `[assets]`, which
/// the one Miniflare of several configs serves as wrangler does) and the
/// WhatsApp Web channel's test build in one workerd, as `scripts/dev.sh`
/// runs them; the channel's socket goes to `wa`, both keyed from `token`.
pub fn start_gateway_with_whatsapp_web_and_ui(wa: &FakeWhatsAppWeb, token: &str) -> Workerd {
    require_web_ui();
    let mut gateway = only_services(&gateway_dev_config(), &["CHANNEL_WHATSAPP_WEB"]);
    assert!(
        gateway.contains("\n[assets]\n"),
        "the gateway's dev config serves no web UI:\n{gateway}"
    );
    if !gateway.contains("binding = \"CHANNEL_WHATSAPP_WEB\"") {
        gateway.push_str(
            "\n[[services]]\nbinding = \"CHANNEL_WHATSAPP_WEB\"\nservice = \"gsv-channel-whatsapp-web\"\n",
        );
    }
    let mut workerd = Workerd::start_configs(
        &[
            ("wrangler.toml", gateway),
            (
                "channel.toml",
                whatsapp_web_channel_config(&wa.ws_url(), false),
            ),
        ],
        Some(format!(
            "GSV_AUTH_TOKEN={token}\nGSV_CHANNEL_KEY={}\n",
            derive_channel_key(token)
        )),
    );
    workerd.token = Some(token.to_string());
    workerd
}

/// The gateway and the Telegram channel in one workerd, the channel on a
/// port of its own too (Telegram's webhook calls it there), talking to
/// `tg` and holding `getUpdates` 1 s, both keyed from the gateway's auth
/// `token`. The Worker's public URL is given at `channel.start`
/// ([`start_telegram_bot`]), where its port is known.
pub fn start_gateway_with_telegram(tg: &FakeTelegram, token: &str) -> Workerd {
    let mut gateway = only_services(&gateway_dev_config(), &["CHANNEL_TELEGRAM"]);
    if !gateway.contains("binding = \"CHANNEL_TELEGRAM\"") {
        gateway.push_str(
            "\n[[services]]\nbinding = \"CHANNEL_TELEGRAM\"\nservice = \"gsv-channel-telegram\"\n",
        );
    }
    Workerd::start_configs_exposing(
        &[
            ("wrangler.toml", gateway),
            (
                "channel.toml",
                telegram_channel_config(&tg.api_base(), "", 1),
            ),
        ],
        Some(format!(
            "GSV_AUTH_TOKEN={token}\nGSV_CHANNEL_KEY={}\n",
            derive_channel_key(token)
        )),
        &["gsv-channel-telegram"],
    )
}

/// `channel.start telegram` for the default account with the fake's bot
/// token; with `public_url` the Worker takes updates by webhook there
/// (waits until Telegram has it), else it long-polls (waits for its first
/// `getUpdates`). The start's answer.
pub async fn start_telegram_bot(
    owner: &mut Client,
    tg: &FakeTelegram,
    public_url: Option<&str>,
) -> ResponseFrame {
    let mut config = json!({"botToken": fake_telegram::BOT_TOKEN});
    if let Some(url) = public_url {
        config["publicUrl"] = json!(url);
    }
    let started = owner
        .request(
            "channel.start",
            json!({"channel": "telegram", "accountId": "default", "config": config}),
        )
        .await;
    assert!(started.ok, "channel.start: {started:?}");
    let ready = tg.wait_for(Duration::from_secs(30), |t| match public_url {
        Some(_) => t.webhook().map(|_| ()),
        None => t
            .calls_of("getUpdates")
            .iter()
            .any(|c| c.status == 200)
            .then_some(()),
    });
    assert!(
        ready.is_some(),
        "the bot never took updates: {:#?}",
        tg.calls()
    );
    started
}
