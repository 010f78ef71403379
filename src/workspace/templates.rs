//! The workspace templates (`templates/workspace/*.md`), compiled in and
//! written to `agents/{agentId}/` on the agent's first start.

use super::paths::{
    AGENTS_MD, BOOTSTRAP_MD, HEARTBEAT_MD, IDENTITY_MD, MEMORY_MD, SOUL_MD, TOOLS_MD, USER_MD,
    WORKSPACE_FILES,
};

/// Every template as `(file name, content)`.
pub const TEMPLATES: [(&str, &str); 8] = [
    (
        AGENTS_MD,
        include_str!("../../templates/workspace/AGENTS.md"),
    ),
    (SOUL_MD, include_str!("../../templates/workspace/SOUL.md")),
    (
        IDENTITY_MD,
        include_str!("../../templates/workspace/IDENTITY.md"),
    ),
    (USER_MD, include_str!("../../templates/workspace/USER.md")),
    (
        MEMORY_MD,
        include_str!("../../templates/workspace/MEMORY.md"),
    ),
    (TOOLS_MD, include_str!("../../templates/workspace/TOOLS.md")),
    (
        HEARTBEAT_MD,
        include_str!("../../templates/workspace/HEARTBEAT.md"),
    ),
    (
        BOOTSTRAP_MD,
        include_str!("../../templates/workspace/BOOTSTRAP.md"),
    ),
];

/// The files to write under `agents/{agentId}/` given the top-level file
/// names already there: all templates when the workspace has none of the
/// workspace files (a first start), otherwise nothing — an existing
/// workspace is never overwritten, and commissioning never restarts.
pub fn first_start_templates(existing: &[&str]) -> Vec<(&'static str, &'static str)> {
    if existing.iter().any(|f| WORKSPACE_FILES.contains(f)) {
        return Vec::new();
    }
    TEMPLATES.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::heartbeat_is_empty;

    #[test]
    fn first_start_writes_every_template_once() {
        let names: Vec<&str> = first_start_templates(&["notes.txt"])
            .iter()
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(names, WORKSPACE_FILES.to_vec());
        assert_eq!(first_start_templates(&["USER.md"]), vec![]);
    }

    #[test]
    fn templates_fit_the_prompt_rules() {
        for (name, content) in TEMPLATES {
            assert!(content.starts_with("# "), "{name} opens with a title");
            assert!(content.len() < 4000, "{name} stays short");
        }
        assert!(
            heartbeat_is_empty(TEMPLATES[6].1),
            "HEARTBEAT template adds no section"
        );
        let identity = crate::identity::AgentIdentity::parse(TEMPLATES[2].1);
        assert_eq!(
            identity,
            crate::identity::AgentIdentity::default(),
            "placeholders are skipped"
        );
        assert!(TEMPLATES[7].1.contains("gsv__DeleteFile"));
    }
}
