//! The gsv WhatsApp channel: a Worker on the WhatsApp Business Cloud API.
//! Meta posts every message and delivery receipt to its webhook; one
//! `WhatsAppAccount` Durable Object per business phone number takes them
//! (once each: Meta redelivers), hands them to the gateway, and sends the
//! agent's answers through the Graph API.
//!
//! The decisions are plain Rust, tested natively: the webhook's checks and
//! payloads (`webhook`), message normalization (`inbound`), phone numbers
//! (`phone`), Graph requests and their answers (`graph`), an account's
//! state (`account`) and a send whose answer was lost (`lost_send`). `worker` (wasm32 only) is the shell that performs them.

pub mod account;
pub mod graph;
pub mod inbound;
pub mod lost_send;
pub mod phone;
pub mod webhook;

#[cfg(target_arch = "wasm32")]
mod worker;

/// The channel's name on the wire (`ChannelInboundParams::channel`).
pub const CHANNEL_ID: &str = "whatsapp";
