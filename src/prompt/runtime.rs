//! The "Runtime" section: who, where and with what this run happens.

use super::PromptContext;
use crate::skills::{primary_execution_host, sorted_hosts};

pub(crate) fn runtime(ctx: &PromptContext<'_>) -> String {
    let session = if ctx.is_main {
        "main"
    } else {
        "not main (MEMORY.md is not loaded)"
    };
    let mut lines = vec![
        format!("- Agent: {}", ctx.agent_id),
        format!("- Session: {session}"),
        format!("- Session key: {}", ctx.session_key),
        format!("- Model: {}/{}", ctx.model_provider, ctx.model_id),
        format!("- Timezone: {}", ctx.timezone),
    ];
    let hosts = sorted_hosts(ctx.hosts);
    let role = |r: &str| {
        let ids: Vec<&str> = hosts
            .iter()
            .filter(|h| h.host_role == r)
            .map(|h| h.node_id.as_str())
            .collect();
        match ids.is_empty() {
            true => "none".to_string(),
            false => ids.join(", "),
        }
    };
    lines.push(format!(
        "- Primary execution host: {}",
        primary_execution_host(ctx.hosts).map_or("none", |h| h.node_id.as_str())
    ));
    lines.push(format!("- Execution hosts: {}", role("execution")));
    lines.push(format!("- Specialized hosts: {}", role("specialized")));
    if hosts.is_empty() {
        lines.push("- No nodes are connected, so no node tools are available.".into());
    } else {
        lines.push("- A node tool runs on the host named before `__`. Use the primary execution host for shell and file work unless the task needs another host's capabilities.".into());
        lines.push("- Hosts:".into());
        for h in hosts {
            let prefix = format!("{}__", h.node_id);
            let tools: Vec<&str> = ctx
                .tools
                .iter()
                .filter_map(|t| t.name.strip_prefix(prefix.as_str()))
                .collect();
            lines.push(format!(
                "  - {} ({}) os={} envKeys={} bins={} capabilities=[{}] tools=[{}]",
                h.node_id,
                h.host_role,
                h.host_os.as_deref().unwrap_or("unknown"),
                h.host_env.len(),
                h.available_bins().len(),
                h.host_capabilities.join(", "),
                tools.join(", "),
            ));
        }
    }
    format!("## Runtime\n\n{}", lines.join("\n"))
}
