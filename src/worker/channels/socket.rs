//! A channel connected over WebSocket (`mode: "channel"`, v1's fallback):
//! messages and typing go out as `channel.outbound` / `channel.typing`
//! events. The socket cannot say whether the platform took a message, so
//! a send is delivered once the event is written; account management is
//! the channel's own business and is refused here with a reason.

use super::{Channel, ChannelResult};
use futures::future::LocalBoxFuture;
use futures::FutureExt;
use gsv_protocol::channels::*;
use gsv_protocol::{
    codes, event, ChannelOutboundEvent, ChannelTypingEvent, ErrorShape, Frame, OutboundText,
};
use worker::WebSocket;

pub struct SocketChannel {
    name: String,
    ws: WebSocket,
}

impl SocketChannel {
    pub fn new(name: &str, ws: WebSocket) -> Self {
        Self {
            name: name.to_string(),
            ws,
        }
    }

    fn emit<T: serde::Serialize>(&self, name: &str, payload: &T) -> ChannelResult<()> {
        let frame = Frame::event_json(name, payload)
            .map_err(|e| ErrorShape::new(codes::INTERNAL, e.to_string()))?;
        self.ws.send_with_str(&frame).map_err(|e| {
            ErrorShape::new(
                codes::UNAVAILABLE,
                format!("The {} channel's socket is gone: {e}", self.name),
            )
            .retryable(true)
        })
    }

    fn unsupported<T>(&self, what: &str) -> ChannelResult<T> {
        Err(ErrorShape::new(
            codes::BAD_REQUEST,
            format!(
                "The {} channel is connected over WebSocket: {what} it on the channel's side",
                self.name
            ),
        ))
    }
}

impl Channel for SocketChannel {
    fn transport(&self) -> &'static str {
        "socket"
    }

    fn send<'a>(
        &'a self,
        account_id: &'a str,
        message: &'a ChannelOutboundMessage,
    ) -> LocalBoxFuture<'a, ChannelSendResult> {
        if !message.media.is_empty() {
            // v1's event carries text only (its `mediaUrl` needs a public
            // URL, which the gateway's files do not have).
            let result = ChannelSendResult {
                ok: false,
                message_id: None,
                error: Some(format!(
                    "the {} channel is connected over WebSocket, which carries text only: \
                     files cannot be sent through it",
                    self.name
                )),
                retryable: Some(false),
                retry_after_ms: None,
            };
            return async move { result }.boxed_local();
        }
        let evt = ChannelOutboundEvent {
            channel: self.name.clone(),
            account_id: account_id.to_string(),
            peer: message.peer.clone(),
            session_key: None,
            message: OutboundText {
                text: message.text.clone(),
                reply_to_id: message.reply_to_id.clone(),
            },
        };
        let result = match self.emit(event::CHANNEL_OUTBOUND, &evt) {
            Ok(()) => ChannelSendResult {
                ok: true,
                message_id: None,
                error: None,
                retryable: None,
                retry_after_ms: None,
            },
            Err(e) => ChannelSendResult {
                ok: false,
                message_id: None,
                error: Some(e.message),
                retryable: Some(true),
                retry_after_ms: None,
            },
        };
        async move { result }.boxed_local()
    }

    fn set_typing<'a>(
        &'a self,
        account_id: &'a str,
        peer: &'a ChannelPeer,
        typing: bool,
    ) -> LocalBoxFuture<'a, ChannelResult<()>> {
        let evt = ChannelTypingEvent {
            channel: self.name.clone(),
            account_id: account_id.to_string(),
            peer: peer.clone(),
            session_key: None,
            typing,
        };
        let result = self.emit(event::CHANNEL_TYPING, &evt);
        async move { result }.boxed_local()
    }

    fn start<'a>(
        &'a self,
        _account_id: &'a str,
        _config: ChannelAccountConfig,
    ) -> LocalBoxFuture<'a, ChannelResult<OkResult>> {
        let r = self.unsupported("start");
        async move { r }.boxed_local()
    }

    fn stop<'a>(&'a self, _account_id: &'a str) -> LocalBoxFuture<'a, ChannelResult<OkResult>> {
        let r = self.unsupported("stop");
        async move { r }.boxed_local()
    }

    fn status<'a>(
        &'a self,
        account_id: Option<&'a str>,
    ) -> LocalBoxFuture<'a, ChannelResult<Vec<ChannelAccountStatus>>> {
        // Connected is all the gateway knows of a socket channel.
        let status = ChannelAccountStatus {
            account_id: account_id.unwrap_or("default").to_string(),
            connected: true,
            authenticated: true,
            mode: Some("websocket".into()),
            last_activity: None,
            error: None,
            extra: None,
        };
        async move { Ok(vec![status]) }.boxed_local()
    }

    fn login<'a>(
        &'a self,
        _params: &'a ChannelLoginParams,
    ) -> LocalBoxFuture<'a, ChannelResult<ChannelLoginResult>> {
        let r = self.unsupported("log in");
        async move { r }.boxed_local()
    }

    fn logout<'a>(&'a self, _account_id: &'a str) -> LocalBoxFuture<'a, ChannelResult<OkResult>> {
        let r = self.unsupported("log out");
        async move { r }.boxed_local()
    }

    /// v1's socket has no way to ask: the gateway goes by the platform.
    fn capabilities(&self) -> LocalBoxFuture<'_, ChannelResult<ChannelCapabilities>> {
        let r = Err(ErrorShape::new(
            codes::BAD_REQUEST,
            format!(
                "The {} channel's socket cannot be asked its capabilities",
                self.name
            ),
        ));
        async move { r }.boxed_local()
    }

    fn fetch_media<'a>(
        &'a self,
        _params: &'a ChannelMediaFetchParams,
    ) -> LocalBoxFuture<'a, ChannelResult<worker::Response>> {
        // v1's channels send files inline (`data`), never by reference.
        let r = Err(ErrorShape::new(
            codes::BAD_REQUEST,
            format!(
                "The {} channel is connected over WebSocket: it must send files inline (data)",
                self.name
            ),
        ));
        async move { r }.boxed_local()
    }
}
