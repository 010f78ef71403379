//! One module per command group; `run` picks the one the user asked for.

mod channel;
pub mod chat;
mod chat_render;
mod completions;
mod config;
pub mod cron;
pub mod doctor;
mod local_config;
mod logs;
pub mod memory;
mod node;
mod session;
pub mod setup;
mod skills;
mod tools;
pub mod trust;
pub mod usage;
mod workspace;

use crate::cli::{Cli, Command};
use crate::config::{config_path, LocalConfig};
use crate::connection::{normalize_gateway_url, ConnectError, Connection};
use std::process::ExitCode;

/// Where the gateway is and how to log in: flags/env first, then the local config.
pub struct GatewayTarget {
    pub url: String,
    pub token: Option<String>,
}

impl GatewayTarget {
    pub fn resolve(url: Option<String>, token: Option<String>, config: &LocalConfig) -> Self {
        let url = url
            .filter(|u| !u.trim().is_empty())
            .unwrap_or_else(|| config.gateway_url());
        // An empty GSV_TOKEN means "no token", not "the empty token".
        let token = token
            .filter(|t| !t.is_empty())
            .or_else(|| config.gateway_token());
        Self {
            url: normalize_gateway_url(&url),
            token,
        }
    }

    pub async fn connect(&self) -> Result<Connection, ConnectError> {
        Connection::connect(&self.url, self.token.as_deref()).await
    }
}

/// Calls `M` and prints its answer: whole, as the gateway sent it, with
/// `--json` (fields this version does not know included), else as
/// `render` shows it.
async fn print_answer<M: gsv_protocol::Method>(
    conn: &Connection,
    params: &M::Params,
    json: bool,
    render: impl FnOnce(&M::Result) -> String,
) -> anyhow::Result<()> {
    if json {
        let answer = conn
            .call_value::<M>(params, crate::connection::DEFAULT_REQUEST_TIMEOUT)
            .await?;
        println!("{}", serde_json::to_string_pretty(&answer)?);
    } else {
        print!("{}", render(&conn.call::<M>(params).await?));
    }
    Ok(())
}

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let config = || LocalConfig::load_or_default(&config_path());
    match cli.command {
        Command::LocalConfig(command) => local_config::run(command).map(|()| ExitCode::SUCCESS),
        Command::Setup(args) => setup::run(cli.url, cli.token, args).await,
        Command::Completions { shell } => {
            completions::write(shell, &mut std::io::stdout())?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Config(command) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            config::run(&target, command)
                .await
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Chat(args) => {
            let config = config();
            let target = GatewayTarget::resolve(cli.url, cli.token, &config);
            let session = args.session.unwrap_or_else(|| config.default_session_key());
            let markdown = crate::markdown::Mode::detect(args.raw);
            chat::run(&target, &session, args.message, &args.attach, markdown).await
        }
        Command::Session(command) => {
            let config = config();
            let target = GatewayTarget::resolve(cli.url, cli.token, &config);
            session::run(&target, command, &config.default_session_key())
                .await
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Skills(command) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            skills::run(&target, command)
                .await
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Node(args) => {
            let config = config();
            let target = GatewayTarget::resolve(cli.url, cli.token, &config);
            node::run(&target, args, &config)
                .await
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Tools(command) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            tools::run(&target, command)
                .await
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Logs(args) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            logs::run(&target, args).await.map(|()| ExitCode::SUCCESS)
        }
        Command::Channel(command) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            channel::run(&target, command)
                .await
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Pair(command) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            channel::pair(&target, command)
                .await
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Cron(command) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            cron::run(&target, *command)
                .await
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Approvals(command) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            trust::approvals(&target, command)
                .await
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Trust(command) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            trust::run(&target, command)
                .await
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Doctor(args) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            doctor::run(&target, args).await
        }
        Command::Usage(args) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            usage::run(&target, args).await.map(|()| ExitCode::SUCCESS)
        }
        Command::Memory(command) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            memory::run(&target, command)
                .await
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Heartbeat(command) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            cron::heartbeat(&target, command)
                .await
                .map(|()| ExitCode::SUCCESS)
        }
        Command::Workspace(args) => {
            let target = GatewayTarget::resolve(cli.url, cli.token, &config());
            workspace::run(&target, args)
                .await
                .map(|()| ExitCode::SUCCESS)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_config_file() {
        let mut config = LocalConfig::default();
        config
            .set("gateway.url", "https://gsv.me.workers.dev")
            .unwrap();
        config.set("gateway.token", "from-file").unwrap();

        let from_file = GatewayTarget::resolve(None, Some(String::new()), &config);
        assert_eq!(
            (from_file.url.as_str(), from_file.token.as_deref()),
            ("wss://gsv.me.workers.dev/ws", Some("from-file"))
        );
        let from_flags =
            GatewayTarget::resolve(Some("ws://h:1/ws".into()), Some("flag".into()), &config);
        assert_eq!(
            (from_flags.url.as_str(), from_flags.token.as_deref()),
            ("ws://h:1/ws", Some("flag"))
        );
        let defaults = GatewayTarget::resolve(None, None, &LocalConfig::default());
        assert_eq!(
            (defaults.url.as_str(), defaults.token),
            ("ws://localhost:8787/ws", None)
        );
    }
}
