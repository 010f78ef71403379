//! The system prompt of a run, assembled once when the run starts: the
//! agent's workspace files, daily memory and skill listings are requested
//! from R2 in one parallel batch; SKILL.md bodies come from a cache keyed
//! by the listed etags, so only a skill added or edited since this isolate
//! last read it costs a second, dependent batch. An agent with no workspace
//! yet gets the templates, and `prompt::build_system_prompt` does the rest.

use super::native_tools;
use super::r2::{self, TextObject};
use super::rpc::now_ms;
use super::tz::time_zone;
use crate::config::Config;
use crate::prompt::{build_system_prompt, DailyMemory, PromptContext, PromptLimits, Workspace};
use crate::routing::{agent_id_of, is_main_session_key, RoutingConfig};
use crate::session::internal::NodeSnapshot;
use crate::session::run_config::RunConfig;
use crate::skills::file_cache::{SkillFileCache, DEFAULT_CAPACITY};
use crate::skills::{skills_status, SkillFile, SkillSource};
use crate::time::today_and_yesterday;
use crate::workspace::paths::*;
use crate::workspace::templates::first_start_templates;
use futures::future::join_all;
use gsv_protocol::{ToolDefinition, WorkspaceLoadStats};
use std::cell::RefCell;
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
    /// The R2 requests made for it (not kept with a waiting run).
    #[serde(skip)]
    pub load: WorkspaceLoadStats,
}

thread_local! {
    /// Shared by every object of this isolate: the listing's etags say
    /// which bodies are still current.
    static SKILL_FILES: RefCell<SkillFileCache> = RefCell::new(SkillFileCache::new(DEFAULT_CAPACITY));
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

    // One batch: every workspace file, both daily files, both skill listings.
    let file_reads = join_all(
        WORKSPACE_FILES
            .iter()
            .map(|f| r2::read_text(&bucket, file_key(&agent, f))),
    );
    let daily_reads =
        join_all([&today, &yesterday].map(|d| r2::read_text(&bucket, daily_memory_key(&agent, d))));
    let skill_prefixes = skill_prefixes(&agent);
    let (files, daily, listing) = futures::join!(
        file_reads,
        daily_reads,
        list_skills(&bucket, &skill_prefixes)
    );
    let listing = listing?;
    let mut load = WorkspaceLoadStats {
        r2_gets: (files.len() + daily.len()) as u32,
        r2_lists: listing.pages,
        batches: listing.depth,
        ..Default::default()
    };

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
    // The second batch, when there is one: the template writes of a first
    // start and the SKILL.md bodies the cache lacks go out together.
    let (written, bodies) = futures::join!(
        write_templates(&bucket, &agent, &templates),
        skill_bodies(&bucket, listing.found)
    );
    written?;
    let (skill_bodies, counts) = bodies?;
    load.r2_puts = templates.len() as u32;
    load.r2_gets += counts.read;
    load.skills_read = counts.read;
    load.skills_cached = counts.cached;
    if !templates.is_empty() || counts.read > 0 {
        load.batches += 1;
    }
    for (name, content) in templates {
        if let Some(i) = WORKSPACE_FILES.iter().position(|f| *f == name) {
            texts[i] = Some(content.to_string());
        }
    }
    let text = |name: &str| {
        WORKSPACE_FILES
            .iter()
            .position(|f| *f == name)
            .and_then(|i| texts[i].clone())
    };

    let skill_files = skill_files(skill_bodies);
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
        load,
    })
}

/// The R2 prefixes holding the agent's own skills and the global ones.
pub fn skill_prefixes(agent: &str) -> [String; 2] {
    [agent_skills_prefix(agent), GLOBAL_SKILLS_PREFIX.to_string()]
}

/// The SKILL.md files under some skills prefixes.
struct SkillListing {
    /// `(index of the prefix, the file)`, in prefix order.
    found: Vec<(usize, ListedSkill)>,
    /// Listing pages requested.
    pages: u32,
    /// The longest chain of dependent pages (1 unless a listing had more
    /// than one page).
    depth: u32,
}

/// Lists every prefix, in parallel.
async fn list_skills(bucket: &Bucket, prefixes: &[String]) -> worker::Result<SkillListing> {
    let lists = join_all(prefixes.iter().map(|p| r2::list_objects(bucket, p))).await;
    let mut listing = SkillListing {
        found: Vec::new(),
        pages: 0,
        depth: 0,
    };
    for (i, (prefix, list)) in prefixes.iter().zip(lists).enumerate() {
        let (objects, pages) = list?;
        listing.pages += pages;
        listing.depth = listing.depth.max(pages);
        listing
            .found
            .extend(skill_md_files(prefix, &objects).into_iter().map(|f| (i, f)));
    }
    Ok(listing)
}

/// How many SKILL.md bodies came from the cache and how many from R2.
struct BodyCounts {
    cached: u32,
    read: u32,
}

/// The body of every listed SKILL.md: from the cache when it holds the
/// listed etag, else read (in one parallel batch) and remembered. Returns
/// `(index of the prefix, dir, body)` in listing order.
async fn skill_bodies(
    bucket: &Bucket,
    found: Vec<(usize, ListedSkill)>,
) -> worker::Result<(Vec<(usize, String, String)>, BodyCounts)> {
    let cached: Vec<Option<String>> = SKILL_FILES.with(|c| {
        let c = c.borrow();
        found
            .iter()
            .map(|(_, f)| c.get(&f.key, &f.etag).map(str::to_string))
            .collect()
    });
    let missing: Vec<&ListedSkill> = found
        .iter()
        .zip(&cached)
        .filter(|(_, c)| c.is_none())
        .map(|((_, f), _)| f)
        .collect();
    let counts = BodyCounts {
        cached: (found.len() - missing.len()) as u32,
        read: missing.len() as u32,
    };
    let reads = join_all(
        missing
            .iter()
            .map(|f| r2::read_text(bucket, f.key.as_str())),
    )
    .await;
    let mut read = std::collections::HashMap::new();
    for (f, r) in missing.into_iter().zip(reads) {
        // Gone since the listing: skipped, like a directory without SKILL.md.
        if let Some(obj) = r? {
            // Remembered at the listed etag: if it changed in between, the
            // next listing shows a new etag and the body is read again.
            SKILL_FILES.with(|c| c.borrow_mut().put(&f.key, &f.etag, &obj.content));
            read.insert(f.key.clone(), obj.content);
        }
    }
    let bodies = found
        .into_iter()
        .zip(cached)
        .filter_map(|((i, f), c)| {
            let body = c.or_else(|| read.remove(&f.key))?;
            Some((i, f.dir, body))
        })
        .collect();
    Ok((bodies, counts))
}

/// `skill_bodies` of the agent's and the global skills as `SkillFile`s.
fn skill_files(bodies: Vec<(usize, String, String)>) -> Vec<SkillFile> {
    bodies
        .into_iter()
        .map(|(i, dir, content)| SkillFile {
            dir,
            source: if i == 0 {
                SkillSource::Agent
            } else {
                SkillSource::Global
            },
            content,
        })
        .collect()
}

/// Lists and reads every skill of `agent` (for `skills.status`).
pub async fn load_skill_files(bucket: &Bucket, agent: &str) -> worker::Result<Vec<SkillFile>> {
    let listing = list_skills(bucket, &skill_prefixes(agent)).await?;
    Ok(skill_files(skill_bodies(bucket, listing.found).await?.0))
}

/// The skills of several agents at once (for probing a node that just
/// connected): one R2 listing for the global skills and one per agent, and
/// the bodies read once, in parallel. Returns `(agent, files)` in the order
/// of `agents`.
pub async fn load_skill_files_of(
    bucket: &Bucket,
    agents: &[String],
) -> worker::Result<Vec<(String, Vec<SkillFile>)>> {
    let prefixes: Vec<String> = std::iter::once(GLOBAL_SKILLS_PREFIX.to_string())
        .chain(agents.iter().map(|a| agent_skills_prefix(a)))
        .collect();
    let listing = list_skills(bucket, &prefixes).await?;
    let (bodies, _) = skill_bodies(bucket, listing.found).await?;
    let mut global = Vec::new();
    let mut own: Vec<Vec<SkillFile>> = vec![Vec::new(); agents.len()];
    for (owner, dir, content) in bodies {
        match owner {
            0 => global.push(SkillFile {
                dir,
                source: SkillSource::Global,
                content,
            }),
            i => own[i - 1].push(SkillFile {
                dir,
                source: SkillSource::Agent,
                content,
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
