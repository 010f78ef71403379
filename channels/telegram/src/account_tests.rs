use super::*;
use serde_json::Value;

const TOKEN: &str = "123456789:AAF-x_yZ";

fn config(token: Option<&str>, public_url: Option<&str>) -> ChannelAccountConfig {
    let mut config = ChannelAccountConfig {
        bot_token: token.map(str::to_string),
        ..Default::default()
    };
    if let Some(url) = public_url {
        config
            .extra
            .insert("publicUrl".into(), Value::String(url.into()));
    }
    config
}

#[test]
fn a_start_takes_the_config_s_token_then_the_secret() {
    assert_eq!(
        plan_start("default", &config(Some(TOKEN), None), Some("9:env"), None),
        Ok(Start {
            given_token: Some(TOKEN.into()),
            token: TOKEN.into(),
            webhook_url: None,
        })
    );
    assert_eq!(
        plan_start("default", &config(Some(" "), None), Some("9:env"), None),
        Ok(Start {
            given_token: None,
            token: "9:env".into(),
            webhook_url: None,
        })
    );
    assert_eq!(
        plan_start("default", &config(None, None), Some(""), None),
        Err("no bot token: start the account with --bot-token (config.botToken, from @BotFather) or set the TELEGRAM_BOT_TOKEN secret".into())
    );
    for bad in ["no-colon", "1:a/b", "1:a?x", "1:a b"] {
        assert!(
            plan_start("a", &config(Some(bad), None), None, None).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn a_public_url_means_a_webhook_for_the_account() {
    let from_env = plan_start(
        "default",
        &config(Some(TOKEN), None),
        None,
        Some("https://tg.example.workers.dev/"),
    )
    .unwrap();
    assert_eq!(
        from_env.webhook_url.as_deref(),
        Some("https://tg.example.workers.dev/webhook/default")
    );
    let given = plan_start(
        "my bot",
        &config(Some(TOKEN), Some("http://127.0.0.1:8790")),
        None,
        Some("https://ignored.example"),
    )
    .unwrap();
    assert_eq!(
        given.webhook_url.as_deref(),
        Some("http://127.0.0.1:8790/webhook/my%20bot")
    );
    assert!(plan_start("a", &config(Some(TOKEN), Some("tg.example")), None, None).is_err());
    let polling = plan_start("a", &config(Some(TOKEN), Some("")), None, Some("")).unwrap();
    assert_eq!(polling.webhook_url, None);
}

#[test]
fn the_status_never_shows_the_token_or_the_secret() {
    let account = Account {
        started: true,
        bot_token: Some(TOKEN.into()),
        bot_id: Some(123456789),
        bot_username: Some("gsv_bot".into()),
        can_read_all_group_messages: Some(false),
        mode: Some(Mode::Webhook),
        webhook_url: Some("https://tg.example/webhook/default".into()),
        webhook_secret: Some("S3CRET-value".into()),
        offset: None,
        poll_failures: 0,
        authenticated: true,
        error: None,
        last_activity: Some(5),
        edited_ignored: 2,
    };
    let status = account.status("default", true);
    assert_eq!(
        status,
        ChannelAccountStatus {
            account_id: "default".into(),
            connected: true,
            authenticated: true,
            mode: Some("webhook".into()),
            last_activity: Some(5),
            error: None,
            extra: Some(
                json!({"botId": 123456789, "botUsername": "gsv_bot", "hasToken": true,
                "webhookUrl": "https://tg.example/webhook/default", "privacyMode": true,
                "editedIgnored": 2})
            ),
        }
    );
    let wire = serde_json::to_string(&status).unwrap();
    assert!(!wire.contains("AAF") && !wire.contains("S3CRET"));
    let polling = Account {
        mode: Some(Mode::Polling),
        error: Some("Telegram answered 409 Conflict".into()),
        ..account.clone()
    }
    .status("default", true);
    assert_eq!(polling.mode.as_deref(), Some("polling"));
    assert!(!polling.connected);
    let stopped = Account {
        started: false,
        ..account
    }
    .status("default", true);
    assert_eq!(
        (stopped.connected, stopped.error),
        (false, Some("not started".into()))
    );
    assert_eq!(
        Account::default().token(Some("9:env")),
        Some("9:env".to_string())
    );
    assert_eq!(Account::default().token(Some("")), None);
}

#[test]
fn a_state_of_an_older_version_still_reads() {
    let old: Account = serde_json::from_str(r#"{"started": true, "botId": 1}"#).unwrap();
    assert_eq!((old.started, old.bot_id, old.mode), (true, Some(1), None));
}
