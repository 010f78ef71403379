//! Long-term memory: categorized memory nodes stored in the object store
//! as the AGFS directory spec lays them out (`accounts/{account}/…`),
//! each with three layers (L0 abstract, L1 overview, L2 content), a meta
//! that commits it, and an outbox that feeds the search index.
//!
//! Everything here is plain Rust over [`crate::storage::ObjectStore`]:
//! the memory index Durable Object is the shell that runs it on R2 and
//! keeps the FTS index in SQLite.

pub mod access;
pub mod calls;
pub mod dream;
pub mod extracted;
pub mod fs;
pub mod node;
pub mod ops;
pub mod outbox;
pub mod recall;
pub mod repair;
pub mod search;
pub mod settings;
pub mod tools;
pub mod uri;

#[cfg(test)]
mod tests;

use crate::storage::StoreError;
use std::fmt;

/// Time and fresh ids, from the platform (JS clock and crypto in the
/// Worker; fixed values in tests).
pub trait MemoryEnv {
    fn now_ms(&self) -> i64;
    /// A new UUID for an outbox event.
    fn new_id(&self) -> String;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryError {
    Uri(uri::UriError),
    /// A call for another account than the caller's.
    Denied {
        account: String,
    },
    Store(StoreError),
    /// A stored file that cannot be read as what it should be.
    Corrupt {
        key: String,
        reason: String,
    },
    /// Test-only: a write stopped at its fault-injection point.
    #[cfg(test)]
    Stopped(fs::WriteStep),
}

impl fmt::Display for MemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Uri(e) => e.fmt(f),
            Self::Denied { account } => write!(
                f,
                "access denied: account {account:?} is not this request's account"
            ),
            Self::Store(e) => write!(f, "memory store: {e}"),
            Self::Corrupt { key, reason } => write!(f, "{key} is unreadable: {reason}"),
            #[cfg(test)]
            Self::Stopped(step) => write!(f, "stopped after {step:?}"),
        }
    }
}

impl std::error::Error for MemoryError {}

impl From<StoreError> for MemoryError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<uri::UriError> for MemoryError {
    fn from(e: uri::UriError) -> Self {
        Self::Uri(e)
    }
}
