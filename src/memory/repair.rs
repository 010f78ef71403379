//! The repair job: scans an account's nodes and applies the directory
//! spec's branch for each failure point of a write (and finishes deletes
//! cut short, which the write table does not cover).
//!
//! | Found | Action |
//! |---|---|
//! | no meta, no content | skip (nothing to repair) |
//! | no meta, content (cut after ① or ②) | recreate the missing layers and the meta, ACTIVE, and register an UPSERT |
//! | no meta, a DELETE event waiting | finish the delete (remove the layers left) |
//! | PENDING, every file there (cut after ③) | ACTIVE, and register an UPSERT |
//! | PENDING, a file missing | BROKEN, and an alert |
//! | BROKEN, every file there again (a person restored them) | ACTIVE, and register an UPSERT |
//! | BROKEN, a file still missing | skip (listed with what it misses) |
//! | ACTIVE | skip |
//!
//! The report also says what status each node was left in (and what a
//! BROKEN one misses), so the index can hide what retrieval must not see.

use super::access::RequestContext;
use super::fs::{ContextFs, NodeWrite};
use super::node::{
    clamp_abstract, index_records, EventPayload, EventType, NodeStatus, OutboxEvent, ABSTRACT,
    CONTENT, LAYER_FILES, META, OVERVIEW, RELATIONS,
};
use super::outbox::is_event_key;
use super::uri::{account_prefix, NodeUri};
use super::MemoryError;
use crate::storage::ObjectStore;
use std::collections::{BTreeMap, BTreeSet};

/// What one scan found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepairReport {
    pub nodes_scanned: u64,
    pub list_pages: u32,
    /// Orphan content given back its meta.
    pub recreated: Vec<String>,
    /// PENDING nodes with every file, now ACTIVE.
    pub activated: Vec<String>,
    /// PENDING nodes with a file missing, now BROKEN.
    pub marked_broken: Vec<String>,
    /// BROKEN nodes whose files were all there again, now ACTIVE.
    pub restored: Vec<String>,
    /// Deletes cut short and finished.
    pub deletes_finished: Vec<String>,
    /// Problems a person must look at (BROKEN nodes, unreadable metas).
    pub alerts: Vec<String>,
    /// Every event file waiting in an outbox (for the consumer's queue),
    /// those this scan registered included.
    pub pending_events: Vec<String>,
    /// The status each node with a readable meta was left in, by URI
    /// (recreated nodes included, finished deletes not).
    pub states: BTreeMap<String, NodeState>,
}

/// A node's status after the scan, and the files a BROKEN one misses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeState {
    pub status: NodeStatus,
    pub missing: Vec<String>,
}

impl NodeState {
    pub fn active() -> Self {
        Self {
            status: NodeStatus::Active,
            missing: Vec::new(),
        }
    }
}

#[derive(Default)]
struct Dir {
    files: BTreeSet<String>,
    events: Vec<String>,
}

/// Scans every node of the caller's account and repairs what it can.
pub async fn repair_account<S: ObjectStore>(
    fs: &ContextFs<'_, S>,
    ctx: &RequestContext,
) -> Result<RepairReport, MemoryError> {
    let prefix = account_prefix(&ctx.account_id);
    ctx.check_prefix(&prefix)?;
    let (objects, pages) = fs.store().list_objects(&prefix, None).await?;
    let mut dirs: BTreeMap<NodeUri, Dir> = BTreeMap::new();
    let mut report = RepairReport {
        list_pages: pages,
        ..Default::default()
    };
    for (key, _) in objects {
        let Ok(uri) = NodeUri::from_key(&key) else {
            report
                .alerts
                .push(format!("{key}: not inside a node directory"));
            continue;
        };
        let dir = dirs.entry(uri.clone()).or_default();
        let file = key
            .strip_prefix(&uri.prefix())
            .unwrap_or_default()
            .to_string();
        if is_event_key(&key) {
            dir.events.push(key);
        } else {
            dir.files.insert(file);
        }
    }
    report.nodes_scanned = dirs.len() as u64;
    for (uri, dir) in dirs {
        repair_node(fs, ctx, &uri, &dir, &mut report).await?;
        report.pending_events.extend(dir.events);
    }
    Ok(report)
}

async fn repair_node<S: ObjectStore>(
    fs: &ContextFs<'_, S>,
    ctx: &RequestContext,
    uri: &NodeUri,
    dir: &Dir,
    report: &mut RepairReport,
) -> Result<(), MemoryError> {
    let name = uri.to_string();
    if !dir.files.contains(META) {
        if deletion_waiting(fs, &dir.events).await? {
            if LAYER_FILES.iter().any(|f| dir.files.contains(*f)) {
                fs.remove_layers(uri).await?;
                report.deletes_finished.push(name);
            }
        } else if dir.files.contains(CONTENT) {
            recreate(fs, ctx, uri, dir, report).await?;
        }
        return Ok(());
    }
    let mut meta = match fs.raw_meta(uri).await {
        Ok(Some(meta)) => meta,
        Ok(None) => return Ok(()),
        Err(e) => {
            report.alerts.push(format!("{name}: {e}"));
            return Ok(());
        }
    };
    let missing: Vec<String> = LAYER_FILES
        .into_iter()
        .filter(|f| !dir.files.contains(*f))
        .map(String::from)
        .collect();
    let state = match (meta.status, missing.is_empty()) {
        (NodeStatus::Active, _) => NodeState::active(),
        (NodeStatus::Pending | NodeStatus::Broken, true) => {
            let was_broken = meta.status == NodeStatus::Broken;
            let text = |file| fs.read_text(uri, file);
            let (content, abstract_text, overview) = (
                text(CONTENT).await?.unwrap_or_default(),
                text(ABSTRACT).await?.unwrap_or_default(),
                text(OVERVIEW).await?.unwrap_or_default(),
            );
            meta.status = NodeStatus::Active;
            fs.put_meta(uri, &meta).await?;
            let records = index_records(uri, &abstract_text, &overview, &content);
            let key = fs.register(uri, EventPayload::Upsert(records)).await?;
            report.pending_events.push(key);
            if was_broken {
                report.restored.push(name.clone());
            } else {
                report.activated.push(name.clone());
            }
            NodeState::active()
        }
        (NodeStatus::Pending, false) => {
            meta.status = NodeStatus::Broken;
            fs.put_meta(uri, &meta).await?;
            report
                .alerts
                .push(format!("{name}: BROKEN, missing {}", missing.join(", ")));
            report.marked_broken.push(name.clone());
            NodeState {
                status: NodeStatus::Broken,
                missing,
            }
        }
        // Already marked: left for a person, still listed.
        (NodeStatus::Broken, false) => NodeState {
            status: NodeStatus::Broken,
            missing,
        },
    };
    report.states.insert(name, state);
    Ok(())
}

/// Content without a meta: the layers a cut write did not reach are made
/// from the content, then the node is committed as a write would.
async fn recreate<S: ObjectStore>(
    fs: &ContextFs<'_, S>,
    ctx: &RequestContext,
    uri: &NodeUri,
    dir: &Dir,
    report: &mut RepairReport,
) -> Result<(), MemoryError> {
    let content = fs.read_text(uri, CONTENT).await?.unwrap_or_default();
    let kept = |file: &str| dir.files.contains(file);
    let relations = match kept(RELATIONS) {
        true => fs
            .read_text(uri, RELATIONS)
            .await?
            .and_then(|j| serde_json::from_str(&j).ok())
            .unwrap_or_default(),
        false => Vec::new(),
    };
    let abstract_text = match kept(ABSTRACT) {
        true => fs.read_text(uri, ABSTRACT).await?.unwrap_or_default(),
        false => derived_abstract(&content),
    };
    let overview = match kept(OVERVIEW) {
        true => fs.read_text(uri, OVERVIEW).await?.unwrap_or_default(),
        false => derived_overview(&content),
    };
    let write = NodeWrite {
        uri: uri.clone(),
        content,
        abstract_text,
        overview,
        relations,
        tags: Vec::new(),
    };
    let (_, key) = fs.write(ctx, &write).await?;
    report.pending_events.push(key);
    report.recreated.push(uri.to_string());
    report.states.insert(uri.to_string(), NodeState::active());
    Ok(())
}

async fn deletion_waiting<S: ObjectStore>(
    fs: &ContextFs<'_, S>,
    events: &[String],
) -> Result<bool, MemoryError> {
    for key in events {
        if let Some(object) = fs.store().get(key).await? {
            if let Ok(event) = serde_json::from_slice::<OutboxEvent>(&object.body) {
                if event.event_type == EventType::DeleteContext {
                    return Ok(true);
                }
            }
        }
    }
    Ok(false)
}

/// An L0 abstract made from content: its first line of text.
pub fn derived_abstract(content: &str) -> String {
    let line = content
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    clamp_abstract(line)
}

/// An L1 overview made from content: its first paragraph, at most 400
/// characters.
pub fn derived_overview(content: &str) -> String {
    let para = content
        .split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty())
        .unwrap_or_default();
    let cut: String = para.chars().take(400).collect();
    match cut.len() < para.len() {
        true => format!("{cut}…"),
        false => cut,
    }
}
