//! The linked device's keys, Signal sessions and app state in the Durable
//! Object's SQLite: [`SqlBackend`] implements every storage trait of
//! `wacore` (`SignalStore`, `AppSyncStore`, `ProtocolStore`, `DeviceStore`,
//! `MsgSecretStore`, which together make `wacore::store::traits::Backend`)
//! over the [`sql::Sql`] seam, so it names no Worker type and its tests
//! run natively on `rusqlite`.
//!
//! `wacore::store::InMemoryBackend` is the reference semantics; the tests
//! run the same scenarios against both. The tables are in [`MIGRATIONS`],
//! all prefixed `wa_` (the object keeps other tables).
//!
//! Encoding: bytes are BLOBs, ids and timestamps INTEGERs, and a wacore
//! struct is spread over columns wherever its fields are plain (sync keys,
//! hash states, LID mappings, tc tokens, message secrets). Two are one
//! serialized column, in JSON (`serde_json`): the `Device` (thirty-odd
//! fields, more with each wacore release, every new one
//! `#[serde(default)]`, so a self-describing encoding reads an older row
//! without a migration; one row of 2–3 KB, written when the client
//! flushes) and a device list's `Vec<DeviceInfo>` (a few small integers per
//! device, the encoding wacore's own tests keep compatible). No compact
//! self-describing encoding (CBOR, MessagePack) is in the dependency tree;
//! wacore's only other one is protobuf, for its generated types.
//!
//! A `HashState` is a row plus its `index_value_map` in a side table, not a
//! blob: wacore leaves that map empty, so a version costs one small row.
//!
//! Every method runs its statements synchronously, without an `await` in
//! between, so a Durable Object commits a method's writes together. A batch
//! is one statement per [`MAX_PARAMS`] bound values. Nothing here logs, and
//! errors name columns and lengths, never values.

pub mod sql;

mod app_sync;
mod device;
mod msg_secret;
mod protocol;
mod schema;
mod signal;
#[cfg(test)]
mod tests;

pub use schema::MIGRATIONS;

use sql::{Sql, Value};
use wacore::store::error::{Result, StoreError};

/// A Durable Object's SQLite binds at most 100 parameters per statement.
pub const MAX_PARAMS: usize = 100;

/// The one device of the object (one linked number per Durable Object).
pub const DEVICE_ID: i32 = 1;

/// wacore's storage backend on a SQLite database.
///
/// `Send + Sync` whenever `S` is, as wacore's traits require.
pub struct SqlBackend<S> {
    sql: S,
}

impl<S: Sql> SqlBackend<S> {
    /// A backend on `sql`, whose schema is [`MIGRATIONS`] (applied by the
    /// caller).
    pub fn new(sql: S) -> Self {
        Self { sql }
    }

    /// The database underneath.
    pub fn sql(&self) -> &S {
        &self.sql
    }

    fn rows(&self, statement: &str, params: &[Value]) -> Result<Vec<Row>> {
        let rows = self
            .sql
            .query(statement, params)
            .map_err(|e| StoreError::Database(e.into()))?;
        Ok(rows.into_iter().map(Row).collect())
    }

    fn exec(&self, statement: &str, params: &[Value]) -> Result<()> {
        self.rows(statement, params).map(drop)
    }

    fn first(&self, statement: &str, params: &[Value]) -> Result<Option<Row>> {
        Ok(self.rows(statement, params)?.into_iter().next())
    }

    /// The number of rows a `… RETURNING 1` statement touched.
    fn count(&self, statement: &str, params: &[Value]) -> Result<u32> {
        let n = self.rows(statement, params)?.len();
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// Whether a `SELECT EXISTS (…)` is true.
    fn holds(&self, statement: &str, params: &[Value]) -> Result<bool> {
        match self.first(statement, params)? {
            Some(row) => Ok(row.int(0)? != 0),
            None => Ok(false),
        }
    }

    /// Runs `statement(n)` for each chunk of `n` items, so that none binds
    /// more than [`MAX_PARAMS`]: the `shared` values first (`?1`…), then
    /// `width` values per item, which `bind` pushes; the statement numbers
    /// the items' parameters on from `shared.len() + 1` (as [`tuples`] and
    /// [`list`] write them). Returns the rows of every chunk.
    fn chunked<T>(
        &self,
        shared: &[Value],
        items: &[T],
        width: usize,
        statement: impl Fn(usize) -> String,
        bind: impl Fn(&T, &mut Vec<Value>) -> Result<()>,
    ) -> Result<Vec<Row>> {
        let per_chunk = ((MAX_PARAMS - shared.len()) / width).max(1);
        let mut rows = Vec::new();
        for chunk in items.chunks(per_chunk) {
            let mut params = shared.to_vec();
            for item in chunk {
                bind(item, &mut params)?;
            }
            rows.extend(self.rows(&statement(chunk.len()), &params)?);
        }
        Ok(rows)
    }
}

/// `n` rows for a multi-row `VALUES`, each `(?1, …, ?shared, ?a, ?b, …)`:
/// the `shared` parameters, then `width` of the row's own, numbered on from
/// `?shared + 1`.
fn tuples(shared: usize, n: usize, width: usize) -> String {
    let head: Vec<String> = (1..=shared).map(|i| format!("?{i}")).collect();
    (0..n)
        .map(|row| {
            let own = (0..width).map(|j| format!("?{}", shared + 1 + row * width + j));
            let all: Vec<String> = head.iter().cloned().chain(own).collect();
            format!("({})", all.join(", "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `?a, ?b, …`: `n` parameters numbered on from `?shared + 1`, for an
/// `IN (…)` after `shared` other parameters.
fn list(shared: usize, n: usize) -> String {
    (shared + 1..=shared + n)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One row of a result, its values in column order.
struct Row(Vec<Value>);

impl Row {
    fn get(&self, i: usize) -> Result<&Value> {
        self.0
            .get(i)
            .ok_or_else(|| StoreError::Validation(format!("row has no column {i}")))
    }

    fn int(&self, i: usize) -> Result<i64> {
        match self.get(i)? {
            Value::Int(n) => Ok(*n),
            other => Err(mismatch(i, "INTEGER", other)),
        }
    }

    fn opt_int(&self, i: usize) -> Result<Option<i64>> {
        match self.get(i)? {
            Value::Null => Ok(None),
            _ => self.int(i).map(Some),
        }
    }

    fn u32(&self, i: usize) -> Result<u32> {
        let n = self.int(i)?;
        u32::try_from(n).map_err(|_| StoreError::Validation(format!("column {i} is not a u32")))
    }

    fn opt_u32(&self, i: usize) -> Result<Option<u32>> {
        match self.get(i)? {
            Value::Null => Ok(None),
            _ => self.u32(i).map(Some),
        }
    }

    fn u64(&self, i: usize) -> Result<u64> {
        let n = self.int(i)?;
        u64::try_from(n).map_err(|_| StoreError::Validation(format!("column {i} is not a u64")))
    }

    fn bool(&self, i: usize) -> Result<bool> {
        Ok(self.int(i)? != 0)
    }

    fn text(&self, i: usize) -> Result<String> {
        match self.get(i)? {
            Value::Text(s) => Ok(s.clone()),
            other => Err(mismatch(i, "TEXT", other)),
        }
    }

    fn opt_text(&self, i: usize) -> Result<Option<String>> {
        match self.get(i)? {
            Value::Null => Ok(None),
            _ => self.text(i).map(Some),
        }
    }

    fn blob(&self, i: usize) -> Result<Vec<u8>> {
        match self.get(i)? {
            Value::Blob(b) => Ok(b.clone()),
            other => Err(mismatch(i, "BLOB", other)),
        }
    }

    /// A BLOB of exactly `N` bytes.
    fn array<const N: usize>(&self, i: usize) -> Result<[u8; N]> {
        let bytes = self.blob(i)?;
        let len = bytes.len();
        bytes
            .try_into()
            .map_err(|_| StoreError::Validation(format!("column {i} has {len} bytes, not {N}")))
    }
}

/// A column of the wrong type; says which type, not what value.
fn mismatch(i: usize, expected: &str, got: &Value) -> StoreError {
    let got = match got {
        Value::Null => "NULL",
        Value::Int(_) => "INTEGER",
        Value::Real(_) => "REAL",
        Value::Text(_) => "TEXT",
        Value::Blob(_) => "BLOB",
    };
    StoreError::Validation(format!("column {i} is {got}, not {expected}"))
}

/// A JSON column; the error says where, never what.
fn from_json<T: serde::de::DeserializeOwned>(what: &str, json: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| {
        StoreError::Validation(format!(
            "{what}: unreadable JSON ({:?} at column {})",
            e.classify(),
            e.column()
        ))
    })
}

fn to_json<T: serde::Serialize>(what: &str, value: &T) -> Result<Value> {
    serde_json::to_string(value).map(Value::Text).map_err(|e| {
        StoreError::Validation(format!("{what}: not serializable ({:?})", e.classify()))
    })
}

/// A `u64` as SQLite's signed INTEGER.
fn int_u64(what: &str, n: u64) -> Result<Value> {
    i64::try_from(n)
        .map(Value::Int)
        .map_err(|_| StoreError::Validation(format!("{what} exceeds i64")))
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Text(s)
    }
}

impl From<&[u8]> for Value {
    fn from(b: &[u8]) -> Self {
        Value::Blob(b.to_vec())
    }
}

impl From<Vec<u8>> for Value {
    fn from(b: Vec<u8>) -> Self {
        Value::Blob(b)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Int(n)
    }
}

impl From<u32> for Value {
    fn from(n: u32) -> Self {
        Value::Int(i64::from(n))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Int(i64::from(b))
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}
