//! The one seam between the store and a SQLite database: run a statement
//! with positional parameters (`?1`, `?2`, …) and get its rows back, each
//! a list of values in column order. A Durable Object's `SqlStorage`
//! implements it in the Worker; tests use `rusqlite` natively.
//!
//! Statements run one at a time and synchronously; a Durable Object
//! commits the writes of one event together, so a batch written without an
//! `await` in between lands whole.

/// A SQLite value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// A database the store can run statements on.
pub trait Sql {
    /// Runs one statement; the rows it returns (none for writes).
    fn query(&self, sql: &str, params: &[Value]) -> anyhow::Result<Vec<Vec<Value>>>;
}
