//! What a node directory holds, as the directory spec defines each file:
//! `.meta.json` (the commit point), `.relations.json`, the outbox events,
//! and the index records an upsert carries.

use super::uri::{NodeKind, NodeUri};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The node's files, in the order a write makes them.
pub const CONTENT: &str = "content.md";
pub const RELATIONS: &str = ".relations.json";
pub const ABSTRACT: &str = ".abstract.md";
pub const OVERVIEW: &str = ".overview.md";
pub const META: &str = ".meta.json";
pub const OUTBOX: &str = ".outbox/";
pub const DLQ: &str = ".outbox/dlq/";

/// The files a complete node has besides its meta.
pub const LAYER_FILES: [&str; 4] = [CONTENT, RELATIONS, ABSTRACT, OVERVIEW];

/// Longest L0 abstract, in characters.
pub const MAX_ABSTRACT: usize = 100;

/// How many layers a complete node holds (L0 abstract, L1 overview, L2
/// content): the meta's `level`.
pub const LEVELS: u8 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NodeStatus {
    /// Being written: invisible to retrieval.
    Pending,
    /// Committed: the only status retrieval sees.
    Active,
    /// Found incomplete by the repair job: needs a person.
    Broken,
}

impl NodeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Active => "ACTIVE",
            Self::Broken => "BROKEN",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ContextType {
    Memory,
    Skill,
}

impl ContextType {
    pub fn of(uri: &NodeUri) -> Self {
        match uri.kind {
            NodeKind::Memory { .. } => Self::Memory,
            NodeKind::Skill { .. } => Self::Skill,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Memory => "MEMORY",
            Self::Skill => "SKILL",
        }
    }
}

/// `.meta.json`, exactly the spec's fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeMeta {
    pub uri: String,
    pub context_type: ContextType,
    pub category: String,
    pub level: u8,
    pub owner_space: String,
    pub status: NodeStatus,
    pub created_at: String,
    pub updated_at: String,
    pub version: u64,
    pub tags: Vec<String>,
}

/// One outgoing edge of `.relations.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelationEdge {
    pub from_uri: String,
    pub to_uri: String,
    pub relation_type: String,
    pub weight: f64,
    #[serde(default)]
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordFilters {
    pub account_id: String,
    pub owner_space: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordMetadata {
    pub category: String,
    pub context_type: ContextType,
}

/// One searchable layer of a node, as the index stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexRecord {
    pub id: String,
    pub uri: String,
    pub level: u8,
    pub text: String,
    pub filters: RecordFilters,
    pub metadata: RecordMetadata,
}

/// The records of a node's three layers (L0 abstract, L1 overview, L2
/// content); ids are stable per URI and level, so an upsert replaces.
pub fn index_records(
    uri: &NodeUri,
    abstract_: &str,
    overview: &str,
    content: &str,
) -> Vec<IndexRecord> {
    let uri_s = uri.to_string();
    [abstract_, overview, content]
        .into_iter()
        .enumerate()
        .map(|(level, text)| IndexRecord {
            id: record_id(&uri_s, level as u8),
            uri: uri_s.clone(),
            level: level as u8,
            text: text.to_string(),
            filters: RecordFilters {
                account_id: uri.account.clone(),
                owner_space: uri.space.owner(),
            },
            metadata: RecordMetadata {
                category: uri.category().as_str().to_string(),
                context_type: ContextType::of(uri),
            },
        })
        .collect()
}

/// 16 hex digits of FNV-1a over `uri#level`: stable across isolates and
/// builds, unlike std's hasher.
pub fn record_id(uri: &str, level: u8) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in uri.bytes().chain([b'#', b'0' + level]) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EventType {
    UpsertContext,
    DeleteContext,
    MoveContext,
    UpsertRelation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EventStatus {
    Pending,
    Processing,
    Failed,
}

/// `.outbox/{event_id}.json`: the spec's fields, plus when it may be
/// tried again and why it last failed (absent until it has).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboxEvent {
    pub event_id: String,
    pub event_type: EventType,
    pub uri: String,
    pub payload: Value,
    pub status: EventStatus,
    pub retry_count: u32,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_attempt_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// An event's payload, by type.
#[derive(Debug, Clone, PartialEq)]
pub enum EventPayload {
    Upsert(Vec<IndexRecord>),
    Delete,
    Move { new_uri: String },
    Relations(Vec<RelationEdge>),
}

impl EventPayload {
    pub fn event_type(&self) -> EventType {
        match self {
            Self::Upsert(_) => EventType::UpsertContext,
            Self::Delete => EventType::DeleteContext,
            Self::Move { .. } => EventType::MoveContext,
            Self::Relations(_) => EventType::UpsertRelation,
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Self::Upsert(records) => serde_json::json!({ "records": records }),
            Self::Delete => serde_json::json!({}),
            Self::Move { new_uri } => serde_json::json!({ "new_uri": new_uri }),
            Self::Relations(edges) => serde_json::json!({ "edges": edges }),
        }
    }

    /// The payload an event carries, read by its type.
    pub fn from_event(event: &OutboxEvent) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Records {
            records: Vec<IndexRecord>,
        }
        #[derive(Deserialize)]
        struct Move {
            new_uri: String,
        }
        #[derive(Deserialize)]
        struct Edges {
            edges: Vec<RelationEdge>,
        }
        let p = event.payload.clone();
        Ok(match event.event_type {
            EventType::UpsertContext => Self::Upsert(serde_json::from_value::<Records>(p)?.records),
            EventType::DeleteContext => Self::Delete,
            EventType::MoveContext => Self::Move {
                new_uri: serde_json::from_value::<Move>(p)?.new_uri,
            },
            EventType::UpsertRelation => Self::Relations(serde_json::from_value::<Edges>(p)?.edges),
        })
    }
}

/// The L0 abstract as stored: one line, at most [`MAX_ABSTRACT`]
/// characters (cut at a word where it can be, with an ellipsis).
pub fn clamp_abstract(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= MAX_ABSTRACT {
        return line;
    }
    let cut: String = line.chars().take(MAX_ABSTRACT - 1).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > MAX_ABSTRACT / 2 => &cut[..i],
        _ => &cut,
    };
    format!("{}…", cut.trim_end())
}
