//! Files read back for a model call. Prepared files (an image's base64, a
//! document's text) stay in the isolate's cache (`crate::media::cache`,
//! 50 MB), shared by every session of the isolate, so a conversation with
//! photos reads each from R2 once, not at every call. Voice notes are
//! transcribed here the first time a call meets them, and the transcript
//! is written into the stored message.

use super::transcribe::transcribe;
use crate::config::Config;
use crate::llm::provider_for;
use crate::media::cache::MediaCache;
use crate::media::hydrate::{
    self, apply, plan, prepare, set_transcript, Limits, Loaded, ToRead, TranscriptStore,
};
use crate::media::transcribe::transcriber;
use crate::session::run_config::RunConfig;
use gsv_protocol::Message;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use worker::{console_error, Bucket, Env};

thread_local! {
    static CACHE: RefCell<MediaCache> = RefCell::new(MediaCache::default());
}

/// The history as the model call sends it (see `crate::media::hydrate`):
/// borrowed as it is when it names no file, as most do. Voice notes not yet
/// transcribed are first (their transcripts go into the sent copy and the
/// stored messages).
pub async fn for_call<'h>(
    env: &Env,
    bucket: &Bucket,
    store: &dyn TranscriptStore,
    config: &Config,
    rc: &RunConfig,
    history: &'h [Message],
) -> Cow<'h, [Message]> {
    let mut history = Cow::Borrowed(history);
    let pending = hydrate::untranscribed(&history);
    if !pending.is_empty() {
        let has_ai = crate::worker::bindings::ai(env, crate::worker::bindings::AI).is_some();
        let service = transcriber(config, has_ai);
        for audio in pending {
            let outcome = match &service {
                Ok(service) => transcribe(env, bucket, service, &audio).await,
                Err(why) => Err(why.clone()),
            };
            if let Err(e) = &outcome {
                console_error!("media: {} not transcribed: {e}", audio.r2_key);
            }
            for m in history.to_mut().iter_mut() {
                set_transcript(m, &audio.r2_key, &outcome);
            }
            if let Err(e) = store.save_transcript(&audio.r2_key, &outcome) {
                console_error!("media: keeping the transcript of {}: {e}", audio.r2_key);
            }
        }
    }
    let api = provider_for(&rc.provider, rc.api.as_deref()).api();
    let limits = Limits::for_api(api, rc.max_result_chars);
    let plan = plan(&history, &limits);
    if plan.read.is_empty() && plan.skipped.is_empty() && !has_attachments(&history) {
        return history;
    }
    // One after the other: most come from the cache, and a call rarely
    // has more than a few files to read from R2.
    let mut loaded: HashMap<String, Loaded> = HashMap::new();
    for r in &plan.read {
        loaded.insert(r.key.clone(), load(bucket, r).await);
    }
    Cow::Owned(apply(&history, &plan, &loaded, &limits))
}

fn has_attachments(history: &[Message]) -> bool {
    history.iter().any(|m| match m {
        Message::User(u) => matches!(&u.content, gsv_protocol::UserContent::Blocks(b)
            if b.iter().any(|b| matches!(b, gsv_protocol::ContentBlock::Attachment(_)))),
        _ => false,
    })
}

/// One file, from the cache or R2 (and then cached).
async fn load(bucket: &Bucket, r: &ToRead) -> Loaded {
    if let Some(hit) = CACHE.with(|c| c.borrow_mut().get(&r.key)) {
        return Ok(Some(hit));
    }
    let object = bucket
        .get(&r.key)
        .execute()
        .await
        .map_err(|e| e.to_string())?;
    let Some(object) = object else {
        return Ok(None);
    };
    let bytes = match object.body() {
        Some(body) => body.bytes().await.map_err(|e| e.to_string())?,
        None => Vec::new(),
    };
    let prepared = prepare(r.kind, &r.mime, r.filename.as_deref(), &bytes);
    CACHE.with(|c| c.borrow_mut().put(&r.key, prepared.clone()));
    Ok(Some(prepared))
}

/// A session's media were deleted: its cached files go too.
pub fn forget_session(prefix: &str) {
    CACHE.with(|c| c.borrow_mut().remove_prefix(prefix));
}
