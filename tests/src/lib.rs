//! Test support for gsv: the workerd harness, a protocol v1 client, and
//! the fake LLM server (OpenAI and Anthropic streaming on loopback).

pub mod fake_discord;
pub mod fake_llm;
pub mod gateway_recorder;
pub mod harness;
pub mod ws;
