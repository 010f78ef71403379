//! What a Session is told with each message, by revision. The config and
//! the node snapshot change rarely and are large: each travels only when
//! the session may lack its revision (the session says so when it does,
//! after an eviction), so a steady-state turn carries three short strings.
//! The workspace revision tells a session whether the prompt it kept may
//! still hold: it changes with every workspace write this gateway makes or
//! hears of, and with each start of this gateway.

use super::Gateway;
use crate::config::Config;
use crate::session::internal::{NodeSnapshot, SessionChatSend, SessionChatSendReply, STALE_STATE};
use crate::worker::bindings::SessionStub;
use crate::worker::r2;
use crate::worker::rpc::new_id;
use gsv_protocol::{ErrorShape, WorkspaceRefreshResult};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

type Res<T> = std::result::Result<T, ErrorShape>;

/// Sessions whose revisions are remembered; past it the map starts over
/// (the next message to each then carries the config and nodes again).
const MAX_REMEMBERED: usize = 10_000;

pub(super) struct Revisions {
    /// This instance: a restart changes every workspace revision, so each
    /// session checks its workspace once after it.
    instance: String,
    config: RefCell<String>,
    nodes: RefCell<Option<KnownNodes>>,
    /// Workspace changes heard of (sessions' own writes, `workspace.refresh`).
    workspace_bumps: Cell<u64>,
    /// The (bumps, writes) the links were last told of (`None`: not yet by
    /// this instance).
    told_links: Cell<Option<(u64, u64)>>,
    /// The (config, nodes) revisions each session was last sent.
    sent: RefCell<HashMap<String, (String, String)>>,
}

/// The live nodes as sessions get them, with their revision, and each
/// node's connection (its socket is found without reading its tools).
#[derive(Clone)]
pub(super) struct KnownNodes {
    pub snapshot: Rc<NodeSnapshot>,
    pub rev: String,
    /// (node id, connection id).
    pub conns: Rc<Vec<(String, String)>>,
}

impl Revisions {
    pub fn new(config: &Config) -> Self {
        Self {
            instance: new_id(),
            config: RefCell::new(config_revision(config)),
            nodes: RefCell::new(None),
            workspace_bumps: Cell::new(0),
            told_links: Cell::new(None),
            sent: RefCell::new(HashMap::new()),
        }
    }

    pub fn config_changed(&self, config: &Config) {
        self.config.replace(config_revision(config));
    }

    /// The nodes or their sockets changed: the snapshot is built again.
    pub fn nodes_changed(&self) {
        self.nodes.replace(None);
    }

    pub fn workspace_changed(&self) {
        self.workspace_bumps.set(self.workspace_bumps.get() + 1);
    }

    /// The workspace revision when the links were not told of it yet
    /// (each time it changes, and once after this instance starts).
    pub fn workspace_untold(&self) -> Option<String> {
        let now = (self.workspace_bumps.get(), r2::writes());
        (self.told_links.replace(Some(now)) != Some(now)).then(|| self.workspace())
    }

    /// Every workspace write of this isolate counts (`r2::writes`), and
    /// every change heard of.
    pub fn workspace(&self) -> String {
        format!(
            "{}.{}.{}",
            self.instance,
            self.workspace_bumps.get(),
            r2::writes()
        )
    }
}

/// A revision of `text`: equal texts, equal revisions.
fn revision_of(text: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    format!("{:016x}.{}", h.finish(), text.len())
}

fn config_revision(config: &Config) -> String {
    revision_of(&serde_json::to_string(config.effective()).unwrap_or_default())
}

impl Gateway {
    /// The node tools and hosts a run gets, with their revision; built once
    /// per change of the nodes.
    pub(super) fn nodes_for_sessions(&self) -> Res<(Rc<NodeSnapshot>, String)> {
        let known = self.known_nodes()?;
        Ok((known.snapshot, known.rev))
    }

    /// The live nodes, read and parsed once per change of the nodes.
    pub(super) fn known_nodes(&self) -> Res<KnownNodes> {
        if let Some(known) = self.revisions.nodes.borrow().as_ref() {
            return Ok(known.clone());
        }
        let (snapshot, conns) = self.node_snapshot()?;
        let known = KnownNodes {
            rev: revision_of(&serde_json::to_string(&snapshot).unwrap_or_default()),
            snapshot: Rc::new(snapshot),
            conns: Rc::new(conns),
        };
        self.revisions.nodes.replace(Some(known.clone()));
        Ok(known)
    }

    /// A message for session `key`'s object, stamped with the revisions
    /// (the bodies are added by `send_to_session` when needed). Its trust
    /// is the least until the caller says who is speaking.
    pub(super) fn message_for(&self, key: &str, run_id: &str, message: String) -> SessionChatSend {
        SessionChatSend {
            session_key: key.to_string(),
            run_id: run_id.to_string(),
            message,
            config: None,
            config_rev: String::new(),
            nodes: None,
            nodes_rev: String::new(),
            workspace_rev: self.revisions.workspace(),
            channel: None,
            directives: None,
            relay: None,
            clock_offset_ms: self.clock_offset_ms(),
            media: vec![],
            trust: gsv_protocol::Trust::default(),
            inbound_id: None,
        }
    }

    /// Sends `send` to its session's object with the config and nodes it
    /// lacks: by revision when it was sent them before, else whole, and
    /// whole again if the session says it no longer has them.
    pub(super) async fn send_to_session(
        &self,
        mut send: SessionChatSend,
    ) -> Res<SessionChatSendReply> {
        let config_rev = self.revisions.config.borrow().clone();
        let (nodes, nodes_rev) = self.nodes_for_sessions()?;
        let known = self.revisions.sent.borrow().get(&send.session_key).cloned();
        let (has_config, has_nodes) = match &known {
            Some((c, n)) => (*c == config_rev, *n == nodes_rev),
            None => (false, false),
        };
        send.config_rev = config_rev.clone();
        send.nodes_rev = nodes_rev.clone();
        if !has_config {
            send.config = Some(self.config.borrow().overrides().clone());
        }
        if !has_nodes {
            send.nodes = Some((*nodes).clone());
        }
        let reply = match self.call_session(&send).await {
            Err(e) if e.code == STALE_STATE => {
                send.config = Some(self.config.borrow().overrides().clone());
                send.nodes = Some((*nodes).clone());
                self.call_session(&send).await?
            }
            other => other?,
        };
        let mut sent = self.revisions.sent.borrow_mut();
        if sent.len() >= MAX_REMEMBERED {
            sent.clear();
        }
        sent.insert(send.session_key, (config_rev, nodes_rev));
        Ok(reply)
    }

    /// `send` on its session's event link when it is open, else as a request.
    async fn call_session(&self, send: &SessionChatSend) -> Res<SessionChatSendReply> {
        match self.send_on_link(send).await {
            Some(reply) => reply,
            None => {
                SessionStub::for_key(&self.env, &send.session_key)
                    .call(send)
                    .await
            }
        }
    }

    /// `workspace.refresh`, and a session's word that it wrote the workspace.
    pub(super) fn workspace_refresh(&self) -> WorkspaceRefreshResult {
        self.revisions.workspace_changed();
        WorkspaceRefreshResult {
            revision: self.revisions.workspace(),
        }
    }
}
