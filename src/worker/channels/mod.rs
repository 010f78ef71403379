//! How the gateway reaches a channel. A channel Worker sits behind a
//! service binding named `CHANNEL_{NAME}` (`binding.rs`); a channel written
//! against v1's WebSocket fallback is a socket connected with
//! `mode: "channel"` (`socket.rs`). A new channel Worker needs no code
//! here: its binding is found by name.

mod binding;
mod socket;

pub use binding::BindingChannel;
pub use socket::SocketChannel;

use futures::future::LocalBoxFuture;
use gsv_protocol::channels::{
    ChannelAccountConfig, ChannelAccountStatus, ChannelCapabilities, ChannelLoginParams,
    ChannelLoginResult, ChannelMediaFetchParams, ChannelOutboundMessage, ChannelPeer,
    ChannelSendResult, OkResult,
};
use gsv_protocol::ErrorShape;

pub type ChannelResult<T> = Result<T, ErrorShape>;

/// What the gateway can ask of a channel for one of its accounts.
pub trait Channel {
    /// How it is reached (`binding` or `socket`), for `channels.list`.
    fn transport(&self) -> &'static str;

    /// Sends one message; the result says whether the platform took it.
    fn send<'a>(
        &'a self,
        account_id: &'a str,
        message: &'a ChannelOutboundMessage,
    ) -> LocalBoxFuture<'a, ChannelSendResult>;

    fn set_typing<'a>(
        &'a self,
        account_id: &'a str,
        peer: &'a ChannelPeer,
        typing: bool,
    ) -> LocalBoxFuture<'a, ChannelResult<()>>;

    fn start<'a>(
        &'a self,
        account_id: &'a str,
        config: ChannelAccountConfig,
    ) -> LocalBoxFuture<'a, ChannelResult<OkResult>>;

    fn stop<'a>(&'a self, account_id: &'a str) -> LocalBoxFuture<'a, ChannelResult<OkResult>>;

    fn status<'a>(
        &'a self,
        account_id: Option<&'a str>,
    ) -> LocalBoxFuture<'a, ChannelResult<Vec<ChannelAccountStatus>>>;

    fn login<'a>(
        &'a self,
        params: &'a ChannelLoginParams,
    ) -> LocalBoxFuture<'a, ChannelResult<ChannelLoginResult>>;

    fn logout<'a>(&'a self, account_id: &'a str) -> LocalBoxFuture<'a, ChannelResult<OkResult>>;

    /// What the platform allows (the longest text one send takes: the
    /// gateway splits answers to it).
    fn capabilities(&self) -> LocalBoxFuture<'_, ChannelResult<ChannelCapabilities>>;

    /// Downloads an inbound attachment with the account's credentials: a
    /// 200's body is the file (streamed), anything else says why not.
    fn fetch_media<'a>(
        &'a self,
        params: &'a ChannelMediaFetchParams,
    ) -> LocalBoxFuture<'a, ChannelResult<worker::Response>>;
}

/// The service binding a channel's Worker is reached by.
pub fn binding_name(channel: &str) -> String {
    format!("CHANNEL_{}", channel.to_ascii_uppercase().replace('-', "_"))
}
