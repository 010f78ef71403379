//! The calls into the memory index object (one per account): each names
//! its path and reply, and carries the account it acts for (the object
//! refuses another account's call, so a bug elsewhere cannot cross
//! tenants), and the owner spaces the caller may read.

use crate::calls::InternalCall;
use crate::memory::recall::Candidate;
use gsv_protocol::{
    MemoryDeleteResult, MemoryGetParams, MemoryGetResult, MemoryPutParams, MemoryPutResult,
    MemoryRepairResult, MemorySearchParams, MemorySearchResult, MemoryStatusResult,
};
use serde::{Deserialize, Serialize};

pub mod path {
    pub const WRITE: &str = "/memory/write";
    pub const GET: &str = "/memory/get";
    pub const DELETE: &str = "/memory/delete";
    pub const SEARCH: &str = "/memory/search";
    pub const RECALL: &str = "/memory/recall";
    pub const STATUS: &str = "/memory/status";
    pub const REPAIR: &str = "/memory/repair";
    pub const DREAM: &str = "/memory/dream";
    pub const STATS: &str = "/memory/stats";
}

/// The person of the gateway's own clients (the CLI, the web UI, the
/// scheduler), when identity links name nobody else.
pub const OWNER: &str = "owner";

/// A chat-app sender as long-term memory knows people: the name identity
/// links give them, else `channel:id`, in the characters a memory URI
/// allows (anything else becomes `_`).
pub fn person_of(links: &[crate::routing::IdentityLink], channel: &str, sender_id: &str) -> String {
    let raw = crate::routing::resolve_linked_identity(links, channel, sender_id)
        .unwrap_or_else(|| format!("{channel}:{sender_id}"));
    let person: String = raw
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || "-_.+:@".contains(c) {
                true => c,
                false => '_',
            },
        )
        .take(128)
        .collect();
    match person.as_str() {
        "" | "." | ".." => "_".into(),
        _ => person,
    }
}

/// Who a call acts for: the account, and the owner spaces (`user:…`,
/// `agent:…`) it may read or write. A group session gets its agent's
/// space only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Caller {
    pub account: String,
    pub agent_id: String,
    /// The person's id (canonical identity, else the peer), when the
    /// caller may see that person's memories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The gateway's owner (the RPCs, the CLI): every space of the
    /// account, not only the agent's and one person's.
    #[serde(default)]
    pub operator: bool,
    pub settings: IndexSettings,
}

/// The config the index applies, sent with every call (the object keeps
/// the last it saw for the retries its alarm makes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexSettings {
    /// Failures before an outbox event goes to the dead-letter queue.
    pub max_retry: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<EmbeddingsConfig>,
}

impl Caller {
    /// The owner spaces this caller may touch.
    pub fn spaces(&self) -> Vec<String> {
        let mut spaces = vec![format!("agent:{}", self.agent_id)];
        if let Some(u) = &self.user {
            spaces.push(format!("user:{u}"));
        }
        spaces
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexWrite {
    pub caller: Caller,
    pub params: MemoryPutParams,
}

impl InternalCall for IndexWrite {
    const PATH: &'static str = path::WRITE;
    type Reply = MemoryPutResult;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexGet {
    pub caller: Caller,
    pub params: MemoryGetParams,
}

impl InternalCall for IndexGet {
    const PATH: &'static str = path::GET;
    type Reply = MemoryGetResult;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexDelete {
    pub caller: Caller,
    pub uri: String,
}

impl InternalCall for IndexDelete {
    const PATH: &'static str = path::DELETE;
    type Reply = MemoryDeleteResult;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexSearch {
    pub caller: Caller,
    pub params: MemorySearchParams,
}

impl InternalCall for IndexSearch {
    const PATH: &'static str = path::SEARCH;
    type Reply = MemorySearchResult;
}

/// Before a run: the memories matching its message, within a budget;
/// each recalled one is counted (dreaming scores on it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexRecall {
    pub caller: Caller,
    pub query: String,
    pub budget_tokens: u32,
    /// The day in the user's zone (`YYYY-MM-DD`), for distinct-day counts.
    pub day: String,
    /// When, on the gateway's schedule clock.
    pub at_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecallReply {
    pub recalled: Vec<Candidate>,
    /// The index held no memory at all (so it cannot recall one until it
    /// gets its first: see `KnownEmpty`).
    #[serde(default)]
    pub empty: bool,
}

impl InternalCall for IndexRecall {
    const PATH: &'static str = path::RECALL;
    type Reply = RecallReply;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexStatus {
    pub caller: Caller,
}

impl InternalCall for IndexStatus {
    const PATH: &'static str = path::STATUS;
    type Reply = MemoryStatusResult;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexRepair {
    pub caller: Caller,
}

impl InternalCall for IndexRepair {
    const PATH: &'static str = path::REPAIR;
    type Reply = MemoryRepairResult;
}

/// The nightly sweep for one agent: promotes into its MEMORY.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexDream {
    pub caller: Caller,
    /// `YYYY-MM-DD HH:MM TZ`, as the headings show it.
    pub stamp: String,
    pub threshold: f64,
    /// Now, on the gateway's schedule clock (recency is scored from it).
    pub now_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DreamReply {
    pub considered: u64,
    pub promoted: Vec<String>,
}

impl InternalCall for IndexDream {
    const PATH: &'static str = path::DREAM;
    type Reply = DreamReply;
}

/// `my_stats`'s memory figures for one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexStats {
    pub caller: Caller,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryStats {
    pub memories_stored: u64,
    pub memories_promoted: u64,
    /// Seconds since the epoch.
    pub last_dream_ts: Option<u64>,
    pub recall_events_7d: u64,
    pub top_concept_tags_7d: Vec<String>,
}

impl InternalCall for IndexStats {
    const PATH: &'static str = path::STATS;
    type Reply = MemoryStats;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddingsConfig {
    /// An OpenAI-compatible `/embeddings` URL.
    pub url: String,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::IdentityLink;

    #[test]
    fn senders_become_people_by_identity_links_or_channel_and_id() {
        let links = vec![IdentityLink {
            canonical: "steve".into(),
            ids: vec!["discord:81234".into(), "+4915100000".into()],
        }];
        assert_eq!(person_of(&links, "discord", "81234"), "steve");
        assert_eq!(person_of(&links, "whatsapp", "+49 151 00000"), "steve");
        assert_eq!(person_of(&links, "discord", "999"), "discord:999");
        assert_eq!(person_of(&[], "telegram", "a b/c"), "telegram:a_b_c");
    }
}
