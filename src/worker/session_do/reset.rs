//! Session resets (seed `session-routing.txt`): the steps of a
//! `ResetPlan`, each recorded in SQLite as it completes, so a reset
//! interrupted by an eviction resumes where it stopped and never clears
//! messages before their archive is verified.
//!
//! Manual (`session.reset`, `/reset`, `/new`): queued messages stay queued
//! for the new session. Automatic (the reset policy was due when a message
//! arrived): that message stays queued, marked, until the plan is saved —
//! in the same synchronous step — and the loop hands it to the new session
//! once the plan is done (steps 9 and 10).

use super::archives::{bucket, write_archive};
use super::summarizer;
use super::{Core, Res};
use crate::routing::agent_id_of;
use crate::session::compaction::{CompactionSettings, MemoryExtraction};
use crate::session::memory::MemorySource;
use crate::session::reset::{ResetInput, ResetPlan, ResetReason, ResetStep};
use crate::worker::rpc::{internal_error, new_id, now_ms};
use gsv_protocol::*;
use serde::Deserialize;
use worker::{console_error, console_log};

/// A manual reset (a run in progress must have been ended by the caller).
pub async fn reset(core: &Core, key: &str) -> Res<SessionResetResult> {
    if core.current_run()?.is_some() {
        return Err(ErrorShape::new(
            409,
            "A run is in progress in this session; reset it once the run has ended",
        )
        .retryable(true));
    }
    let plan = match load_plan(core)? {
        Some(plan) => plan,
        None => {
            let plan = new_plan(core, key, ResetReason::Manual)?;
            save_plan(core, Some(&plan))?;
            plan
        }
    };
    run_plan(core, plan).await
}

/// Whether the next queued message asks for an automatic reset first.
pub fn head_resets_first(core: &Core) -> Res<bool> {
    let n = core.count(
        "SELECT COUNT(*) AS n FROM run_queue WHERE seq = (SELECT MIN(seq) FROM run_queue) AND reset_first = 1",
    )?;
    Ok(n > 0)
}

/// The automatic reset the next queued message asked for.
pub async fn auto_reset(core: &Core) -> Res<()> {
    let meta = core.meta("")?;
    let plan = new_plan(core, &meta.session_key, ResetReason::Auto)?;
    // The plan and the message's mark change together: after a crash there
    // is either a plan to resume or a marked message to start it again.
    save_plan(core, Some(&plan))?;
    core.exec("UPDATE run_queue SET reset_first = 0", vec![])?;
    console_log!(
        "session {}: reset policy due, archiving {} messages",
        plan.session_key,
        plan.message_count
    );
    run_plan(core, plan).await.map(|_| ())
}

fn new_plan(core: &Core, key: &str, reason: ResetReason) -> Res<ResetPlan> {
    let meta = core.meta(key)?;
    let agent = agent_id_of(&meta.session_key);
    let new_id = new_id();
    let rc = core.run_config()?;
    let settings = CompactionSettings::from_config(&core.config()?, &rc.provider, &rc.model);
    let input = ResetInput {
        reason,
        session_key: &meta.session_key,
        agent_id: &agent,
        old_session_id: &meta.session_id,
        new_session_id: &new_id,
        message_count: core.message_count()?,
        tokens: meta.tokens.clone(),
        now_ms: now_ms(),
        last_activity_ms: meta.updated_at,
        extract_memories: settings.enabled && settings.extract_memories && rc.unusable.is_none(),
    };
    Ok(ResetPlan::new(&input, &*core.time_zone()))
}

/// Whether a reset was interrupted and still has steps to run.
pub fn reset_pending(core: &Core) -> bool {
    matches!(load_plan(core), Ok(Some(_)))
}

/// Finishes a reset an eviction interrupted, if there is one.
pub async fn resume_reset(core: &Core) -> Res<()> {
    if let Some(plan) = load_plan(core)? {
        run_plan(core, plan).await?;
    }
    Ok(())
}

/// Runs the rest of `plan`; only one plan runs at a time in an instance.
async fn run_plan(core: &Core, plan: ResetPlan) -> Res<SessionResetResult> {
    if core.resetting.replace(true) {
        return Err(ErrorShape::new(409, "This session is being reset already").retryable(true));
    }
    let result = run_steps(core, plan).await;
    core.resetting.set(false);
    result
}

async fn run_steps(core: &Core, mut plan: ResetPlan) -> Res<SessionResetResult> {
    let bucket = bucket(core)?;
    let tokens_before = core.meta(&plan.session_key)?.tokens;
    let mut media_deleted = 0u64;
    while let Some(step) = plan.next_step() {
        match step {
            ResetStep::ArchiveMessages => {
                let cursor = core.exec("SELECT data FROM messages ORDER BY idx", vec![])?;
                let rows = cursor
                    .next::<DataRow>()
                    .map(|r| r.map(|r| r.data).map_err(internal_error));
                let (check, _) =
                    write_archive(&bucket, &plan.archive_key, rows, &plan.archive_metadata).await?;
                plan.verify_archive(&check).map_err(internal_error)?;
            }
            ResetStep::ExtractMemories => {
                // Best-effort: a failure costs memories, never messages.
                if let Err(e) = extract_memories(core, &bucket, &plan).await {
                    console_error!("session {}: memory extraction: {e}", plan.session_key);
                }
                plan.complete(step).map_err(internal_error)?;
            }
            ResetStep::DeleteMedia => {
                let (keys, _) = crate::worker::r2::list(&bucket, &plan.media_prefix, None)
                    .await
                    .map_err(internal_error)?;
                for key in &keys {
                    bucket.delete(key).await.map_err(internal_error)?;
                }
                media_deleted += keys.len() as u64;
                plan.complete(step).map_err(internal_error)?;
            }
            ResetStep::ClearMessages => {
                core.exec("DELETE FROM messages", vec![])?;
                core.clear_calls()?;
                plan.complete(step).map_err(internal_error)?;
            }
            ResetStep::NewSessionId
            | ResetStep::RecordPreviousSessionId
            | ResetStep::ZeroTokenCounters
            | ResetStep::SetLastResetAt => {
                let mut meta = core.meta(&plan.session_key)?;
                plan.apply_to_meta(step, &mut meta);
                core.save_meta(&meta, None)?;
                plan.complete(step).map_err(internal_error)?;
            }
            // The triggering message is still queued: the loop moves it into
            // the new session and runs it once the plan is gone.
            ResetStep::AppendTriggeringMessage | ResetStep::ContinueAgentLoop => {
                plan.complete(step).map_err(internal_error)?;
            }
        }
        // Progress is recorded after every step: a crash redoes at most one.
        save_plan(core, Some(&plan))?;
    }
    save_plan(core, None)?;
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
async fn extract_memories(core: &Core, bucket: &worker::Bucket, plan: &ResetPlan) -> Res<()> {
    let rc = core.run_config()?;
    if rc.unusable.is_some() {
        return Ok(());
    }
    let settings = CompactionSettings::from_config(&core.config()?, &rc.provider, &rc.model);
    let messages = core.messages("SELECT data FROM messages ORDER BY idx", vec![])?;
    let existing = summarizer::existing_memories(bucket, &plan.memory_key).await;
    let mut extraction =
        MemoryExtraction::new(&messages, settings.context_window, existing.as_deref());
    while let Some(req) = extraction.next_request(&messages) {
        match summarizer::ask(&rc, &req).await {
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
    .map_err(internal_error)?;
    Ok(())
}

#[derive(Deserialize)]
struct DataRow {
    data: String,
}

fn load_plan(core: &Core) -> Res<Option<ResetPlan>> {
    #[derive(Deserialize)]
    struct Row {
        plan: String,
    }
    let rows: Vec<Row> = core
        .exec("SELECT plan FROM reset_plan WHERE id = 1", vec![])?
        .to_array()
        .map_err(internal_error)?;
    rows.first()
        .map(|r| serde_json::from_str(&r.plan).map_err(internal_error))
        .transpose()
}

fn save_plan(core: &Core, plan: Option<&ResetPlan>) -> Res<()> {
    match plan {
        Some(plan) => {
            let json = serde_json::to_string(plan).map_err(internal_error)?;
            core.exec(
                "INSERT INTO reset_plan (id, plan) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET plan = excluded.plan",
                vec![json.into()],
            )?;
        }
        None => {
            core.exec("DELETE FROM reset_plan WHERE id = 1", vec![])?;
        }
    }
    Ok(())
}
