//! The gsv WhatsApp Web channel: a Worker that links the user's own
//! WhatsApp number as a companion device (a QR code scanned once, or a
//! pairing code typed on the phone), as WhatsApp Web does, so the agent
//! chats from that number and may speak first: no business account and no
//! 24-hour window. One `WhatsAppWebAccount` Durable Object per linked
//! number holds the socket and the keys.
//!
//! The protocol (Noise, binary nodes, Signal sessions, app state, media
//! crypto) is the `whatsapp-rust` crate's; this crate gives it what a
//! Worker has: its keys and sessions in the object's SQLite (`store`).

pub mod account;
pub mod inbound;
pub mod outbound;
pub mod qr;
pub mod store;

#[cfg(target_arch = "wasm32")]
mod worker;

pub use outbound::capabilities;

/// The channel's name on the wire (`ChannelInboundParams::channel`).
pub const CHANNEL_ID: &str = "whatsapp-web";
