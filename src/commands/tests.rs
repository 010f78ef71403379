use super::*;
use gsv_protocol::ChatDirectives;

fn sel(provider: Option<&str>, id: &str) -> ModelSelector {
    ModelSelector {
        provider: provider.map(String::from),
        id: id.into(),
    }
}

#[test]
fn commands() {
    let cases: Vec<(&str, Option<Command>)> = vec![
        ("/new", Some(Command::Reset { message: None })),
        ("  /RESET  ", Some(Command::Reset { message: None })),
        (
            "/new plan the trip",
            Some(Command::Reset {
                message: Some("plan the trip".into()),
            }),
        ),
        ("/compact", Some(Command::Compact { keep: 20 })),
        ("/compact 5", Some(Command::Compact { keep: 5 })),
        (
            "/compact 0",
            Some(Command::Usage(
                "Usage: /compact [N] — keep the last N messages (N ≥ 1, default 20)",
            )),
        ),
        (
            "/compact lots",
            Some(Command::Usage(
                "Usage: /compact [N] — keep the last N messages (N ≥ 1, default 20)",
            )),
        ),
        ("/stop", Some(Command::Stop)),
        ("/status", Some(Command::Status)),
        ("/model", Some(Command::Model(None))),
        (
            "/model openai/gpt-4.1",
            Some(Command::Model(Some(Ok(sel(Some("openai"), "gpt-4.1"))))),
        ),
        (
            "/model gpt-4o",
            Some(Command::Model(Some(Ok(sel(None, "gpt-4o"))))),
        ),
        (
            "/model gpt 4o",
            Some(Command::Model(Some(Err("gpt 4o".into())))),
        ),
        ("/think", Some(Command::Think(None))),
        (
            "/think high",
            Some(Command::Think(Some(Ok(ThinkingLevel::High)))),
        ),
        (
            "/thinking 0",
            Some(Command::Think(Some(Ok(ThinkingLevel::None)))),
        ),
        (
            "/t max",
            Some(Command::Think(Some(Ok(ThinkingLevel::Xhigh)))),
        ),
        (
            "/t banana",
            Some(Command::Think(Some(Err("banana".into())))),
        ),
        ("/help", Some(Command::Help)),
        ("/start", Some(Command::Help)),
        ("/?", Some(Command::Help)),
        // Not commands: unknown names, not at the start, not one line, directives.
        ("/unknown", None),
        ("/compact5", None),
        ("hello /reset", None),
        ("/reset\nand more", None),
        ("/t:high hi", None),
        ("/", None),
        ("//new", None),
        ("/née", None),
        ("", None),
    ];
    for (text, want) in cases {
        assert_eq!(parse_command(text), want, "{text:?}");
    }
}

#[test]
fn model_selectors() {
    assert_eq!(
        parse_model_selector("anthropic/claude-sonnet-4"),
        Ok(sel(Some("anthropic"), "claude-sonnet-4"))
    );
    assert_eq!(
        parse_model_selector("openrouter/meta-llama/llama-3.1-8b"),
        Ok(sel(Some("openrouter"), "meta-llama/llama-3.1-8b"))
    );
    assert_eq!(parse_model_selector(" o3 "), Ok(sel(None, "o3")));
    for bad in ["", "a b", "/id", "provider/", "x\ty"] {
        assert_eq!(
            parse_model_selector(bad),
            Err(InvalidSelector(bad.trim().to_string())),
            "{bad:?}"
        );
    }
    assert_eq!(
        sel(None, "o3").resolve("openai"),
        ModelSelection {
            provider: "openai".into(),
            id: "o3".into()
        }
    );
    assert_eq!(
        sel(Some("anthropic"), "x").resolve("openai"),
        ModelSelection {
            provider: "anthropic".into(),
            id: "x".into()
        }
    );
}

fn directives(
    text: &str,
    thinking: Option<Result<ThinkingLevel, UnknownLevel>>,
    model: Option<Result<ModelSelector, InvalidSelector>>,
    status: bool,
) -> Directives {
    Directives {
        text: text.into(),
        thinking,
        model,
        status,
    }
}

#[test]
fn inline_directives() {
    let cases = vec![
        (
            "Hello /think:high",
            directives("Hello", Some(Ok(ThinkingLevel::High)), None, false),
        ),
        (
            "/t:low What's 2+2?",
            directives("What's 2+2?", Some(Ok(ThinkingLevel::Low)), None, false),
        ),
        (
            "/THINKING:Medium explain",
            directives("explain", Some(Ok(ThinkingLevel::Medium)), None, false),
        ),
        (
            "/m:openai/gpt-4.1 explain /t:2 quantum  physics",
            directives(
                "explain quantum  physics",
                Some(Ok(ThinkingLevel::Low)),
                Some(Ok(sel(Some("openai"), "gpt-4.1"))),
                false,
            ),
        ),
        (
            "use /model:o3 now",
            directives("use now", None, Some(Ok(sel(None, "o3"))), false),
        ),
        (
            "/t:high",
            directives("", Some(Ok(ThinkingLevel::High)), None, false),
        ),
        (
            "/t:wild go",
            directives("go", Some(Err("wild".into())), None, false),
        ),
        (
            "/m:/x go",
            directives("go", None, Some(Err("/x".into())), false),
        ),
        (
            "what /status is it",
            directives("what is it", None, None, true),
        ),
        // Only the first of a kind is taken.
        (
            "/t:low /t:high hi",
            directives("/t:high hi", Some(Ok(ThinkingLevel::Low)), None, false),
        ),
        // Not directives: no value, inside a word or path, line breaks kept.
        (
            "use the /t flag",
            directives("use the /t flag", None, None, false),
        ),
        (
            "see a/t:high and /t: x",
            directives("see a/t:high and /t: x", None, None, false),
        ),
        (
            "line one\n/t:high\nline two",
            directives(
                "line one\n\nline two",
                Some(Ok(ThinkingLevel::High)),
                None,
                false,
            ),
        ),
    ];
    for (text, want) in cases {
        assert_eq!(parse_directives(text), want, "{text:?}");
    }
    assert!(parse_directives("/t:high /m:o3").is_directive_only());
    assert!(!parse_directives("/t:high hi").is_directive_only());
    assert!(!parse_directives("").is_directive_only());
}

#[test]
fn directive_acks() {
    let current = ModelSelection {
        provider: "openai".into(),
        id: "gpt-4o".into(),
    };
    assert_eq!(
        directive_ack(&parse_directives("/t:high /m:o3"), &current),
        Some("_Thinking: high | Model: openai/o3_".into())
    );
    assert_eq!(
        directive_ack(&parse_directives("/t:9 /m:a/"), &current),
        Some("_Unknown thinking level: 9 | Invalid model selector: a/_".into())
    );
    assert_eq!(directive_ack(&parse_directives("/status"), &current), None);
}

#[test]
fn help_and_status() {
    assert!(HELP_TEXT.starts_with("**Available Commands**\n\n**Session:**\n• `/new` or `/reset`"));
    for cmd in [
        "/compact [N]",
        "/stop",
        "/status",
        "/model [provider/id]",
        "/think [level]",
        "/t:high",
        "/m:openai/gpt-4.1",
        "/?",
    ] {
        assert!(HELP_TEXT.contains(cmd), "{cmd}");
    }
    let tokens = TokenCounts {
        input: 1200,
        output: 300,
        total: 1500,
        ..Default::default()
    };
    let model = ModelSelection {
        provider: "anthropic".into(),
        id: "claude-sonnet-4".into(),
    };
    assert_eq!(
        status_text(&StatusInfo {
            session_key: "agent:main:main",
            message_count: 12,
            tokens: &tokens,
            model: &model,
            thinking: ThinkingLevel::Medium,
            reset: &ResetPolicy::Daily { at_hour: 4 },
        }),
        "**Session Status**\n• Session: `agent:main:main`\n• Messages: 12\n• Tokens: 1200 in / 300 out\n\
• Model: anthropic/claude-sonnet-4\n• Thinking: medium\n• Reset: daily at 04:00"
    );
    // With a prompt cache and known prices: what was cached, and the cost.
    let cached = TokenCounts {
        input: 1200,
        output: 300,
        total: 41_800,
        cache_read: 39_000,
        cache_write: 1_300,
        cost: Some(0.02967),
    };
    assert_eq!(
        status_text(&StatusInfo {
            tokens: &cached,
            session_key: "agent:main:main",
            message_count: 12,
            model: &model,
            thinking: ThinkingLevel::Medium,
            reset: &ResetPolicy::Manual,
        }),
        "**Session Status**\n• Session: `agent:main:main`\n• Messages: 12\n• Tokens: 1200 in / 300 out\n\
• Cache: 39000 read / 1300 written (94% of input)\n• Cost: ~$0.0297 (estimated)\n\
• Model: anthropic/claude-sonnet-4\n• Thinking: medium\n• Reset: manual"
    );
}

fn msel(provider: &str, id: &str) -> ModelSelection {
    ModelSelection {
        provider: provider.into(),
        id: id.into(),
    }
}

#[test]
fn model_command_shows_sets_and_refuses() {
    let current = msel("anthropic", "claude-sonnet-4");
    assert_eq!(
        model_command(None, &current),
        CommandReply::text("Model: anthropic/claude-sonnet-4")
    );
    assert_eq!(
        model_command(Some(&parse_model_selector("claude-opus-4")), &current),
        CommandReply {
            response: Some("Model set to anthropic/claude-opus-4 for this session.".into()),
            error: None,
            change: Some(SettingChange::Model(msel("anthropic", "claude-opus-4"))),
        }
    );
    assert_eq!(
        model_command(Some(&parse_model_selector("openai/gpt-4.1")), &current).change,
        Some(SettingChange::Model(msel("openai", "gpt-4.1")))
    );
    assert_eq!(
        model_command(Some(&parse_model_selector("openai/")), &current),
        CommandReply::error(
            "Invalid model selector: \"openai/\". Use provider/id (e.g. openai/gpt-4.1) or an id of the current provider."
        )
    );
}

#[test]
fn think_command_shows_sets_and_refuses() {
    assert_eq!(
        think_command(None, ThinkingLevel::Low),
        CommandReply::text("Thinking: low")
    );
    assert_eq!(
        think_command(Some(&Ok(ThinkingLevel::High)), ThinkingLevel::Low),
        CommandReply {
            response: Some("Thinking set to high for this session.".into()),
            error: None,
            change: Some(SettingChange::Thinking(ThinkingLevel::High)),
        }
    );
    assert_eq!(
        think_command(Some(&Err("loud".into())), ThinkingLevel::Low),
        CommandReply::error(
            "Unknown thinking level: \"loud\". Use one of: off, minimal, low, medium, high, xhigh."
        )
    );
}

#[test]
fn directives_apply_to_the_message_and_drop_invalid_ones() {
    let current = msel("openai", "gpt-4.1");
    let d = parse_directives("/t:high /m:gpt-4.1-mini explain this");
    assert_eq!(
        applied_directives(&d, &current),
        ChatDirectives {
            thinking_level: Some("high".into()),
            model: Some(msel("openai", "gpt-4.1-mini")),
        }
    );
    let bad = parse_directives("/t:loud /m:a/ hi");
    assert_eq!(
        applied_directives(&bad, &current),
        ChatDirectives::default()
    );
    assert!(is_empty(&applied_directives(&bad, &current)));
}

#[test]
fn command_names() {
    let names: Vec<&str> = [
        "/new",
        "/reset x",
        "/compact",
        "/stop",
        "/status",
        "/model",
        "/think",
        "/help",
        "/compact 0",
    ]
    .iter()
    .map(|t| parse_command(t).expect(t).name())
    .collect();
    assert_eq!(
        names,
        ["reset", "reset", "compact", "stop", "status", "model", "think", "help", "usage"]
    );
}
