//! Who is speaking in a turn, as the gateway decided it (never the
//! model): the level a turn runs at, and what `trust.explain` reports.

use serde::{Deserialize, Serialize};

/// A turn's trust level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum TrustLevel {
    /// The gateway's own clients (holding the token), and the chat
    /// identities the owner declared as theirs (`owner.identities`).
    Owner,
    /// A paired or allow-listed person who is not the owner.
    Approved,
    /// Any multi-person chat, whoever wrote.
    Group,
    /// A cron job, heartbeat or reminder: it acts as whoever created it.
    System,
}

impl TrustLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "owner",
            Self::Approved => "approved",
            Self::Group => "group",
            Self::System => "system",
        }
    }
}

/// A turn's trust: its level, and the level its tools and commands are
/// decided at (the same, but for `system`, which acts as its creator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Trust {
    pub level: TrustLevel,
    pub acts_as: TrustLevel,
}

impl Trust {
    pub const OWNER: Trust = Trust::of(TrustLevel::Owner);
    pub const APPROVED: Trust = Trust::of(TrustLevel::Approved);
    pub const GROUP: Trust = Trust::of(TrustLevel::Group);

    pub const fn of(level: TrustLevel) -> Self {
        Self {
            level,
            acts_as: level,
        }
    }

    /// A scheduled turn, at the level of whoever made its job.
    pub fn system(creator: Trust) -> Self {
        Self {
            level: TrustLevel::System,
            acts_as: creator.acts_as,
        }
    }

    pub fn is_owner(self) -> bool {
        self.acts_as == TrustLevel::Owner
    }
}

/// Unknown (older data, a field left out): the least trusted, so nothing
/// is granted by omission.
impl Default for Trust {
    fn default() -> Self {
        Self::GROUP
    }
}

impl std::fmt::Display for Trust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.level == self.acts_as {
            true => f.write_str(self.level.as_str()),
            false => write!(f, "{} (as {})", self.level.as_str(), self.acts_as.as_str()),
        }
    }
}

/// `trust.explain`: what a session's speaker may make the agent do.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TrustExplainParams {
    /// Default: the main session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// Explain this level instead of the session's last message's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<TrustLevel>,
}

/// One tool, offered or refused, and the rule that decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolVerdict {
    pub name: String,
    /// Offered to the model.
    pub allowed: bool,
    /// Offered, and each call waits for the owner's approval.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ask: bool,
    pub rule: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TrustExplainResult {
    pub session_key: String,
    pub trust: Trust,
    /// Where the level came from: the session's last message, the level
    /// asked for, or (no message yet) the kind of session.
    pub trust_source: String,
    pub is_main: bool,
    /// Who lands in this session, and by which rule.
    pub landing: String,
    /// Whether `/reset`, `/new`, `/model`, `/think`, `/compact` and
    /// inline directives are taken from this speaker here.
    pub may_change_session: bool,
    /// Every tool the agent has now, in the order a prompt lists them.
    pub tools: Vec<ToolVerdict>,
    /// Settings that let people other than the owner do more than the
    /// defaults allow.
    pub warnings: Vec<String>,
}

/// `audit.list`: the tool calls of turns below the owner, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AuditListParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// Default 100, at most 1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// One recorded tool call: who asked, at what level, for what, and what
/// became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    pub at_ms: i64,
    pub session_key: String,
    /// The person (`channel:id` or identity link) or group who spoke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub who: Option<String>,
    pub trust: Trust,
    pub tool: String,
    /// SHA-256 of the call's arguments as sent (hex, first 16 digits):
    /// identifies them without keeping what they said.
    pub args_digest: String,
    /// `ran` or `refused`.
    pub decision: String,
    pub rule: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AuditListResult {
    pub entries: Vec<AuditEntry>,
    /// All recorded entries (of the session, when one was named).
    pub count: u64,
}

/// A tool call waiting for the owner's decision (`tools.policy.*.ask`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    /// What the owner answers with: `approve CODE` or `deny CODE`.
    pub code: String,
    pub session_key: String,
    /// The person (`channel:id` or identity link), absent in a group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub who: Option<String>,
    pub trust: Trust,
    pub tool: String,
    /// The call's arguments, exactly as the model sent them.
    pub args: serde_json::Value,
    pub created_at_ms: i64,
    /// Denied if undecided by then (`tools.policy.askTimeoutSeconds`).
    pub expires_at_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalsListResult {
    pub approvals: Vec<Approval>,
}

/// `approvals.decide`: `approve` or deny the call with this code;
/// `always` also approves this person's (or group's) later calls of the
/// same tool without asking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalDecideParams {
    pub code: String,
    pub approve: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub always: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ApprovalDecideResult {
    pub approval: Approval,
    /// `approved`, `approved always` or `denied`.
    pub decision: String,
}
