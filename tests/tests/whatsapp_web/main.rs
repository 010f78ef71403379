//! WhatsApp on the user's own number, end to end: the real gateway and
//! the real WhatsApp Web channel Worker (its test build, which trusts the
//! double's certificate chain) in one workerd, the local WhatsApp Web
//! double and the fake LLM on loopback. The agent's number is linked as a
//! companion device by a QR code (or a pairing code) the double's phone
//! takes; what a person sees on their phone is what the double decrypted
//! for them. One test binary, so its tests run side by side.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod chat;
mod lifecycle;
mod linking;
