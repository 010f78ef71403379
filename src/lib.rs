//! The gsv gateway: a Cloudflare Worker with a Gateway Durable Object
//! (connections, config, routing) and one Session Durable Object per
//! conversation (history and the agent loop).
//!
//! Decisions live in plain modules that compile natively and are unit
//! tested with `cargo test`; the Worker shells in `worker/` only do I/O.

pub mod archive;
pub mod config;
pub mod gateway;
pub mod llm;
pub mod routing;
pub mod session;
pub mod time;

#[cfg(target_arch = "wasm32")]
mod worker;
