//! The `workspace.*` methods: the agent's markdown workspace in the
//! object store, with paths confined to it and the virtual `skills/` view.
//! The Gateway serves them over R2; the native tools call them too.

use crate::routing::normalize_agent_id;
use crate::storage::{ObjectStore, Reuse, StoreError, TextObject};
use crate::workspace::load::listing_of;
use crate::workspace::paths::{list_prefixes, listing, read_candidates, write_key, WorkspacePath};
use gsv_protocol::*;

type Res<T> = Result<T, ErrorShape>;

fn bad_path(e: impl std::fmt::Display) -> ErrorShape {
    ErrorShape::new(codes::BAD_REQUEST, e.to_string())
}

fn internal(e: StoreError) -> ErrorShape {
    ErrorShape::new(codes::INTERNAL, e.to_string())
}

fn not_found(path: &str, agent_id: &str) -> ErrorShape {
    ErrorShape::new(
        codes::NOT_FOUND,
        format!("{path} does not exist in the workspace of agent {agent_id}"),
    )
}

/// The agent a request names, normalized; the default agent otherwise.
pub fn agent(requested: Option<&str>, default_agent: &str) -> String {
    match requested.map(str::trim).filter(|a| !a.is_empty()) {
        Some(a) => normalize_agent_id(a),
        None => default_agent.to_string(),
    }
}

pub async fn list<S: ObjectStore>(
    store: &S,
    agent_id: &str,
    p: WorkspaceListParams,
) -> Res<WorkspaceListResult> {
    let dir = WorkspacePath::dir(p.path.as_deref().unwrap_or("")).map_err(bad_path)?;
    let prefixes = list_prefixes(agent_id, &dir);
    let lists =
        futures::future::join_all(prefixes.iter().map(|prefix| store.list(prefix, Some("/"))))
            .await;
    let mut results = Vec::new();
    for (prefix, listed) in prefixes.into_iter().zip(lists) {
        let (keys, dirs) = listed.map_err(internal)?;
        results.push((prefix, keys, dirs));
    }
    let l = listing(&dir, &results);
    Ok(WorkspaceListResult {
        path: l.path,
        files: l.files,
        directories: l.directories,
    })
}

pub async fn read<S: ObjectStore>(
    store: &S,
    agent_id: &str,
    p: WorkspaceReadParams,
) -> Res<WorkspaceReadResult> {
    read_as_listed(store, agent_id, p, None).await
}

/// `read`, except that with `reuse` a file a prompt's listing lists is
/// taken as that listing says it is while the listing may still stand for
/// a new one (`TextCache::as_listed`): a run reads such a file as its
/// prompt sees it, without a store request. Any other file is read.
pub async fn read_as_listed<S: ObjectStore>(
    store: &S,
    agent_id: &str,
    p: WorkspaceReadParams,
    reuse: Option<&Reuse<'_>>,
) -> Res<WorkspaceReadResult> {
    let path = WorkspacePath::file(&p.path).map_err(bad_path)?;
    let candidates = read_candidates(agent_id, &path);
    let skill_view = candidates.len() > 1;
    for (key, source) in candidates {
        let found = text_as_listed(store, agent_id, &key, reuse)
            .await
            .map_err(internal)?;
        if let Some(obj) = found {
            return Ok(WorkspaceReadResult {
                path: p.path,
                content: obj.content,
                size: obj.size,
                last_modified: Some(obj.uploaded_ms),
                resolved_path: skill_view.then(|| key.clone()),
                resolved_source: skill_view.then_some(source),
                etag: Some(obj.etag),
            });
        }
    }
    Err(not_found(&p.path, agent_id))
}

/// The text of `key` in `agent_id`'s workspace as `read_as_listed` takes
/// it: as a prompt's listing says while it may stand, else from the store.
pub async fn text_as_listed<S: ObjectStore>(
    store: &S,
    agent_id: &str,
    key: &str,
    reuse: Option<&Reuse<'_>>,
) -> Result<Option<TextObject>, StoreError> {
    let listed = reuse.and_then(|reuse| {
        let listing = listing_of(agent_id, key)?;
        store.texts().as_listed(key, &listing, reuse)
    });
    match listed {
        Some(found) => Ok(found),
        None => store.read_text(key).await,
    }
}

pub async fn write<S: ObjectStore>(
    store: &S,
    agent_id: &str,
    p: WorkspaceWriteParams,
) -> Res<WorkspaceWriteResult> {
    let path = WorkspacePath::file(&p.path).map_err(bad_path)?;
    let key = write_key(agent_id, &path);
    let etag = match p.expected_etag.as_deref() {
        None => {
            store.write_text(&key, &p.content).await.map_err(internal)?;
            None
        }
        Some(expected) => Some(
            store
                .write_text_if_match(&key, &p.content, expected)
                .await
                .map_err(internal)?
                .ok_or_else(|| changed_since_read(&p.path, agent_id))?,
        ),
    };
    Ok(WorkspaceWriteResult {
        path: p.path,
        size: p.content.len() as u64,
        written: true,
        etag,
    })
}

/// A conditional write found another version (or no file): nothing written.
fn changed_since_read(path: &str, agent_id: &str) -> ErrorShape {
    ErrorShape::new(
        codes::CONFLICT,
        format!(
            "{path} in the workspace of agent {agent_id} changed since it was read \
             (or was deleted); nothing was written"
        ),
    )
}

pub async fn delete<S: ObjectStore>(
    store: &S,
    agent_id: &str,
    p: WorkspaceDeleteParams,
) -> Res<WorkspaceDeleteResult> {
    let path = WorkspacePath::file(&p.path).map_err(bad_path)?;
    if !store
        .delete(&write_key(agent_id, &path))
        .await
        .map_err(internal)?
    {
        return Err(not_found(&p.path, agent_id));
    }
    Ok(WorkspaceDeleteResult {
        path: p.path,
        deleted: true,
    })
}
