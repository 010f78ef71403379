//! Session archives in R2: manual compaction (`session.compact`) writes the
//! removed messages as a gzip JSONL part archive before deleting them, and
//! `session.transcript` reads a session id's archives back, paged. Resets
//! (`super::reset`) and automatic compaction write theirs with
//! [`write_archive`].

use super::error::{Res, SessionError};
use super::store::SessionStore;
use crate::archive::{
    part_archive_key, part_archive_metadata, read_page, ArchiveInfo, ArchiveWriter,
};
use crate::routing::agent_id_of;
use crate::session::compaction::plan_manual;
use crate::session::reset::ArchiveCheck;
use crate::session::transcript::{order_archives, page_slices};
use crate::worker::rpc::now_ms;
use crate::workspace::paths::agent_root;
use gsv_protocol::*;
use std::collections::{BTreeMap, HashMap};
use worker::{Bucket, HttpMetadata};

/// Compressed chunks handed out by the archive writer.
const CHUNK_BYTES: usize = 64 * 1024;

/// `resetting`: a reset is running in this instance right now.
pub async fn compact(
    store: &SessionStore,
    bucket: &Bucket,
    resetting: bool,
    p: SessionCompactParams,
) -> Res<SessionCompactResult> {
    let meta = store.meta(&p.session_key)?;
    if resetting || store.reset_pending() {
        return Err(SessionError::Busy("This session is being reset".into()));
    }
    if store.current_run()?.is_some() {
        return Err(SessionError::Busy(
            "A run is in progress in this session; compact it once the run has ended".into(),
        ));
    }
    let rows = store.message_rows()?;
    let messages: Vec<Message> = rows
        .iter()
        .map(|r| serde_json::from_str(&r.data))
        .collect::<Result<_, _>>()
        .map_err(SessionError::storage)?;
    let keep = p.keep_messages.unwrap_or(20) as usize;
    let Some(split) = plan_manual(&messages, keep) else {
        let kept = messages.len() as u64;
        return Ok(SessionCompactResult {
            ok: true,
            trimmed_messages: 0,
            kept_messages: kept,
            archived_to: None,
        });
    };

    let now = now_ms();
    let agent = agent_id_of(&meta.session_key);
    let key = part_archive_key(&agent, &meta.session_id, now);
    let info = ArchiveInfo {
        session_key: &meta.session_key,
        session_id: &meta.session_id,
        agent_id: &agent,
        message_count: split as u64,
        archived_at_ms: now,
    };
    let metadata = part_archive_metadata(&info, now);
    let old = rows[..split].iter().map(|r| Ok(r.data.clone()));
    let (check, size) = write_archive(bucket, &key, old, &metadata).await?;
    verified(&key, &check, size, split, &metadata)?;
    store.delete_messages_before(rows[split].idx)?;
    Ok(SessionCompactResult {
        ok: true,
        trimmed_messages: split as u64,
        kept_messages: (messages.len() - split) as u64,
        archived_to: Some(key),
    })
}

/// The messages go only once their archive is verifiably there: the
/// stored object has the size uploaded, every message and the metadata.
pub(super) fn verified(
    key: &str,
    check: &ArchiveCheck,
    size: u64,
    count: usize,
    metadata: &BTreeMap<String, String>,
) -> Res<()> {
    if check.size != Some(size)
        || check.messages_written != count as u64
        || &check.custom_metadata != metadata
    {
        return Err(SessionError::Storage(format!(
            "the archive {key} could not be verified; nothing was removed"
        )));
    }
    Ok(())
}

pub async fn transcript(
    store: &SessionStore,
    bucket: &Bucket,
    p: SessionTranscriptParams,
) -> Res<SessionTranscriptResult> {
    let meta = store.meta(&p.session_key)?;
    let session_id = p
        .session_id
        .clone()
        .unwrap_or_else(|| meta.session_id.clone());
    // A session reads only its own transcripts.
    if session_id != meta.session_id && !meta.previous_session_ids.contains(&session_id) {
        return Err(SessionError::NotFound(format!(
            "{session_id} is not a session id of {}",
            meta.session_key
        )));
    }
    let agent = agent_id_of(&meta.session_key);
    let prefix = format!("{}sessions/{session_id}", agent_root(&agent));
    let (keys, _) = crate::worker::r2::list(bucket, &prefix, None)
        .await
        .map_err(SessionError::storage)?;
    let archives = order_archives(&session_id, &keys);
    let mut counts = Vec::new();
    let mut archive_metadata = Vec::new();
    let mut archive_bytes = Vec::new();
    for key in &archives {
        let head = bucket.head(key).await.map_err(SessionError::storage)?;
        archive_bytes.push(head.as_ref().map_or(0, |o| o.size()));
        let metadata: BTreeMap<String, String> = head
            .and_then(|o| o.custom_metadata().ok())
            .map(|m| m.into_iter().collect())
            .unwrap_or_default();
        let count = metadata
            .get("messageCount")
            .and_then(|c| c.parse::<u64>().ok())
            .unwrap_or(0);
        counts.push(count);
        archive_metadata.push(metadata);
    }
    let offset = p.offset.unwrap_or(0) as usize;
    let limit = p.limit.unwrap_or(100).clamp(1, 1000) as usize;
    let mut messages = Vec::new();
    for (i, start, take) in page_slices(&counts, offset, limit) {
        let Some(obj) = bucket
            .get(&archives[i])
            .execute()
            .await
            .map_err(SessionError::storage)?
        else {
            continue;
        };
        let bytes = match obj.body() {
            Some(body) => body.bytes().await.map_err(SessionError::storage)?,
            None => continue,
        };
        let page =
            read_page::<Message, _>(&bytes[..], start, take).map_err(SessionError::storage)?;
        messages.extend(page.items);
    }
    let total: u64 = counts.iter().sum();
    let end = (offset + messages.len()) as u64;
    Ok(SessionTranscriptResult {
        session_key: meta.session_key,
        session_id,
        archives,
        archive_metadata,
        archive_bytes,
        next_offset: (end < total && !messages.is_empty()).then_some(end as u32),
        messages,
    })
}

/// Streams messages (their stored JSON, one row at a time) through gzip
/// into `key` with `metadata`, then reads the stored object's head back
/// (what a caller verifies before deleting anything) and the size it
/// uploaded. Only the compressed bytes are held, never the whole history.
pub(super) async fn write_archive(
    bucket: &Bucket,
    key: &str,
    rows: impl IntoIterator<Item = Res<String>>,
    metadata: &BTreeMap<String, String>,
) -> Res<(ArchiveCheck, u64)> {
    let mut writer = ArchiveWriter::new(CHUNK_BYTES);
    let mut body = Vec::new();
    for json in rows {
        if let Some(chunk) = writer.push_json(&json?).map_err(SessionError::storage)? {
            body.extend_from_slice(&chunk);
        }
    }
    let written = writer.message_count();
    body.extend(writer.finish().map_err(SessionError::storage)?);
    let size = body.len() as u64;
    let custom: HashMap<String, String> = metadata.clone().into_iter().collect();
    let http = HttpMetadata {
        content_type: Some("application/gzip".into()),
        ..Default::default()
    };
    bucket
        .put(key, body)
        .http_metadata(http)
        .custom_metadata(custom)
        .execute()
        .await
        .map_err(SessionError::storage)?;
    let head = bucket.head(key).await.map_err(SessionError::storage)?;
    let check = ArchiveCheck {
        messages_written: written,
        size: head.as_ref().map(|o| o.size()),
        custom_metadata: head
            .and_then(|o| o.custom_metadata().ok())
            .map(|m| m.into_iter().collect())
            .unwrap_or_default(),
    };
    Ok((check, size))
}
