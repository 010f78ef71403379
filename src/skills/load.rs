//! The SKILL.md files of the agents' and the global skills prefixes, read
//! through the text cache: listed with etags, and only the bodies the
//! cache does not hold at the listed etag read (in one parallel batch).

use crate::skills::{SkillFile, SkillSource};
use crate::storage::{list_or_reuse, tree_listing, ListingCost, ObjectStore, Reuse, StoreResult};
use crate::workspace::paths::{
    agent_skills_prefix, skill_md_files, ListedSkill, GLOBAL_SKILLS_PREFIX,
};
use futures::future::join_all;
use std::collections::HashMap;

/// The prefixes holding the agent's own skills and the global ones.
pub fn skill_prefixes(agent: &str) -> [String; 2] {
    [agent_skills_prefix(agent), GLOBAL_SKILLS_PREFIX.to_string()]
}

/// The SKILL.md files under some skills prefixes.
pub(crate) struct SkillListing {
    /// `(index of the prefix, the file)`, in prefix order.
    pub found: Vec<(usize, ListedSkill)>,
    /// The listings' pages, and how old those another run took are.
    pub cost: ListingCost,
}

/// Lists every prefix, in parallel.
/// With `reuse`, a listing another run took may stand for one
/// (`storage::list_or_reuse`).
pub(crate) async fn list_skills<S: ObjectStore>(
    store: &S,
    prefixes: &[String],
    reuse: Option<&Reuse<'_>>,
) -> StoreResult<SkillListing> {
    let lists = join_all(
        prefixes
            .iter()
            .map(|p| list_or_reuse(store, reuse, tree_listing(p), store.list_objects(p, None))),
    )
    .await;
    let mut listing = SkillListing {
        found: Vec::new(),
        cost: ListingCost::default(),
    };
    for (i, (prefix, list)) in prefixes.iter().zip(lists).enumerate() {
        let list = list?;
        listing.cost.add(&list);
        listing.found.extend(
            skill_md_files(prefix, &list.objects)
                .into_iter()
                .map(|f| (i, f)),
        );
    }
    Ok(listing)
}

/// How many SKILL.md bodies came from the cache and how many were read.
pub(crate) struct BodyCounts {
    pub cached: u32,
    pub read: u32,
}

/// `(index of the prefix, dir, body)` of each skill, in listing order.
pub(crate) type SkillBodies = Vec<(usize, String, String)>;

/// The body of every listed SKILL.md: from the cache when it holds the
/// listed etag, else read (in one parallel batch) and remembered.
pub(crate) async fn skill_bodies<S: ObjectStore>(
    store: &S,
    found: Vec<(usize, ListedSkill)>,
) -> StoreResult<(SkillBodies, BodyCounts)> {
    let cached: Vec<Option<String>> = found
        .iter()
        .map(|(_, f)| store.texts().cached_text(&f.key, Some(&f.etag)).flatten())
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
    let reads = join_all(missing.iter().map(|f| store.read_text(&f.key))).await;
    let mut read = HashMap::new();
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
pub(crate) fn skill_files(bodies: SkillBodies) -> Vec<SkillFile> {
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
pub async fn load_skill_files<S: ObjectStore>(
    store: &S,
    agent: &str,
) -> StoreResult<Vec<SkillFile>> {
    let listing = list_skills(store, &skill_prefixes(agent), None).await?;
    Ok(skill_files(skill_bodies(store, listing.found).await?.0))
}

/// The skills of several agents at once (for probing a node that just
/// connected): one listing for the global skills and one per agent, and
/// the bodies read once, in parallel. Returns `(agent, files)` in the
/// order of `agents`.
pub async fn load_skill_files_of<S: ObjectStore>(
    store: &S,
    agents: &[String],
) -> StoreResult<Vec<(String, Vec<SkillFile>)>> {
    let prefixes: Vec<String> = std::iter::once(GLOBAL_SKILLS_PREFIX.to_string())
        .chain(agents.iter().map(|a| agent_skills_prefix(a)))
        .collect();
    let listing = list_skills(store, &prefixes, None).await?;
    let (bodies, _) = skill_bodies(store, listing.found).await?;
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
