//! Versioned schema migrations for a Durable Object's SQLite database,
//! shared by the gateway's objects and the channel Workers' objects.
#![cfg(target_arch = "wasm32")]

use worker::{SqlStorage, SqlStorageValue};

/// Applies the migrations not yet applied, in order. Migration `i` (0-based)
/// is schema version `i + 1`; each runs once, recorded in `_migrations`.
pub fn migrate(sql: &SqlStorage, migrations: &[&str], now_ms: i64) -> worker::Result<()> {
    apply(sql, migrations, None, now_ms)
}

/// As [`migrate`], but a new database (no migration applied yet) runs
/// `current` instead, the schema the migrations end at written as one
/// script, and is recorded at the last version: a new object makes its
/// tables in one step rather than replaying every `ALTER TABLE` since the
/// first (each rewrites the stored schema). `current` must build exactly
/// what the migrations build; its owner tests the two against each other.
pub fn migrate_or_create(
    sql: &SqlStorage,
    migrations: &[&str],
    current: &str,
    now_ms: i64,
) -> worker::Result<()> {
    apply(sql, migrations, Some(current), now_ms)
}

fn apply(
    sql: &SqlStorage,
    migrations: &[&str],
    current: Option<&str>,
    now_ms: i64,
) -> worker::Result<()> {
    sql.exec(
        "CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
        None,
    )?;
    #[derive(serde::Deserialize)]
    struct Version {
        v: Option<i64>,
    }
    let applied = sql
        .exec("SELECT MAX(version) AS v FROM _migrations", None)?
        .one::<Version>()?
        .v
        .unwrap_or(0);
    if let (0, Some(script), false) = (applied, current, migrations.is_empty()) {
        // The versions are integers written here, not input.
        let versions: Vec<String> = (1..=migrations.len())
            .map(|v| format!("({v}, {now_ms})"))
            .collect();
        sql.exec(
            &format!(
                "{};\nINSERT INTO _migrations (version, applied_at) VALUES {}",
                script.trim_end().trim_end_matches(';'),
                versions.join(", ")
            ),
            None,
        )?;
        return Ok(());
    }
    for (i, migration) in migrations.iter().enumerate() {
        let version = i as i64 + 1;
        if version > applied {
            sql.exec(migration, None)?;
            sql.exec(
                "INSERT INTO _migrations (version, applied_at) VALUES (?, ?)",
                vec![
                    SqlStorageValue::from(version),
                    SqlStorageValue::from(now_ms),
                ],
            )?;
        }
    }
    Ok(())
}
