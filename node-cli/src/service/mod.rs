//! `gsv node install|uninstall|start|stop|status|logs`: runs the node as a
//! per-user service — a systemd user unit on Linux ([`systemd`]), a launchd
//! agent on macOS ([`launchd`]) — and reads its log back.
#![allow(dead_code)]

#[cfg(test)]
mod fake;
mod launchd;
#[cfg(test)]
mod launchd_tests;
mod systemd;
#[cfg(test)]
mod systemd_tests;

use anyhow::{bail, Context, Result};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What the service runs: `<exe> node --foreground --id <id> --workspace
/// <workspace> <extra_args…>`, with `PATH` (and `GSV_CONFIG_DIR`) as given.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceSpec {
    pub id: String,
    pub workspace: PathBuf,
    pub exe: PathBuf,
    pub extra_args: Vec<String>,
    /// The installing shell's `PATH`: services otherwise get a bare one.
    pub path_env: String,
    pub config_dir: Option<PathBuf>,
}

impl ServiceSpec {
    /// The running binary, this shell's `PATH` and `$GSV_CONFIG_DIR` (if set).
    pub fn from_env(id: &str, workspace: &Path, extra_args: Vec<String>) -> Result<Self> {
        let exe = std::env::current_exe().context("cannot find the path of the gsv binary")?;
        Ok(Self {
            id: id.to_string(),
            workspace: workspace.to_path_buf(),
            exe,
            extra_args,
            path_env: std::env::var("PATH")
                .unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".to_string()),
            config_dir: std::env::var_os("GSV_CONFIG_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
        })
    }

    /// The arguments after the executable.
    fn args(&self) -> Vec<String> {
        let mut args = vec![
            "node".to_string(),
            "--foreground".to_string(),
            "--id".to_string(),
            self.id.clone(),
            "--workspace".to_string(),
            self.workspace.to_string_lossy().into_owned(),
        ];
        args.extend(self.extra_args.iter().cloned());
        args
    }

    /// Environment for the service; `GSV_HOME` keeps the log where
    /// `gsv node logs` (run from the same shell setup) looks for it.
    fn env(&self, gsv_home: Option<&Path>) -> Vec<(&'static str, String)> {
        let mut env = vec![("PATH", self.path_env.clone())];
        if let Some(dir) = &self.config_dir {
            env.push(("GSV_CONFIG_DIR", dir.to_string_lossy().into_owned()));
        }
        if let Some(dir) = gsv_home {
            env.push(("GSV_HOME", dir.to_string_lossy().into_owned()));
        }
        env
    }

    /// Relative paths made absolute: the service does not start where we are.
    fn absolutized(&self) -> Result<Self> {
        if self.id.trim().is_empty() {
            bail!("the node needs an id to install it as a service (set node.id or pass --id)");
        }
        let abs = |p: &Path| {
            std::path::absolute(p).with_context(|| format!("cannot make {} absolute", p.display()))
        };
        Ok(Self {
            workspace: abs(&self.workspace)?,
            exe: abs(&self.exe)?,
            ..self.clone()
        })
    }
}

/// Runs a program to completion; faked in tests.
pub trait Runner {
    fn run(&self, program: &str, args: &[&str]) -> io::Result<CmdOutput>;
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CmdOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

impl CmdOutput {
    /// The first line that says why it failed.
    fn reason(&self) -> String {
        self.stderr
            .lines()
            .chain(self.stdout.lines())
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("it failed without saying why")
            .to_string()
    }
}

pub struct SystemRunner;

impl Runner for SystemRunner {
    fn run(&self, program: &str, args: &[&str]) -> io::Result<CmdOutput> {
        let out = std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()?;
        Ok(CmdOutput {
            success: out.status.success(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}

/// The service manager of this OS.
trait Manager {
    fn install(&self, spec: &ServiceSpec) -> Result<String>;
    fn uninstall(&self) -> Result<String>;
    fn start(&self) -> Result<String>;
    fn stop(&self) -> Result<String>;
    fn status(&self) -> Result<String>;
}

fn manager(runner: &dyn Runner) -> Result<Box<dyn Manager + '_>> {
    #[cfg(target_os = "linux")]
    return Ok(Box::new(systemd::Systemd::from_env(runner)?));
    #[cfg(target_os = "macos")]
    return Ok(Box::new(launchd::Launchd::from_env(runner)?));
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = runner;
        bail!(
            "gsv can install the node as a service only on Linux (systemd) and macOS (launchd); \
             run `gsv node --foreground` instead, e.g. under your own supervisor"
        )
    }
}

/// Writes and starts the service; the text says what was done.
pub fn install(spec: &ServiceSpec) -> Result<String> {
    manager(&SystemRunner)?.install(spec)
}

/// Stops the service and removes it.
pub fn uninstall() -> Result<String> {
    manager(&SystemRunner)?.uninstall()
}

pub fn start() -> Result<String> {
    manager(&SystemRunner)?.start()
}

pub fn stop() -> Result<String> {
    manager(&SystemRunner)?.stop()
}

/// Installed?, running?, the service file and the log path.
pub fn status() -> Result<String> {
    manager(&SystemRunner)?.status()
}

/// Prints the last `lines` lines of the node log (1–5000); with `follow`,
/// then prints new lines until Ctrl-C.
pub async fn logs(lines: usize, follow: bool) -> Result<()> {
    let path = crate::logs::default_log_path();
    let lines = lines.clamp(1, 5000);
    let exists = path.exists() || crate::logs::rotated_path(&path, 1).exists();
    if !exists {
        eprintln!(
            "no node log yet at {} (the node writes it while it runs: `gsv node install` \
             or `gsv node --foreground`){}",
            path.display(),
            if follow { "; waiting for it…" } else { "" }
        );
        if !follow {
            return Ok(());
        }
    }
    let result = if follow {
        tokio::select! {
            result = crate::logs::follow(&path, lines, BlockingStdout) => result,
            _ = tokio::signal::ctrl_c() => Ok(()),
        }
    } else {
        crate::logs::tail_lines(&path, lines).and_then(|tail| {
            let mut out = io::stdout().lock();
            tail.iter().try_for_each(|line| writeln!(out, "{line}"))?;
            out.flush()
        })
    };
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.with_context(|| format!("cannot read the node log {}", path.display())),
    }
}

/// Stdout for `follow` (tokio's needs its `io-std` feature): writes are
/// small and a terminal or pipe takes them at once.
struct BlockingStdout;

impl tokio::io::AsyncWrite for BlockingStdout {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        std::task::Poll::Ready(io::stdout().write(buf))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::task::Poll::Ready(io::stdout().flush())
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// How `systemctl`/`launchctl` calls fail: missing tool, no user manager
/// (containers, SSH without a login session) or a failed command.
pub(crate) fn not_available(what: &str, reason: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{what} are not available here ({reason}); run `gsv node --foreground` instead, \
         e.g. under your own supervisor"
    )
}

/// Runs `program args`; a missing program is `not_available(what, …)`.
pub(crate) fn run(
    runner: &dyn Runner,
    what: &str,
    program: &str,
    args: &[&str],
) -> Result<CmdOutput> {
    match runner.run(program, args) {
        Ok(out) => Ok(out),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(not_available(
            what,
            &format!("`{program}` is not installed"),
        )),
        Err(e) => Err(not_available(what, &format!("cannot run `{program}`: {e}"))),
    }
}

/// Like `run`, but a non-zero exit is an error naming the command.
pub(crate) fn run_ok(
    runner: &dyn Runner,
    what: &str,
    program: &str,
    args: &[&str],
) -> Result<CmdOutput> {
    let out = run(runner, what, program, args)?;
    if !out.success {
        bail!("`{program} {}` failed: {}", args.join(" "), out.reason());
    }
    Ok(out)
}

/// Writes a service file (0644; the service manager must read it).
pub(crate) fn write_service_file(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

pub(crate) fn remove_service_file(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
    }
}

/// `$GSV_HOME` if set, for the service's environment.
fn gsv_home_env() -> Option<PathBuf> {
    std::env::var_os("GSV_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
}
