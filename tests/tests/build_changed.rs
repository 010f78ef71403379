//! `scripts/build-changed.sh`, which lets a second `scripts/dev.sh` serve
//! without rebuilding: a build runs when its inputs changed (an edit, a new
//! file, a different command) or its output is gone, and not otherwise.
//! Run on a copy of the script in a scratch git repository.

// Test support: a failed unwrap here is a failed test or a broken fixture.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::harness::repo_root;
use std::path::Path;
use std::process::Command;

fn run(dir: &Path, program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{program} {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Runs the build of `out.txt` from `src/` (and `Cargo.lock`), counting
/// its runs in `runs.log`; what the script printed.
fn build(dir: &Path, command: &str) -> String {
    run(
        dir,
        "bash",
        &[
            "scripts/build-changed.sh",
            "thing",
            "out.txt",
            "src",
            "Cargo.lock",
            "--",
            "bash",
            "-c",
            command,
        ],
    )
}

fn runs(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("runs.log"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[test]
fn builds_only_when_an_input_or_the_command_changed_or_the_output_is_gone() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::copy(
        repo_root().join("scripts").join("build-changed.sh"),
        dir.join("scripts").join("build-changed.sh"),
    )
    .unwrap();
    std::fs::write(
        dir.join(".gitignore"),
        "/out.txt\n/runs.log\n/.gsv\n/src/ignored\n",
    )
    .unwrap();
    std::fs::write(dir.join("src").join("a.rs"), "fn a() {}\n").unwrap();
    std::fs::write(dir.join("Cargo.lock"), "# lock\n").unwrap();
    run(dir, "git", &["init", "-q"]);
    run(dir, "git", &["add", "."]);
    let make = "echo built >> runs.log && echo out > out.txt";

    // First time: built. Again with nothing changed: not.
    assert_eq!(build(dir, make), "");
    assert_eq!(build(dir, make), "thing: up to date\n");
    assert_eq!(runs(dir), 1);

    // An edit (not yet staged), a new untracked file, a rename: each is
    // built once.
    std::fs::write(dir.join("src").join("a.rs"), "fn a() { }\n").unwrap();
    build(dir, make);
    assert_eq!(build(dir, make), "thing: up to date\n");
    std::fs::write(dir.join("src").join("b.rs"), "fn b() {}\n").unwrap();
    build(dir, make);
    std::fs::rename(dir.join("src").join("b.rs"), dir.join("src").join("c.rs")).unwrap();
    build(dir, make);
    assert_eq!(runs(dir), 4);

    // An ignored file is no input; a file outside the inputs neither.
    std::fs::write(dir.join("src").join("ignored"), "x").unwrap();
    std::fs::write(dir.join("README.md"), "hello").unwrap();
    assert_eq!(build(dir, make), "thing: up to date\n");

    // The output gone, or another command: built again.
    std::fs::remove_file(dir.join("out.txt")).unwrap();
    build(dir, make);
    build(dir, &format!("{make} && true"));
    assert_eq!(runs(dir), 6);

    // A failed build leaves no stamp: the next start tries again.
    std::fs::write(dir.join("Cargo.lock"), "# lock 2\n").unwrap();
    let failed = Command::new("bash")
        .args([
            "scripts/build-changed.sh",
            "thing",
            "out.txt",
            "src",
            "Cargo.lock",
            "--",
        ])
        .args(["bash", "-c", "echo built >> runs.log; exit 3"])
        .current_dir(dir)
        .status()
        .unwrap();
    assert_eq!(failed.code(), Some(3));
    build(dir, make);
    assert_eq!(runs(dir), 8);
}
