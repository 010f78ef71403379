//! `gsv setup` end to end, against the real gateway and the fake LLM: run
//! by a script (flags, a key from an environment variable or standard
//! input, nothing asked), then by a person at a terminal (a pseudo-terminal
//! with echo on: the prompts show, typed keys do not, a refused key is
//! asked again, steps are skipped). One gateway for both: they follow one
//! another on its config. The CLI's own config lives in a temporary
//! directory (GSV_CONFIG_DIR), never the user's.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{Api, FakeLlm, FAKE_API_KEY};
use gsv_e2e::harness::{gsv_bin, GatewayOptions, Workerd};
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const TOKEN: &str = "test-token";
const BAD_KEY: &str = "sk-wrong-key-4711";
const TYPED_BAD_KEY: &str = "sk-typed-bad-key-0815";

/// `gsv` with its local config in `config_dir`, run in `cwd` (no
/// `.dev.vars` above it), nothing inherited that would choose for it.
fn gsv(config_dir: &Path, cwd: &Path) -> Command {
    let mut cmd = Command::new(gsv_bin());
    cmd.env("GSV_CONFIG_DIR", config_dir)
        .env("GSV_HOME", config_dir)
        .env_remove("GSV_URL")
        .env_remove("GSV_TOKEN")
        .env_remove("TZ")
        .current_dir(cwd);
    cmd
}

fn run(mut cmd: Command, stdin: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `gsv config get PATH` through the URL and token stored in `config_dir`.
fn config_get(config_dir: &Path, cwd: &Path, path: &str) -> Value {
    let mut cmd = gsv(config_dir, cwd);
    cmd.args(["config", "get", path]);
    let out = run(cmd, "");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "config get {path}: {stderr}");
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn setup_by_script_then_at_a_terminal() {
    let llm = FakeLlm::start_blocking();
    let gw = Workerd::start(GatewayOptions::default());
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let dir = home.path();

    // (a) A script. A refused key: said in plain words, the run fails,
    // nothing of the model is stored, and the key is not repeated.
    let mut cmd = gsv(dir, cwd.path());
    cmd.args([
        "setup",
        "--non-interactive",
        "--url",
        &gw.url(),
        "--token",
        TOKEN,
    ])
    .args(["--provider", "openai", "--base-url", &llm.base_url_openai()])
    .args(["--api-key-env", "SETUP_KEY", "--no-channel", "--no-node"])
    .env("SETUP_KEY", BAD_KEY);
    let out = run(cmd, "");
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("The key was refused: openai rejected the API key")
            && stderr.contains("Nothing was stored for the model."),
        "{stderr}"
    );
    // Not even the part a provider shows of a key it refused (OpenAI's
    // sk-****4711).
    assert!(!format!("{stdout}{stderr}").contains(&BAD_KEY[BAD_KEY.len() - 4..]));
    let asked = llm.requests();
    assert_eq!(
        asked
            .iter()
            .map(|r| (r.api, r.api_key.as_deref()))
            .collect::<Vec<_>>(),
        [(Api::OpenAi, Some(BAD_KEY))],
        "one check, with the key given"
    );
    assert_eq!(config_get(dir, cwd.path(), "apiKeys"), json!({}));
    assert_eq!(
        config_get(dir, cwd.path(), "model.provider"),
        json!("anthropic")
    );
    llm.clear_requests();

    // A provider whose key is missing: nothing asked, nothing called.
    let mut cmd = gsv(dir, cwd.path());
    cmd.args(["setup", "--non-interactive", "--provider", "groq"]);
    let out = run(cmd, "");
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains(
            "groq needs an API key and none is set. Give it with --api-key-env VAR (the key \
             in an environment variable) or --api-key - (read from standard input), or skip \
             this step with --skip model."
        ),
        "{stderr}"
    );
    assert!(llm.requests().is_empty());

    // The good key from standard input; the gateway's URL and token come
    // from the local config the first run stored; the time zone is this
    // system's (TZ).
    let mut cmd = gsv(dir, cwd.path());
    cmd.args(["setup", "--non-interactive", "--provider", "openai"])
        .args(["--api-key", "-", "--no-channel", "--no-node"])
        .env("TZ", "Europe/Paris");
    let out = run(cmd, &format!("{FAKE_API_KEY}\n"));
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!format!("{stdout}{stderr}").contains(FAKE_API_KEY));
    assert!(
        stdout.contains("openai answered with gpt-5 in ")
            && stdout.contains("Stored the key as apiKeys.openai")
            && stdout.contains("  model      openai / gpt-5 (key stored) (set)\n")
            && stdout.contains("  time zone  Europe/Paris (set)\n")
            && stdout.ends_with("\nNext: gsv chat \"hello\"\n"),
        "{stdout}"
    );
    let asked = llm.requests();
    assert_eq!(asked.len(), 1, "exactly one check request");
    assert_eq!(
        (
            asked[0].api,
            asked[0].api_key.as_deref(),
            &asked[0].body["model"]
        ),
        (Api::OpenAi, Some(FAKE_API_KEY), &json!("gpt-5"))
    );
    assert_eq!(
        config_get(dir, cwd.path(), "apiKeys"),
        json!({"openai": "***"})
    );
    assert_eq!(
        config_get(dir, cwd.path(), "model.provider"),
        json!("openai")
    );
    assert_eq!(
        config_get(dir, cwd.path(), "userTimezone"),
        json!("Europe/Paris")
    );
    let local = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    assert!(
        local.contains(&format!("url = \"{}\"", gw.url()))
            && local.contains(&format!("token = \"{TOKEN}\"")),
        "{local}"
    );
    llm.clear_requests();

    // (b) A person at a terminal, a fresh local config: the URL typed
    // (echoed), the token asked once the gateway wants one (hidden), the
    // current values shown, a typed key refused and asked again, the good
    // one kept, the time zone skipped, no chat app, no node.
    let fresh = tempfile::tempdir().unwrap();
    let d = fresh.path();
    let mut p = at_a_terminal(
        d,
        cwd.path(),
        &["setup", "--base-url", &llm.base_url_anthropic()],
    );
    let mut seen = String::new();
    let mut expect = |p: &mut rexpect::session::PtySession, needle: &str| {
        let before = p
            .exp_string(needle)
            .unwrap_or_else(|e| panic!("waiting for {needle:?}: {e}\nso far:\n{seen}"));
        seen.push_str(&before);
        seen.push_str(needle);
    };
    expect(
        &mut p,
        "Gateway URL (a deployed one is wss://gsv.<you>.workers.dev/ws) [ws://127.0.0.1:8787/ws]: ",
    );
    p.send_line(&gw.url()).unwrap();
    expect(&mut p, "The gateway wants a token.");
    expect(
        &mut p,
        "Gateway token (its GSV_AUTH_TOKEN: in .dev.vars locally; hidden, Enter stops): ",
    );
    p.send_line(TOKEN).unwrap();
    expect(&mut p, "Connected to ");
    expect(&mut p, "  model      openai / gpt-5 (key set)");
    expect(&mut p, "* 2) openai      OpenAI  [key set, current]");
    expect(&mut p, "Provider [openai]: ");
    p.send_line("anthropic").unwrap();
    expect(
        &mut p,
        "API key for anthropic (hidden; Enter skips this step): ",
    );
    p.send_line(TYPED_BAD_KEY).unwrap();
    expect(&mut p, "Model [claude-sonnet-4-20250514]: ");
    p.send_line("").unwrap();
    expect(
        &mut p,
        "The key was refused: anthropic rejected the API key",
    );
    expect(
        &mut p,
        "API key for anthropic (hidden; Enter skips this step): ",
    );
    p.send_line(FAKE_API_KEY).unwrap();
    expect(
        &mut p,
        "anthropic answered with claude-sonnet-4-20250514 in ",
    );
    expect(&mut p, "[Europe/Paris, set now]: ");
    p.send_line("skip").unwrap();
    expect(
        &mut p,
        "Connect a chat app now? discord, telegram, whatsapp (a business number), \
         whatsapp-web (your own number), or Enter for none: ",
    );
    p.send_line("").unwrap();
    expect(&mut p, "? [y/N] ");
    p.send_line("").unwrap();
    expect(&mut p, "Setup summary:");
    let rest = p.exp_eof().unwrap();
    seen.push_str(&rest);
    let seen = seen.replace("\r\n", "\n");
    assert!(
        seen.contains("  model      anthropic / claude-sonnet-4-20250514 (key stored) (set)\n")
            && seen.contains("  time zone  skipped: you skipped it\n")
            && seen.contains("  channel    skipped: none chosen\n")
            && seen.contains("  node       skipped: not asked for (--node)\n")
            && seen.ends_with("Next: gsv chat \"hello\"\n"),
        "{seen}"
    );
    // What was typed at the visible prompts shows; keys and the token do not.
    assert!(
        seen.contains(&format!("[ws://127.0.0.1:8787/ws]: {}\n", gw.url())),
        "{seen}"
    );
    assert!(seen.contains("Provider [openai]: anthropic\n"), "{seen}");
    for secret in [TYPED_BAD_KEY, FAKE_API_KEY, TOKEN] {
        assert!(!seen.contains(secret), "{secret} shown:\n{seen}");
    }
    let keys: Vec<(Api, Option<String>)> = llm
        .requests()
        .into_iter()
        .map(|r| (r.api, r.api_key))
        .collect();
    assert_eq!(
        keys,
        [
            (Api::Anthropic, Some(TYPED_BAD_KEY.to_string())),
            (Api::Anthropic, Some(FAKE_API_KEY.to_string()))
        ]
    );
    assert_eq!(
        config_get(d, cwd.path(), "apiKeys"),
        json!({"openai": "***", "anthropic": "***"})
    );
    assert_eq!(
        config_get(d, cwd.path(), "model.provider"),
        json!("anthropic")
    );
    assert_eq!(
        config_get(d, cwd.path(), "userTimezone"),
        json!("Europe/Paris")
    );
    llm.clear_requests();

    // --yes at a terminal: every value has a default now, so nothing is
    // asked; the stored key is checked (none sent), everything kept.
    let mut p = at_a_terminal(d, cwd.path(), &["setup", "--yes"]);
    let all = p.exp_eof().unwrap().replace("\r\n", "\n");
    assert!(
        !all.contains("]: ")
            && all.contains("  gateway    ws://127.0.0.1:")
            && all.contains("  model      anthropic / claude-sonnet-4-20250514 (key kept)\n")
            && all.contains("  time zone  Europe/Paris\n")
            && all.contains(
                "  channel    skipped: none asked for (--discord-bot-token, --telegram-bot-token, \
                 --whatsapp, --whatsapp-web)\n"
            )
            && all.ends_with("Next: gsv chat \"hello\"\n"),
        "{all}"
    );
    let keys: Vec<Option<String>> = llm.requests().into_iter().map(|r| r.api_key).collect();
    assert_eq!(keys, [Some(FAKE_API_KEY.to_string())]);
}

/// `gsv ARGS` in a pseudo-terminal with echo on (rexpect turns it off; a
/// person's terminal has it on, and only with it on does "not echoed"
/// mean something), its local config in `config_dir`, TZ Asia/Tokyo.
fn at_a_terminal(config_dir: &Path, cwd: &Path, args: &[&str]) -> rexpect::session::PtySession {
    let mut cmd = gsv(config_dir, cwd);
    cmd.env("TZ", "Asia/Tokyo");
    let mut shell = Command::new("sh");
    shell
        .args(["-c", "stty echo && exec \"$0\" \"$@\""])
        .arg(gsv_bin())
        .args(args)
        .current_dir(cwd);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => shell.env(k, v),
            None => shell.env_remove(k),
        };
    }
    rexpect::session::spawn_command(shell, Some(30_000)).unwrap()
}

/// The CLI's list of providers is the gateway's (src/llm/named.rs): its
/// help names each with its default model, which is what setup offers.
#[test]
fn setup_knows_the_gateways_providers() {
    let out = Command::new(gsv_bin())
        .args(["setup", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for n in gsv_gateway::llm::named::NAMED {
        let entry = format!("{} ({}", n.name, n.default_model);
        assert!(flat.contains(&entry), "{entry} missing:\n{help}");
        let keyless = format!("{entry}, no key");
        assert_eq!(flat.contains(&keyless), !n.needs_key, "{}", n.name);
    }
}
