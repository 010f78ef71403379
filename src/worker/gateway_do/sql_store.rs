//! What the Gateway's stores (the channel plane's, the scheduler's, the
//! node registry's) do the same way over their object's SQLite: run a
//! statement, read rows into types, count. A store implements [`SqlStore`]
//! by handing out its `SqlStorage`; failures are the gateway's internal
//! errors.

use crate::worker::rpc::internal_error;
use gsv_protocol::ErrorShape;
use serde::{de::DeserializeOwned, Deserialize};
use worker::{SqlCursor, SqlStorage, SqlStorageValue};

type Res<T> = std::result::Result<T, ErrorShape>;

pub(in crate::worker::gateway_do) trait SqlStore {
    fn sql(&self) -> &SqlStorage;

    fn exec(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Res<SqlCursor> {
        self.sql().exec(query, bindings).map_err(internal_error)
    }

    /// A statement whose rows, if any, are not wanted.
    fn run(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Res<()> {
        self.exec(query, bindings).map(|_| ())
    }

    fn rows<T: DeserializeOwned>(&self, query: &str, b: Vec<SqlStorageValue>) -> Res<Vec<T>> {
        self.exec(query, b)?.to_array().map_err(internal_error)
    }

    fn first<T: DeserializeOwned>(&self, query: &str, b: Vec<SqlStorageValue>) -> Res<Option<T>> {
        Ok(self.rows(query, b)?.into_iter().next())
    }

    /// The column `n` of the first row (0 without one).
    fn count(&self, query: &str, b: Vec<SqlStorageValue>) -> Res<i64> {
        #[derive(Deserialize)]
        struct N {
            n: i64,
        }
        Ok(self.first::<N>(query, b)?.map_or(0, |r| r.n))
    }
}
