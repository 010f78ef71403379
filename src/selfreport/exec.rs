//! Runs the native tools (`gsv__*` workspace tools and the self-report
//! tools) against an object store: R2 in the Session, `MemoryStore` in
//! native tests.

use super::logs::{self, LogSources, OtherSessions, ThisSession};
use super::{
    apply_edit, count_memories, native_workspace_tools, self_report_tools, what_do_i_know,
    who_am_i, MyStats, WorkspaceCall, MY_STATS, SESSION_LOGS, WHAT_DO_I_KNOW, WHO_AM_I,
};
use crate::session::tools::ToolError;
use crate::storage::{ObjectStore, Reuse};
use crate::workspace::methods;
use crate::workspace::paths::{
    agent_root, file_key, read_candidates, write_key, IDENTITY_MD, MEMORY_MD, SOUL_MD,
    WORKSPACE_FILES,
};
use gsv_protocol::{
    ToolDefinition, WorkspaceDeleteParams, WorkspaceListParams, WorkspaceReadParams,
    WorkspaceReadResult, WorkspaceWriteParams,
};
use serde_json::{json, Value};

#[cfg(test)]
#[path = "exec_tests.rs"]
mod tests;

/// What one run may call natively.
pub fn native_tool_definitions(is_main: bool) -> Vec<ToolDefinition> {
    let mut tools = native_workspace_tools();
    tools.extend(self_report_tools(is_main));
    // Messaging people in chat apps is the owner's to ask for.
    if is_main {
        tools.push(crate::channels::message_tool::definition());
    }
    tools.push(crate::schedule::tool::definition());
    tools.extend(crate::memory::tools::definitions());
    tools.extend(crate::agent_tools::definitions(is_main));
    tools
}

/// Whether `name` is a native tool of such a run. Asked once per tool
/// call: the names are read from the definitions once per isolate, not
/// parsed again with every schema each time.
pub fn is_native(name: &str, is_main: bool) -> bool {
    thread_local! {
        static NAMES: [std::cell::OnceCell<Vec<String>>; 2] = Default::default();
    }
    NAMES.with(|names| {
        names[is_main as usize]
            .get_or_init(|| {
                native_tool_definitions(is_main)
                    .into_iter()
                    .map(|t| t.name)
                    .collect()
            })
            .iter()
            .any(|n| n == name)
    })
}

/// The agent a call acts for, what it may see, and where it reads.
pub struct NativeCall<'a, S, O> {
    pub store: &'a S,
    pub agent_id: &'a str,
    pub model: &'a str,
    pub is_main: bool,
    /// The Session the call runs in (`session_logs` reads its history).
    pub this: &'a dyn ThisSession,
    /// The agent's other sessions (`session_logs` reads theirs too).
    pub others: &'a O,
    /// `tools.maxResultChars`: `session_logs` keeps its JSON within it.
    pub max_result_chars: usize,
    /// When a file the run's prompt was made from is read as its listing
    /// says (`methods::text_as_listed`); `None`: every read goes to the store.
    pub reuse: Option<Reuse<'a>>,
}

/// Runs a native tool: `Ok` with the result text, `Err` with an error the
/// model can act on.
pub async fn execute<S: ObjectStore, O: OtherSessions>(
    ctx: &NativeCall<'_, S, O>,
    name: &str,
    args: &Value,
) -> Result<String, ToolError> {
    if let Some(call) = WorkspaceCall::parse(name, args) {
        return workspace_call(ctx.store, ctx.agent_id, call?, ctx.reuse.as_ref()).await;
    }
    // Files a prompt is made from: read as the run's prompt sees them.
    let text = |key: String| async move {
        methods::text_as_listed(ctx.store, ctx.agent_id, &key, ctx.reuse.as_ref())
            .await
            .map(|o| o.map(|o| o.content))
    };
    let value = match name {
        WHO_AM_I => {
            let (identity, soul) = futures::join!(
                text(file_key(ctx.agent_id, IDENTITY_MD)),
                text(file_key(ctx.agent_id, SOUL_MD))
            );
            let (identity, soul) = (identity.map_err(err)?, soul.map_err(err)?);
            json!(who_am_i(
                ctx.agent_id,
                ctx.model,
                identity.as_deref(),
                soul.as_deref()
            ))
        }
        WHAT_DO_I_KNOW if ctx.is_main => {
            let memory = text(file_key(ctx.agent_id, MEMORY_MD)).await.map_err(err)?;
            let filter = args.get("filter").and_then(Value::as_str);
            json!(what_do_i_know(memory.as_deref(), filter))
        }
        MY_STATS => json!(my_stats(ctx.store, ctx.agent_id).await?),
        SESSION_LOGS if ctx.is_main => {
            let sources = LogSources {
                store: ctx.store,
                agent_id: ctx.agent_id,
                this: ctx.this,
                others: ctx.others,
                max_result_chars: ctx.max_result_chars,
            };
            logs::run(&sources, args).await?
        }
        other => {
            return Err(ToolError::new(format!(
                "{other} is not a native tool of this session"
            )))
        }
    };
    Ok(value.to_string())
}

fn err(e: impl std::fmt::Display) -> ToolError {
    ToolError::new(e.to_string())
}

async fn workspace_call<S: ObjectStore>(
    store: &S,
    agent: &str,
    call: WorkspaceCall,
    reuse: Option<&Reuse<'_>>,
) -> Result<String, ToolError> {
    let shown = ToolError::from;
    let value = match call {
        WorkspaceCall::Read { path } => {
            let p = WorkspaceReadParams {
                path: path.as_str().into(),
                agent_id: None,
            };
            // The version is for editors' conditional writes, not the model.
            let read = WorkspaceReadResult {
                etag: None,
                ..methods::read_as_listed(store, agent, p, reuse)
                    .await
                    .map_err(shown)?
            };
            json!(read)
        }
        WorkspaceCall::Write { path, content } => {
            let p = WorkspaceWriteParams {
                path: path.as_str().into(),
                content,
                agent_id: None,
                expected_etag: None,
            };
            json!(methods::write(store, agent, p).await.map_err(shown)?)
        }
        WorkspaceCall::List { path } => {
            let p = WorkspaceListParams {
                path: Some(path.as_str().into()),
                agent_id: None,
            };
            json!(methods::list(store, agent, p).await.map_err(shown)?)
        }
        WorkspaceCall::Delete { path } => {
            let p = WorkspaceDeleteParams {
                path: path.as_str().into(),
                agent_id: None,
            };
            json!(methods::delete(store, agent, p).await.map_err(shown)?)
        }
        WorkspaceCall::Edit {
            path,
            old_string,
            new_string,
            replace_all,
        } => {
            // Editing a global skill reads it and writes the agent's override.
            let mut current = None;
            for (key, _) in read_candidates(agent, &path) {
                if let Some(obj) = store.read_text(&key).await.map_err(err)? {
                    current = Some(obj.content);
                    break;
                }
            }
            let Some(current) = current else {
                return Err(ToolError::new(format!(
                    "{} does not exist; create it with gsv__WriteFile",
                    path.as_str()
                )));
            };
            let edited =
                apply_edit(&current, &old_string, &new_string, replace_all).map_err(err)?;
            store
                .write_text(&write_key(agent, &path), &edited.content)
                .await
                .map_err(err)?;
            json!({"path": path.as_str(), "replacements": edited.replacements})
        }
    };
    Ok(value.to_string())
}

/// R2 as it is now, listed and read live (unlike `what_do_i_know`, which
/// sees MEMORY.md as the run's prompt does).
async fn my_stats<S: ObjectStore>(store: &S, agent_id: &str) -> Result<MyStats, ToolError> {
    let root = agent_root(agent_id);
    let sessions_prefix = format!("{root}sessions/");
    let memory_key = file_key(agent_id, MEMORY_MD);
    let (files, archives, memory) = futures::join!(
        store.list(&root, Some("/")),
        store.list(&sessions_prefix, None),
        store.read_text(&memory_key)
    );
    let (keys, _) = files.map_err(err)?;
    let (archive_keys, _) = archives.map_err(err)?;
    let whole_archives = archive_keys
        .iter()
        .filter(|k| k.ends_with(".jsonl.gz") && !k.contains("-part"))
        .count();
    let present: Vec<String> = WORKSPACE_FILES
        .iter()
        .filter(|f| keys.iter().any(|k| k.strip_prefix(&root) == Some(**f)))
        .map(|f| f.to_string())
        .collect();
    let memories = memory
        .map_err(err)?
        .map(|m| count_memories(&m.content))
        .unwrap_or(0);
    Ok(MyStats {
        sessions_total: whole_archives as u64 + 1,
        memories_stored: memories as u64,
        workspace_files_present: present,
        ..Default::default()
    })
}
