//! The `workspace.*` methods over R2: `crate::workspace::methods`, whose
//! store here is the `STORAGE` bucket.

pub use crate::workspace::methods::{agent, delete, list, read, write};
