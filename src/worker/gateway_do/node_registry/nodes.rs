//! Nodes on the Gateway: the tool registry (one row per connected node),
//! tool calls routed to nodes and their results routed back to whoever
//! asked (a Session or a client's deferred `tool.invoke`), background
//! commands reported back to their session, and the deadlines of calls.
//! Everything is in SQLite so it survives hibernation and restarts.

use super::super::revisions::KnownNodes;
use super::store::{RouteRow, ROUTE_GRACE_MS};
use super::Gateway;
use crate::gateway::nodes::{
    host_info, id_taken, namespaced, split_tool_name, validate_node, IdTaken, RouteAsker,
};
use crate::session::internal::{NodeSnapshot, SessionExecEvent};
use crate::worker::bindings::SessionStub;
use crate::worker::gateway_do::{to_value, Attachment};
use crate::worker::native_tools;
use crate::worker::rpc::{internal_error, now_ms};
use gsv_protocol::*;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::HashMap;
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

/// A background command is followed this long.
const EXEC_SESSION_TTL_MS: i64 = 24 * 3600 * 1000;

/// The routes this instance wrote, as their rows have them: a node's
/// answer finds its route without a query. Every write to the routes
/// table is mirrored here; a route written before the object last woke
/// is read from SQLite.
#[derive(Default)]
pub(super) struct KeptRoutes(RefCell<HashMap<String, RouteRow>>);

impl KeptRoutes {
    fn insert(&self, route: RouteRow) {
        self.0.borrow_mut().insert(route.call_id.clone(), route);
    }

    fn get(&self, call_id: &str) -> Option<RouteRow> {
        self.0.borrow().get(call_id).cloned()
    }

    fn remove(&self, call_id: &str) {
        self.0.borrow_mut().remove(call_id);
    }

    /// A client's connection went: its calls' routes go with it.
    fn remove_client(&self, conn_id: &str) {
        self.0
            .borrow_mut()
            .retain(|_, r| !(r.kind == "client" && r.conn_id.as_deref() == Some(conn_id)));
    }
}

/// How many answered routes wait to be deleted with the next route written.
const MAX_ANSWERED_ROUTES: usize = 64;

/// Who waits for a call's result.
pub(in crate::worker::gateway_do) enum Asker<'a> {
    /// A session's call; `again` when the session sends it a second time,
    /// not knowing whether the first arrived.
    Session {
        key: &'a str,
        again: bool,
    },
    Client {
        conn_id: &'a str,
        frame_id: &'a str,
    },
}

/// A connected node: its registry row, when its socket is live.
pub(super) struct LiveNode {
    pub ws: WebSocket,
    pub conn_id: String,
    pub tools: Vec<ToolDefinition>,
    pub runtime: NodeRuntimeInfo,
}

impl Gateway {
    /// Checks a node's connect and records its tools (replacing any
    /// earlier registration of the same id).
    pub(in crate::worker::gateway_do) fn register_node(
        &self,
        conn_id: &str,
        p: &ConnectParams,
    ) -> Res<()> {
        let tools = p.tools.clone().unwrap_or_default();
        let runtime = validate_node(&p.client.id, &tools, p.node_runtime.as_ref())
            .map_err(|e| ErrorShape::new(codes::INVALID_CONNECT, e.to_string()))?;
        self.node_store()
            .save_node(&p.client.id, conn_id, &tools, &runtime, now_ms())?;
        self.revisions.nodes_changed();
        Ok(())
    }

    /// The registered nodes whose socket is open (a restart loses sockets
    /// without a close event; their rows are ignored until they return).
    pub(super) fn live_nodes(&self) -> Res<Vec<(String, LiveNode)>> {
        let rows = self.node_store().nodes()?;
        let sockets = self.sockets();
        let mut live = Vec::new();
        for row in rows {
            let Some((ws, _)) = sockets.iter().find(|(_, a)| a.conn_id == row.conn_id) else {
                continue;
            };
            let (Ok(tools), Ok(runtime)) = (
                serde_json::from_str(&row.tools),
                serde_json::from_str(&row.runtime),
            ) else {
                continue;
            };
            live.push((
                row.node_id,
                LiveNode {
                    ws: ws.clone(),
                    conn_id: row.conn_id,
                    tools,
                    runtime,
                },
            ));
        }
        Ok(live)
    }

    /// The open socket of a connected node.
    pub(super) fn live_node_socket(&self, node_id: &str) -> Option<WebSocket> {
        let known = self.known_nodes().ok()?;
        self.socket_in(&known, node_id)
    }

    /// The open socket of node `node_id` in `known`, found without reading
    /// its tools.
    fn socket_in(&self, known: &KnownNodes, node_id: &str) -> Option<WebSocket> {
        let (_, conn_id) = known.conns.iter().find(|(id, _)| id == node_id)?;
        let sockets = self.sockets();
        let found = sockets.iter().find(|(_, a)| &a.conn_id == conn_id);
        found.map(|(ws, _)| ws.clone())
    }

    /// The node tools and hosts a run gets, and each node's connection
    /// (kept as `KnownNodes`, see `known_nodes`).
    pub(in crate::worker::gateway_do) fn node_snapshot(
        &self,
    ) -> Res<(NodeSnapshot, Vec<(String, String)>)> {
        let mut snapshot = NodeSnapshot::default();
        let mut conns = Vec::new();
        for (id, node) in self.live_nodes()? {
            snapshot.tools.extend(namespaced(&id, &node.tools));
            snapshot.hosts.push(host_info(&id, &node.runtime));
            conns.push((id, node.conn_id));
        }
        Ok((snapshot, conns))
    }

    /// The connected nodes as skill eligibility sees them, bin status included.
    pub(in crate::worker::gateway_do) fn hosts(&self) -> Res<Vec<crate::skills::HostInfo>> {
        Ok(self.known_nodes()?.snapshot.hosts.clone())
    }

    /// `tools.list`: the native tools, then every connected node's.
    pub(in crate::worker::gateway_do) fn tools_list(&self) -> Res<ToolsListResult> {
        let mut tools = native_tools::definitions(true);
        let nodes = self.known_nodes()?.snapshot;
        if !nodes.hosts.is_empty() {
            tools.push(crate::gateway::transfer::definition());
        }
        tools.extend(nodes.tools.iter().cloned());
        Ok(ToolsListResult { tools })
    }

    /// Sends a tool call to the node that offers it and records who waits,
    /// until `timeouts.toolMs` from now.
    pub(in crate::worker::gateway_do) async fn send_tool_call(
        &self,
        call_id: &str,
        tool: &str,
        args: Value,
        asker: Asker<'_>,
    ) -> Res<()> {
        let deadline_ms = self
            .config
            .borrow()
            .u64_at("timeouts.toolMs")
            .unwrap_or(60_000) as i64;
        let Some((node_id, name)) = split_tool_name(tool) else {
            return Err(ErrorShape::new(
                codes::NOT_FOUND,
                format!("Unknown tool {tool}: node tools are named {{nodeId}}__{{Tool}}"),
            ));
        };
        // Found in what sessions get, built once per change of the nodes:
        // the nodes' tools are not read and parsed again for each call.
        let known = self.known_nodes()?;
        let Some(ws) = self.socket_in(&known, node_id) else {
            return Err(ErrorShape::new(
                codes::UNAVAILABLE,
                format!("Node {node_id} is not connected"),
            ));
        };
        if !known.snapshot.tools.iter().any(|t| t.name == tool) {
            return Err(ErrorShape::new(
                codes::NOT_FOUND,
                format!("Node {node_id} has no tool {name}"),
            ));
        }
        let (kind, session_key, again, conn_id, frame_id) = match asker {
            Asker::Session { key, again } => ("session", Some(key), again, None, None),
            Asker::Client { conn_id, frame_id } => {
                ("client", None, false, Some(conn_id), Some(frame_id))
            }
        };
        if again
            && session_key.is_some_and(|k| self.nodes.answered_calls.borrow().contains(k, call_id))
        {
            // Answered already: the answer goes to the session on its own.
            return Ok(());
        }
        let now = now_ms();
        let deadline_at = now + deadline_ms;
        self.delete_answered_routes()?;
        let kept = RouteRow {
            call_id: call_id.to_string(),
            node_id: node_id.to_string(),
            kind: kind.to_string(),
            session_key: session_key.map(String::from),
            conn_id: conn_id.map(String::from),
            frame_id: frame_id.map(String::from),
        };
        let store = self.node_store();
        if !store.add_route(&kept, now, deadline_at)? {
            if self.already_out(call_id, session_key, again)? {
                return Ok(());
            }
            store.replace_route(&kept, now, deadline_at)?;
        }
        self.nodes.kept_routes.insert(kept);
        let evt = ToolInvokeEvent {
            call_id: call_id.to_string(),
            tool: name.to_string(),
            args,
        };
        let frame = Frame::event_json(event::TOOL_INVOKE, &evt).map_err(internal_error)?;
        if ws.send_with_str(&frame).is_err() {
            self.delete_route(call_id)?;
            return Err(ErrorShape::new(
                codes::UNAVAILABLE,
                format!("Node {node_id} is not connected"),
            ));
        }
        let expires_at = match kind {
            "client" => deadline_at,
            _ => deadline_at + ROUTE_GRACE_MS,
        };
        self.schedule_alarm_by(expires_at).await;
        Ok(())
    }

    /// Whether a call whose id has a route already is out at its node (an
    /// error if the id is another asker's; false: the old route gives
    /// way), as `gateway::nodes::id_taken` says.
    fn already_out(&self, call_id: &str, session_key: Option<&str>, again: bool) -> Res<bool> {
        let route = self.route(call_id)?;
        let existing = route
            .as_ref()
            .map(|r| match (r.kind.as_str(), &r.session_key) {
                ("session", Some(key)) => RouteAsker::Session(key),
                _ => RouteAsker::Client,
            });
        let asker = session_key.map_or(RouteAsker::Client, RouteAsker::Session);
        match id_taken(existing, asker, again) {
            IdTaken::AlreadyOut => Ok(true),
            IdTaken::Outlived => Ok(false),
            IdTaken::Refused => Err(ErrorShape::new(
                codes::CONFLICT,
                format!("Call {call_id} is already out at a node"),
            )),
        }
    }

    /// `tool.invoke` from a client: answered when the node answers.
    pub(in crate::worker::gateway_do) async fn tool_invoke(
        &self,
        att: &Attachment,
        frame_id: &str,
        p: ToolInvokeParams,
    ) -> Res<()> {
        let call_id = crate::worker::rpc::new_id();
        let asker = Asker::Client {
            conn_id: &att.conn_id,
            frame_id,
        };
        self.send_tool_call(&call_id, &p.tool, p.args, asker).await
    }

    /// `tool.request` from a client, v1's socket form of a Session's node
    /// call: the result goes to the session, which keeps it only when its
    /// current turn waits for that call id. A call id already out is
    /// refused, so no one can take over the route of a session's call.
    pub(in crate::worker::gateway_do) async fn client_tool_request(
        &self,
        p: ToolRequestParams,
    ) -> Res<ToolRequestResult> {
        let bad =
            |what: &str| ErrorShape::new(codes::BAD_REQUEST, format!("{what} must not be empty"));
        if p.call_id.trim().is_empty() {
            return Err(bad("callId"));
        }
        if p.session_key.trim().is_empty() {
            return Err(bad("sessionKey"));
        }
        if self.route(&p.call_id)?.is_some() {
            return Err(ErrorShape::new(
                codes::CONFLICT,
                format!("Call {} is already out at a node", p.call_id),
            ));
        }
        let key = self.canonical_key(&p.session_key);
        let asker = Asker::Session {
            key: &key,
            again: false,
        };
        self.send_tool_call(&p.call_id, &p.tool, p.args, asker)
            .await?;
        Ok(ToolRequestResult::Sent)
    }

    /// The routes read, but those answered already.
    fn unanswered(&self, rows: Res<Vec<RouteRow>>) -> Res<Vec<RouteRow>> {
        Ok(rows?
            .into_iter()
            .filter(|r| !self.is_answered(&r.call_id))
            .collect())
    }

    /// Answered routes not deleted yet are left out of every lookup.
    fn is_answered(&self, call_id: &str) -> bool {
        self.nodes
            .answered_routes
            .borrow()
            .iter()
            .any(|answered| answered == call_id)
    }

    /// A session's call was answered. Its route goes with the next route
    /// written (one write then, not two), at the latest at its expiry: an
    /// answer costs the Gateway no write of its own. Should the object stop
    /// first, the route stays until it expires, and a result sent again
    /// for it reaches a session that keeps only the first.
    fn route_answered(&self, call_id: String) -> Res<()> {
        let mut answered = self.nodes.answered_routes.borrow_mut();
        answered.push(call_id);
        if answered.len() >= MAX_ANSWERED_ROUTES {
            drop(answered);
            return self.delete_answered_routes();
        }
        Ok(())
    }

    fn delete_answered_routes(&self) -> Res<()> {
        let answered = self.nodes.answered_routes.take();
        for call_id in &answered {
            self.delete_route(call_id)?;
        }
        Ok(())
    }

    fn route(&self, call_id: &str) -> Res<Option<RouteRow>> {
        if let Some(route) = self.nodes.kept_routes.get(call_id) {
            return Ok((!self.is_answered(call_id)).then_some(route));
        }
        Ok(self
            .unanswered(self.node_store().route(call_id))?
            .into_iter()
            .next())
    }

    fn delete_route(&self, call_id: &str) -> Res<()> {
        self.node_store().delete_route(call_id)?;
        self.nodes.kept_routes.remove(call_id);
        Ok(())
    }

    /// `tool.result` from a node: handed to whoever waits for it.
    pub(in crate::worker::gateway_do) async fn tool_result(
        &self,
        node_id: &str,
        p: ToolResultParams,
    ) -> Res<AckResult> {
        let Some(route) = self.route(&p.call_id)? else {
            return Ok(AckResult {
                ok: true,
                dropped: Some(true),
            });
        };
        if route.node_id != node_id {
            return Err(ErrorShape::new(
                codes::FORBIDDEN,
                format!(
                    "Call {} was sent to node {}, not to {node_id}",
                    p.call_id, route.node_id
                ),
            ));
        }
        if let Some(session_id) = running_exec_session(&p) {
            if let Some(key) = route.session_key.as_deref() {
                self.follow_exec(node_id, &session_id, key, &route.call_id)?;
            }
        }
        // Delivered before the route goes: a write holds back every message
        // after it until stored. Should this object stop in between, the
        // result may come again, and the session keeps only the first.
        let ack = self.deliver(&route, p).await;
        match route.kind.as_str() {
            "session" => {
                let key = route.session_key.as_deref().unwrap_or_default();
                self.nodes
                    .answered_calls
                    .borrow_mut()
                    .remember(key, &route.call_id);
                self.route_answered(route.call_id)?
            }
            _ => self.delete_route(&route.call_id)?,
        }
        ack
    }

    async fn deliver(&self, route: &RouteRow, p: ToolResultParams) -> Res<AckResult> {
        match (route.kind.as_str(), &route.session_key) {
            ("session", Some(key)) => self.result_to_session(key, &p).await,
            _ => {
                let frame_id = route.frame_id.clone().unwrap_or_default();
                let frame = match p.error {
                    Some(e) => Frame::err(frame_id, ErrorShape::new(codes::INTERNAL, e)),
                    None => Frame::ok(
                        frame_id,
                        to_value(&ToolInvokeResult {
                            result: p.result.unwrap_or(Value::Null),
                        })?,
                    ),
                };
                let asker = self
                    .sockets()
                    .iter()
                    .find(|(_, a)| Some(&a.conn_id) == route.conn_id.as_ref())
                    .cloned();
                let delivered = match asker {
                    Some((ws, _)) => ws.send_with_str(frame.to_json()).is_ok(),
                    None => false,
                };
                Ok(AckResult {
                    ok: true,
                    dropped: (!delivered).then_some(true),
                })
            }
        }
    }

    /// A node went away: every call it owed fails now, not at its timeout.
    pub(in crate::worker::gateway_do) async fn node_gone(
        &self,
        node_id: &str,
        conn_id: &str,
    ) -> Res<()> {
        // A log is read by the connection asked, whoever owns the node now.
        self.node_logs_gone(conn_id).await?;
        let store = self.node_store();
        if store.node(node_id)?.is_some_and(|r| r.conn_id != conn_id) {
            // A newer connection of the same node took over: it may still
            // deliver what the old one was running.
            return Ok(());
        }
        store.delete_node(node_id)?;
        self.revisions.nodes_changed();
        self.node_transfers_gone(node_id);
        self.node_probes_gone(node_id).await?;
        let routes = self.unanswered(store.routes_of_node(node_id))?;
        // A route goes once its failure is delivered: if the asker cannot
        // be told now (the whole runtime is going down), the node may still
        // deliver the real result after it reconnects.
        let failures = routes.iter().map(|route| async move {
            let p = ToolResultParams::failed(
                route.call_id.clone(),
                format!("node {node_id} disconnected"),
            );
            self.deliver(route, p).await?;
            self.delete_route(&route.call_id)
        });
        for r in futures::future::join_all(failures).await {
            if let Err(e) = r {
                console_error!("gateway: failing a call of {node_id}: {}", e.message);
            }
        }
        Ok(())
    }

    /// A client went away: its deferred invokes have no one to answer.
    pub(in crate::worker::gateway_do) fn client_gone(&self, conn_id: &str) -> Res<()> {
        self.node_store().delete_client_routes(conn_id)?;
        self.nodes.kept_routes.remove_client(conn_id);
        Ok(())
    }

    fn follow_exec(&self, node_id: &str, session_id: &str, key: &str, call_id: &str) -> Res<()> {
        let expires_at = now_ms() + EXEC_SESSION_TTL_MS;
        self.node_store()
            .follow_exec(node_id, session_id, key, call_id, expires_at)
    }

    /// `node.exec.event`: a background command the gateway follows ended;
    /// its session hears of it. Unknown commands are dropped.
    pub(in crate::worker::gateway_do) async fn exec_event(
        &self,
        node_id: &str,
        p: NodeExecEventParams,
    ) -> Res<AckResult> {
        let store = self.node_store();
        let Some(session_key) = store.exec_session_key(node_id, &p.session_id)? else {
            return Ok(AckResult {
                ok: true,
                dropped: Some(true),
            });
        };
        if !p.event.is_terminal() {
            return Ok(AckResult {
                ok: true,
                dropped: None,
            });
        }
        let (nodes, nodes_rev) = self.nodes_for_sessions()?;
        let ev = SessionExecEvent {
            session_key: session_key.clone(),
            node_id: node_id.to_string(),
            event: p.clone(),
            nodes: (*nodes).clone(),
            nodes_rev,
        };
        let ack = SessionStub::for_key(&self.env, &session_key)
            .call(&ev)
            .await
            .map_err(|e| ErrorShape {
                retryable: Some(true),
                ..e
            })?;
        store.delete_exec(node_id, &p.session_id)?;
        Ok(ack)
    }

    /// Deadlines: client invokes that got no answer are answered with a
    /// timeout; routes and followed commands past their time are forgotten.
    pub(super) async fn expire_tool_calls(&self, now: i64) -> Res<()> {
        self.delete_answered_routes()?;
        let due = self.unanswered(self.node_store().due_routes(now))?;
        for route in due {
            self.delete_route(&route.call_id)?;
            if route.kind == "client" {
                let tool = format!("{}__…", route.node_id);
                let p = ToolResultParams::failed(
                    route.call_id.clone(),
                    format!("{tool} did not answer in time (timeouts.toolMs)"),
                );
                self.deliver(&route, p).await?;
            }
        }
        self.node_store().expire_execs(now)
    }
}

/// A Bash result saying the command goes on in the background.
fn running_exec_session(p: &ToolResultParams) -> Option<String> {
    let r = p.result.as_ref()?;
    (r.get("status")? == "running")
        .then(|| r.get("sessionId")?.as_str().map(String::from))
        .flatten()
}
