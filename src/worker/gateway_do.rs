//! The Gateway Durable Object (one, named "singleton"): accepts WebSockets
//! with the hibernation API, answers every request frame, keeps the config,
//! and fans `chat` events out to the clients watching a session.

mod approvals;
mod attachments;
mod channel_plane;
mod chat;
mod config;
mod connect;
mod entry;
mod followed_runs;
mod gateway_tool;
mod media;
mod memory;
mod model_check;
mod node_registry;
mod registry;
mod requests;
mod revisions;
mod scheduler;
pub use scheduler::{test_clock_enabled, TEST_CLOCK_VAR};
mod session_link;
mod sql_store;
mod trust;
mod usage;

use super::rpc::{internal_error, now_ms};
use super::workspace::rpc as workspace_rpc;
use crate::config::Config;
use crate::routing::RoutingConfig;
use crate::session::internal::ToolRequestReply;
use gsv_protocol::*;
use gsv_worker_sql::migrate;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cell::RefCell;
use std::rc::Rc;
use worker::*;

const MIGRATIONS: &[&str] = &[
    "CREATE TABLE config (id INTEGER PRIMARY KEY CHECK (id = 1), overrides TEXT NOT NULL)",
    // The sessions the gateway has routed to, for sessions.list.
    "CREATE TABLE sessions (session_key TEXT PRIMARY KEY, created_at INTEGER NOT NULL, last_active_at INTEGER NOT NULL, label TEXT);
     CREATE INDEX sessions_by_activity ON sessions (last_active_at DESC)",
    // Connected nodes and their tools, tool calls out at nodes (who waits
    // for each), and background commands whose end a session waits for.
    node_registry::MIGRATION,
    // Skill bin probes out at nodes and the skills.update requests waiting on them.
    node_registry::PROBES_MIGRATION,
    // Chat-app channels: accounts, redeliveries, pairing, runs answered in
    // a chat, the delivery ledger, each agent's last active chat.
    channel_plane::MIGRATION,
    // Cron jobs and runs, runs the gateway follows, heartbeat state.
    scheduler::MIGRATION,
    scheduler::RUNNING_INDEX_MIGRATION,
    // Log calls out at nodes.
    node_registry::LOG_CALLS_MIGRATION,
    // Delivery receipts on the ledger's pieces (WhatsApp's statuses).
    channel_plane::RECEIPTS_MIGRATION,
    scheduler::SWEEP_MIGRATION,
    // Files on the ledger's pieces.
    channel_plane::MEDIA_MIGRATION,
    // Tool calls of turns below the owner (trust.rs).
    trust::MIGRATION,
    // Calls waiting for the owner's approval, standing approvals, and
    // the chat the owner is asked in (approvals.rs).
    approvals::MIGRATION,
    // When to ask a chat's run's session how it stands (channel_plane/outbound.rs).
    channel_plane::OUTCOME_CHECK_MIGRATION,
    // Buttons on the ledger's pieces (channel_plane/outbound.rs).
    channel_plane::ACTIONS_MIGRATION,
];

/// The open sockets with their attachments, shared while unchanged.
type Sockets = Rc<Vec<(WebSocket, Rc<Attachment>)>>;

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
    /// `(canonical, asked)`: the key this socket named a watched session
    /// by, when not the canonical one; its events carry that key, since
    /// v1 clients match events against the key they sent.
    #[serde(default)]
    aliases: Vec<(String, String)>,
    /// An internal event link from a Session object, not a client.
    #[serde(default)]
    link: bool,
    /// The link's session would close it: nothing more is sent on it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    closing: bool,
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
    sockets: RefCell<Option<Sockets>>,
    /// What sessions are told with each message (revisions.rs).
    revisions: revisions::Revisions,
    /// The runs whose events the gateway acts on (followed_runs.rs).
    followed: followed_runs::FollowedRuns,
    /// Nodes, tool calls, probes, log calls, transfers (node_registry.rs).
    nodes: node_registry::NodeRegistry,
    /// Chat-app accounts, pairing and the delivery ledger (channel_plane.rs).
    channels: channel_plane::ChannelPlane,
    /// Cron, heartbeats, agent runs and the alarm (scheduler.rs).
    scheduler: scheduler::Scheduler,
    /// Session activity stamps written and kept back (registry.rs).
    touches: RefCell<crate::gateway::touches::Touches>,
    /// Messages sent on sessions' event links, waiting for their answers.
    link_calls: session_link::LinkCalls,
    /// Sockets' attachments as last read (attachments.rs).
    attachments: attachments::KeptAttachments,
}

impl DurableObject for Gateway {
    fn new(state: State, env: Env) -> Self {
        let sql = state.storage().sql();
        let config =
            match migrate(&sql, MIGRATIONS, now_ms()).and_then(|_| config::load_config(&sql)) {
                Ok(c) => c,
                Err(e) => {
                    console_error!("gateway: loading config failed, using defaults: {e}");
                    Config::default()
                }
            };
        let revisions = revisions::Revisions::new(&config);
        Self {
            state,
            env,
            revisions,
            followed: Default::default(),
            routing: RefCell::new(RoutingConfig::from_config(&config)),
            config: RefCell::new(config),
            sockets: RefCell::new(None),
            nodes: Default::default(),
            channels: Default::default(),
            scheduler: Default::default(),
            touches: Default::default(),
            link_calls: Default::default(),
            attachments: Default::default(),
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let response = self.serve(&mut req).await;
        self.tell_links_of_workspace();
        response
    }

    async fn websocket_message(
        &self,
        ws: WebSocket,
        message: WebSocketIncomingMessage,
    ) -> Result<()> {
        let handled = self.handle_message(ws, message).await;
        self.tell_links_of_workspace();
        handled
    }

    async fn alarm(&self) -> Result<Response> {
        self.alarm_run().await;
        self.tell_links_of_workspace();
        Response::ok("ok")
    }

    async fn websocket_close(
        &self,
        ws: WebSocket,
        code: usize,
        _reason: String,
        _clean: bool,
    ) -> Result<()> {
        self.forget_sockets();
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
        self.forget_sockets();
        self.forget(&ws).await;
        Ok(())
    }
}

fn send(ws: &WebSocket, frame: &Frame) -> Result<()> {
    send_text(ws, &frame.to_json());
    Ok(())
}

fn send_text(ws: &WebSocket, text: &str) {
    // A socket that closed meanwhile cannot be answered; that is not an error.
    if let Err(e) = ws.send_with_str(text) {
        console_log!("gateway: dropping frame for a closed socket: {e}");
    }
}

fn to_value<T: Serialize>(v: &T) -> std::result::Result<Value, ErrorShape> {
    serde_json::to_value(v).map_err(internal_error)
}

impl Gateway {
    /// A socket closed: what it owed or waited for is settled.
    async fn forget(&self, ws: &WebSocket) {
        let Some(att) = self.attachments.read(ws).ok().flatten() else {
            return;
        };
        let result = match &att.peer {
            Some(p) if p.mode == ClientMode::Node => {
                // Its tools leave the snapshot even if its row stays.
                self.revisions.nodes_changed();
                self.node_gone(&p.client_id, &att.conn_id).await
            }
            Some(_) => self
                .client_gone(&att.conn_id)
                .and_then(|()| self.client_updates_gone(&att.conn_id))
                .and_then(|()| self.client_logs_gone(&att.conn_id)),
            None if att.link => {
                self.link_closed(&att.conn_id);
                Ok(())
            }
            None => Ok(()),
        };
        if let Err(e) = result {
            console_error!("gateway: cleaning up after a socket failed: {}", e.message);
        }
    }

    /// A Session's node tool call (`again`: sent a second time).
    async fn tool_request(
        &self,
        p: ToolRequestParams,
        again: bool,
    ) -> std::result::Result<ToolRequestReply, ErrorShape> {
        let asker = node_registry::Asker::Session {
            key: &p.session_key,
            again,
        };
        self.send_tool_call(&p.call_id, &p.tool, p.args, asker)
            .await?;
        Ok(ToolRequestReply::Sent)
    }

    fn save_attachment(
        &self,
        ws: &WebSocket,
        att: &Attachment,
    ) -> std::result::Result<(), ErrorShape> {
        ws.serialize_attachment(att).map_err(internal_error)?;
        self.attachments.keep(ws, Rc::new(att.clone()));
        self.forget_sockets();
        Ok(())
    }

    /// The object's SQLite; each part reads its own tables through its store.
    fn sql(&self) -> SqlStorage {
        self.state.storage().sql()
    }

    /// The open sockets, shared: a chat event fanned out to every watcher
    /// copies no attachment.
    fn sockets(&self) -> Sockets {
        if let Some(cached) = self.sockets.borrow().as_ref() {
            return cached.clone();
        }
        let list: Vec<(WebSocket, Rc<Attachment>)> = self
            .state
            .get_websockets()
            .into_iter()
            .filter_map(|ws| {
                let att = self.attachments.read(&ws).ok().flatten()?;
                Some((ws, att))
            })
            .collect();
        let list = Rc::new(list);
        self.sockets.replace(Some(list.clone()));
        list
    }

    /// The set of sockets or an attachment changed: the list is made again
    /// (from the attachments kept; see attachments.rs). The node snapshot
    /// changes only with a node's: see `forget`.
    fn forget_sockets(&self) {
        self.sockets.replace(None);
    }
}
