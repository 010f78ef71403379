//! The wizard's decisions, whole values in and out.

use super::decide::*;
use super::{SetupArgs, Step};
use gsv_protocol::channels::ChannelAccountStatus;
use gsv_protocol::{
    ChannelRegistryEntry, ChannelsListResult, ModelCheckFailure, ModelCheckResult, ToolDefinition,
    ToolsListResult,
};
use serde_json::json;

#[test]
fn modes_from_the_flags_and_the_terminal() {
    let modes: Vec<(Mode, bool, bool)> = [
        (false, false, true),
        (false, true, true),
        (true, false, true),
        (false, false, false),
        (false, true, false),
    ]
    .iter()
    .map(|&(ni, yes, tty)| {
        let m = Mode::new(ni, yes, tty);
        (m, m.asks_defaults(), m.may_ask())
    })
    .collect();
    assert_eq!(
        modes,
        vec![
            (Mode::Ask, true, true),
            (Mode::Defaults, false, true),
            (Mode::Never, false, false),
            (Mode::Never, false, false),
            (Mode::Never, false, false),
        ]
    );
}

fn channel(name: &str, account: &str, connected: bool) -> ChannelRegistryEntry {
    ChannelRegistryEntry {
        channel: name.into(),
        account_id: account.into(),
        connected_at: None,
        last_message_at: None,
        transport: None,
        status: Some(ChannelAccountStatus {
            account_id: account.into(),
            connected,
            authenticated: connected,
            mode: None,
            last_activity: None,
            error: None,
            extra: None,
        }),
        failed_deliveries: 0,
        last_delivery_error: None,
        delivered: 0,
        read: 0,
    }
}

fn tool(name: &str) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        description: String::new(),
        input_schema: json!({}),
    }
}

#[test]
fn current_values_from_the_gateway_answers() {
    let config = json!({
        "model": {"provider": "openai", "id": "claude-sonnet-4-20250514"},
        "apiKeys": {"openai": "***", "groq": ""},
        "providers": {"local": {"baseUrl": "http://127.0.0.1:8080/v1"}, "openai": {"cacheTtl": "1h"}},
        "userTimezone": "Europe/Paris"
    });
    let channels = ChannelsListResult {
        count: 2,
        channels: vec![
            channel("discord", "default", true),
            channel("whatsapp", "shop", false),
        ],
        warnings: vec![],
    };
    let tools = ToolsListResult {
        tools: vec![
            tool("gsv__MemorySearch"),
            tool("who_am_i"),
            tool("laptop__Bash"),
            tool("laptop__Read"),
            tool("box__Bash"),
        ],
    };
    let c = Current::read(&config, Some(&channels), Some(&tools));
    assert_eq!(
        c,
        Current {
            provider: "openai".into(),
            // The default config's model shadows nothing: openai's own is used.
            model: "gpt-5".into(),
            keys: vec!["openai".into()],
            base_urls: vec!["local".into()],
            timezone: "Europe/Paris".into(),
            channels: vec![
                "discord/default (connected)".into(),
                "whatsapp/shop (not connected)".into()
            ],
            nodes: vec!["box".into(), "laptop".into()],
        }
    );
    assert_eq!(
        render_current(&c),
        "Now:\n  model      openai / gpt-5 (key set)\n  time zone  Europe/Paris\n  \
         channels   discord/default (connected), whatsapp/shop (not connected)\n  \
         nodes      box, laptop\n"
    );
    // A fresh gateway: the default config, nothing else.
    let fresh = Current::read(
        &json!({"model": {"provider": "anthropic", "id": "claude-sonnet-4-20250514"},
                "apiKeys": {}, "providers": {}, "userTimezone": "UTC"}),
        None,
        None,
    );
    assert_eq!(
        render_current(&fresh),
        "Now:\n  model      anthropic / claude-sonnet-4-20250514 (no key set)\n  \
         time zone  UTC\n  channels   none\n  nodes      none connected\n"
    );
    let ollama = Current::read(&json!({"model": {"provider": "ollama"}}), None, None);
    assert_eq!(
        (ollama.model.as_str(), ollama.timezone.as_str()),
        ("llama3.2", "UTC")
    );
    assert!(render_current(&ollama).contains("ollama / llama3.2 (no key needed)"));
}

#[test]
fn model_ids_stored_and_shown() {
    assert_eq!(
        effective_model("groq", "llama-3.1-8b-instant"),
        "llama-3.1-8b-instant"
    );
    assert_eq!(
        effective_model("anthropic", "claude-sonnet-4-20250514"),
        "claude-sonnet-4-20250514"
    );
    assert_eq!(effective_model("local", "qwen3"), "qwen3");
    assert_eq!(model_id_value("openai", "gpt-5"), json!(null));
    assert_eq!(model_id_value("openai", "gpt-5-mini"), json!("gpt-5-mini"));
    assert_eq!(model_id_value("local", "qwen3"), json!("qwen3"));
}

#[test]
fn provider_list_and_answers() {
    let c = Current {
        provider: "openai".into(),
        model: "gpt-5".into(),
        keys: vec!["openai".into(), "groq".into()],
        base_urls: vec!["local".into()],
        ..Current::default()
    };
    assert_eq!(
        render_providers(&c, "openai"),
        "Which model provider?\n\
         \u{20} 1) anthropic   Anthropic's Claude\n\
         * 2) openai      OpenAI  [key set, current]\n\
         \u{20} 3) google      Google's Gemini\n\
         \u{20} 4) groq        Groq  [key set]\n\
         \u{20} 5) mistral     Mistral\n\
         \u{20} 6) deepseek    DeepSeek\n\
         \u{20} 7) xai         xAI's Grok\n\
         \u{20} 8) openrouter  OpenRouter, many vendors' models\n\
         \u{20} 9) ollama      Ollama on this machine, no key\n\
         \u{20}10) workers-ai  Cloudflare Workers AI, deployed gateway only, no key\n\
         \u{20}    local       your own (providers.local.baseUrl)\n"
    );
    let custom = vec!["local".to_string()];
    let parsed: Vec<Answer<String>> = [
        "",
        "4",
        " Gemini ",
        "workers-ai",
        "local",
        "skip",
        "11",
        "0",
        "llama.cpp",
    ]
    .iter()
    .map(|a| parse_provider(a, "openai", &custom))
    .collect();
    assert_eq!(
        parsed,
        vec![
            Answer::Take("openai".into()),
            Answer::Take("groq".into()),
            Answer::Take("google".into()),
            Answer::Take("workers-ai".into()),
            Answer::Take("local".into()),
            Answer::Skip,
            Answer::Again("There is no provider 11: type a number from 1 to 10, a name, or skip.".into()),
            Answer::Again("There is no provider 0: type a number from 1 to 10, a name, or skip.".into()),
            Answer::Again(
                "`llama.cpp` is not a provider gsv knows: type a number from 1 to 10, a name from \
                 the list, or skip. (A server of your own: `gsv setup --provider NAME --base-url URL`.)"
                    .into()
            ),
        ]
    );
}

#[test]
fn keys_asked_kept_or_skipped() {
    assert_eq!(
        [
            key_prompt("openai", true, true),
            key_prompt("openai", true, false),
            key_prompt("local", false, false),
        ],
        [
            "API key for openai (hidden; Enter keeps the one set, skip skips): ",
            "API key for openai (hidden; Enter skips this step): ",
            "API key for local, if it needs one (hidden; Enter for none): ",
        ]
    );
    let answers: Vec<KeyAnswer> = [
        ("", true, true),
        ("", true, false),
        ("", false, false),
        ("skip", true, true),
        ("  sk-new \n", true, true),
    ]
    .iter()
    .map(|&(a, needs, has)| parse_key(a, needs, has))
    .collect();
    assert_eq!(
        answers,
        vec![
            KeyAnswer::Keep,
            KeyAnswer::Skip,
            KeyAnswer::Keep,
            KeyAnswer::Skip,
            KeyAnswer::New("sk-new".into()),
        ]
    );
}

#[test]
fn models_offered_and_read() {
    let c = Current {
        provider: "anthropic".into(),
        model: "claude-opus-4-1".into(),
        ..Current::default()
    };
    assert_eq!(
        [
            default_model("anthropic", &c),
            default_model("groq", &c),
            default_model("local", &c),
        ],
        ["claude-opus-4-1", "llama-3.3-70b-versatile", ""]
    );
    let parsed: Vec<Answer<String>> = [
        ("", "gpt-5"),
        (" gpt-5-mini ", "gpt-5"),
        ("skip", "gpt-5"),
        ("", ""),
        ("gpt 5", ""),
    ]
    .iter()
    .map(|(a, d)| parse_model(a, d))
    .collect();
    assert_eq!(
        parsed,
        vec![
            Answer::Take("gpt-5".into()),
            Answer::Take("gpt-5-mini".into()),
            Answer::Skip,
            Answer::Again("Type a model id (or skip).".into()),
            Answer::Again("`gpt 5` is not a model id: it has spaces.".into()),
        ]
    );
}

fn failed(failure: ModelCheckFailure, has_key: bool, error: &str) -> ModelCheckResult {
    ModelCheckResult {
        ok: false,
        provider: "openai".into(),
        model: "gpt-5".into(),
        api: "openai-completions".into(),
        endpoint: "https://api.openai.com/v1".into(),
        has_key,
        failure: Some(failure),
        error: Some(error.into()),
        latency_ms: 80,
    }
}

#[test]
fn a_failed_check_in_words_and_what_is_asked_again() {
    use ModelCheckFailure::*;
    let cases = [
        failed(
            Auth,
            true,
            "openai rejected the API key (HTTP 401: Incorrect API key provided: sk-bad-key-123). \
             Set a valid key with `gsv config set apiKeys.openai <key>`.",
        ),
        failed(Unusable, false, "No API key configured for provider 'openai'. Set one with: gsv config set apiKeys.openai <key>"),
        failed(Invalid, true, "model_not_found"),
        failed(RateLimited, true, "429"),
        failed(Server, true, "503 overloaded"),
        failed(Network, true, "connection refused"),
        failed(Timeout, true, "no answer within 20000 ms"),
    ];
    let got: Vec<(String, Redo)> = cases
        .iter()
        .map(|r| {
            (
                redact(&failure_words(r), Some("sk-bad-key-123")),
                redo_after(r, true),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "The key was refused: openai rejected the API key (HTTP 401: Incorrect API key \
                 provided: ***)."
                    .into(),
                Redo::Key,
            ),
            ("No API key configured for provider 'openai'. Set one with: gsv config set apiKeys.openai <key>".into(), Redo::Key),
            ("openai refused the request for model `gpt-5`: model_not_found. Is the model id right?".into(), Redo::Model),
            ("openai is limiting requests just now (429); the key may well be good: try again in a minute".into(), Redo::Again),
            ("openai had trouble answering (503 overloaded); try again later".into(), Redo::Again),
            ("Could not reach openai at https://api.openai.com/v1: connection refused".into(), Redo::Again),
            ("openai did not answer in time: no answer within 20000 ms".into(), Redo::Again),
        ]
    );
    // Where no key is taken, nothing asks for one.
    assert_eq!(redo_after(&cases[0], false), Redo::Again);
    assert_eq!(redo_after(&cases[1], false), Redo::Model);
    let ok = ModelCheckResult {
        ok: true,
        failure: None,
        error: None,
        latency_ms: 312,
        ..cases[0].clone()
    };
    assert_eq!(success_words(&ok), "openai answered with gpt-5 in 312 ms.");
    // Too short to be a key: left alone rather than starring common words.
    assert_eq!(redact("a b c", Some("b")), "a b c");
    assert_eq!(redact("key k3y!", None), "key k3y!");
    // A key the provider masked in part is masked whole.
    assert_eq!(
        redact(
            "Incorrect API key provided: sk-**********4711. You can find (sk-ab**cd) it;  \"x**y\", ***",
            Some("sk-other")
        ),
        "Incorrect API key provided: ***. You can find (***) it;  \"***\", ***"
    );
    assert_eq!(
        [token_wanted(false), token_wanted(true)],
        [
            "The gateway wants a token.",
            "The gateway refused that token."
        ]
    );
}

#[test]
fn the_local_token_and_url() {
    assert_eq!(
        dev_vars_token("# secrets\nGSV_AUTH_TOKEN=old\nOTHER=1\nGSV_AUTH_TOKEN=\"abc123\"\n"),
        Some("abc123".into())
    );
    assert_eq!(dev_vars_token("GSV_AUTH_TOKEN=\nX=1"), None);
    let loopback: Vec<bool> = [
        "ws://127.0.0.1:8787/ws",
        "ws://localhost:8787/ws",
        "ws://[::1]:8787/ws",
        "wss://gsv.me.workers.dev/ws",
        "ws://127.example.com/ws",
    ]
    .iter()
    .map(|u| is_loopback(u))
    .collect();
    assert_eq!(loopback, [true, true, true, false, true]);
}

#[test]
fn time_zones_detected_offered_and_read() {
    assert_eq!(
        zone_from_link("/usr/share/zoneinfo/Europe/Paris").as_deref(),
        Some("Europe/Paris")
    );
    assert_eq!(
        zone_from_link("/var/db/timezone/zoneinfo/America/Argentina/Salta").as_deref(),
        Some("America/Argentina/Salta")
    );
    assert_eq!(
        zone_from_link("../usr/share/zoneinfo/posix/Asia/Tokyo").as_deref(),
        Some("Asia/Tokyo")
    );
    assert_eq!(zone_from_link("/etc/whatever"), None);
    let detected: Vec<Option<String>> = [
        (Some(":Europe/Berlin"), Some("Etc/UTC\n"), None),
        (Some("EST5EDT"), Some("Asia/Tokyo\n"), None),
        (None, None, Some("/usr/share/zoneinfo/Etc/UTC")),
        (Some(""), None, None),
        (Some("UTC"), None, Some("/usr/share/zoneinfo/Europe/Paris")),
    ]
    .iter()
    .map(|&(tz, etc, link)| detect_zone(tz, etc, link))
    .collect();
    assert_eq!(
        detected,
        vec![
            Some("Europe/Berlin".into()),
            Some("Asia/Tokyo".into()),
            Some("Etc/UTC".into()),
            None,
            Some("UTC".into()),
        ]
    );
    assert_eq!(
        [
            default_zone("UTC", Some("Europe/Paris")),
            default_zone("America/New_York", Some("Europe/Paris")),
            default_zone("UTC", Some("Etc/UTC")),
            default_zone("UTC", None),
        ],
        [
            ("Europe/Paris".to_string(), "this system's"),
            ("America/New_York".to_string(), "set now"),
            ("UTC".to_string(), "set now"),
            ("UTC".to_string(), "set now"),
        ]
    );
    let known = |z: &str| z != "Mars/Olympus";
    let parsed: Vec<Answer<String>> = [
        "",
        "Asia/Kolkata",
        "skip",
        "Mars/Olympus",
        "paris",
        "../etc/passwd",
    ]
    .iter()
    .map(|a| parse_zone(a, "Europe/Paris", &known))
    .collect();
    let again = |a: &str| {
        Answer::Again(format!(
            "`{a}` is not a time zone name: type one such as Europe/Paris, America/New_York \
             or UTC (or skip)."
        ))
    };
    assert_eq!(
        parsed,
        vec![
            Answer::Take("Europe/Paris".into()),
            Answer::Take("Asia/Kolkata".into()),
            Answer::Skip,
            again("Mars/Olympus"),
            again("paris"),
            again("../etc/passwd"),
        ]
    );
}

#[test]
fn apps_and_yes_no() {
    let apps: Vec<Answer<ChatApp>> = [
        "",
        "Discord",
        "w",
        "none",
        "telegram",
        "WhatsApp-Web",
        "signal",
    ]
    .iter()
    .map(|a| parse_app(a))
    .collect();
    assert_eq!(
        apps,
        vec![
            Answer::Skip,
            Answer::Take(ChatApp::Discord),
            Answer::Take(ChatApp::WhatsApp),
            Answer::Skip,
            Answer::Take(ChatApp::Telegram),
            Answer::Take(ChatApp::WhatsAppWeb),
            Answer::Again(
                "`signal`? Type discord, telegram, whatsapp, whatsapp-web, or press Enter for none."
                    .into()
            ),
        ]
    );
    let yn: Vec<Option<bool>> = [
        ("", false),
        ("", true),
        ("Y", false),
        ("no", true),
        ("maybe", true),
    ]
    .iter()
    .map(|&(a, d)| parse_yes_no(a, d))
    .collect();
    assert_eq!(yn, [Some(false), Some(true), Some(true), Some(false), None]);
}

#[test]
fn the_summary_and_the_next_command() {
    let mut o = Outcome {
        gateway: Done::Set(
            "ws://127.0.0.1:8787/ws (token set), in /home/me/.config/gsv/config.toml".into(),
        ),
        model: Done::Set("openai / gpt-5 (key stored)".into()),
        model_works: Some(true),
        timezone: Done::Kept("Europe/Paris".into()),
        channel: Done::Skipped("none chosen".into()),
        node: Done::Failed("systemd user services are not available here".into()),
        provider: "openai".into(),
    };
    assert_eq!(
        summary(&o),
        "\nSetup summary:\n\
         \u{20} gateway    ws://127.0.0.1:8787/ws (token set), in /home/me/.config/gsv/config.toml (set)\n\
         \u{20} model      openai / gpt-5 (key stored) (set)\n\
         \u{20} time zone  Europe/Paris\n\
         \u{20} channel    skipped: none chosen\n\
         \u{20} node       FAILED: systemd user services are not available here\n\
         \n\
         Next: gsv chat \"hello\"\n"
    );
    o.model = Done::Skipped("the key was not accepted; nothing stored".into());
    o.model_works = Some(false);
    assert!(summary(&o).ends_with(
        "The model did not answer its check. Run `gsv setup` again (or \
         `gsv config set apiKeys.openai <key>`), then: gsv chat \"hello\"\n"
    ));
    o.model_works = None;
    assert!(summary(&o).ends_with(
        "Next: gsv chat \"hello\"  (the model was not checked this time; `gsv setup` checks it)\n"
    ));
}

#[test]
fn the_help_lists_every_provider_with_its_default_model() {
    let help = crate::cli::command()
        .find_subcommand_mut("setup")
        .unwrap()
        .render_long_help()
        .to_string();
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for p in PROVIDERS {
        let entry = format!("{} ({}", p.name, p.default_model);
        assert!(flat.contains(&entry), "{entry} missing from:\n{help}");
    }
}

#[test]
fn flags_parse() {
    use clap::Parser;
    let parse = |args: &[&str]| {
        let cli = crate::cli::Cli::try_parse_from(args).unwrap();
        match cli.command {
            crate::cli::Command::Setup(a) => a,
            other => panic!("not setup: {other:?}"),
        }
    };
    let a: SetupArgs = parse(&[
        "gsv",
        "onboard",
        "--non-interactive",
        "--provider",
        "openai",
        "--api-key-env",
        "KEY",
        "--skip",
        "timezone,channel",
        "--no-node",
    ]);
    assert_eq!(
        (
            a.non_interactive,
            a.provider.as_deref(),
            a.api_key_env.as_deref(),
            a.skip.clone()
        ),
        (
            true,
            Some("openai"),
            Some("KEY"),
            vec![Step::Timezone, Step::Channel]
        )
    );
    assert!(a.skips(Step::Node) && a.skips(Step::Channel) && !a.skips(Step::Model));
    let a = parse(&["gsv", "setup", "--no-node", "--node"]);
    assert!(a.node && !a.no_node);
    let clash =
        crate::cli::Cli::try_parse_from(["gsv", "setup", "--api-key", "k", "--api-key-env", "K"]);
    assert!(clash.is_err());
    assert!(
        crate::cli::Cli::try_parse_from(["gsv", "setup", "--no-channel", "--whatsapp"]).is_err()
    );
}
