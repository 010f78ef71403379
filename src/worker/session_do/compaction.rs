//! Automatic compaction inside a run: before a model call
//! when the context nears the window, or once after the provider refused
//! the prompt as too long. The order of `crate::session::compaction`:
//! summarize, archive (verified), memories, then one synchronous step that
//! swaps the old messages for the summary — so a crash anywhere before it
//! leaves the history whole.

use super::archives::{verified, write_archive};
use super::error::Res;
use super::store::SessionStore;
use super::summarizer;
use crate::archive::{part_archive_key, part_archive_metadata, ArchiveInfo};
use crate::config::Config;
use crate::routing::agent_id_of;
use crate::session::compaction::{
    plan_compaction, should_compact_counted, summary_message, CompactionSettings,
    CompactionTrigger, Summarization,
};
use crate::session::memory::{compaction_marker, MemorySource, MemoryTarget};
use crate::session::run_config::RunConfig;
use crate::worker::rpc::now_ms;
use crate::worker::tz::user_time_zone;
use gsv_protocol::Message;
use worker::{console_error, console_log, Bucket};

/// Compacts the session if `history` (all its messages, as just read,
/// with each one's token estimate)
/// needs it: `overflow` when the provider refused the prompt. Returns
/// whether messages were replaced; `false` also when run `run_id` was
/// ended meanwhile (nothing is changed then).
#[allow(clippy::too_many_arguments)]
pub async fn maybe_compact(
    env: &worker::Env,
    store: &SessionStore,
    bucket: &Bucket,
    run_id: &str,
    config: &Config,
    rc: &RunConfig,
    (history, tokens): (&[Message], &[u64]),
    system_tokens: u64,
    overflow: bool,
) -> Res<bool> {
    let settings = CompactionSettings::from_config(config, &rc.provider, &rc.model);
    let meta = store.meta("")?;
    let trigger = match overflow {
        true if settings.enabled => Some(CompactionTrigger::Overflow),
        true => None,
        false => should_compact_counted(
            &settings,
            history,
            tokens,
            system_tokens,
            meta.last_input_tokens,
        ),
    };
    let Some(trigger) = trigger else {
        return Ok(false);
    };
    // Read with their indexes in the same step as `history`: no await since.
    let rows = store.message_rows()?;
    if rows.len() != history.len() {
        return Ok(false);
    }
    let Some(plan) = plan_compaction(history, &settings, &trigger) else {
        return Ok(false);
    };
    let old = &history[..plan.split];
    let agent = agent_id_of(&meta.session_key);
    let part_ms = now_ms();
    let target = MemoryTarget::at(&agent, &*user_time_zone(config), part_ms);
    let existing = summarizer::existing_memories(bucket, &target.key).await;
    let mut summarization = Summarization::new(
        old,
        plan.chunks.clone(),
        settings.context_window,
        existing.as_deref(),
    );
    while let Some(req) = summarization.next_request(old) {
        if !store.is_current(run_id) {
            return Ok(false);
        }
        match summarizer::ask(env, rc, &req).await {
            Ok(answer) => summarization.accept(&answer),
            Err(e) => {
                console_error!("session {}: summarizer: {}", meta.session_key, e.message);
                summarization.fail();
            }
        }
    }
    let outcome = summarization.finish(old);
    if !store.is_current(run_id) {
        return Ok(false);
    }

    let key = part_archive_key(&agent, &meta.session_id, part_ms);
    let info = ArchiveInfo {
        session_key: &meta.session_key,
        session_id: &meta.session_id,
        agent_id: &agent,
        message_count: plan.split as u64,
        archived_at_ms: part_ms,
    };
    let metadata = part_archive_metadata(&info, part_ms);
    let old_rows = rows[..plan.split].iter().map(|r| Ok(r.data.clone()));
    let (check, size) = write_archive(bucket, &key, old_rows, &metadata).await?;
    verified(&key, &check, size, plan.split, &metadata)?;

    if settings.extract_memories {
        let marker = compaction_marker(&meta.session_id, part_ms);
        if let Err(e) = summarizer::append_memories(
            bucket,
            &target.key,
            MemorySource::Compaction,
            &target.time,
            &marker,
            &outcome.memories,
        )
        .await
        {
            // Memories are best-effort; the summary still holds them.
            console_error!("session {}: daily memory: {e}", meta.session_key);
        }
        summarizer::write_extracted(
            env,
            config,
            &meta.session_key,
            &outcome.memories,
            "compaction",
        )
        .await;
    }
    if !store.is_current(run_id) {
        return Ok(false);
    }

    // One synchronous step: the old messages go, the summary takes the
    // index just before the first kept message.
    let first_kept = rows[plan.split].idx;
    let summary = summary_message(&outcome, part_ms);
    store.replace_with_summary(first_kept, &summary, part_ms)?;
    let mut meta = store.meta("")?;
    meta.compaction_count += 1;
    meta.last_compacted_at = Some(part_ms);
    // It measured the context that is gone.
    meta.last_input_tokens = None;
    store.save_meta(&meta)?;
    console_log!(
        "session {}: compacted {} messages (~{} tokens, {:?} summary in {} calls) into {key}",
        meta.session_key,
        plan.split,
        plan.old_tokens,
        outcome.tier,
        outcome.calls
    );
    Ok(true)
}
