//! Long-term memory on the wire: `memory.search|get|put|delete|status|
//! repair`. URIs are `ctx://{account}/users/{user}/memories/{category}/
//! {slug}` (a person's) or `ctx://{account}/agents/{agent}/memories/…`
//! (the agent's own); levels are 0 (abstract), 1 (overview), 2 (content).

use serde::{Deserialize, Serialize};

/// Whose memories a call reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum MemoryScope {
    /// The person's and the agent's.
    #[default]
    All,
    User,
    Agent,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemorySearchParams {
    pub query: String,
    #[serde(default)]
    pub scope: MemoryScope,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Only records of this level (0, 1 or 2); absent: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// The agent (default `main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The person (default: the owner, as identity links name them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemoryHit {
    pub uri: String,
    pub category: String,
    pub owner_space: String,
    /// The L0 abstract.
    #[serde(rename = "abstract")]
    pub abstract_text: String,
    /// The level whose text matched best, and a snippet of it.
    pub level: u8,
    pub snippet: String,
    pub score: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemorySearchResult {
    pub hits: Vec<MemoryHit>,
    /// `keyword` (BM25) or `hybrid` (BM25 and embeddings, fused).
    pub mode: String,
    /// The index's round trip as the gateway measured it (its clock moves
    /// on I/O only, so time inside the object cannot be read there).
    pub took_ms: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemoryGetParams {
    pub uri: String,
    /// 0 abstract, 1 overview, 2 content (default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemoryRelation {
    pub to_uri: String,
    pub relation_type: String,
    pub weight: f64,
    #[serde(default)]
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemoryNode {
    pub uri: String,
    pub category: String,
    pub owner_space: String,
    pub level: u8,
    pub text: String,
    pub version: u64,
    pub created_at: String,
    pub updated_at: String,
    pub tags: Vec<String>,
    pub relations: Vec<MemoryRelation>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemoryGetResult {
    /// Absent when no committed node has that URI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<MemoryNode>,
}

/// Unknown fields are refused: a field the gateway would ignore (a `uri`
/// naming another account, say) must not be taken as obeyed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryPutParams {
    pub category: String,
    /// The node's slug; absent: made from `title`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub content: String,
    /// L0, at most 100 characters; absent: the content's first line.
    #[serde(default, rename = "abstract", skip_serializing_if = "Option::is_none")]
    pub abstract_text: Option<String>,
    /// L1; absent: the content's first paragraph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overview: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relations: Vec<MemoryRelation>,
    /// `user` (about the person, the default) or `agent` (the agent's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub space: Option<MemoryScope>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemoryPutResult {
    pub uri: String,
    pub version: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemoryDeleteParams {
    pub uri: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemoryDeleteResult {
    pub deleted: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemoryRepairResult {
    pub nodes_scanned: u64,
    pub list_pages: u32,
    pub recreated: Vec<String>,
    pub activated: Vec<String>,
    pub marked_broken: Vec<String>,
    /// BROKEN nodes whose files were all there again: ACTIVE once more.
    #[serde(default)]
    pub restored: Vec<String>,
    pub deletes_finished: Vec<String>,
    pub alerts: Vec<String>,
    /// Outbox events found and queued for the index.
    pub events_queued: u64,
    pub took_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemoryStatusResult {
    pub account: String,
    /// Committed (ACTIVE) nodes in the index: the ones retrieval sees.
    pub nodes: u64,
    /// Nodes per status, as the index last knew them.
    #[serde(default)]
    pub by_status: MemoryStatusCounts,
    /// The BROKEN nodes, with the files each misses.
    #[serde(default)]
    pub broken: Vec<MemoryBrokenNode>,
    /// Outbox events waiting (or waiting for a retry).
    pub pending_events: u64,
    /// Events that failed `maxRetry` times (in `.outbox/dlq/`).
    pub dead_lettered: u64,
    /// `keyword`, or `hybrid` when embeddings are configured.
    pub search_mode: String,
    pub recall_events_7d: u64,
    pub memories_promoted: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_repair: Option<MemoryRepairResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_repair_at_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_dream_at_ms: Option<i64>,
    /// BROKEN nodes and other problems a person must look at.
    pub alerts: Vec<String>,
}

/// Nodes per status (the directory spec's NodeStatus).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemoryStatusCounts {
    /// Committed: the only ones retrieval sees.
    pub active: u64,
    /// Being written, or cut short and not yet repaired.
    pub pending: u64,
    /// Found incomplete by the repair job: a person must restore them.
    pub broken: u64,
}

/// A BROKEN node and the files it misses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct MemoryBrokenNode {
    pub uri: String,
    pub missing: Vec<String>,
}
