//! Resolves every SKILL.md of an agent into the `skills.status` result
//! and the eligible list the prompt shows.

use super::eligibility::evaluate;
use super::frontmatter::parse_skill;
use super::host::{sorted_hosts, HostInfo};
use super::probe::sanitize_bins;
use super::requires::Requirements;
use crate::config::Config;
use crate::workspace::paths;
use serde::Serialize;
use serde_json::{Map, Value};

/// Where a SKILL.md lives (on the wire in `workspace.read` too).
pub use gsv_protocol::SkillSource;

/// One SKILL.md as the shell read it from R2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// The directory name (`{skillName}` in the key).
    pub dir: String,
    /// Agent-local or global.
    pub source: SkillSource,
    /// The SKILL.md text.
    pub content: String,
}

/// The `skills.status` result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillsStatus {
    /// The agent evaluated.
    pub agent_id: String,
    /// Epoch ms of this evaluation.
    pub refreshed_at: u64,
    /// Bins to probe on nodes: `bins` and `anyBins` of usable, non-`always`
    /// skills, names restricted to `[A-Za-z0-9._+-]`, sorted.
    pub required_bins: Vec<String>,
    /// Connected nodes, by id.
    pub nodes: Vec<NodeStatus>,
    /// Agent-local skills first, then unshadowed global ones.
    pub skills: Vec<SkillStatus>,
}

/// One connected node as `skills.status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeStatus {
    /// The node's id.
    pub node_id: String,
    /// `execution` or `specialized`.
    pub host_role: String,
    /// Declared capability ids.
    pub host_capabilities: Vec<String>,
    /// Lower-cased OS, when reported.
    pub host_os: Option<String>,
    /// Names of set environment variables.
    pub host_env: Vec<String>,
    /// Bins a probe found.
    pub host_bins: Vec<String>,
    /// When bins were last probed (epoch ms).
    pub host_bin_status_updated_at: Option<u64>,
    /// Whether the node can run bin probes (`shell.exec`, and it answers
    /// them).
    pub can_probe_bins: bool,
}

/// One skill as `skills.status` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillStatus {
    /// Frontmatter `name`, else the directory.
    pub name: String,
    /// Frontmatter `description`, else the first paragraph.
    pub description: String,
    /// The R2 key of the SKILL.md in use.
    pub location: String,
    /// Where the agent reads it: `skills/{dir}/SKILL.md`.
    pub read_path: String,
    /// Agent-local or global.
    pub source: SkillSource,
    /// `always`, after config overrides.
    pub always: bool,
    /// Whether the prompt lists it.
    pub eligible: bool,
    /// Nodes meeting its requirements.
    pub eligible_hosts: Vec<String>,
    /// Why it is not eligible.
    pub reasons: Vec<String>,
    /// Its requirements after config overrides.
    pub requirements: Requirements,
    /// `metadata.<ns>.emoji`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emoji: Option<String>,
    /// Frontmatter `homepage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    /// Hidden by `skills.entries.<key>.enabled: false`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// Why the SKILL.md could not be read, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A skill as the system prompt lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSkill {
    /// The skill's name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The R2 key of its SKILL.md.
    pub location: String,
    /// Where the agent reads it (`skills/{dir}/SKILL.md`).
    pub read_path: String,
    /// Whether it is `always` eligible.
    pub always: bool,
}

impl SkillsStatus {
    /// The skills to list in the prompt: eligible, enabled and readable,
    /// agent-local first.
    pub fn prompt_skills(&self) -> Vec<PromptSkill> {
        self.skills
            .iter()
            .filter(|s| s.eligible)
            .map(|s| PromptSkill {
                name: s.name.clone(),
                description: s.description.clone(),
                location: s.location.clone(),
                read_path: s.read_path.clone(),
                always: s.always,
            })
            .collect()
    }

    /// Installed, enabled skills that are not eligible now.
    pub fn ineligible_count(&self) -> usize {
        self.skills
            .iter()
            .filter(|s| !s.eligible && !s.disabled)
            .count()
    }
}

/// Evaluates every skill of `agent_id`. `files` holds the agent-local and
/// global SKILL.md files in any order: agent-local skills come first (by
/// directory), then global ones whose directory or name no agent-local
/// skill already has. `config` supplies `skills.entries` overrides and
/// `requires.config` paths.
pub fn skills_status(
    agent_id: &str,
    files: &[SkillFile],
    hosts: &[HostInfo],
    config: &Config,
    refreshed_at: u64,
) -> SkillsStatus {
    let mut ordered: Vec<&SkillFile> = files.iter().collect();
    ordered.sort_unstable_by(|a, b| {
        (a.source == SkillSource::Global, &a.dir).cmp(&(b.source == SkillSource::Global, &b.dir))
    });
    let entries = config.raw("skills.entries").and_then(Value::as_object);
    let mut seen: Vec<String> = Vec::new();
    let mut skills = Vec::new();
    for file in ordered {
        let skill = evaluate_file(agent_id, file, entries, hosts, config);
        if seen.contains(&file.dir) || seen.contains(&skill.name) {
            continue;
        }
        seen.push(file.dir.clone());
        seen.push(skill.name.clone());
        skills.push(skill);
    }
    let required_bins = sanitize_bins(
        skills
            .iter()
            .filter(|s| !s.always && !s.disabled && s.error.is_none())
            .flat_map(|s| s.requirements.bins.iter().chain(&s.requirements.any_bins)),
    );
    let nodes: Vec<NodeStatus> = sorted_hosts(hosts)
        .into_iter()
        .map(|h| NodeStatus {
            node_id: h.node_id.clone(),
            host_role: h.host_role.clone(),
            host_capabilities: h.host_capabilities.clone(),
            host_os: h.host_os.clone(),
            host_env: h.host_env.clone(),
            host_bins: h.available_bins(),
            host_bin_status_updated_at: h.host_bin_status_updated_at,
            can_probe_bins: h.can_probe_bins(),
        })
        .collect();
    SkillsStatus {
        agent_id: agent_id.to_string(),
        refreshed_at,
        required_bins,
        nodes,
        skills,
    }
}

fn evaluate_file(
    agent_id: &str,
    file: &SkillFile,
    entries: Option<&Map<String, Value>>,
    hosts: &[HostInfo],
    config: &Config,
) -> SkillStatus {
    let location = match file.source {
        SkillSource::Agent => paths::agent_skill_key(agent_id, &file.dir),
        SkillSource::Global => paths::global_skill_key(&file.dir),
    };
    let mut status = SkillStatus {
        name: file.dir.clone(),
        description: String::new(),
        location: location.clone(),
        read_path: format!("skills/{}/SKILL.md", file.dir),
        source: file.source,
        always: false,
        eligible: false,
        eligible_hosts: Vec::new(),
        reasons: Vec::new(),
        requirements: Requirements::default(),
        emoji: None,
        homepage: None,
        disabled: false,
        error: None,
    };
    let doc = match parse_skill(&file.dir, &file.content) {
        Ok(doc) => doc,
        Err(e) => {
            let e = format!("{location}: {e}");
            status.reasons.push(e.clone());
            status.error = Some(e);
            return status;
        }
    };
    // `skills.entries` key: skill name, then directory, then full location.
    let entry = [&doc.name, &file.dir, &location].into_iter().find_map(|k| {
        entries
            .and_then(|m| m.get(k.as_str()))
            .map(|e| (k.clone(), e))
    });
    let mut problems = Vec::new();
    let mut always = doc.always;
    let mut requires_override = None;
    if let Some((key, entry)) = entry {
        let at = format!("skills.entries.{key}");
        match entry {
            Value::Object(e) => {
                match e.get("enabled") {
                    Some(Value::Bool(false)) => {
                        status.disabled = true;
                        status
                            .reasons
                            .push(format!("disabled in the config ({at}.enabled = false)"));
                    }
                    None | Some(Value::Bool(true)) | Some(Value::Null) => {}
                    Some(_) => problems.push(format!("{at}.enabled must be true or false")),
                }
                match e.get("always") {
                    Some(Value::Bool(b)) => always = *b,
                    None | Some(Value::Null) => {}
                    Some(_) => problems.push(format!("{at}.always must be true or false")),
                }
                requires_override = e.get("requires");
            }
            _ => problems.push(format!("{at} must be an object")),
        }
    }
    let (requirements, mut req_problems) =
        Requirements::merged(doc.requires.as_ref(), requires_override);
    problems.append(&mut req_problems);
    status.name = doc.name;
    status.description = doc.description;
    status.always = always;
    status.emoji = doc.emoji;
    status.homepage = doc.homepage;
    if !status.disabled {
        let verdict = evaluate(always, &requirements, &problems, hosts, config);
        status.eligible = verdict.eligible;
        status.eligible_hosts = verdict.hosts;
        status.reasons = verdict.reasons;
    }
    status.requirements = requirements;
    status
}
