//! The channel contract: what a channel Worker (Discord, WhatsApp, …) and the
//! gateway say to each other over Cloudflare service bindings.
//!
//! Every call is a `POST` of a JSON body (one of the `*Params` types below) to
//! an internal path, answered with the matching `*Result`; every call carries
//! the shared key in [`CHANNEL_KEY_HEADER`]. [`InternalCall`] ties a params
//! type to its path and reply so each side has one typed client per
//! direction. Media travel as a reference (the platform's URL or media
//! id) and metadata: the gateway asks the channel for the bytes once it
//! knows the session they belong to ([`ChannelMediaFetchParams`]) and
//! streams them into R2; a file going out is an R2 object the channel
//! reads from the gateway ([`ChannelMediaGetParams`]) and uploads.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The header every internal channel call carries. Its value is
/// `GSV_CHANNEL_KEY` on the channel side; the gateway derives the same value
/// from its `GSV_AUTH_TOKEN` as lowercase hex
/// `HMAC-SHA256(key = GSV_AUTH_TOKEN, message = CHANNEL_KEY_LABEL)`.
pub const CHANNEL_KEY_HEADER: &str = "x-gsv-channel-key";

/// The message of the channel-key HMAC (see [`CHANNEL_KEY_HEADER`]).
pub const CHANNEL_KEY_LABEL: &str = "gsv-channel-key";

/// A call on an internal path: its params type knows where it goes and
/// what comes back.
pub trait InternalCall: Serialize {
    const PATH: &'static str;
    type Reply: for<'de> Deserialize<'de>;
}

// ---- the shared message types ----

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum PeerKind {
    Dm,
    Group,
    Channel,
    Thread,
}

/// Where a message was said: a DM, a group chat, a channel or a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChannelPeer {
    pub kind: PeerKind,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}

/// Who said it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelSender {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handle: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_bot: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum MediaType {
    Image,
    Audio,
    Video,
    Document,
}

/// An attachment, by reference: the platform's URL or id and what is
/// known of it. `data` (base64) is v1's inline form, which channels on
/// v1's WebSocket fallback and clients of `chat.send` may use for small
/// files; `r2Key` names a file already in the gateway's R2 (uploaded to
/// [`MEDIA_UPLOAD_PATH`](crate::MEDIA_UPLOAD_PATH)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChannelMedia {
    #[serde(rename = "type")]
    pub media_type: MediaType,
    pub mime_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r2_key: Option<String>,
    /// The platform's id of the media, where it is fetched by id
    /// (WhatsApp: `GET /{media-id}` answers a short-lived URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Seconds, for audio and video.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelInboundMessage {
    /// The platform's message id (the gateway dedupes and replies by it).
    pub message_id: String,
    pub peer: ChannelPeer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<ChannelSender>,
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<ChannelMedia>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to_text: Option<String>,
    /// Milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// The bot was mentioned (the gateway may gate group messages on it).
    #[serde(default)]
    pub was_mentioned: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_reply_to_bot: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelOutboundMessage {
    pub peer: ChannelPeer,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to_id: Option<String>,
    /// The same for every retry of one piece of an answer: a platform that
    /// dedupes by it (Discord's `nonce` with `enforce_nonce`) never shows
    /// the piece twice. At most 25 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// Files to send with the text (the text may then be empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<OutboundMedia>,
    /// Buttons under the text, where the platform has them (Telegram's
    /// inline keyboard). Pressing one is the presser writing its `text`
    /// into the chat, so the text alone must already say how to answer:
    /// a channel without buttons drops them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<ChannelAction>,
}

/// A button that answers for the person who presses it: the channel hands
/// the gateway an inbound message from the presser whose text is `text`
/// (at most 64 bytes, Telegram's `callback_data` limit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelAction {
    pub label: String,
    pub text: String,
}

/// A file going out: an object in the gateway's R2 (a session's media or
/// a workspace file), read with [`ChannelMediaGetParams`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboundMedia {
    pub key: String,
    #[serde(rename = "type")]
    pub media_type: MediaType,
    pub mime_type: String,
    pub filename: String,
    pub size: u64,
}

/// One account's connection as the channel sees it. Never carries secrets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChannelAccountStatus {
    pub account_id: String,
    pub connected: bool,
    pub authenticated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_activity: Option<i64>,
    /// Why it is not working, in plain words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelCapabilities {
    pub chat_types: Vec<PeerKind>,
    pub media: bool,
    pub reactions: bool,
    pub threads: bool,
    pub typing: bool,
    pub editing: bool,
    pub deletion: bool,
    pub qr_login: bool,
    /// The longest `text` one send accepts; the gateway chunks to it.
    pub max_text_length: usize,
}

// ---- channel → gateway ----

/// A chat message handed to the gateway. Read from this contract's shape
/// or GSV v1's WebSocket shape (`inbound_wire.rs`); written in this one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    try_from = "crate::inbound_wire::InboundWire"
)]
pub struct ChannelInboundParams {
    pub channel: String,
    pub account_id: String,
    pub message: ChannelInboundMessage,
}

/// What the gateway did with an inbound message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum InboundStatus {
    /// A run started in a session.
    Started,
    /// A slash command ran (its answer goes out as a send).
    Command,
    /// Directive-only message, acknowledged.
    Directive,
    /// The sender must be paired first; a pairing code went out.
    PendingPairing,
    /// Nothing to do (e.g. a group message without a mention).
    Ignored,
    /// Access policy refused the sender.
    Blocked,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelInboundResult {
    pub ok: bool,
    pub status: InboundStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl InternalCall for ChannelInboundParams {
    const PATH: &'static str = "/internal/channel/inbound";
    type Reply = ChannelInboundResult;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelStatusParams {
    pub channel: String,
    pub account_id: String,
    pub status: ChannelAccountStatus,
}

/// A bare acknowledgement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OkResult {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl InternalCall for ChannelStatusParams {
    const PATH: &'static str = "/internal/channel/status";
    type Reply = OkResult;
}

/// What the platform later said of a message the channel sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryState {
    /// On its way (the platform's servers have it).
    Sent,
    /// On the person's device.
    Delivered,
    /// Seen by the person.
    Read,
    /// The platform gave up on it, after accepting it.
    Failed,
}

/// A delivery receipt (WhatsApp's `statuses` webhook): the gateway
/// records it on the piece it sent as `message_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelDeliveryParams {
    pub channel: String,
    pub account_id: String,
    /// The platform's id of the sent message (`ChannelSendResult::message_id`).
    pub message_id: String,
    pub state: DeliveryState,
    /// Milliseconds since the Unix epoch, as the platform dated it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    /// Why it failed, in plain words (`Failed` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl InternalCall for ChannelDeliveryParams {
    const PATH: &'static str = "/internal/channel/delivery";
    type Reply = OkResult;
}

/// Channel → gateway: the bytes of an R2 object the gateway named in an
/// outbound message (`OutboundMedia::key`). Not a JSON call: the answer's
/// body is the object itself (`content-type` and `content-length` set),
/// or a non-2xx with a plain-text reason (404: no such object).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelMediaGetParams {
    pub key: String,
}

impl ChannelMediaGetParams {
    pub const PATH: &'static str = "/internal/channel/media";
}

// ---- gateway → channel ----

/// Gateway → channel: download one inbound attachment with the account's
/// credentials (WhatsApp: `GET /{media-id}`, then the short-lived URL with
/// the bearer token). Not a JSON call: a 200's body is the file, streamed
/// (`content-type`, and `content-length` when the platform said it); a
/// refusal is a non-2xx with a [`MediaFetchRefusal`] body (413: larger
/// than `maxBytes`, known before any byte was read).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelMediaFetchParams {
    pub account_id: String,
    pub media: ChannelMedia,
    pub max_bytes: u64,
}

impl ChannelMediaFetchParams {
    pub const PATH: &'static str = "/internal/media/fetch";
}

/// Why a channel did not hand over an attachment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaFetchRefusal {
    pub error: String,
    /// The file's size, when the platform said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelSendParams {
    pub account_id: String,
    pub message: ChannelOutboundMessage,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelSendResult {
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The failure may pass if the same send is tried again later.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    /// When a retryable failure should be tried again at the soonest, in
    /// ms from now (the platform's `retry_after`, or a receipt awaited).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<i64>,
}

impl InternalCall for ChannelSendParams {
    const PATH: &'static str = "/internal/send";
    type Reply = ChannelSendResult;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelTypingParams {
    pub account_id: String,
    pub peer: ChannelPeer,
    pub typing: bool,
}

impl InternalCall for ChannelTypingParams {
    const PATH: &'static str = "/internal/typing";
    type Reply = OkResult;
}

/// An account's settings at `start`. Unknown keys are kept for channels
/// that need more.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChannelAccountConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_token: Option<String>,
    /// Discord gateway intents bitfield; the channel's default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intents: Option<u64>,
    /// WhatsApp Cloud API: the business phone number's id (the account's
    /// number; the channel's `WHATSAPP_PHONE_NUMBER_ID` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number_id: Option<String>,
    /// WhatsApp Cloud API: an access token for the number (the channel's
    /// `WHATSAPP_ACCESS_TOKEN` secret when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_token: Option<String>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelStartParams {
    pub account_id: String,
    #[serde(default)]
    pub config: ChannelAccountConfig,
}

impl InternalCall for ChannelStartParams {
    const PATH: &'static str = "/internal/start";
    type Reply = OkResult;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelStopParams {
    pub account_id: String,
}

impl InternalCall for ChannelStopParams {
    const PATH: &'static str = "/internal/stop";
    type Reply = OkResult;
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelStatusQuery {
    /// One account, or every account the channel knows when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelStatusResult {
    pub accounts: Vec<ChannelAccountStatus>,
}

impl InternalCall for ChannelStatusQuery {
    const PATH: &'static str = "/internal/status";
    type Reply = ChannelStatusResult;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelLoginParams {
    pub account_id: String,
    #[serde(default)]
    pub force: bool,
    /// Link by a pairing code typed on this number's phone (E.164)
    /// instead of a QR code, for channels that offer both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelLoginResult {
    pub ok: bool,
    /// A QR code to scan, for channels that log in that way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qr_data_url: Option<String>,
    /// The same QR code's text, for a terminal to draw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qr: Option<String>,
    /// A pairing code to type on the phone (`phoneNumber` was given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair_code: Option<String>,
    /// Linked: nothing more to scan.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub linked: bool,
    pub message: String,
}

impl InternalCall for ChannelLoginParams {
    const PATH: &'static str = "/internal/login";
    type Reply = ChannelLoginResult;
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelLogoutParams {
    pub account_id: String,
}

impl InternalCall for ChannelLogoutParams {
    const PATH: &'static str = "/internal/logout";
    type Reply = OkResult;
}

/// `/internal/capabilities` takes an empty body.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChannelCapabilitiesQuery {}

impl InternalCall for ChannelCapabilitiesQuery {
    const PATH: &'static str = "/internal/capabilities";
    type Reply = ChannelCapabilities;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inbound_params_are_camel_case_with_defaults() {
        let wire = json!({
            "channel": "discord",
            "accountId": "default",
            "message": {
                "messageId": "m1",
                "peer": {"kind": "group", "id": "c1", "threadId": "t1"},
                "sender": {"id": "u1", "name": "Ann", "isBot": false},
                "text": "hi",
                "media": [{"type": "image", "mimeType": "image/png", "url": "https://x/y.png", "size": 3}],
                "replyToId": "m0",
                "timestamp": 1700000000000i64,
                "wasMentioned": true,
                "isReplyToBot": true
            }
        });
        let params: ChannelInboundParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(
            params,
            ChannelInboundParams {
                channel: "discord".into(),
                account_id: "default".into(),
                message: ChannelInboundMessage {
                    message_id: "m1".into(),
                    peer: ChannelPeer {
                        kind: PeerKind::Group,
                        id: "c1".into(),
                        name: None,
                        handle: None,
                        thread_id: Some("t1".into()),
                    },
                    sender: Some(ChannelSender {
                        id: "u1".into(),
                        name: Some("Ann".into()),
                        handle: None,
                        is_bot: Some(false),
                    }),
                    text: "hi".into(),
                    media: vec![ChannelMedia {
                        media_type: MediaType::Image,
                        mime_type: "image/png".into(),
                        data: None,
                        r2_key: None,
                        id: None,
                        url: Some("https://x/y.png".into()),
                        filename: None,
                        size: Some(3),
                        duration: None,
                    }],
                    reply_to_id: Some("m0".into()),
                    reply_to_text: None,
                    timestamp: Some(1_700_000_000_000),
                    was_mentioned: true,
                    is_reply_to_bot: Some(true),
                },
            }
        );
        assert_eq!(serde_json::to_value(&params).unwrap(), wire);
    }

    #[test]
    fn a_minimal_inbound_message_defaults_media_and_mention() {
        let m: ChannelInboundMessage = serde_json::from_value(
            json!({"messageId": "m", "peer": {"kind": "dm", "id": "d"}, "text": ""}),
        )
        .unwrap();
        assert!(m.media.is_empty());
        assert!(!m.was_mentioned);
    }

    #[test]
    fn inbound_status_values() {
        let all = [
            (InboundStatus::Started, "started"),
            (InboundStatus::Command, "command"),
            (InboundStatus::Directive, "directive"),
            (InboundStatus::PendingPairing, "pendingPairing"),
            (InboundStatus::Ignored, "ignored"),
            (InboundStatus::Blocked, "blocked"),
        ];
        for (status, wire) in all {
            assert_eq!(serde_json::to_value(status).unwrap(), json!(wire));
        }
    }

    #[test]
    fn start_config_keeps_unknown_keys() {
        let p: ChannelStartParams = serde_json::from_value(
            json!({"accountId": "a", "config": {"botToken": "t", "intents": 1, "guildId": "g",
                                                "phoneNumberId": "106540352242922", "accessToken": "EAAG"}}),
        )
        .unwrap();
        assert_eq!(p.config.bot_token.as_deref(), Some("t"));
        assert_eq!(p.config.phone_number_id.as_deref(), Some("106540352242922"));
        assert_eq!(p.config.access_token.as_deref(), Some("EAAG"));
        assert_eq!(p.config.intents, Some(1));
        assert_eq!(p.config.extra.get("guildId"), Some(&json!("g")));
    }

    #[test]
    fn a_delivery_receipt_on_the_wire() {
        let wire = json!({"channel": "whatsapp", "accountId": "default", "messageId": "wamid.X",
                          "state": "failed", "timestamp": 1_750_000_000_000i64, "error": "window closed"});
        let p: ChannelDeliveryParams = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(
            p,
            ChannelDeliveryParams {
                channel: "whatsapp".into(),
                account_id: "default".into(),
                message_id: "wamid.X".into(),
                state: DeliveryState::Failed,
                timestamp: Some(1_750_000_000_000),
                error: Some("window closed".into()),
            }
        );
        assert_eq!(serde_json::to_value(&p).unwrap(), wire);
        // Later states order after earlier ones (a receipt never goes back).
        assert!(DeliveryState::Sent < DeliveryState::Delivered);
        assert!(DeliveryState::Delivered < DeliveryState::Read);
    }

    #[test]
    fn paths() {
        assert_eq!(ChannelInboundParams::PATH, "/internal/channel/inbound");
        assert_eq!(ChannelStatusParams::PATH, "/internal/channel/status");
        assert_eq!(ChannelDeliveryParams::PATH, "/internal/channel/delivery");
        assert_eq!(ChannelSendParams::PATH, "/internal/send");
        assert_eq!(ChannelTypingParams::PATH, "/internal/typing");
        assert_eq!(ChannelStartParams::PATH, "/internal/start");
        assert_eq!(ChannelStopParams::PATH, "/internal/stop");
        assert_eq!(ChannelStatusQuery::PATH, "/internal/status");
        assert_eq!(ChannelLoginParams::PATH, "/internal/login");
        assert_eq!(ChannelLogoutParams::PATH, "/internal/logout");
        assert_eq!(ChannelCapabilitiesQuery::PATH, "/internal/capabilities");
        assert_eq!(ChannelMediaFetchParams::PATH, "/internal/media/fetch");
        assert_eq!(ChannelMediaGetParams::PATH, "/internal/channel/media");
    }

    #[test]
    fn an_outbound_file_on_the_wire() {
        let wire = json!({"peer": {"kind": "dm", "id": "d"}, "text": "",
            "media": [{"key": "media/agent:main:main/u.png", "type": "image", "mimeType": "image/png",
                       "filename": "chart.png", "size": 1234}]});
        let m: ChannelOutboundMessage = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(m.media[0].media_type, MediaType::Image);
        assert_eq!(serde_json::to_value(&m).unwrap(), wire);
        // Text-only messages keep v1's shape.
        let text: ChannelOutboundMessage =
            serde_json::from_value(json!({"peer": {"kind": "dm", "id": "d"}, "text": "hi"}))
                .unwrap();
        assert!(text.media.is_empty());
        assert_eq!(
            serde_json::to_value(&text).unwrap(),
            json!({"peer": {"kind": "dm", "id": "d"}, "text": "hi"})
        );
    }

    #[test]
    fn v1_inline_media_reads() {
        let m: ChannelMedia = serde_json::from_value(
            json!({"type": "audio", "mimeType": "audio/ogg", "data": "T2dnUw==", "duration": 2.5}),
        )
        .unwrap();
        assert_eq!(m.data.as_deref(), Some("T2dnUw=="));
        assert_eq!(m.duration, Some(2.5));
    }
}
