//! System prompt assembly: pure text from an already-loaded [`Workspace`]
//! and the run's [`PromptContext`]. The Session DO loads the files from R2
//! and calls [`build_system_prompt`] once per LLM call.

mod budget;
mod heartbeat;
mod runtime;
mod scaffold;
mod sections;

pub use budget::PromptLimits;
pub use heartbeat::{heartbeat_is_empty, strip_html_comments};
pub use scaffold::MAX_TOOL_DESCRIPTION;

use crate::identity::AgentIdentity;
use crate::skills::{HostInfo, PromptSkill};
use budget::Budget;
use gsv_protocol::ToolDefinition;
use sections::file_section;

/// Between two sections.
pub const SECTION_SEPARATOR: &str = "\n\n---\n\n";

/// One daily memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DailyMemory {
    /// `YYYY-MM-DD` (UTC), as in the file name.
    pub date: String,
    /// The file's text.
    pub content: String,
}

/// The workspace as loaded for one call: `None` = the file is absent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Workspace {
    /// SOUL.md.
    pub soul: Option<String>,
    /// IDENTITY.md.
    pub identity: Option<String>,
    /// USER.md.
    pub user: Option<String>,
    /// AGENTS.md.
    pub agents: Option<String>,
    /// Loaded only for the main session.
    pub memory: Option<String>,
    /// TOOLS.md.
    pub tools: Option<String>,
    /// HEARTBEAT.md.
    pub heartbeat: Option<String>,
    /// BOOTSTRAP.md: while present, the prompt is the commissioning one.
    pub bootstrap: Option<String>,
    /// `memory/{yesterday}.md`.
    pub yesterday: Option<DailyMemory>,
    /// `memory/{today}.md`.
    pub today: Option<DailyMemory>,
    /// Eligible skills, agent-local first (`SkillsStatus::prompt_skills`).
    pub skills: Vec<PromptSkill>,
    /// Installed skills left out because no host meets their requirements.
    pub ineligible_skills: usize,
}

/// Everything about the run that the prompt mentions.
#[derive(Debug, Clone, Copy)]
pub struct PromptContext<'a> {
    /// The agent whose workspace this is.
    pub agent_id: &'a str,
    /// The canonical session key.
    pub session_key: &'a str,
    /// Whether this is the agent's main session (MEMORY.md is private to it).
    pub is_main: bool,
    /// Provider of the model this run calls.
    pub model_provider: &'a str,
    /// Model id of this run.
    pub model_id: &'a str,
    /// IANA name (`userTimezone`).
    pub timezone: &'a str,
    /// The tools attached to this run, native and node.
    pub tools: &'a [ToolDefinition],
    /// Connected nodes.
    pub hosts: &'a [HostInfo],
    /// Session `systemPrompt` ‖ config `systemPrompt` ‖ the default.
    pub base_prompt: &'a str,
    /// The configured heartbeat prompt, quoted in the Heartbeats section.
    pub heartbeat_prompt: Option<&'a str>,
}

/// Assembles the system prompt.
///
/// Normal order: scaffold (base prompt, Tooling,
/// Tool Call Style, Safety, Workspace, Workspace Files (Injected)) → Your
/// Soul → Your Identity → About Your Human → Operating Instructions →
/// Long-Term Memory (main session only) → Recent Context (Yesterday, Today)
/// → Tool Notes → Heartbeats (meaningful HEARTBEAT.md only) → Skills
/// (Mandatory Scan) (eligible skills only) → Chat App Messages → Runtime.
///
/// When BOOTSTRAP.md exists: scaffold → COMMISSIONING CEREMONY (First Run)
/// → Current Soul → Current Identity → About Your Human → Chat App
/// Messages → Runtime.
///
/// Nothing here depends on the message a run answers (the memories
/// recalled for it go with the message, `UserMessage::context`; a chat
/// app's envelope names the channel and time): between two runs the prompt
/// is the same text unless what it is made from changed, so a provider's
/// cache of it holds.
pub fn build_system_prompt(
    ws: &Workspace,
    ctx: &PromptContext<'_>,
    limits: PromptLimits,
) -> String {
    let mut budget = Budget::new(limits);
    let mut out = scaffold::scaffold(ctx);
    let mut push = |s: Option<String>| out.extend(s);
    if let Some(bootstrap) = ws.bootstrap.as_deref().filter(|b| !b.trim().is_empty()) {
        // Bootstrap: the core scaffold, then BOOTSTRAP.md as a commissioning
        // ceremony, followed by SOUL.md, IDENTITY.md, and USER.md if present;
        // other workspace files are skipped. Runtime is not a workspace file
        // and is always shown, so it stays (the ceremony needs
        // to know which session and channel it runs in). HEARTBEAT.md is a
        // workspace file, so unlike upstream there is no Heartbeats section;
        // skills are skipped too. IDENTITY.md is shown verbatim here: the
        // agent has to see the template fields it is asked to fill in.
        push(
            budget
                .take("BOOTSTRAP.md", bootstrap)
                .map(|b| format!("## COMMISSIONING CEREMONY (First Run)\n\nBOOTSTRAP.md exists, so you have not been commissioned yet. Follow the ceremony below; it ends with deleting BOOTSTRAP.md.\n\n{b}")),
        );
        push(file_section(
            &mut budget,
            "Current Soul (update during commissioning)",
            "SOUL.md",
            ws.soul.as_deref(),
        ));
        push(file_section(
            &mut budget,
            "Current Identity (fill in during commissioning)",
            "IDENTITY.md",
            ws.identity.as_deref(),
        ));
        push(file_section(
            &mut budget,
            "About Your Human",
            "USER.md",
            ws.user.as_deref(),
        ));
    } else {
        push(file_section(
            &mut budget,
            "Your Soul",
            "SOUL.md",
            ws.soul.as_deref(),
        ));
        // IDENTITY.md is rendered as a single line
        // (`name=…, emoji=…, vibe=…`); a file with none of those fields set
        // (an unfilled template) adds no section.
        let identity_line = ws
            .identity
            .as_deref()
            .and_then(|md| AgentIdentity::parse(md).render_line());
        push(file_section(
            &mut budget,
            "Your Identity",
            "IDENTITY.md",
            identity_line.as_deref(),
        ));
        push(file_section(
            &mut budget,
            "About Your Human",
            "USER.md",
            ws.user.as_deref(),
        ));
        push(file_section(
            &mut budget,
            "Operating Instructions",
            "AGENTS.md",
            ws.agents.as_deref(),
        ));
        if ctx.is_main {
            push(file_section(
                &mut budget,
                "Long-Term Memory",
                "MEMORY.md",
                ws.memory.as_deref(),
            ));
        }
        push(sections::recent_context(
            &mut budget,
            ws.yesterday.as_ref(),
            ws.today.as_ref(),
        ));
        push(file_section(
            &mut budget,
            "Tool Notes",
            "TOOLS.md",
            ws.tools.as_deref(),
        ));
        push(sections::heartbeats(
            &mut budget,
            ws.heartbeat.as_deref(),
            ctx,
        ));
        push(sections::skills(
            &ws.skills,
            ws.ineligible_skills,
            ctx.tools,
        ));
    }
    out.push(format!(
        "## Chat App Messages\n\n{}",
        crate::channels::envelope::PROMPT_NOTE
    ));
    out.push(runtime::runtime(ctx));
    out.join(SECTION_SEPARATOR)
}

#[cfg(test)]
mod row_tests;
#[cfg(test)]
mod tests;
