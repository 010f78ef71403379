//! The node store: writes in the directory spec's order, reads that see
//! committed (ACTIVE) nodes only, deletes that cannot be undone by the
//! repair job, and the outbox events that tell the index what changed.
//!
//! A write of a new node: ① `content.md`, ② `.relations.json`,
//! ③ `.abstract.md` + `.overview.md`, then `.meta.json` as PENDING,
//! ④ `.meta.json` as ACTIVE (the commit point), ⑤ the outbox event. An
//! update first marks the existing meta PENDING, so a crash half-way
//! through it is found by the repair job instead of leaving an ACTIVE
//! node whose layers disagree.
//!
//! One writer per node is the caller's duty (the index object serializes
//! writes); the store itself keeps no lock.

use super::access::RequestContext;
use super::node::{
    clamp_abstract, index_records, ContextType, EventPayload, EventStatus, NodeMeta, NodeStatus,
    OutboxEvent, RelationEdge, ABSTRACT, CONTENT, LAYER_FILES, LEVELS, META, OUTBOX, OVERVIEW,
    RELATIONS,
};
use super::uri::NodeUri;
use super::{MemoryEnv, MemoryError};
use crate::storage::ObjectStore;
use gsv_protocol::dates::iso_utc_seconds;

/// What a write puts in a node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeWrite {
    pub uri: NodeUri,
    /// L2: the whole memory.
    pub content: String,
    /// L0: at most 100 characters (longer text is cut).
    pub abstract_text: String,
    /// L1: a short structured overview.
    pub overview: String,
    pub relations: Vec<RelationEdge>,
    pub tags: Vec<String>,
}

/// A layer of a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Abstract = 0,
    Overview = 1,
    Content = 2,
}

impl Level {
    pub fn from_u8(n: u8) -> Option<Self> {
        match n {
            0 => Some(Self::Abstract),
            1 => Some(Self::Overview),
            2 => Some(Self::Content),
            _ => None,
        }
    }

    fn file(self) -> &'static str {
        match self {
            Self::Abstract => ABSTRACT,
            Self::Overview => OVERVIEW,
            Self::Content => CONTENT,
        }
    }
}

/// A committed node as read: its meta and one layer's text.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeView {
    pub meta: NodeMeta,
    pub level: u8,
    pub text: String,
    pub relations: Vec<RelationEdge>,
}

/// The steps of a write, for the fault-injection point of the tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteStep {
    /// An update's PENDING mark on the existing meta.
    MarkPending,
    Content,
    Relations,
    /// Abstract, overview and the PENDING meta.
    Layers,
    Commit,
    Event,
}

pub struct ContextFs<'a, S: ObjectStore> {
    store: &'a S,
    env: &'a dyn MemoryEnv,
    #[cfg(test)]
    stop_after: std::cell::Cell<Option<WriteStep>>,
}

impl<'a, S: ObjectStore> ContextFs<'a, S> {
    pub fn new(store: &'a S, env: &'a dyn MemoryEnv) -> Self {
        Self {
            store,
            env,
            #[cfg(test)]
            stop_after: Default::default(),
        }
    }

    /// Test-only: the next write stops (as a crash would) after `step`.
    #[cfg(test)]
    pub fn stop_after(&self, step: WriteStep) {
        self.stop_after.set(Some(step));
    }

    #[cfg(test)]
    fn step_done(&self, step: WriteStep) -> Result<(), MemoryError> {
        match self.stop_after.get() == Some(step) {
            true => {
                self.stop_after.set(None);
                Err(MemoryError::Stopped(step))
            }
            false => Ok(()),
        }
    }

    #[cfg(not(test))]
    fn step_done(&self, _step: WriteStep) -> Result<(), MemoryError> {
        Ok(())
    }

    pub fn store(&self) -> &'a S {
        self.store
    }

    /// Writes a node and registers its UPSERT event; the committed meta
    /// and the event's key.
    pub async fn write(
        &self,
        ctx: &RequestContext,
        w: &NodeWrite,
    ) -> Result<(NodeMeta, String), MemoryError> {
        ctx.check(&w.uri)?;
        let now = iso_utc_seconds(self.env.now_ms());
        let previous = self.raw_meta(&w.uri).await?;
        let mut meta = NodeMeta {
            uri: w.uri.to_string(),
            context_type: ContextType::of(&w.uri),
            category: w.uri.category().as_str().to_string(),
            level: LEVELS,
            owner_space: w.uri.space.owner(),
            status: NodeStatus::Pending,
            created_at: previous
                .as_ref()
                .map_or(now.clone(), |m| m.created_at.clone()),
            updated_at: now,
            version: previous.as_ref().map_or(1, |m| m.version + 1),
            tags: w.tags.clone(),
        };
        if let Some(mut old) = previous {
            old.status = NodeStatus::Pending;
            self.put_meta(&w.uri, &old).await?;
            self.step_done(WriteStep::MarkPending)?;
        }
        let abstract_text = clamp_abstract(&w.abstract_text);
        self.put_text(&w.uri, CONTENT, &w.content).await?;
        self.step_done(WriteStep::Content)?;
        self.put_text(&w.uri, RELATIONS, &to_json(&w.relations))
            .await?;
        self.step_done(WriteStep::Relations)?;
        self.put_text(&w.uri, ABSTRACT, &abstract_text).await?;
        self.put_text(&w.uri, OVERVIEW, &w.overview).await?;
        self.put_meta(&w.uri, &meta).await?;
        self.step_done(WriteStep::Layers)?;
        meta.status = NodeStatus::Active;
        self.put_meta(&w.uri, &meta).await?;
        self.step_done(WriteStep::Commit)?;
        let records = index_records(&w.uri, &abstract_text, &w.overview, &w.content);
        let key = self.register(&w.uri, EventPayload::Upsert(records)).await?;
        self.step_done(WriteStep::Event)?;
        Ok((meta, key))
    }

    /// Registers an outbox event for `uri`; its key.
    pub async fn register(
        &self,
        uri: &NodeUri,
        payload: EventPayload,
    ) -> Result<String, MemoryError> {
        let event = OutboxEvent {
            event_id: self.env.new_id(),
            event_type: payload.event_type(),
            uri: uri.to_string(),
            payload: payload.to_json(),
            status: EventStatus::Pending,
            retry_count: 0,
            created_at: iso_utc_seconds(self.env.now_ms()),
            next_attempt_ms: None,
            last_error: None,
        };
        let key = uri.key(&format!("{OUTBOX}{}.json", event.event_id));
        self.store
            .put(&key, to_json(&event).into_bytes(), "application/json")
            .await?;
        Ok(key)
    }

    /// The meta as stored, whatever its status (the repair job's view).
    pub async fn raw_meta(&self, uri: &NodeUri) -> Result<Option<NodeMeta>, MemoryError> {
        let key = uri.key(META);
        let Some(object) = self.store.get(&key).await? else {
            return Ok(None);
        };
        serde_json::from_slice(&object.body)
            .map(Some)
            .map_err(|e| MemoryError::Corrupt {
                key,
                reason: e.to_string(),
            })
    }

    async fn active_meta(
        &self,
        ctx: &RequestContext,
        uri: &NodeUri,
    ) -> Result<Option<NodeMeta>, MemoryError> {
        ctx.check(uri)?;
        Ok(self
            .raw_meta(uri)
            .await?
            .filter(|m| m.status == NodeStatus::Active))
    }

    /// Whether the node exists and is committed.
    pub async fn exists(&self, ctx: &RequestContext, uri: &NodeUri) -> Result<bool, MemoryError> {
        Ok(self.active_meta(ctx, uri).await?.is_some())
    }

    /// A committed node's meta and the text of one layer.
    pub async fn get(
        &self,
        ctx: &RequestContext,
        uri: &NodeUri,
        level: Level,
    ) -> Result<Option<NodeView>, MemoryError> {
        let Some(meta) = self.active_meta(ctx, uri).await? else {
            return Ok(None);
        };
        let text = self.read_text(uri, level.file()).await?.unwrap_or_default();
        let relations = match self.read_text(uri, RELATIONS).await? {
            Some(json) => serde_json::from_str(&json).map_err(|e| MemoryError::Corrupt {
                key: uri.key(RELATIONS),
                reason: e.to_string(),
            })?,
            None => Vec::new(),
        };
        Ok(Some(NodeView {
            meta,
            level: level as u8,
            text,
            relations,
        }))
    }

    /// Deletes a committed node: the DELETE event first (so the index
    /// drops it even if the rest is cut short), then the meta (the node is
    /// gone from here on), then its layers. The outbox stays until the
    /// event is consumed. Whether there was a node.
    pub async fn delete(
        &self,
        ctx: &RequestContext,
        uri: &NodeUri,
    ) -> Result<Option<String>, MemoryError> {
        if !self.exists(ctx, uri).await? {
            return Ok(None);
        }
        let key = self.register(uri, EventPayload::Delete).await?;
        self.store.remove(&uri.key(META)).await?;
        self.remove_layers(uri).await?;
        Ok(Some(key))
    }

    /// Removes what a deleted node left besides its outbox.
    pub async fn remove_layers(&self, uri: &NodeUri) -> Result<(), MemoryError> {
        for file in LAYER_FILES {
            self.store.remove(&uri.key(file)).await?;
        }
        Ok(())
    }

    pub async fn read_text(
        &self,
        uri: &NodeUri,
        file: &str,
    ) -> Result<Option<String>, MemoryError> {
        let key = uri.key(file);
        let Some(object) = self.store.get(&key).await? else {
            return Ok(None);
        };
        String::from_utf8(object.body)
            .map(Some)
            .map_err(|e| MemoryError::Corrupt {
                key,
                reason: e.to_string(),
            })
    }

    pub async fn put_meta(&self, uri: &NodeUri, meta: &NodeMeta) -> Result<(), MemoryError> {
        self.put_text(uri, META, &to_json(meta)).await
    }

    async fn put_text(&self, uri: &NodeUri, file: &str, text: &str) -> Result<(), MemoryError> {
        let content_type = match file.ends_with(".json") {
            true => "application/json",
            false => "text/markdown; charset=utf-8",
        };
        self.store
            .put(&uri.key(file), text.as_bytes().to_vec(), content_type)
            .await?;
        Ok(())
    }
}

/// Serializes a value made of strings, numbers and plain structs, which
/// cannot fail.
pub(super) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
