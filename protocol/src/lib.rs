//! Protocol v1 wire types shared by the gateway, the `gsv` CLI and the channels.
//!
//! Everything here is plain serde: no Worker types, so every consumer (wasm or
//! native) compiles it. Field names are camelCase on the wire.

pub mod channel_key;
pub mod channel_rpc;
pub mod channels;
pub mod cron;
pub mod dates;
pub mod fault;
pub mod frames;
mod inbound_wire;
pub mod logs;
pub mod memory;
pub mod messages;
pub mod methods;
pub mod model_check;
pub mod nodes;
pub mod requests;
pub mod skills;
pub mod trust;
#[cfg(feature = "ts")]
pub mod ts;
pub mod usage;

pub use channel_rpc::*;
pub use cron::*;
pub use frames::*;
pub use logs::*;
pub use memory::*;
pub use messages::*;
pub use methods::*;
pub use model_check::*;
pub use nodes::*;
pub use requests::*;
pub use skills::*;
pub use trust::*;
pub use usage::*;

/// The only protocol version this gateway speaks.
pub const PROTOCOL_VERSION: u32 = 1;

/// Frames larger than this are refused with an error response.
pub const MAX_FRAME_BYTES: usize = 1024 * 1024;
