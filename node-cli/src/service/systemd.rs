//! Linux: the node as the systemd user unit `gsv-node.service`.

use super::{
    gsv_home_env, remove_service_file, run, run_ok, write_service_file, Manager, Runner,
    ServiceSpec,
};
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

pub const UNIT_NAME: &str = "gsv-node.service";
const WHAT: &str = "systemd user services";

/// The unit file for `spec` (paths already absolute).
pub fn unit_file(spec: &ServiceSpec, gsv_home: Option<&Path>) -> String {
    let mut exec = vec![exec_quote(&spec.exe.to_string_lossy())];
    exec.extend(spec.args().iter().map(|a| exec_quote(a)));
    let env: String = spec
        .env(gsv_home)
        .iter()
        .map(|(k, v)| format!("Environment={}\n", env_quote(&format!("{k}={v}"))))
        .collect();
    format!(
        "# Written by `gsv node install`; `gsv node uninstall` removes it.\n\
         [Unit]\n\
         Description=gsv node {id}\n\
         \n\
         [Service]\n\
         Type=simple\n\
         ExecStart={exec}\n\
         Restart=always\n\
         RestartSec=5\n\
         {env}\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
        id = plain_value(&spec.id),
        exec = exec.join(" "),
    )
}

/// One `ExecStart=` word (systemd.service "Command lines"): plain if it is
/// only safe characters, else double-quoted with C escapes; `%` (specifiers)
/// is doubled and `$` (variable expansion) is `$$`.
pub fn exec_quote(word: &str) -> String {
    quote(word, true)
}

/// One `Environment=` assignment: quoted like `ExecStart=`, but `$` is not
/// special there.
pub fn env_quote(assignment: &str) -> String {
    quote(assignment, false)
}

fn quote(word: &str, dollar_special: bool) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "/_.,:@+=-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_string();
    }
    let mut out = String::from("\"");
    for c in word.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '%' => out.push_str("%%"),
            '$' if dollar_special => out.push_str("$$"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A free-text value (`Description=`): one line, specifiers escaped.
fn plain_value(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .replace('%', "%%")
}

pub struct Systemd<'a> {
    pub runner: &'a dyn Runner,
    pub unit_path: PathBuf,
    pub log_path: PathBuf,
    /// For `loginctl enable-linger`; without it loginctl picks the caller.
    pub user: Option<String>,
    pub gsv_home: Option<PathBuf>,
}

impl<'a> Systemd<'a> {
    pub fn from_env(runner: &'a dyn Runner) -> Result<Self> {
        let config_home = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|d| d.is_absolute())
            .or_else(|| dirs::home_dir().map(|h| h.join(".config")));
        let Some(config_home) = config_home else {
            bail!("cannot find your home directory (set HOME or XDG_CONFIG_HOME)");
        };
        Ok(Self {
            runner,
            unit_path: config_home.join("systemd/user").join(UNIT_NAME),
            log_path: crate::logs::default_log_path(),
            user: std::env::var("USER").ok().filter(|u| !u.is_empty()),
            gsv_home: gsv_home_env().and_then(|d| std::path::absolute(d).ok()),
        })
    }

    fn systemctl(&self, args: &[&str]) -> Result<super::CmdOutput> {
        let mut full = vec!["--user"];
        full.extend_from_slice(args);
        run_ok(self.runner, WHAT, "systemctl", &full)
    }

    /// Fails with the actionable error unless the user manager answers.
    fn probe(&self) -> Result<()> {
        let out = run(
            self.runner,
            WHAT,
            "systemctl",
            &["--user", "show-environment"],
        )?;
        if !out.success {
            return Err(super::not_available(
                WHAT,
                &format!("`systemctl --user` says: {}", out.reason()),
            ));
        }
        Ok(())
    }

    fn installed(&self) -> bool {
        self.unit_path.exists()
    }

    fn require_installed(&self) -> Result<()> {
        if !self.installed() {
            bail!(
                "{UNIT_NAME} is not installed (no {}); run `gsv node install` first",
                self.unit_path.display()
            );
        }
        Ok(())
    }
}

impl Manager for Systemd<'_> {
    fn install(&self, spec: &ServiceSpec) -> Result<String> {
        let spec = spec.absolutized()?;
        self.probe()?;
        let text = unit_file(&spec, self.gsv_home.as_deref());
        let previous = std::fs::read_to_string(&self.unit_path).ok();
        write_service_file(&self.unit_path, &text)?;
        self.systemctl(&["daemon-reload"])?;
        self.systemctl(&["enable", "--now", UNIT_NAME])?;
        // `enable --now` leaves a running old version alone.
        let changed = previous.is_some_and(|p| p != text);
        if changed {
            self.systemctl(&["restart", UNIT_NAME])?;
        }
        let mut summary = format!(
            "{} {UNIT_NAME} ({}) and started it\nlogs: {} (`gsv node logs --follow`)",
            if changed { "updated" } else { "installed" },
            self.unit_path.display(),
            self.log_path.display()
        );
        let mut linger = vec!["enable-linger"];
        linger.extend(self.user.as_deref());
        let lingering = match self.runner.run("loginctl", &linger) {
            Ok(out) if out.success => Ok(()),
            Ok(out) => Err(out.reason()),
            Err(e) => Err(e.to_string()),
        };
        if let Err(reason) = lingering {
            summary.push_str(&format!(
                "\nwarning: `loginctl {}` failed ({reason}), so the node runs only while you are \
                 logged in; ask an admin to run it to keep the node running after logout",
                linger.join(" ")
            ));
        }
        Ok(summary)
    }

    fn uninstall(&self) -> Result<String> {
        self.probe()?;
        if !self.installed() {
            return Ok(format!(
                "{UNIT_NAME} is not installed (no {})",
                self.unit_path.display()
            ));
        }
        let mut summary = String::new();
        if let Err(e) = self.systemctl(&["disable", "--now", UNIT_NAME]) {
            summary.push_str(&format!("warning: {e:#}\n"));
        }
        remove_service_file(&self.unit_path)?;
        self.systemctl(&["daemon-reload"])?;
        summary.push_str(&format!(
            "stopped and removed {UNIT_NAME} ({})",
            self.unit_path.display()
        ));
        Ok(summary)
    }

    fn start(&self) -> Result<String> {
        self.probe()?;
        self.require_installed()?;
        self.systemctl(&["start", UNIT_NAME])?;
        Ok(format!(
            "started {UNIT_NAME}; `gsv node logs --follow` shows what it does"
        ))
    }

    fn stop(&self) -> Result<String> {
        self.probe()?;
        self.require_installed()?;
        self.systemctl(&["stop", UNIT_NAME])?;
        Ok(format!(
            "stopped {UNIT_NAME}; it starts again at your next login (`gsv node uninstall` removes it)"
        ))
    }

    fn status(&self) -> Result<String> {
        let installed = if self.installed() {
            format!("yes ({})", self.unit_path.display())
        } else {
            format!(
                "no (no {}; `gsv node install` adds it)",
                self.unit_path.display()
            )
        };
        let state = match self.probe().and_then(|()| {
            self.systemctl(&[
                "show",
                UNIT_NAME,
                "--property=ActiveState,SubState,MainPID,UnitFileState",
            ])
        }) {
            Ok(out) => describe_show(&out.stdout),
            Err(e) => format!("unknown: {e:#}"),
        };
        Ok(format!(
            "service:   {UNIT_NAME} (systemd user unit)\ninstalled: {installed}\nstate:     {state}\nlog:       {}",
            self.log_path.display()
        ))
    }
}

/// `active (running), pid 42, enabled` from `systemctl show` properties.
fn describe_show(stdout: &str) -> String {
    let prop = |name: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let mut text = format!(
        "{} ({})",
        prop("ActiveState").unwrap_or("unknown"),
        prop("SubState").unwrap_or("unknown")
    );
    if let Some(pid) = prop("MainPID").filter(|p| *p != "0") {
        text.push_str(&format!(", pid {pid}"));
    }
    if let Some(file_state) = prop("UnitFileState") {
        text.push_str(&format!(", {file_state}"));
    }
    text
}
