//! What can go wrong talking to the gateway, worded for the person at the
//! terminal: each message says what happened and what to do about it.

use gsv_protocol::{close_codes, codes, ErrorShape};
use serde_json::Value;
use std::fmt;
use std::time::Duration;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Error as WsError;

const URL_HINT: &str = "set --url / GSV_URL";

/// Why the socket is closed.
#[derive(Debug, Clone, PartialEq)]
pub enum CloseReason {
    /// The gateway sent a close frame.
    Closed { code: Option<u16>, reason: String },
    /// The socket failed or ended without a close frame.
    Lost(String),
}

impl CloseReason {
    pub fn from_frame(frame: Option<CloseFrame>) -> Self {
        match frame {
            Some(frame) => CloseReason::Closed {
                code: Some(frame.code.into()),
                reason: frame.reason.to_string(),
            },
            None => CloseReason::Closed {
                code: None,
                reason: String::new(),
            },
        }
    }

    fn code(&self) -> Option<u16> {
        match self {
            CloseReason::Closed { code, .. } => *code,
            CloseReason::Lost(_) => None,
        }
    }
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::Closed { code: None, .. } => {
                write!(f, "the gateway closed the connection")
            }
            CloseReason::Closed {
                code: Some(code),
                reason,
            } if reason.is_empty() => {
                write!(f, "the gateway closed the connection (code {code})")
            }
            CloseReason::Closed {
                code: Some(code),
                reason,
            } => {
                write!(
                    f,
                    "the gateway closed the connection (code {code}: {reason})"
                )
            }
            CloseReason::Lost(why) => write!(f, "the connection to the gateway was lost ({why})"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum RequestError {
    /// The gateway answered with an error response.
    Gateway(ErrorShape),
    Timeout {
        method: String,
        after: Duration,
    },
    /// The socket closed before the answer came.
    Disconnected {
        method: String,
        close: CloseReason,
    },
    /// The params did not encode as JSON.
    BadParams {
        method: String,
        detail: String,
    },
    /// The answer is not the method's result type.
    BadAnswer {
        method: String,
        detail: String,
        answer: Value,
    },
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The gateway's own message reads best unadorned.
            RequestError::Gateway(e) => write!(f, "{e}"),
            RequestError::Timeout { method, after } => {
                write!(
                    f,
                    "the gateway did not answer `{method}` within {} s",
                    after.as_secs_f64()
                )
            }
            RequestError::Disconnected { method, close } => {
                write!(f, "no answer to `{method}`: {close}")
            }
            RequestError::BadParams { method, detail } => {
                write!(f, "cannot send `{method}`: {detail}")
            }
            RequestError::BadAnswer {
                method,
                detail,
                answer,
            } => write!(
                f,
                "unexpected answer to `{method}` ({detail}): {answer}. \
                 Are gsv and the gateway the same version?"
            ),
        }
    }
}

impl std::error::Error for RequestError {}

#[derive(Debug, Clone, PartialEq)]
pub enum ConnectError {
    Unreachable {
        url: String,
        reason: String,
    },
    InvalidUrl {
        url: String,
        reason: String,
    },
    /// The upgrade got an HTTP answer other than 101 or 401.
    HttpStatus {
        url: String,
        status: u16,
    },
    /// 401 or close 4001. `token_sent` tells "wrong" from "missing".
    TokenRejected {
        token_sent: bool,
    },
    /// The gateway said no for another reason (close 4003, error response).
    Refused {
        reason: String,
    },
    /// The gateway refused what this connect said (protocol version, node
    /// registration): retrying the same connect cannot help.
    Invalid {
        reason: String,
    },
    HandshakeTimeout {
        url: String,
    },
    Disconnected {
        url: String,
        close: CloseReason,
    },
    BadHello {
        url: String,
        detail: String,
    },
}

impl ConnectError {
    pub fn from_ws_error(url: &str, error: WsError, token_sent: bool) -> Self {
        let url = url.to_string();
        match error {
            WsError::Url(e) => ConnectError::InvalidUrl {
                url,
                reason: e.to_string(),
            },
            WsError::Http(response) if response.status().as_u16() == 401 => {
                ConnectError::TokenRejected { token_sent }
            }
            WsError::Http(response) => ConnectError::HttpStatus {
                url,
                status: response.status().as_u16(),
            },
            WsError::Io(e) => ConnectError::Unreachable {
                url,
                reason: e.to_string(),
            },
            other => ConnectError::Unreachable {
                url,
                reason: other.to_string(),
            },
        }
    }

    pub fn from_handshake_error(url: &str, error: RequestError, token_sent: bool) -> Self {
        let url = url.to_string();
        match error {
            RequestError::Gateway(e) if e.code == codes::UNAUTHORIZED => {
                ConnectError::TokenRejected { token_sent }
            }
            RequestError::Gateway(e)
                if e.code == codes::INVALID_CONNECT || e.code == codes::UNSUPPORTED_PROTOCOL =>
            {
                ConnectError::Invalid {
                    reason: e.to_string(),
                }
            }
            RequestError::Gateway(e) => ConnectError::Refused {
                reason: e.to_string(),
            },
            RequestError::Timeout { .. } => ConnectError::HandshakeTimeout { url },
            e @ (RequestError::BadParams { .. } | RequestError::BadAnswer { .. }) => {
                ConnectError::BadHello {
                    url,
                    detail: e.to_string(),
                }
            }
            RequestError::Disconnected { close, .. } => match close.code() {
                Some(close_codes::UNAUTHORIZED) => ConnectError::TokenRejected { token_sent },
                Some(close_codes::AUTH_NOT_CONFIGURED) => ConnectError::Refused {
                    reason: match close {
                        CloseReason::Closed { reason, .. } if !reason.is_empty() => reason,
                        _ => "it has no auth token configured (close code 4003)".into(),
                    },
                },
                _ => ConnectError::Disconnected { url, close },
            },
        }
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::Unreachable { url, reason } => write!(
                f,
                "Cannot reach the gateway at {url}: {reason}. Is it running? \
                 Start it with the README's first command, or {URL_HINT}."
            ),
            ConnectError::InvalidUrl { url, reason } => write!(
                f,
                "`{url}` is not a usable gateway URL ({reason}). It should look like \
                 ws://localhost:8787/ws or wss://<your-worker>.workers.dev/ws; {URL_HINT} \
                 or run `gsv local-config set gateway.url <url>`."
            ),
            ConnectError::HttpStatus { url, status } => write!(
                f,
                "The server at {url} answered HTTP {status} instead of opening a WebSocket. \
                 Check the URL: the gateway's endpoint ends in /ws ({URL_HINT})."
            ),
            ConnectError::TokenRejected { token_sent: true } => write!(
                f,
                "The gateway rejected the token. Set it with \
                 `gsv local-config set gateway.token <token>` or --token / GSV_TOKEN."
            ),
            ConnectError::TokenRejected { token_sent: false } => write!(
                f,
                "The gateway requires a token and none is set. Set it with \
                 `gsv local-config set gateway.token <token>` or --token / GSV_TOKEN."
            ),
            ConnectError::Refused { reason } => {
                write!(f, "The gateway refused the connection: {reason}")
            }
            ConnectError::Invalid { reason } => {
                write!(f, "The gateway refused this connection as sent: {reason}")
            }
            ConnectError::HandshakeTimeout { url } => write!(
                f,
                "The gateway at {url} opened the WebSocket but did not answer `connect` \
                 within {} s. Is the URL a gsv gateway?",
                super::HANDSHAKE_TIMEOUT.as_secs()
            ),
            ConnectError::Disconnected { url, close } => {
                write!(f, "Connecting to the gateway at {url} failed: {close}.")
            }
            ConnectError::BadHello { url, detail } => write!(
                f,
                "The gateway at {url} answered `connect` in an unexpected way ({detail}). \
                 Are gsv and the gateway the same version?"
            ),
        }
    }
}

impl std::error::Error for ConnectError {}
