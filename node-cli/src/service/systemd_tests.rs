use super::fake::{awkward_spec, plain_spec, FakeRunner, Reply};
use super::systemd::{exec_quote, unit_file, Systemd};
use super::{Manager, Runner, ServiceSpec};
use std::path::Path;

fn systemd<'a>(runner: &'a FakeRunner, dir: &Path) -> Systemd<'a> {
    Systemd {
        runner,
        unit_path: dir.join("systemd/user/gsv-node.service"),
        log_path: "/home/me/.gsv/logs/node.log".into(),
        user: Some("me".to_string()),
        gsv_home: None,
    }
}

const NO_BUS: &str = "Failed to connect to bus: No medium found";

#[test]
fn unit_file_quotes_awkward_paths() {
    let expected = r#"# Written by `gsv node install`; `gsv node uninstall` removes it.
[Unit]
Description=gsv node laptop 100%%

[Service]
Type=simple
ExecStart="/opt/my apps/gsv" node --foreground --id "laptop 100%%" --workspace "/home/a b/it's \"w\" 100%%$$HOME\\x" --verbose ";"
Restart=always
RestartSec=5
Environment="PATH=/usr/bin:/home/a b/bin:$X%%"
Environment="GSV_CONFIG_DIR=/cfg dir/<gsv> & co"
Environment=GSV_HOME=/gh

[Install]
WantedBy=default.target
"#;
    assert_eq!(unit_file(&awkward_spec(), Some(Path::new("/gh"))), expected);
}

#[test]
fn unit_file_for_plain_paths() {
    let expected = "# Written by `gsv node install`; `gsv node uninstall` removes it.
[Unit]
Description=gsv node laptop

[Service]
Type=simple
ExecStart=/usr/local/bin/gsv node --foreground --id laptop --workspace /home/me/work
Restart=always
RestartSec=5
Environment=PATH=/usr/local/bin:/usr/bin:/bin

[Install]
WantedBy=default.target
";
    assert_eq!(unit_file(&plain_spec(), None), expected);
}

#[test]
fn exec_words() {
    assert_eq!(exec_quote("/a/b-c_d.e"), "/a/b-c_d.e");
    assert_eq!(exec_quote(""), r#""""#);
    assert_eq!(exec_quote("a\nb\tc\u{1}"), r#""a\nb\tc\x01""#);
    assert_eq!(exec_quote("${HOME}"), r#""$${HOME}""#);
    assert_eq!(exec_quote("naïve"), r#""naïve""#);
}

#[test]
fn install_writes_the_unit_then_enables_it() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new();
    let sd = systemd(&runner, dir.path());
    let summary = sd.install(&plain_spec()).unwrap();
    assert_eq!(
        runner.calls(),
        [
            "systemctl --user show-environment",
            "systemctl --user daemon-reload",
            "systemctl --user enable --now gsv-node.service",
            "loginctl enable-linger me",
        ]
    );
    assert_eq!(
        std::fs::read_to_string(&sd.unit_path).unwrap(),
        unit_file(&plain_spec(), None)
    );
    assert_eq!(
        summary,
        format!(
            "installed gsv-node.service ({}) and started it\n\
             logs: /home/me/.gsv/logs/node.log (`gsv node logs --follow`)",
            sd.unit_path.display()
        )
    );
}

#[test]
fn reinstall_restarts_only_when_the_unit_changed() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new();
    let sd = systemd(&runner, dir.path());
    sd.install(&plain_spec()).unwrap();
    sd.install(&plain_spec()).unwrap();
    assert!(!runner.calls().iter().any(|c| c.contains("restart")));
    let moved = ServiceSpec {
        workspace: "/srv/other".into(),
        ..plain_spec()
    };
    let summary = sd.install(&moved).unwrap();
    assert!(summary.starts_with("updated gsv-node.service"), "{summary}");
    let calls = runner.calls();
    assert_eq!(
        calls[calls.len() - 3..],
        [
            "systemctl --user enable --now gsv-node.service",
            "systemctl --user restart gsv-node.service",
            "loginctl enable-linger me",
        ]
    );
}

#[test]
fn linger_failure_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new().on(
        "loginctl",
        Reply::Fail("Could not enable linger: Access denied"),
    );
    let summary = systemd(&runner, dir.path()).install(&plain_spec()).unwrap();
    assert!(summary.ends_with(
        "\nwarning: `loginctl enable-linger me` failed (Could not enable linger: Access denied), \
         so the node runs only while you are logged in; ask an admin to run it to keep the node \
         running after logout"
    ), "{summary}");
}

#[test]
fn missing_systemctl_is_an_actionable_error() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new().on("systemctl", Reply::Missing);
    let sd = systemd(&runner, dir.path());
    let err = sd.install(&plain_spec()).unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        "systemd user services are not available here (`systemctl` is not installed); \
         run `gsv node --foreground` instead, e.g. under your own supervisor"
    );
    assert!(
        !sd.unit_path.exists(),
        "nothing is written before the probe"
    );
    for result in [sd.uninstall(), sd.start(), sd.stop()] {
        assert!(format!("{:#}", result.unwrap_err())
            .starts_with("systemd user services are not available here"));
    }
}

#[test]
fn no_user_bus_is_an_actionable_error() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new().on("systemctl", Reply::Fail(NO_BUS));
    let sd = systemd(&runner, dir.path());
    let err = sd.install(&plain_spec()).unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        "systemd user services are not available here (`systemctl --user` says: Failed to \
         connect to bus: No medium found); run `gsv node --foreground` instead, e.g. under your \
         own supervisor"
    );
    assert_eq!(runner.calls(), ["systemctl --user show-environment"]);
    assert!(!sd.unit_path.exists());
}

#[test]
fn uninstall_disables_removes_and_reloads() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new();
    let sd = systemd(&runner, dir.path());
    assert_eq!(
        sd.uninstall().unwrap(),
        format!(
            "gsv-node.service is not installed (no {})",
            sd.unit_path.display()
        )
    );
    sd.install(&plain_spec()).unwrap();
    let before = runner.calls().len();
    let summary = sd.uninstall().unwrap();
    assert_eq!(
        runner.calls()[before..],
        [
            "systemctl --user show-environment",
            "systemctl --user disable --now gsv-node.service",
            "systemctl --user daemon-reload",
        ]
    );
    assert!(!sd.unit_path.exists());
    assert_eq!(
        summary,
        format!(
            "stopped and removed gsv-node.service ({})",
            sd.unit_path.display()
        )
    );
}

#[test]
fn start_and_stop_need_the_unit() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new();
    let sd = systemd(&runner, dir.path());
    let err = sd.start().unwrap_err().to_string();
    assert!(err.ends_with("run `gsv node install` first"), "{err}");
    sd.install(&plain_spec()).unwrap();
    let before = runner.calls().len();
    sd.stop().unwrap();
    sd.start().unwrap();
    assert_eq!(
        runner.calls()[before..],
        [
            "systemctl --user show-environment",
            "systemctl --user stop gsv-node.service",
            "systemctl --user show-environment",
            "systemctl --user start gsv-node.service",
        ]
    );
}

#[test]
fn status_summarises_the_unit() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new().on(
        "systemctl --user show gsv-node.service",
        Reply::Ok("ActiveState=active\nSubState=running\nMainPID=4242\nUnitFileState=enabled\n"),
    );
    let sd = systemd(&runner, dir.path());
    sd.install(&plain_spec()).unwrap();
    assert_eq!(
        sd.status().unwrap(),
        format!(
            "service:   gsv-node.service (systemd user unit)\n\
             installed: yes ({})\n\
             state:     active (running), pid 4242, enabled\n\
             log:       /home/me/.gsv/logs/node.log",
            sd.unit_path.display()
        )
    );
}

#[test]
fn status_without_systemd_still_answers() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new().on("systemctl", Reply::Fail(NO_BUS));
    let sd = systemd(&runner, dir.path());
    assert_eq!(
        sd.status().unwrap(),
        format!(
            "service:   gsv-node.service (systemd user unit)\n\
             installed: no (no {}; `gsv node install` adds it)\n\
             state:     unknown: systemd user services are not available here (`systemctl --user` \
             says: {NO_BUS}); run `gsv node --foreground` instead, e.g. under your own supervisor\n\
             log:       /home/me/.gsv/logs/node.log",
            sd.unit_path.display()
        )
    );
}

#[test]
fn the_real_runner_maps_a_missing_program() {
    let err = super::run(
        &super::SystemRunner,
        "things",
        "gsv-no-such-program-3f9",
        &[],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "things are not available here (`gsv-no-such-program-3f9` is not installed); \
         run `gsv node --foreground` instead, e.g. under your own supervisor"
    );
    let out = super::SystemRunner
        .run("sh", &["-c", "echo out; echo err >&2; exit 3"])
        .unwrap();
    assert_eq!(
        (out.success, out.stdout.as_str(), out.reason()),
        (false, "out\n", "err".to_string())
    );
}
