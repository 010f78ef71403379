//! Gateway decisions: frame intake, authentication, nodes and transfers.
//! The Gateway DO (`worker::gateway_do`) calls these; who may call which
//! method is in the protocol's method table (`gsv_protocol::METHODS`).

pub mod auth;
pub mod intake;
pub mod logs;
pub mod nodes;
pub mod touches;
pub mod transfer;
