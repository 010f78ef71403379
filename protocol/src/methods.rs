//! Params, results and event payloads of the RPC methods.

use crate::messages::{AssistantMessage, Message, Usage};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ClientMode {
    Client,
    Node,
    Channel,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    pub id: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub platform: String,
    pub mode: ClientMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

impl ToolDefinition {
    /// A node's tool is named `{nodeId}__{Tool}`; `gsv__…` and unprefixed
    /// tools are the gateway's own.
    pub fn is_node_tool(&self) -> bool {
        !self.name.starts_with("gsv__") && self.name.contains("__")
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AuthParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConnectParams {
    pub min_protocol: u32,
    pub max_protocol: u32,
    pub client: ClientInfo,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolDefinition>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_runtime: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<AuthParams>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    pub version: String,
    pub connection_id: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Features {
    pub methods: Vec<String>,
    pub events: Vec<String>,
}

/// The `connect` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HelloOkResult {
    #[serde(rename = "type")]
    pub kind: HelloOkTag,
    pub protocol: u32,
    pub server: ServerInfo,
    pub features: Features,
}

/// `HelloOkResult.type`: a type with one value, so an answer of another
/// type does not read as a `hello-ok`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum HelloOkTag {
    #[default]
    #[serde(rename = "hello-ok")]
    HelloOk,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChatSendParams {
    pub session_key: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Attachments (beyond v1, which sends none): each a file uploaded to
    /// [`MEDIA_UPLOAD_PATH`] (`r2Key`) or, when small, inline (`data`).
    /// The message may then be empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<crate::channels::ChannelMedia>,
}

/// `POST {gateway}/media/upload?sessionKey=KEY&filename=NAME` with
/// `Authorization: Bearer <token>`, the file's `Content-Type` and
/// `Content-Length`, and the file as the body: stored for that session
/// (at most 25 MB), answered with the `ChannelMedia` (its `r2Key` set) to
/// put in `chat.send`'s `media`.
pub const MEDIA_UPLOAD_PATH: &str = "/media/upload";

/// `chat.send` answers one of three shapes, told apart by `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum ChatSendResult {
    /// `"started"`: a run started or was queued.
    Started(ChatStartedResult),
    /// `"command"`: a slash command answered.
    Command(ChatCommandResult),
    /// `"directive-only"`: directives acknowledged, no run.
    DirectiveOnly(ChatDirectiveOnlyResult),
}

/// `chat.send` that started (or queued) a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChatStartedResult {
    pub run_id: String,
    /// The canonical session key the message went to (absent from v1
    /// gateways).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// True when another run was in progress and this message waits its
    /// turn (v1 gateways do not say, and answer without it).
    #[serde(default)]
    pub queued: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_position: Option<u32>,
    /// Inline directives (`/t:high`, `/m:sel`) applied to this message only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directives: Option<ChatDirectives>,
}

/// What inline directives changed for one message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChatDirectives {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSelection>,
}

/// `chat.send` answered by a slash command (`/status`, `/reset`…) without
/// a model run — except `/new TEXT`, whose TEXT starts a run (`run_id`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChatCommandResult {
    /// The command's canonical name (`reset`, `compact`, `stop`, `status`,
    /// `model`, `think`, `help`).
    pub command: String,
    /// Always sent; a client that only shows the answer may do without it.
    #[serde(default)]
    pub session_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// `chat.send` with nothing but directives: acknowledged, no run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChatDirectiveOnlyResult {
    pub session_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    pub directives: ChatDirectives,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum ChatState {
    /// A chunk of assistant text as it streams (new in this project; v1
    /// clients ignore states they do not know).
    Delta,
    /// An assistant turn with text and tool calls; the run goes on.
    Partial,
    /// The run's last assistant message.
    Final,
    Error,
}

/// Payload of the `chat` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChatEvent {
    pub run_id: Option<String>,
    pub session_key: String,
    pub state: ChatState,
    /// For `delta`: the new text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<AssistantMessage>,
    /// For `final`: token usage summed over the run's model calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ConfigGetParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// What `config.get` shows instead of a secret's value (API keys, tokens):
/// secrets can be set, never read back.
pub const SECRET_MASK: &str = "***";

/// `config.get` answers `{path, value}` for a path and `{config}` without one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(untagged)]
pub enum ConfigGetResult {
    Path { path: String, value: Value },
    Whole { config: Value },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ConfigSetParams {
    pub path: String,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ConfigSetResult {
    pub ok: bool,
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionGetParams {
    pub session_key: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TokenCounts {
    /// Input billed at the full price (not read from or written to a
    /// provider's prompt cache).
    pub input: u64,
    pub output: u64,
    pub total: u64,
    /// Input read from the provider's prompt cache.
    #[serde(default, rename = "cacheRead")]
    pub cache_read: u64,
    /// Input written to the provider's prompt cache.
    #[serde(default, rename = "cacheWrite")]
    pub cache_write: u64,
    /// What these tokens cost, estimated from the price table
    /// (`providers.<name>.prices`, USD per million tokens by default);
    /// absent while no call had a known price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

impl TokenCounts {
    /// `10000 read / 300 written (96% of input)`, when a cache was used.
    pub fn cache_text(&self) -> Option<String> {
        (self.cache_read + self.cache_write > 0).then(|| {
            format!(
                "{} read / {} written ({:.0}% of input)",
                self.cache_read,
                self.cache_write,
                100.0 * self.cached_share()
            )
        })
    }

    /// `~$0.0602`, `~$1.25`, when the cost is known.
    pub fn cost_text(&self) -> Option<String> {
        self.cost.map(|c| match c < 1.0 {
            true => format!("~${c:.4}"),
            false => format!("~${c:.2}"),
        })
    }

    /// The share of all input that was read from a prompt cache.
    pub fn cached_share(&self) -> f64 {
        let all = self.input + self.cache_read + self.cache_write;
        match all {
            0 => 0.0,
            _ => self.cache_read as f64 / all as f64,
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ModelSelection {
    pub provider: String,
    pub id: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelSelection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionGetResult {
    pub session_id: String,
    pub session_key: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub message_count: u64,
    pub tokens: TokenCounts,
    pub settings: SessionSettings,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_policy: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_reset_at: Option<i64>,
    pub previous_session_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Who spoke last, as the gateway decided (absent before a message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<crate::Trust>,
}

/// `session.patch` result: always `{"ok": true}` (the patched session is
/// read with `session.get`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SessionPatchResult {
    pub ok: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionPreviewParams {
    pub session_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionPreviewResult {
    pub session_key: String,
    pub session_id: String,
    pub message_count: u64,
    pub messages: Vec<Message>,
}

/// `sessions.list`: the sessions the gateway has seen, most recently active first.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionsListParams {
    /// Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
    /// Default 100, at most 500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionRegistryEntry {
    pub session_key: String,
    pub created_at: i64,
    pub last_active_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionsListResult {
    pub sessions: Vec<SessionRegistryEntry>,
    /// All sessions, not just this page.
    pub count: u64,
}

/// `session.stats` (params: `SessionGetParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionStatsResult {
    pub session_key: String,
    pub session_id: String,
    pub message_count: u64,
    pub tokens: TokenCounts,
    pub created_at: i64,
    pub updated_at: i64,
    /// Milliseconds since the session was created.
    pub uptime: i64,
    pub is_processing: bool,
    /// Messages waiting for their run.
    pub queue_size: u64,
    /// How the last run read the agent's workspace, if this object has
    /// assembled a prompt since it was loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_workspace_load: Option<WorkspaceLoadStats>,
    /// Who spoke last, as the gateway decided (absent before a message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<crate::Trust>,
    /// The last run's tokens (all its model calls) and their cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_turn: Option<TokenCounts>,
}

/// The R2 requests one run made to assemble its system prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceLoadStats {
    /// Object reads (workspace files, daily memory, SKILL.md bodies).
    pub r2_gets: u32,
    /// Listing pages (the workspace's top level, the daily memory window,
    /// the agent's and the global skills).
    pub r2_lists: u32,
    /// Template writes (an agent's first start only).
    pub r2_puts: u32,
    /// Requests that had to wait for an earlier one: 1 when everything went
    /// out in one parallel batch.
    pub batches: u32,
    /// SKILL.md bodies taken from the cache (listed at an etag already read).
    pub skills_cached: u32,
    /// SKILL.md bodies read because the cache had not seen them.
    pub skills_read: u32,
    /// Workspace and daily memory files known without reading them: held
    /// at the listed etag, or listed as absent.
    #[serde(default)]
    pub files_cached: u32,
    /// Set when the run's first model call went out with the session's
    /// previous prompt while this load checked the workspace; absent when
    /// the call waited for the load (a session's first run in this object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub early_call: Option<EarlyCall>,
    /// The long-term memories recalled into the prompt (their URIs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recalled: Vec<String>,
}

/// What became of a model call made before the workspace check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum EarlyCall {
    /// The check found the same prompt: the call went on.
    Kept,
    /// The prompt had changed: the call was cancelled and made again with
    /// the new one, before any of its text was shown.
    Discarded,
    /// Nothing the prompt is made of had changed (no workspace write the
    /// gateway knows of) and it was checked against R2 less than
    /// `workspace.recheckSeconds` ago: the call went out with it and
    /// nothing was read.
    Reused,
}

/// `session.history` (params: `SessionGetParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionHistoryResult {
    pub session_key: String,
    pub current_session_id: String,
    pub previous_session_ids: Vec<String>,
}

/// `session.patch`: settings are merged field by field (so is
/// `settings.model`); `resetPolicy` is merged, its mode defaulting to
/// `manual`; `label` replaces. `null` clears a field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionPatchParams {
    pub session_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_policy: Option<Value>,
}

/// `session.compact`: keep the last `keepMessages` (default 20) verbatim,
/// never separating a tool call from its results, and archive the rest to
/// `agents/{agentId}/sessions/{sessionId}-part{ms}.jsonl.gz`. No model call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionCompactParams {
    pub session_key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_messages: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionCompactResult {
    pub ok: bool,
    pub trimmed_messages: u64,
    pub kept_messages: u64,
    /// The R2 key of the part archive, when messages were removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_to: Option<String>,
}

/// `session.reset` (params: `SessionGetParams`): archive every message to
/// `agents/{agentId}/sessions/{sessionId}.jsonl.gz`, then start a new
/// session id with zeroed counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionResetResult {
    pub ok: bool,
    pub session_key: String,
    pub old_session_id: String,
    pub new_session_id: String,
    pub archived_messages: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_to: Option<String>,
    pub tokens_cleared: TokenCounts,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_deleted: Option<u64>,
}

/// `session.transcript`: the archived messages of one session id of this
/// session (its compaction parts in order, then its reset archive), paged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionTranscriptParams {
    pub session_key: String,
    /// Default: the current session id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
    /// Default 100, at most 1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SessionTranscriptResult {
    pub session_key: String,
    pub session_id: String,
    /// The R2 keys read, in order.
    pub archives: Vec<String>,
    /// Each archive's custom metadata (sessionKey, messageCount,
    /// archivedAt…), in the order of `archives`.
    #[serde(default)]
    pub archive_metadata: Vec<std::collections::BTreeMap<String, String>>,
    /// Each archive's compressed size in bytes, in the order of `archives`.
    #[serde(default)]
    pub archive_bytes: Vec<u64>,
    pub messages: Vec<Message>,
    /// Where the next page starts, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u32>,
}

/// `skills.status`: the agent's skills, where each comes from, and whether
/// the connected hosts meet its requirements.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SkillsStatusParams {
    /// Default: the default agent (`main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

/// `workspace.list`: a directory of the agent's R2 workspace (`skills/` is
/// the merged view of the agent's and the global skills).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceListParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Default: the default agent (`main`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceListResult {
    pub path: String,
    pub files: Vec<String>,
    pub directories: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceReadParams {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceReadResult {
    pub path: String,
    pub content: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<i64>,
    /// For `skills/…`: the R2 key actually read and whether it was the
    /// agent's override or the global skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_source: Option<crate::SkillSource>,
    /// The version read (R2's etag): given back as `expectedEtag`,
    /// `workspace.write` replaces this version only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceWriteParams {
    pub path: String,
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Write only if the file is still at this version (a `workspace.read`
    /// etag); otherwise nothing is written and the answer is a 409, so an
    /// editor shows the conflict instead of overwriting someone's change.
    /// Absent: write whatever is there (v1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_etag: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceWriteResult {
    pub path: String,
    pub size: u64,
    pub written: bool,
    /// For a write with `expectedEtag`: the new version's etag, for the
    /// next such write (v1's answer, to v1's request, stays as it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceDeleteParams {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceDeleteResult {
    pub path: String,
    pub deleted: bool,
}

/// `workspace.refresh`: the next run of every session reads the agent's
/// workspace again, for edits made outside the gateway (the R2 dashboard,
/// `wrangler r2`), which runs otherwise see within `workspace.recheckSeconds`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceRefreshResult {
    /// The workspace revision the next runs compare their prompts with.
    pub revision: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::Frame;
    use serde_json::json;

    #[test]
    fn connect_params_from_v1_client() {
        // What the upstream Rust CLI sends.
        let frame: Frame = serde_json::from_value(json!({
            "type":"req","id":"1","method":"connect",
            "params":{"minProtocol":1,"maxProtocol":1,
                "client":{"id":"cli-1","version":"0.0.1","platform":"linux","mode":"client"},
                "auth":{"token":"s3cret"},"sessionKey":null}
        }))
        .unwrap();
        let Frame::Req(req) = frame else {
            panic!("not a request")
        };
        let params: ConnectParams = serde_json::from_value(req.params.unwrap()).unwrap();
        assert_eq!(
            params,
            ConnectParams {
                min_protocol: 1,
                max_protocol: 1,
                client: ClientInfo {
                    id: "cli-1".into(),
                    version: "0.0.1".into(),
                    platform: "linux".into(),
                    mode: ClientMode::Client,
                    channel: None,
                    account_id: None,
                },
                tools: None,
                node_runtime: None,
                auth: Some(AuthParams {
                    token: Some("s3cret".into())
                }),
            }
        );
    }

    #[test]
    fn frames_serialize_as_v1() {
        assert_eq!(
            serde_json::to_value(Frame::err(
                "7",
                crate::ErrorShape::new(crate::codes::NOT_FOUND, "Unknown method: nope")
            ))
            .unwrap(),
            json!({"type":"res","id":"7","ok":false,"error":{"code":404,"message":"Unknown method: nope"}})
        );
        assert_eq!(
            serde_json::to_value(Frame::ok("8", json!({"ok":true}))).unwrap(),
            json!({"type":"res","id":"8","ok":true,"payload":{"ok":true}})
        );
        let evt = ChatEvent {
            run_id: Some("r1".into()),
            session_key: "agent:main:main".into(),
            state: ChatState::Delta,
            delta: Some("Hel".into()),
            message: None,
            usage: None,
            error: None,
        };
        assert_eq!(
            serde_json::to_value(Frame::event("chat", serde_json::to_value(&evt).unwrap()))
                .unwrap(),
            json!({"type":"evt","event":"chat","payload":{"runId":"r1","sessionKey":"agent:main:main","state":"delta","delta":"Hel"}})
        );
    }

    #[test]
    fn config_get_result_shapes() {
        assert_eq!(
            serde_json::to_value(ConfigGetResult::Path {
                path: "model.id".into(),
                value: json!("x")
            })
            .unwrap(),
            json!({"path":"model.id","value":"x"})
        );
        assert_eq!(
            serde_json::to_value(ConfigGetResult::Whole { config: json!({}) }).unwrap(),
            json!({"config":{}})
        );
    }
}
