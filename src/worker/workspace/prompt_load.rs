//! The system prompt of a run, assembled once when the run starts. The
//! workspace is validated, not re-read: one parallel batch lists the
//! agent's top level, its daily memory window and both skills prefixes,
//! each listing carrying etags, and every body comes from the isolate's
//! text cache when it is held at the listed etag (`r2::cached_text`). A
//! file this isolate never saw is read in that same batch; only a file
//! edited since it was last read here (or a first start's template writes)
//! costs a second, dependent batch. `prompt::build_system_prompt` does the
//! rest.

use crate::config::Config;
use crate::prompt::{build_system_prompt, DailyMemory, PromptContext, PromptLimits, Workspace};
use crate::routing::{agent_id_of, is_main_session_key, RoutingConfig};
use crate::session::internal::NodeSnapshot;
use crate::session::run_config::RunConfig;
use crate::skills::{skills_status, SkillFile, SkillSource};
use crate::worker::native_tools;
use crate::worker::r2;
use crate::worker::rpc::now_ms;
use crate::workspace::paths::*;
use crate::workspace::templates::first_start_templates;
use futures::future::join_all;
use gsv_protocol::{ToolDefinition, WorkspaceLoadStats};
use std::collections::HashMap;
use worker::{Bucket, Env};

/// What a run needs from its agent's workspace, loaded once (and kept in
/// the current run while it waits on tools).
#[derive(Clone, serde::Serialize, serde::Deserialize)]
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

/// `days`: today and yesterday in the user's time zone, as the run saw them.
pub async fn assemble(
    env: &Env,
    config: &Config,
    rc: &RunConfig,
    session_key: &str,
    nodes: &NodeSnapshot,
    (today, yesterday): &(String, String),
) -> worker::Result<RunPrompt> {
    let bucket = env.bucket("STORAGE")?;
    let routing = RoutingConfig::from_config(config);
    let agent = agent_id_of(session_key);
    let is_main = is_main_session_key(session_key, &routing);
    let timezone = config.str_at("userTimezone").unwrap_or("UTC");

    // The first batch: the listings, and the files never seen here.
    let files = FileSet::new(&agent, today, yesterday);
    let skill_prefixes = skill_prefixes(&agent);
    let (found, listing) = futures::join!(
        files.list_and_read_unknown(&bucket),
        list_skills(&bucket, &skill_prefixes)
    );
    let (found, listing) = (found?, listing?);
    let mut load = WorkspaceLoadStats {
        r2_gets: found.gets,
        r2_lists: found.pages + listing.pages,
        batches: found.depth.max(listing.depth),
        files_cached: found.cached,
        ..Default::default()
    };
    let existing: Vec<&str> = WORKSPACE_FILES
        .iter()
        .zip(&found.texts)
        .filter(|(_, t)| !matches!(t, Some(None)))
        .map(|(n, _)| *n)
        .collect();
    let templates = first_start_templates(&existing);
    // The second batch, when there is one: the template writes of a first
    // start, the files edited since this isolate read them, and the
    // SKILL.md bodies it lacks go out together.
    let (written, texts, bodies) = futures::join!(
        write_templates(&bucket, &agent, &templates),
        files.read_stale(&bucket, found.texts),
        skill_bodies(&bucket, listing.found)
    );
    written?;
    let mut texts = texts?;
    let (skill_bodies, counts) = bodies?;
    let stale_reads = texts.iter().filter(|t| t.read).count() as u32;
    load.r2_puts = templates.len() as u32;
    load.r2_gets += counts.read + stale_reads;
    load.skills_read = counts.read;
    load.skills_cached = counts.cached;
    if !templates.is_empty() || counts.read > 0 || stale_reads > 0 {
        load.batches += 1;
    }
    for (name, content) in templates {
        if let Some(i) = WORKSPACE_FILES.iter().position(|f| *f == name) {
            texts[i].content = Some(content.to_string());
        }
    }
    let daily = texts.split_off(WORKSPACE_FILES.len());
    let text = |name: &str| {
        WORKSPACE_FILES
            .iter()
            .position(|f| *f == name)
            .and_then(|i| texts[i].content.clone())
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
        yesterday: yesterday_file.content.map(|content| DailyMemory {
            date: yesterday.clone(),
            content,
        }),
        today: today_file.content.map(|content| DailyMemory {
            date: today.clone(),
            content,
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

/// The workspace's own files of a run: the top-level files, then today's
/// and yesterday's daily memory.
struct FileSet {
    keys: Vec<String>,
    root: String,
    daily: DailyWindow,
}

/// What the first batch learnt of each file of a `FileSet`: its text
/// (`Some(None)`: absent), or `None` when it is listed at an etag this
/// isolate has not read.
struct Found {
    texts: Vec<Option<Option<String>>>,
    gets: u32,
    pages: u32,
    /// The longest chain of dependent requests in the batch.
    depth: u32,
    /// Files known from the cache and the listings alone.
    cached: u32,
}

/// A file's text as the run uses it.
struct FileText {
    content: Option<String>,
    /// Read in the second batch (edited since this isolate read it).
    read: bool,
}

impl FileSet {
    fn new(agent: &str, today: &str, yesterday: &str) -> Self {
        let keys = WORKSPACE_FILES
            .iter()
            .map(|f| file_key(agent, f))
            .chain([today, yesterday].map(|d| daily_memory_key(agent, d)))
            .collect();
        Self {
            keys,
            root: agent_root(agent),
            daily: daily_memory_window(agent, today, yesterday),
        }
    }

    /// One parallel batch: the top level listed (with a delimiter), the
    /// daily memory window listed, and every file this isolate has never
    /// seen read. A listing is skipped when all its files are being read.
    async fn list_and_read_unknown(&self, bucket: &Bucket) -> worker::Result<Found> {
        let n = WORKSPACE_FILES.len();
        let unknown: Vec<bool> = self.keys.iter().map(|k| !r2::cache_knows(k)).collect();
        let (list_root, list_daily) =
            (unknown[..n].contains(&false), unknown[n..].contains(&false));
        let reads = join_all(
            self.keys
                .iter()
                .zip(&unknown)
                .filter(|(_, u)| **u)
                .map(|(k, _)| r2::read_text(bucket, k.as_str())),
        );
        let root = async {
            match list_root {
                true => r2::list_objects(bucket, &self.root, Some("/"))
                    .await
                    .map(Some),
                false => Ok(None),
            }
        };
        let d = &self.daily;
        let daily = async {
            match list_daily {
                true => r2::list_window(bucket, &d.prefix, &d.start_after, &d.last)
                    .await
                    .map(Some),
                false => Ok(None),
            }
        };
        let (reads, root, daily) = futures::join!(reads, root, daily);
        let (mut listed, mut pages, mut depth) = (HashMap::new(), 0, 0);
        for (objects, p) in [root?, daily?].into_iter().flatten() {
            pages += p;
            depth = depth.max(p);
            listed.extend(objects);
        }
        let gets = reads.len() as u32;
        if gets > 0 {
            depth = depth.max(1);
        }
        let (mut reads, mut cached, mut texts) = (reads.into_iter(), 0, Vec::new());
        for (key, unknown) in self.keys.iter().zip(unknown) {
            texts.push(if unknown {
                let read = reads.next().expect("one read per unknown file");
                Some(read?.map(|o| o.content))
            } else {
                let known = r2::cached_text(key, listed.get(key).map(String::as_str));
                cached += known.is_some() as u32;
                known
            });
        }
        Ok(Found {
            texts,
            gets,
            pages,
            depth,
            cached,
        })
    }

    /// Reads, in one parallel batch, the files the first batch found
    /// listed at an etag not held.
    async fn read_stale(
        &self,
        bucket: &Bucket,
        texts: Vec<Option<Option<String>>>,
    ) -> worker::Result<Vec<FileText>> {
        let reads = join_all(
            self.keys
                .iter()
                .zip(&texts)
                .filter(|(_, t)| t.is_none())
                .map(|(k, _)| r2::read_text(bucket, k.as_str())),
        )
        .await;
        let mut reads = reads.into_iter();
        texts
            .into_iter()
            .map(|t| {
                Ok(match t {
                    Some(content) => FileText {
                        content,
                        read: false,
                    },
                    // Deleted since the listing: absent.
                    None => FileText {
                        content: reads
                            .next()
                            .expect("one read per stale file")?
                            .map(|o| o.content),
                        read: true,
                    },
                })
            })
            .collect()
    }
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
    let lists = join_all(prefixes.iter().map(|p| r2::list_objects(bucket, p, None))).await;
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
    let cached: Vec<Option<String>> = found
        .iter()
        .map(|(_, f)| r2::cached_text(&f.key, Some(&f.etag)).flatten())
        .collect();
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
        // (`read_text` remembered the body at the etag it was read at.)
        if let Some(obj) = r? {
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
