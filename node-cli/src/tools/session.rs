//! Shell sessions: one per Bash call. A session runs `shell -c command` in
//! its own process group with stdout and stderr on one pipe (so output keeps
//! its arrival order), enforces the timeout on the whole group, and keeps
//! the tail of the output. Backgrounded sessions live in [`Sessions`] for
//! the Process tool and report their end as an exec event.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use gsv_protocol::{ExecEventKind, NodeExecEventParams};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{mpsc, watch};

use super::now_ms;
pub use super::output::{OutputBuffer, OUTPUT_CAP, TAIL_CAP};

/// How long a finished background session stays listed.
const RETAIN_MS: i64 = 30 * 60 * 1000;
/// Between SIGTERM and SIGKILL on timeout.
const KILL_GRACE: Duration = Duration::from_millis(250);
/// How long output is still read after the shell exits while something it
/// started keeps the pipe open.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(200);

/// The program and leading arguments that run a command string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shell {
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl Shell {
    /// `$SHELL -lc` (a login shell) when `$SHELL` is an absolute path to an
    /// executable file, else `/bin/sh -c`.
    pub fn from_env() -> Shell {
        Self::from_shell_var(std::env::var_os("SHELL").as_deref().map(Path::new))
    }

    fn from_shell_var(shell: Option<&Path>) -> Shell {
        use std::os::unix::fs::PermissionsExt;
        match shell {
            Some(p)
                if p.is_absolute()
                    && std::fs::metadata(p)
                        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0) =>
            {
                Shell {
                    program: p.to_path_buf(),
                    args: vec!["-lc".into()],
                }
            }
            _ => Shell::sh(),
        }
    }

    /// `/bin/sh -c`.
    pub fn sh() -> Shell {
        Shell {
            program: "/bin/sh".into(),
            args: vec!["-c".into()],
        }
    }
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub ended_at: i64,
}

impl Exit {
    pub fn success(&self) -> bool {
        self.code == Some(0) && !self.timed_out
    }
}

pub struct State {
    pub output: OutputBuffer,
    pub exit: Option<Exit>,
    pub backgrounded: bool,
    /// Where the Process tool's last poll stopped.
    pub poll_cursor: u64,
}

pub struct Session {
    pub id: String,
    pub command: String,
    pub workdir: PathBuf,
    pub pid: u32,
    pub started_at: i64,
    pub call_id: Option<String>,
    state: Mutex<State>,
    pub stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    done: watch::Receiver<bool>,
    events: mpsc::UnboundedSender<NodeExecEventParams>,
}

impl Session {
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until the command has ended (output drained).
    pub async fn wait(&self) {
        let mut done = self.done.clone();
        let _ = done.wait_for(|d| *d).await;
    }

    /// Moves a running session to the background and emits `started`;
    /// false if it has already ended.
    pub fn background(self: &Arc<Self>, sessions: &Sessions) -> bool {
        {
            // Under the state lock, so `started` precedes the terminal
            // event that `supervise` sends under it.
            let mut state = self.state();
            if state.exit.is_some() {
                return false;
            }
            state.backgrounded = true;
            let _ = self
                .events
                .send(self.event(ExecEventKind::Started, None, None));
        }
        // Not under the state lock: `prune` takes the map's lock, then
        // sessions' state locks.
        sessions.insert(self.clone());
        true
    }

    /// Sends SIGKILL to the session's process group.
    pub fn kill(&self) {
        signal_group(self.pid, libc::SIGKILL);
    }

    fn event(
        &self,
        kind: ExecEventKind,
        exit: Option<&Exit>,
        tail: Option<String>,
    ) -> NodeExecEventParams {
        NodeExecEventParams {
            event_id: uuid::Uuid::new_v4().to_string(),
            session_id: self.id.clone(),
            event: kind,
            call_id: self.call_id.clone(),
            exit_code: exit.and_then(|e| e.code),
            signal: exit.and_then(|e| e.signal).map(signal_name),
            output_tail: tail,
            started_at: Some(self.started_at),
            ended_at: exit.map(|e| e.ended_at),
        }
    }
}

/// Backgrounded sessions by id, and every session still running.
#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Arc<Session>>>,
    live: Mutex<HashMap<String, Arc<Session>>>,
}

impl Sessions {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn insert(&self, session: Arc<Session>) {
        self.lock().insert(session.id.clone(), session);
    }

    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.prune();
        self.lock().get(id).cloned()
    }

    /// All sessions, oldest first.
    pub fn list(&self) -> Vec<Arc<Session>> {
        self.prune();
        let mut all: Vec<_> = self.lock().values().cloned().collect();
        all.sort_by(|a, b| (a.started_at, &a.id).cmp(&(b.started_at, &b.id)));
        all
    }

    /// Forgets sessions that ended more than 30 minutes ago.
    fn prune(&self) {
        let cutoff = now_ms() - RETAIN_MS;
        self.lock()
            .retain(|_, s| s.state().exit.is_none_or(|e| e.ended_at >= cutoff));
    }

    fn live(&self) -> MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn fresh_id(&self) -> String {
        let (map, live) = (self.lock(), self.live());
        loop {
            let id = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
            if !map.contains_key(&id) && !live.contains_key(&id) {
                return id;
            }
        }
    }

    /// Ends every running command: SIGTERM to each process group, then
    /// SIGKILL to the groups still running after the grace period.
    pub async fn shutdown(&self) {
        let live: Vec<Arc<Session>> = self.live().values().cloned().collect();
        for s in &live {
            signal_group(s.pid, libc::SIGTERM);
        }
        let all_done = futures_util::future::join_all(live.iter().map(|s| s.wait()));
        if tokio::time::timeout(KILL_GRACE, all_done).await.is_err() {
            for s in live.iter().filter(|s| s.state().exit.is_none()) {
                signal_group(s.pid, libc::SIGKILL);
            }
        }
    }
}

/// Starts `command` in `workdir`. `background` starts it backgrounded
/// (registered, `started` emitted); `stdin` pipes stdin (for sessions that
/// may be backgrounded); `timeout` None means no limit.
#[allow(clippy::too_many_arguments)]
pub fn spawn(
    shell: &Shell,
    sessions: &Arc<Sessions>,
    events: mpsc::UnboundedSender<NodeExecEventParams>,
    command: &str,
    workdir: &Path,
    timeout: Option<Duration>,
    background: bool,
    stdin: bool,
    call_id: Option<String>,
) -> std::io::Result<Arc<Session>> {
    let (reader, writer) = std::io::pipe()?;
    let writer2 = writer.try_clone()?;
    let mut cmd = Command::new(&shell.program);
    cmd.args(&shell.args)
        .arg(command)
        .current_dir(workdir)
        .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(writer)
        .stderr(writer2)
        .process_group(0)
        .kill_on_drop(false);
    let mut child = cmd.spawn()?;
    // The Command holds our copies of the pipe's write end: close them so
    // the reader sees EOF when the command's processes are gone.
    drop(cmd);
    let pipe = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?;
    let pid = child.id().unwrap_or(0);
    let (done_tx, done_rx) = watch::channel(false);
    let session = Arc::new(Session {
        id: sessions.fresh_id(),
        command: command.to_string(),
        workdir: workdir.to_path_buf(),
        pid,
        started_at: now_ms(),
        call_id,
        state: Mutex::new(State {
            output: OutputBuffer::default(),
            exit: None,
            backgrounded: false,
            poll_cursor: 0,
        }),
        stdin: tokio::sync::Mutex::new(child.stdin.take()),
        done: done_rx,
        events,
    });
    sessions.live().insert(session.id.clone(), session.clone());
    if background {
        session.background(sessions);
    }
    let (eof_tx, eof_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(read_output(pipe, session.clone(), eof_tx));
    let sessions = sessions.clone();
    tokio::spawn(supervise(
        child,
        session.clone(),
        timeout,
        eof_rx,
        done_tx,
        sessions,
    ));
    Ok(session)
}

/// Copies the pipe into the session's buffer until every writer is gone.
async fn read_output(
    mut pipe: tokio::net::unix::pipe::Receiver,
    session: Arc<Session>,
    eof: tokio::sync::oneshot::Sender<()>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => session.state().output.push(&buf[..n]),
        }
    }
    let _ = eof.send(());
}

/// Waits for the command (killing its group on timeout), records how it
/// ended and, for a background session, emits the terminal exec event.
async fn supervise(
    mut child: Child,
    session: Arc<Session>,
    timeout: Option<Duration>,
    eof: tokio::sync::oneshot::Receiver<()>,
    done: watch::Sender<bool>,
    sessions: Arc<Sessions>,
) {
    let waited = match timeout {
        Some(t) => tokio::time::timeout(t, child.wait()).await.ok(),
        None => Some(child.wait().await),
    };
    let (status, timed_out) = match waited {
        Some(status) => (status.ok(), false),
        None => (terminate_group(&mut child, session.pid).await, true),
    };
    // Output written just before the exit may still be in the pipe; do not
    // wait on processes the command left running in the background.
    let _ = tokio::time::timeout(DRAIN_AFTER_EXIT, eof).await;
    use std::os::unix::process::ExitStatusExt;
    let exit = Exit {
        code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        timed_out,
        ended_at: now_ms(),
    };
    {
        let mut state = session.state();
        state.exit = Some(exit);
        if state.backgrounded {
            let kind = if exit.timed_out {
                ExecEventKind::TimedOut
            } else if exit.success() {
                ExecEventKind::Finished
            } else {
                ExecEventKind::Failed
            };
            let (tail, _) = state.output.tail(TAIL_CAP);
            let _ = session
                .events
                .send(session.event(kind, Some(&exit), Some(tail)));
        }
    }
    sessions.live().remove(&session.id);
    let _ = done.send(true);
}

/// SIGTERM to the group, up to KILL_GRACE for it to go, then SIGKILL to
/// whatever is left of it; returns the shell's exit status.
async fn terminate_group(child: &mut Child, pgid: u32) -> Option<std::process::ExitStatus> {
    signal_group(pgid, libc::SIGTERM);
    let deadline = Instant::now() + KILL_GRACE;
    let mut status = None;
    loop {
        if status.is_none() {
            status = child.try_wait().ok().flatten();
        }
        if status.is_some() && !group_alive(pgid) {
            break;
        }
        if Instant::now() >= deadline {
            signal_group(pgid, libc::SIGKILL);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    match status {
        Some(s) => Some(s),
        None => child.wait().await.ok(),
    }
}

fn signal_group(pgid: u32, signal: i32) {
    if pgid > 1 {
        // SAFETY: killpg has no memory-safety preconditions.
        unsafe {
            libc::killpg(pgid as libc::pid_t, signal);
        }
    }
}

fn group_alive(pgid: u32) -> bool {
    // SAFETY: as above; signal 0 only checks for existence.
    pgid > 1 && unsafe { libc::killpg(pgid as libc::pid_t, 0) } == 0
}

/// "SIGTERM" and friends.
pub fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("SIG{signal}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_choice() {
        assert_eq!(Shell::from_shell_var(None), Shell::sh());
        assert_eq!(Shell::from_shell_var(Some(Path::new("bash"))), Shell::sh());
        assert_eq!(
            Shell::from_shell_var(Some(Path::new("/nonexistent/zsh"))),
            Shell::sh()
        );
        assert_eq!(
            Shell::from_shell_var(Some(Path::new("/bin/sh"))),
            Shell {
                program: "/bin/sh".into(),
                args: vec!["-lc".into()]
            }
        );
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(libc::SIGTERM), "SIGTERM");
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(200), "SIG200");
    }
}
