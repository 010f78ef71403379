//! Params, results and events of the channel and pairing methods
//! (`channels.list`, `channel.*`, `pair.*`, and the `channel.outbound` /
//! `channel.typing` events a channel connected over WebSocket receives).
//! The channel contract itself (peers, messages, statuses) is `channels`.

use crate::channels::{ChannelAccountConfig, ChannelAccountStatus, ChannelPeer};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn default_account() -> String {
    "default".into()
}

/// One channel account the gateway knows of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChannelRegistryEntry {
    pub channel: String,
    pub account_id: String,
    /// When the account last said it was connected (ms since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connected_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_message_at: Option<i64>,
    /// How the gateway reaches it: `binding` (a service binding) or
    /// `socket` (a channel connected over WebSocket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// The last status the channel reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ChannelAccountStatus>,
    /// Answer pieces that could not be delivered to it.
    #[serde(default)]
    pub failed_deliveries: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_delivery_error: Option<String>,
    /// Answer pieces of the last day the platform says reached the person
    /// (read ones included), on channels that report receipts (WhatsApp).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delivered: u64,
    /// Of those, the ones the person has read.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub read: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChannelsListResult {
    pub channels: Vec<ChannelRegistryEntry>,
    pub count: u64,
    /// Settings that let people other than the owner do more than the
    /// defaults (other people in the main session, node tools below the
    /// owner); `gsv trust explain` says more.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// `channel.start`: the account's settings go to the channel; a bot token
/// given here is the channel's to keep and is never echoed back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChannelStartRpcParams {
    pub channel: String,
    #[serde(default = "default_account")]
    pub account_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<ChannelAccountConfig>,
}

/// `channel.stop`, `channel.logout`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChannelAccountParams {
    pub channel: String,
    #[serde(default = "default_account")]
    pub account_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChannelAccountResult {
    pub ok: bool,
    pub channel: String,
    pub account_id: String,
    /// What the channel said, when it said more than ok.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChannelStatusRpcParams {
    pub channel: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChannelStatusRpcResult {
    pub channel: String,
    pub accounts: Vec<ChannelAccountStatus>,
    /// Accounts with answer pieces the gateway could not deliver, after
    /// every retry (accounts with none are left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undelivered: Vec<UndeliveredPieces>,
    /// Accounts whose chats are owed answers: runs going on or whose end is
    /// not yet in the ledger, and pieces in the ledger not yet sent
    /// (accounts owing nothing are left out).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owed: Vec<OwedAnswers>,
}

/// What one account's chats are still owed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct OwedAnswers {
    pub account_id: String,
    /// Runs started from a chat whose answer is not yet in the ledger.
    pub answers: u64,
    /// Pieces in the ledger waiting to be sent (or retried).
    pub pieces: u64,
}

/// What the gateway failed to deliver through one account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct UndeliveredPieces {
    pub account_id: String,
    pub count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChannelLoginRpcParams {
    pub channel: String,
    #[serde(default = "default_account")]
    pub account_id: String,
    #[serde(default)]
    pub force: bool,
    /// Link by a pairing code typed on this number's phone, not a QR code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChannelLoginRpcResult {
    pub ok: bool,
    pub channel: String,
    pub account_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qr_data_url: Option<String>,
    /// The QR code's text, for a terminal to draw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qr: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_code: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub linked: bool,
    pub message: String,
}

/// A sender waiting for the owner's approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PendingPair {
    pub channel: String,
    pub account_id: String,
    pub sender_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_name: Option<String>,
    pub code: String,
    pub requested_at: i64,
    pub expires_at: i64,
}

/// `pair.list`: keyed by `channel:senderId`, as in v1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PairListResult {
    pub pairs: BTreeMap<String, PendingPair>,
}

/// `pair.approve` / `pair.reject`: the request by its `code`, or by
/// `channel` and `senderId` (v1's form).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PairDecisionParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PairApproveResult {
    pub approved: bool,
    pub channel: String,
    pub sender_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_name: Option<String>,
    /// Whether the sender was told through its channel.
    pub notified: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PairRejectResult {
    pub rejected: bool,
    pub channel: String,
    pub sender_id: String,
}

/// `channel.outbound` event, to a channel connected over WebSocket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelOutboundEvent {
    pub channel: String,
    pub account_id: String,
    pub peer: ChannelPeer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    pub message: OutboundText,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboundText {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to_id: Option<String>,
}

/// `channel.typing` event, to a channel connected over WebSocket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelTypingEvent {
    pub channel: String,
    pub account_id: String,
    pub peer: ChannelPeer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    pub typing: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn v1_shapes_read_with_defaults() {
        let p: ChannelAccountParams =
            serde_json::from_value(json!({"channel": "discord"})).unwrap();
        assert_eq!(
            p,
            ChannelAccountParams {
                channel: "discord".into(),
                account_id: "default".into()
            }
        );
        let d: PairDecisionParams =
            serde_json::from_value(json!({"channel": "whatsapp", "senderId": "+1555"})).unwrap();
        assert_eq!(
            d,
            PairDecisionParams {
                code: None,
                channel: Some("whatsapp".into()),
                sender_id: Some("+1555".into())
            }
        );
    }
}
