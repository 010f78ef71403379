use super::*;
use rusqlite::Connection;

/// A database as an object that has lived through every migration has it.
fn migrated() -> Connection {
    let db = Connection::open_in_memory().unwrap();
    for migration in MIGRATIONS {
        db.execute_batch(migration).unwrap();
    }
    db
}

/// A database as a new object makes it.
fn created() -> Connection {
    let db = Connection::open_in_memory().unwrap();
    db.execute_batch(CURRENT).unwrap();
    db
}

/// The statement as SQLite keeps it, spaced one way: an `ALTER TABLE`
/// splices its column into the stored text where it was written.
fn normalized(sql: &str) -> String {
    let one_space = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    ["(", ")", ","].iter().fold(one_space, |s, p| {
        s.replace(&format!(" {p}"), p).replace(&format!("{p} "), p)
    })
}

/// Every object of the schema: (type, name, table, statement), and for each
/// table its columns and indexes as SQLite reads them.
fn schema(db: &Connection) -> Vec<String> {
    let mut objects: Vec<(String, String, String, Option<String>)> = db
        .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // Each table, then its indexes.
    objects.sort_by(|a, b| (&a.2, a.0 != "table", &a.1).cmp(&(&b.2, b.0 != "table", &b.1)));
    let mut out = Vec::new();
    for (kind, name, table, sql) in objects {
        out.push(format!(
            "{kind} {name} on {table}: {}",
            sql.as_deref().map(normalized).unwrap_or_default()
        ));
        if kind != "table" {
            continue;
        }
        for pragma in ["table_xinfo", "index_list"] {
            let mut st = db
                .prepare(&format!("SELECT * FROM pragma_{pragma}(?1)"))
                .unwrap();
            let columns = st.column_count();
            let rows = st
                .query_map([&name], |r| {
                    (0..columns)
                        .map(|i| {
                            r.get::<_, rusqlite::types::Value>(i)
                                .map(|v| format!("{v:?}"))
                        })
                        .collect::<Result<Vec<_>, _>>()
                })
                .unwrap()
                .map(Result::unwrap);
            out.extend(rows.map(|row| format!("  {pragma}: {}", row.join(" | "))));
        }
    }
    out
}

#[test]
fn a_new_database_is_the_one_the_migrations_build() {
    let migrated = schema(&migrated());
    assert_eq!(schema(&created()), migrated);
    // Not vacuous: every object is read, implicit indexes included.
    let objects: Vec<&str> = migrated
        .iter()
        .filter(|l| !l.starts_with(' '))
        .map(|l| l.split(':').next().unwrap_or_default())
        .collect();
    assert_eq!(
        objects,
        [
            "table current_run on current_run",
            "table deadlines on deadlines",
            "index sqlite_autoindex_deadlines_1 on deadlines",
            "table kept_prompts on kept_prompts",
            "index sqlite_autoindex_kept_prompts_1 on kept_prompts",
            "table messages on messages",
            "table meta on meta",
            "table reset_plan on reset_plan",
            "table run_outcomes on run_outcomes",
            "index sqlite_autoindex_run_outcomes_1 on run_outcomes",
            "table run_queue on run_queue",
            "table seen_exec_events on seen_exec_events",
            "index sqlite_autoindex_seen_exec_events_1 on seen_exec_events",
            "table snapshots on snapshots",
            "index sqlite_autoindex_snapshots_1 on snapshots",
            "table sqlite_sequence on sqlite_sequence",
            "table taken_messages on taken_messages",
            "index sqlite_autoindex_taken_messages_1 on taken_messages",
            "table tool_calls on tool_calls",
            "index sqlite_autoindex_tool_calls_1 on tool_calls",
            "table usage_days on usage_days",
            "index sqlite_autoindex_usage_days_1 on usage_days",
        ]
    );
    assert!(migrated.iter().any(|l| l.contains("prompt_rev")));
}

#[test]
fn a_different_schema_is_told_apart() {
    // The comparison sees a column's default, and a constraint only the
    // statement's text holds.
    let without_default = CURRENT.replace(
        "dispatched INTEGER NOT NULL DEFAULT 0",
        "dispatched INTEGER NOT NULL",
    );
    let without_check = CURRENT.replacen(" CHECK (id = 1), data", ", data", 1);
    for changed in [without_default, without_check] {
        assert_ne!(changed, CURRENT);
        let db = Connection::open_in_memory().unwrap();
        db.execute_batch(&changed).unwrap();
        assert_ne!(schema(&db), schema(&migrated()));
    }
}
