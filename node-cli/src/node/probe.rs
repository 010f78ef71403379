//! `node.probe` (kind `bins`): which of the binaries the gateway's skills
//! require are executable files on this machine's PATH. The PATH is the
//! one the agent's Bash commands get — the user's login shell's, read
//! from `$SHELL -lc env` — falling back to the daemon's own when that
//! shell fails or hangs (a service's PATH is often much shorter).

use crate::connection::Connection;
use crate::logs::NodeLog;
use crate::tools::Shell;
use gsv_protocol::{
    method, valid_bin_name, NodeProbeEvent, NodeProbeResultParams, PROBE_KIND_BINS,
};
use serde_json::json;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// The login shell gets at most this long to print its environment...
const MAX_SHELL_WAIT: Duration = Duration::from_secs(10);
/// ...and at most this share of the gateway's probe timeout, so the
/// answer still arrives in time when it has to fall back.
const SHELL_SHARE_OF_TIMEOUT: u32 = 2;
/// How long the answer's delivery may take.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(20);

/// Answers one probe on `conn`; runs in a task of its own, so tool calls
/// never wait for it.
pub async fn run(conn: &Connection, evt: NodeProbeEvent, log: &NodeLog) {
    let started = std::time::Instant::now();
    let result = answer(&evt, &Shell::from_env()).await;
    log.info(
        "bin probe",
        json!({"probeId": evt.probe_id, "ok": result.ok, "bins": result.bins,
               "error": result.error, "ms": started.elapsed().as_millis() as u64}),
    );
    if let Err(e) = conn
        .call_with_timeout::<method::NodeProbeResult>(&result, DELIVERY_TIMEOUT)
        .await
    {
        log.warn(
            "bin probe result not delivered",
            json!({"probeId": evt.probe_id, "error": e.to_string()}),
        );
    }
}

/// The answer to `evt`, looking bins up on the PATH `shell` reports.
/// Invalid names refuse the whole probe before any lookup: a name with a
/// `/` in it would be a path, not a bin.
pub async fn answer(evt: &NodeProbeEvent, shell: &Shell) -> NodeProbeResultParams {
    let refuse = |error: String| NodeProbeResultParams {
        probe_id: evt.probe_id.clone(),
        ok: false,
        bins: None,
        error: Some(error),
    };
    if evt.kind != PROBE_KIND_BINS {
        return refuse(format!(
            "unknown probe kind {:?} (this node probes \"{PROBE_KIND_BINS}\")",
            evt.kind
        ));
    }
    let invalid: Vec<&str> = evt
        .bins
        .iter()
        .map(String::as_str)
        .filter(|b| !valid_bin_name(b))
        .collect();
    if !invalid.is_empty() {
        return refuse(format!(
            "invalid bin names (allowed: letters, digits, '.', '_', '+', '-'): {invalid:?}"
        ));
    }
    let limit = evt
        .timeout_ms
        .map(|ms| Duration::from_millis(ms) / SHELL_SHARE_OF_TIMEOUT)
        .unwrap_or(MAX_SHELL_WAIT)
        .min(MAX_SHELL_WAIT);
    let path = match login_path(shell, limit).await {
        Some(p) => p,
        None => std::env::var_os("PATH").unwrap_or_default(),
    };
    let bins = evt.bins.clone();
    let found = tokio::task::spawn_blocking(move || find_bins(&path, &bins)).await;
    match found {
        Ok(bins) => NodeProbeResultParams {
            probe_id: evt.probe_id.clone(),
            ok: true,
            bins: Some(bins),
            error: None,
        },
        Err(e) => refuse(format!("the lookup failed: {e}")),
    }
}

/// The PATH of `shell`'s environment (`shell … env`), or `None` when it
/// does not print one within `limit`.
async fn login_path(shell: &Shell, limit: Duration) -> Option<OsString> {
    let child = tokio::process::Command::new(&shell.program)
        .args(&shell.args)
        .arg("env")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let out = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .ok()?
        .ok()?;
    path_from_env_output(&out.stdout)
}

/// The value of the last `PATH=` line of `env` output (a login shell's
/// own output may come first).
fn path_from_env_output(out: &[u8]) -> Option<OsString> {
    out.split(|b| *b == b'\n')
        .filter_map(|line| line.strip_prefix(b"PATH="))
        .next_back()
        .map(|v| OsString::from_vec(v.to_vec()))
}

/// For each bin, whether an executable file by that name is in a
/// directory of `path`.
pub fn find_bins(path: &OsStr, bins: &[String]) -> BTreeMap<String, bool> {
    let dirs: Vec<_> = std::env::split_paths(path)
        .filter(|d| !d.as_os_str().is_empty())
        .collect();
    bins.iter()
        .map(|b| {
            let found = dirs.iter().any(|d| is_executable_file(&d.join(b)));
            (b.clone(), found)
        })
        .collect()
}

fn is_executable_file(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write(path: &Path, text: &str, mode: u32) {
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    fn probe(bins: &[&str]) -> NodeProbeEvent {
        NodeProbeEvent {
            probe_id: "p1".into(),
            kind: "bins".into(),
            bins: bins.iter().map(|b| b.to_string()).collect(),
            timeout_ms: Some(4_000),
        }
    }

    fn map(pairs: &[(&str, bool)]) -> BTreeMap<String, bool> {
        pairs.iter().map(|(b, ok)| (b.to_string(), *ok)).collect()
    }

    #[test]
    fn finds_executable_files_only() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        std::fs::create_dir_all(a.join("a-dir")).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        write(&a.join("tool"), "#!/bin/sh\n", 0o755);
        write(&a.join("plain"), "text", 0o644);
        write(&b.join("real"), "#!/bin/sh\n", 0o700);
        std::os::unix::fs::symlink(b.join("real"), b.join("linked")).unwrap();
        std::os::unix::fs::symlink(b.join("nowhere"), b.join("dangling")).unwrap();
        let path =
            std::env::join_paths([a.as_path(), Path::new(""), Path::new("/no/such"), &b]).unwrap();
        let bins: Vec<String> = [
            "tool", "plain", "a-dir", "linked", "dangling", "real", "none",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            find_bins(&path, &bins),
            map(&[
                ("tool", true),
                ("plain", false),
                ("a-dir", false),
                ("linked", true),
                ("dangling", false),
                ("real", true),
                ("none", false),
            ])
        );
    }

    #[test]
    fn env_output_path_is_the_last_path_line() {
        let out = b"motd: hello\nPATH=/early\nHOME=/home/x\nPATH=/usr/bin:/bin\nNOPATH=1\n";
        assert_eq!(
            path_from_env_output(out),
            Some(OsString::from("/usr/bin:/bin"))
        );
        assert_eq!(path_from_env_output(b"HOME=/x\n"), None);
    }

    #[tokio::test]
    async fn uses_the_login_shell_path() {
        let tmp = tempfile::tempdir().unwrap();
        let bin_dir = tmp.path().join("bin");
        std::fs::create_dir(&bin_dir).unwrap();
        write(&bin_dir.join("only-here"), "#!/bin/sh\n", 0o755);
        // A "login shell" that prints noise and a PATH naming only bin_dir.
        let fake = tmp.path().join("fake-shell");
        write(
            &fake,
            &format!(
                "#!/bin/sh\necho welcome\necho 'PATH={}'\n",
                bin_dir.display()
            ),
            0o755,
        );
        let shell = Shell {
            program: fake,
            args: vec!["-lc".into()],
        };
        assert_eq!(
            answer(&probe(&["only-here", "sh"]), &shell).await,
            NodeProbeResultParams {
                probe_id: "p1".into(),
                ok: true,
                bins: Some(map(&[("only-here", true), ("sh", false)])),
                error: None,
            }
        );
    }

    #[tokio::test]
    async fn falls_back_to_the_own_path() {
        let shell = Shell {
            program: "/no/such/shell".into(),
            args: vec!["-lc".into()],
        };
        let got = answer(&probe(&["sh", "definitely-not-a-bin-xyz"]), &shell).await;
        assert_eq!(
            got.bins,
            Some(map(&[("definitely-not-a-bin-xyz", false), ("sh", true)]))
        );
    }

    #[tokio::test]
    async fn refuses_invalid_names_and_kinds() {
        let shell = Shell::sh();
        assert_eq!(
            answer(&probe(&["sh", "../../bin/sh", "a b"]), &shell).await,
            NodeProbeResultParams {
                probe_id: "p1".into(),
                ok: false,
                bins: None,
                error: Some(
                    "invalid bin names (allowed: letters, digits, '.', '_', '+', '-'): [\"../../bin/sh\", \"a b\"]"
                        .into()
                ),
            }
        );
        let mut evt = probe(&["sh"]);
        evt.kind = "files".into();
        assert_eq!(
            answer(&evt, &shell).await.error.as_deref(),
            Some("unknown probe kind \"files\" (this node probes \"bins\")")
        );
    }
}
