//! Session resets: the steps of a
//! `ResetPlan`, each recorded in SQLite as it completes, so a reset
//! interrupted by an eviction resumes where it stopped and never clears
//! messages before their archive is verified.
//!
//! Manual (`session.reset`, `/reset`, `/new`): queued messages stay queued
//! for the new session. Automatic (the reset policy was due when a message
//! arrived): that message stays queued, marked, until the plan is saved —
//! in the same synchronous step — and the loop hands it to the new session
//! once the plan is done (steps 9 and 10).

use super::archives::write_archive;
use super::error::{Res, SessionError};
use super::store::SessionStore;
use super::summarizer;
use super::tools::TOOLS_DEADLINE;
use crate::routing::agent_id_of;
use crate::session::compaction::{CompactionSettings, MemoryExtraction};
use crate::session::memory::MemorySource;
use crate::session::reset::{ResetInput, ResetPlan, ResetReason, ResetStep};
use crate::worker::rpc::{new_id, now_ms};
use crate::worker::tz::user_time_zone;
use gsv_protocol::*;
use std::cell::Cell;
use worker::{console_error, console_log, Bucket};

/// What a reset works with: the session's store, the bucket its archive
/// and memories go to, and the instance's flag that lets one plan run at
/// a time.
pub struct Reset<'a> {
    pub store: &'a SessionStore,
    pub bucket: &'a Bucket,
    /// For the memory index, where extracted memories are written too.
    pub env: &'a worker::Env,
    pub busy: &'a Cell<bool>,
}

impl Reset<'_> {
    /// A manual reset (a run in progress must have been ended by the caller).
    pub async fn manual(&self, key: &str) -> Res<SessionResetResult> {
        let store = self.store;
        if store.current_run()?.is_some() {
            return Err(SessionError::Busy(
                "A run is in progress in this session; reset it once the run has ended".into(),
            ));
        }
        let plan = match store.load_plan()? {
            Some(plan) => plan,
            None => {
                let plan = self.new_plan(key, ResetReason::Manual)?;
                store.save_plan(Some(&plan))?;
                plan
            }
        };
        self.run_plan(plan).await
    }

    /// The automatic reset the next queued message asked for.
    pub async fn auto(&self) -> Res<()> {
        let meta = self.store.meta("")?;
        let plan = self.new_plan(&meta.session_key, ResetReason::Auto)?;
        self.store.begin_auto_reset(&plan)?;
        console_log!(
            "session {}: reset policy due, archiving {} messages",
            plan.session_key,
            plan.message_count
        );
        self.run_plan(plan).await.map(|_| ())
    }

    fn new_plan(&self, key: &str, reason: ResetReason) -> Res<ResetPlan> {
        let store = self.store;
        let meta = store.meta(key)?;
        let agent = agent_id_of(&meta.session_key);
        let new_id = new_id();
        let rc = store.run_config()?;
        let config = store.config()?;
        let settings = CompactionSettings::from_config(&config, &rc.provider, &rc.model);
        let input = ResetInput {
            reason,
            session_key: &meta.session_key,
            agent_id: &agent,
            old_session_id: &meta.session_id,
            new_session_id: &new_id,
            message_count: store.message_count()?,
            tokens: meta.tokens.clone(),
            now_ms: now_ms(),
            last_activity_ms: meta.updated_at,
            extract_memories: settings.enabled
                && settings.extract_memories
                && rc.unusable.is_none(),
        };
        Ok(ResetPlan::new(&input, &*user_time_zone(&config)))
    }

    /// Finishes a reset an eviction interrupted, if there is one.
    pub async fn resume(&self) -> Res<()> {
        if let Some(plan) = self.store.load_plan()? {
            self.run_plan(plan).await?;
        }
        Ok(())
    }

    /// Runs the rest of `plan`; only one plan runs at a time in an instance.
    async fn run_plan(&self, plan: ResetPlan) -> Res<SessionResetResult> {
        if self.busy.replace(true) {
            return Err(SessionError::Busy(
                "This session is being reset already".into(),
            ));
        }
        let result = self.run_steps(plan).await;
        self.busy.set(false);
        result
    }

    async fn run_steps(&self, mut plan: ResetPlan) -> Res<SessionResetResult> {
        let (store, bucket) = (self.store, self.bucket);
        let tokens_before = store.meta(&plan.session_key)?.tokens;
        let mut media_deleted = 0u64;
        while let Some(step) = plan.next_step() {
            match step {
                ResetStep::ArchiveMessages => {
                    let rows = store.message_data()?;
                    let (check, _) =
                        write_archive(bucket, &plan.archive_key, rows, &plan.archive_metadata)
                            .await?;
                    plan.verify_archive(&check).map_err(SessionError::storage)?;
                }
                ResetStep::ExtractMemories => {
                    // Best-effort: a failure costs memories, never messages.
                    if let Err(e) = self.extract_memories(&plan).await {
                        console_error!("session {}: memory extraction: {e}", plan.session_key);
                    }
                    plan.complete(step).map_err(SessionError::storage)?;
                }
                ResetStep::DeleteMedia => {
                    let (keys, _) = crate::worker::r2::list(bucket, &plan.media_prefix, None)
                        .await
                        .map_err(SessionError::storage)?;
                    // R2 deletes up to 1000 keys a request.
                    for batch in keys.chunks(1000) {
                        bucket
                            .delete_multiple(batch.to_vec())
                            .await
                            .map_err(SessionError::storage)?;
                    }
                    crate::worker::media::forget_session(&plan.media_prefix);
                    media_deleted += keys.len() as u64;
                    plan.complete(step).map_err(SessionError::storage)?;
                }
                ResetStep::ClearMessages => {
                    store.clear_messages()?;
                    store.clear_calls(TOOLS_DEADLINE)?;
                    plan.complete(step).map_err(SessionError::storage)?;
                }
                ResetStep::NewSessionId
                | ResetStep::RecordPreviousSessionId
                | ResetStep::ZeroTokenCounters
                | ResetStep::SetLastResetAt => {
                    let mut meta = store.meta(&plan.session_key)?;
                    plan.apply_to_meta(step, &mut meta);
                    store.save_meta(&meta)?;
                    plan.complete(step).map_err(SessionError::storage)?;
                }
                // The triggering message is still queued: the loop moves it into
                // the new session and runs it once the plan is gone.
                ResetStep::AppendTriggeringMessage | ResetStep::ContinueAgentLoop => {
                    plan.complete(step).map_err(SessionError::storage)?;
                }
            }
            // Progress is recorded after every step: a crash redoes at most one.
            store.save_plan(Some(&plan))?;
        }
        store.save_plan(None)?;
        Ok(SessionResetResult {
            ok: true,
            session_key: plan.session_key.clone(),
            old_session_id: plan.old_session_id.clone(),
            new_session_id: plan.new_session_id.clone(),
            archived_messages: plan.message_count,
            archived_to: (plan.message_count > 0).then(|| plan.archive_key.clone()),
            tokens_cleared: tokens_before,
            media_deleted: Some(media_deleted),
        })
    }

    /// Step 2: the model lists what is worth keeping from the conversation,
    /// appended to the daily file of its last activity.
    async fn extract_memories(&self, plan: &ResetPlan) -> Res<()> {
        let (store, bucket) = (self.store, self.bucket);
        let rc = store.run_config()?;
        if rc.unusable.is_some() {
            return Ok(());
        }
        let settings = CompactionSettings::from_config(&*store.config()?, &rc.provider, &rc.model);
        let messages = store.messages()?;
        let existing = summarizer::existing_memories(bucket, &plan.memory_key).await;
        let mut extraction =
            MemoryExtraction::new(&messages, settings.context_window, existing.as_deref());
        while let Some(req) = extraction.next_request(&messages) {
            match summarizer::ask(self.env, &rc, &req).await {
                Ok(answer) => extraction.accept(&answer),
                Err(e) => {
                    console_error!(
                        "session {}: extraction call: {}",
                        plan.session_key,
                        e.message
                    );
                    extraction.skip();
                }
            }
        }
        summarizer::append_memories(
            bucket,
            &plan.memory_key,
            MemorySource::Reset,
            &plan.memory_time,
            &plan.memory_marker(),
            &extraction.memories(),
        )
        .await
        .map_err(SessionError::storage)?;
        let config = store.config()?;
        summarizer::write_extracted(
            self.env,
            &config,
            &plan.session_key,
            &extraction.memories(),
            "reset",
        )
        .await;
        Ok(())
    }
}
