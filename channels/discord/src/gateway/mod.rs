//! Discord's gateway: payload types, close codes, the session machine.

pub mod close;
pub mod io;
pub mod machine;
pub mod payload;
