//! The store's SQL seam (`crate::store::sql::Sql`) on the object's own
//! SQLite.

use crate::store::sql::{Sql, Value};
use worker::{SqlStorage, SqlStorageValue};

pub struct ObjectSql(pub SqlStorage);

// A Worker has one thread; the storage never leaves it.
unsafe impl Send for ObjectSql {}
unsafe impl Sync for ObjectSql {}

impl Sql for ObjectSql {
    fn query(&self, sql: &str, params: &[Value]) -> anyhow::Result<Vec<Vec<Value>>> {
        log::trace!("sql: {sql}");
        let bindings = params.iter().map(to_js).collect::<Vec<_>>();
        let cursor = self
            .0
            .exec(sql, bindings)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        cursor
            .raw()
            .map(|row| {
                row.map(|values| values.into_iter().map(from_js).collect())
                    .map_err(|e| anyhow::anyhow!("{e}"))
            })
            .collect()
    }
}

fn to_js(v: &Value) -> SqlStorageValue {
    match v {
        Value::Null => SqlStorageValue::Null,
        Value::Int(i) => SqlStorageValue::Integer(*i),
        Value::Real(f) => SqlStorageValue::Float(*f),
        Value::Text(s) => SqlStorageValue::String(s.clone()),
        Value::Blob(b) => SqlStorageValue::Blob(b.clone()),
    }
}

fn from_js(v: SqlStorageValue) -> Value {
    match v {
        SqlStorageValue::Null => Value::Null,
        SqlStorageValue::Boolean(b) => Value::Int(b.into()),
        SqlStorageValue::Integer(i) => Value::Int(i),
        SqlStorageValue::Float(f) => Value::Real(f),
        SqlStorageValue::String(s) => Value::Text(s),
        SqlStorageValue::Blob(b) => Value::Blob(b),
    }
}
