//! `connect`: the handshake that gives a socket its peer (mode and id),
//! checked before any other request is answered.

use super::{Attachment, Gateway, Peer};
use crate::gateway::auth::{tokens_match, NO_TOKEN_CONFIGURED};
use gsv_protocol::*;
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

impl Gateway {
    /// After a successful `connect`: a node gets its bins probed.
    pub(super) async fn connected(&self, ws: &WebSocket) {
        let Some(att) = self.attachments.read(ws).ok().flatten() else {
            return;
        };
        let Some(peer) = att.peer.as_ref().filter(|p| p.mode == ClientMode::Node) else {
            return;
        };
        if let Err(e) = self.node_logs_replaced(&peer.client_id, &att.conn_id).await {
            console_error!(
                "gateway: failing the log calls of {}'s old connection: {}",
                peer.client_id,
                e.message
            );
        }
        if let Err(e) = self.node_connected(&peer.client_id).await {
            console_error!(
                "gateway: probing node {} failed: {}",
                peer.client_id,
                e.message
            );
        }
    }

    /// Checks the `connect` params and the token, then records the peer.
    pub(super) fn handle_connect(
        &self,
        ws: &WebSocket,
        att: &mut Attachment,
        p: ConnectParams,
    ) -> Res<HelloOkResult> {
        if p.min_protocol > PROTOCOL_VERSION
            || p.max_protocol < PROTOCOL_VERSION
            || p.min_protocol > p.max_protocol
        {
            return Err(ErrorShape::new(
                codes::UNSUPPORTED_PROTOCOL,
                format!(
                    "Unsupported protocol: this gateway speaks version {PROTOCOL_VERSION}, the client offers {}–{}",
                    p.min_protocol, p.max_protocol
                ),
            ));
        }
        if p.client.id.trim().is_empty() {
            return Err(ErrorShape::new(
                codes::INVALID_CONNECT,
                "client.id must not be empty",
            ));
        }
        match p.client.mode {
            ClientMode::Node if p.tools.as_ref().is_none_or(|t| t.is_empty()) => {
                return Err(ErrorShape::new(
                    codes::INVALID_CONNECT,
                    "A node must register at least one tool",
                ));
            }
            ClientMode::Channel if p.client.channel.as_deref().is_none_or(str::is_empty) => {
                return Err(ErrorShape::new(
                    codes::INVALID_CONNECT,
                    "A channel connection must name its channel",
                ));
            }
            _ => {}
        }
        self.check_token(ws, p.auth.as_ref().and_then(|a| a.token.as_deref()))?;
        if p.client.mode == ClientMode::Node {
            self.register_node(&att.conn_id, &p)?;
        }

        let client_id = match (&p.client.mode, &p.client.channel) {
            (ClientMode::Channel, Some(ch)) => {
                format!(
                    "{ch}:{}",
                    p.client.account_id.as_deref().unwrap_or(&p.client.id)
                )
            }
            _ => p.client.id.clone(),
        };
        self.replace_older(ws, p.client.mode, &client_id);
        att.peer = Some(Peer {
            mode: p.client.mode,
            client_id,
        });
        self.save_attachment(ws, att)?;
        Ok(HelloOkResult {
            kind: HelloOkTag::HelloOk,
            protocol: PROTOCOL_VERSION,
            server: ServerInfo {
                version: env!("CARGO_PKG_VERSION").into(),
                connection_id: att.conn_id.clone(),
            },
            features: Features {
                methods: advertised_methods(),
                events: advertised_events(),
            },
        })
    }

    /// Refuses the connection unless the token matches: the error response
    /// goes out first, the socket is closed just after it.
    fn check_token(&self, ws: &WebSocket, given: Option<&str>) -> Res<()> {
        let expected = self
            .env
            .secret("GSV_AUTH_TOKEN")
            .map(|s| s.to_string())
            .ok()
            .filter(|t| !t.is_empty());
        let (err, code, reason) = match expected {
            Some(expected) if tokens_match(&expected, given.unwrap_or_default()) => return Ok(()),
            Some(_) => (
                ErrorShape::new(
                    codes::UNAUTHORIZED,
                    "Unauthorized: the token is missing or wrong",
                ),
                close_codes::UNAUTHORIZED,
                "Unauthorized",
            ),
            // Not the client's fault: 503, so clients show the instructions
            // instead of asking for a different token.
            None => (
                ErrorShape::new(codes::UNAVAILABLE, NO_TOKEN_CONFIGURED),
                close_codes::AUTH_NOT_CONFIGURED,
                "No auth token configured on the gateway",
            ),
        };
        let ws = ws.clone();
        self.state.wait_until(async move {
            worker::Delay::from(std::time::Duration::from_millis(50)).await;
            let _ = ws.close(Some(code), Some(reason));
        });
        Err(err)
    }

    fn replace_older(&self, ws: &WebSocket, mode: ClientMode, client_id: &str) {
        for (other, att) in self.sockets().iter() {
            let same = att
                .peer
                .as_ref()
                .is_some_and(|p| p.mode == mode && p.client_id == client_id);
            if same && other != ws {
                let reason = match mode {
                    ClientMode::Client => "Replaced by newer client connection",
                    ClientMode::Node => "Replaced by newer node connection",
                    ClientMode::Channel => "Replaced by newer channel connection",
                };
                let _ = other.close(Some(close_codes::NORMAL), Some(reason));
            }
        }
        self.forget_sockets();
    }
}
