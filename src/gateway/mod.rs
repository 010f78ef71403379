//! Gateway decisions: frame intake, authentication, who may call what, and
//! the handshake answer. The Gateway DO (`worker::gateway_do`) calls these.

pub mod auth;
pub mod intake;
pub mod methods;
pub mod nodes;
pub mod transfer;
