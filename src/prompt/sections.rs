//! Sections built from workspace files, daily notes, heartbeat and skills.

use super::budget::Budget;
use super::heartbeat::{heartbeat_is_empty, strip_html_comments};
use super::{DailyMemory, PromptContext};
use crate::skills::PromptSkill;
use gsv_protocol::ToolDefinition;

/// `## {title}` then the budgeted file text; `None` when absent or blank.
pub(crate) fn file_section(
    budget: &mut Budget,
    title: &str,
    label: &str,
    content: Option<&str>,
) -> Option<String> {
    let body = budget.take(label, content?)?;
    Some(format!("## {title}\n\n{body}"))
}

/// "Recent Context" with `### Yesterday (date)` then `### Today (date)`.
pub(crate) fn recent_context(
    budget: &mut Budget,
    yesterday: Option<&DailyMemory>,
    today: Option<&DailyMemory>,
) -> Option<String> {
    let mut parts = Vec::new();
    for (when, day) in [("Yesterday", yesterday), ("Today", today)] {
        let Some(day) = day else { continue };
        let label = format!("memory/{}.md", day.date);
        if let Some(body) = budget.take(&label, &day.content) {
            parts.push(format!("### {when} ({})\n\n{body}", day.date));
        }
    }
    (!parts.is_empty()).then(|| format!("## Recent Context\n\n{}", parts.join("\n\n")))
}

/// "Heartbeats", only when HEARTBEAT.md has meaningful content.
pub(crate) fn heartbeats(
    budget: &mut Budget,
    heartbeat_md: Option<&str>,
    ctx: &PromptContext<'_>,
) -> Option<String> {
    let md = heartbeat_md.filter(|m| !heartbeat_is_empty(m))?;
    // Comments in HEARTBEAT.md are notes for the human (the template's
    // how-to); they are not injected on every poll.
    let body = budget.take("HEARTBEAT.md", &strip_html_comments(md))?;
    let mut s = String::from(
        "## Heartbeats\n\nHeartbeat polls arrive as messages carrying the heartbeat prompt. On a poll, do what HEARTBEAT.md asks, and don't infer or repeat old tasks from earlier chats. If nothing needs attention, reply exactly: HEARTBEAT_OK",
    );
    if let Some(p) = ctx
        .heartbeat_prompt
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        s.push_str(&format!("\n\nConfigured heartbeat prompt: {p}"));
    }
    s.push_str(&format!("\n\n### HEARTBEAT.md\n\n{body}"));
    Some(s)
}

/// "Skills (Mandatory Scan)", when at least one skill is eligible.
pub(crate) fn skills(
    skills: &[PromptSkill],
    ineligible: usize,
    tools: &[ToolDefinition],
) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let read = tools
        .iter()
        .find(|t| t.name.eq_ignore_ascii_case("gsv__ReadFile"))
        .map_or("gsv__ReadFile", |t| t.name.as_str());
    let mut s = format!(
        "## Skills (Mandatory Scan)

Before you reply, scan <available_skills>.
- If exactly one skill clearly applies, read its <read_path> with {read}, then follow it.
- If several apply, choose the most specific and read only that one.
- If none applies, read none.
Read at most one skill up front; read another only when the task turns out to need it.

<available_skills>"
    );
    for sk in skills {
        let always = if sk.always { " always=\"true\"" } else { "" };
        s.push_str(&format!(
            "\n<skill name=\"{}\"{always}>\n<description>{}</description>\n<location>{}</location>\n<read_path>{}</read_path>\n</skill>",
            xml(&sk.name),
            xml(&sk.description),
            xml(&sk.location),
            xml(&sk.read_path),
        ));
    }
    s.push_str("\n</available_skills>");
    if ineligible > 0 {
        let what = if ineligible == 1 {
            "1 more installed skill is".to_string()
        } else {
            format!("{ineligible} more installed skills are")
        };
        s.push_str(&format!(
            "\n\n{what} not listed because the connected hosts don't meet its requirements."
        ));
    }
    Some(s)
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
