//! Self-report and workspace tools, the pure parts: `who_am_i`, `what_do_i_know`, `my_stats`, `session_logs`
//! ([`logs`]), the tool definitions, and the semantics of the native
//! workspace file tools.

mod edit;
mod exec;
mod knowledge;
pub mod logs;
mod tools;

pub use crate::storage::content_type_of;
pub use edit::{apply_edit, content_type, EditError, Edited, WorkspaceCall};
pub use exec::{execute, is_native, native_tool_definitions, NativeCall};
pub use knowledge::{
    count_memories, memory_sections, what_do_i_know, Knowledge, MemorySection,
    MAX_BULLETS_PER_SECTION, MAX_KNOWLEDGE_BYTES,
};
pub use tools::{
    definitions_in, native_workspace_tools, self_report_tools, DELETE_FILE, EDIT_FILE, LIST_FILES,
    MY_STATS, READ_FILE, SESSION_LOGS, WHAT_DO_I_KNOW, WHO_AM_I, WRITE_FILE,
};

use crate::identity::AgentIdentity;
use crate::workspace::paths::agent_root;
use serde::Serialize;

/// Longest SOUL.md excerpt in `who_am_i`, in characters.
pub const MAX_SOUL_EXCERPT: usize = 2048;

/// The `who_am_i` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WhoAmI {
    /// The agent's id.
    pub agent_id: String,
    /// `provider/model`.
    pub model: String,
    /// `agents/{agentId}/`.
    pub workspace_dir: String,
    /// The fields of IDENTITY.md.
    pub identity: AgentIdentity,
    /// `name=…, emoji=…, vibe=…`, as in the system prompt.
    pub identity_line: Option<String>,
    /// The start of SOUL.md, at most 2 048 characters (`…` marks a cut).
    pub soul_excerpt: Option<String>,
}

/// Builds `who_am_i` from the loaded IDENTITY.md and SOUL.md.
pub fn who_am_i(
    agent_id: &str,
    model: &str,
    identity_md: Option<&str>,
    soul_md: Option<&str>,
) -> WhoAmI {
    let identity = identity_md.map(AgentIdentity::parse).unwrap_or_default();
    let soul_excerpt = soul_md.map(str::trim).filter(|s| !s.is_empty()).map(|s| {
        if s.chars().count() <= MAX_SOUL_EXCERPT {
            return s.to_string();
        }
        let mut cut: String = s.chars().take(MAX_SOUL_EXCERPT - 1).collect();
        cut.push('…');
        cut
    });
    WhoAmI {
        agent_id: agent_id.to_string(),
        model: model.to_string(),
        workspace_dir: agent_root(agent_id),
        identity_line: identity.render_line(),
        identity,
        soul_excerpt,
    }
}

/// The `my_stats` result: the workspace's figures, and long-term
/// memory's from its index ([`MyStats::with_memory`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, serde::Deserialize)]
pub struct MyStats {
    /// Archived sessions plus the current one.
    pub sessions_total: u64,
    /// Bullets in MEMORY.md ([`count_memories`]) plus the long-term memory
    /// nodes this session may read (the agent's and its person's).
    pub memories_stored: u64,
    /// Memories the nightly dream promoted into MEMORY.md.
    pub memories_promoted: u64,
    /// When the agent last dreamt, in seconds since the epoch.
    pub last_dream_ts: Option<u64>,
    /// Memories recalled into the agent's prompts in the last 7 days.
    pub recall_events_7d: u64,
    /// The tags most recalled in the last 7 days.
    pub top_concept_tags_7d: Vec<String>,
    /// Top-level workspace files that exist, in layout order.
    pub workspace_files_present: Vec<String>,
    /// This session's tokens (input, output, prompt cache) and what they
    /// cost, estimated; the Session adds them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_tokens: Option<gsv_protocol::TokenCounts>,
}

impl MyStats {
    /// The workspace's figures with long-term memory's added.
    pub fn with_memory(self, m: &crate::memory::calls::MemoryStats) -> Self {
        Self {
            memories_stored: self.memories_stored + m.memories_stored,
            memories_promoted: m.memories_promoted,
            last_dream_ts: m.last_dream_ts,
            recall_events_7d: m.recall_events_7d,
            top_concept_tags_7d: m.top_concept_tags_7d.clone(),
            ..self
        }
    }
}

#[cfg(test)]
mod tests;
