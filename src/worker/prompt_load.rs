//! The system prompt of a run, assembled once when the run starts: the
//! agent's workspace is read from R2 in one parallel batch (the SKILL.md
//! files of the listed skill directories in a second one), an agent with
//! no workspace yet gets the templates, and `prompt::build_system_prompt`
//! does the rest.

use super::native_tools;
use super::r2::{self, TextObject};
use super::rpc::now_ms;
use super::tz::time_zone;
use crate::config::Config;
use crate::prompt::{build_system_prompt, DailyMemory, PromptContext, PromptLimits, Workspace};
use crate::routing::{agent_id_of, is_main_session_key, RoutingConfig};
use crate::session::internal::NodeSnapshot;
use crate::session::run_config::RunConfig;
use crate::skills::{skills_status, SkillFile, SkillSource};
use crate::time::today_and_yesterday;
use crate::workspace::paths::*;
use crate::workspace::templates::first_start_templates;
use futures::future::join_all;
use gsv_protocol::ToolDefinition;
use worker::{Bucket, Env};

/// What a run needs from its agent's workspace, loaded once (and kept in
/// the current run while it waits on tools).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct RunPrompt {
    pub system_prompt: String,
    /// The tools offered to the model: native, then the nodes'.
    pub tools: Vec<ToolDefinition>,
    pub agent_id: String,
    pub is_main: bool,
}

pub async fn assemble(
    env: &Env,
    config: &Config,
    rc: &RunConfig,
    session_key: &str,
    nodes: &NodeSnapshot,
) -> worker::Result<RunPrompt> {
    let bucket = env.bucket("STORAGE")?;
    let routing = RoutingConfig::from_config(config);
    let agent = agent_id_of(session_key);
    let is_main = is_main_session_key(session_key, &routing);
    let timezone = config.str_at("userTimezone").unwrap_or("UTC");
    let (today, yesterday) = today_and_yesterday(&*time_zone(timezone), now_ms());

    // Batch 1: every workspace file, both daily files, both skill listings.
    let file_reads = join_all(
        WORKSPACE_FILES
            .iter()
            .map(|f| r2::read_text(&bucket, file_key(&agent, f))),
    );
    let daily_reads =
        join_all([&today, &yesterday].map(|d| r2::read_text(&bucket, daily_memory_key(&agent, d))));
    let skill_prefixes = skill_prefixes(&agent);
    let skill_lists = join_all(
        skill_prefixes
            .iter()
            .map(|p| r2::list(&bucket, p, Some("/"))),
    );
    let (files, daily, lists) = futures::join!(file_reads, daily_reads, skill_lists);

    let mut texts: Vec<Option<String>> = Vec::new();
    for f in files {
        texts.push(f?.map(|o: TextObject| o.content));
    }
    let existing: Vec<&str> = WORKSPACE_FILES
        .iter()
        .zip(&texts)
        .filter(|(_, t)| t.is_some())
        .map(|(n, _)| *n)
        .collect();
    let templates = first_start_templates(&existing);
    if !templates.is_empty() {
        write_templates(&bucket, &agent, &templates).await?;
        for (name, content) in templates {
            if let Some(i) = WORKSPACE_FILES.iter().position(|f| *f == name) {
                texts[i] = Some(content.to_string());
            }
        }
    }
    let text = |name: &str| {
        WORKSPACE_FILES
            .iter()
            .position(|f| *f == name)
            .and_then(|i| texts[i].clone())
    };

    // Batch 2: the SKILL.md of every listed skill directory.
    let mut listed = Vec::new();
    for l in lists {
        listed.push(l?.1);
    }
    let skill_files = read_skill_files(&bucket, &agent, &skill_prefixes, &listed).await?;
    let status = skills_status(&agent, &skill_files, &nodes.hosts, config, now_ms() as u64);

    let [today_file, yesterday_file] = <[_; 2]>::try_from(daily).unwrap_or_else(|_| unreachable!());
    let ws = Workspace {
        soul: text(SOUL_MD),
        identity: text(IDENTITY_MD),
        user: text(USER_MD),
        agents: text(AGENTS_MD),
        memory: if is_main { text(MEMORY_MD) } else { None },
        tools: text(TOOLS_MD),
        heartbeat: text(HEARTBEAT_MD),
        bootstrap: text(BOOTSTRAP_MD),
        yesterday: yesterday_file?.map(|o| DailyMemory {
            date: yesterday.clone(),
            content: o.content,
        }),
        today: today_file?.map(|o| DailyMemory {
            date: today.clone(),
            content: o.content,
        }),
        skills: status.prompt_skills(),
        ineligible_skills: status.ineligible_count(),
    };
    let mut tools = native_tools::definitions(is_main);
    tools.extend(nodes.tools.iter().cloned());
    if !nodes.hosts.is_empty() {
        tools.push(crate::gateway::transfer::definition());
    }
    let ctx = PromptContext {
        agent_id: &agent,
        session_key,
        is_main,
        model_provider: &rc.provider,
        model_id: &rc.model,
        timezone,
        channel: None,
        tools: &tools,
        hosts: &nodes.hosts,
        base_prompt: &rc.system_prompt,
        heartbeat_prompt: config.str_at("agents.defaultHeartbeat.prompt"),
    };
    let system_prompt = build_system_prompt(&ws, &ctx, PromptLimits::from_config(config));
    Ok(RunPrompt {
        system_prompt,
        tools,
        agent_id: agent,
        is_main,
    })
}

/// The R2 prefixes holding the agent's own skills and the global ones.
pub fn skill_prefixes(agent: &str) -> [String; 2] {
    [agent_skills_prefix(agent), GLOBAL_SKILLS_PREFIX.to_string()]
}

/// Reads, in parallel, the SKILL.md of every skill directory listed under
/// the two `skill_prefixes` (`delimited[i]` = the delimited prefixes of a
/// listing of `prefixes[i]`).
pub async fn read_skill_files(
    bucket: &Bucket,
    agent: &str,
    prefixes: &[String; 2],
    delimited: &[Vec<String>],
) -> worker::Result<Vec<SkillFile>> {
    let mut wanted = Vec::new();
    for ((prefix, source), dirs) in prefixes
        .iter()
        .zip([SkillSource::Agent, SkillSource::Global])
        .zip(delimited)
    {
        for dir in skill_dirs(prefix, dirs) {
            let key = match source {
                SkillSource::Agent => agent_skill_key(agent, &dir),
                SkillSource::Global => global_skill_key(&dir),
            };
            wanted.push((dir, source, key));
        }
    }
    let reads = join_all(
        wanted
            .iter()
            .map(|(_, _, key)| r2::read_text(bucket, key.as_str())),
    )
    .await;
    let mut files = Vec::new();
    for ((dir, source, _), read) in wanted.into_iter().zip(reads) {
        if let Some(obj) = read? {
            files.push(SkillFile {
                dir,
                source,
                content: obj.content,
            });
        }
    }
    Ok(files)
}

/// Lists and reads every skill of `agent` (for `skills.status`).
pub async fn load_skill_files(bucket: &Bucket, agent: &str) -> worker::Result<Vec<SkillFile>> {
    let prefixes = skill_prefixes(agent);
    let lists = join_all(prefixes.iter().map(|p| r2::list(bucket, p, Some("/")))).await;
    let mut delimited = Vec::new();
    for l in lists {
        delimited.push(l?.1);
    }
    read_skill_files(bucket, agent, &prefixes, &delimited).await
}

/// The skills of several agents at once (for probing a node that just
/// connected): one R2 listing for the global skills and one per agent, and
/// every SKILL.md read once, in parallel. Returns `(agent, files)` in the
/// order of `agents`.
pub async fn load_skill_files_of(
    bucket: &Bucket,
    agents: &[String],
) -> worker::Result<Vec<(String, Vec<SkillFile>)>> {
    let prefixes: Vec<String> = std::iter::once(GLOBAL_SKILLS_PREFIX.to_string())
        .chain(agents.iter().map(|a| agent_skills_prefix(a)))
        .collect();
    let lists = join_all(prefixes.iter().map(|p| r2::list(bucket, p, Some("/")))).await;
    // (0 for global, i + 1 for agents[i]; directory; key)
    let mut wanted = Vec::new();
    for (owner, (prefix, list)) in prefixes.iter().zip(lists).enumerate() {
        for dir in skill_dirs(prefix, &list?.1) {
            let key = match owner {
                0 => global_skill_key(&dir),
                i => agent_skill_key(&agents[i - 1], &dir),
            };
            wanted.push((owner, dir, key));
        }
    }
    let reads = join_all(
        wanted
            .iter()
            .map(|(_, _, key)| r2::read_text(bucket, key.as_str())),
    )
    .await;
    let mut global = Vec::new();
    let mut own: Vec<Vec<SkillFile>> = vec![Vec::new(); agents.len()];
    for ((owner, dir, _), read) in wanted.into_iter().zip(reads) {
        let Some(obj) = read? else { continue };
        match owner {
            0 => global.push(SkillFile {
                dir,
                source: SkillSource::Global,
                content: obj.content,
            }),
            i => own[i - 1].push(SkillFile {
                dir,
                source: SkillSource::Agent,
                content: obj.content,
            }),
        }
    }
    Ok(agents
        .iter()
        .cloned()
        .zip(own)
        .map(|(agent, mut files)| {
            files.extend(global.iter().cloned());
            (agent, files)
        })
        .collect())
}

async fn write_templates(
    bucket: &Bucket,
    agent: &str,
    templates: &[(&str, &str)],
) -> worker::Result<()> {
    let writes = join_all(
        templates
            .iter()
            .map(|(name, content)| r2::write_text(bucket, file_key(agent, name), content)),
    );
    writes.await.into_iter().collect()
}
