//! Versioned schema migrations for a Durable Object's SQLite database,
//! shared by the gateway's objects and the channel Workers' objects.
#![cfg(target_arch = "wasm32")]

use worker::{SqlStorage, SqlStorageValue};

/// Applies the migrations not yet applied, in order. Migration `i` (0-based)
/// is schema version `i + 1`; each runs once, recorded in `_migrations`.
pub fn migrate(sql: &SqlStorage, migrations: &[&str], now_ms: i64) -> worker::Result<()> {
    sql.exec(
        "CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
        None,
    )?;
    #[derive(serde::Deserialize)]
    struct Version {
        v: Option<i64>,
    }
    let current = sql
        .exec("SELECT MAX(version) AS v FROM _migrations", None)?
        .one::<Version>()?
        .v
        .unwrap_or(0);
    for (i, migration) in migrations.iter().enumerate() {
        let version = i as i64 + 1;
        if version > current {
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
