//! `gsv config get|set`: the gateway's own configuration, over the socket.

use super::GatewayTarget;
use crate::cli::ConfigCommand;
use crate::connection::DEFAULT_REQUEST_TIMEOUT;
use anyhow::Result;
use gsv_protocol::{method, ConfigGetParams, ConfigGetResult, ConfigSetParams};
use serde_json::Value;

pub async fn run(target: &GatewayTarget, command: ConfigCommand) -> Result<()> {
    let conn = target.connect().await?;
    match command {
        ConfigCommand::Get { path } => {
            let params = ConfigGetParams { path };
            let answer = conn
                .call_value::<method::ConfigGet>(&params, DEFAULT_REQUEST_TIMEOUT)
                .await?;
            println!("{}", serde_json::to_string_pretty(&config_value(answer))?);
        }
        ConfigCommand::Set { path, value } => {
            let value = parse_value(&value);
            let shown = shown_value(&path, &value);
            let params = ConfigSetParams {
                path: path.clone(),
                value,
            };
            conn.call::<method::ConfigSet>(&params).await?;
            println!("Set {path} = {shown}");
        }
    }
    Ok(())
}

/// The value inside a `config.get` answer (`{path, value}` or `{config}`).
fn config_value(answer: Value) -> Value {
    match serde_json::from_value::<ConfigGetResult>(answer.clone()) {
        Ok(ConfigGetResult::Path { value, .. }) => value,
        Ok(ConfigGetResult::Whole { config }) => config,
        Err(_) => answer, // an unknown shape is still worth showing
    }
}

/// `42`, `true`, `null`, `[…]`, `{…}` and `"quoted"` are JSON; anything
/// else (`gpt-4.1`, `sk-…`) is taken as a plain string, so users rarely need
/// shell-quoted JSON strings.
pub fn parse_value(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// The confirmation should not put API keys or tokens in the scrollback.
fn shown_value(path: &str, value: &Value) -> String {
    let lower = path.to_ascii_lowercase();
    let secret = lower.starts_with("apikeys")
        || ["token", "key", "secret", "password"]
            .iter()
            .any(|w| lower.rsplit('.').next().unwrap_or("").contains(w));
    if secret {
        "***".to_string()
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_json_when_they_parse_else_strings() {
        let parsed: Vec<Value> = [
            "42",
            "true",
            "null",
            "[1,\"a\"]",
            "{\"a\":1}",
            "\"quoted\"",
            "gpt-4.1",
            "sk-ant 1",
            "",
            "{broken",
        ]
        .iter()
        .map(|raw| parse_value(raw))
        .collect();
        assert_eq!(
            parsed,
            vec![
                json!(42),
                json!(true),
                json!(null),
                json!([1, "a"]),
                json!({"a": 1}),
                json!("quoted"),
                json!("gpt-4.1"),
                json!("sk-ant 1"),
                json!(""),
                json!("{broken"),
            ]
        );
    }

    #[test]
    fn config_get_answers_unwrap() {
        assert_eq!(
            config_value(json!({"path": "model.id", "value": "gpt-4.1"})),
            json!("gpt-4.1")
        );
        assert_eq!(
            config_value(json!({"config": {"model": {}}})),
            json!({"model": {}})
        );
        assert_eq!(config_value(json!({"other": 1})), json!({"other": 1}));
    }

    #[test]
    fn secrets_are_not_echoed() {
        let shown: Vec<String> = [
            ("apiKeys.anthropic", json!("sk-1")),
            ("auth.token", json!("t")),
            ("channels.discord.botToken", json!("b")),
            ("model.id", json!("gpt-4.1")),
            ("timeouts.llmMs", json!(1000)),
        ]
        .iter()
        .map(|(path, value)| shown_value(path, value))
        .collect();
        assert_eq!(shown, vec!["***", "***", "***", "\"gpt-4.1\"", "1000"]);
    }
}
