//! Test support for gsv: the workerd harness, a protocol v1 client, the
//! fake LLM server (OpenAI and Anthropic streaming on loopback), the fake
//! Discord (gateway WebSocket and REST on loopback) and the recorder that
//! stands in for the gateway behind a channel Worker.

pub mod channel_rig;
pub mod fake_discord;
pub mod fake_llm;
pub mod gateway_recorder;
pub mod harness;
pub mod ws;
