//! `npm run deploy` (`scripts/deploy.sh`), offline: the dry run bundles
//! the Workers with the real wrangler and checks bindings and sizes; the
//! real run goes against a stub `wrangler` that records what it was asked
//! (the one place a double stands in for Cloudflare, which nothing here
//! can reach). Both run through npm, as docs/deploying.md says.
// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::harness::{gsv_bin, repo_root};
use gsv_protocol::channel_key::derive_channel_key;
use std::path::Path;
use std::process::Command;

/// A `wrangler` that logs each call's arguments and stdin, one JSON line
/// each, and answers like the real one where the script reads its output.
const STUB: &str = r#"#!/usr/bin/env bash
stdin=""
if [ "$1" = "secret" ]; then stdin="$(cat)"; fi
node -e 'console.log(JSON.stringify({cwd: process.argv[1], args: process.argv.slice(3), stdin: process.argv[2]}))' \
  "$(basename "$PWD")" "$stdin" "$@" >> "$STUB_LOG"
case "$1 $2" in
  "r2 bucket") if [ "$3" = list ] && [ -f "$STUB_LOG.bucket" ]; then echo "name:           gsv-storage"; fi
               if [ "$3" = create ]; then touch "$STUB_LOG.bucket"; fi ;;
  "deploy "*|"deploy") case "$(basename "$PWD")" in
                         discord) echo "Deployed gsv-channel-discord triggers" ;;
                         whatsapp) echo "Deployed gsv-channel-whatsapp triggers"; echo "  https://gsv-channel-whatsapp.someone.workers.dev" ;;
                         telegram) echo "Deployed gsv-channel-telegram triggers"; echo "  https://gsv-channel-telegram.someone.workers.dev" ;;
                         whatsapp-web) echo "Deployed gsv-channel-whatsapp-web" ;;
                         *) echo "Deployed gsv triggers"; echo "  https://gsv.someone.workers.dev" ;;
                       esac ;;
esac
"#;

struct Run {
    log: Vec<serde_json::Value>,
    stdout: String,
}

/// `npm run deploy -- ARGS`, quiet about itself (npm's banner).
fn npm_run(script: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new("npm");
    cmd.args(["run", "--silent", script]);
    if !args.is_empty() {
        cmd.arg("--").args(args);
    }
    cmd.current_dir(repo_root());
    cmd
}

fn deploy(home: &Path, stub_dir: &Path, env: &[(&str, &str)]) -> Run {
    let log = stub_dir.join("calls.jsonl");
    // This run's calls only (the stub's bucket mark stays).
    let _ = std::fs::remove_file(&log);
    let out = npm_run("deploy", &[])
        .env("WRANGLER", stub_dir.join("wrangler"))
        .env("STUB_LOG", &log)
        .env("GSV", gsv_bin())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "deploy.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Run {
        log,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    }
}

fn calls(run: &Run) -> Vec<String> {
    run.log
        .iter()
        .map(|c| {
            let args: Vec<&str> = c["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            format!("{}: {}", c["cwd"].as_str().unwrap(), args.join(" "))
        })
        .collect()
}

fn secret(run: &Run, name: &str) -> String {
    run.log
        .iter()
        .find(|c| c["args"][0] == "secret" && c["args"][2] == name)
        .map(|c| c["stdin"].as_str().unwrap().to_string())
        .unwrap_or_else(|| panic!("no secret {name} in {:?}", calls(run)))
}

#[test]
fn one_command_deploys_the_workers_with_their_secrets_and_is_safe_to_repeat() {
    let stub = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let wrangler = stub.path().join("wrangler");
    std::fs::write(&wrangler, STUB).unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&wrangler)
        .status()
        .unwrap();
    // The script keeps its token in the checkout's .gsv/deploy.env; this
    // test must not take a developer's, so it sets one aside and back.
    let env_file = repo_root().join(".gsv").join("deploy.env");
    let kept = std::fs::read(&env_file).ok();
    let _ = std::fs::remove_file(&env_file);

    let first = deploy(
        home.path(),
        stub.path(),
        &[
            ("DISCORD_BOT_TOKEN", "bot-secret"),
            ("WHATSAPP_APP_SECRET", "app-secret"),
            ("WHATSAPP_ACCESS_TOKEN", "EAAG-token"),
            ("WHATSAPP_PHONE_NUMBER_ID", "106540352242922"),
            ("TELEGRAM_BOT_TOKEN", "123456:tg-secret"),
        ],
    );
    let root = repo_root();
    let top = root.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        calls(&first),
        [
            format!("{top}: r2 bucket list"),
            format!("{top}: r2 bucket create gsv-storage"),
            format!("{top}: deploy"),
            format!("{top}: secret put GSV_AUTH_TOKEN"),
            "discord: deploy".to_string(),
            "discord: secret put GSV_CHANNEL_KEY".to_string(),
            "discord: secret put DISCORD_BOT_TOKEN".to_string(),
            "whatsapp: deploy --var WHATSAPP_PHONE_NUMBER_ID:106540352242922".to_string(),
            "whatsapp: secret put GSV_CHANNEL_KEY".to_string(),
            "whatsapp: secret put WHATSAPP_VERIFY_TOKEN".to_string(),
            "whatsapp: secret put WHATSAPP_APP_SECRET".to_string(),
            "whatsapp: secret put WHATSAPP_ACCESS_TOKEN".to_string(),
            // The webhook's origin: its workers.dev URL, on the gateway's subdomain.
            "telegram: deploy --var TELEGRAM_PUBLIC_URL:https://gsv-channel-telegram.someone.workers.dev"
                .to_string(),
            "telegram: secret put GSV_CHANNEL_KEY".to_string(),
            "telegram: secret put TELEGRAM_BOT_TOKEN".to_string(),
            "whatsapp-web: deploy".to_string(),
            "whatsapp-web: secret put GSV_CHANNEL_KEY".to_string(),
        ]
    );
    let token = secret(&first, "GSV_AUTH_TOKEN");
    assert_eq!(token.len(), 64);
    assert_eq!(
        secret(&first, "GSV_CHANNEL_KEY"),
        derive_channel_key(&token)
    );
    assert_eq!(secret(&first, "DISCORD_BOT_TOKEN"), "bot-secret");
    assert_eq!(secret(&first, "WHATSAPP_APP_SECRET"), "app-secret");
    assert_eq!(secret(&first, "WHATSAPP_ACCESS_TOKEN"), "EAAG-token");
    assert_eq!(secret(&first, "TELEGRAM_BOT_TOKEN"), "123456:tg-secret");
    // The verify token is made once and kept beside the auth token.
    let verify = secret(&first, "WHATSAPP_VERIFY_TOKEN");
    assert_eq!(verify.len(), 32);
    assert_eq!(
        std::fs::read_to_string(&env_file).unwrap(),
        format!("GSV_AUTH_TOKEN={token}\nWHATSAPP_VERIFY_TOKEN={verify}\n")
    );
    assert_eq!(
        first.stdout,
        "gateway: https://gsv.someone.workers.dev\n\
         channel: gsv-channel-discord (no public route; reached through the gateway's binding)\n\
         next: gsv channel start discord\n\
         whatsapp: https://gsv-channel-whatsapp.someone.workers.dev/webhook (Meta's callback URL; its verify token is WHATSAPP_VERIFY_TOKEN in .gsv/deploy.env)\n\
         next: gsv channel start whatsapp\n\
         telegram: https://gsv-channel-telegram.someone.workers.dev/webhook/<account> (set with Telegram at start, with a secret of its own)\n\
         next: gsv channel start telegram\n\
         whatsapp-web: your own number, linked as a device: gsv channel login whatsapp-web (channels/whatsapp-web/README.md)\n"
    );
    assert!(!first.stdout.contains(&verify));
    // The CLI points at the deployed gateway with the token.
    let show = Command::new(gsv_bin())
        .args(["local-config", "get", "gateway.url"])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&show.stdout).trim(),
        "wss://gsv.someone.workers.dev/ws"
    );
    let token_set = Command::new(gsv_bin())
        .args(["local-config", "get", "gateway.token"])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&token_set.stdout).trim(), token);

    // Again: the bucket is there, the token is the same.
    let again = deploy(home.path(), stub.path(), &[]);
    assert_eq!(
        calls(&again),
        [
            format!("{top}: r2 bucket list"),
            format!("{top}: deploy"),
            format!("{top}: secret put GSV_AUTH_TOKEN"),
            "discord: deploy".to_string(),
            "discord: secret put GSV_CHANNEL_KEY".to_string(),
            "whatsapp: deploy".to_string(),
            "whatsapp: secret put GSV_CHANNEL_KEY".to_string(),
            "whatsapp: secret put WHATSAPP_VERIFY_TOKEN".to_string(),
            "telegram: deploy --var TELEGRAM_PUBLIC_URL:https://gsv-channel-telegram.someone.workers.dev"
                .to_string(),
            "telegram: secret put GSV_CHANNEL_KEY".to_string(),
            "whatsapp-web: deploy".to_string(),
            "whatsapp-web: secret put GSV_CHANNEL_KEY".to_string(),
        ]
    );
    assert_eq!(secret(&again, "GSV_AUTH_TOKEN"), token);
    assert_eq!(secret(&again, "WHATSAPP_VERIFY_TOKEN"), verify);
    assert_eq!(
        again.stdout,
        "gateway: https://gsv.someone.workers.dev\n\
         channel: gsv-channel-discord (no public route; reached through the gateway's binding)\n\
         next: gsv channel start discord --bot-token <token>   (or DISCORD_BOT_TOKEN=… npm run deploy)\n\
         whatsapp: https://gsv-channel-whatsapp.someone.workers.dev/webhook (Meta's callback URL; its verify token is WHATSAPP_VERIFY_TOKEN in .gsv/deploy.env)\n\
         next: WHATSAPP_APP_SECRET=… WHATSAPP_ACCESS_TOKEN=… WHATSAPP_PHONE_NUMBER_ID=… npm run deploy, then gsv channel start whatsapp (channels/whatsapp/README.md)\n\
         telegram: https://gsv-channel-telegram.someone.workers.dev/webhook/<account> (set with Telegram at start, with a secret of its own)\n\
         next: gsv channel start telegram --bot-token <token from @BotFather>   (or TELEGRAM_BOT_TOKEN=… npm run deploy)\n\
         whatsapp-web: your own number, linked as a device: gsv channel login whatsapp-web (channels/whatsapp-web/README.md)\n"
    );
    // Asked to, it makes a new one.
    let stub2 = tempfile::tempdir().unwrap();
    std::fs::copy(&wrangler, stub2.path().join("wrangler")).unwrap();
    let rotated = npm_run("deploy", &["--rotate-token"])
        .env("WRANGLER", stub2.path().join("wrangler"))
        .env("STUB_LOG", stub2.path().join("calls.jsonl"))
        .env("GSV", gsv_bin())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .output()
        .unwrap();
    assert!(rotated.status.success());
    let rotated_env = std::fs::read_to_string(&env_file).unwrap();
    let lines: Vec<&str> = rotated_env.lines().collect();
    assert_eq!(lines.len(), 2, "{rotated_env}");
    assert!(
        lines[0].starts_with("GSV_AUTH_TOKEN=") && lines[1].starts_with("WHATSAPP_VERIFY_TOKEN=")
    );
    assert_ne!(lines[0], format!("GSV_AUTH_TOKEN={token}"));
    assert_ne!(lines[1], format!("WHATSAPP_VERIFY_TOKEN={verify}"));

    match kept {
        Some(bytes) => std::fs::write(&env_file, bytes).unwrap(),
        None => {
            let _ = std::fs::remove_file(&env_file);
        }
    }
}

#[test]
fn the_dry_run_bundles_the_workers_within_the_free_plan() {
    let out = npm_run("deploy:dry-run", &["--no-build"])
        .env("WRANGLER_SEND_METRICS", "false")
        .env("CLOUDFLARE_CF_FETCH_ENABLED", "false")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    for (line, worker) in
        lines
            .iter()
            .zip(["gateway", "discord", "whatsapp", "telegram", "whatsapp-web"])
    {
        let bytes: u64 = line
            .strip_prefix(&format!("{worker} "))
            .and_then(|l| l.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        assert!(bytes > 100_000 && bytes < 3 * 1024 * 1024, "{line}");
        assert!(line.ends_with("bytes gzipped (ok)"), "{line}");
    }
}
