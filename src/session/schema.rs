//! The Session object's SQLite schema: numbered migrations, run once each
//! in the object's constructor, and the schema they end at written in one
//! piece, which a new object runs instead (`gsv_worker_sql::migrate_or_create`).
//!
//! A new migration changes `CURRENT` too, to the schema SQLite keeps after
//! it; the test beside this file fails until the two build the same thing.

pub const MIGRATIONS: &[&str] = &["
    CREATE TABLE messages (idx INTEGER PRIMARY KEY, role TEXT NOT NULL, data TEXT NOT NULL, timestamp INTEGER NOT NULL);
    CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 1), data TEXT NOT NULL, config TEXT NOT NULL);
    CREATE TABLE run_queue (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, message TEXT NOT NULL, queued_at INTEGER NOT NULL);
    CREATE TABLE current_run (id INTEGER PRIMARY KEY CHECK (id = 1), run_id TEXT NOT NULL, first_idx INTEGER NOT NULL,
        started_at INTEGER NOT NULL, usage TEXT NOT NULL, iterations INTEGER NOT NULL DEFAULT 0, resumes INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE deadlines (kind TEXT PRIMARY KEY, at_ms INTEGER NOT NULL);
",
    // A reset in progress (one row): its plan, rewritten after every step.
    "CREATE TABLE reset_plan (id INTEGER PRIMARY KEY CHECK (id = 1), plan TEXT NOT NULL)",
    // The current turn's tool calls (results stored as they arrive), the
    // background-command events already queued, and the node tools and
    // hosts known at the last message.
    "CREATE TABLE tool_calls (seq INTEGER PRIMARY KEY, call_id TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
        args TEXT NOT NULL, dispatched INTEGER NOT NULL DEFAULT 0, result TEXT);
     CREATE TABLE seen_exec_events (event_id TEXT PRIMARY KEY, seen_at INTEGER NOT NULL);
     ALTER TABLE meta ADD COLUMN nodes TEXT NOT NULL DEFAULT '{}'",
    // The assembled prompt of a run waiting on tools, so the run resumes
    // with it instead of reading the workspace again.
    "ALTER TABLE current_run ADD COLUMN prompt TEXT",
    // A message's inline directives (for its run only), and the mark of a
    // message that must first reset the session (its reset policy was due).
    "ALTER TABLE run_queue ADD COLUMN overrides TEXT;
     ALTER TABLE run_queue ADD COLUMN reset_first INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE current_run ADD COLUMN overrides TEXT",
    // The chat app a message came from (its run's prompt says so).
    "ALTER TABLE run_queue ADD COLUMN channel TEXT;
     ALTER TABLE current_run ADD COLUMN channel TEXT",
    // How deep in a chain of gsv__SessionSend a message is (0: a person's),
    // so the run it starts knows whether it may send on.
    "ALTER TABLE run_queue ADD COLUMN send_depth INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE current_run ADD COLUMN send_depth INTEGER NOT NULL DEFAULT 0",
    // Whose long-term memory a message's run may read and write (the
    // person who wrote it; none in a group), and its text as written,
    // without the chat envelope, which recall searches on.
    "ALTER TABLE run_queue ADD COLUMN person TEXT;
     ALTER TABLE run_queue ADD COLUMN plain TEXT;
     ALTER TABLE current_run ADD COLUMN person TEXT;
     ALTER TABLE current_run ADD COLUMN plain TEXT",
    // A message's attachments (`crate::media::Attached` JSON), kept in R2.
    "ALTER TABLE run_queue ADD COLUMN media TEXT",
    // The revisions of the config and node snapshot stored in `meta`, so
    // messages may name them instead of carrying them.
    "ALTER TABLE meta ADD COLUMN config_rev TEXT NOT NULL DEFAULT '';
     ALTER TABLE meta ADD COLUMN nodes_rev TEXT NOT NULL DEFAULT ''",
    // The config and the node snapshot in a table of their own, by kind:
    // the meta row, written every turn, no longer carries them along.
    "CREATE TABLE snapshots (kind TEXT PRIMARY KEY, rev TEXT NOT NULL, body TEXT NOT NULL);
     INSERT INTO snapshots (kind, rev, body) SELECT 'config', config_rev, config FROM meta;
     INSERT INTO snapshots (kind, rev, body) SELECT 'nodes', nodes_rev, nodes FROM meta;
     UPDATE meta SET config = '{}', config_rev = '', nodes = '{}', nodes_rev = ''",
    // A waiting run's prompt in a table of its own, by revision: it is
    // written once per prompt, not once per wait, and the run row (updated
    // as the run goes) no longer carries it. The old column is still read.
    "CREATE TABLE kept_prompts (rev TEXT PRIMARY KEY, body TEXT NOT NULL);
     ALTER TABLE current_run ADD COLUMN prompt_rev TEXT",
    // Who spoke (`Trust` JSON): what the run's model is offered and may
    // call, decided by the gateway.
    "ALTER TABLE run_queue ADD COLUMN trust TEXT;
     ALTER TABLE current_run ADD COLUMN trust TEXT",
    // A call of an `ask` tool the owner approved: run like any other.
    "ALTER TABLE tool_calls ADD COLUMN approved INTEGER NOT NULL DEFAULT 0",
    // Chat messages taken (by the gateway's inbound id) with the answer
    // each was given, and how each run from a chat ended: a retried
    // hand-over runs nothing twice, and an answer whose event was missed
    // can be asked for.
    "CREATE TABLE taken_messages (key TEXT PRIMARY KEY, run_id TEXT NOT NULL, reply TEXT NOT NULL, taken_at INTEGER NOT NULL);
     CREATE TABLE run_outcomes (run_id TEXT PRIMARY KEY, event TEXT NOT NULL, ended_at INTEGER NOT NULL)",
    // Tokens and their estimated cost per day (the user's), kept across
    // resets: what the session cost, day by day (`usage.daily`).
    "CREATE TABLE usage_days (day TEXT PRIMARY KEY, input INTEGER NOT NULL, output INTEGER NOT NULL,
        cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL, total INTEGER NOT NULL, cost REAL)",
];

/// What the migrations build, as one script: a new Session's database is
/// made in one step instead of sixteen (most of them `ALTER TABLE`s, each
/// rewriting the stored schema). Columns no longer used (`meta.config`,
/// `nodes` and their revisions, `current_run.prompt`) are kept, so that a
/// new database and a migrated one are the same.
pub const CURRENT: &str = "
    CREATE TABLE messages (idx INTEGER PRIMARY KEY, role TEXT NOT NULL, data TEXT NOT NULL, timestamp INTEGER NOT NULL);
    CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 1), data TEXT NOT NULL, config TEXT NOT NULL,
        nodes TEXT NOT NULL DEFAULT '{}', config_rev TEXT NOT NULL DEFAULT '', nodes_rev TEXT NOT NULL DEFAULT '');
    CREATE TABLE run_queue (seq INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, message TEXT NOT NULL,
        queued_at INTEGER NOT NULL, overrides TEXT, reset_first INTEGER NOT NULL DEFAULT 0, channel TEXT,
        send_depth INTEGER NOT NULL DEFAULT 0, person TEXT, plain TEXT, media TEXT, trust TEXT);
    CREATE TABLE current_run (id INTEGER PRIMARY KEY CHECK (id = 1), run_id TEXT NOT NULL, first_idx INTEGER NOT NULL,
        started_at INTEGER NOT NULL, usage TEXT NOT NULL, iterations INTEGER NOT NULL DEFAULT 0,
        resumes INTEGER NOT NULL DEFAULT 0, prompt TEXT, overrides TEXT, channel TEXT,
        send_depth INTEGER NOT NULL DEFAULT 0, person TEXT, plain TEXT, prompt_rev TEXT, trust TEXT);
    CREATE TABLE deadlines (kind TEXT PRIMARY KEY, at_ms INTEGER NOT NULL);
    CREATE TABLE reset_plan (id INTEGER PRIMARY KEY CHECK (id = 1), plan TEXT NOT NULL);
    CREATE TABLE tool_calls (seq INTEGER PRIMARY KEY, call_id TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
        args TEXT NOT NULL, dispatched INTEGER NOT NULL DEFAULT 0, result TEXT,
        approved INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE seen_exec_events (event_id TEXT PRIMARY KEY, seen_at INTEGER NOT NULL);
    CREATE TABLE snapshots (kind TEXT PRIMARY KEY, rev TEXT NOT NULL, body TEXT NOT NULL);
    CREATE TABLE kept_prompts (rev TEXT PRIMARY KEY, body TEXT NOT NULL);
    CREATE TABLE taken_messages (key TEXT PRIMARY KEY, run_id TEXT NOT NULL, reply TEXT NOT NULL, taken_at INTEGER NOT NULL);
    CREATE TABLE run_outcomes (run_id TEXT PRIMARY KEY, event TEXT NOT NULL, ended_at INTEGER NOT NULL);
    CREATE TABLE usage_days (day TEXT PRIMARY KEY, input INTEGER NOT NULL, output INTEGER NOT NULL,
        cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL, total INTEGER NOT NULL, cost REAL)
";

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
