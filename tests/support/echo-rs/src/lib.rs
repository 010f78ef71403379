//! The bench's floors of `tests/support/echo/worker.mjs`, written with
//! workers-rs, the crate the gateway is built on, the way its docs and
//! examples use it: how much of the gateway's turn is the least that a
//! Rust Worker pays for the same work.
//! - a WebSocket message echoed by a Durable Object (hibernation API);
//! - "hop:…": the same, plus one `fetch()` to a second object;
//! - "llm:URL …": one streamed model call from the object, read whole;
//! - "turn:URL …": a `fetch()` to a second object, which stores the message
//!   in SQLite, makes the streamed model call, stores the answer and
//!   returns it, echoed back on the WebSocket;
//! - "toolturn:URL …": the least a turn with one native tool call must do:
//!   the same, then the tool's file read from R2 and stored as its result,
//!   and a second model call with it, whose answer is stored too;
//! - "link:…": the same message sent to the second object over a WebSocket
//!   it keeps open to the first, and answered on it, as a Session's event
//!   link could carry requests: one object-to-object exchange with no
//!   `Request` or `Response`.
//!
//! There is no "rpc:…": workers-rs has no JS RPC between objects.

#[cfg(target_arch = "wasm32")]
mod skeleton;
