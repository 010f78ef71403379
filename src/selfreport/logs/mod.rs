//! `session_logs`, the pure parts: the agent reads its own transcripts — the R2
//! archives under `agents/{agentId}/sessions/` and the live histories of
//! its sessions still going.
//!
//! - here: the arguments ([`SessionLogsRequest`]) and the result shapes;
//! - [`sessions`]: which archives and live histories make up each session
//!   id, newest session first, and what one call may read;
//! - [`entries`]: one message as a short entry, previews, search matches;
//! - [`search`]: a search call as the shell feeds it sessions.
//!
//! [`run`] lists and reads through the object store and the session
//! traits (the Worker's are in `worker/native_tools/session_logs.rs`);
//! every decision about what to read and what to answer is made here.

mod entries;
mod run;
mod search;
mod sessions;

pub use entries::{
    entry, entry_text, find_match, fitting, preview, preview_around, search, search_text,
};
pub use entries::{Entry, Hit};
pub use run::{run, LogSources, OtherSessions, ThisSession, MAX_LIVE_SESSIONS, MAX_SEARCH_READS};
pub use search::Search;
pub use sessions::{
    group_sessions, plan_search, ArchiveObject, ArchiveRef, LiveSession, SearchPlan,
    SessionSources, SessionSummary,
};

use crate::session::tools::ToolError;
use gsv_protocol::Message;
use serde::Serialize;
use serde_json::Value;

/// Entries, sessions or hits per call unless `limit` says otherwise.
pub const DEFAULT_LIMIT: u64 = 50;
/// The most `limit` may ask for.
pub const MAX_LIMIT: u64 = 500;
/// Characters of an entry's text shown unless `previewChars` says otherwise.
pub const DEFAULT_PREVIEW_CHARS: u64 = 200;
/// The longest preview `previewChars` may ask for.
pub const MAX_PREVIEW_CHARS: u64 = 4000;
/// The shortest: below this a centered search preview could not show both
/// its cut marks and the match.
pub const MIN_PREVIEW_CHARS: u64 = 20;
/// Kept free of entries in a result for its other fields, so the result
/// fits the tool result cap (`tools.maxResultChars`) as whole JSON instead
/// of being cut mid-value.
pub const RESULT_RESERVE_CHARS: usize = 1000;

/// What `session_logs` is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionLogsAction {
    /// `list_sessions`: the agent's sessions.
    ListSessions,
    /// `read_session`: the entries of one session.
    ReadSession,
    /// `search`: entries containing a query, across sessions.
    Search,
    /// `recent`: the latest entries of a session.
    Recent,
}

/// Validated `session_logs` arguments, limits clamped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLogsRequest {
    /// What to do.
    pub action: SessionLogsAction,
    /// Required for `read_session`; for `recent`, `None` = this session;
    /// for `search`, `None` = every session.
    pub session_id: Option<String>,
    /// Required for `search`.
    pub query: Option<String>,
    /// First entry of `read_session` (default 0).
    pub offset: usize,
    /// Entries, sessions or hits per call: default 50, at most 500.
    pub limit: usize,
    /// Characters per content preview: default 200, 20 to 4 000.
    pub preview_chars: usize,
}

impl SessionLogsRequest {
    /// Reads the `session_logs` arguments.
    pub fn parse(args: &Value) -> Result<Self, ToolError> {
        let text = |k: &str| {
            args.get(k)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
        };
        let action = match args.get("action").and_then(Value::as_str) {
            Some("list_sessions") => SessionLogsAction::ListSessions,
            Some("read_session") => SessionLogsAction::ReadSession,
            Some("search") => SessionLogsAction::Search,
            Some("recent") => SessionLogsAction::Recent,
            _ => return Err(
                "session_logs needs `action`: one of list_sessions, read_session, search, recent"
                    .into(),
            ),
        };
        let session_id = text("sessionId");
        let query = text("query");
        if action == SessionLogsAction::ReadSession && session_id.is_none() {
            return Err("session_logs read_session needs `sessionId` (see list_sessions)".into());
        }
        if action == SessionLogsAction::Search && query.is_none() {
            return Err("session_logs search needs `query`".into());
        }
        if let Some(id) = session_id.as_deref().filter(|id| !is_session_id(id)) {
            return Err(format!(
                "session_logs: {id:?} is not a session id; use a sessionId from list_sessions"
            )
            .into());
        }
        let num = |k: &str, default: u64, min: u64, max: u64| {
            args.get(k)
                .and_then(Value::as_u64)
                .map_or(default, |n| n.clamp(min, max)) as usize
        };
        Ok(Self {
            action,
            session_id,
            query,
            offset: args.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize,
            limit: num("limit", DEFAULT_LIMIT, 1, MAX_LIMIT),
            preview_chars: num(
                "previewChars",
                DEFAULT_PREVIEW_CHARS,
                MIN_PREVIEW_CHARS,
                MAX_PREVIEW_CHARS,
            ),
        })
    }
}

/// Whether `id` can be a session id (a UUID in gsv): it becomes part of
/// an R2 key prefix, so nothing that could reach past
/// `agents/{agentId}/sessions/{id}` gets that far.
pub fn is_session_id(id: &str) -> bool {
    id.len() <= 100
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `list_sessions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionList {
    pub ok: bool,
    /// Sessions found, listed or not.
    pub total: usize,
    /// Newest first, at most `limit`.
    pub sessions: Vec<SessionSummary>,
}

/// `read_session` and `recent`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEntries {
    pub ok: bool,
    pub session_id: String,
    /// Entries in the whole session.
    pub total: u64,
    pub entries: Vec<Entry>,
    /// `read_session` only: the offset to read next, when entries remain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<usize>,
}

/// `search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResult {
    pub ok: bool,
    pub query: String,
    pub hits: Vec<Hit>,
    /// Sessions searched to the end (or to the hit that reached `limit`).
    pub searched_sessions: usize,
    /// Sessions not searched: past the per-call read budget, or not
    /// reached once `limit` hits were found. Search them by `sessionId`.
    pub not_searched: Vec<String>,
    /// The search stopped at `limit` hits; there may be more.
    pub limit_reached: bool,
}

/// The `list_sessions` result: the first `limit` of `sessions` (already
/// newest first), fewer if more would not fit in `budget` characters.
pub fn session_list(sessions: &[SessionSources], limit: usize, budget: usize) -> SessionList {
    let mut listed: Vec<SessionSummary> = sessions
        .iter()
        .take(limit)
        .map(SessionSources::summary)
        .collect();
    listed.truncate(fitting(listed.iter(), budget));
    SessionList {
        ok: true,
        total: sessions.len(),
        sessions: listed,
    }
}

/// `messages` as entries numbered from `offset`.
fn entries_from(offset: usize, messages: &[Message], preview_chars: usize) -> Vec<Entry> {
    (offset..)
        .zip(messages)
        .map(|(i, m)| entry(i, m, preview_chars))
        .collect()
}

/// The `read_session` result for `messages`, entries `offset..` of
/// `session`, cut to what fits in `budget` characters.
pub fn read_result(
    session: &SessionSources,
    offset: usize,
    messages: &[Message],
    preview_chars: usize,
    budget: usize,
) -> SessionEntries {
    let mut entries = entries_from(offset, messages, preview_chars);
    entries.truncate(fitting(entries.iter(), budget));
    let end = offset + entries.len();
    let next_offset = ((end as u64) < session.total()).then_some(end);
    session_entries(session, entries, next_offset)
}

/// The `recent` result: `messages` are the session's last ones, from
/// entry `offset`; when they do not all fit in `budget`, the newest are
/// kept (their indexes tell `read_session` where the rest are).
pub fn recent_result(
    session: &SessionSources,
    offset: usize,
    messages: &[Message],
    preview_chars: usize,
    budget: usize,
) -> SessionEntries {
    let mut entries = entries_from(offset, messages, preview_chars);
    let keep = fitting(entries.iter().rev(), budget);
    entries.drain(..entries.len() - keep);
    session_entries(session, entries, None)
}

fn session_entries(
    session: &SessionSources,
    entries: Vec<Entry>,
    next_offset: Option<usize>,
) -> SessionEntries {
    SessionEntries {
        ok: true,
        session_id: session.session_id.clone(),
        total: session.total(),
        next_offset,
        entries,
    }
}

#[cfg(test)]
mod tests;
