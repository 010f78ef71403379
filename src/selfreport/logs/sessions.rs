//! Which archives and live histories make up each of an agent's session
//! ids, and what one `session_logs` call reads of them.

use crate::session::transcript::{archive_name, page_slices, PageSlice};
use serde::Serialize;
use std::collections::BTreeMap;

/// An object under `agents/{agentId}/sessions/`, as an R2 listing with
/// custom metadata gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveObject {
    pub key: String,
    pub metadata: BTreeMap<String, String>,
}

/// One archive of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveRef {
    pub key: String,
    /// `messageCount` metadata (0 when missing: the archive is then skipped
    /// by paging, as `session.transcript` does).
    pub message_count: u64,
    /// `archivedAt` metadata, epoch ms.
    pub archived_at: Option<i64>,
}

/// A session id that is some Session object's current one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveSession {
    pub session_id: String,
    pub session_key: String,
    /// Messages in its SQLite history now.
    pub message_count: u64,
    /// Its last activity, epoch ms.
    pub last_active_at: i64,
    /// The session this call runs in.
    pub current: bool,
}

/// Everything one session id's transcript is made of, in reading order:
/// compaction parts by time, the reset archive, then the live history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSources {
    pub session_id: String,
    pub archives: Vec<ArchiveRef>,
    pub live: Option<LiveSession>,
    /// `sessionKey` metadata of its archives (the live key wins).
    pub session_key: Option<String>,
}

/// A `list_sessions` row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub session_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    /// `current` (this conversation), `live` (another one still going) or
    /// `archived` (ended by a reset).
    pub status: &'static str,
    /// Archived and live messages together.
    pub message_count: u64,
    /// Archive files (compaction parts and the reset archive).
    pub archives: usize,
    /// When its newest archive was written, epoch ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<i64>,
    /// A live session's last activity, epoch ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_active_at: Option<i64>,
}

impl SessionSources {
    /// Messages per source, in reading order (the live history last).
    pub fn counts(&self) -> Vec<u64> {
        let archived = self.archives.iter().map(|a| a.message_count);
        archived
            .chain(self.live.iter().map(|l| l.message_count))
            .collect()
    }

    pub fn total(&self) -> u64 {
        self.counts().iter().sum()
    }

    /// A reset archive exists: the session id ended, so no Session object
    /// still holds it and its live history need not be looked for.
    pub fn is_reset(&self) -> bool {
        self.archives
            .last()
            .is_some_and(|a| archive_name(&a.key).is_some_and(|(_, part)| part.is_none()))
    }

    /// The sources holding entries `offset..offset + limit`: `(source,
    /// first line, count)`, a source index past the archives meaning the
    /// live history.
    pub fn page(&self, offset: usize, limit: usize) -> Vec<PageSlice> {
        page_slices(&self.counts(), offset, limit)
    }

    /// Reads to search the whole session: one per archive, one for another
    /// session's live history (this session's own is local, so free).
    pub fn read_cost(&self) -> usize {
        let live = self.live.as_ref().is_some_and(|l| !l.current);
        self.archives.len() + usize::from(live)
    }

    fn newest_ms(&self) -> i64 {
        let archived = self.archives.iter().filter_map(|a| a.archived_at);
        let live = self.live.iter().map(|l| l.last_active_at);
        archived.chain(live).max().unwrap_or(0)
    }

    pub fn summary(&self) -> SessionSummary {
        let status = match &self.live {
            Some(l) if l.current => "current",
            Some(_) => "live",
            None => "archived",
        };
        SessionSummary {
            session_id: self.session_id.clone(),
            session_key: self.session_key.clone(),
            status,
            message_count: self.total(),
            archives: self.archives.len(),
            archived_at: self.archives.iter().filter_map(|a| a.archived_at).max(),
            last_active_at: self.live.as_ref().map(|l| l.last_active_at),
        }
    }
}

/// The sessions `objects` (a listing of the agent's session prefix) and
/// `live` make up, newest first (by last activity or archive time; ties
/// by id). Objects that are not session archives are ignored.
pub fn group_sessions(objects: &[ArchiveObject], live: Vec<LiveSession>) -> Vec<SessionSources> {
    // Per session id: parts by time, the reset archive, and the session
    // key its metadata names.
    type Sources = (Vec<(u64, ArchiveRef)>, Option<ArchiveRef>, Option<String>);
    let mut groups: BTreeMap<&str, Sources> = BTreeMap::new();
    for o in objects {
        let Some((id, part)) = archive_name(&o.key) else {
            continue;
        };
        let archive = ArchiveRef {
            key: o.key.clone(),
            message_count: meta_num(o, "messageCount").unwrap_or(0) as u64,
            archived_at: meta_num(o, "archivedAt"),
        };
        let group = groups.entry(id).or_default();
        match part {
            Some(ms) => group.0.push((ms, archive)),
            None => group.1 = Some(archive),
        }
        // All archives of one session id come from one session key.
        if group.2.is_none() {
            group.2 = o.metadata.get("sessionKey").cloned();
        }
    }
    let mut out: Vec<SessionSources> = groups
        .into_iter()
        .map(|(id, (mut parts, full, key))| {
            parts.sort_by_key(|(ms, _)| *ms);
            SessionSources {
                session_id: id.to_string(),
                archives: parts.into_iter().map(|(_, a)| a).chain(full).collect(),
                live: None,
                session_key: key,
            }
        })
        .collect();
    for l in live {
        match out.iter_mut().find(|s| s.session_id == l.session_id) {
            Some(s) => {
                s.session_key = Some(l.session_key.clone());
                s.live = Some(l);
            }
            None => out.push(SessionSources {
                session_id: l.session_id.clone(),
                archives: Vec::new(),
                session_key: Some(l.session_key.clone()),
                live: Some(l),
            }),
        }
    }
    out.sort_by(|a, b| (b.newest_ms(), &a.session_id).cmp(&(a.newest_ms(), &b.session_id)));
    out
}

fn meta_num(o: &ArchiveObject, key: &str) -> Option<i64> {
    o.metadata.get(key).and_then(|v| v.trim().parse().ok())
}

/// The sessions one `search` call reads, and those it leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchPlan<'a> {
    /// In the order given (newest first).
    pub sessions: Vec<&'a SessionSources>,
    /// Ids of sessions whose reads would pass the budget.
    pub not_searched: Vec<String>,
}

/// Takes `sessions` in order while their reads ([`SessionSources::read_cost`])
/// fit in `max_reads`; a session that does not fit is left out and later
/// (smaller) ones are still tried, so one huge session does not hide the
/// rest. Each read is a whole R2 object or another Session's history.
pub fn plan_search(sessions: &[SessionSources], max_reads: usize) -> SearchPlan<'_> {
    let mut left = max_reads;
    let mut plan = SearchPlan {
        sessions: Vec::new(),
        not_searched: Vec::new(),
    };
    for s in sessions {
        let cost = s.read_cost();
        if cost <= left {
            left -= cost;
            plan.sessions.push(s);
        } else {
            plan.not_searched.push(s.session_id.clone());
        }
    }
    plan
}
