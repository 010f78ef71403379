//! The decisions behind each index call, over plain values: a put's node
//! (its URI, derived layers, edges), who may see a URI, a search's hits
//! from its FTS matches and vector ranking, and `my_stats`' top tags.

use super::calls::Caller;
use super::fs::{NodeView, NodeWrite};
use super::node::RelationEdge;
use super::repair::{derived_abstract, derived_overview};
use super::search::rrf;
use super::uri::{slugify, Category, NodeUri, Space};
use super::MemoryError;
use gsv_protocol::{MemoryHit, MemoryNode, MemoryPutParams, MemoryRelation, MemoryScope};
use std::collections::HashMap;

/// A call that cannot be served as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpError {
    Invalid(String),
    /// The URI is in a space this caller may not see.
    Hidden(String),
    Memory(MemoryError),
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Invalid(m) => f.write_str(m),
            Self::Hidden(uri) => write!(
                f,
                "access denied: {uri} is not in a memory space this session may read"
            ),
            Self::Memory(e) => e.fmt(f),
        }
    }
}

impl From<MemoryError> for OpError {
    fn from(e: MemoryError) -> Self {
        Self::Memory(e)
    }
}

/// The node a put writes.
pub fn put_to_write(caller: &Caller, p: &MemoryPutParams) -> Result<NodeWrite, OpError> {
    let category = Category::parse(&p.category).map_err(|e| OpError::Invalid(e.to_string()))?;
    if p.content.trim().is_empty() {
        return Err(OpError::Invalid("content is empty".into()));
    }
    let space = match p.space.unwrap_or(MemoryScope::User) {
        MemoryScope::Agent => Space::Agent(caller.agent_id.clone()),
        MemoryScope::User | MemoryScope::All => match &caller.user {
            Some(u) => Space::User(u.clone()),
            None => {
                return Err(OpError::Invalid(
                    "this session has no person to remember things about (a group chat): use space \"agent\"".into(),
                ))
            }
        },
    };
    let slug = match (&p.slug, &p.title) {
        (Some(s), _) => s.clone(),
        (None, Some(t)) => slugify(t)
            .ok_or_else(|| OpError::Invalid(format!("no slug can be made from the title {t:?}")))?,
        (None, None) => slugify(&derived_abstract(&p.content))
            .ok_or_else(|| OpError::Invalid("give a slug or a title".into()))?,
    };
    let uri = NodeUri::memory(&caller.account, space, category, &slug)
        .map_err(|e| OpError::Invalid(e.to_string()))?;
    let from = uri.to_string();
    let relations = p
        .relations
        .iter()
        .map(|r| {
            NodeUri::parse(&r.to_uri).map_err(|e| OpError::Invalid(format!("relation: {e}")))?;
            Ok(RelationEdge {
                from_uri: from.clone(),
                to_uri: r.to_uri.clone(),
                relation_type: r.relation_type.clone(),
                weight: r.weight,
                reason: r.reason.clone(),
            })
        })
        .collect::<Result<Vec<_>, OpError>>()?;
    Ok(NodeWrite {
        abstract_text: p
            .abstract_text
            .clone()
            .filter(|a| !a.trim().is_empty())
            .unwrap_or_else(|| derived_abstract(&p.content)),
        overview: p
            .overview
            .clone()
            .filter(|o| !o.trim().is_empty())
            .unwrap_or_else(|| derived_overview(&p.content)),
        content: p.content.clone(),
        relations,
        tags: p.tags.clone(),
        uri,
    })
}

/// Parses a URI this caller may read or write: its account (else
/// denied) and one of its spaces (else hidden).
pub fn visible_uri(caller: &Caller, uri: &str) -> Result<NodeUri, OpError> {
    let parsed = NodeUri::parse(uri).map_err(|e| OpError::Invalid(e.to_string()))?;
    if parsed.account != caller.account {
        return Err(OpError::Memory(MemoryError::Denied {
            account: parsed.account,
        }));
    }
    match caller.operator || caller.spaces().contains(&parsed.space.owner()) {
        true => Ok(parsed),
        false => Err(OpError::Hidden(uri.to_string())),
    }
}

/// The owner spaces a search reads, of those the index holds (`known`):
/// an operator without a named person reads every person's.
pub fn search_spaces(caller: &Caller, scope: MemoryScope, known: &[String]) -> Vec<String> {
    let agent = format!("agent:{}", caller.agent_id);
    let users: Vec<String> = match (&caller.user, caller.operator) {
        (Some(u), _) => vec![format!("user:{u}")],
        (None, true) => known
            .iter()
            .filter(|s| s.starts_with("user:"))
            .cloned()
            .collect(),
        (None, false) => Vec::new(),
    };
    match scope {
        MemoryScope::All => std::iter::once(agent).chain(users).collect(),
        MemoryScope::Agent => vec![agent],
        MemoryScope::User => users,
    }
}

/// One FTS match: the node, the level that matched, its BM25 rank
/// (lower is better) and a snippet.
#[derive(Debug, Clone, PartialEq)]
pub struct Match {
    pub uri: String,
    pub level: u8,
    pub rank: f64,
    pub snippet: String,
}

/// A node's index row, for the hits.
#[derive(Debug, Clone, PartialEq)]
pub struct Indexed {
    pub uri: String,
    pub owner_space: String,
    pub category: String,
    pub abstract_text: String,
}

/// The hits of a search: keyword matches (best level per node) fused by
/// reciprocal rank with the vector ranking when there is one, at most
/// `limit`.
pub fn hits(
    matches: &[Match],
    vector_ranking: Option<&[String]>,
    nodes: &[Indexed],
    limit: usize,
) -> Vec<MemoryHit> {
    let mut best: HashMap<&str, &Match> = HashMap::new();
    let mut keyword_order: Vec<String> = Vec::new();
    for m in matches {
        if !best.contains_key(m.uri.as_str()) {
            best.insert(&m.uri, m);
            keyword_order.push(m.uri.clone());
        }
    }
    let ranked: Vec<(String, f64)> = match vector_ranking {
        Some(v) => rrf(&[keyword_order, v.to_vec()]),
        None => keyword_order
            .into_iter()
            .map(|u| {
                let score = best.get(u.as_str()).map_or(0.0, |m| -m.rank);
                (u, score)
            })
            .collect(),
    };
    let by_uri: HashMap<&str, &Indexed> = nodes.iter().map(|n| (n.uri.as_str(), n)).collect();
    ranked
        .into_iter()
        .filter_map(|(uri, score)| {
            let node = by_uri.get(uri.as_str())?;
            let m = best.get(uri.as_str());
            Some(MemoryHit {
                category: node.category.clone(),
                owner_space: node.owner_space.clone(),
                abstract_text: node.abstract_text.clone(),
                level: m.map_or(0, |m| m.level),
                snippet: m.map_or_else(|| node.abstract_text.clone(), |m| m.snippet.clone()),
                score,
                uri,
            })
        })
        .take(limit)
        .collect()
}

/// A committed node on the wire.
pub fn node_view(view: NodeView) -> MemoryNode {
    MemoryNode {
        uri: view.meta.uri,
        category: view.meta.category,
        owner_space: view.meta.owner_space,
        level: view.level,
        text: view.text,
        version: view.meta.version,
        created_at: view.meta.created_at,
        updated_at: view.meta.updated_at,
        tags: view.meta.tags,
        relations: view
            .relations
            .into_iter()
            .map(|r| MemoryRelation {
                to_uri: r.to_uri,
                relation_type: r.relation_type,
                weight: r.weight,
                reason: r.reason,
            })
            .collect(),
    }
}

/// The most frequent tags, most frequent first (ties by name), at most `n`.
pub fn top_tags(tags: &[String], n: usize) -> Vec<String> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for t in tags {
        *counts.entry(t.as_str()).or_default() += 1;
    }
    let mut sorted: Vec<(&str, usize)> = counts.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    sorted
        .into_iter()
        .take(n)
        .map(|(t, _)| t.to_string())
        .collect()
}
