//! Toolbox-level tests and helpers for the tools' tests.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::json;

use super::*;

/// A toolbox confined to `<tempdir>/ws`, running commands with `/bin/sh -c`
/// (no login-shell profile output in the tests).
pub fn toolbox() -> (
    tempfile::TempDir,
    Toolbox,
    mpsc::UnboundedReceiver<NodeExecEventParams>,
) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    fs::create_dir(&ws).unwrap();
    let (tb, rx) = Toolbox::with_shell(ws, true, Shell::sh()).unwrap();
    (dir, tb, rx)
}

/// Writes `content` to `path` (creating parents) with an mtime of
/// `secs` seconds after a fixed instant.
pub fn touch(path: &Path, content: &str, secs: u64) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000 + secs);
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

#[tokio::test]
async fn definitions_are_ordered_and_described() {
    let (_dir, tb, _rx) = toolbox();
    let defs = tb.definitions();
    let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        ["Bash", "Process", "Read", "Write", "Edit", "Glob", "Grep"]
    );
    for d in &defs {
        assert!(!d.description.is_empty());
        assert_eq!(d.input_schema["type"], "object", "{}", d.name);
        for req in d.input_schema["required"].as_array().unwrap() {
            let req = req.as_str().unwrap();
            assert!(
                d.input_schema["properties"][req].is_object(),
                "{} {req}",
                d.name
            );
        }
    }
}

#[tokio::test]
async fn runtime_info_declares_capabilities() {
    let (_dir, tb, _rx) = toolbox();
    let info = serde_json::to_value(tb.runtime_info()).unwrap();
    assert_eq!(info["hostRole"], "execution");
    assert_eq!(
        info["hostCapabilities"],
        json!([
            "filesystem.list",
            "filesystem.read",
            "filesystem.write",
            "filesystem.edit",
            "text.search",
            "shell.exec"
        ])
    );
    assert_eq!(
        info["toolCapabilities"],
        json!({
            "Bash": ["shell.exec"],
            "Process": ["shell.exec"],
            "Read": ["filesystem.read"],
            "Write": ["filesystem.write"],
            "Edit": ["filesystem.edit", "filesystem.read", "filesystem.write"],
            "Glob": ["filesystem.list"],
            "Grep": ["text.search", "filesystem.read"]
        })
    );
    assert_eq!(info["hostOs"], std::env::consts::OS);
    let env: Vec<String> = serde_json::from_value(info["hostEnv"].clone()).unwrap();
    let mut sorted = env.clone();
    sorted.sort();
    assert_eq!(env, sorted);
    assert!(env.iter().any(|k| k == "PATH"));
    assert!(!env.iter().any(|k| k.contains('=')), "names only");
}

#[tokio::test]
async fn unknown_tools_and_bad_arguments_are_errors() {
    let (_dir, tb, _rx) = toolbox();
    assert_eq!(
        tb.call("Nope", json!({}), None).await.unwrap_err(),
        "unknown tool \"Nope\" (this node offers Bash, Process, Read, Write, Edit, Glob, Grep)"
    );
    assert_eq!(
        tb.call("Read", json!("x"), None).await.unwrap_err(),
        "arguments must be a JSON object, got a string"
    );
    assert_eq!(
        tb.call("Read", json!({"path": 3}), None).await.unwrap_err(),
        "argument `path` must be a string, got a number 3"
    );
    assert_eq!(
        tb.call("Bash", json!({"command": "  "}), None)
            .await
            .unwrap_err(),
        "argument `command` must not be empty"
    );
    assert_eq!(
        tb.call("Grep", json!({"pattern": "("}), None)
            .await
            .unwrap_err()
            .lines()
            .next()
            .unwrap(),
        "invalid regex (: regex parse error:"
    );
    // Names are matched case-insensitively as a fallback.
    assert!(tb
        .call("read", json!({"path": "missing"}), None)
        .await
        .unwrap_err()
        .contains("does not exist"));
}

#[tokio::test]
async fn opting_out_of_confinement_allows_outside_paths() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    fs::create_dir(&ws).unwrap();
    let outside = fs::canonicalize(dir.path()).unwrap().join("outside.txt");
    fs::write(&outside, "out\n").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    let (tb, _rx) = Toolbox::with_shell(ws.clone(), false, Shell::sh()).unwrap();
    let out = tb
        .call("Read", json!({"path": "../outside.txt"}), None)
        .await
        .unwrap();
    assert_eq!(out["content"], "     1\tout");
    let out = tb
        .call("Read", json!({"path": "link"}), None)
        .await
        .unwrap();
    assert_eq!(out["path"], show(&outside));
    let (tb, _rx) = Toolbox::with_shell(ws, true, Shell::sh()).unwrap();
    let err = tb
        .call("Read", json!({"path": show(&outside)}), None)
        .await
        .unwrap_err();
    assert!(err.contains("is outside the node workspace"), "{err}");
    let err = tb
        .call("Bash", json!({"command": "pwd", "workdir": ".."}), None)
        .await
        .unwrap_err();
    assert!(
        err.starts_with("workdir .. is outside the node workspace"),
        "{err}"
    );
}
