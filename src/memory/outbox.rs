//! The outbox consumer: takes one registered event, claims it with a
//! `.processing` mark so no other consumer takes it too, hands it to the
//! index, and then removes it; a failure is retried with backoff and,
//! after `max_retry` failures, moved to `.outbox/dlq/`.

use super::fs::{to_json, ContextFs};
use super::node::{EventPayload, EventStatus, OutboxEvent, DLQ, OUTBOX};
use super::MemoryError;
use crate::storage::ObjectStore;
use serde::{Deserialize, Serialize};

/// Failures before an event goes to the dead-letter queue.
pub const DEFAULT_MAX_RETRY: u32 = 5;
/// A claim older than this is taken to be a consumer that died.
pub const LEASE_MS: i64 = 60_000;
/// Longest wait between two attempts.
const MAX_BACKOFF_MS: i64 = 10 * 60_000;

/// Where an event's changes go: the search index.
#[allow(async_fn_in_trait)]
pub trait IndexSink {
    async fn apply(&self, event: &OutboxEvent, payload: &EventPayload) -> Result<(), String>;
}

/// What became of one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Processed {
    Applied,
    /// Failed; tried again from `at_ms` on.
    Retry {
        at_ms: i64,
        retry_count: u32,
    },
    /// Failed `retry_count` times; now in the dead-letter queue.
    DeadLettered {
        retry_count: u32,
    },
    /// Not to be tried before `at_ms`.
    NotDue {
        at_ms: i64,
    },
    /// Another consumer holds it.
    Claimed,
    /// No such event (already consumed).
    Gone,
}

#[derive(Debug, Serialize, Deserialize)]
struct Claim {
    consumer: String,
    claimed_ms: i64,
}

/// The wait before attempt `retry_count + 1`: 1 s, 2 s, 4 s, … at most
/// ten minutes.
pub fn backoff_ms(retry_count: u32) -> i64 {
    let exp = retry_count.saturating_sub(1).min(20);
    (1000i64 << exp).min(MAX_BACKOFF_MS)
}

/// Whether `key` is a pending event file (not a mark, not dead-lettered).
pub fn is_event_key(key: &str) -> bool {
    match key.split_once(OUTBOX) {
        Some((_, name)) => !name.contains('/') && name.ends_with(".json"),
        None => false,
    }
}

fn mark_key(event_key: &str) -> String {
    format!("{}.processing", event_key.trim_end_matches(".json"))
}

fn dlq_key(event_key: &str) -> Option<String> {
    let (dir, name) = event_key.rsplit_once(OUTBOX)?;
    Some(format!("{dir}{DLQ}{name}"))
}

pub struct Consumer<'a, S: ObjectStore, I: IndexSink> {
    pub fs: &'a ContextFs<'a, S>,
    pub sink: &'a I,
    pub consumer_id: &'a str,
    pub max_retry: u32,
    pub now_ms: i64,
}

impl<S: ObjectStore, I: IndexSink> Consumer<'_, S, I> {
    pub async fn process(&self, key: &str) -> Result<Processed, MemoryError> {
        let store = self.fs.store();
        let Some(object) = store.get(key).await? else {
            return Ok(Processed::Gone);
        };
        let mut event: OutboxEvent =
            serde_json::from_slice(&object.body).map_err(|e| MemoryError::Corrupt {
                key: key.to_string(),
                reason: e.to_string(),
            })?;
        if let Some(at_ms) = event.next_attempt_ms.filter(|at| *at > self.now_ms) {
            return Ok(Processed::NotDue { at_ms });
        }
        if !self.claim(key).await? {
            return Ok(Processed::Claimed);
        }
        event.status = EventStatus::Processing;
        self.put_event(key, &event).await?;
        let result = match EventPayload::from_event(&event) {
            Ok(payload) => self.sink.apply(&event, &payload).await,
            Err(e) => Err(format!("malformed payload: {e}")),
        };
        let outcome = match result {
            Ok(()) => {
                store.remove(key).await?;
                Processed::Applied
            }
            Err(error) => self.failed(key, event, error).await?,
        };
        store.remove(&mark_key(key)).await?;
        Ok(outcome)
    }

    async fn failed(
        &self,
        key: &str,
        mut event: OutboxEvent,
        error: String,
    ) -> Result<Processed, MemoryError> {
        event.retry_count += 1;
        event.last_error = Some(error);
        if event.retry_count >= self.max_retry {
            event.status = EventStatus::Failed;
            event.next_attempt_ms = None;
            let dlq = dlq_key(key).ok_or_else(|| MemoryError::Corrupt {
                key: key.to_string(),
                reason: "not an outbox key".into(),
            })?;
            self.put_event(&dlq, &event).await?;
            self.fs.store().remove(key).await?;
            return Ok(Processed::DeadLettered {
                retry_count: event.retry_count,
            });
        }
        let at_ms = self.now_ms + backoff_ms(event.retry_count);
        event.status = EventStatus::Pending;
        event.next_attempt_ms = Some(at_ms);
        self.put_event(key, &event).await?;
        Ok(Processed::Retry {
            at_ms,
            retry_count: event.retry_count,
        })
    }

    /// Creates the event's mark unless another consumer's live one is
    /// there; a mark past its lease is taken over.
    async fn claim(&self, key: &str) -> Result<bool, MemoryError> {
        let store = self.fs.store();
        let mark = mark_key(key);
        let body = to_json(&Claim {
            consumer: self.consumer_id.to_string(),
            claimed_ms: self.now_ms,
        });
        if store
            .put_new(&mark, body.as_bytes().to_vec(), "application/json")
            .await?
        {
            return Ok(true);
        }
        let stale = match store.get(&mark).await? {
            Some(o) => serde_json::from_slice::<Claim>(&o.body)
                .map_or(true, |c| c.claimed_ms + LEASE_MS <= self.now_ms),
            None => true,
        };
        if !stale {
            return Ok(false);
        }
        store.remove(&mark).await?;
        Ok(store
            .put_new(&mark, body.into_bytes(), "application/json")
            .await?)
    }

    async fn put_event(&self, key: &str, event: &OutboxEvent) -> Result<(), MemoryError> {
        self.fs
            .store()
            .put(key, to_json(event).into_bytes(), "application/json")
            .await?;
        Ok(())
    }
}
