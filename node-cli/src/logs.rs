//! The node's JSONL log: `~/.gsv/logs/node.log` (`$GSV_HOME` replaces
//! `~/.gsv`), one JSON object a line, rotated by size into `node.log.1` …
//! `node.log.{max_files-1}`. `gsv node logs` reads it back with
//! [`tail_lines`] and [`follow`].
#![allow(dead_code)]

mod tail;
#[cfg(test)]
mod tests;

pub use tail::{follow, tail_lines, tail_window};

use serde_json::Value;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;
pub const DEFAULT_MAX_FILES: usize = 5;

/// `$GSV_HOME`, else `~/.gsv`: where the node keeps its logs.
pub fn gsv_home() -> PathBuf {
    if let Some(dir) = std::env::var_os("GSV_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::home_dir()
        .unwrap_or_else(|| PathBuf::from("."))
        .join(".gsv")
}

pub fn log_dir() -> PathBuf {
    gsv_home().join("logs")
}

pub fn default_log_path() -> PathBuf {
    log_dir().join("node.log")
}

/// Size limits from `GSV_NODE_LOG_MAX_BYTES` / `GSV_NODE_LOG_MAX_FILES`
/// (unset or unparsable values give the defaults, with a warning for the latter).
pub fn limits_from_env() -> (u64, usize) {
    let bytes = std::env::var("GSV_NODE_LOG_MAX_BYTES").ok();
    let files = std::env::var("GSV_NODE_LOG_MAX_FILES").ok();
    let (limits, problems) = parse_limits(bytes.as_deref(), files.as_deref());
    for problem in problems {
        eprintln!("warning: {problem}");
    }
    limits
}

fn parse_limits(bytes: Option<&str>, files: Option<&str>) -> ((u64, usize), Vec<String>) {
    let mut problems = Vec::new();
    let mut parse = |name: &str, value: Option<&str>, default: u64| match value.map(str::trim) {
        None | Some("") => default,
        Some(text) => match text.parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                problems.push(format!(
                    "{name}={text:?} is not a positive number; using {default}"
                ));
                default
            }
        },
    };
    let max_bytes = parse("GSV_NODE_LOG_MAX_BYTES", bytes, DEFAULT_MAX_BYTES);
    let max_files = parse("GSV_NODE_LOG_MAX_FILES", files, DEFAULT_MAX_FILES as u64);
    ((max_bytes, max_files.min(1000) as usize), problems)
}

/// Appends to the node log from any task or thread; clones share one file.
#[derive(Clone)]
pub struct NodeLog {
    inner: Arc<Inner>,
    echo: bool,
}

struct Inner {
    path: PathBuf,
    max_bytes: u64,
    max_files: usize,
    state: Mutex<State>,
    /// Set once a write failed, so a full disk warns once, not per line.
    failed: AtomicBool,
}

struct State {
    file: Option<File>,
    size: u64,
}

impl NodeLog {
    /// Opens (creating) `path` with mode 0600 in a 0700 directory. `max_files`
    /// counts `path` itself, so 5 keeps `node.log` and `node.log.1`–`.4`.
    pub fn open(path: impl Into<PathBuf>, max_bytes: u64, max_files: usize) -> io::Result<Self> {
        let path = path.into();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::config::create_private_dir(dir).map_err(io::Error::other)?;
        }
        let file = open_private(&path)?;
        let size = file.metadata()?.len();
        Ok(Self {
            inner: Arc::new(Inner {
                path,
                max_bytes: max_bytes.max(1),
                max_files: max_files.max(1),
                state: Mutex::new(State {
                    file: Some(file),
                    size,
                }),
                failed: AtomicBool::new(false),
            }),
            echo: false,
        })
    }

    /// The default log (`default_log_path`, limits from the environment).
    pub fn open_default(echo: bool) -> io::Result<Self> {
        let (max_bytes, max_files) = limits_from_env();
        Ok(Self::open(default_log_path(), max_bytes, max_files)?.with_echo(echo))
    }

    /// Also print each entry to stderr, human-readable (foreground mode).
    pub fn with_echo(mut self, echo: bool) -> Self {
        self.echo = echo;
        self
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    pub fn info(&self, msg: &str, fields: Value) {
        self.log("info", msg, fields);
    }

    pub fn warn(&self, msg: &str, fields: Value) {
        self.log("warn", msg, fields);
    }

    pub fn error(&self, msg: &str, fields: Value) {
        self.log("error", msg, fields);
    }

    /// Never fails: a log that cannot be written warns once on stderr.
    pub fn log(&self, level: &str, msg: &str, fields: Value) {
        let ts = format_rfc3339_millis(SystemTime::now());
        if self.echo {
            eprintln!("{}", human_line(&ts, level, msg, &fields));
        }
        let mut line = json_line(&ts, level, msg, &fields);
        line.push('\n');
        if let Err(e) = self.append(line.as_bytes()) {
            if !self.inner.failed.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "warning: cannot write the node log {}: {e}",
                    self.inner.path.display()
                );
            }
        }
    }

    fn append(&self, bytes: &[u8]) -> io::Result<()> {
        let inner = &*self.inner;
        let mut state = inner.state.lock().unwrap_or_else(|p| p.into_inner());
        let len = bytes.len() as u64;
        if state.size > 0 && state.size + len > inner.max_bytes {
            state.file = None;
            rotate(&inner.path, inner.max_files)?;
            state.size = 0;
        }
        let file = match state.file.take() {
            Some(file) => file,
            None => {
                let file = open_private(&inner.path)?;
                state.size = file.metadata()?.len();
                file
            }
        };
        let file = state.file.insert(file);
        file.write_all(bytes)?;
        state.size += len;
        Ok(())
    }
}

fn open_private(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if file.metadata()?.permissions().mode() & 0o777 != 0o600 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(file)
}

/// `path.N` for N ≥ 1; `path` itself for 0.
pub(crate) fn rotated_path(path: &Path, n: usize) -> PathBuf {
    if n == 0 {
        return path.to_path_buf();
    }
    let mut name = path.as_os_str().to_os_string();
    name.push(format!(".{n}"));
    PathBuf::from(name)
}

/// node.log → node.log.1 → … → node.log.{max_files-1}; the oldest is dropped.
fn rotate(path: &Path, max_files: usize) -> io::Result<()> {
    let ignore_missing = |r: io::Result<()>| match r {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    };
    if max_files <= 1 {
        return ignore_missing(std::fs::remove_file(path));
    }
    ignore_missing(std::fs::remove_file(rotated_path(path, max_files - 1)))?;
    for n in (0..max_files - 1).rev() {
        ignore_missing(std::fs::rename(
            rotated_path(path, n),
            rotated_path(path, n + 1),
        ))?;
    }
    Ok(())
}

/// `{"ts":…,"level":…,"msg":…, …fields}`: the fixed keys first; fields that
/// are not an object go under `"fields"`, and fields named like a fixed key
/// are dropped rather than written twice.
fn json_line(ts: &str, level: &str, msg: &str, fields: &Value) -> String {
    let quote = |s: &str| Value::from(s).to_string();
    let mut line = format!(
        "{{\"ts\":{},\"level\":{},\"msg\":{}",
        quote(ts),
        quote(level),
        quote(msg)
    );
    let mut push = |key: &str, value: &Value| {
        line.push(',');
        line.push_str(&quote(key));
        line.push(':');
        line.push_str(&value.to_string());
    };
    match fields {
        Value::Null => {}
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "ts" | "level" | "msg"))
            .for_each(|(k, v)| push(k, v)),
        other => push("fields", other),
    }
    line.push('}');
    line
}

/// `ts level msg k=v …` for stderr; strings with spaces or quotes are quoted.
fn human_line(ts: &str, level: &str, msg: &str, fields: &Value) -> String {
    let mut line = format!("{ts} {level:<5} {msg}");
    let value_text = |v: &Value| match v {
        Value::String(s)
            if !s.is_empty()
                && !s.contains(|c: char| c.is_whitespace() || c == '"' || c == '=') =>
        {
            s.clone()
        }
        other => other.to_string(),
    };
    match fields {
        Value::Null => {}
        Value::Object(map) => {
            for (k, v) in map {
                line.push_str(&format!(" {k}={}", value_text(v)));
            }
        }
        other => line.push_str(&format!(" fields={}", value_text(other))),
    }
    line
}

/// `2026-02-18T09:05:03.042Z`.
pub fn format_rfc3339_millis(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let gsv_protocol::dates::CivilDate { year, month, day } =
        gsv_protocol::dates::CivilDate::from_epoch_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        since.subsec_millis()
    )
}
