//! One `session_logs` call: the agent's archives read from the object
//! store, this Session's history and the agent's other live sessions read
//! through [`ThisSession`] and [`OtherSessions`] (the Session object and
//! the Durable Object calls on the Worker; fakes in native tests).

use super::{
    group_sessions, plan_search, read_result, recent_result, session_list, ArchiveObject,
    LiveSession, Search, SessionLogsAction, SessionLogsRequest, SessionSources,
    RESULT_RESERVE_CHARS,
};
use crate::archive::read_page;
use crate::session::meta::SessionMeta;
use crate::session::tools::ToolError;
use crate::storage::ObjectStore;
use crate::workspace::paths::agent_root;
use gsv_protocol::{
    ErrorShape, Message, SessionPreviewResult, SessionStatsResult, SessionsListResult,
};
use serde_json::{json, Value};

/// Other live sessions looked at per call, the most recently active.
pub const MAX_LIVE_SESSIONS: u32 = 50;
/// Whole reads (an archive object, another session's history) per search:
/// a search over a long past must not read every archive in one call.
pub const MAX_SEARCH_READS: usize = 20;

/// The Session the call runs in, read only when the call needs it.
pub trait ThisSession {
    fn meta(&self) -> Result<SessionMeta, ErrorShape>;
    fn message_count(&self) -> Result<u64, ErrorShape>;
    /// Messages `start..start + take` of its history.
    fn messages(&self, start: usize, take: usize) -> Result<Vec<Message>, ErrorShape>;
}

/// The agent's other Session objects, through the Gateway's registry.
#[allow(async_fn_in_trait)]
pub trait OtherSessions {
    /// A page of the registry's sessions of `agent_id`, most recently
    /// active first (`count`: all of them).
    async fn of_agent(
        &self,
        agent_id: &str,
        limit: u32,
        offset: u32,
    ) -> Result<SessionsListResult, ErrorShape>;
    async fn stats(&self, session_key: &str) -> Result<SessionStatsResult, ErrorShape>;
    /// Its history: the last `limit` messages, or all of them.
    async fn preview(
        &self,
        session_key: &str,
        limit: Option<u32>,
    ) -> Result<SessionPreviewResult, ErrorShape>;
}

/// Where one call reads.
pub struct LogSources<'a, S, O> {
    pub store: &'a S,
    pub agent_id: &'a str,
    pub this: &'a dyn ThisSession,
    pub others: &'a O,
    /// `tools.maxResultChars`: the JSON is kept within it.
    pub max_result_chars: usize,
}

/// Runs one `session_logs` call: the result, or an error the model can act on.
pub async fn run<S: ObjectStore, O: OtherSessions>(
    ctx: &LogSources<'_, S, O>,
    args: &Value,
) -> Result<Value, ToolError> {
    let req = SessionLogsRequest::parse(args)?;
    let me = ctx.this.meta().map_err(shown)?;
    let budget = ctx.max_result_chars.saturating_sub(RESULT_RESERVE_CHARS);
    let previews = req.preview_chars;
    Ok(match req.action {
        SessionLogsAction::ListSessions => {
            let sessions = all_sessions(ctx, &me).await?;
            json!(session_list(&sessions, req.limit, budget))
        }
        SessionLogsAction::ReadSession => {
            let id = req.session_id.as_deref().unwrap_or(&me.session_id);
            let s = one_session(ctx, &me, id).await?;
            let messages = read(ctx, &s, req.offset, req.limit).await?;
            json!(read_result(&s, req.offset, &messages, previews, budget))
        }
        SessionLogsAction::Recent => {
            let id = req.session_id.as_deref().unwrap_or(&me.session_id);
            let s = one_session(ctx, &me, id).await?;
            let offset = (s.total() as usize).saturating_sub(req.limit);
            let messages = read(ctx, &s, offset, req.limit).await?;
            json!(recent_result(&s, offset, &messages, previews, budget))
        }
        SessionLogsAction::Search => {
            let sessions = match req.session_id.as_deref() {
                Some(id) => vec![one_session(ctx, &me, id).await?],
                None => all_sessions(ctx, &me).await?,
            };
            let plan = plan_search(&sessions, MAX_SEARCH_READS);
            let query = req.query.as_deref().unwrap_or_default();
            let mut search = Search::new(query, previews, req.limit, plan.not_searched);
            for s in plan.sessions {
                if !search.wants_more() {
                    search.skip(&s.session_id);
                    continue;
                }
                let messages = read(ctx, s, 0, s.total() as usize).await?;
                search.add(&s.session_id, &messages);
            }
            json!(search.finish(budget))
        }
    })
}

fn shown(e: ErrorShape) -> ToolError {
    ToolError::from(e)
}

/// Every session of this agent: its archives, this session, and its
/// other live sessions.
async fn all_sessions<S: ObjectStore, O: OtherSessions>(
    ctx: &LogSources<'_, S, O>,
    me: &SessionMeta,
) -> Result<Vec<SessionSources>, ToolError> {
    let objects = archives(ctx, "").await?;
    let mut live = vec![this_session(ctx, me)?];
    live.extend(other_live(ctx, me).await?);
    Ok(group_sessions(&objects, live))
}

/// Session `id` of this agent. Only this agent's archive prefix and live
/// sessions are looked at, so another agent's id is simply not found.
async fn one_session<S: ObjectStore, O: OtherSessions>(
    ctx: &LogSources<'_, S, O>,
    me: &SessionMeta,
    id: &str,
) -> Result<SessionSources, ToolError> {
    let objects = archives(ctx, id).await?;
    let mut live = Vec::new();
    if id == me.session_id {
        live.push(this_session(ctx, me)?);
    }
    // A session id with a reset archive has ended; any other may still be
    // the current id of one of the agent's Session objects.
    let reset = group_sessions(&objects, Vec::new())
        .iter()
        .any(|s| s.session_id == id && s.is_reset());
    if live.is_empty() && !reset {
        let others = other_live(ctx, me).await?;
        live.extend(others.into_iter().filter(|l| l.session_id == id));
    }
    group_sessions(&objects, live)
        .into_iter()
        .find(|s| s.session_id == id)
        .ok_or_else(|| {
            ToolError::new(format!(
                "{id} is not one of your sessions (agent {}); list_sessions shows the ids you can read, and other agents' sessions are never readable",
                ctx.agent_id
            ))
        })
}

/// The agent's archive objects whose key starts with session id `id`
/// (all of them when empty).
async fn archives<S: ObjectStore, O>(
    ctx: &LogSources<'_, S, O>,
    id: &str,
) -> Result<Vec<ArchiveObject>, ToolError> {
    let prefix = format!("{}sessions/{id}", agent_root(ctx.agent_id));
    let listed = ctx
        .store
        .list_with_metadata(&prefix)
        .await
        .map_err(|e| ToolError::new(format!("could not list your session archives: {e}")))?;
    Ok(listed
        .into_iter()
        .map(|(key, metadata)| ArchiveObject {
            key,
            metadata: metadata.into_iter().collect(),
        })
        .collect())
}

fn this_session<S, O>(
    ctx: &LogSources<'_, S, O>,
    me: &SessionMeta,
) -> Result<LiveSession, ToolError> {
    Ok(LiveSession {
        session_id: me.session_id.clone(),
        session_key: me.session_key.clone(),
        message_count: ctx.this.message_count().map_err(shown)?,
        last_active_at: me.updated_at,
        current: true,
    })
}

/// The agent's other sessions in the Gateway's registry, each with its
/// current session id and size from its Session object.
async fn other_live<S, O: OtherSessions>(
    ctx: &LogSources<'_, S, O>,
    me: &SessionMeta,
) -> Result<Vec<LiveSession>, ToolError> {
    let registry = ctx
        .others
        .of_agent(ctx.agent_id, MAX_LIVE_SESSIONS, 0)
        .await
        .map_err(|e| ToolError::new(format!("could not list your live sessions: {}", e.message)))?;
    let keys = registry
        .sessions
        .into_iter()
        .map(|s| s.session_key)
        .filter(|k| *k != me.session_key);
    let stats = keys.map(|session_key| async move {
        ctx.others.stats(&session_key).await.map_err(|e| {
            ToolError::new(format!(
                "could not read session {session_key}: {}",
                e.message
            ))
        })
    });
    futures::future::join_all(stats)
        .await
        .into_iter()
        .map(|s| {
            s.map(|s| LiveSession {
                session_id: s.session_id,
                session_key: s.session_key,
                message_count: s.message_count,
                last_active_at: s.updated_at,
                current: false,
            })
        })
        .collect()
}

/// Entries `offset..offset + limit` of session `s`, in order.
async fn read<S: ObjectStore, O: OtherSessions>(
    ctx: &LogSources<'_, S, O>,
    s: &SessionSources,
    offset: usize,
    limit: usize,
) -> Result<Vec<Message>, ToolError> {
    let mut out = Vec::new();
    for (source, start, take) in s.page(offset, limit) {
        match (s.archives.get(source), &s.live) {
            (Some(a), _) => out.extend(read_archive(ctx.store, &a.key, start, take).await?),
            (None, Some(live)) => out.extend(read_live(ctx, live, start, take).await?),
            (None, None) => {}
        }
    }
    Ok(out)
}

async fn read_archive<S: ObjectStore>(
    store: &S,
    key: &str,
    start: usize,
    take: usize,
) -> Result<Vec<Message>, ToolError> {
    let failed = |e: &dyn std::fmt::Display| {
        ToolError::new(format!("could not read the archive {key}: {e}"))
    };
    let Some(object) = store.get(key).await.map_err(|e| failed(&e))? else {
        return Err(failed(&"it is gone (was it deleted?)"));
    };
    let page = read_page::<Message, _>(&object.body[..], start, take).map_err(|e| failed(&e))?;
    Ok(page.items)
}

/// Messages `start..start + take` of a live history: this Session's own,
/// another's through its `session.preview`.
async fn read_live<S, O: OtherSessions>(
    ctx: &LogSources<'_, S, O>,
    live: &LiveSession,
    start: usize,
    take: usize,
) -> Result<Vec<Message>, ToolError> {
    if live.current {
        return ctx.this.messages(start, take).map_err(shown);
    }
    let preview = ctx
        .others
        .preview(&live.session_key, None)
        .await
        .map_err(|e| {
            ToolError::new(format!(
                "could not read session {}: {}",
                live.session_id, e.message
            ))
        })?;
    // The session may have been reset since it was listed: its history then
    // belongs to a new id, and the old one is in its archive.
    if preview.session_id != live.session_id {
        return Err(ToolError::new(format!(
            "session {} was just reset; call session_logs again to read its archive",
            live.session_id
        )));
    }
    Ok(preview
        .messages
        .into_iter()
        .skip(start)
        .take(take)
        .collect())
}
