//! A channel Worker behind a service binding: typed JSON calls on its
//! internal paths, each carrying the shared channel key.

use super::{Channel, ChannelResult};
use crate::worker::body::BodyReader;
use futures::future::LocalBoxFuture;
use futures::future::{select, Either};
use futures::FutureExt;
use gsv_protocol::channels::*;
use gsv_protocol::{codes, ErrorShape};
use serde::de::DeserializeOwned;
use std::time::Duration;
use worker::{Delay, Fetcher, Headers, Method, RequestInit};

/// A call the channel has not answered in this long is taken as a channel
/// out of reach (retryable): a hung call would otherwise hold its chat's
/// queue, sent one piece at a time, for good. A send the channel did make
/// is not made twice on the retry (the piece's idempotency key).
const CALL_TIMEOUT_MS: u64 = 60_000;

pub struct BindingChannel {
    name: String,
    fetcher: Fetcher,
    key: String,
}

impl BindingChannel {
    pub fn new(name: &str, fetcher: Fetcher, key: String) -> Self {
        Self {
            name: name.to_string(),
            fetcher,
            key,
        }
    }

    /// POSTs `body` (JSON) to `path`; the raw answer.
    async fn post(&self, path: &str, body: String) -> ChannelResult<worker::Response> {
        let headers = Headers::new();
        let _ = headers.set("content-type", "application/json");
        let _ = headers.set(CHANNEL_KEY_HEADER, &self.key);
        let mut init = RequestInit::new();
        init.with_method(Method::Post)
            .with_headers(headers)
            .with_body(Some(body.into()));
        let url = format!("https://{}.channel{path}", self.name);
        self.fetcher.fetch(url, Some(init)).await.map_err(|e| {
            ErrorShape::new(
                codes::UNAVAILABLE,
                format!("The {} channel could not be reached: {e}", self.name),
            )
            .retryable(true)
        })
    }

    /// POSTs `call` to its path; an answer that is not the call's reply
    /// (a non-2xx, a body that does not parse) is an error naming the channel.
    async fn call<C: InternalCall>(&self, call: &C) -> ChannelResult<C::Reply>
    where
        C::Reply: DeserializeOwned,
    {
        let unreachable = |e: String| {
            ErrorShape::new(
                codes::UNAVAILABLE,
                format!("The {} channel could not be reached: {e}", self.name),
            )
            .retryable(true)
        };
        let body = serde_json::to_string(call).map_err(|e| unreachable(e.to_string()))?;
        let answer = async {
            let res = self.post(C::PATH, body).await?;
            let text = BodyReader::new(&res)
                .read_text()
                .await
                .map_err(|e| unreachable(e.to_string()))?;
            Ok::<_, ErrorShape>((res.status_code(), text))
        };
        let timeout = Delay::from(Duration::from_millis(CALL_TIMEOUT_MS));
        let (status, text) = match select(Box::pin(answer), timeout).await {
            Either::Left((answer, _)) => answer?,
            Either::Right(_) => {
                return Err(unreachable(format!(
                    "no answer on {} within {} s",
                    C::PATH,
                    CALL_TIMEOUT_MS / 1000
                )))
            }
        };
        if !(200..300).contains(&status) {
            return Err(ErrorShape::new(
                codes::UNAVAILABLE,
                format!(
                    "The {} channel answered {status} on {}: {}",
                    self.name,
                    C::PATH,
                    text.chars().take(300).collect::<String>()
                ),
            ));
        }
        serde_json::from_str(&text).map_err(|e| unreachable(format!("bad answer: {e}")))
    }
}

impl Channel for BindingChannel {
    fn transport(&self) -> &'static str {
        "binding"
    }

    fn send<'a>(
        &'a self,
        account_id: &'a str,
        message: &'a ChannelOutboundMessage,
    ) -> LocalBoxFuture<'a, ChannelSendResult> {
        async move {
            let call = ChannelSendParams {
                account_id: account_id.to_string(),
                message: message.clone(),
            };
            self.call(&call)
                .await
                .unwrap_or_else(|e| ChannelSendResult {
                    ok: false,
                    message_id: None,
                    error: Some(e.message),
                    retryable: Some(true),
                    retry_after_ms: None,
                })
        }
        .boxed_local()
    }

    fn set_typing<'a>(
        &'a self,
        account_id: &'a str,
        peer: &'a ChannelPeer,
        typing: bool,
    ) -> LocalBoxFuture<'a, ChannelResult<()>> {
        async move {
            let call = ChannelTypingParams {
                account_id: account_id.to_string(),
                peer: peer.clone(),
                typing,
            };
            self.call(&call).await.map(|_| ())
        }
        .boxed_local()
    }

    fn start<'a>(
        &'a self,
        account_id: &'a str,
        config: ChannelAccountConfig,
    ) -> LocalBoxFuture<'a, ChannelResult<OkResult>> {
        async move {
            let call = ChannelStartParams {
                account_id: account_id.to_string(),
                config,
            };
            self.call(&call).await
        }
        .boxed_local()
    }

    fn stop<'a>(&'a self, account_id: &'a str) -> LocalBoxFuture<'a, ChannelResult<OkResult>> {
        async move {
            let call = ChannelStopParams {
                account_id: account_id.to_string(),
            };
            self.call(&call).await
        }
        .boxed_local()
    }

    fn status<'a>(
        &'a self,
        account_id: Option<&'a str>,
    ) -> LocalBoxFuture<'a, ChannelResult<Vec<ChannelAccountStatus>>> {
        async move {
            let call = ChannelStatusQuery {
                account_id: account_id.map(str::to_string),
            };
            self.call(&call).await.map(|r| r.accounts)
        }
        .boxed_local()
    }

    fn login<'a>(
        &'a self,
        params: &'a ChannelLoginParams,
    ) -> LocalBoxFuture<'a, ChannelResult<ChannelLoginResult>> {
        async move { self.call(params).await }.boxed_local()
    }

    fn capabilities(&self) -> LocalBoxFuture<'_, ChannelResult<ChannelCapabilities>> {
        async move { self.call(&ChannelCapabilitiesQuery {}).await }.boxed_local()
    }

    fn logout<'a>(&'a self, account_id: &'a str) -> LocalBoxFuture<'a, ChannelResult<OkResult>> {
        async move {
            let call = ChannelLogoutParams {
                account_id: account_id.to_string(),
            };
            self.call(&call).await
        }
        .boxed_local()
    }

    fn fetch_media<'a>(
        &'a self,
        params: &'a ChannelMediaFetchParams,
    ) -> LocalBoxFuture<'a, ChannelResult<worker::Response>> {
        async move {
            let body = serde_json::to_string(params)
                .map_err(|e| ErrorShape::new(codes::INTERNAL, e.to_string()))?;
            self.post(ChannelMediaFetchParams::PATH, body).await
        }
        .boxed_local()
    }
}
