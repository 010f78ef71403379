//! Test support for gsv: the workerd harness, a protocol v1 client, the
//! fake LLM server (OpenAI and Anthropic streaming on loopback), the fake
//! Discord (gateway WebSocket and REST on loopback), the fake WhatsApp
//! Cloud API (Graph and signed webhooks on loopback), the fake Telegram Bot
//! API (methods, webhooks and long polling on loopback) and the recorder that
//! stands in for the gateway behind a channel Worker, and a headless
//! Chromium for the web UI.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod browser;
pub mod channel_rig;
pub mod cost_rig;
pub mod cron_rig;
pub mod fake_discord;
pub mod fake_llm;
pub mod fake_telegram;
pub mod fake_whatsapp;
pub mod fake_whatsapp_web;
pub mod fixtures;
pub mod gateway_recorder;
pub mod harness;
pub mod multipart;
pub mod poll;
pub mod v1_gateway_double;
pub mod v1_replay;
pub mod ws;
pub mod ws_recorder;
