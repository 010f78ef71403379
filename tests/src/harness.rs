//! Starts the real gateway (or the bench echo worker) under workerd (`wrangler dev` on the prebuilt
//! `build/` output, never rebuilding) on a free loopback port, with a
//! persist directory for SQLite and R2, and stops it on drop.

use crate::poll::{self, ms, secs};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The repository root (this crate lives in `tests/`).
pub fn repo_root() -> PathBuf {
    // Another checkout's builds, for a before/after comparison in one
    // sitting (BENCHMARKS.md says how).
    if let Some(dir) = std::env::var_os("GSV_REPO_ROOT") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The `gsv` binary, built by the test command before the tests run;
/// `GSV_BIN` names another build (the bench runs the release one).
pub fn gsv_bin() -> PathBuf {
    if let Some(bin) = std::env::var_os("GSV_BIN") {
        return PathBuf::from(bin);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"));
    let bin = target.join("debug").join("gsv");
    assert!(
        bin.exists(),
        "{} is missing: run the README test command (it builds it)",
        bin.display()
    );
    bin
}

/// Runs the `gsv` binary against the gateway at `url` with `token`, its
/// local config in a fresh temporary directory.
pub fn run_gsv(url: &str, token: &str, args: &[&str]) -> std::process::Output {
    let config_dir = tempfile::tempdir().unwrap();
    Command::new(gsv_bin())
        .args(args)
        .env("GSV_URL", url)
        .env("GSV_TOKEN", token)
        .env("GSV_CONFIG_DIR", config_dir.path())
        .output()
        .expect("run gsv")
}

/// A free port never handed out before in this process: a gateway that
/// is down for a restart keeps its port, and another test's gateway must
/// not take it meanwhile (its health check would then find the wrong
/// gateway answering).
pub fn free_port() -> u16 {
    static HANDED_OUT: Mutex<Vec<u16>> = Mutex::new(Vec::new());
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut used = HANDED_OUT.lock().unwrap();
        if !used.contains(&port) {
            used.push(port);
            return port;
        }
    }
}

pub struct GatewayOptions {
    /// `GSV_AUTH_TOKEN`; `None` starts a gateway with no token configured.
    pub token: Option<String>,
    /// Reuse state from an earlier run (restart tests).
    pub persist_dir: Option<PathBuf>,
}

impl Default for GatewayOptions {
    fn default() -> Self {
        Self {
            token: Some("test-token".into()),
            persist_dir: None,
        }
    }
}

pub struct Workerd {
    child: Option<Child>,
    pub port: u16,
    pub token: Option<String>,
    pub persist_dir: PathBuf,
    /// Holds the config and the temporary persist dir alive.
    _dir: tempfile::TempDir,
    log_path: PathBuf,
    /// More workers served by the same workerd (see `start_configs`).
    extra_configs: Vec<PathBuf>,
    /// The served config when it is not `wrangler.toml` (`start_configs`).
    primary_config: Option<PathBuf>,
    /// Workers of `extra_configs` also served on a port of their own
    /// (`start_configs_exposing`), by name.
    exposed: Vec<(String, u16)>,
}

impl Workerd {
    /// The gateway alone, without its web UI's static assets: with them,
    /// Miniflare's assets proxy cannot deliver the test-only scheduled
    /// trigger (`trigger_scheduled` answers 500), and no test but the web
    /// UI's needs them ([`Workerd::start_with_web_ui`]).
    pub fn start(opts: GatewayOptions) -> Self {
        Self::start_gateway(opts, false)
    }

    /// The gateway as deployed: its Worker and the web UI (`web/dist`,
    /// built by the README test command) at `/`.
    pub fn start_with_web_ui(opts: GatewayOptions) -> Self {
        let index = repo_root().join("web").join("dist").join("index.html");
        assert!(
            index.exists(),
            "{} is missing: run the README test command (it builds the web UI)",
            index.display()
        );
        Self::start_gateway(opts, true)
    }

    fn start_gateway(opts: GatewayOptions, web_ui: bool) -> Self {
        let main = repo_root().join("build").join("index.js");
        assert!(
            main.exists(),
            "{} is missing: run the README test command (it builds the worker once)",
            main.display()
        );
        // GSV_TEST_CLOCK lets the tests move the gateway's schedule clock
        // (`advance_clock`); a deployed gateway never has it.
        let dev_vars = Some(match &opts.token {
            Some(t) => format!("GSV_AUTH_TOKEN={t}\nGSV_TEST_CLOCK=1\n"),
            None => "GSV_TEST_CLOCK=1\n".to_string(),
        });
        let mut config = without_services(&gateway_dev_config());
        if !web_ui {
            config = without_table(&config, "[assets]");
        }
        let mut me = Self::start_config(&config, dev_vars, opts.persist_dir);
        me.token = opts.token;
        me
    }

    /// The benchmark's echo worker (tests/support/echo).
    pub fn start_echo() -> Self {
        Self::start_support("echo", "worker.mjs")
    }

    /// The same floors written with workers-rs (`tests/support/echo-rs`,
    /// built by its `build.sh`).
    pub fn start_echo_rs() -> Self {
        Self::start_support("echo-rs", "build/index.js")
    }

    /// A Worker of `tests/support/<name>` whose config's `main` is `main`.
    fn start_support(name: &str, main: &str) -> Self {
        let dir = repo_root().join("tests").join("support").join(name);
        let config = std::fs::read_to_string(dir.join("wrangler.toml"))
            .unwrap()
            .replace(
                &format!("main = {main:?}"),
                &format!("main = {:?}", dir.join(main).display().to_string()),
            );
        Self::start_config(&config, None, None)
    }

    /// Runs `wrangler dev` on a config (TOML text) in a fresh directory.
    pub fn start_config(
        config_text: &str,
        dev_vars: Option<String>,
        persist_dir: Option<PathBuf>,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let persist_dir = persist_dir.unwrap_or_else(|| dir.path().join("state"));
        let config = dir.path().join("wrangler.toml");
        std::fs::write(&config, config_text).unwrap();
        if let Some(vars) = dev_vars {
            std::fs::write(dir.path().join(".dev.vars"), vars).unwrap();
        }
        // `GSV_WRANGLER_LOG=FILE` keeps the log after the run (for debugging).
        let log_path = std::env::var_os("GSV_WRANGLER_LOG")
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.path().join("wrangler.log"));
        let mut me = Self {
            child: None,
            port: 0,
            token: None,
            persist_dir,
            _dir: dir,
            log_path,
            extra_configs: Vec::new(),
            primary_config: None,
            exposed: Vec::new(),
        };
        me.spawn(&config);
        me
    }

    /// Runs several workers in one workerd (`scripts/serve.mjs` with one
    /// `--config` each): the first is served on the port, the others are
    /// reachable through its service bindings by their names. `configs`
    /// are (file name, TOML text), written to one fresh directory, so they
    /// share `dev_vars`.
    pub fn start_configs(configs: &[(&str, String)], dev_vars: Option<String>) -> Self {
        Self::start_configs_exposing(configs, dev_vars, &[])
    }

    /// `start_configs`, with the workers named in `exposed` also served on
    /// a free port each (`exposed_url`): a channel whose platform calls it
    /// directly (WhatsApp's webhook).
    pub fn start_configs_exposing(
        configs: &[(&str, String)],
        dev_vars: Option<String>,
        exposed: &[&str],
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let persist_dir = dir.path().join("state");
        let paths: Vec<PathBuf> = configs
            .iter()
            .map(|(name, text)| {
                let path = dir.path().join(name);
                std::fs::write(&path, text).unwrap();
                path
            })
            .collect();
        if let Some(vars) = dev_vars {
            std::fs::write(dir.path().join(".dev.vars"), vars).unwrap();
        }
        let log_path = std::env::var_os("GSV_WRANGLER_LOG")
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.path().join("wrangler.log"));
        let mut me = Self {
            child: None,
            port: 0,
            token: None,
            persist_dir,
            _dir: dir,
            log_path,
            extra_configs: paths[1..].to_vec(),
            primary_config: Some(paths[0].clone()),
            exposed: exposed
                .iter()
                .map(|name| (name.to_string(), free_port()))
                .collect(),
        };
        me.spawn(&paths[0]);
        me
    }

    fn spawn(&mut self, config: &Path) {
        let serve = repo_root().join("scripts").join("serve.mjs");
        // A restart keeps its port (nodes reconnect to the same URL).
        let previous = self.port;
        for attempt in 0..3 {
            let port = if attempt == 0 && previous != 0 {
                previous
            } else {
                free_port()
            };
            let log = std::fs::File::create(&self.log_path).unwrap();
            let child =
                Command::new("node")
                    .arg(&serve)
                    .arg("--config")
                    .arg(config)
                    .args(
                        self.extra_configs
                            .iter()
                            .flat_map(|c| [std::ffi::OsStr::new("--config"), c.as_os_str()]),
                    )
                    .args(self.exposed.iter().flat_map(|(name, port)| {
                        ["--expose".to_string(), format!("{name}={port}")]
                    }))
                    .args(["--ip", "127.0.0.1", "--port", &port.to_string()])
                    .arg("--persist-to")
                    .arg(&self.persist_dir)
                    .args(["--log-level", "warn", "--test-scheduled"])
                    .envs(WRANGLER_OFFLINE)
                    .env("NO_COLOR", "1")
                    .current_dir(config.parent().unwrap())
                    .stdin(Stdio::null())
                    .stdout(log.try_clone().unwrap())
                    .stderr(log)
                    .process_group(0)
                    .spawn()
                    .expect("spawn node scripts/serve.mjs");
            register_for_exit_cleanup(child.id() as i32);
            self.child = Some(child);
            self.port = port;
            if self.wait_healthy(Duration::from_secs(60)) {
                return;
            }
            self.kill();
        }
        panic!("the gateway did not start; wrangler log:\n{}", self.log());
    }

    fn wait_healthy(&mut self, within: Duration) -> bool {
        // Over (false) at once when wrangler exited.
        poll::try_until_blocking(within, ms(100), || {
            if let Some(Ok(Some(_))) = self.child.as_mut().map(|c| c.try_wait()) {
                return Ok(false);
            }
            if health(self.port) && self.exposed.iter().all(|(_, port)| health(*port)) {
                return Ok(true);
            }
            Err(())
        })
        .unwrap_or(false)
    }

    pub fn url(&self) -> String {
        format!("ws://127.0.0.1:{}/ws", self.port)
    }

    /// The process id of wrangler (workerd runs as its child).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn http_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// `http://127.0.0.1:PORT` of a worker served on its own port.
    pub fn exposed_url(&self, worker: &str) -> String {
        let port = self
            .exposed
            .iter()
            .find(|(name, _)| name == worker)
            .map(|(_, port)| *port)
            .unwrap_or_else(|| panic!("{worker} is not exposed"));
        format!("http://127.0.0.1:{port}")
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    /// Writes an object into the gateway's local R2 the way an operator
    /// would outside the gateway (`wrangler r2 object put --local`), while
    /// the gateway runs: nothing in the gateway hears of the write.
    pub fn r2_put_outside(&self, key: &str, content: &str) {
        let dir = self._dir.path();
        let file = dir.join("r2-put-outside");
        std::fs::write(&file, content).unwrap();
        let out = self.wrangler_r2("put", key, Some(&file));
        assert!(
            out.status.success(),
            "wrangler r2 object put failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Deletes an object of the gateway's local R2 from outside, as an
    /// operator would (`wrangler r2 object delete --local`).
    pub fn r2_delete_outside(&self, key: &str) {
        let out = self.wrangler_r2("delete", key, None);
        assert!(
            out.status.success(),
            "wrangler r2 object delete failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `wrangler r2 object VERB gsv-storage/KEY --local [--file FILE]` on
    /// this workerd's local R2, as an operator would run it.
    fn wrangler_r2(&self, verb: &str, key: &str, file: Option<&Path>) -> std::process::Output {
        let dir = self._dir.path();
        let mut cmd = wrangler_cli();
        cmd.args([
            "r2",
            "object",
            verb,
            &format!("gsv-storage/{key}"),
            "--local",
        ]);
        if let Some(file) = file {
            cmd.arg("--file").arg(file);
        }
        cmd.arg("--persist-to")
            .arg(self.wrangler_persist_dir())
            .arg("-c")
            .arg(dir.join("wrangler.toml"))
            .current_dir(dir)
            .output()
            .unwrap_or_else(|e| panic!("run wrangler r2 object {verb}: {e}"))
    }

    /// The `--persist-to` that makes wrangler's CLI see this workerd's
    /// state: wrangler keeps it under `DIR/v3`, as a single-config run
    /// does; several configs run as one Miniflare keep it in the persist
    /// directory itself (scripts/serve.mjs), reached here through a `v3`
    /// link.
    fn wrangler_persist_dir(&self) -> PathBuf {
        if self.primary_config.is_none() {
            return self.persist_dir.clone();
        }
        let dir = self._dir.path().join("wrangler-persist");
        let link = dir.join("v3");
        if !link.exists() {
            std::fs::create_dir_all(&dir).unwrap();
            std::os::unix::fs::symlink(&self.persist_dir, &link).unwrap();
        }
        dir
    }

    /// Reads an object of the gateway's local R2 from outside, as an
    /// operator would (`wrangler r2 object get --local`); `None` when it
    /// does not exist.
    pub fn r2_get_outside(&self, key: &str) -> Option<Vec<u8>> {
        let dir = self._dir.path();
        let file = dir.join("r2-get-outside");
        let _ = std::fs::remove_file(&file);
        let out = self.wrangler_r2("get", key, Some(&file));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            assert!(
                stderr.contains("does not exist") || stdout.contains("does not exist"),
                "wrangler r2 object get failed: {stderr}{stdout}"
            );
            return None;
        }
        std::fs::read(&file).ok()
    }

    /// Replaces the `.dev.vars` every worker of this workerd reads (the
    /// next `restart` takes them).
    pub fn set_dev_vars(&self, vars: &str) {
        std::fs::write(self._dir.path().join(".dev.vars"), vars).unwrap();
    }

    /// The `.dev.vars` every worker of this workerd reads.
    pub fn dev_vars(&self) -> String {
        std::fs::read_to_string(self._dir.path().join(".dev.vars")).unwrap_or_default()
    }

    /// Stops workerd and starts it again on the same persisted state.
    pub fn restart(&mut self) {
        self.kill();
        let config = self
            .primary_config
            .clone()
            .unwrap_or_else(|| self._dir.path().join("wrangler.toml"));
        self.spawn(&config);
    }

    /// Moves the gateway's schedule clock (cron, heartbeats) `ms` forward;
    /// returns the total offset.
    pub fn advance_clock(&self, ms: i64) -> i64 {
        let out = self.http_raw(
            "POST",
            "/internal/test/clock",
            &format!("{{\"advanceMs\":{ms}}}"),
        );
        // The body's JSON object (the answer may be chunked).
        let json = match (out.find('{'), out.rfind('}')) {
            (Some(a), Some(b)) => &out[a..=b],
            _ => "",
        };
        let v: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
        v["offsetMs"].as_i64().unwrap_or_else(|| panic!("{out}"))
    }

    /// Deletes the gateway's alarm, as if the platform had lost it.
    pub fn drop_alarm(&self) {
        self.http_raw(
            "POST",
            "/internal/test/clock",
            r#"{"advanceMs":0,"dropAlarm":true}"#,
        );
    }

    /// Runs the gateway Worker's cron trigger (`[triggers] crons`) now.
    pub fn trigger_scheduled(&self) {
        self.http_raw("GET", "/cdn-cgi/handler/scheduled?cron=*/5+*+*+*+*", "");
    }

    /// One HTTP/1.1 request to the gateway that must answer 200; the raw
    /// answer.
    fn http_raw(&self, method: &str, path: &str, body: &str) -> String {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        assert!(out.starts_with("HTTP/1.1 200"), "{method} {path}: {out}");
        out
    }

    /// Stops workerd, waits `down` (the gateway is "down"), starts it
    /// again on the same persisted state.
    pub fn restart_after(&mut self, down: Duration) {
        self.kill();
        std::thread::sleep(down);
        let config = self._dir.path().join("wrangler.toml");
        self.spawn(&config);
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // wrangler runs workerd as a child: signal the whole group.
            unsafe { libc::killpg(child.id() as i32, libc::SIGTERM) };
            // Up to 5 s to end on its own; then killed in any case.
            let _ = poll::try_until_blocking(secs(5), ms(50), || match child.try_wait() {
                Ok(Some(_)) => Ok(()),
                _ => Err(()),
            });
            unsafe { libc::killpg(child.id() as i32, libc::SIGKILL) };
            let _ = child.wait();
            RUNNING.lock().unwrap().retain(|g| *g != child.id() as i32);
        }
    }
}

impl Drop for Workerd {
    fn drop(&mut self) {
        self.kill();
        // A failing test's gateway log goes with it (the directory is deleted).
        if std::thread::panicking() {
            let log = self.log();
            let tail: Vec<&str> = log.lines().rev().take(60).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            eprintln!("--- wrangler log (last 60 lines) ---\n{}", tail.join("\n"));
        }
    }
}

use std::os::unix::process::CommandExt;
use std::sync::Mutex;

/// Process groups still running; killed when the test binary exits, since
/// statics shared by tests are never dropped.
static RUNNING: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn register_for_exit_cleanup(pgid: i32) {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| unsafe {
        libc::atexit(kill_all_at_exit);
    });
    RUNNING.lock().unwrap().push(pgid);
}

extern "C" fn kill_all_at_exit() {
    if let Ok(groups) = RUNNING.lock() {
        for pgid in groups.iter() {
            unsafe { libc::killpg(*pgid, libc::SIGKILL) };
        }
    }
}

fn health(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut buf = String::new();
    let _ = s.read_to_string(&mut buf);
    buf.starts_with("HTTP/1.1 200") && buf.contains("healthy")
}

/// Wrangler with no metrics and no Cloudflare requests (offline runs).
const WRANGLER_OFFLINE: [(&str, &str); 2] = [
    ("WRANGLER_SEND_METRICS", "false"),
    ("CLOUDFLARE_CF_FETCH_ENABLED", "false"),
];

/// The repository's wrangler CLI, offline; add its arguments.
pub fn wrangler_cli() -> Command {
    let mut c = Command::new("node");
    c.arg(repo_root().join("node_modules/wrangler/bin/wrangler.js"))
        .envs(WRANGLER_OFFLINE);
    c
}

/// The gateway's wrangler config for runs on the prebuilt worker, from
/// the same script `scripts/dev.sh` uses.
pub fn gateway_dev_config() -> String {
    let out = Command::new("bash")
        .arg(repo_root().join("scripts").join("dev-config.sh"))
        .output()
        .expect("run scripts/dev-config.sh");
    assert!(
        out.status.success(),
        "dev-config.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Panics unless the web UI is built (`web/dist`, which the gateway's
/// `[assets]` serves at `/`).
pub fn require_web_ui() {
    let index = repo_root().join("web").join("dist").join("index.html");
    assert!(
        index.exists(),
        "{} is missing: run the README test command (it builds the web UI)",
        index.display()
    );
}

/// `config` without the table whose header line is `header` (and its keys).
pub fn without_table(config: &str, header: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in config.lines() {
        if line.starts_with('[') {
            skipping = line.trim() == header;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `config` without its `[[services]]` tables: a gateway running alone
/// (workerd refuses a binding to a Worker it does not run).
pub fn without_services(config: &str) -> String {
    only_services(config, &[])
}

/// `config` with only the `[[services]]` tables whose binding is in
/// `keep`: the gateway with the channel Workers a test runs.
pub fn only_services(config: &str, keep: &[&str]) -> String {
    let mut out = String::new();
    // Tables are kept or dropped whole, so a services table is held
    // until its binding is known.
    let mut table: Vec<&str> = Vec::new();
    let flush = |table: &mut Vec<&str>, out: &mut String| {
        let is_service = table.first().is_some_and(|l| l.trim() == "[[services]]");
        let binding_kept = table.iter().any(|l| {
            l.trim()
                .strip_prefix("binding = ")
                .is_some_and(|b| keep.contains(&b.trim_matches('"')))
        });
        if !is_service || binding_kept {
            for line in table.iter() {
                out.push_str(line);
                out.push('\n');
            }
        }
        table.clear();
    };
    for line in config.lines() {
        if line.starts_with('[') {
            flush(&mut table, &mut out);
        }
        table.push(line);
    }
    flush(&mut table, &mut out);
    out
}

/// A real `gsv node --foreground` process, killed on drop.
pub struct Node {
    child: Option<Child>,
    pub id: String,
    /// Its workspace (a fresh temporary directory unless given).
    pub workspace: PathBuf,
    _dirs: Vec<tempfile::TempDir>,
}

impl Node {
    /// Starts a node with a fresh workspace.
    pub fn start(url: &str, token: &str, id: &str) -> Self {
        let ws = tempfile::tempdir().unwrap();
        let path = ws.path().canonicalize().unwrap();
        let mut node = Self::start_in(url, token, id, &path, &[]);
        node._dirs.push(ws);
        node
    }

    /// Starts a node on `workspace` with extra flags.
    pub fn start_in(url: &str, token: &str, id: &str, workspace: &Path, flags: &[&str]) -> Self {
        let home = tempfile::tempdir().unwrap();
        let child = Command::new(gsv_bin())
            .args(["node", "--foreground", "--id", id, "--workspace"])
            .arg(workspace)
            .args(flags)
            .env("GSV_URL", url)
            .env("GSV_TOKEN", token)
            .env("GSV_CONFIG_DIR", home.path())
            .env("GSV_HOME", home.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start gsv node");
        Self {
            child: Some(child),
            id: id.to_string(),
            workspace: workspace.to_path_buf(),
            _dirs: vec![home],
        }
    }

    /// The process id while it runs (the bench reads its CPU time).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The node's JSONL log so far.
    pub fn log(&self) -> String {
        let home = self._dirs[0].path();
        std::fs::read_to_string(home.join("logs").join("node.log")).unwrap_or_default()
    }

    /// SIGKILL, as a crash or a pulled cable would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}
