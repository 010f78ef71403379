//! Test support for gsv: the workerd harness, a protocol v1 client, and
//! the fake LLM server (OpenAI and Anthropic streaming on loopback).

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod fake_llm;
pub mod harness;
pub mod ws;
