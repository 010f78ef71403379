//! Skills: SKILL.md files (agent-local `agents/{id}/skills/{name}/` over
//! global `skills/{name}/`), their YAML frontmatter, config overrides and
//! eligibility against the connected nodes.

mod eligibility;
mod frontmatter;
mod host;
pub mod load;
pub mod probe;
mod requires;
mod status;
pub mod yaml;

pub use eligibility::{evaluate, Eligibility};
pub use frontmatter::{parse_skill, SkillDoc};
pub use host::{primary_execution_host, sorted_hosts, HostInfo, CAPABILITIES, HOST_ROLES};
pub use requires::Requirements;
pub use status::{
    skills_status, NodeStatus, PromptSkill, SkillFile, SkillSource, SkillStatus, SkillsStatus,
};

#[cfg(test)]
mod tests;
