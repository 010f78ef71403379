//! Every SQL statement of the memory index object: the committed nodes
//! and their FTS5 records (BM25), optional vectors, recall counts, the
//! outbox queue (keys of event files waiting in R2), write intents, and a
//! few state values. Nothing else in the object writes SQL.

use super::schema::MIGRATIONS;
use crate::memory::dream::RecallStats;
use crate::memory::node::{EventPayload, IndexRecord, NodeStatus, OutboxEvent};
use crate::memory::outbox::IndexSink;
use crate::memory::repair::NodeState;
use crate::memory::search::{cosine, vector_from_bytes, vector_to_bytes, TopK};
use crate::worker::rpc::now_ms;
use gsv_worker_sql::migrate;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::collections::BTreeMap;
use worker::{SqlStorage, SqlStorageValue};

pub type SqlResult<T> = Result<T, String>;

/// A committed node as the index keeps it.
#[derive(Debug, Clone, Deserialize)]
pub struct NodeRow {
    pub uri: String,
    pub owner_space: String,
    pub category: String,
    #[serde(rename = "abstract")]
    pub abstract_text: String,
}

/// One FTS match.
#[derive(Debug, Clone, Deserialize)]
pub struct MatchRow {
    pub uri: String,
    pub level: i64,
    pub rank: f64,
    pub snippet: String,
}

/// What an upsert's vectors are, computed before the SQL is written.
pub struct Vectors(pub Vec<(u8, Vec<f32>)>);

/// A BLOB column as SQLite hands it over (an `ArrayBuffer`, which serde
/// sees as bytes, not as a sequence).
struct Blob(Vec<u8>);

impl<'de> Deserialize<'de> for Blob {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Bytes;
        impl<'de> serde::de::Visitor<'de> for Bytes {
            type Value = Blob;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a BLOB")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Blob, E> {
                Ok(Blob(v.to_vec()))
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Blob, E> {
                Ok(Blob(v))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Blob, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = seq.next_element::<u8>()? {
                    out.push(b);
                }
                Ok(Blob(out))
            }
        }
        d.deserialize_bytes(Bytes)
    }
}

#[derive(Deserialize)]
struct Count {
    n: i64,
}

pub struct IndexStore {
    sql: SqlStorage,
    /// Whether the index holds no node, once known: a recall on an empty
    /// index then asks SQLite nothing. Only `upsert` adds nodes, and it
    /// forgets this first.
    empty: std::cell::Cell<Option<bool>>,
}

/// `?, ?, …` for `n` values (n ≥ 1).
fn placeholders(n: usize) -> String {
    vec!["?"; n.max(1)].join(", ")
}

impl IndexStore {
    pub fn open(sql: SqlStorage) -> Self {
        if let Err(e) = migrate(&sql, MIGRATIONS, now_ms()) {
            worker::console_error!("memory index: migration failed: {e}");
        }
        Self {
            sql,
            empty: std::cell::Cell::new(None),
        }
    }

    /// Whether no node is indexed (read once, then kept until a delete).
    pub fn is_empty(&self) -> SqlResult<bool> {
        if let Some(empty) = self.empty.get() {
            return Ok(empty);
        }
        let rows: Vec<Count> = self.rows("SELECT EXISTS (SELECT 1 FROM nodes) AS n", vec![])?;
        let empty = rows.first().is_none_or(|c| c.n == 0);
        self.empty.set(Some(empty));
        Ok(empty)
    }

    fn exec(&self, query: &str, bindings: Vec<SqlStorageValue>) -> SqlResult<worker::SqlCursor> {
        self.sql.exec(query, bindings).map_err(|e| e.to_string())
    }

    fn rows<T: DeserializeOwned>(
        &self,
        query: &str,
        bindings: Vec<SqlStorageValue>,
    ) -> SqlResult<Vec<T>> {
        self.exec(query, bindings)?
            .to_array()
            .map_err(|e| e.to_string())
    }

    fn count(&self, query: &str, bindings: Vec<SqlStorageValue>) -> SqlResult<u64> {
        let n = self
            .exec(query, bindings)?
            .one::<Count>()
            .map_err(|e| e.to_string())?
            .n;
        Ok(n.max(0) as u64)
    }

    // --- state values -------------------------------------------------

    pub fn state<T: DeserializeOwned>(&self, key: &str) -> SqlResult<Option<T>> {
        #[derive(Deserialize)]
        struct Row {
            value: String,
        }
        let rows: Vec<Row> =
            self.rows("SELECT value FROM state WHERE key = ?", vec![key.into()])?;
        match rows.into_iter().next() {
            Some(r) => serde_json::from_str(&r.value)
                .map(Some)
                .map_err(|e| e.to_string()),
            None => Ok(None),
        }
    }

    pub fn set_state<T: Serialize>(&self, key: &str, value: &T) -> SqlResult<()> {
        let json = serde_json::to_string(value).map_err(|e| e.to_string())?;
        self.exec(
            "INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            vec![key.into(), json.into()],
        )?;
        Ok(())
    }

    // --- nodes and records --------------------------------------------

    fn upsert(
        &self,
        records: &[IndexRecord],
        tags: &[String],
        version: i64,
        vectors: &Vectors,
        status: NodeStatus,
    ) -> SqlResult<()> {
        let Some(first) = records.first() else {
            return Ok(());
        };
        self.empty.set(Some(false));
        self.remove_node(&first.uri)?;
        let abstract_text = records
            .iter()
            .find(|r| r.level == 0)
            .map_or("", |r| r.text.as_str());
        self.exec(
            "INSERT INTO nodes (uri, owner_space, category, abstract, tags, version, updated_ms, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                first.uri.as_str().into(),
                first.filters.owner_space.as_str().into(),
                first.metadata.category.as_str().into(),
                abstract_text.into(),
                serde_json::to_string(tags).unwrap_or_default().into(),
                version.into(),
                now_ms().into(),
                status.as_str().into(),
            ],
        )?;
        for r in records {
            self.exec(
                "INSERT INTO records (text, uri, level, owner_space, category) VALUES (?, ?, ?, ?, ?)",
                vec![
                    r.text.as_str().into(),
                    r.uri.as_str().into(),
                    i64::from(r.level).into(),
                    r.filters.owner_space.as_str().into(),
                    r.metadata.category.as_str().into(),
                ],
            )?;
        }
        for (level, v) in &vectors.0 {
            self.exec(
                "INSERT INTO vectors (uri, level, owner_space, category, vector) VALUES (?, ?, ?, ?, ?)",
                vec![
                    first.uri.as_str().into(),
                    i64::from(*level).into(),
                    first.filters.owner_space.as_str().into(),
                    first.metadata.category.as_str().into(),
                    SqlStorageValue::Blob(vector_to_bytes(v)),
                ],
            )?;
        }
        Ok(())
    }

    fn remove_node(&self, uri: &str) -> SqlResult<()> {
        self.exec("DELETE FROM nodes WHERE uri = ?", vec![uri.into()])?;
        self.exec("DELETE FROM records WHERE uri = ?", vec![uri.into()])?;
        self.exec("DELETE FROM vectors WHERE uri = ?", vec![uri.into()])?;
        Ok(())
    }

    /// Applies an event to the index (vectors computed by the caller; the
    /// status is the node's meta's as the consumer read it).
    pub fn apply(
        &self,
        event: &OutboxEvent,
        payload: &EventPayload,
        tags: &[String],
        version: i64,
        vectors: &Vectors,
        status: NodeStatus,
    ) -> SqlResult<()> {
        match payload {
            EventPayload::Upsert(records) => self.upsert(records, tags, version, vectors, status),
            EventPayload::Delete => {
                // Maybe the last: the next `is_empty` asks SQLite.
                self.empty.set(None);
                self.remove_node(&event.uri)
            }
            EventPayload::Move { new_uri } => {
                for table in ["nodes", "records", "vectors"] {
                    self.exec(
                        &format!("UPDATE {table} SET uri = ? WHERE uri = ?"),
                        vec![new_uri.as_str().into(), event.uri.as_str().into()],
                    )?;
                }
                Ok(())
            }
            // Edges are read from the node's own `.relations.json`; the
            // index does not search them.
            EventPayload::Relations(_) => Ok(()),
        }
    }

    pub fn nodes_in(&self, uris: &[String]) -> SqlResult<Vec<NodeRow>> {
        if uris.is_empty() {
            return Ok(Vec::new());
        }
        self.rows(
            &format!(
                "SELECT uri, owner_space, category, abstract FROM nodes WHERE status = 'ACTIVE' AND uri IN ({})",
                placeholders(uris.len())
            ),
            uris.iter().map(|u| u.as_str().into()).collect(),
        )
    }

    /// Every owner space that holds a node.
    pub fn spaces(&self) -> SqlResult<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            owner_space: String,
        }
        let rows: Vec<Row> = self.rows("SELECT DISTINCT owner_space FROM nodes", vec![])?;
        Ok(rows.into_iter().map(|r| r.owner_space).collect())
    }

    /// How many ACTIVE nodes (in `spaces`, when given).
    pub fn node_count(&self, spaces: Option<&[String]>) -> SqlResult<u64> {
        match spaces {
            None => self.count(
                "SELECT COUNT(*) AS n FROM nodes WHERE status = 'ACTIVE'",
                vec![],
            ),
            Some(spaces) => self.count(
                &format!(
                    "SELECT COUNT(*) AS n FROM nodes WHERE status = 'ACTIVE' AND owner_space IN ({})",
                    placeholders(spaces.len())
                ),
                spaces.iter().map(|s| s.as_str().into()).collect(),
            ),
        }
    }

    /// BM25 matches of `query` (an FTS5 expression) in `spaces`, best
    /// first.
    pub fn matches(
        &self,
        query: &str,
        spaces: &[String],
        category: Option<&str>,
        level: Option<u8>,
        limit: u32,
    ) -> SqlResult<Vec<MatchRow>> {
        let mut sql = format!(
            "SELECT uri, level, bm25(records) AS rank, snippet(records, 0, '', '', '…', 16) AS snippet \
             FROM records WHERE records MATCH ? AND owner_space IN ({})",
            placeholders(spaces.len())
        );
        let mut args: Vec<SqlStorageValue> = vec![query.into()];
        args.extend(spaces.iter().map(|s| s.as_str().into()));
        if let Some(c) = category {
            sql.push_str(" AND category = ?");
            args.push(c.into());
        }
        if let Some(l) = level {
            sql.push_str(" AND level = ?");
            args.push(i64::from(l).into());
        }
        sql.push_str(" ORDER BY rank LIMIT ?");
        args.push(i64::from(limit).into());
        self.rows(&sql, args)
    }

    /// The `k` nodes whose vectors are nearest `query` (cosine), best
    /// first, reading the stored vectors one row at a time.
    pub fn nearest(
        &self,
        query: &[f32],
        spaces: &[String],
        category: Option<&str>,
        level: Option<u8>,
        k: usize,
    ) -> SqlResult<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            uri: String,
            vector: Blob,
        }
        let mut sql = format!(
            "SELECT uri, vector FROM vectors WHERE owner_space IN ({})",
            placeholders(spaces.len())
        );
        let mut args: Vec<SqlStorageValue> = spaces.iter().map(|s| s.as_str().into()).collect();
        if let Some(c) = category {
            sql.push_str(" AND category = ?");
            args.push(c.into());
        }
        if let Some(l) = level {
            sql.push_str(" AND level = ?");
            args.push(i64::from(l).into());
        }
        let mut top = TopK::new(k);
        for row in self.exec(&sql, args)?.next::<Row>() {
            let row = row.map_err(|e| e.to_string())?;
            top.push(&row.uri, cosine(query, &vector_from_bytes(&row.vector.0)));
        }
        Ok(top.ranking())
    }

    // --- statuses -----------------------------------------------------

    /// Nodes per status, as last known.
    pub fn status_counts(&self) -> SqlResult<BTreeMap<String, u64>> {
        #[derive(Deserialize)]
        struct Row {
            status: String,
            n: i64,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT status, COUNT(*) AS n FROM nodes GROUP BY status",
            vec![],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| (r.status, r.n.max(0) as u64))
            .collect())
    }

    /// The BROKEN nodes and the files each misses, by URI.
    pub fn broken(&self) -> SqlResult<Vec<(String, Vec<String>)>> {
        #[derive(Deserialize)]
        struct Row {
            uri: String,
            missing: String,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT uri, missing FROM nodes WHERE status = 'BROKEN' ORDER BY uri",
            vec![],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| (r.uri, serde_json::from_str(&r.missing).unwrap_or_default()))
            .collect())
    }

    /// Records a node's status. A node the index does not hold gets a row
    /// only when it is not ACTIVE (so it is counted and listed); an ACTIVE
    /// one is added by its UPSERT event, with its text.
    pub fn set_status(
        &self,
        uri: &str,
        owner_space: &str,
        category: &str,
        state: &NodeState,
    ) -> SqlResult<()> {
        let missing = serde_json::to_string(&state.missing).unwrap_or_default();
        let status = state.status.as_str();
        self.exec(
            "UPDATE nodes SET status = ?, missing = ? WHERE uri = ?",
            vec![status.into(), missing.as_str().into(), uri.into()],
        )?;
        if state.status != NodeStatus::Active {
            self.exec(
                "INSERT INTO nodes (uri, owner_space, category, abstract, tags, version, updated_ms, status, missing) \
                 VALUES (?, ?, ?, '', '[]', 0, ?, ?, ?) ON CONFLICT(uri) DO NOTHING",
                vec![
                    uri.into(),
                    owner_space.into(),
                    category.into(),
                    now_ms().into(),
                    status.into(),
                    missing.as_str().into(),
                ],
            )?;
        }
        Ok(())
    }

    /// An update of an indexed node has begun (PENDING) or ended (ACTIVE
    /// again, serving its last indexed text until its event is applied).
    fn mark_writing(&self, uri: &str, writing: bool) -> SqlResult<()> {
        let (to, from) = match writing {
            true => ("PENDING", "ACTIVE"),
            false => ("ACTIVE", "PENDING"),
        };
        self.exec(
            "UPDATE nodes SET status = ? WHERE uri = ? AND status = ?",
            vec![to.into(), uri.into(), from.into()],
        )?;
        Ok(())
    }

    /// After a repair scan of the whole account: every node's status as
    /// the scan left it, and the rows of nodes no longer in R2 dropped.
    pub fn reconcile(
        &self,
        states: &BTreeMap<String, NodeState>,
        place: impl Fn(&str) -> Option<(String, String)>,
    ) -> SqlResult<()> {
        #[derive(Deserialize)]
        struct Row {
            uri: String,
        }
        let rows: Vec<Row> = self.rows("SELECT uri FROM nodes", vec![])?;
        for row in rows.iter().filter(|r| !states.contains_key(&r.uri)) {
            self.remove_node(&row.uri)?;
            self.empty.set(None);
        }
        for (uri, state) in states {
            if let Some((owner_space, category)) = place(uri) {
                self.set_status(uri, &owner_space, &category, state)?;
            }
        }
        Ok(())
    }

    // --- recalls and dreams -------------------------------------------

    pub fn count_recall(&self, uri: &str, day: &str, agent_id: &str, at_ms: i64) -> SqlResult<()> {
        self.exec(
            "INSERT INTO recall_days (uri, day, hits, last_ms) VALUES (?, ?, 1, ?) \
             ON CONFLICT(uri, day) DO UPDATE SET hits = hits + 1, last_ms = excluded.last_ms",
            vec![uri.into(), day.into(), at_ms.into()],
        )?;
        self.exec(
            "INSERT INTO recall_events (at_ms, uri, agent_id) VALUES (?, ?, ?)",
            vec![at_ms.into(), uri.into(), agent_id.into()],
        )?;
        Ok(())
    }

    /// Recall figures of the nodes this agent recalled and has not yet
    /// promoted.
    pub fn recall_stats(&self, agent_id: &str) -> SqlResult<Vec<RecallStats>> {
        #[derive(Deserialize)]
        struct Row {
            uri: String,
            #[serde(rename = "abstract")]
            abstract_text: String,
            hits: i64,
            days: i64,
            last_ms: i64,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT d.uri AS uri, n.abstract AS abstract, SUM(d.hits) AS hits, COUNT(*) AS days, MAX(d.last_ms) AS last_ms \
             FROM recall_days d JOIN nodes n ON n.uri = d.uri \
             WHERE n.status = 'ACTIVE' AND d.uri IN (SELECT DISTINCT uri FROM recall_events WHERE agent_id = ?) \
               AND d.uri NOT IN (SELECT uri FROM promoted WHERE agent_id = ?) \
             GROUP BY d.uri",
            vec![agent_id.into(), agent_id.into()],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| RecallStats {
                uri: r.uri,
                abstract_text: r.abstract_text,
                hits: r.hits.max(0) as u64,
                days: r.days.max(0) as u64,
                last_recalled_ms: r.last_ms,
            })
            .collect())
    }

    pub fn record_dream(
        &self,
        agent_id: &str,
        at_ms: i64,
        considered: u64,
        promoted: &[String],
    ) -> SqlResult<()> {
        for uri in promoted {
            self.exec(
                "INSERT INTO promoted (uri, agent_id, at_ms) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                vec![uri.as_str().into(), agent_id.into(), at_ms.into()],
            )?;
        }
        self.exec(
            "INSERT INTO dreams (agent_id, at_ms, considered, promoted) VALUES (?, ?, ?, ?)",
            vec![
                agent_id.into(),
                at_ms.into(),
                (considered as i64).into(),
                (promoted.len() as i64).into(),
            ],
        )?;
        Ok(())
    }

    pub fn promoted_count(&self, agent_id: &str) -> SqlResult<u64> {
        self.count(
            "SELECT COUNT(*) AS n FROM promoted WHERE agent_id = ?",
            vec![agent_id.into()],
        )
    }

    pub fn last_dream_ms(&self, agent_id: Option<&str>) -> SqlResult<Option<i64>> {
        #[derive(Deserialize)]
        struct Row {
            at: Option<f64>,
        }
        let rows: Vec<Row> = match agent_id {
            Some(a) => self.rows(
                "SELECT MAX(at_ms) AS at FROM dreams WHERE agent_id = ?",
                vec![a.into()],
            )?,
            None => self.rows("SELECT MAX(at_ms) AS at FROM dreams", vec![])?,
        };
        Ok(rows.into_iter().next().and_then(|r| r.at).map(|a| a as i64))
    }

    pub fn recall_events_since(&self, since_ms: i64, agent_id: Option<&str>) -> SqlResult<u64> {
        match agent_id {
            Some(a) => self.count(
                "SELECT COUNT(*) AS n FROM recall_events WHERE at_ms >= ? AND agent_id = ?",
                vec![since_ms.into(), a.into()],
            ),
            None => self.count(
                "SELECT COUNT(*) AS n FROM recall_events WHERE at_ms >= ?",
                vec![since_ms.into()],
            ),
        }
    }

    /// The tags of the nodes an agent recalled since `since_ms`, each once
    /// per recall.
    pub fn recalled_tags_since(&self, since_ms: i64, agent_id: &str) -> SqlResult<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            tags: String,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT n.tags AS tags FROM recall_events e JOIN nodes n ON n.uri = e.uri WHERE e.at_ms >= ? AND e.agent_id = ?",
            vec![since_ms.into(), agent_id.into()],
        )?;
        Ok(rows
            .into_iter()
            .flat_map(|r| serde_json::from_str::<Vec<String>>(&r.tags).unwrap_or_default())
            .collect())
    }

    /// Drops recall events older than `before_ms` (the day counts stay).
    pub fn prune_recall_events(&self, before_ms: i64) -> SqlResult<()> {
        self.exec(
            "DELETE FROM recall_events WHERE at_ms < ?",
            vec![before_ms.into()],
        )?;
        Ok(())
    }

    // --- the outbox queue and write intents ---------------------------

    pub fn queue_event(&self, key: &str, due_ms: i64) -> SqlResult<()> {
        self.exec(
            "INSERT INTO outbox (key, due_ms) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET due_ms = excluded.due_ms",
            vec![key.into(), due_ms.into()],
        )?;
        Ok(())
    }

    pub fn unqueue_event(&self, key: &str) -> SqlResult<()> {
        self.exec("DELETE FROM outbox WHERE key = ?", vec![key.into()])?;
        Ok(())
    }

    /// The queued events due by `now`, oldest first.
    pub fn due_events(&self, now: i64, limit: u32) -> SqlResult<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            key: String,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT key FROM outbox WHERE due_ms <= ? ORDER BY due_ms, key LIMIT ?",
            vec![now.into(), i64::from(limit).into()],
        )?;
        Ok(rows.into_iter().map(|r| r.key).collect())
    }

    pub fn queued_events(&self) -> SqlResult<u64> {
        self.count("SELECT COUNT(*) AS n FROM outbox", vec![])
    }

    pub fn next_event_due(&self) -> SqlResult<Option<i64>> {
        #[derive(Deserialize)]
        struct Row {
            at: Option<f64>,
        }
        let rows: Vec<Row> = self.rows("SELECT MIN(due_ms) AS at FROM outbox", vec![])?;
        Ok(rows.into_iter().next().and_then(|r| r.at).map(|a| a as i64))
    }

    pub fn begin_write(&self, uri: &str) -> SqlResult<()> {
        self.mark_writing(uri, true)?;
        self.exec(
            "INSERT INTO writes (uri, started_ms) VALUES (?, ?) ON CONFLICT(uri) DO UPDATE SET started_ms = excluded.started_ms",
            vec![uri.into(), now_ms().into()],
        )?;
        Ok(())
    }

    /// A write that finished: its node is ACTIVE again. (One cut short
    /// stays PENDING until the repair job settles it.)
    pub fn end_write(&self, uri: &str) -> SqlResult<()> {
        self.mark_writing(uri, false)?;
        self.exec("DELETE FROM writes WHERE uri = ?", vec![uri.into()])?;
        Ok(())
    }

    pub fn oldest_write(&self) -> SqlResult<Option<i64>> {
        #[derive(Deserialize)]
        struct Row {
            at: Option<f64>,
        }
        let rows: Vec<Row> = self.rows("SELECT MIN(started_ms) AS at FROM writes", vec![])?;
        Ok(rows.into_iter().next().and_then(|r| r.at).map(|a| a as i64))
    }

    /// Writes begun before `before_ms` and never ended: cut by a crash.
    pub fn stale_writes(&self, before_ms: i64) -> SqlResult<Vec<String>> {
        #[derive(Deserialize)]
        struct Row {
            uri: String,
        }
        let rows: Vec<Row> = self.rows(
            "SELECT uri FROM writes WHERE started_ms < ?",
            vec![before_ms.into()],
        )?;
        Ok(rows.into_iter().map(|r| r.uri).collect())
    }
}

/// The index as the outbox consumer's sink: SQL only (vectors, which need
/// the network, are fetched by the object before it consumes an event).
pub struct SqlSink<'a> {
    pub store: &'a IndexStore,
    pub vectors: Vectors,
    pub tags: Vec<String>,
    pub version: i64,
    /// The node's meta's status when the event was taken.
    pub status: NodeStatus,
}

impl IndexSink for SqlSink<'_> {
    async fn apply(&self, event: &OutboxEvent, payload: &EventPayload) -> Result<(), String> {
        self.store.apply(
            event,
            payload,
            &self.tags,
            self.version,
            &self.vectors,
            self.status,
        )
    }
}
