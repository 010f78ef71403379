//! The gsv Discord channel: a Worker with one `DiscordGateway` Durable
//! Object per bot account, speaking Discord's gateway (v10, JSON) and REST,
//! and the gateway's channel contract (`gsv_protocol::channels`).
//!
//! The decisions are plain Rust, tested natively: the gateway session
//! (`gateway`), message normalization (`inbound`), REST requests and their
//! retries (`rest`). The channel key is the contract's
//! (`gsv_protocol::channel_key`). `worker` (wasm32 only) is the shell that
//! performs them.

pub mod gateway;
pub mod inbound;
pub mod rest;

#[cfg(target_arch = "wasm32")]
mod worker;

/// The channel's name on the wire (`ChannelInboundParams::channel`).
pub const CHANNEL_ID: &str = "discord";
