//! The durable inbox: what the platform delivered, stored as calls owed
//! to the gateway (`tables`' outbox) before the platform got its answer,
//! handed over oldest first. A call the gateway could not take yet stays
//! (the account object's alarm tries again); one it judged is let go.

use crate::gateway::{self, CallError};
use crate::tables::Tables;
use std::cell::Cell;
use worker::{console_error, Env};

/// How a flush ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flushed {
    /// Everything owed was handed over.
    Empty,
    /// The gateway did not take a call: the rest waits for another try.
    Pending,
    /// Another flush of this object is under way (it settles the alarm).
    Busy,
}

/// Hands the owed calls to the gateway, oldest first; stops at the first
/// it could not take. `flushing` is the object's: one flush at a time, or
/// two would post the same message. `channel` names the channel in logs.
pub async fn flush(env: &Env, tables: &Tables, flushing: &Cell<bool>, channel: &str) -> Flushed {
    if flushing.replace(true) {
        return Flushed::Busy;
    }
    while let Ok(Some((id, path, body))) = tables.oldest() {
        match gateway::post(env, &path, &body).await {
            Ok(ack) if !ack.ok => console_error!(
                "{channel}: the gateway refused a call to {path}: {}",
                ack.error.unwrap_or_default()
            ),
            Ok(_) => {}
            Err(CallError::Retry(e)) => {
                console_error!(
                    "{channel}: the gateway did not take a call to {path}, will retry: {e}"
                );
                break;
            }
            // Kept, it would hold back every later call for good.
            Err(CallError::Refused(e)) => {
                console_error!("{channel}: dropping a call to {path} the gateway cannot take: {e}")
            }
        }
        if let Err(e) = tables.delivered(id) {
            console_error!("{channel}: clearing a delivered call failed: {e}");
            break;
        }
    }
    flushing.set(false);
    match tables.oldest() {
        Ok(None) => Flushed::Empty,
        _ => Flushed::Pending,
    }
}
