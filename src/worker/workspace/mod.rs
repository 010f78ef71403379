//! The agent's workspace in R2, shared by both objects: the run's prompt
//! files and skills (`prompt_load`) and the `workspace.*` methods (`rpc`).

pub mod prompt_load;
pub mod rpc;
