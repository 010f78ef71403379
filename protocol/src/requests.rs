//! The one table of RPC methods: each name with its params, its result and
//! who may call it. Parsing, `hello-ok`'s lists, the gateway's per-mode
//! checks, its dispatch and the CLI's calls all derive from it, so a new
//! method is one line here plus the gateway's handler arm (its match over
//! [`ClientRequest`] is exhaustive, so the compiler asks for it).

use crate::channels::{ChannelInboundParams, ChannelInboundResult};
use crate::skills::{NodeProbeResultParams, SkillsUpdateParams, SkillsUpdateResult};
use crate::transfer::TransferStatusParams;
use crate::*;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// Who may call a method (v1 had no per-mode checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callers {
    /// A socket that has not connected yet: `connect` only.
    Unconnected,
    /// Operators and chat clients only.
    Clients,
    /// Clients and channel workers (they relay user messages).
    ClientsAndChannels,
    /// Nodes only: they answer the calls sent to them.
    Nodes,
    /// Clients and nodes (v1 nodes use `tools.list` as a keepalive).
    ClientsAndNodes,
    /// Channel workers only (they relay chat-app messages).
    Channels,
}

impl Callers {
    pub fn allow(self, mode: ClientMode) -> bool {
        match self {
            Callers::Unconnected => false,
            Callers::Clients => mode == ClientMode::Client,
            Callers::ClientsAndChannels => matches!(mode, ClientMode::Client | ClientMode::Channel),
            Callers::Nodes => mode == ClientMode::Node,
            Callers::ClientsAndNodes => matches!(mode, ClientMode::Client | ClientMode::Node),
            Callers::Channels => mode == ClientMode::Channel,
        }
    }
}

/// One row of the table, as `hello-ok` and the mode check read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodSpec {
    pub name: &'static str,
    pub callers: Callers,
}

/// A method as a type: `conn.call::<method::ChatSend>(&params)` sends
/// `NAME` and reads the answer as `Result`.
pub trait Method {
    const NAME: &'static str;
    const CALLERS: Callers;
    type Params: Serialize + DeserializeOwned;
    type Result: Serialize + DeserializeOwned;
}

/// Params of a method that takes none: sent as no `params` at all, and
/// anything received is accepted (the gateway never read them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "null"))]
pub struct NoParams;

impl Serialize for NoParams {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_unit()
    }
}

impl<'de> Deserialize<'de> for NoParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(d).map(|_| NoParams)
    }
}

/// `skills.status` result as readers see it: the gateway's status object
/// (its typed form lives with the evaluation, in the gateway).
pub type SkillsStatusResult = Map<String, Value>;

/// Reads `params` (absent reads as `{}`) as `M`'s params.
pub fn parse_params<M: Method>(params: Option<Value>) -> Result<M::Params, ErrorShape> {
    let value = params.unwrap_or(Value::Object(Map::new()));
    serde_json::from_value(value).map_err(|e| {
        ErrorShape::new(
            codes::BAD_REQUEST,
            format!("Invalid params for {}: {e}", M::NAME),
        )
    })
}

/// A second `connect` on a socket that has its peer.
pub fn already_connected() -> ErrorShape {
    ErrorShape::new(codes::BAD_REQUEST, "Already connected")
}

fn unknown_method(name: &str) -> ErrorShape {
    ErrorShape::new(codes::NOT_FOUND, format!("Unknown method: {name}"))
}

/// Checks that a connection in `mode` may call `name`.
pub fn authorize(mode: ClientMode, name: &str) -> Result<(), ErrorShape> {
    let Some(spec) = METHODS.iter().find(|m| m.name == name) else {
        return Err(unknown_method(name));
    };
    match spec.callers {
        Callers::Unconnected => Err(already_connected()),
        callers if callers.allow(mode) => Ok(()),
        _ => {
            // The mode as on the wire (`client`, `node`, `channel`).
            let mode = serde_json::to_value(mode).unwrap_or_default();
            Err(ErrorShape::new(
                codes::FORBIDDEN,
                format!(
                    "Method {name} is not allowed for {} connections",
                    mode.as_str().unwrap_or("?")
                ),
            ))
        }
    }
}

/// What is shown every method a `client` connection may call, with its
/// types (`crate::ts` writes their TypeScript from it).
#[cfg(feature = "ts")]
pub(crate) trait ClientMethodVisitor {
    fn visit<M: Method>(&mut self)
    where
        M::Params: ts_rs::TS + 'static,
        M::Result: ts_rs::TS + 'static;
}

/// One row of `visit_client_methods`: only the methods a `client`
/// connection may call (chosen by their callers, so nodes' and channels'
/// types need no TypeScript form). Keep in step with [`Callers::allow`].
#[cfg(feature = "ts")]
macro_rules! ts_row {
    (Unconnected, $variant:ident, $v:ident) => {};
    (Nodes, $variant:ident, $v:ident) => {};
    (Channels, $variant:ident, $v:ident) => {};
    ($callers:ident, $variant:ident, $v:ident) => {
        $v.visit::<method::$variant>()
    };
}

macro_rules! methods {
    ($( $(#[$doc:meta])* $variant:ident => $name:literal ($params:ty) -> $result:ty, callers: $callers:ident; )*) => {
        /// Marker types, one per method (see [`Method`]).
        pub mod method {
            pub use super::Method;
            use super::*;
            $(
                $(#[$doc])*
                #[derive(Debug, Clone, Copy)]
                pub struct $variant;
                impl Method for $variant {
                    const NAME: &'static str = $name;
                    const CALLERS: Callers = Callers::$callers;
                    type Params = $params;
                    type Result = $result;
                }
            )*
        }

        /// Shows `visitor` every method a client may call, in table order,
        /// for the TypeScript bindings (`crate::ts`); such a method whose
        /// params or result lack the `TS` derive does not compile with the
        /// `ts` feature.
        #[cfg(feature = "ts")]
        pub(crate) fn visit_client_methods(visitor: &mut impl ClientMethodVisitor) {
            $( ts_row!($callers, $variant, visitor); )*
        }

        /// Every method, in the order `hello-ok` lists them.
        pub const METHODS: &[MethodSpec] = &[
            $( MethodSpec { name: $name, callers: Callers::$callers }, )*
        ];

        /// A request frame's method and params, read.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ClientRequest {
            $( $variant($params), )*
        }

        impl ClientRequest {
            /// 404 for an unknown method, 400 for params that do not fit.
            pub fn parse(name: &str, params: Option<Value>) -> Result<Self, ErrorShape> {
                match name {
                    $( $name => parse_params::<method::$variant>(params).map(Self::$variant), )*
                    _ => Err(unknown_method(name)),
                }
            }

            pub fn method(&self) -> &'static str {
                match self {
                    $( Self::$variant(_) => $name, )*
                }
            }
        }
    };
}

methods! {
    /// Answered before the socket has a peer; listed so `hello-ok` shows it.
    Connect => "connect" (ConnectParams) -> HelloOkResult, callers: Unconnected;
    ChatSend => "chat.send" (ChatSendParams) -> ChatSendResult, callers: ClientsAndChannels;
    ConfigGet => "config.get" (ConfigGetParams) -> ConfigGetResult, callers: Clients;
    ConfigSet => "config.set" (ConfigSetParams) -> ConfigSetResult, callers: Clients;
    /// Answered when the model has (one tiny call).
    ModelCheck => "model.check" (ModelCheckParams) -> ModelCheckResult, callers: Clients;
    SessionGet => "session.get" (SessionGetParams) -> SessionGetResult, callers: ClientsAndChannels;
    SessionPreview => "session.preview" (SessionPreviewParams) -> SessionPreviewResult, callers: ClientsAndChannels;
    SessionsList => "sessions.list" (SessionsListParams) -> SessionsListResult, callers: Clients;
    SessionStats => "session.stats" (SessionGetParams) -> SessionStatsResult, callers: ClientsAndChannels;
    /// Asks each session active in the window.
    UsageDaily => "usage.daily" (UsageDailyParams) -> UsageDailyResult, callers: Clients;
    SessionHistory => "session.history" (SessionGetParams) -> SessionHistoryResult, callers: ClientsAndChannels;
    SessionPatch => "session.patch" (SessionPatchParams) -> SessionPatchResult, callers: Clients;
    SessionCompact => "session.compact" (SessionCompactParams) -> SessionCompactResult, callers: Clients;
    SessionReset => "session.reset" (SessionGetParams) -> SessionResetResult, callers: Clients;
    SessionTranscript => "session.transcript" (SessionTranscriptParams) -> SessionTranscriptResult, callers: Clients;
    SkillsStatus => "skills.status" (SkillsStatusParams) -> SkillsStatusResult, callers: Clients;
    /// Answered once the probes it sends have answered.
    SkillsUpdate => "skills.update" (SkillsUpdateParams) -> SkillsUpdateResult, callers: Clients;
    WorkspaceList => "workspace.list" (WorkspaceListParams) -> WorkspaceListResult, callers: Clients;
    WorkspaceRead => "workspace.read" (WorkspaceReadParams) -> WorkspaceReadResult, callers: Clients;
    WorkspaceWrite => "workspace.write" (WorkspaceWriteParams) -> WorkspaceWriteResult, callers: Clients;
    WorkspaceDelete => "workspace.delete" (WorkspaceDeleteParams) -> WorkspaceDeleteResult, callers: Clients;
    WorkspaceRefresh => "workspace.refresh" (NoParams) -> WorkspaceRefreshResult, callers: Clients;
    ChatAbort => "chat.abort" (ChatAbortParams) -> ChatAbortResult, callers: ClientsAndChannels;
    ToolsList => "tools.list" (NoParams) -> ToolsListResult, callers: ClientsAndNodes;
    /// Answered when the node answers.
    ToolInvoke => "tool.invoke" (ToolInvokeParams) -> ToolInvokeResult, callers: Clients;
    ToolResult => "tool.result" (ToolResultParams) -> AckResult, callers: Nodes;
    /// A node call whose result goes to a session. Clients only: nodes
    /// must not drive other nodes, channels relay strangers.
    ToolRequest => "tool.request" (ToolRequestParams) -> ToolRequestResult, callers: Clients;
    /// Answered when the node answers.
    LogsGet => "logs.get" (LogsGetParams) -> LogsGetResult, callers: Clients;
    LogsResult => "logs.result" (LogsResultParams) -> AckResult, callers: Nodes;
    NodeExecEvent => "node.exec.event" (NodeExecEventParams) -> AckResult, callers: Nodes;
    NodeProbeResult => "node.probe.result" (NodeProbeResultParams) -> AckResult, callers: Nodes;
    TransferStatus => "transfer.status" (TransferStatusParams) -> AckResult, callers: Nodes;
    ChannelsList => "channels.list" (NoParams) -> ChannelsListResult, callers: Clients;
    /// A message from a chat app, from a channel connected over WebSocket
    /// (channels behind a service binding use the internal path instead).
    ChannelInbound => "channel.inbound" (ChannelInboundParams) -> ChannelInboundResult, callers: Channels;
    ChannelStart => "channel.start" (ChannelStartRpcParams) -> ChannelAccountResult, callers: Clients;
    ChannelStop => "channel.stop" (ChannelAccountParams) -> ChannelAccountResult, callers: Clients;
    ChannelStatus => "channel.status" (ChannelStatusRpcParams) -> ChannelStatusRpcResult, callers: Clients;
    ChannelLogin => "channel.login" (ChannelLoginRpcParams) -> ChannelLoginRpcResult, callers: Clients;
    ChannelLogout => "channel.logout" (ChannelAccountParams) -> ChannelAccountResult, callers: Clients;
    PairList => "pair.list" (NoParams) -> PairListResult, callers: Clients;
    PairApprove => "pair.approve" (PairDecisionParams) -> PairApproveResult, callers: Clients;
    PairReject => "pair.reject" (PairDecisionParams) -> PairRejectResult, callers: Clients;
    CronStatus => "cron.status" (NoParams) -> CronStatusResult, callers: Clients;
    CronList => "cron.list" (CronListParams) -> CronListResult, callers: Clients;
    CronAdd => "cron.add" (CronAddParams) -> CronJobResult, callers: Clients;
    CronUpdate => "cron.update" (CronUpdateParams) -> CronJobResult, callers: Clients;
    CronRemove => "cron.remove" (CronIdParams) -> CronRemoveResult, callers: Clients;
    CronRun => "cron.run" (CronRunParams) -> CronRunNowResult, callers: Clients;
    CronRuns => "cron.runs" (CronRunsParams) -> CronRunsResult, callers: Clients;
    HeartbeatStatus => "heartbeat.status" (NoParams) -> HeartbeatStatusResult, callers: Clients;
    HeartbeatStart => "heartbeat.start" (NoParams) -> HeartbeatStartResult, callers: Clients;
    HeartbeatTrigger => "heartbeat.trigger" (HeartbeatTriggerParams) -> HeartbeatTriggerResult, callers: Clients;
    MemorySearch => "memory.search" (MemorySearchParams) -> MemorySearchResult, callers: Clients;
    MemoryGet => "memory.get" (MemoryGetParams) -> MemoryGetResult, callers: Clients;
    MemoryPut => "memory.put" (MemoryPutParams) -> MemoryPutResult, callers: Clients;
    MemoryDelete => "memory.delete" (MemoryDeleteParams) -> MemoryDeleteResult, callers: Clients;
    MemoryStatus => "memory.status" (NoParams) -> MemoryStatusResult, callers: Clients;
    MemoryRepair => "memory.repair" (NoParams) -> MemoryRepairResult, callers: Clients;
    TrustExplain => "trust.explain" (TrustExplainParams) -> TrustExplainResult, callers: Clients;
    AuditList => "audit.list" (AuditListParams) -> AuditListResult, callers: Clients;
    ApprovalsList => "approvals.list" (NoParams) -> ApprovalsListResult, callers: Clients;
    ApprovalsDecide => "approvals.decide" (ApprovalDecideParams) -> ApprovalDecideResult, callers: Clients;
}

macro_rules! events {
    ($( $(#[$doc:meta])* $const:ident => $name:literal; )*) => {
        /// Event names, as on the wire.
        pub mod event {
            $( $(#[$doc])* pub const $const: &str = $name; )*

            /// Every event, in the order `hello-ok` lists them.
            pub const ALL: &[&str] = &[ $( $name, )* ];
        }
    };
}

events! {
    /// Gateway → watchers of a session: a run's progress (`ChatEvent`).
    CHAT => "chat";
    /// Gateway → node: run a tool (`ToolInvokeEvent`).
    TOOL_INVOKE => "tool.invoke";
    /// Gateway → node: send the end of your log (`LogsGetEvent`).
    LOGS_GET => "logs.get";
    /// Gateway → node: which of these bins are on PATH (`NodeProbeEvent`).
    NODE_PROBE => "node.probe";
    /// Gateway → source node: send this file (`TransferSendEvent`).
    TRANSFER_SEND => "transfer.send";
    /// Gateway → destination node: bytes follow (`TransferReceiveEvent`).
    TRANSFER_RECEIVE => "transfer.receive";
    /// Gateway → destination node: every chunk was sent (`TransferEndEvent`).
    TRANSFER_END => "transfer.end";
    /// Gateway → node: drop what was received (`TransferCancelEvent`).
    TRANSFER_CANCEL => "transfer.cancel";
    /// Gateway → a channel on WebSocket: send this (`ChannelOutboundEvent`).
    CHANNEL_OUTBOUND => "channel.outbound";
    /// Gateway → a channel on WebSocket: typing on or off (`ChannelTypingEvent`).
    CHANNEL_TYPING => "channel.typing";
}

/// Every method `hello-ok` advertises, `connect` included.
pub fn advertised_methods() -> Vec<String> {
    METHODS.iter().map(|m| m.name.to_string()).collect()
}

/// Every event `hello-ok` advertises.
pub fn advertised_events() -> Vec<String> {
    event::ALL.iter().map(|e| e.to_string()).collect()
}

#[cfg(test)]
#[path = "requests_tests.rs"]
mod tests;
