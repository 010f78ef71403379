//! The Gateway Durable Object (one, named "singleton"): accepts WebSockets
//! with the hibernation API, answers every request frame, keeps the config,
//! and fans `chat` events out to the clients watching a session.

mod nodes;
mod probes;
mod transfer;

use super::rpc::{call_object, internal_error, new_id, now_ms, read_json, reply};
use super::sql::migrate;
use super::workspace::prompt_load;
use super::workspace::rpc as workspace_rpc;
use crate::config::Config;
use crate::gateway::auth::{tokens_match, NO_TOKEN_CONFIGURED};
use crate::gateway::intake::{intake_binary, intake_text, Intake};
use crate::gateway::methods::{advertised_events, advertised_methods, authorize};
use crate::routing::{canonicalize_session_key, RoutingConfig};
use crate::session::internal::{
    path, AgentSessionsQuery, SessionChatSend, SessionChatSendReply, SessionQuery,
};
use crate::skills::skills_status;
use gsv_protocol::*;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::{json, Value};
use std::cell::RefCell;
use worker::*;

const MIGRATIONS: &[&str] = &[
    "CREATE TABLE config (id INTEGER PRIMARY KEY CHECK (id = 1), overrides TEXT NOT NULL)",
    // The sessions the gateway has routed to, for sessions.list.
    "CREATE TABLE sessions (session_key TEXT PRIMARY KEY, created_at INTEGER NOT NULL, last_active_at INTEGER NOT NULL, label TEXT);
     CREATE INDEX sessions_by_activity ON sessions (last_active_at DESC)",
    // Connected nodes and their tools, tool calls out at nodes (who waits
    // for each), and background commands whose end a session waits for.
    "CREATE TABLE nodes (node_id TEXT PRIMARY KEY, conn_id TEXT NOT NULL, tools TEXT NOT NULL,
        runtime TEXT NOT NULL, connected_at INTEGER NOT NULL);
     CREATE TABLE tool_calls (call_id TEXT PRIMARY KEY, node_id TEXT NOT NULL, kind TEXT NOT NULL,
        session_key TEXT, conn_id TEXT, frame_id TEXT, created_at INTEGER NOT NULL, deadline_at INTEGER NOT NULL);
     CREATE INDEX tool_calls_by_node ON tool_calls (node_id);
     CREATE TABLE exec_sessions (node_id TEXT NOT NULL, session_id TEXT NOT NULL, session_key TEXT NOT NULL,
        call_id TEXT NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (node_id, session_id))",
    // Skill bin probes out at nodes and the skills.update requests waiting on them.
    probes::MIGRATION,
];

/// How many sessions one socket follows at most (the newest are kept).
const MAX_WATCHED: usize = 64;

/// What a socket is; kept in its attachment so it survives hibernation.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Attachment {
    conn_id: String,
    #[serde(default)]
    peer: Option<Peer>,
    /// Canonical session keys whose `chat` events this socket receives.
    #[serde(default)]
    watch: Vec<String>,
    /// An internal event link from a Session object, not a client.
    #[serde(default)]
    link: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Peer {
    mode: ClientMode,
    client_id: String,
}

#[durable_object]
pub struct Gateway {
    state: State,
    env: Env,
    config: RefCell<Config>,
    /// Derived from `config`, rebuilt when it changes.
    routing: RefCell<RoutingConfig>,
    /// Open sockets and their attachments; rebuilt after hibernation.
    sockets: RefCell<Option<Vec<(WebSocket, Attachment)>>>,
    /// File transfers in progress, by transfer id.
    transfers: RefCell<std::collections::HashMap<u32, transfer::Transfer>>,
    next_transfer: std::cell::Cell<u32>,
}

impl DurableObject for Gateway {
    fn new(state: State, env: Env) -> Self {
        let sql = state.storage().sql();
        let config = match migrate(&sql, MIGRATIONS, now_ms()).and_then(|_| load_config(&sql)) {
            Ok(c) => c,
            Err(e) => {
                console_error!("gateway: loading config failed, using defaults: {e}");
                Config::default()
            }
        };
        Self {
            state,
            env,
            routing: RefCell::new(RoutingConfig::from_config(&config)),
            config: RefCell::new(config),
            sockets: RefCell::new(None),
            transfers: RefCell::new(Default::default()),
            next_transfer: std::cell::Cell::new(0),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        match req.path().as_str() {
            "/ws" => {
                let pair = WebSocketPair::new()?;
                let att = Attachment {
                    conn_id: new_id(),
                    ..Default::default()
                };
                pair.server.serialize_attachment(&att)?;
                self.state.accept_web_socket(&pair.server);
                self.sockets.replace(None);
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
                self.state.accept_web_socket(&pair.server);
                Response::from_websocket(pair.client)
            }
            path::TOOL_REQUEST => {
                let result = match read_json::<ToolRequestParams>(&mut req).await {
                    Ok(p) => self.tool_request(p).await,
                    Err(e) => Err(e),
                };
                reply(result)
            }
            path::TRANSFER => {
                let result = match read_json(&mut req).await {
                    Ok(p) => self.start_transfer(p).await,
                    Err(e) => Err(e),
                };
                reply(result)
            }
            path::AGENT_SESSIONS => reply(match read_json::<AgentSessionsQuery>(&mut req).await {
                Ok(q) => self.agent_sessions(q),
                Err(e) => Err(e),
            }),
            path::CHAT_EVENT => {
                let result = match read_json::<ChatEvent>(&mut req).await {
                    Ok(evt) => Ok(json!({ "delivered": self.deliver_chat_event(&evt) })),
                    Err(e) => Err(e),
                };
                reply(result)
            }
            _ => Response::error("Not found", 404),
        }
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        let req = match message {
            WebSocketIncomingMessage::Binary(bytes) => {
                let att: Option<Attachment> = ws.deserialize_attachment().ok().flatten();
                let node = att
                    .and_then(|a| a.peer)
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
            WebSocketIncomingMessage::String(text) if is_link(&ws) => {
                match serde_json::from_str::<ChatEvent>(&text) {
                    Ok(evt) => {
                        self.deliver_chat_event(&evt);
                    }
                    Err(e) => console_error!("gateway: bad event on a session link: {e}"),
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
        let connect = req.method == method::CONNECT;
        let frame = match self.handle_request(&ws, req).await {
            Ok(Some(payload)) => Frame::ok(id, payload),
            // Answered later (tool.invoke, skills.update), with this frame's id.
            Ok(None) => return Ok(()),
            Err(err) => Frame::err(id, err),
        };
        send(&ws, &frame)?;
        if connect && matches!(&frame, Frame::Res(r) if r.ok) {
            self.connected(&ws).await;
        }
        Ok(())
    }

    async fn alarm(&self) -> Result<Response> {
        if let Err(e) = self.expire(now_ms()).await {
            console_error!("gateway: expiring tool calls failed: {}", e.message);
        }
        if let Err(e) = self.expire_probes(now_ms()).await {
            console_error!("gateway: expiring bin probes failed: {}", e.message);
        }
        self.schedule_alarm().await;
        Response::ok("ok")
    }

    async fn websocket_close(
        &self,
        ws: WebSocket,
        code: usize,
        _reason: String,
        _clean: bool,
    ) -> Result<()> {
        self.sockets.replace(None);
        self.forget(&ws).await;
        // Completes the closing handshake; the socket may already be gone.
        let code = if (1000..5000).contains(&code) && code != 1005 && code != 1006 {
            code as u16
        } else {
            1000
        };
        let _ = ws.close(Some(code), Some("closed"));
        Ok(())
    }

    async fn websocket_error(&self, ws: WebSocket, _error: Error) -> Result<()> {
        self.sockets.replace(None);
        self.forget(&ws).await;
        Ok(())
    }
}

fn is_link(ws: &WebSocket) -> bool {
    ws.deserialize_attachment::<Attachment>()
        .ok()
        .flatten()
        .is_some_and(|a| a.link)
}

fn send(ws: &WebSocket, frame: &Frame) -> Result<()> {
    // A socket that closed meanwhile cannot be answered; that is not an error.
    if let Err(e) = ws.send_with_str(frame.to_json()) {
        console_log!("gateway: dropping frame for a closed socket: {e}");
    }
    Ok(())
}

fn load_config(sql: &SqlStorage) -> Result<Config> {
    #[derive(Deserialize)]
    struct Row {
        overrides: String,
    }
    let rows: Vec<Row> = sql
        .exec("SELECT overrides FROM config WHERE id = 1", None)?
        .to_array()?;
    Ok(match rows.first() {
        Some(row) => Config::from_overrides(serde_json::from_str(&row.overrides)?),
        None => Config::default(),
    })
}

fn params<T: DeserializeOwned>(req: &RequestFrame) -> std::result::Result<T, ErrorShape> {
    let value = req
        .params
        .clone()
        .unwrap_or(Value::Object(Default::default()));
    serde_json::from_value(value).map_err(|e| {
        ErrorShape::new(
            codes::BAD_REQUEST,
            format!("Invalid params for {}: {e}", req.method),
        )
    })
}

fn to_value<T: Serialize>(v: &T) -> std::result::Result<Value, ErrorShape> {
    serde_json::to_value(v).map_err(internal_error)
}

impl Gateway {
    /// A socket closed: what it owed or waited for is settled.
    async fn forget(&self, ws: &WebSocket) {
        let Some(att) = ws.deserialize_attachment::<Attachment>().ok().flatten() else {
            return;
        };
        let result = match &att.peer {
            Some(p) if p.mode == ClientMode::Node => {
                self.node_gone(&p.client_id, &att.conn_id).await
            }
            Some(_) => self
                .client_gone(&att.conn_id)
                .and_then(|()| self.client_updates_gone(&att.conn_id)),
            None => Ok(()),
        };
        if let Err(e) = result {
            console_error!("gateway: cleaning up after a socket failed: {}", e.message);
        }
    }

    /// After a successful `connect`: a node gets its bins probed.
    async fn connected(&self, ws: &WebSocket) {
        let Some(att) = ws.deserialize_attachment::<Attachment>().ok().flatten() else {
            return;
        };
        let Some(peer) = att.peer.filter(|p| p.mode == ClientMode::Node) else {
            return;
        };
        if let Err(e) = self.node_connected(&peer.client_id).await {
            console_error!(
                "gateway: probing node {} failed: {}",
                peer.client_id,
                e.message
            );
        }
    }

    /// A Session's node tool call.
    async fn tool_request(&self, p: ToolRequestParams) -> std::result::Result<Value, ErrorShape> {
        let asker = nodes::Asker::Session(&p.session_key);
        self.send_tool_call(&p.call_id, &p.tool, p.args, asker)
            .await?;
        Ok(json!({"status": "sent"}))
    }

    /// The answer to a request frame; `None` when it is sent later.
    async fn handle_request(
        &self,
        ws: &WebSocket,
        req: RequestFrame,
    ) -> std::result::Result<Option<Value>, ErrorShape> {
        let mut att: Attachment = ws
            .deserialize_attachment()
            .map_err(internal_error)?
            .unwrap_or_default();
        if req.method == method::CONNECT {
            if att.peer.is_some() {
                return Err(ErrorShape::new(codes::BAD_REQUEST, "Already connected"));
            }
            return self.handle_connect(ws, &mut att, params(&req)?).map(Some);
        }
        let Some(peer) = att.peer.clone() else {
            return Err(ErrorShape::new(
                codes::NOT_CONNECTED,
                "Not connected: send a connect request first",
            ));
        };
        authorize(peer.mode, &req.method)?;
        if req.method == method::TOOL_INVOKE {
            self.tool_invoke(&att, &req.id, params(&req)?).await?;
            return Ok(None);
        }
        if req.method == method::SKILLS_UPDATE {
            return self.skills_update(&att, &req.id, params(&req)?).await;
        }
        self.dispatch(ws, att, peer, req).await.map(Some)
    }

    async fn dispatch(
        &self,
        ws: &WebSocket,
        mut att: Attachment,
        peer: Peer,
        req: RequestFrame,
    ) -> std::result::Result<Value, ErrorShape> {
        match req.method.as_str() {
            method::TOOLS_LIST => self.tools_list(),
            method::TOOL_RESULT => self.tool_result(&peer.client_id, params(&req)?).await,
            method::NODE_EXEC_EVENT => self.exec_event(&peer.client_id, params(&req)?).await,
            method::NODE_PROBE_RESULT => self.probe_result(&peer.client_id, params(&req)?).await,
            method::TRANSFER_STATUS => self.transfer_status(&peer.client_id, params(&req)?).await,
            method::CHAT_ABORT => {
                let p: ChatAbortParams = params(&req)?;
                self.session_query(ws, &mut att, path::ABORT, p.session_key, None)
                    .await
            }
            method::CHAT_SEND => self.chat_send(ws, &mut att, params(&req)?).await,
            method::CONFIG_GET => self.config_get(params(&req)?),
            method::CONFIG_SET => self.config_set(params(&req)?),
            method::SESSION_GET => {
                let p: SessionGetParams = params(&req)?;
                self.session_query(ws, &mut att, path::GET, p.session_key, None)
                    .await
            }
            method::SESSIONS_LIST => to_value(&self.sessions_list(params(&req)?)?),
            method::SESSION_STATS => {
                let p: SessionGetParams = params(&req)?;
                self.session_query(ws, &mut att, path::STATS, p.session_key, None)
                    .await
            }
            method::SESSION_HISTORY => {
                let p: SessionGetParams = params(&req)?;
                self.session_query(ws, &mut att, path::HISTORY, p.session_key, None)
                    .await
            }
            method::SESSION_PATCH => {
                let mut p: SessionPatchParams = params(&req)?;
                p.session_key = self.canonical_key(&p.session_key);
                let key = p.session_key.clone();
                let result: SessionGetResult =
                    call_object(&self.env, "SESSION", &key, path::PATCH, &p).await?;
                self.touch_session(&key, result.label.as_deref(), p.label.is_some())?;
                Ok(json!({"ok": true}))
            }
            method::SESSION_COMPACT => {
                let mut p: SessionCompactParams = params(&req)?;
                p.session_key = self.canonical_key(&p.session_key);
                let key = p.session_key.clone();
                call_object(&self.env, "SESSION", &key, path::COMPACT, &p).await
            }
            method::SESSION_RESET => {
                let p: SessionGetParams = params(&req)?;
                self.session_query(ws, &mut att, path::RESET, p.session_key, None)
                    .await
            }
            method::SESSION_TRANSCRIPT => {
                let mut p: SessionTranscriptParams = params(&req)?;
                p.session_key = self.canonical_key(&p.session_key);
                let key = p.session_key.clone();
                call_object(&self.env, "SESSION", &key, path::TRANSCRIPT, &p).await
            }
            method::SESSION_PREVIEW => {
                let p: SessionPreviewParams = params(&req)?;
                self.session_query(ws, &mut att, path::PREVIEW, p.session_key, p.limit)
                    .await
            }
            method::SKILLS_STATUS => {
                let p: SkillsStatusParams = params(&req)?;
                let (bucket, agent) = self.workspace(p.agent_id.as_deref())?;
                let files = prompt_load::load_skill_files(&bucket, &agent)
                    .await
                    .map_err(internal_error)?;
                let config = self.config.borrow().clone();
                to_value(&skills_status(
                    &agent,
                    &files,
                    &self.hosts()?,
                    &config,
                    now_ms() as u64,
                ))
            }
            method::WORKSPACE_LIST => {
                let p: WorkspaceListParams = params(&req)?;
                let (bucket, agent) = self.workspace(p.agent_id.as_deref())?;
                to_value(&workspace_rpc::list(&bucket, &agent, p).await?)
            }
            method::WORKSPACE_READ => {
                let p: WorkspaceReadParams = params(&req)?;
                let (bucket, agent) = self.workspace(p.agent_id.as_deref())?;
                to_value(&workspace_rpc::read(&bucket, &agent, p).await?)
            }
            method::WORKSPACE_WRITE => {
                let p: WorkspaceWriteParams = params(&req)?;
                let (bucket, agent) = self.workspace(p.agent_id.as_deref())?;
                to_value(&workspace_rpc::write(&bucket, &agent, p).await?)
            }
            method::WORKSPACE_DELETE => {
                let p: WorkspaceDeleteParams = params(&req)?;
                let (bucket, agent) = self.workspace(p.agent_id.as_deref())?;
                to_value(&workspace_rpc::delete(&bucket, &agent, p).await?)
            }
            other => Err(ErrorShape::new(
                codes::NOT_FOUND,
                format!("Unknown method: {other}"),
            )),
        }
    }

    fn handle_connect(
        &self,
        ws: &WebSocket,
        att: &mut Attachment,
        p: ConnectParams,
    ) -> std::result::Result<Value, ErrorShape> {
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
        to_value(&HelloOkResult {
            kind: "hello-ok".into(),
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
    fn check_token(
        &self,
        ws: &WebSocket,
        given: Option<&str>,
    ) -> std::result::Result<(), ErrorShape> {
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
        for (other, att) in self.sockets() {
            let same = att
                .peer
                .as_ref()
                .is_some_and(|p| p.mode == mode && p.client_id == client_id);
            if same && &other != ws {
                let reason = match mode {
                    ClientMode::Client => "Replaced by newer client connection",
                    ClientMode::Node => "Replaced by newer node connection",
                    ClientMode::Channel => "Replaced by newer channel connection",
                };
                let _ = other.close(Some(close_codes::NORMAL), Some(reason));
            }
        }
        self.sockets.replace(None);
    }

    fn save_attachment(
        &self,
        ws: &WebSocket,
        att: &Attachment,
    ) -> std::result::Result<(), ErrorShape> {
        ws.serialize_attachment(att).map_err(internal_error)?;
        self.sockets.replace(None);
        Ok(())
    }

    fn sockets(&self) -> Vec<(WebSocket, Attachment)> {
        if let Some(cached) = self.sockets.borrow().as_ref() {
            return cached.clone();
        }
        let list: Vec<(WebSocket, Attachment)> = self
            .state
            .get_websockets()
            .into_iter()
            .filter_map(|ws| {
                let att = ws.deserialize_attachment::<Attachment>().ok().flatten()?;
                Some((ws, att))
            })
            .collect();
        self.sockets.replace(Some(list.clone()));
        list
    }

    fn watch(
        &self,
        ws: &WebSocket,
        att: &mut Attachment,
        key: &str,
    ) -> std::result::Result<(), ErrorShape> {
        if att.watch.iter().any(|k| k == key) {
            return Ok(());
        }
        att.watch.push(key.to_string());
        if att.watch.len() > MAX_WATCHED {
            att.watch.remove(0);
        }
        self.save_attachment(ws, att)
    }

    fn deliver_chat_event(&self, evt: &ChatEvent) -> usize {
        let text = Frame::event(
            event::CHAT,
            serde_json::to_value(evt).unwrap_or(Value::Null),
        )
        .to_json();
        let mut delivered = 0;
        for (ws, att) in self.sockets() {
            if att.peer.is_some()
                && att.watch.contains(&evt.session_key)
                && ws.send_with_str(&text).is_ok()
            {
                delivered += 1;
            }
        }
        delivered
    }

    /// Records activity in the session registry; `label` is written only
    /// when `set_label` (a patch may clear it).
    fn touch_session(
        &self,
        key: &str,
        label: Option<&str>,
        set_label: bool,
    ) -> std::result::Result<(), ErrorShape> {
        let sql = self.state.storage().sql();
        let now = now_ms();
        sql.exec(
            "INSERT INTO sessions (session_key, created_at, last_active_at, label) VALUES (?, ?, ?, ?)
             ON CONFLICT(session_key) DO UPDATE SET last_active_at = excluded.last_active_at,
             label = CASE WHEN ? THEN excluded.label ELSE sessions.label END",
            vec![key.into(), now.into(), now.into(), label.map(String::from).into(), i64::from(set_label).into()],
        )
        .map_err(internal_error)?;
        Ok(())
    }

    fn sessions_list(
        &self,
        p: SessionsListParams,
    ) -> std::result::Result<SessionsListResult, ErrorShape> {
        let limit = p.limit.unwrap_or(100).clamp(1, 500);
        self.registry("", vec![], limit, p.offset.unwrap_or(0))
    }

    /// The registry's sessions of one agent (keys `agent:{agentId}:…`),
    /// for a Session's `session_logs`.
    fn agent_sessions(
        &self,
        q: AgentSessionsQuery,
    ) -> std::result::Result<SessionsListResult, ErrorShape> {
        let prefix = format!("agent:{}:", q.agent_id);
        // An exact prefix comparison: LIKE would read `_` in an agent id
        // as a wildcard.
        let filter = "WHERE substr(session_key, 1, ?) = ?";
        let bindings = vec![(prefix.chars().count() as i64).into(), prefix.into()];
        self.registry(filter, bindings, q.limit.clamp(1, 500), 0)
    }

    /// A page of the sessions registry matching `filter` (a `WHERE` clause
    /// over `bindings`, or empty), most recently active first, and how many
    /// match in all.
    fn registry(
        &self,
        filter: &str,
        bindings: Vec<SqlStorageValue>,
        limit: u32,
        offset: u32,
    ) -> std::result::Result<SessionsListResult, ErrorShape> {
        #[derive(Deserialize)]
        struct Row {
            session_key: String,
            created_at: i64,
            last_active_at: i64,
            label: Option<String>,
        }
        #[derive(Deserialize)]
        struct Count {
            n: i64,
        }
        let sql = self.state.storage().sql();
        let mut page_bindings = bindings.clone();
        page_bindings.extend([i64::from(limit).into(), i64::from(offset).into()]);
        let rows: Vec<Row> = sql
            .exec(
                &format!("SELECT session_key, created_at, last_active_at, label FROM sessions {filter} ORDER BY last_active_at DESC, session_key LIMIT ? OFFSET ?"),
                page_bindings,
            )
            .and_then(|c| c.to_array())
            .map_err(internal_error)?;
        let count = sql
            .exec(
                &format!("SELECT COUNT(*) AS n FROM sessions {filter}"),
                bindings,
            )
            .and_then(|c| c.one::<Count>())
            .map_err(internal_error)?;
        Ok(SessionsListResult {
            sessions: rows
                .into_iter()
                .map(|r| SessionRegistryEntry {
                    session_key: r.session_key,
                    created_at: r.created_at,
                    last_active_at: r.last_active_at,
                    label: r.label,
                })
                .collect(),
            count: count.n as u64,
        })
    }

    /// The R2 bucket and the agent a workspace request is about.
    fn workspace(
        &self,
        agent_id: Option<&str>,
    ) -> std::result::Result<(Bucket, String), ErrorShape> {
        let bucket = self.env.bucket("STORAGE").map_err(internal_error)?;
        Ok((
            bucket,
            workspace_rpc::agent(agent_id, &self.routing.borrow().default_agent_id),
        ))
    }

    fn canonical_key(&self, key: &str) -> String {
        canonicalize_session_key(key, &self.routing.borrow())
    }

    async fn chat_send(
        &self,
        ws: &WebSocket,
        att: &mut Attachment,
        p: ChatSendParams,
    ) -> std::result::Result<Value, ErrorShape> {
        if p.message.trim().is_empty() {
            return Err(ErrorShape::new(
                codes::BAD_REQUEST,
                "message must not be empty",
            ));
        }
        let session_key = self.canonical_key(&p.session_key);
        let run_id = p.run_id.filter(|r| !r.is_empty()).unwrap_or_else(new_id);
        // Watch first, so not even the first streamed chunk is missed.
        self.watch(ws, att, &session_key)?;
        self.touch_session(&session_key, None, false)?;
        let send = SessionChatSend {
            session_key: session_key.clone(),
            run_id: run_id.clone(),
            message: p.message,
            config: self.config.borrow().effective().clone(),
            nodes: self.node_snapshot()?,
        };
        // Slash commands and directives are the session's to read: it owns
        // the settings, the run and the history they act on.
        let reply: SessionChatSendReply =
            call_object(&self.env, "SESSION", &session_key, path::CHAT_SEND, &send).await?;
        match reply {
            SessionChatSendReply::Started {
                queued,
                queue_position,
                directives,
            } => to_value(&ChatSendResult {
                status: "started".into(),
                run_id,
                session_key,
                queued,
                queue_position: queued.then_some(queue_position),
                directives,
            }),
            SessionChatSendReply::Command {
                command,
                response,
                error,
                run_id,
            } => to_value(&ChatCommandResult {
                status: "command".into(),
                command,
                session_key,
                response,
                error,
                run_id,
            }),
            SessionChatSendReply::DirectiveOnly {
                response,
                directives,
            } => to_value(&ChatDirectiveOnlyResult {
                status: "directive-only".into(),
                session_key,
                response,
                directives,
            }),
        }
    }

    async fn session_query(
        &self,
        ws: &WebSocket,
        att: &mut Attachment,
        route: &str,
        key: String,
        limit: Option<u32>,
    ) -> std::result::Result<Value, ErrorShape> {
        let session_key = self.canonical_key(&key);
        self.watch(ws, att, &session_key)?;
        let query = SessionQuery {
            session_key: session_key.clone(),
            limit,
        };
        call_object(&self.env, "SESSION", &session_key, route, &query).await
    }

    fn config_get(&self, p: ConfigGetParams) -> std::result::Result<Value, ErrorShape> {
        let config = self.config.borrow();
        let result = match p.path.filter(|p| !p.is_empty()) {
            Some(path) => {
                let value = config
                    .get_masked(&path)
                    .map_err(|e| ErrorShape::new(codes::BAD_REQUEST, e.0))?
                    .unwrap_or(Value::Null);
                ConfigGetResult::Path { path, value }
            }
            None => ConfigGetResult::Whole {
                config: config.masked(),
            },
        };
        to_value(&result)
    }

    fn config_set(&self, p: ConfigSetParams) -> std::result::Result<Value, ErrorShape> {
        let mut next = self.config.borrow().clone();
        next.set(&p.path, p.value)
            .map_err(|e| ErrorShape::new(codes::BAD_REQUEST, e.0))?;
        let overrides = serde_json::to_string(next.overrides()).map_err(internal_error)?;
        self.state
            .storage()
            .sql()
            .exec(
                "INSERT INTO config (id, overrides) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET overrides = excluded.overrides",
                vec![overrides.into()],
            )
            .map_err(internal_error)?;
        self.routing.replace(RoutingConfig::from_config(&next));
        self.config.replace(next);
        to_value(&ConfigSetResult {
            ok: true,
            path: p.path,
        })
    }
}
