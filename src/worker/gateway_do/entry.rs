//! The object's entry points as requests and socket messages reach it:
//! `serve` for a request (a socket to accept, or a call from the Worker's
//! router, a Session or a channel), `handle_message` for a message on a
//! client's, node's or session link's socket.

use super::requests::Reply;
use super::scheduler;
use super::{send, send_text, Attachment, Gateway};
use crate::gateway::intake::{intake_binary, intake_text, Intake};
use crate::session::internal::{path, AgentSessionsQuery, ChannelMessageRequest};
use crate::session::link::{LinkUp, Up, LINK_SESSION_HEADER};
use crate::worker::rpc::{internal_error, new_id, read_json, reply};
use gsv_protocol::channels::{
    ChannelDeliveryParams, ChannelInboundParams, ChannelStatusParams, InternalCall,
};
use gsv_protocol::method::{self, Method};
use gsv_protocol::*;
use serde_json::{json, Value};
use std::rc::Rc;
use worker::*;

impl Gateway {
    /// A request to the object: a socket to accept, or a call from the
    /// Worker's router, a Session or a channel.
    pub(super) async fn serve(&self, req: &mut Request) -> Result<Response> {
        match req.path().as_str() {
            "/ws" => {
                let pair = WebSocketPair::new()?;
                let att = Attachment {
                    conn_id: new_id(),
                    ..Default::default()
                };
                pair.server.serialize_attachment(&att)?;
                self.state.accept_web_socket(&pair.server);
                self.forget_sockets();
                if !self.woke() {
                    self.wake().await;
                }
                Response::from_websocket(pair.client)
            }
            path::EVENT_LINK => {
                let pair = WebSocketPair::new()?;
                let att = Attachment {
                    conn_id: new_id(),
                    link: true,
                    ..Default::default()
                };
                pair.server.serialize_attachment(&att)?;
                let key = req.headers().get(LINK_SESSION_HEADER)?;
                self.accept_link(&pair.server, key);
                Response::from_websocket(pair.client)
            }
            path::TOOL_REQUEST | path::TOOL_REQUEST_AGAIN => {
                let again = req.path() == path::TOOL_REQUEST_AGAIN;
                let result = match read_json::<ToolRequestParams>(req).await {
                    Ok(p) => self.tool_request(p, again).await,
                    Err(e) => Err(e),
                };
                reply(result)
            }
            path::TRANSFER => {
                let result = match read_json(req).await {
                    Ok(p) => self.start_transfer(p).await,
                    Err(e) => Err(e),
                };
                reply(result)
            }
            path::CANONICAL_KEY => reply(
                read_json::<crate::session::internal::CanonicalKey>(req)
                    .await
                    .map(|k| crate::session::internal::CanonicalKey {
                        session_key: self.canonical_key(&k.session_key),
                    }),
            ),
            path::WORKSPACE_CHANGED => reply(
                read_json::<crate::session::internal::WorkspaceChanged>(req)
                    .await
                    .map(|_| self.workspace_refresh()),
            ),
            path::AGENT_SESSIONS => reply(match read_json::<AgentSessionsQuery>(req).await {
                Ok(q) => self.agent_sessions(q),
                Err(e) => Err(e),
            }),
            path::CHAT_EVENT => {
                let evt = match read_json::<ChatEvent>(req).await {
                    Ok(evt) => evt,
                    Err(e) => return reply::<Value>(Err(e)),
                };
                let delivered = self.deliver_chat_event(&evt);
                if self.may_follow(&evt) {
                    self.route_chat_event(&evt).await;
                    self.agent_run_event(&evt).await;
                }
                reply(Ok(json!({ "delivered": delivered })))
            }
            path::TEST_CLOCK if scheduler::test_clock_enabled(&self.env) => {
                let result = match read_json::<scheduler::AdvanceClock>(req).await {
                    Ok(a) => Ok(self.advance_clock(a).await),
                    Err(e) => Err(e),
                };
                reply(result)
            }
            path::GATEWAY_TOOL => {
                let result = match read_json::<crate::agent_tools::GatewayToolCall>(req).await {
                    Ok(call) => self.gateway_tool(call).await,
                    Err(e) => Err(e),
                };
                reply(result)
            }
            path::ASK_APPROVAL => {
                let result = match read_json::<crate::session::internal::AskApproval>(req).await {
                    Ok(a) => self.ask_approval(a).await,
                    Err(e) => Err(e),
                };
                reply(result)
            }
            path::AUDIT => {
                let result = match read_json::<crate::session::internal::AuditRecord>(req).await {
                    Ok(r) => self.audit_record(r),
                    Err(e) => Err(e),
                };
                reply(result)
            }
            path::CRON_TOOL => {
                let result = match read_json::<crate::schedule::tool::CronToolRequest>(req).await {
                    Ok(r) => self.cron_tool(r).await,
                    Err(e) => Err(e),
                };
                reply(result)
            }
            path::CHANNEL_MESSAGE => {
                let result = match read_json::<ChannelMessageRequest>(req).await {
                    Ok(r) => self.channel_message(r).await,
                    Err(e) => Err(e),
                };
                reply(result)
            }
            // Reached only through the Worker's router, which checked the
            // channel key.
            ChannelInboundParams::PATH => {
                let result = match read_json::<ChannelInboundParams>(req).await {
                    Ok(p) => self.channel_inbound(p).await,
                    Err(e) => Err(e),
                };
                reply(result)
            }
            ChannelStatusParams::PATH => reply(match read_json::<ChannelStatusParams>(req).await {
                Ok(p) => self.channel_status_changed(p),
                Err(e) => Err(e),
            }),
            ChannelDeliveryParams::PATH => {
                reply(match read_json::<ChannelDeliveryParams>(req).await {
                    Ok(p) => self.channel_delivery(p),
                    Err(e) => Err(e),
                })
            }
            // The Worker's cron trigger (a safety net for the alarm).
            path::WAKE => {
                self.wake().await;
                Response::ok("ok")
            }
            _ => Response::error("Not found", 404),
        }
    }

    /// A message on a client's, node's or session link's socket.
    pub(super) async fn handle_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        // Read once per message (kept while nothing changes: attachments.rs).
        let att: Result<Option<Rc<Attachment>>> = self.attachments.read(&ws);
        let req = match message {
            WebSocketIncomingMessage::Binary(bytes) => {
                let node = att
                    .ok()
                    .flatten()
                    .and_then(|a| a.peer.clone())
                    .filter(|p| p.mode == ClientMode::Node)
                    .map(|p| p.client_id);
                return match node {
                    // File transfer chunks; a bad one is answered like a bad frame.
                    Some(node) => match self.transfer_chunk(&node, &bytes) {
                        Ok(()) => Ok(()),
                        Err(e) => send(&ws, &Frame::err(String::new(), e)),
                    },
                    None => send(&ws, &intake_binary(bytes.len())),
                };
            }
            WebSocketIncomingMessage::String(text) if matches!(&att, Ok(Some(a)) if a.link) => {
                let evt = match LinkUp::read(&text) {
                    Ok(Up::Event(text)) => serde_json::from_str::<ChatEvent>(text),
                    Ok(Up::Link(up)) => {
                        self.link_up(&ws, att.ok().flatten(), up).await;
                        return Ok(());
                    }
                    Err(e) => Err(e),
                };
                match evt {
                    Ok(evt) => {
                        self.deliver_chat_event(&evt);
                        if self.may_follow(&evt) {
                            self.route_chat_event(&evt).await;
                            self.agent_run_event(&evt).await;
                        }
                    }
                    Err(e) => console_error!("gateway: bad message on a session link: {e}"),
                }
                return Ok(());
            }
            WebSocketIncomingMessage::String(text) => match intake_text(&text) {
                Intake::Request(req) => req,
                Intake::Ignore => return Ok(()),
                Intake::Reject(frame) => return send(&ws, &frame),
            },
        };
        let id = req.id.clone();
        let connect = req.method == method::Connect::NAME;
        let answer = match self.handle_request(&ws, att, req).await {
            Ok(Reply::Now(payload)) => Frame::ok_json(&id, &payload).map_err(internal_error),
            // The handler keeps this frame's id to answer with.
            Ok(Reply::Later) => return Ok(()),
            Err(err) => Err(err),
        };
        let ok = answer.is_ok();
        match answer {
            Ok(text) => send_text(&ws, &text),
            Err(err) => send(&ws, &Frame::err(id, err))?,
        }
        if connect && ok {
            self.connected(&ws).await;
        }
        Ok(())
    }
}
