//! The gsv gateway: a Cloudflare Worker with a Gateway Durable Object
//! (connections, config, routing) and one Session Durable Object per
//! conversation (history and the agent loop).
//!
//! Decisions live in plain modules that compile natively and are unit
//! tested with `cargo test`; the Worker shells in `worker/` only do I/O.

pub mod agent_tools;
pub mod archive;
pub mod calls;
pub mod channels;
pub mod commands;
pub mod config;
pub mod gateway;
pub mod identity;
pub mod llm;
pub mod media;
pub mod memory;
pub mod prompt;
pub mod routing;
pub mod schedule;
pub mod selfreport;
pub mod session;
pub mod skills;
pub mod storage;
pub mod time;
pub mod trust;
pub mod usage;
pub mod workspace;

#[cfg(target_arch = "wasm32")]
mod worker;
