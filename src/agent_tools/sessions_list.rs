//! `gsv__SessionsList`: a page of the agent's sessions from the Gateway's
//! registry, and with `messageLimit` the last messages of each (this
//! Session's read here, the others' from their Session objects).

use crate::selfreport::logs::{entry, Entry, OtherSessions, ThisSession};
use crate::session::tools::ToolError;
use gsv_protocol::Message;
use serde::Serialize;
use serde_json::Value;

pub const DEFAULT_LIMIT: u32 = 20;
pub const MAX_LIMIT: u32 = 100;
pub const MAX_MESSAGES: u32 = 20;
/// Characters of each previewed message.
pub const PREVIEW_CHARS: usize = 300;

/// The call's arguments, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListArgs {
    pub limit: u32,
    pub offset: u32,
    pub message_limit: u32,
}

impl ListArgs {
    pub fn parse(args: &Value) -> Result<Self, ToolError> {
        let int = |key: &str, default: u32, min: i64, max: i64| match args.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => match v.as_i64() {
                Some(n) if (min..=max).contains(&n) => Ok(n as u32),
                _ => Err(ToolError::new(format!(
                    "{key} must be a whole number from {min} to {max}"
                ))),
            },
        };
        Ok(Self {
            limit: int("limit", DEFAULT_LIMIT, 1, i64::from(MAX_LIMIT))?,
            offset: int("offset", 0, 0, i64::from(u32::MAX))?,
            message_limit: int("messageLimit", 0, 0, i64::from(MAX_MESSAGES))?,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResult {
    pub sessions: Vec<ListedSession>,
    /// All the agent's sessions, not just this page.
    pub count: u64,
    pub offset: u32,
    /// More sessions after this page (`offset` + the sessions listed).
    pub has_more: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedSession {
    pub session_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub created_at: i64,
    pub last_active_at: i64,
    /// The session this call runs in.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub this_session: bool,
    /// With `messageLimit`: its size and last messages, oldest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<Entry>>,
    /// Why its messages could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Runs one call for `agent_id`.
pub async fn run<O: OtherSessions>(
    this: &dyn ThisSession,
    others: &O,
    agent_id: &str,
    args: &Value,
) -> Result<ListResult, ToolError> {
    let args = ListArgs::parse(args)?;
    let me = this.meta().map_err(ToolError::from)?;
    let page = others
        .of_agent(agent_id, args.limit, args.offset)
        .await
        .map_err(|e| ToolError::new(format!("could not list your sessions: {}", e.message)))?;
    let listed = page.sessions.into_iter().map(|s| {
        let this_session = s.session_key == me.session_key;
        async move {
            let mut out = ListedSession {
                session_key: s.session_key,
                label: s.label,
                created_at: s.created_at,
                last_active_at: s.last_active_at,
                this_session,
                message_count: None,
                messages: None,
                error: None,
            };
            if args.message_limit == 0 {
                return out;
            }
            let last = match this_session {
                true => own_last(this, args.message_limit),
                false => others
                    .preview(&out.session_key, Some(args.message_limit))
                    .await
                    .map(|p| (p.message_count, p.messages)),
            };
            match last {
                Ok((count, messages)) => {
                    out.message_count = Some(count);
                    out.messages = Some(entries(count, &messages));
                }
                Err(e) => out.error = Some(format!("could not read its messages: {}", e.message)),
            }
            out
        }
    });
    let sessions = futures::future::join_all(listed).await;
    let has_more = u64::from(args.offset) + (sessions.len() as u64) < page.count;
    Ok(ListResult {
        sessions,
        count: page.count,
        offset: args.offset,
        has_more,
    })
}

/// This session's last `n` messages and its size.
fn own_last(
    this: &dyn ThisSession,
    n: u32,
) -> Result<(u64, Vec<Message>), gsv_protocol::ErrorShape> {
    let count = this.message_count()?;
    let start = count.saturating_sub(u64::from(n)) as usize;
    Ok((count, this.messages(start, n as usize)?))
}

/// The last messages of a history of `count`, each shortened, numbered by
/// their place in it.
fn entries(count: u64, messages: &[Message]) -> Vec<Entry> {
    let first = (count as usize).saturating_sub(messages.len());
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| entry(first + i, m, PREVIEW_CHARS))
        .collect()
}

#[cfg(test)]
#[path = "sessions_list_tests.rs"]
mod tests;
