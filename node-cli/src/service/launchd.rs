//! macOS: the node as the launchd agent `dev.gsv.node`.

use super::{
    gsv_home_env, remove_service_file, run, run_ok, write_service_file, Manager, Runner,
    ServiceSpec,
};
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const LABEL: &str = "dev.gsv.node";
const WHAT: &str = "launchd agents";

/// The agent's plist for `spec` (paths already absolute); launchd's own
/// stdout/stderr go to `log_dir`.
pub fn plist(spec: &ServiceSpec, gsv_home: Option<&Path>, log_dir: &Path) -> String {
    let string = |s: &str| format!("<string>{}</string>", xml_escape(s));
    let mut args = vec![spec.exe.to_string_lossy().into_owned()];
    args.extend(spec.args());
    let args: String = args
        .iter()
        .map(|a| format!("    {}\n", string(a)))
        .collect();
    let env: String = spec
        .env(gsv_home)
        .iter()
        .map(|(k, v)| format!("    <key>{k}</key>\n    {}\n", string(v)))
        .collect();
    let log = |name: &str| string(&log_dir.join(name).to_string_lossy());
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by `gsv node install`; `gsv node uninstall` removes it. -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>{LABEL}</string>
  <key>ProgramArguments</key>
  <array>
{args}  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <true/>
  <key>ThrottleInterval</key>
  <integer>5</integer>
  <key>EnvironmentVariables</key>
  <dict>
{env}  </dict>
  <key>StandardOutPath</key>
  {stdout}
  <key>StandardErrorPath</key>
  {stderr}
</dict>
</plist>
"#,
        stdout = log("node.stdout.log"),
        stderr = log("node.stderr.log"),
    )
}

/// XML character data; control characters XML 1.0 cannot hold become U+FFFD.
pub fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

pub struct Launchd<'a> {
    pub runner: &'a dyn Runner,
    pub plist_path: PathBuf,
    pub log_dir: PathBuf,
    pub uid: u32,
    pub gsv_home: Option<PathBuf>,
    /// Between bootstrap attempts: right after a bootout launchd may still
    /// be tearing the old instance down ("Bootstrap failed: 5").
    pub retry_delay: Duration,
}

impl<'a> Launchd<'a> {
    pub fn from_env(runner: &'a dyn Runner) -> Result<Self> {
        let Some(home) = dirs::home_dir() else {
            bail!("cannot find your home directory (set HOME)");
        };
        #[cfg(unix)]
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        #[cfg(not(unix))]
        let uid = 0;
        Ok(Self {
            runner,
            plist_path: home
                .join("Library/LaunchAgents")
                .join(format!("{LABEL}.plist")),
            log_dir: crate::logs::log_dir(),
            uid,
            gsv_home: gsv_home_env().and_then(|d| std::path::absolute(d).ok()),
            retry_delay: Duration::from_secs(1),
        })
    }

    fn domain(&self) -> String {
        format!("gui/{}", self.uid)
    }

    fn target(&self) -> String {
        format!("gui/{}/{LABEL}", self.uid)
    }

    fn log_path(&self) -> PathBuf {
        self.log_dir.join("node.log")
    }

    /// Fails with the actionable error unless this user's GUI domain exists
    /// (it does not over SSH without a login session, nor off macOS).
    fn probe(&self) -> Result<()> {
        let domain = self.domain();
        let out = run(self.runner, WHAT, "launchctl", &["print", &domain])?;
        if !out.success {
            return Err(super::not_available(
                WHAT,
                &format!("`launchctl print {domain}` says: {}", out.reason()),
            ));
        }
        Ok(())
    }

    fn loaded(&self) -> Result<bool> {
        Ok(run(self.runner, WHAT, "launchctl", &["print", &self.target()])?.success)
    }

    fn bootstrap(&self) -> Result<()> {
        let plist = self.plist_path.to_string_lossy();
        let args = ["bootstrap", &self.domain(), &plist];
        for _ in 1..3 {
            if run(self.runner, WHAT, "launchctl", &args)?.success {
                return Ok(());
            }
            std::thread::sleep(self.retry_delay);
        }
        run_ok(self.runner, WHAT, "launchctl", &args).map(drop)
    }

    fn require_installed(&self) -> Result<()> {
        if !self.plist_path.exists() {
            bail!(
                "{LABEL} is not installed (no {}); run `gsv node install` first",
                self.plist_path.display()
            );
        }
        Ok(())
    }
}

impl Manager for Launchd<'_> {
    fn install(&self, spec: &ServiceSpec) -> Result<String> {
        let spec = spec.absolutized()?;
        self.probe()?;
        let text = plist(&spec, self.gsv_home.as_deref(), &self.log_dir);
        write_service_file(&self.plist_path, &text)?;
        crate::config::create_private_dir(&self.log_dir)?;
        let target = self.target();
        if self.loaded()? {
            run(self.runner, WHAT, "launchctl", &["bootout", &target])?;
        }
        run_ok(self.runner, WHAT, "launchctl", &["enable", &target])?;
        self.bootstrap()?;
        Ok(format!(
            "installed {LABEL} ({}) and started it\nlogs: {} (`gsv node logs --follow`)",
            self.plist_path.display(),
            self.log_path().display()
        ))
    }

    fn uninstall(&self) -> Result<String> {
        self.probe()?;
        if !self.plist_path.exists() {
            return Ok(format!(
                "{LABEL} is not installed (no {})",
                self.plist_path.display()
            ));
        }
        if self.loaded()? {
            run_ok(self.runner, WHAT, "launchctl", &["bootout", &self.target()])?;
        }
        remove_service_file(&self.plist_path)?;
        Ok(format!(
            "stopped and removed {LABEL} ({})",
            self.plist_path.display()
        ))
    }

    fn start(&self) -> Result<String> {
        self.probe()?;
        self.require_installed()?;
        if self.loaded()? {
            run_ok(
                self.runner,
                WHAT,
                "launchctl",
                &["kickstart", "-k", &self.target()],
            )?;
            return Ok(format!("restarted {LABEL}"));
        }
        self.bootstrap()?;
        Ok(format!(
            "started {LABEL}; `gsv node logs --follow` shows what it does"
        ))
    }

    fn stop(&self) -> Result<String> {
        self.probe()?;
        self.require_installed()?;
        if !self.loaded()? {
            return Ok(format!("{LABEL} is not running"));
        }
        run_ok(self.runner, WHAT, "launchctl", &["bootout", &self.target()])?;
        Ok(format!(
            "stopped {LABEL}; it starts again at your next login (`gsv node uninstall` removes it)"
        ))
    }

    fn status(&self) -> Result<String> {
        let installed = if self.plist_path.exists() {
            format!("yes ({})", self.plist_path.display())
        } else {
            format!(
                "no (no {}; `gsv node install` adds it)",
                self.plist_path.display()
            )
        };
        let state = match self
            .probe()
            .and_then(|()| run(self.runner, WHAT, "launchctl", &["print", &self.target()]))
        {
            Ok(out) if out.success => describe_print(&out.stdout),
            Ok(_) => "not loaded (stopped)".to_string(),
            Err(e) => format!("unknown: {e:#}"),
        };
        Ok(format!(
            "service:   {LABEL} (launchd agent)\ninstalled: {installed}\nstate:     {state}\nlog:       {}",
            self.log_path().display()
        ))
    }
}

/// `running, pid 42` from `launchctl print gui/<uid>/<label>`.
fn describe_print(stdout: &str) -> String {
    let field = |name: &str| {
        stdout.lines().find_map(|l| {
            let (key, value) = l.trim().split_once(" = ")?;
            (key == name).then(|| value.trim().to_string())
        })
    };
    let mut text = field("state").unwrap_or_else(|| "loaded".to_string());
    if let Some(pid) = field("pid") {
        text.push_str(&format!(", pid {pid}"));
    }
    if let Some(code) = field("last exit code") {
        text.push_str(&format!(", last exit code {code}"));
    }
    text
}
