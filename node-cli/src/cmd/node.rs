//! `gsv node …`: run the node in the foreground, or manage it as a user
//! service that runs `gsv node --foreground` with the same settings.

use super::GatewayTarget;
use crate::cli::{NodeArgs, NodeCommand, NodeRunArgs};
use crate::config::{config_path, LocalConfig};
use crate::logs::NodeLog;
use crate::node::{self, NodeOptions};
use crate::service::{self, ServiceSpec};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

pub async fn run(target: &GatewayTarget, args: NodeArgs, config: &LocalConfig) -> Result<()> {
    match args.command {
        None if args.run.foreground => foreground(target, &args.run, config).await,
        None => install(&args.run, config),
        Some(NodeCommand::Install(run)) => install(&run, config),
        Some(NodeCommand::Uninstall) => print(service::uninstall()),
        Some(NodeCommand::Start) => print(service::start()),
        Some(NodeCommand::Stop) => print(service::stop()),
        Some(NodeCommand::Status) => print(service::status()),
        Some(NodeCommand::Logs { lines, follow }) => service::logs(lines, follow).await,
    }
}

fn print(result: Result<String>) -> Result<()> {
    println!("{}", result?);
    Ok(())
}

/// The node id and workspace: flags, then the local config, then defaults.
pub fn resolve(run: &NodeRunArgs, config: &LocalConfig) -> Result<(String, PathBuf)> {
    let id = run
        .id
        .clone()
        .or_else(|| config.get("node.id").map(String::from))
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(default_node_id);
    let workspace = match run.workspace.clone() {
        Some(w) => w,
        None => match config.get("node.workspace").filter(|w| !w.is_empty()) {
            Some(w) => expand_home(w),
            None => std::env::current_dir().context("cannot read the current directory")?,
        },
    };
    let workspace = std::fs::canonicalize(&workspace)
        .with_context(|| format!("workspace {} does not exist", workspace.display()))?;
    Ok((id, workspace))
}

async fn foreground(target: &GatewayTarget, run: &NodeRunArgs, config: &LocalConfig) -> Result<()> {
    let (id, workspace) = resolve(run, config)?;
    // Under a service manager stderr is not a terminal: the log file is enough.
    let echo = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let log = NodeLog::open_default(echo).context("cannot open the node log")?;
    if !run.allow_outside_workspace {
        eprintln!("node {id}: tools work in {}", workspace.display());
    } else {
        eprintln!(
            "node {id}: tools start in {} and may reach any path (--allow-outside-workspace)",
            workspace.display()
        );
    }
    let opts = NodeOptions {
        url: target.url.clone(),
        token: target.token.clone(),
        id,
        workspace,
        confine: !run.allow_outside_workspace,
    };
    node::run(opts, log).await
}

/// Installs the service; the id and workspace are remembered in the local
/// config so `gsv node` commands and the service agree on them.
fn install(run: &NodeRunArgs, config: &LocalConfig) -> Result<()> {
    let (id, workspace) = resolve(run, config)?;
    let mut saved = config.clone();
    saved.set("node.id", &id)?;
    saved.set("node.workspace", &workspace.to_string_lossy())?;
    saved.save_to(&config_path())?;
    let extra = match run.allow_outside_workspace {
        true => vec!["--allow-outside-workspace".to_string()],
        false => vec![],
    };
    let spec = ServiceSpec::from_env(&id, &workspace, extra)?;
    print(service::install(&spec))
}

/// `node-<hostname>`, with characters a node id may not hold replaced.
fn default_node_id() -> String {
    let host = hostname();
    let clean: String = host
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '.' => c,
            _ => '-',
        })
        .collect();
    format!("node-{}", clean.trim_matches('-'))
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "local".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).into_owned();
    if name.is_empty() {
        "local".into()
    } else {
        name
    }
}

fn expand_home(path: &str) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => dirs::home_dir().map_or_else(|| PathBuf::from(path), |h| h.join(rest)),
        None => Path::new(path).to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(id: Option<&str>, workspace: Option<&Path>) -> NodeRunArgs {
        NodeRunArgs {
            foreground: true,
            id: id.map(String::from),
            workspace: workspace.map(Path::to_path_buf),
            allow_outside_workspace: false,
        }
    }

    #[test]
    fn flags_win_over_config_and_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let canonical = std::fs::canonicalize(dir.path()).unwrap();
        let mut config = LocalConfig::default();
        config.set("node.id", "from-config").unwrap();
        config
            .set("node.workspace", &canonical.to_string_lossy())
            .unwrap();
        assert_eq!(
            resolve(&args(Some("flag"), None), &config).unwrap(),
            ("flag".to_string(), canonical.clone())
        );
        assert_eq!(
            resolve(&args(None, None), &config).unwrap(),
            ("from-config".to_string(), canonical)
        );
        let (id, _) = resolve(&args(None, Some(dir.path())), &LocalConfig::default()).unwrap();
        assert_eq!(id, default_node_id());
        assert!(id.starts_with("node-") && id.len() > 5, "{id}");
    }

    #[test]
    fn missing_workspace_is_an_error() {
        let err = resolve(
            &args(None, Some(Path::new("/no/such/dir"))),
            &LocalConfig::default(),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "workspace /no/such/dir does not exist");
    }
}
