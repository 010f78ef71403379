use super::*;
use serde_json::json;

#[test]
fn defaults_match_reference() {
    let c = Config::default();
    assert_eq!(c.str_at("model.provider"), Some("anthropic"));
    assert_eq!(c.str_at("model.id"), Some("claude-sonnet-4-20250514"));
    assert_eq!(c.u64_at("timeouts.llmMs"), Some(300000));
    assert_eq!(c.u64_at("timeouts.toolMs"), Some(60000));
    assert_eq!(
        c.raw("session.defaultResetPolicy"),
        Some(&json!({"mode":"daily","atHour":4}))
    );
    assert_eq!(c.str_at("session.dmScope"), Some("main"));
    assert_eq!(c.str_at("session.mainKey"), Some("main"));
    assert_eq!(
        c.raw("compaction"),
        Some(
            &json!({"enabled":true,"reserveTokens":20000,"keepRecentTokens":20000,"extractMemories":true})
        )
    );
    assert_eq!(
        c.raw("cron"),
        Some(
            &json!({"enabled":true,"maxJobs":200,"maxRunsPerJobHistory":200,"maxConcurrentRuns":4})
        )
    );
    assert_eq!(c.str_at("userTimezone"), Some("UTC"));
    assert_eq!(c.str_at("channels.whatsapp.dmPolicy"), Some("pairing"));
    assert_eq!(c.str_at("channels.discord.dmPolicy"), Some("pairing"));
    assert_eq!(c.str_at("systemPrompt"), Some(DEFAULT_SYSTEM_PROMPT));
}

#[test]
fn set_nested_path_merges_with_defaults() {
    let mut c = Config::default();
    c.set("model.id", json!("gpt-4.1")).unwrap();
    c.set("model.provider", json!("openai")).unwrap();
    assert_eq!(
        c.overrides(),
        &json!({"model":{"id":"gpt-4.1","provider":"openai"}})
    );
    assert_eq!(
        c.raw("model"),
        Some(&json!({"provider":"openai","id":"gpt-4.1","thinkingLevel":"off"}))
    );
    // Survives a round trip through storage.
    let reloaded = Config::from_overrides(c.overrides().clone());
    assert_eq!(reloaded, c);
}

#[test]
fn null_removes_an_override() {
    let mut c = Config::default();
    c.set("timeouts.llmMs", json!(5000)).unwrap();
    c.set("timeouts.llmMs", Value::Null).unwrap();
    assert_eq!(c.u64_at("timeouts.llmMs"), Some(300000));
    assert_eq!(c.overrides(), &json!({"timeouts":{}}));
}

#[test]
fn wrong_types_name_path_and_expected_type() {
    let mut c = Config::default();
    let cases = [
        ("timeouts.llmMs", json!("fast"), "timeouts.llmMs must be an integer from 1000 to 3600000"),
        ("timeouts.llmMs", json!(10), "timeouts.llmMs must be an integer from 1000 to 3600000"),
        ("model.id", json!(4), "model.id must be a string"),
        ("session.dmScope", json!("everyone"), "session.dmScope must be one of main, per-peer, per-channel-peer, per-account-channel-peer"),
        ("compaction.enabled", json!("yes"), "compaction.enabled must be true or false"),
        ("channels.whatsapp.allowFrom", json!(["+1", 2]), "channels.whatsapp.allowFrom must be a list of strings"),
        ("session.defaultResetPolicy", json!({"mode":"daily","atHour":25}), "session.defaultResetPolicy.atHour must be an integer from 0 to 23"),
        ("model", json!({"idd":"x"}), "model.idd is not a known setting"),
        ("modle.id", json!("x"), "modle.id is not a known setting"),
        ("apiKeys.openai", json!(123), "apiKeys.openai must be a string"),
        ("model..id", json!("x"), "invalid config path \"model..id\": use dotted keys like model.id"),
    ];
    for (path, value, msg) in cases {
        assert_eq!(c.set(path, value), Err(ConfigError(msg.into())), "{path}");
    }
    assert_eq!(c, Config::default(), "a refused write changes nothing");
}

#[test]
fn auth_token_is_a_worker_secret_not_config() {
    let mut c = Config::default();
    let err = c.set("auth.token", json!("x")).unwrap_err();
    assert!(err.0.contains("GSV_AUTH_TOKEN"), "{err}");
}

#[test]
fn secrets_are_masked_whole_and_by_path() {
    let mut c = Config::default();
    c.set("apiKeys.openai", json!("sk-live-123")).unwrap();
    c.set("apiKeys.anthropic", json!("sk-ant-456")).unwrap();
    c.set(
        "skills.entries.github",
        json!({"env":{"GITHUB_TOKEN":"ghp_x"}}),
    )
    .unwrap();
    let whole = c.masked();
    assert_eq!(whole["apiKeys"], json!({"openai":"***","anthropic":"***"}));
    assert_eq!(
        whole["skills"]["entries"]["github"],
        json!({"env":{"GITHUB_TOKEN":"***"}})
    );
    assert_eq!(
        c.get_masked("apiKeys").unwrap(),
        Some(json!({"openai":"***","anthropic":"***"}))
    );
    assert_eq!(c.get_masked("apiKeys.openai").unwrap(), Some(json!("***")));
    assert_eq!(
        c.get_masked("skills.entries.github.env.GITHUB_TOKEN")
            .unwrap(),
        Some(json!("***"))
    );
    assert_eq!(c.get_masked("apiKeys.google").unwrap(), None);
    assert_eq!(
        c.get_masked("model.id").unwrap(),
        Some(json!("claude-sonnet-4-20250514"))
    );
    // The gateway itself still reads the real key.
    assert_eq!(c.str_at("apiKeys.openai"), Some("sk-live-123"));
    assert!(!serde_json::to_string(&whole).unwrap().contains("sk-live"));
}

#[test]
fn providers_base_url_is_configurable() {
    let mut c = Config::default();
    c.set(
        "providers.ollama.baseUrl",
        json!("http://127.0.0.1:11434/v1"),
    )
    .unwrap();
    c.set("providers.ollama.api", json!("openai-completions"))
        .unwrap();
    assert_eq!(
        c.str_at("providers.ollama.baseUrl"),
        Some("http://127.0.0.1:11434/v1")
    );
    c.set("providers.openai.api", json!("openai-responses"))
        .unwrap();
    assert!(c.set("providers.ollama.api", json!("soap")).is_err());
    c.set("providers.anthropic.cacheTtl", json!("1h")).unwrap();
    assert!(c.set("providers.anthropic.cacheTtl", json!("2h")).is_err());
}

#[test]
fn token_counts_are_not_mistaken_for_secrets() {
    let mut c = Config::default();
    c.set("compaction.reserveTokens", json!(12345)).unwrap();
    c.set("model.maxTokens", json!(4096)).unwrap();
    assert_eq!(
        c.get_masked("compaction.reserveTokens").unwrap(),
        Some(json!(12345))
    );
    assert_eq!(c.masked()["model"]["maxTokens"], json!(4096));
    assert_eq!(c.masked()["compaction"]["keepRecentTokens"], json!(20000));
}
