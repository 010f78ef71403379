//! The system prompt of a run, assembled once when the run starts. The
//! workspace is validated, not re-read: one parallel batch lists the
//! agent's top level, its daily memory window and both skills prefixes,
//! each listing carrying etags, and every body comes from the store's
//! text cache when it is held at the listed etag. A file the cache never
//! saw is read in that same batch; only a file edited since it was last
//! read here (or a first start's template writes) costs a second,
//! dependent batch. `prompt::build_system_prompt` does the rest.

use crate::config::Config;
use crate::prompt::{build_system_prompt, DailyMemory, PromptContext, PromptLimits, Workspace};
use crate::routing::{agent_id_of, is_main_session_key, RoutingConfig};
use crate::selfreport::native_tool_definitions;
use crate::session::internal::NodeSnapshot;
use crate::session::run_config::RunConfig;
use crate::skills::load::{list_skills, skill_bodies, skill_files, skill_prefixes};
use crate::skills::skills_status;
use crate::storage::{
    list_or_reuse, top_level_listing, tree_listing, ListingCost, ObjectStore, Reuse, StoreResult,
};
use crate::trust::{ToolPolicy, Trust};
use crate::workspace::paths::*;
use crate::workspace::templates::first_start_templates;
use futures::future::join_all;
use gsv_protocol::{ToolDefinition, WorkspaceLoadStats};
use std::collections::HashMap;

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;

/// What a run needs from its agent's workspace, loaded once (and kept in
/// the current run while it waits on tools).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RunPrompt {
    pub system_prompt: String,
    /// The tools offered to the model: native, then the nodes'.
    pub tools: Vec<ToolDefinition>,
    pub agent_id: String,
    pub is_main: bool,
    /// Who spoke: what its tools were chosen for, and what a call is
    /// checked against.
    #[serde(default)]
    pub trust: Trust,
    /// The store requests made for it (not kept with a waiting run).
    #[serde(skip)]
    pub load: WorkspaceLoadStats,
    /// The system prompt and tools as the last provider called with them
    /// writes them (that provider's body kind and cache setting), made
    /// once per prompt.
    #[serde(skip)]
    pub prepared: std::cell::RefCell<Option<(PreparedKind, std::rc::Rc<crate::llm::Prepared>)>>,
    /// The system prompt's token estimate, made once per prompt.
    #[serde(skip)]
    system_tokens: std::cell::Cell<Option<u64>>,
    /// When the oldest listing another run took for it was taken (`None`:
    /// everything was listed or read for it): it was checked against R2
    /// then, not when it was made.
    #[serde(skip)]
    pub reused_listing_from: Option<u64>,
}

impl RunPrompt {
    /// The system prompt's token estimate (what compaction counts for it).
    pub fn system_tokens(&self) -> u64 {
        if let Some(tokens) = self.system_tokens.get() {
            return tokens;
        }
        let tokens = crate::session::compaction::estimate_text_tokens(&self.system_prompt);
        self.system_tokens.set(Some(tokens));
        tokens
    }

    /// The system prompt and tools serialized for the body kind `kind`,
    /// made by `make` the first time.
    pub fn prepared_for(
        &self,
        kind: PreparedKind,
        make: impl FnOnce() -> crate::llm::Prepared,
    ) -> std::rc::Rc<crate::llm::Prepared> {
        let mut kept = self.prepared.borrow_mut();
        match &*kept {
            Some((k, p)) if *k == kind => p.clone(),
            _ => {
                let p = std::rc::Rc::new(make());
                *kept = Some((kind, p.clone()));
                p
            }
        }
    }
}

/// A provider's body kind (its `api`) and the cache setting its parts
/// were written for.
pub type PreparedKind = (&'static str, Option<crate::llm::CacheTtl>);

/// What a run's prompt is assembled for.
pub struct RunInputs<'a> {
    pub config: &'a Config,
    pub rc: &'a RunConfig,
    pub session_key: &'a str,
    pub nodes: &'a NodeSnapshot,
    /// Today and yesterday in the user's time zone, as the run saw them.
    pub days: &'a (String, String),
    /// Now, for the skills' eligibility.
    pub now_ms: u64,
    /// When listings other runs of this isolate took may stand for this
    /// run's (`None`: everything is listed).
    pub reuse: Option<Reuse<'a>>,
    /// Who spoke: the tools `tools.policy` allows at that level are the
    /// only ones offered.
    pub trust: Trust,
}

pub async fn assemble<S: ObjectStore>(store: &S, run: RunInputs<'_>) -> StoreResult<RunPrompt> {
    let RunInputs {
        config,
        session_key,
        nodes,
        days: (today, yesterday),
        now_ms,
        reuse,
        ..
    } = run;
    let routing = RoutingConfig::from_config(config);
    let agent = agent_id_of(session_key);
    let is_main = is_main_session_key(session_key, &routing);

    // The first batch: the listings, and the files never seen here.
    let files = FileSet::new(&agent, today, yesterday);
    let skill_prefixes = skill_prefixes(&agent);
    let (found, listing) = futures::join!(
        files.list_and_read_unknown(store, reuse.as_ref()),
        list_skills(store, &skill_prefixes, reuse.as_ref())
    );
    let (found, listing) = (found?, listing?);
    let lists = found.lists.and(listing.cost);
    let mut load = WorkspaceLoadStats {
        r2_gets: found.gets,
        r2_lists: lists.pages,
        // The reads of unknown files go out beside the listings.
        batches: lists.depth.max(u32::from(found.gets > 0)),
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
    // start, the files edited since the cache read them, and the SKILL.md
    // bodies it lacks go out together.
    let (written, texts, bodies) = futures::join!(
        write_templates(store, &agent, &templates),
        files.read_stale(store, found.texts),
        skill_bodies(store, listing.found)
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
    let mut daily = texts.split_off(WORKSPACE_FILES.len()).into_iter();
    let text = |name: &str| {
        WORKSPACE_FILES
            .iter()
            .position(|f| *f == name)
            .and_then(|i| texts[i].content.clone())
    };

    let skill_files = skill_files(skill_bodies);
    let status = skills_status(&agent, &skill_files, &nodes.hosts, config, now_ms);

    // `FileSet` keys end with today's file, then yesterday's.
    let (today_file, yesterday_file) = (daily.next(), daily.next());
    let dated = |f: Option<FileText>, date: &String| {
        f.and_then(|f| f.content).map(|content| DailyMemory {
            date: date.clone(),
            content,
        })
    };
    let ws = Workspace {
        soul: text(SOUL_MD),
        identity: text(IDENTITY_MD),
        // A group chat is not the owner's: what USER.md says about them
        // stays out, like MEMORY.md.
        user: if is_group_session(session_key) {
            None
        } else {
            text(USER_MD)
        },
        agents: text(AGENTS_MD),
        memory: if is_main { text(MEMORY_MD) } else { None },
        tools: text(TOOLS_MD),
        heartbeat: text(HEARTBEAT_MD),
        bootstrap: text(BOOTSTRAP_MD),
        yesterday: dated(yesterday_file, yesterday),
        today: dated(today_file, today),
        skills: status.prompt_skills(),
        ineligible_skills: status.ineligible_count(),
    };
    // A heartbeat reads a light context (schedule::heartbeat::light).
    let ws = match crate::schedule::heartbeat::light::is_light(session_key, config) {
        true => crate::schedule::heartbeat::light::light(ws),
        false => ws,
    };
    Ok(RunPrompt {
        reused_listing_from: lists.reused_from,
        ..render(&ws, &run, load)
    })
}

/// The prompt of `run` from its workspace as read. Nothing in it depends
/// on the run's message (what is recalled for a message goes with the
/// message), so it stays the same, byte for byte, from run to run until
/// the workspace, config, nodes, trust or day change: a provider's cache
/// of the prompt holds.
fn render(ws: &Workspace, run: &RunInputs<'_>, load: WorkspaceLoadStats) -> RunPrompt {
    let routing = RoutingConfig::from_config(run.config);
    let agent = agent_id_of(run.session_key);
    let is_main = is_main_session_key(run.session_key, &routing);
    let timezone = run.config.str_at("userTimezone").unwrap_or("UTC");
    let mut tools = native_tool_definitions(is_main);
    tools.extend(run.nodes.tools.iter().cloned());
    if !run.nodes.hosts.is_empty() {
        tools.push(crate::gateway::transfer::definition());
    }
    // What the policy refuses is never offered (nor named in the prompt).
    let policy = ToolPolicy::for_level(run.config, &agent, run.trust.acts_as);
    tools.retain(|t| policy.allows(&t.name));
    let ctx = PromptContext {
        agent_id: &agent,
        session_key: run.session_key,
        is_main,
        model_provider: &run.rc.provider,
        model_id: &run.rc.model,
        timezone,
        tools: &tools,
        hosts: &run.nodes.hosts,
        base_prompt: &run.rc.system_prompt,
        heartbeat_prompt: run.config.str_at("agents.defaultHeartbeat.prompt"),
    };
    let system_prompt = build_system_prompt(ws, &ctx, PromptLimits::from_config(run.config));
    RunPrompt {
        system_prompt,
        tools,
        agent_id: agent,
        is_main,
        trust: run.trust,
        load,
        prepared: Default::default(),
        system_tokens: Default::default(),
        reused_listing_from: None,
    }
}

/// The listing a prompt's assembly keeps that lists `key`, a key of
/// agent `agent`'s workspace: the top level of the workspace, or the
/// agent's or the global skills. `None` for any other key (a daily memory
/// window lists a few dates, not a directory).
pub fn listing_of(agent: &str, key: &str) -> Option<String> {
    let root = agent_root(agent);
    if key
        .strip_prefix(&root)
        .is_some_and(|name| !name.is_empty() && !name.contains('/'))
    {
        return Some(top_level_listing(&root));
    }
    skill_prefixes(agent)
        .into_iter()
        .find(|prefix| key.starts_with(prefix.as_str()))
        .map(|prefix| tree_listing(&prefix))
}

/// The workspace's own files of a run: the top-level files, then today's
/// and yesterday's daily memory.
struct FileSet {
    keys: Vec<String>,
    root: String,
    daily: DailyWindow,
}

/// What the first batch learnt of each file of a `FileSet`: its text
/// (`Some(None)`: absent), or `None` when it is listed at an etag the
/// cache does not hold.
struct Found {
    texts: Vec<Option<Option<String>>>,
    gets: u32,
    /// The listings of the top level and the daily window.
    lists: ListingCost,
    /// Files known from the cache and the listings alone.
    cached: u32,
}

/// A file's text as the run uses it.
struct FileText {
    content: Option<String>,
    /// Read in the second batch (edited since the cache read it).
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
    /// daily memory window listed, and every file the cache has never
    /// seen read. A listing is skipped when all its files are being read.
    async fn list_and_read_unknown<S: ObjectStore>(
        &self,
        store: &S,
        reuse: Option<&Reuse<'_>>,
    ) -> StoreResult<Found> {
        let n = WORKSPACE_FILES.len();
        let unknown: Vec<bool> = self.keys.iter().map(|k| !store.texts().knows(k)).collect();
        let (list_root, list_daily) =
            (unknown[..n].contains(&false), unknown[n..].contains(&false));
        let reads = join_all(
            self.keys
                .iter()
                .zip(&unknown)
                .filter(|(_, u)| **u)
                .map(|(k, _)| store.read_text(k)),
        );
        let root = async {
            match list_root {
                true => {
                    let list = store.list_objects(&self.root, Some("/"));
                    let key = top_level_listing(&self.root);
                    list_or_reuse(store, reuse, key, list).await.map(Some)
                }
                false => Ok(None),
            }
        };
        let d = &self.daily;
        let daily = async {
            match list_daily {
                true => {
                    let list = store.list_window(&d.prefix, &d.start_after, &d.last);
                    let key = format!("daily|{}|{}|{}", d.prefix, d.start_after, d.last);
                    list_or_reuse(store, reuse, key, list).await.map(Some)
                }
                false => Ok(None),
            }
        };
        let (reads, root, daily) = futures::join!(reads, root, daily);
        let (mut listed, mut lists) = (HashMap::new(), ListingCost::default());
        for list in [root?, daily?].into_iter().flatten() {
            lists.add(&list);
            listed.extend(list.objects);
        }
        let gets = reads.len() as u32;
        let (mut reads, mut cached, mut texts) = (reads.into_iter(), 0, Vec::new());
        for (key, unknown) in self.keys.iter().zip(unknown) {
            texts.push(if unknown {
                // One read per unknown file, in order.
                Some(reads.next().transpose()?.flatten().map(|o| o.content))
            } else {
                let etag = listed.get(key).map(|v| v.etag.as_str());
                let known = store.texts().cached_text(key, etag);
                cached += known.is_some() as u32;
                known
            });
        }
        Ok(Found {
            texts,
            gets,
            lists,
            cached,
        })
    }

    /// Reads, in one parallel batch, the files the first batch found
    /// listed at an etag not held.
    async fn read_stale<S: ObjectStore>(
        &self,
        store: &S,
        texts: Vec<Option<Option<String>>>,
    ) -> StoreResult<Vec<FileText>> {
        let reads = join_all(
            self.keys
                .iter()
                .zip(&texts)
                .filter(|(_, t)| t.is_none())
                .map(|(k, _)| store.read_text(k)),
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
                    // One read per stale file, in order; deleted since the
                    // listing: absent.
                    None => FileText {
                        content: reads.next().transpose()?.flatten().map(|o| o.content),
                        read: true,
                    },
                })
            })
            .collect()
    }
}

async fn write_templates<S: ObjectStore>(
    store: &S,
    agent: &str,
    templates: &[(&str, &str)],
) -> StoreResult<()> {
    let keys: Vec<String> = templates.iter().map(|(n, _)| file_key(agent, n)).collect();
    let writes = join_all(
        keys.iter()
            .zip(templates)
            .map(|(key, (_, content))| store.write_text(key, content)),
    );
    for written in writes.await {
        written?;
    }
    Ok(())
}

/// Whether the session is a group chat's (`agent:{id}:{channel}:group:…`,
/// or a channel or thread of one).
fn is_group_session(session_key: &str) -> bool {
    crate::routing::parse_session_key(session_key)
        .is_some_and(|k| matches!(k.peer.kind.as_str(), "group" | "channel" | "thread"))
}
