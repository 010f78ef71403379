//! Session decisions: what a run needs to know, what the session stores,
//! the messages between the Gateway and Session objects, and how streamed
//! text is batched. The Session DO (`worker::session_do`) does the I/O.

pub mod coalesce;
pub mod compaction;
pub mod early_call;
pub mod error;
pub mod fallback;
pub mod internal;
pub mod link;
pub mod memory;
pub mod meta;
pub mod model_check;
pub mod patch;
pub mod reset;
pub mod run;
pub mod run_config;
pub mod schema;
pub mod tools;
pub mod transcript;
