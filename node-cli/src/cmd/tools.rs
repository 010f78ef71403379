//! `gsv tools list|call`: the tools the agent can use, and calling a node
//! tool by hand (the gateway answers when the node does).

use super::{print_answer, GatewayTarget};
use crate::cli::ToolsCommand;
use anyhow::{bail, Context, Result};
use gsv_protocol::{method, NoParams, ToolInvokeParams, ToolsListResult};
use serde_json::Value;
use std::time::Duration;

/// A call waits at most this long (the gateway answers at `timeouts.toolMs`).
const CALL_TIMEOUT: Duration = Duration::from_secs(3600);

pub async fn run(target: &GatewayTarget, command: ToolsCommand) -> Result<()> {
    match command {
        ToolsCommand::List { json } => {
            let conn = target.connect().await?;
            print_answer::<method::ToolsList>(&conn, &NoParams, json, render_list).await?;
        }
        ToolsCommand::Call { tool, args } => {
            let args = parse_args(&args)?;
            let conn = target.connect().await?;
            let params = ToolInvokeParams { tool, args };
            let answer = conn
                .call_with_timeout::<method::ToolInvoke>(&params, CALL_TIMEOUT)
                .await?;
            println!("{}", render_result(&answer.result)?);
        }
    }
    Ok(())
}

fn parse_args(text: &str) -> Result<Value> {
    let value: Value = serde_json::from_str(text)
        .with_context(|| format!("arguments must be a JSON object, got {text:?}"))?;
    if !value.is_object() {
        bail!("arguments must be a JSON object, got {text}");
    }
    Ok(value)
}

/// `name  first line of the description`, names aligned, grouped as listed.
pub fn render_list(list: &ToolsListResult) -> String {
    let width = list.tools.iter().map(|t| t.name.len()).max().unwrap_or(0);
    let mut out = String::new();
    for t in &list.tools {
        let summary = t.description.lines().next().unwrap_or_default();
        out.push_str(&format!("{:width$}  {summary}\n", t.name));
    }
    let nodes = list
        .tools
        .iter()
        .filter(|t| !t.name.starts_with("gsv__"))
        .count();
    if nodes == 0 {
        out.push_str("(no node connected: start one with `gsv node --foreground`)\n");
    }
    out
}

/// A string result as is (command output reads naturally); the rest as
/// pretty JSON.
pub fn render_result(result: &Value) -> Result<String> {
    Ok(match result {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use gsv_protocol::ToolDefinition;
    use serde_json::json;

    fn tool(name: &str, description: &str) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: description.into(),
            input_schema: json!({"type": "object"}),
        }
    }

    #[test]
    fn lists_tools_aligned() {
        let list = ToolsListResult {
            tools: vec![
                tool("gsv__ReadFile", "Read a workspace file.\nMore text."),
                tool("laptop__Bash", "Run a shell command."),
            ],
        };
        assert_eq!(
            render_list(&list),
            "gsv__ReadFile  Read a workspace file.\nlaptop__Bash   Run a shell command.\n"
        );
        let native = ToolsListResult {
            tools: vec![tool("gsv__ReadFile", "Read.")],
        };
        assert_eq!(
            render_list(&native),
            "gsv__ReadFile  Read.\n(no node connected: start one with `gsv node --foreground`)\n"
        );
    }

    #[test]
    fn arguments_must_be_an_object() {
        assert_eq!(
            parse_args(r#"{"command":"ls"}"#).unwrap(),
            json!({"command": "ls"})
        );
        assert_eq!(
            parse_args("[1]").unwrap_err().to_string(),
            "arguments must be a JSON object, got [1]"
        );
        assert_eq!(
            parse_args("ls -la").unwrap_err().to_string(),
            "arguments must be a JSON object, got \"ls -la\""
        );
    }

    #[test]
    fn results_render_plainly() {
        assert_eq!(render_result(&json!("hello\n")).unwrap(), "hello\n");
        assert_eq!(
            render_result(&json!({"exitCode": 0})).unwrap(),
            "{\n  \"exitCode\": 0\n}"
        );
    }
}
