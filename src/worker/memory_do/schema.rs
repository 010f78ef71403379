//! The memory index object's SQLite schema: numbered migrations, run once
//! each in the constructor (`gsv_worker_sql::migrate`).

pub const MIGRATIONS: &[&str] = &["
    CREATE TABLE nodes (uri TEXT PRIMARY KEY, owner_space TEXT NOT NULL, category TEXT NOT NULL,
        abstract TEXT NOT NULL, tags TEXT NOT NULL, version INTEGER NOT NULL, updated_ms INTEGER NOT NULL);
    CREATE INDEX nodes_by_space ON nodes (owner_space, category);
    CREATE VIRTUAL TABLE records USING fts5(text, uri UNINDEXED, level UNINDEXED,
        owner_space UNINDEXED, category UNINDEXED, tokenize = 'porter unicode61');
    CREATE TABLE vectors (uri TEXT NOT NULL, level INTEGER NOT NULL, owner_space TEXT NOT NULL,
        category TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (uri, level));
    CREATE TABLE recall_days (uri TEXT NOT NULL, day TEXT NOT NULL, hits INTEGER NOT NULL,
        last_ms INTEGER NOT NULL, PRIMARY KEY (uri, day));
    CREATE TABLE recall_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, at_ms INTEGER NOT NULL,
        uri TEXT NOT NULL, agent_id TEXT NOT NULL);
    CREATE INDEX recall_events_by_time ON recall_events (at_ms);
    CREATE TABLE promoted (uri TEXT NOT NULL, agent_id TEXT NOT NULL, at_ms INTEGER NOT NULL,
        PRIMARY KEY (uri, agent_id));
    CREATE TABLE dreams (seq INTEGER PRIMARY KEY AUTOINCREMENT, agent_id TEXT NOT NULL,
        at_ms INTEGER NOT NULL, considered INTEGER NOT NULL, promoted INTEGER NOT NULL);
    CREATE TABLE outbox (key TEXT PRIMARY KEY, due_ms INTEGER NOT NULL);
    CREATE TABLE writes (uri TEXT PRIMARY KEY, started_ms INTEGER NOT NULL);
    CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
", "
    -- A node's status as last known (its events, the write path, the
    -- repair job, a retrieval that read its meta): only ACTIVE ones are
    -- retrieved. A BROKEN node's row lists the files it misses (JSON).
    ALTER TABLE nodes ADD COLUMN status TEXT NOT NULL DEFAULT 'ACTIVE';
    ALTER TABLE nodes ADD COLUMN missing TEXT NOT NULL DEFAULT '[]';
"];
