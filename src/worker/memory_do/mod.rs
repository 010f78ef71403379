//! The memory index Durable Object, one per account: it serializes the
//! account's memory writes (one writer per node), consumes their outbox
//! events into an FTS5 index (and vectors, when embeddings are set up),
//! answers searches and recalls, counts recalls, runs the repair job and
//! the nightly dream. The node files live in R2 (`crate::memory`); the
//! index is rebuilt from their events, so R2 stays the source of truth.

mod embed;
mod schema;
mod store;

use crate::memory::access::RequestContext;
use crate::memory::calls::*;
use crate::memory::dream::{append_diary, choose, diary_entry, promote_into};
use crate::memory::fs::{ContextFs, Level};
use crate::memory::node::{EventPayload, EventType, NodeStatus, OutboxEvent};
use crate::memory::ops::{self, Indexed, Match, OpError};
use crate::memory::outbox::{Consumer, Processed, LEASE_MS};
use crate::memory::recall::{select, Candidate};
use crate::memory::repair::{repair_account, NodeState, RepairReport};
use crate::memory::search::fts_query;
use crate::memory::uri::NodeUri;
use crate::memory::{MemoryEnv, MemoryError};
use crate::session::internal::WorkspaceChanged;
use crate::storage::ObjectStore;
use crate::worker::bindings::{bucket, GatewayStub};
use crate::worker::rpc::{new_id, now_ms, read_json, reply};
use crate::workspace::paths::file_key;
use futures::lock::Mutex;
use gsv_protocol::{codes, ErrorShape, *};
use serde::Serialize;
use store::{IndexStore, SqlSink, Vectors};
use worker::*;

/// Events consumed per pass (the rest wait for the next one).
const DRAIN_BATCH: u32 = 100;
/// A write begun this long ago and never ended was cut by a crash.
const STALE_WRITE_MS: i64 = 60_000;
/// Recall events are kept this long (`my_stats` looks back 7 days).
const RECALL_EVENTS_KEPT_MS: i64 = 30 * 86_400_000;
const WEEK_MS: i64 = 7 * 86_400_000;

struct Env;

impl MemoryEnv for Env {
    fn now_ms(&self) -> i64 {
        now_ms()
    }
    fn new_id(&self) -> String {
        new_id()
    }
}

#[durable_object]
pub struct MemoryIndex {
    state: State,
    env: worker::Env,
    store: IndexStore,
    /// One write (or delete) at a time: no two interleave on one node.
    writes: Mutex<()>,
    /// One consumer pass at a time: a second waits, then finds what the
    /// first left.
    drains: Mutex<()>,
    /// The account and the last caller as stored (`admit`), so a call by
    /// the same caller writes nothing.
    admitted: std::cell::RefCell<Option<(String, String)>>,
}

fn invalid(m: impl std::fmt::Display) -> ErrorShape {
    ErrorShape::new(codes::BAD_REQUEST, m.to_string())
}

fn internal(m: impl std::fmt::Display) -> ErrorShape {
    ErrorShape::new(codes::INTERNAL, format!("memory index: {m}"))
}

impl From<OpError> for ErrorShape {
    fn from(e: OpError) -> Self {
        match &e {
            OpError::Invalid(_) => invalid(e),
            OpError::Hidden(_) | OpError::Memory(MemoryError::Denied { .. }) => {
                ErrorShape::new(codes::FORBIDDEN, e.to_string())
            }
            OpError::Memory(MemoryError::Uri(_)) => invalid(e),
            OpError::Memory(_) => internal(e),
        }
    }
}

type Res<T> = std::result::Result<T, ErrorShape>;

impl DurableObject for MemoryIndex {
    fn new(state: State, env: worker::Env) -> Self {
        let store = IndexStore::open(state.storage().sql());
        Self {
            state,
            env,
            store,
            writes: Mutex::new(()),
            drains: Mutex::new(()),
            admitted: Default::default(),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let req = &mut req;
        match req.path().as_str() {
            path::WRITE => answer(async { self.write(read_json(req).await?).await }.await),
            path::GET => answer(async { self.get(read_json(req).await?).await }.await),
            path::DELETE => answer(async { self.delete(read_json(req).await?).await }.await),
            path::SEARCH => answer(async { self.search(read_json(req).await?).await }.await),
            path::RECALL => answer(async { self.recall(read_json(req).await?).await }.await),
            path::STATUS => answer(async { self.status(read_json(req).await?) }.await),
            path::REPAIR => answer(async { self.repair(read_json(req).await?).await }.await),
            path::DREAM => answer(async { self.dream(read_json(req).await?).await }.await),
            path::STATS => answer(async { self.stats(read_json(req).await?) }.await),
            _ => Response::error("Not found", 404),
        }
    }

    /// Retries of failed events, and writes a crash cut short.
    async fn alarm(&self) -> Result<Response> {
        let Some(caller) = self.store.state::<Caller>("caller").ok().flatten() else {
            return Response::ok("idle");
        };
        if let Err(e) = self.recover_writes(&caller).await {
            console_error!("memory index: recovering writes failed: {}", e.message);
        }
        if let Err(e) = self.drain(&caller).await {
            console_error!("memory index: consuming events failed: {}", e.message);
        }
        Response::ok("ok")
    }
}

/// A node's owner space and category, as its index row keeps them.
fn place(uri: &NodeUri) -> (String, String) {
    (uri.space.owner(), uri.category().as_str().to_string())
}

fn answer<T: Serialize>(result: Res<T>) -> Result<Response> {
    reply(result)
}

impl MemoryIndex {
    /// The account this object serves (its first caller's); a call for
    /// another is refused. The caller is kept for the alarm's work.
    fn admit(&self, caller: &Caller) -> Res<RequestContext> {
        let caller_json = serde_json::to_string(caller).map_err(internal)?;
        let known = self.admitted.borrow().clone();
        let account = match known {
            Some((account, _)) => Some(account),
            None => self.store.state::<String>("account").map_err(internal)?,
        };
        match account {
            Some(a) if a != caller.account => {
                return Err(OpError::Memory(MemoryError::Denied {
                    account: caller.account.clone(),
                })
                .into())
            }
            Some(_) => {}
            None => self
                .store
                .set_state("account", &caller.account)
                .map_err(internal)?,
        }
        // The alarm's consumer acts as the last caller (its settings).
        let same = matches!(&*self.admitted.borrow(), Some((_, c)) if *c == caller_json);
        if !same {
            self.store.set_state("caller", caller).map_err(internal)?;
            self.admitted
                .replace(Some((caller.account.clone(), caller_json)));
        }
        Ok(RequestContext::new(&caller.account))
    }

    fn bucket(&self) -> Res<Bucket> {
        bucket(&self.env).map_err(internal)
    }

    async fn write(&self, call: IndexWrite) -> Res<MemoryPutResult> {
        let ctx = self.admit(&call.caller)?;
        let write = ops::put_to_write(&call.caller, &call.params)?;
        let bucket = self.bucket()?;
        let env = Env;
        let fs = ContextFs::new(&bucket, &env);
        let uri = write.uri.to_string();
        let meta = {
            let _one_writer = self.writes.lock().await;
            self.store.begin_write(&uri).map_err(internal)?;
            let written = fs.write(&ctx, &write).await;
            let (meta, key) = match written {
                Ok(done) => done,
                Err(e) => {
                    // Left open: the alarm repairs what the write left.
                    self.schedule().await;
                    return Err(OpError::from(e).into());
                }
            };
            self.store.queue_event(&key, now_ms()).map_err(internal)?;
            self.store.end_write(&uri).map_err(internal)?;
            meta
        };
        self.drain(&call.caller).await?;
        Ok(MemoryPutResult {
            uri,
            version: meta.version,
        })
    }

    async fn get(&self, call: IndexGet) -> Res<MemoryGetResult> {
        let ctx = self.admit(&call.caller)?;
        let uri = ops::visible_uri(&call.caller, &call.params.uri)?;
        let level = match call.params.level {
            None => Level::Content,
            Some(n) => Level::from_u8(n)
                .ok_or_else(|| invalid("level is 0 (abstract), 1 (overview) or 2 (content)"))?,
        };
        let bucket = self.bucket()?;
        let fs = ContextFs::new(&bucket, &Env);
        let view = fs.get(&ctx, &uri, level).await.map_err(OpError::from)?;
        Ok(MemoryGetResult {
            node: view.map(ops::node_view),
        })
    }

    async fn delete(&self, call: IndexDelete) -> Res<MemoryDeleteResult> {
        let ctx = self.admit(&call.caller)?;
        let uri = ops::visible_uri(&call.caller, &call.uri)?;
        let bucket = self.bucket()?;
        let fs = ContextFs::new(&bucket, &Env);
        let deleted = {
            let _one_writer = self.writes.lock().await;
            let key = fs.delete(&ctx, &uri).await.map_err(OpError::from)?;
            if let Some(key) = &key {
                self.store.queue_event(key, now_ms()).map_err(internal)?;
            }
            key.is_some()
        };
        self.drain(&call.caller).await?;
        Ok(MemoryDeleteResult { deleted })
    }

    async fn search(&self, call: IndexSearch) -> Res<MemorySearchResult> {
        self.admit(&call.caller)?;
        let p = &call.params;
        let known = match call.caller.operator {
            true => self.store.spaces().map_err(internal)?,
            false => Vec::new(),
        };
        let spaces = ops::search_spaces(&call.caller, p.scope, &known);
        let limit = p.limit.unwrap_or(10).clamp(1, 100) as usize;
        let hybrid = call.caller.settings.embeddings.is_some();
        let hits = self
            .find(
                &call.caller,
                &p.query,
                &spaces,
                p.category.as_deref(),
                p.level,
                limit,
            )
            .await?;
        Ok(MemorySearchResult {
            hits,
            mode: if hybrid { "hybrid" } else { "keyword" }.into(),
            took_ms: 0.0,
        })
    }

    /// Keyword matches, fused with the vector ranking when embeddings are
    /// configured.
    async fn find(
        &self,
        caller: &Caller,
        query: &str,
        spaces: &[String],
        category: Option<&str>,
        level: Option<u8>,
        limit: usize,
    ) -> Res<Vec<MemoryHit>> {
        // Nothing to find: no FTS query, and no embedding of the query.
        if spaces.is_empty() || self.store.is_empty().map_err(internal)? {
            return Ok(Vec::new());
        }
        let matches: Vec<Match> = match fts_query(query) {
            Some(q) => self
                .store
                .matches(&q, spaces, category, level, (limit * 4) as u32)
                .map_err(internal)?
                .into_iter()
                .map(|m| Match {
                    uri: m.uri,
                    level: m.level.clamp(0, 2) as u8,
                    rank: m.rank,
                    snippet: m.snippet,
                })
                .collect(),
            None => Vec::new(),
        };
        let vector_ranking = match &caller.settings.embeddings {
            Some(cfg) if !query.trim().is_empty() => {
                let q = embed::embed(cfg, &[query.to_string()])
                    .await
                    .map_err(internal)?;
                let q = q.into_iter().next().unwrap_or_default();
                let ranking = self
                    .store
                    .nearest(&q, spaces, category, level, limit * 4)
                    .map_err(internal)?;
                Some(ranking)
            }
            _ => None,
        };
        let mut uris: Vec<String> = matches.iter().map(|m| m.uri.clone()).collect();
        uris.extend(vector_ranking.iter().flatten().cloned());
        uris.sort();
        uris.dedup();
        let nodes: Vec<Indexed> = self
            .store
            .nodes_in(&uris)
            .map_err(internal)?
            .into_iter()
            .map(|n| Indexed {
                uri: n.uri,
                owner_space: n.owner_space,
                category: n.category,
                abstract_text: n.abstract_text,
            })
            .collect();
        let ranked = ops::hits(&matches, vector_ranking.as_deref(), &nodes, usize::MAX);
        self.only_active(ranked, limit).await
    }

    /// The first `limit` hits whose node's meta reads ACTIVE in R2 now:
    /// the index cannot see a meta changed behind its back (an update in
    /// progress, a write cut short, a file rewritten by hand), and the
    /// directory spec lets retrieval see nothing else. The metas of the
    /// best hits are read together; a node found not ACTIVE is marked so
    /// in the index, so later searches skip it without reading R2.
    async fn only_active(&self, ranked: Vec<MemoryHit>, limit: usize) -> Res<Vec<MemoryHit>> {
        let bucket = self.bucket()?;
        let fs = ContextFs::new(&bucket, &Env);
        let mut kept = Vec::new();
        let mut rest = ranked.into_iter();
        while kept.len() < limit {
            let batch: Vec<MemoryHit> = rest.by_ref().take(limit - kept.len()).collect();
            if batch.is_empty() {
                break;
            }
            let metas = futures::future::join_all(batch.iter().map(|h| async {
                match NodeUri::parse(&h.uri) {
                    Ok(uri) => fs.raw_meta(&uri).await.map(|m| (uri, m)).map(Some),
                    Err(_) => Ok(None),
                }
            }))
            .await;
            for (hit, meta) in batch.into_iter().zip(metas) {
                match meta.map_err(OpError::from)? {
                    Some((_, Some(meta))) if meta.status == NodeStatus::Active => kept.push(hit),
                    Some((uri, Some(meta))) => {
                        let state = NodeState {
                            status: meta.status,
                            missing: Vec::new(),
                        };
                        let (space, category) = place(&uri);
                        self.store
                            .set_status(&hit.uri, &space, &category, &state)
                            .map_err(internal)?;
                    }
                    // No meta: deleted, or its delete is under way.
                    _ => {}
                }
            }
        }
        Ok(kept)
    }

    async fn recall(&self, call: IndexRecall) -> Res<RecallReply> {
        self.admit(&call.caller)?;
        if self.store.is_empty().map_err(internal)? {
            return Ok(RecallReply {
                recalled: Vec::new(),
                empty: true,
            });
        }
        let spaces = call.caller.spaces();
        let hits = self
            .find(&call.caller, &call.query, &spaces, None, None, 8)
            .await?;
        let candidates: Vec<Candidate> = hits
            .into_iter()
            .map(|h| Candidate {
                uri: h.uri,
                category: h.category,
                abstract_text: h.abstract_text,
            })
            .collect();
        let recalled = select(&candidates, call.budget_tokens as usize);
        for c in &recalled {
            self.store
                .count_recall(&c.uri, &call.day, &call.caller.agent_id, call.at_ms)
                .map_err(internal)?;
        }
        Ok(RecallReply {
            recalled,
            empty: false,
        })
    }

    fn status(&self, call: IndexStatus) -> Res<MemoryStatusResult> {
        self.admit(&call.caller)?;
        let last_repair: Option<MemoryRepairResult> =
            self.store.state("last_repair").map_err(internal)?;
        let now = now_ms();
        let counts = self.store.status_counts().map_err(internal)?;
        let count = |s: NodeStatus| counts.get(s.as_str()).copied().unwrap_or(0);
        Ok(MemoryStatusResult {
            account: call.caller.account.clone(),
            nodes: count(NodeStatus::Active),
            by_status: MemoryStatusCounts {
                active: count(NodeStatus::Active),
                pending: count(NodeStatus::Pending),
                broken: count(NodeStatus::Broken),
            },
            broken: self
                .store
                .broken()
                .map_err(internal)?
                .into_iter()
                .map(|(uri, missing)| MemoryBrokenNode { uri, missing })
                .collect(),
            pending_events: self.store.queued_events().map_err(internal)?,
            dead_lettered: self
                .store
                .state::<u64>("dead_lettered")
                .map_err(internal)?
                .unwrap_or(0),
            search_mode: match call.caller.settings.embeddings {
                Some(_) => "hybrid",
                None => "keyword",
            }
            .into(),
            recall_events_7d: self
                .store
                .recall_events_since(now - WEEK_MS, None)
                .map_err(internal)?,
            memories_promoted: self
                .store
                .promoted_count(&call.caller.agent_id)
                .map_err(internal)?,
            alerts: last_repair
                .as_ref()
                .map(|r| r.alerts.clone())
                .unwrap_or_default(),
            last_repair_at_ms: self.store.state("last_repair_at_ms").map_err(internal)?,
            last_dream_at_ms: self.store.last_dream_ms(None).map_err(internal)?,
            last_repair,
        })
    }

    async fn repair(&self, call: IndexRepair) -> Res<MemoryRepairResult> {
        let ctx = self.admit(&call.caller)?;
        let started = now_ms();
        let bucket = self.bucket()?;
        let fs = ContextFs::new(&bucket, &Env);
        let report = {
            let _one_writer = self.writes.lock().await;
            let report = repair_account(&fs, &ctx).await.map_err(OpError::from)?;
            self.reconcile(&report)?;
            report
        };
        // Events the repair registered, and any the queue lost, are queued.
        for key in &report.pending_events {
            self.store.queue_event(key, started).map_err(internal)?;
        }
        let queued = report.pending_events.len() as u64;
        self.drain(&call.caller).await?;
        let result = MemoryRepairResult {
            nodes_scanned: report.nodes_scanned,
            list_pages: report.list_pages,
            recreated: report.recreated,
            activated: report.activated,
            marked_broken: report.marked_broken,
            restored: report.restored,
            deletes_finished: report.deletes_finished,
            alerts: report.alerts,
            events_queued: queued,
            took_ms: (now_ms() - started).max(0) as u64,
        };
        self.store
            .set_state("last_repair", &result)
            .map_err(internal)?;
        self.store
            .set_state("last_repair_at_ms", &started)
            .map_err(internal)?;
        Ok(result)
    }

    async fn dream(&self, call: IndexDream) -> Res<DreamReply> {
        self.admit(&call.caller)?;
        let agent = &call.caller.agent_id;
        let now = call.now_ms;
        let stats = self.store.recall_stats(agent).map_err(internal)?;
        let chosen = choose(&stats, now, call.threshold);
        let bucket = self.bucket()?;
        let memory_key = file_key(agent, "MEMORY.md");
        let memory = bucket
            .read_text(&memory_key)
            .await
            .map_err(|e| internal(e.to_string()))?;
        let (updated, promoted) = promote_into(
            memory.as_ref().map_or("", |m| m.content.as_str()),
            &chosen,
            &call.stamp,
        );
        if let Some(text) = updated {
            bucket
                .write_text(&memory_key, &text)
                .await
                .map_err(|e| internal(e.to_string()))?;
        }
        let dreams_key = file_key(agent, "DREAMS.md");
        let dreams = bucket
            .read_text(&dreams_key)
            .await
            .map_err(|e| internal(e.to_string()))?;
        let entry = diary_entry(&call.stamp, stats.len(), &promoted);
        let diary = append_diary(dreams.as_ref().map_or("", |d| d.content.as_str()), &entry);
        bucket
            .write_text(&dreams_key, &diary)
            .await
            .map_err(|e| internal(e.to_string()))?;
        // Every chosen one counts as promoted: a text already in MEMORY.md
        // needs no second promotion either.
        let uris: Vec<String> = chosen.iter().map(|p| p.stats.uri.clone()).collect();
        self.store
            .record_dream(agent, now, stats.len() as u64, &uris)
            .map_err(internal)?;
        self.store
            .prune_recall_events(now - RECALL_EVENTS_KEPT_MS)
            .map_err(internal)?;
        Ok(DreamReply {
            considered: stats.len() as u64,
            promoted: promoted.into_iter().map(|p| p.stats.uri).collect(),
        })
    }

    fn stats(&self, call: IndexStats) -> Res<MemoryStats> {
        self.admit(&call.caller)?;
        let agent = &call.caller.agent_id;
        let since = now_ms() - WEEK_MS;
        let tags = self
            .store
            .recalled_tags_since(since, agent)
            .map_err(internal)?;
        Ok(MemoryStats {
            memories_stored: self
                .store
                .node_count(Some(&call.caller.spaces()))
                .map_err(internal)?,
            memories_promoted: self.store.promoted_count(agent).map_err(internal)?,
            last_dream_ts: self
                .store
                .last_dream_ms(Some(agent))
                .map_err(internal)?
                .map(|ms| (ms / 1000) as u64),
            recall_events_7d: self
                .store
                .recall_events_since(since, Some(agent))
                .map_err(internal)?,
            top_concept_tags_7d: ops::top_tags(&tags, 5),
        })
    }

    /// The index's statuses as a repair scan left the nodes.
    fn reconcile(&self, report: &RepairReport) -> Res<()> {
        self.store
            .reconcile(&report.states, |uri| {
                NodeUri::parse(uri).ok().map(|u| place(&u))
            })
            .map_err(internal)
    }

    /// Consumes the due events into the index; the alarm is left at the
    /// next retry.
    async fn drain(&self, caller: &Caller) -> Res<()> {
        let _one_consumer = self.drains.lock().await;
        let was_empty = self.store.is_empty().map_err(internal)?;
        let bucket = self.bucket()?;
        let fs = ContextFs::new(&bucket, &Env);
        let now = now_ms();
        let consumer_id = self.state.id().to_string();
        for key in self.store.due_events(now, DRAIN_BATCH).map_err(internal)? {
            let sink = self.sink_for(caller, &fs, &key).await;
            let outcome = match sink {
                Ok(sink) => {
                    let consumer = Consumer {
                        fs: &fs,
                        sink: &sink,
                        consumer_id: &consumer_id,
                        max_retry: caller.settings.max_retry,
                        now_ms: now,
                    };
                    consumer.process(&key).await
                }
                // The event's inputs could not be had (the embeddings
                // service is down): it fails like an apply would.
                Err(e) => self.fail_unapplied(&fs, caller, &key, e, now).await,
            };
            match outcome {
                Ok(Processed::Applied) | Ok(Processed::Gone) => self.store.unqueue_event(&key),
                Ok(Processed::Retry { at_ms, .. }) | Ok(Processed::NotDue { at_ms }) => {
                    self.store.queue_event(&key, at_ms)
                }
                Ok(Processed::DeadLettered { .. }) => {
                    let n: u64 = self
                        .store
                        .state("dead_lettered")
                        .ok()
                        .flatten()
                        .unwrap_or(0);
                    self.store
                        .set_state("dead_lettered", &(n + 1))
                        .and_then(|_| self.store.unqueue_event(&key))
                }
                Ok(Processed::Claimed) => self.store.queue_event(&key, now + LEASE_MS),
                // A corrupt event file cannot be consumed; it stays in R2
                // for a person, and out of the queue.
                Err(e) => {
                    console_error!("memory index: event {key}: {e}");
                    self.store.unqueue_event(&key)
                }
            }
            .map_err(internal)?;
        }
        self.schedule().await;
        if was_empty && !self.store.is_empty().map_err(internal)? {
            self.announce_first_memory().await;
        }
        Ok(())
    }

    /// The index got its first memory: the gateway hears of it before the
    /// write is answered, so a session that found the index empty recalls
    /// again with its next message (recalled memories are prompt inputs,
    /// like the workspace). Should this word be lost, sessions see the
    /// memory within `workspace.recheckSeconds` anyway (`KnownEmpty`).
    async fn announce_first_memory(&self) {
        let call = WorkspaceChanged {
            session_key: String::new(),
        };
        if let Err(e) = GatewayStub::get(&self.env).call(&call).await {
            console_error!(
                "memory index: telling the gateway of a first memory failed: {}",
                e.message
            );
        }
    }

    /// The sink for one event: an upsert's tags and version from its
    /// node's meta, and its vectors when embeddings are configured.
    async fn sink_for<'a>(
        &'a self,
        caller: &Caller,
        fs: &ContextFs<'_, Bucket>,
        key: &str,
    ) -> std::result::Result<SqlSink<'a>, String> {
        let mut sink = SqlSink {
            store: &self.store,
            vectors: Vectors(Vec::new()),
            tags: Vec::new(),
            version: 0,
            status: NodeStatus::Active,
        };
        let Some(object) = ObjectStore::get(fs.store(), key)
            .await
            .map_err(|e| e.to_string())?
        else {
            return Ok(sink);
        };
        let Ok(event) = serde_json::from_slice::<OutboxEvent>(&object.body) else {
            return Ok(sink);
        };
        if event.event_type != EventType::UpsertContext {
            return Ok(sink);
        }
        if let Ok(uri) = NodeUri::parse(&event.uri) {
            if let Some(meta) = fs.raw_meta(&uri).await.map_err(|e| e.to_string())? {
                sink.tags = meta.tags;
                sink.version = meta.version as i64;
                sink.status = meta.status;
            }
        }
        if let (Some(cfg), Ok(EventPayload::Upsert(records))) = (
            &caller.settings.embeddings,
            EventPayload::from_event(&event),
        ) {
            let layers: Vec<(u8, String)> = records
                .iter()
                .filter(|r| r.level < 2)
                .map(|r| (r.level, r.text.clone()))
                .collect();
            let texts: Vec<String> = layers.iter().map(|(_, t)| t.clone()).collect();
            let vectors = embed::embed(cfg, &texts).await?;
            sink.vectors = Vectors(layers.into_iter().map(|(l, _)| l).zip(vectors).collect());
        }
        Ok(sink)
    }

    /// An event whose sink could not be built counts as a failed attempt.
    async fn fail_unapplied(
        &self,
        fs: &ContextFs<'_, Bucket>,
        caller: &Caller,
        key: &str,
        error: String,
        now: i64,
    ) -> std::result::Result<Processed, MemoryError> {
        struct Failing(String);
        impl crate::memory::outbox::IndexSink for Failing {
            async fn apply(
                &self,
                _: &OutboxEvent,
                _: &EventPayload,
            ) -> std::result::Result<(), String> {
                Err(self.0.clone())
            }
        }
        let sink = Failing(error);
        Consumer {
            fs,
            sink: &sink,
            consumer_id: &self.state.id().to_string(),
            max_retry: caller.settings.max_retry,
            now_ms: now,
        }
        .process(key)
        .await
    }

    /// Writes whose object died between their commit and their event:
    /// the repair job's branches cover every other cut; this one (ACTIVE,
    /// no event) is re-registered from the node's files.
    async fn recover_writes(&self, caller: &Caller) -> Res<()> {
        let stale = self
            .store
            .stale_writes(now_ms() - STALE_WRITE_MS)
            .map_err(internal)?;
        if stale.is_empty() {
            return Ok(());
        }
        let ctx = RequestContext::new(&caller.account);
        let bucket = self.bucket()?;
        let fs = ContextFs::new(&bucket, &Env);
        let _one_writer = self.writes.lock().await;
        let report = repair_account(&fs, &ctx).await.map_err(OpError::from)?;
        self.reconcile(&report)?;
        for key in &report.pending_events {
            self.store.queue_event(key, now_ms()).map_err(internal)?;
        }
        for uri in stale {
            if let Ok(node) = NodeUri::parse(&uri) {
                if let Some(view) = fs
                    .get(&ctx, &node, Level::Content)
                    .await
                    .map_err(OpError::from)?
                {
                    let text = |f| fs.read_text(&node, f);
                    let abstract_text = text(crate::memory::node::ABSTRACT)
                        .await
                        .map_err(OpError::from)?
                        .unwrap_or_default();
                    let overview = text(crate::memory::node::OVERVIEW)
                        .await
                        .map_err(OpError::from)?
                        .unwrap_or_default();
                    let records = crate::memory::node::index_records(
                        &node,
                        &abstract_text,
                        &overview,
                        &view.text,
                    );
                    let key = fs
                        .register(&node, EventPayload::Upsert(records))
                        .await
                        .map_err(OpError::from)?;
                    self.store.queue_event(&key, now_ms()).map_err(internal)?;
                }
            }
            self.store.end_write(&uri).map_err(internal)?;
        }
        Ok(())
    }

    /// Points the alarm at the next retry, or at when a write still open
    /// would count as cut by a crash.
    async fn schedule(&self) {
        let retry = self.store.next_event_due().ok().flatten();
        let stale = self
            .store
            .oldest_write()
            .ok()
            .flatten()
            .map(|started| started + STALE_WRITE_MS);
        let next = [retry, stale].into_iter().flatten().min();
        let result = match next {
            Some(at) => {
                let at = at.max(now_ms() + 1);
                self.state
                    .storage()
                    .set_alarm(ScheduledTime::new(js_sys::Date::new(&(at as f64).into())))
                    .await
            }
            None => Ok(()),
        };
        if let Err(e) = result {
            console_error!("memory index: scheduling the alarm failed: {e}");
        }
    }
}
