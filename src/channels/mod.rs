//! Chat apps as the agent's senses: the decisions the gateway makes about
//! a channel message, in plain Rust. Who may reach the agent (`access`),
//! pairing unknown senders (`pairing`), how a message is shown to the model
//! (`envelope`) and how an answer is split for the platform (`chunk`). The
//! Worker shell (`worker::gateway_do`) does the I/O.

pub mod access;
pub mod chunk;
pub mod delivery;
pub mod envelope;
pub mod message_tool;
pub mod pairing;
pub mod run_check;
