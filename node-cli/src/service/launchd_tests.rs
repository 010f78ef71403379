use super::fake::{awkward_spec, plain_spec, FakeRunner, Reply};
use super::launchd::{plist, xml_escape, Launchd};
use super::Manager;
use std::path::Path;
use std::time::Duration;

fn launchd<'a>(runner: &'a FakeRunner, dir: &Path) -> Launchd<'a> {
    Launchd {
        runner,
        plist_path: dir.join("LaunchAgents/dev.gsv.node.plist"),
        log_dir: dir.join("logs"),
        uid: 501,
        gsv_home: None,
        retry_delay: Duration::ZERO,
    }
}

const NOT_LOADED: &str = "Could not find service \"dev.gsv.node\" in domain for user gui: 501";

fn not_loaded() -> FakeRunner {
    FakeRunner::new().on(
        "launchctl print gui/501/dev.gsv.node",
        Reply::Fail(NOT_LOADED),
    )
}

const PRINT: &str = "gui/501/dev.gsv.node = {\n\tactive count = 1\n\tpath = /Users/me/Library/LaunchAgents/dev.gsv.node.plist\n\tstate = running\n\n\tprogram = /usr/local/bin/gsv\n\tpid = 4242\n\tlast exit code = (never exited)\n}\n";

#[test]
fn plist_escapes_awkward_paths() {
    let expected = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by `gsv node install`; `gsv node uninstall` removes it. -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>dev.gsv.node</string>
  <key>ProgramArguments</key>
  <array>
    <string>/opt/my apps/gsv</string>
    <string>node</string>
    <string>--foreground</string>
    <string>--id</string>
    <string>laptop 100%</string>
    <string>--workspace</string>
    <string>/home/a b/it&apos;s &quot;w&quot; 100%$HOME\x</string>
    <string>--verbose</string>
    <string>;</string>
  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <true/>
  <key>ThrottleInterval</key>
  <integer>5</integer>
  <key>EnvironmentVariables</key>
  <dict>
    <key>PATH</key>
    <string>/usr/bin:/home/a b/bin:$X%</string>
    <key>GSV_CONFIG_DIR</key>
    <string>/cfg dir/&lt;gsv&gt; &amp; co</string>
    <key>GSV_HOME</key>
    <string>/Users/me/gsv home</string>
  </dict>
  <key>StandardOutPath</key>
  <string>/Users/me/gsv home/logs/node.stdout.log</string>
  <key>StandardErrorPath</key>
  <string>/Users/me/gsv home/logs/node.stderr.log</string>
</dict>
</plist>
"#;
    let home = Path::new("/Users/me/gsv home");
    assert_eq!(
        plist(&awkward_spec(), Some(home), &home.join("logs")),
        expected
    );
}

#[test]
fn xml_text() {
    assert_eq!(xml_escape("a<b>&'\"c"), "a&lt;b&gt;&amp;&apos;&quot;c");
    assert_eq!(xml_escape("tab\tnl\nbell\u{7}"), "tab\tnl\nbell\u{fffd}");
}

#[test]
fn install_writes_the_plist_then_bootstraps() {
    let dir = tempfile::tempdir().unwrap();
    let runner = not_loaded();
    let ld = launchd(&runner, dir.path());
    let summary = ld.install(&plain_spec()).unwrap();
    let plist_path = ld.plist_path.display().to_string();
    assert_eq!(
        runner.calls(),
        [
            "launchctl print gui/501".to_string(),
            "launchctl print gui/501/dev.gsv.node".to_string(),
            "launchctl enable gui/501/dev.gsv.node".to_string(),
            format!("launchctl bootstrap gui/501 {plist_path}"),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(&ld.plist_path).unwrap(),
        plist(&plain_spec(), None, &ld.log_dir)
    );
    assert!(ld.log_dir.is_dir());
    assert_eq!(
        summary,
        format!(
            "installed dev.gsv.node ({plist_path}) and started it\nlogs: {} (`gsv node logs --follow`)",
            ld.log_dir.join("node.log").display()
        )
    );
}

#[test]
fn reinstall_boots_out_the_loaded_agent_first() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new();
    let ld = launchd(&runner, dir.path());
    ld.install(&plain_spec()).unwrap();
    assert_eq!(
        runner.calls()[1..4],
        [
            "launchctl print gui/501/dev.gsv.node",
            "launchctl bootout gui/501/dev.gsv.node",
            "launchctl enable gui/501/dev.gsv.node",
        ]
    );
}

#[test]
fn bootstrap_is_retried_then_reported() {
    let dir = tempfile::tempdir().unwrap();
    let runner = not_loaded().on(
        "launchctl bootstrap",
        Reply::Fail("Bootstrap failed: 5: Input/output error"),
    );
    let ld = launchd(&runner, dir.path());
    let err = ld.install(&plain_spec()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "`launchctl bootstrap gui/501 {}` failed: Bootstrap failed: 5: Input/output error",
            ld.plist_path.display()
        )
    );
    let bootstraps = runner
        .calls()
        .iter()
        .filter(|c| c.contains("bootstrap"))
        .count();
    assert_eq!(bootstraps, 3);
}

#[test]
fn missing_launchctl_or_gui_domain_is_an_actionable_error() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new().on("launchctl", Reply::Missing);
    let ld = launchd(&runner, dir.path());
    assert_eq!(
        ld.install(&plain_spec()).unwrap_err().to_string(),
        "launchd agents are not available here (`launchctl` is not installed); \
         run `gsv node --foreground` instead, e.g. under your own supervisor"
    );
    assert!(!ld.plist_path.exists());

    let runner = FakeRunner::new().on(
        "launchctl print gui/501",
        Reply::Fail("Bad request.\nCould not find domain for user gui: 501"),
    );
    let ld = launchd(&runner, dir.path());
    assert_eq!(
        ld.install(&plain_spec()).unwrap_err().to_string(),
        "launchd agents are not available here (`launchctl print gui/501` says: Bad request.); \
         run `gsv node --foreground` instead, e.g. under your own supervisor"
    );
    assert_eq!(runner.calls(), ["launchctl print gui/501"]);
}

#[test]
fn uninstall_boots_out_and_removes_the_plist() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new();
    let ld = launchd(&runner, dir.path());
    ld.install(&plain_spec()).unwrap();
    let before = runner.calls().len();
    let summary = ld.uninstall().unwrap();
    assert_eq!(
        runner.calls()[before..],
        [
            "launchctl print gui/501",
            "launchctl print gui/501/dev.gsv.node",
            "launchctl bootout gui/501/dev.gsv.node",
        ]
    );
    assert!(!ld.plist_path.exists());
    assert_eq!(
        summary,
        format!(
            "stopped and removed dev.gsv.node ({})",
            ld.plist_path.display()
        )
    );
}

#[test]
fn start_kickstarts_a_loaded_agent_and_bootstraps_a_stopped_one() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new();
    let ld = launchd(&runner, dir.path());
    assert!(ld
        .start()
        .unwrap_err()
        .to_string()
        .ends_with("run `gsv node install` first"));
    ld.install(&plain_spec()).unwrap();
    let before = runner.calls().len();
    assert_eq!(ld.start().unwrap(), "restarted dev.gsv.node");
    ld.stop().unwrap();
    assert_eq!(
        runner.calls()[before..],
        [
            "launchctl print gui/501",
            "launchctl print gui/501/dev.gsv.node",
            "launchctl kickstart -k gui/501/dev.gsv.node",
            "launchctl print gui/501",
            "launchctl print gui/501/dev.gsv.node",
            "launchctl bootout gui/501/dev.gsv.node",
        ]
    );

    let runner = not_loaded();
    let ld = launchd(&runner, dir.path());
    ld.start().unwrap();
    assert_eq!(
        runner.calls().last().unwrap(),
        &format!("launchctl bootstrap gui/501 {}", ld.plist_path.display())
    );
    assert_eq!(ld.stop().unwrap(), "dev.gsv.node is not running");
}

#[test]
fn status_reads_launchctl_print() {
    let dir = tempfile::tempdir().unwrap();
    let runner = FakeRunner::new().on("launchctl print gui/501/dev.gsv.node", Reply::Ok(PRINT));
    let ld = launchd(&runner, dir.path());
    ld.install(&plain_spec()).unwrap();
    assert_eq!(
        ld.status().unwrap(),
        format!(
            "service:   dev.gsv.node (launchd agent)\n\
             installed: yes ({})\n\
             state:     running, pid 4242, last exit code (never exited)\n\
             log:       {}",
            ld.plist_path.display(),
            ld.log_dir.join("node.log").display()
        )
    );
    let runner = not_loaded();
    let status = launchd(&runner, dir.path()).status().unwrap();
    assert!(
        status.contains("\nstate:     not loaded (stopped)\n"),
        "{status}"
    );
}
