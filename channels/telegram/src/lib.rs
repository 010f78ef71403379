//! The gsv Telegram channel: a Worker on the Telegram Bot API. Updates
//! come by webhook (Telegram posts each to `/webhook/{account}` with the
//! account's secret) or, without a public URL, by long polling from the
//! account's alarm; one `TelegramAccount` Durable Object per bot takes
//! each once, hands it to the gateway, and sends the agent's answers.
//!
//! The decisions are plain Rust, tested natively: Bot API calls and their
//! answers (`api`), the updates' shape (`update`) and their mapping onto
//! the channel contract (`inbound`), the model's Markdown as Telegram's
//! HTML (`markdown`), sends and uploads (`outbound`), the webhook's path
//! and secret (`webhook`), an account's state and start (`account`), and
//! the alarm's deadlines (`schedule`). `worker` (wasm32 only) is the
//! shell that performs them.

pub mod account;
pub mod api;
pub mod inbound;
pub mod markdown;
pub mod outbound;
pub mod schedule;
pub mod update;
pub mod webhook;

#[cfg(target_arch = "wasm32")]
mod worker;

/// The channel's name on the wire (`ChannelInboundParams::channel`).
pub const CHANNEL_ID: &str = "telegram";
