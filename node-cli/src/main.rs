//! `gsv`: chat with the agent and manage the gateway from a terminal.

mod cli;
mod cmd;
mod config;
mod connection;
mod logs;
mod markdown;
mod node;
mod service;
#[cfg(test)]
mod test_support;
mod tools;
mod upload;

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cli::parse();
    // wss:// needs a TLS crypto provider; ring is the one compiled in.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cmd::run(cli)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
