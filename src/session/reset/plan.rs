//! The reset procedure as data: the ten ordered steps, which of
//! them a reset needs, and how far it got — so the Session DO can execute
//! it step by step and resume after a crash.
//!
//! **Progress** is the plan itself, persisted by the shell in the session's
//! storage (e.g. KV key `resetPlan`) before the first step and again after
//! each completed step (`done` = number of completed steps). On start-up or
//! the next request the shell resumes at [`ResetPlan::next_step`]; while a
//! plan exists, inbound messages are queued, never appended. Every step is
//! idempotent, so redoing the step that was running at the crash is safe.
//!
//! **Invariant**: messages are cleared only after the archive was written
//! *and verified* ([`ResetPlan::verify_archive`]); `complete` refuses
//! anything out of order.

use crate::archive::{archive_key, archive_metadata, ArchiveInfo};
use crate::session::memory::{reset_marker, MemoryTarget};
use crate::session::meta::SessionMeta;
use crate::time::TimeZone;
use gsv_protocol::TokenCounts;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The steps, in order (numbers 1–10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ResetStep {
    /// 1. Stream all messages to `archive_key` (gzip JSONL, `archive_metadata`),
    ///    then HEAD it and call [`ResetPlan::verify_archive`].
    ArchiveMessages,
    /// 2. Extract memories (`MemoryExtraction`) and append them to `memory_key`
    ///    under the [`ResetPlan::memory_marker`]; best-effort.
    ExtractMemories,
    /// 3. Delete every R2 object under `media_prefix` (list until empty).
    DeleteMedia,
    /// 4. Delete the messages (and the media cache, pending tool calls,
    ///    tool alarm; for a manual reset also the queue and current run).
    ClearMessages,
    /// 5. `meta.sessionId = new_session_id`.
    NewSessionId,
    /// 6. Append `old_session_id` to `meta.previousSessionIds`.
    RecordPreviousSessionId,
    /// 7. Zero the token counters (and `lastInputTokens`).
    ZeroTokenCounters,
    /// 8. `meta.lastResetAt = started_at_ms`.
    SetLastResetAt,
    /// 9. Append the message that triggered an automatic reset — only if
    ///    the message table is empty, which makes it idempotent.
    AppendTriggeringMessage,
    /// 10. Delete the persisted plan and continue the agent loop.
    ContinueAgentLoop,
}

impl ResetStep {
    pub const ALL: [ResetStep; 10] = [
        ResetStep::ArchiveMessages,
        ResetStep::ExtractMemories,
        ResetStep::DeleteMedia,
        ResetStep::ClearMessages,
        ResetStep::NewSessionId,
        ResetStep::RecordPreviousSessionId,
        ResetStep::ZeroTokenCounters,
        ResetStep::SetLastResetAt,
        ResetStep::AppendTriggeringMessage,
        ResetStep::ContinueAgentLoop,
    ];

    /// The step's number (1–10).
    pub fn number(self) -> usize {
        Self::ALL.iter().position(|s| *s == self).unwrap_or(0) + 1
    }
}

/// Who asked for the reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ResetReason {
    /// `/reset`, `/new` or `session.reset`: ends after step 8.
    Manual,
    /// A due reset policy, found when a message arrived: steps 9 and 10
    /// hand that message to the fresh session.
    Auto,
}

/// What the shell knows when a reset starts.
#[derive(Debug, Clone, PartialEq)]
pub struct ResetInput<'a> {
    pub reason: ResetReason,
    pub session_key: &'a str,
    pub agent_id: &'a str,
    pub old_session_id: &'a str,
    /// Generated before planning, so step 5 is idempotent.
    pub new_session_id: &'a str,
    pub message_count: u64,
    pub tokens: TokenCounts,
    pub now_ms: i64,
    /// `meta.updatedAt`: dates the memory file.
    pub last_activity_ms: i64,
    /// `compaction.enabled && compaction.extractMemories` and a usable model.
    pub extract_memories: bool,
}

/// What the shell saw after writing the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveCheck {
    /// `ArchiveWriter::message_count()` of the upload.
    pub messages_written: u64,
    /// Object size from a HEAD; `None` when the object is missing.
    pub size: Option<u64>,
    /// Its custom metadata.
    pub custom_metadata: BTreeMap<String, String>,
}

/// Why a step cannot be recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResetError {
    /// `got` is not the next step (`expected`, `None` when finished).
    OutOfOrder {
        expected: Option<ResetStep>,
        got: ResetStep,
    },
    /// The archive is missing or differs from what was planned.
    ArchiveNotVerified(String),
}

impl std::fmt::Display for ResetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResetError::OutOfOrder { expected, got } => {
                write!(f, "reset step {got:?} out of order (next: {expected:?})")
            }
            ResetError::ArchiveNotVerified(why) => write!(f, "archive not verified: {why}"),
        }
    }
}

/// One reset, planned and tracked. Serializable: the shell persists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetPlan {
    pub reason: ResetReason,
    pub session_key: String,
    pub agent_id: String,
    pub old_session_id: String,
    pub new_session_id: String,
    pub message_count: u64,
    pub started_at_ms: i64,
    pub archive_key: String,
    pub archive_metadata: BTreeMap<String, String>,
    /// The daily memory file of the last activity's date (user time zone).
    pub memory_key: String,
    /// `HH:MM` of the last activity, for the section header.
    pub memory_time: String,
    /// `media/{sessionKey}/`.
    pub media_prefix: String,
    pub steps: Vec<ResetStep>,
    /// How many of `steps` are completed: the progress marker.
    pub done: usize,
}

impl ResetPlan {
    /// Plans a reset: every step, less the archive and extraction when
    /// there are no messages, extraction when disabled, and 9–10 for a
    /// manual reset.
    pub fn new(input: &ResetInput, tz: &dyn TimeZone) -> Self {
        let has_messages = input.message_count > 0;
        let steps = ResetStep::ALL
            .into_iter()
            .filter(|step| match step {
                ResetStep::ArchiveMessages => has_messages,
                ResetStep::ExtractMemories => has_messages && input.extract_memories,
                ResetStep::AppendTriggeringMessage | ResetStep::ContinueAgentLoop => {
                    input.reason == ResetReason::Auto
                }
                _ => true,
            })
            .collect();
        let info = ArchiveInfo {
            session_key: input.session_key,
            session_id: input.old_session_id,
            agent_id: input.agent_id,
            message_count: input.message_count,
            archived_at_ms: input.now_ms,
        };
        let memory = MemoryTarget::at(input.agent_id, tz, input.last_activity_ms);
        Self {
            reason: input.reason,
            session_key: input.session_key.to_string(),
            agent_id: input.agent_id.to_string(),
            old_session_id: input.old_session_id.to_string(),
            new_session_id: input.new_session_id.to_string(),
            message_count: input.message_count,
            started_at_ms: input.now_ms,
            archive_key: archive_key(input.agent_id, input.old_session_id),
            archive_metadata: archive_metadata(&info, &input.tokens),
            memory_key: memory.key,
            memory_time: memory.time,
            media_prefix: crate::media::key::session_prefix(input.session_key),
            steps,
            done: 0,
        }
    }

    /// The step to execute now, `None` when the reset is finished.
    pub fn next_step(&self) -> Option<ResetStep> {
        self.steps.get(self.done).copied()
    }

    pub fn is_finished(&self) -> bool {
        self.done >= self.steps.len()
    }

    /// Records `step` as done. The archive step can only be completed by
    /// [`Self::verify_archive`].
    pub fn complete(&mut self, step: ResetStep) -> Result<(), ResetError> {
        if step == ResetStep::ArchiveMessages {
            return Err(ResetError::ArchiveNotVerified(
                "complete the archive step with verify_archive".into(),
            ));
        }
        self.advance(step)
    }

    /// Completes step 1 if the uploaded archive holds every planned message
    /// and carries exactly the planned metadata; otherwise the step must be
    /// redone (it is idempotent) and the messages stay.
    pub fn verify_archive(&mut self, check: &ArchiveCheck) -> Result<(), ResetError> {
        let fail = |why: String| Err(ResetError::ArchiveNotVerified(why));
        if check.messages_written != self.message_count {
            return fail(format!(
                "{} of {} messages written",
                check.messages_written, self.message_count
            ));
        }
        match check.size {
            None => return fail(format!("{} is missing", self.archive_key)),
            Some(0) => return fail(format!("{} is empty", self.archive_key)),
            Some(_) => {}
        }
        if check.custom_metadata != self.archive_metadata {
            return fail(format!("{} has other metadata", self.archive_key));
        }
        self.advance(ResetStep::ArchiveMessages)
    }

    fn advance(&mut self, step: ResetStep) -> Result<(), ResetError> {
        let expected = self.next_step();
        if expected != Some(step) {
            return Err(ResetError::OutOfOrder {
                expected,
                got: step,
            });
        }
        self.done += 1;
        Ok(())
    }

    /// The marker of this reset's memory section (see `session::memory`).
    pub fn memory_marker(&self) -> String {
        reset_marker(&self.old_session_id)
    }

    /// Applies a metadata step (5–8) to `meta`; idempotent, and a no-op for
    /// the other steps. The shell may apply 5–8 together and persist meta and
    /// plan in one atomic storage write.
    pub fn apply_to_meta(&self, step: ResetStep, meta: &mut SessionMeta) {
        match step {
            ResetStep::NewSessionId => meta.session_id = self.new_session_id.clone(),
            ResetStep::RecordPreviousSessionId
                if !meta.previous_session_ids.contains(&self.old_session_id) =>
            {
                meta.previous_session_ids.push(self.old_session_id.clone());
            }
            ResetStep::ZeroTokenCounters => {
                meta.tokens = TokenCounts::default();
                meta.last_input_tokens = None;
            }
            ResetStep::SetLastResetAt => meta.last_reset_at = Some(self.started_at_ms),
            _ => {}
        }
    }

    /// The user-facing confirmation of a manual reset.
    pub fn summary_text(&self) -> String {
        format!("Session reset. Archived {} messages.", self.message_count)
    }
}
