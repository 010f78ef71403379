//! `gsv setup` (alias `gsv onboard`): a walk through what a working agent
//! needs — the gateway and its token, a model provider and its key (checked
//! by one tiny call before it is kept), a model, the user's time zone, a
//! chat app, a node on this machine — each step skippable, each value a
//! flag for scripts. The decisions are in `decide` (pure, unit-tested);
//! this file asks, calls and stores.

pub mod args;
mod decide;
#[cfg(test)]
mod tests;

pub use self::args::{SetupArgs, Step};
use self::decide::*;
use super::GatewayTarget;
use crate::cli::{ChannelCommand, NodeArgs, NodeCommand, NodeRunArgs};
use crate::config::{config_path, LocalConfig};
use crate::connection::{normalize_gateway_url, ConnectError, Connection};
use anyhow::{anyhow, bail, Context, Result};
use gsv_protocol::{
    method, ChannelsListResult, ConfigGetParams, ConfigGetResult, ConfigSetParams,
    ModelCheckParams, NoParams, ToolsListResult,
};
use serde_json::Value;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// A check is one tiny call; the gateway gives it 20 s, retries aside.
const CHECK_TIMEOUT: Duration = Duration::from_secs(120);

impl SetupArgs {
    fn skips(&self, step: Step) -> bool {
        self.skip.contains(&step)
            || (step == Step::Channel && self.no_channel)
            || (step == Step::Node && self.no_node)
    }
}

/// The secrets given by flags, read once at the start (standard input at most once).
#[derive(Default)]
struct Secrets {
    api_key: Option<String>,
    discord_bot_token: Option<String>,
    whatsapp_access_token: Option<String>,
    telegram_bot_token: Option<String>,
}

impl Secrets {
    fn read(args: &SetupArgs) -> Result<Self> {
        let mut stdin_used = None;
        let mut one = |value: &Option<String>, env: &Option<String>, flag: &'static str| {
            secret(value.as_deref(), env.as_deref(), flag, &mut stdin_used)
        };
        Ok(Self {
            api_key: one(&args.api_key, &args.api_key_env, "--api-key")?,
            discord_bot_token: one(
                &args.discord_bot_token,
                &args.discord_bot_token_env,
                "--discord-bot-token",
            )?,
            whatsapp_access_token: one(
                &args.whatsapp_access_token,
                &args.whatsapp_access_token_env,
                "--whatsapp-access-token",
            )?,
            telegram_bot_token: one(
                &args.telegram_bot_token,
                &args.telegram_bot_token_env,
                "--telegram-bot-token",
            )?,
        })
    }
}

/// A secret flag's value: itself, `-` for a line of standard input, or
/// the environment variable its `-env` twin names.
fn secret(
    value: Option<&str>,
    env: Option<&str>,
    flag: &'static str,
    stdin_used: &mut Option<&'static str>,
) -> Result<Option<String>> {
    let got = match (value, env) {
        (Some("-"), _) => {
            if let Some(other) = stdin_used.replace(flag) {
                bail!("{other} already reads standard input; give {flag} with {flag}-env VAR");
            }
            if std::io::stdin().is_terminal() {
                // Typed at a terminal: not echoed.
                Term.hidden(&format!("{flag} (hidden): "))?
            } else {
                let mut line = String::new();
                std::io::stdin()
                    .lock()
                    .read_line(&mut line)
                    .with_context(|| format!("cannot read {flag} from standard input"))?;
                line
            }
        }
        (Some(v), _) => v.to_string(),
        (None, Some(var)) => std::env::var(var)
            .map_err(|_| anyhow!("{flag}-env: the environment variable {var} is not set"))?,
        (None, None) => return Ok(None),
    };
    match got.trim() {
        "" => bail!("{flag} is empty"),
        s => Ok(Some(s.to_string())),
    }
}

/// The terminal: visible lines from standard input, hidden ones from the
/// terminal itself (no echo).
struct Term;

const STOPPED: &str = "setup stopped (end of input); what was stored so far stays";

impl Term {
    fn line(&self, prompt: &str) -> Result<String> {
        print!("{prompt}");
        std::io::stdout().flush()?;
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line)? == 0 {
            println!();
            bail!(STOPPED);
        }
        Ok(line.trim_end_matches(['\r', '\n']).to_string())
    }

    fn hidden(&self, prompt: &str) -> Result<String> {
        match rpassword::prompt_password(prompt) {
            Ok(s) => Ok(s),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                println!();
                bail!(STOPPED)
            }
            Err(e) => Err(e).context("cannot read from the terminal"),
        }
    }

    /// Asks until the answer is understood; `None` when skipped.
    fn ask<T>(&self, prompt: &str, parse: impl Fn(&str) -> Answer<T>) -> Result<Option<T>> {
        loop {
            match parse(&self.line(prompt)?) {
                Answer::Take(v) => return Ok(Some(v)),
                Answer::Skip => return Ok(None),
                Answer::Again(why) => println!("{why}"),
            }
        }
    }
}

pub async fn run(url: Option<String>, token: Option<String>, args: SetupArgs) -> Result<ExitCode> {
    let mode = Mode::new(
        args.non_interactive,
        args.yes,
        std::io::stdin().is_terminal(),
    );
    let secrets = Secrets::read(&args)?;
    let term = Term;
    let path = config_path();
    if mode.asks_defaults() {
        println!(
            "gsv setup: the gateway, a model and its key, your time zone, a chat app, a node.\n\
             Enter takes the value in [brackets], `skip` skips a step, Ctrl-C stops \
             (what was stored stays).\n"
        );
    }

    let (target, conn, gateway) = gateway_step(mode, &term, url, token, &path).await?;
    let current = read_current(&conn).await?;
    print!("{}", render_current(&current));

    let (model, model_works, provider) =
        model_step(mode, &term, &conn, &args, &secrets, &current).await?;
    let timezone = timezone_step(mode, &term, &conn, &args, &current).await?;
    let channel = channel_step(mode, &term, &target, &args, &secrets).await?;
    let node = node_step(mode, &term, &target, &args, &path).await?;

    let outcome = Outcome {
        gateway,
        model,
        model_works,
        timezone,
        channel,
        node,
        provider,
    };
    print!("{}", summary(&outcome));
    let failed = [&outcome.channel, &outcome.node]
        .iter()
        .any(|d| matches!(d, Done::Failed(_)));
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The `GSV_AUTH_TOKEN` of the `.dev.vars` beside the `wrangler.toml` of the
/// checkout this runs in, if any.
fn dev_vars_token() -> Option<String> {
    let cwd = std::env::current_dir().ok()?;
    cwd.ancestors()
        .find(|dir| dir.join("wrangler.toml").is_file() && dir.join(".dev.vars").is_file())
        .and_then(|dir| std::fs::read_to_string(dir.join(".dev.vars")).ok())
        .and_then(|text| decide::dev_vars_token(&text))
}

/// What to ask again after a failed connect.
fn retry_url(e: &ConnectError) -> bool {
    !matches!(e, ConnectError::TokenRejected { .. })
}

/// Step 1: connects (asking again while it fails) and keeps the URL and
/// token that worked in the local config.
async fn gateway_step(
    mode: Mode,
    term: &Term,
    url_flag: Option<String>,
    token_flag: Option<String>,
    path: &Path,
) -> Result<(GatewayTarget, Connection, Done)> {
    let local = LocalConfig::load_from(path).map_err(|e| {
        anyhow!(
            "{e}; fix or remove it first:\n{}",
            e.root_cause().to_string().trim_end()
        )
    })?;
    let url_flag = url_flag.filter(|u| !u.trim().is_empty());
    let token_flag = token_flag.filter(|t| !t.is_empty());
    let url_given = url_flag.is_some();
    let mut url = url_flag
        .or_else(|| local.get("gateway.url").map(str::to_string))
        .unwrap_or_else(|| LOCAL_GATEWAY_URL.to_string());
    let mut token = token_flag.or_else(|| local.gateway_token());
    if mode.asks_defaults() && !url_given {
        let answer = term.line(&format!(
            "Gateway URL (a deployed one is wss://gsv.<you>.workers.dev/ws) [{url}]: "
        ))?;
        if !answer.trim().is_empty() {
            url = answer.trim().to_string();
        }
    }
    // The checkout's local token goes to a local gateway only.
    let mut from_dev_vars = false;
    let (target, conn) = loop {
        if from_dev_vars && !is_loopback(&url) {
            (token, from_dev_vars) = (None, false);
        }
        if token.is_none() && is_loopback(&url) {
            token = dev_vars_token();
            from_dev_vars = token.is_some();
        }
        let target = GatewayTarget {
            url: normalize_gateway_url(&url),
            token: token.clone(),
        };
        let e = match target.connect().await {
            Ok(conn) => break (target, conn),
            Err(e) => e,
        };
        let ask_url = retry_url(&e);
        if !mode.may_ask() || (ask_url && !mode.asks_defaults()) {
            return Err(e.into());
        }
        match &e {
            ConnectError::TokenRejected { token_sent } => println!("{}", token_wanted(*token_sent)),
            e => println!("{e}"),
        }
        if ask_url {
            let answer = term.line(&format!("Gateway URL (Enter tries {url} again): "))?;
            if !answer.trim().is_empty() {
                url = answer.trim().to_string();
            }
        } else {
            let answer = term.hidden(
                "Gateway token (its GSV_AUTH_TOKEN: in .dev.vars locally; hidden, Enter stops): ",
            )?;
            match answer.trim() {
                "" => bail!("setup needs the gateway; stopped"),
                t => (token, from_dev_vars) = (Some(t.to_string()), false),
            }
        }
    };
    let token_note = match &target.token {
        Some(_) => "token set",
        None => "no token",
    };
    let stored_url = local.get("gateway.url");
    if stored_url == Some(target.url.as_str()) && local.gateway_token() == target.token {
        println!("Connected to {}.", target.url);
        let done = Done::Kept(format!("{} ({token_note})", target.url));
        return Ok((target, conn, done));
    }
    let mut saved = local.clone();
    saved.set("gateway.url", &target.url)?;
    match &target.token {
        Some(t) => saved.set("gateway.token", t)?,
        None => {
            saved.unset("gateway.token")?;
        }
    }
    saved.save_to(path)?;
    println!(
        "Connected to {}; saved it ({token_note}) in {}.",
        target.url,
        path.display()
    );
    let done = Done::Set(format!(
        "{} ({token_note}), in {}",
        target.url,
        path.display()
    ));
    Ok((target, conn, done))
}

async fn read_current(conn: &Connection) -> Result<Current> {
    let config = match conn
        .call::<method::ConfigGet>(&ConfigGetParams { path: None })
        .await
        .context("cannot read the gateway's config")?
    {
        ConfigGetResult::Whole { config } => config,
        ConfigGetResult::Path { value, .. } => value,
    };
    // Nice to show; setup goes on without them.
    let channels: Option<ChannelsListResult> =
        conn.call::<method::ChannelsList>(&NoParams).await.ok();
    let tools: Option<ToolsListResult> = conn.call::<method::ToolsList>(&NoParams).await.ok();
    Ok(Current::read(&config, channels.as_ref(), tools.as_ref()))
}

async fn config_set(conn: &Connection, path: &str, value: Value) -> Result<()> {
    let params = ConfigSetParams {
        path: path.to_string(),
        value,
    };
    conn.call::<method::ConfigSet>(&params)
        .await
        .with_context(|| format!("cannot set {path}"))?;
    Ok(())
}

/// Steps 2 and 3: the provider, its key and the model, checked by one call
/// (asked again while refused, in a terminal) before anything is stored.
async fn model_step(
    mode: Mode,
    term: &Term,
    conn: &Connection,
    args: &SetupArgs,
    secrets: &Secrets,
    current: &Current,
) -> Result<(Done, Option<bool>, String)> {
    let skipped = |why: &str| Ok((Done::Skipped(why.into()), None, current.provider.clone()));
    if args.skips(Step::Model) {
        return skipped("--skip model");
    }
    let mut custom = current.base_urls.clone();
    if let (Some(p), Some(_)) = (&args.provider, &args.base_url) {
        custom.push(p.trim().to_string());
    }
    let provider = match &args.provider {
        Some(p) => match parse_provider(p, "", &custom) {
            Answer::Take(p) => p,
            Answer::Skip => return skipped("--provider skip"),
            Answer::Again(why) => bail!("--provider: {why}"),
        },
        None if mode.asks_defaults() => {
            println!();
            print!("{}", render_providers(current, &current.provider));
            let prompt = format!("Provider [{}]: ", current.provider);
            match term.ask(&prompt, |a| parse_provider(a, &current.provider, &custom))? {
                Some(p) => p,
                None => return skipped("you skipped it"),
            }
        }
        None => current.provider.clone(),
    };
    if let Some(base_url) = &args.base_url {
        let path = format!("providers.{provider}.baseUrl");
        config_set(conn, &path, Value::String(base_url.clone())).await?;
        println!("Set {path} = {base_url}");
    }

    let named = decide::provider(&provider);
    let needs_key = named.is_some_and(|p| p.needs_key);
    // A provider of one's own may take a key; a named one without a key never does.
    let takes_key = named.is_none_or(|p| p.needs_key);
    let has_key = current.has_key(&provider);
    let ask_key = || -> Result<KeyAnswer> {
        let answer = term.hidden(&key_prompt(&provider, needs_key, has_key))?;
        Ok(parse_key(&answer, needs_key, has_key))
    };
    let mut key = secrets.api_key.clone();
    if key.is_none() && takes_key {
        if mode.asks_defaults() || (mode.may_ask() && needs_key && !has_key) {
            match ask_key()? {
                KeyAnswer::New(k) => key = Some(k),
                KeyAnswer::Keep => {}
                KeyAnswer::Skip => return skipped("no key given"),
            }
        } else if needs_key && !has_key {
            bail!(missing_key(&provider));
        }
    }

    let default = default_model(&provider, current);
    let model_prompt = |default: &str| match default {
        "" => "Model id: ".to_string(),
        d => format!("Model [{d}]: "),
    };
    let mut model = match &args.model {
        Some(m) => m.trim().to_string(),
        None if mode.asks_defaults() => {
            match term.ask(&model_prompt(&default), |a| parse_model(a, &default))? {
                Some(m) => m,
                None => return skipped("you skipped it"),
            }
        }
        None if !default.is_empty() => default.clone(),
        None => bail!("--model is needed: {provider} has no default model"),
    };

    loop {
        let params = ModelCheckParams {
            provider: Some(provider.clone()),
            model: Some(model.clone()),
            api_key: key.clone(),
        };
        println!("Checking {provider} with {model} (one tiny request)...");
        let r = conn
            .call_with_timeout::<method::ModelCheck>(&params, CHECK_TIMEOUT)
            .await
            .context("the model check failed")?;
        if r.ok {
            println!("{}", success_words(&r));
            let done = store_model(conn, current, &provider, &model, key.as_deref()).await?;
            return Ok((done, Some(true), provider));
        }
        let words = redact(&failure_words(&r), key.as_deref());
        if !mode.asks_defaults() {
            bail!("{words}\nNothing was stored for the model.");
        }
        println!("{words}");
        let not_stored = |why: &str| {
            let why = format!("{why}; nothing stored");
            Ok((Done::Skipped(why), Some(false), current.provider.clone()))
        };
        match redo_after(&r, takes_key) {
            Redo::Key => match ask_key()? {
                KeyAnswer::New(k) => key = Some(k),
                KeyAnswer::Keep => key = None,
                KeyAnswer::Skip => return not_stored("the key was not accepted"),
            },
            Redo::Model => {
                let default = default_model(&provider, &Current::default());
                match term.ask(&model_prompt(&default), |a| parse_model(a, &default))? {
                    Some(m) => model = m,
                    None => return not_stored("the model did not answer"),
                }
            }
            Redo::Again => {
                let again = term.line("Try again? [Y/n] ")?;
                if parse_yes_no(&again, true) != Some(true) {
                    return not_stored("the model did not answer");
                }
            }
        }
    }
}

/// Stores what passed the check: the new key, the provider, the model.
async fn store_model(
    conn: &Connection,
    current: &Current,
    provider: &str,
    model: &str,
    key: Option<&str>,
) -> Result<Done> {
    if let Some(k) = key {
        config_set(
            conn,
            &format!("apiKeys.{provider}"),
            Value::String(k.into()),
        )
        .await?;
        println!("Stored the key as apiKeys.{provider} (`gsv config get` shows it as ***).");
    }
    let same_provider = provider == current.provider;
    if !same_provider {
        config_set(conn, "model.provider", Value::String(provider.into())).await?;
    }
    if !same_provider || model != current.model {
        config_set(conn, "model.id", model_id_value(provider, model)).await?;
    }
    let key_note = match (key, decide::provider(provider)) {
        (Some(_), _) => "key stored",
        (None, Some(p)) if !p.needs_key => "no key needed",
        (None, _) => "key kept",
    };
    let text = format!("{provider} / {model} ({key_note})");
    Ok(
        match key.is_none() && same_provider && model == current.model {
            true => Done::Kept(text),
            false => Done::Set(text),
        },
    )
}

/// This system's zone: `TZ`, `/etc/timezone`, where `/etc/localtime` points.
fn system_zone() -> Option<String> {
    let tz = std::env::var("TZ").ok();
    let etc = std::fs::read_to_string("/etc/timezone").ok();
    let link = std::fs::read_link("/etc/localtime")
        .ok()
        .map(|p| p.to_string_lossy().into_owned());
    detect_zone(tz.as_deref(), etc.as_deref(), link.as_deref())
}

/// Whether this system knows the zone (any name that looks right, where
/// it has no zone files to ask).
fn zone_known(name: &str) -> bool {
    let dir = Path::new("/usr/share/zoneinfo");
    !dir.is_dir() || dir.join(name).is_file()
}

/// Step 4: `userTimezone`.
async fn timezone_step(
    mode: Mode,
    term: &Term,
    conn: &Connection,
    args: &SetupArgs,
    current: &Current,
) -> Result<Done> {
    if args.skips(Step::Timezone) {
        return Ok(Done::Skipped("--skip timezone".into()));
    }
    let (default, why) = default_zone(&current.timezone, system_zone().as_deref());
    let zone = match &args.timezone {
        Some(z) => match parse_zone(z, &default, &zone_known) {
            Answer::Take(z) => z,
            Answer::Skip => return Ok(Done::Skipped("--timezone skip".into())),
            Answer::Again(why) => bail!("--timezone: {why}"),
        },
        None if mode.asks_defaults() => {
            let prompt =
                format!("\nYour time zone (for reminders, daily resets) [{default}, {why}]: ");
            match term.ask(&prompt, |a| parse_zone(a, &default, &zone_known))? {
                Some(z) => z,
                None => return Ok(Done::Skipped("you skipped it".into())),
            }
        }
        None => default,
    };
    if zone == current.timezone {
        return Ok(Done::Kept(zone));
    }
    config_set(conn, "userTimezone", Value::String(zone.clone())).await?;
    println!("Set userTimezone = {zone}");
    Ok(Done::Set(zone))
}

/// Step 5: a chat app, started as `gsv channel start` starts it.
async fn channel_step(
    mode: Mode,
    term: &Term,
    target: &GatewayTarget,
    args: &SetupArgs,
    secrets: &Secrets,
) -> Result<Done> {
    if args.skips(Step::Channel) {
        return Ok(Done::Skipped("--no-channel".into()));
    }
    let whatsapp = args.whatsapp
        || args.whatsapp_phone_number_id.is_some()
        || secrets.whatsapp_access_token.is_some();
    let telegram = args.telegram || secrets.telegram_bot_token.is_some();
    let whatsapp_web = args.whatsapp_web || args.whatsapp_web_phone.is_some();
    let asked = [
        (secrets.discord_bot_token.is_some(), ChatApp::Discord),
        (whatsapp, ChatApp::WhatsApp),
        (telegram, ChatApp::Telegram),
        (whatsapp_web, ChatApp::WhatsAppWeb),
    ];
    let mut asked = asked.iter().filter(|(yes, _)| *yes).map(|(_, app)| *app);
    let app = match (asked.next(), asked.next()) {
        (Some(_), Some(_)) => {
            bail!("connect one chat app at a time: Discord, Telegram, WhatsApp or WhatsApp Web")
        }
        (Some(app), None) => app,
        (None, _) if mode.asks_defaults() => {
            let prompt = "\nConnect a chat app now? discord, telegram, whatsapp (a business \
                          number), whatsapp-web (your own number), or Enter for none: ";
            match term.ask(prompt, parse_app)? {
                Some(app) => app,
                None => return Ok(Done::Skipped("none chosen".into())),
            }
        }
        (None, _) => {
            return Ok(Done::Skipped(
                "none asked for (--discord-bot-token, --telegram-bot-token, --whatsapp, \
                 --whatsapp-web)"
                    .into(),
            ))
        }
    };
    let (mut bot_token, mut phone_number_id, mut access_token) = (
        match app {
            ChatApp::Telegram => secrets.telegram_bot_token.clone(),
            _ => secrets.discord_bot_token.clone(),
        },
        args.whatsapp_phone_number_id.clone(),
        secrets.whatsapp_access_token.clone(),
    );
    let optional = |s: String| Some(s.trim().to_string()).filter(|s| !s.is_empty());
    match app {
        ChatApp::Discord if bot_token.is_none() && mode.asks_defaults() => {
            bot_token = optional(term.hidden(
                "Discord bot token (hidden; Enter uses the channel Worker's DISCORD_BOT_TOKEN): ",
            )?);
        }
        ChatApp::Telegram if bot_token.is_none() && mode.asks_defaults() => {
            bot_token = optional(term.hidden(
                "Telegram bot token from @BotFather (hidden; Enter uses the channel Worker's \
                 TELEGRAM_BOT_TOKEN): ",
            )?);
        }
        ChatApp::WhatsApp if phone_number_id.is_none() && mode.asks_defaults() => {
            phone_number_id = optional(term.line(
                "WhatsApp phone number id (Enter uses the channel Worker's WHATSAPP_* secrets): ",
            )?);
            if phone_number_id.is_some() && access_token.is_none() {
                access_token = optional(term.hidden("Its access token (hidden): ")?);
            }
        }
        _ => {}
    }
    let channel = match app {
        ChatApp::Discord => "discord",
        ChatApp::WhatsApp => "whatsapp",
        ChatApp::Telegram => "telegram",
        ChatApp::WhatsAppWeb => "whatsapp-web",
    };
    let command = ChannelCommand::Start {
        channel: channel.to_string(),
        account: "default".to_string(),
        bot_token,
        phone_number_id,
        access_token,
        public_url: None,
    };
    let mut started = super::channel::run(target, command).await;
    if started.is_ok() && app == ChatApp::WhatsAppWeb {
        // Started is not linked yet: the QR code (or pairing code) is
        // drawn until the phone links the number, as `gsv channel login`.
        println!(
            "Link the number: WhatsApp on its phone → Settings → Linked devices → Link a device."
        );
        let login = ChannelCommand::Login {
            channel: channel.to_string(),
            account: "default".to_string(),
            force: false,
            phone: args.whatsapp_web_phone.clone(),
            timeout: 300,
        };
        started = super::channel::run(target, login).await;
    }
    match started {
        Ok(()) => Ok(Done::Set(format!(
            "{channel}/default {} (people who write to it get a pairing code: \
             `gsv pair list`, `gsv pair approve CODE`)",
            match app {
                ChatApp::WhatsAppWeb => "linked",
                _ => "started",
            }
        ))),
        Err(e) if mode.asks_defaults() => {
            println!("Could not start {channel}: {e:#}");
            Ok(Done::Failed(format!("{channel}: {e:#}")))
        }
        Err(e) => Err(e.context(format!("could not start {channel}"))),
    }
}

/// Step 6: a node on this machine, installed as `gsv node install` does.
async fn node_step(
    mode: Mode,
    term: &Term,
    target: &GatewayTarget,
    args: &SetupArgs,
    path: &Path,
) -> Result<Done> {
    if args.skips(Step::Node) {
        return Ok(Done::Skipped("--no-node".into()));
    }
    // Reread: step 1 may have stored the gateway, which the service uses.
    let local = LocalConfig::load_or_default(path);
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let workspace_default = local
        .get("node.workspace")
        .map(PathBuf::from)
        .unwrap_or(cwd);
    let mut workspace = args.node_workspace.clone();
    let wanted = match args.node {
        true => true,
        false if mode.asks_defaults() => {
            let prompt = format!(
                "\nRun a node on this machine, so the agent can use its shell and the files in \
                 {}? [y/N] ",
                workspace_default.display()
            );
            let yes = loop {
                match parse_yes_no(&term.line(&prompt)?, false) {
                    Some(yes) => break yes,
                    None => println!("Type y or n."),
                }
            };
            if yes && workspace.is_none() {
                let answer = term.line(&format!(
                    "The directory its tools work in [{}]: ",
                    workspace_default.display()
                ))?;
                workspace = Some(match answer.trim() {
                    "" => workspace_default.clone(),
                    dir => PathBuf::from(dir),
                });
            }
            yes
        }
        false => false,
    };
    if !wanted {
        return Ok(Done::Skipped("not asked for (--node)".into()));
    }
    let run = NodeRunArgs {
        foreground: false,
        id: args.node_id.clone(),
        workspace,
        allow_outside_workspace: false,
    };
    let node_args = NodeArgs {
        command: Some(NodeCommand::Install(run.clone())),
        run,
    };
    match super::node::run(target, node_args, &local).await {
        Ok(()) => {
            let local = LocalConfig::load_or_default(path);
            let id = local.get("node.id").unwrap_or("node");
            let dir = local.get("node.workspace").unwrap_or_default();
            Ok(Done::Set(format!("{id} in {dir}, as a service")))
        }
        Err(e) if mode.asks_defaults() => {
            println!("Could not install the node: {e:#}");
            Ok(Done::Failed(format!(
                "{e:#} (`gsv node --foreground` runs one in a terminal)"
            )))
        }
        Err(e) => Err(e.context("could not install the node")),
    }
}
