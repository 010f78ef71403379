//! The store's tests, on a real SQLite (`rusqlite`) behind the `Sql` seam.
//!
//! Most run one scenario against `InMemoryBackend`, wacore's reference, and
//! against `SqlBackend`, and assert both observe the same whole values
//! (`differential!`) as well as the values expected.

mod app_sync;
mod device;
mod msg_secret;
mod protocol;
mod schema;
mod signal;

use std::future::Future;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use rusqlite::types::{Value as SqliteValue, ValueRef};

use super::sql::{Sql, Value};
use super::{SqlBackend, MAX_PARAMS, MIGRATIONS};

/// A SQLite connection as the store sees a Durable Object's: one statement
/// per call, at most `MAX_PARAMS` parameters.
pub struct Sqlite(Mutex<rusqlite::Connection>);

impl Sqlite {
    /// A new in-memory database with the store's schema.
    pub fn migrated() -> Self {
        let db = Sqlite(Mutex::new(
            rusqlite::Connection::open_in_memory().expect("open"),
        ));
        db.migrate(MIGRATIONS);
        db
    }

    /// As `gsv_worker_sql::migrate`: each migration not yet recorded in
    /// `_migrations` runs once, as one script (which may hold several
    /// statements, as a Durable Object's `sql.exec` allows).
    pub fn migrate(&self, migrations: &[&str]) {
        self.query(
            "CREATE TABLE IF NOT EXISTS _migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)",
            &[],
        )
        .expect("_migrations");
        let applied = match self
            .query("SELECT IFNULL(MAX(version), 0) FROM _migrations", &[])
            .expect("version")[0][0]
        {
            Value::Int(v) => v,
            ref other => panic!("version is {other:?}"),
        };
        for (i, script) in migrations.iter().enumerate() {
            let version = i as i64 + 1;
            if version > applied {
                self.0
                    .lock()
                    .expect("lock")
                    .execute_batch(script)
                    .expect("migration");
                self.query(
                    "INSERT INTO _migrations (version, applied_at) VALUES (?1, 0)",
                    &[Value::Int(version)],
                )
                .expect("record migration");
            }
        }
    }
}

impl Sql for Sqlite {
    fn query(&self, sql: &str, params: &[Value]) -> anyhow::Result<Vec<Vec<Value>>> {
        anyhow::ensure!(
            params.len() <= MAX_PARAMS,
            "{} parameters bound, a Durable Object allows {MAX_PARAMS}",
            params.len()
        );
        let db = self.0.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
        let mut statement = db.prepare(sql)?;
        let params: Vec<SqliteValue> = params.iter().map(to_sqlite).collect();
        let columns = statement.column_count();
        let mut rows = statement.query(rusqlite::params_from_iter(params))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(
                (0..columns)
                    .map(|i| row.get_ref(i).map(from_sqlite))
                    .collect::<rusqlite::Result<_>>()?,
            );
        }
        Ok(out)
    }
}

fn to_sqlite(value: &Value) -> SqliteValue {
    match value {
        Value::Null => SqliteValue::Null,
        Value::Int(n) => SqliteValue::Integer(*n),
        Value::Real(x) => SqliteValue::Real(*x),
        Value::Text(s) => SqliteValue::Text(s.clone()),
        Value::Blob(b) => SqliteValue::Blob(b.clone()),
    }
}

fn from_sqlite(value: ValueRef<'_>) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(n) => Value::Int(n),
        ValueRef::Real(x) => Value::Real(x),
        // A TEXT column is UTF-8 here; lossy only if something else wrote it.
        ValueRef::Text(s) => Value::Text(String::from_utf8_lossy(s).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

/// A store on a fresh, migrated database.
pub fn backend() -> SqlBackend<Sqlite> {
    SqlBackend::new(Sqlite::migrated())
}

/// Polls `future` to completion. Neither backend ever waits (no I/O, no
/// contended lock), so one poll is enough.
pub fn run<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("a store method waited"),
    }
}

/// Runs the async `scenario(&backend)` on a fresh `InMemoryBackend` and a
/// fresh `SqlBackend`, asserts both observed the same, and returns it.
macro_rules! differential {
    ($scenario:expr) => {{
        let reference =
            $crate::store::tests::run($scenario(&wacore::store::InMemoryBackend::new()));
        let ours = $crate::store::tests::run($scenario(&$crate::store::tests::backend()));
        assert_eq!(ours, reference, "SqlBackend and InMemoryBackend differ");
        ours
    }};
}
pub(crate) use differential;
