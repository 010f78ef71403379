//! The `gsv__*` workspace tools and the self-report tools, executed inside
//! the Session against R2 (reference §5, seed identity-and-workspace.txt).

use crate::worker::r2;
mod session_logs;
use crate::selfreport::{
    apply_edit, count_memories, native_workspace_tools, self_report_tools, what_do_i_know,
    who_am_i, MyStats, WorkspaceCall, MY_STATS, SESSION_LOGS, WHAT_DO_I_KNOW, WHO_AM_I,
};
use crate::worker::workspace::rpc as workspace_rpc;
use crate::workspace::paths::{
    file_key, read_candidates, write_key, IDENTITY_MD, MEMORY_MD, SOUL_MD, WORKSPACE_FILES,
};
use gsv_protocol::{
    ToolDefinition, WorkspaceDeleteParams, WorkspaceListParams, WorkspaceReadParams,
    WorkspaceWriteParams,
};
use serde_json::{json, Value};
use worker::Bucket;

/// What one run may call natively.
pub fn definitions(is_main: bool) -> Vec<ToolDefinition> {
    let mut tools = native_workspace_tools();
    tools.extend(self_report_tools(is_main));
    tools
}

pub fn is_native(name: &str, is_main: bool) -> bool {
    definitions(is_main).iter().any(|t| t.name == name)
}

/// The agent a call acts for, and what it may see.
pub struct ToolContext<'a> {
    pub bucket: &'a Bucket,
    pub agent_id: &'a str,
    pub model: &'a str,
    pub is_main: bool,
    /// The Session the call runs in (`session_logs` reads its history).
    pub session: &'a dyn ThisSession,
    /// The bindings `session_logs` reaches the Gateway and other Sessions by.
    pub env: &'a worker::Env,
    /// `tools.maxResultChars`: `session_logs` keeps its JSON within it.
    pub max_result_chars: usize,
}

/// What `session_logs` reads of the Session a call runs in.
pub trait ThisSession {
    fn meta(&self) -> Result<crate::session::meta::SessionMeta, gsv_protocol::ErrorShape>;
    fn message_count(&self) -> Result<u64, gsv_protocol::ErrorShape>;
    /// Messages `offset..offset + limit` of its history, oldest first.
    fn message_page(
        &self,
        limit: u32,
        offset: u64,
    ) -> Result<Vec<gsv_protocol::Message>, gsv_protocol::ErrorShape>;
}

/// Runs a native tool: `Ok` with the result text, `Err` with an error the
/// model can act on.
pub async fn execute(ctx: &ToolContext<'_>, name: &str, args: &Value) -> Result<String, String> {
    if let Some(call) = WorkspaceCall::parse(name, args) {
        return workspace_call(ctx, call?).await;
    }
    let text = |key: String| async move {
        r2::read_text(ctx.bucket, key)
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
        MY_STATS => json!(my_stats(ctx).await?),
        SESSION_LOGS if ctx.is_main => session_logs::run(ctx, args).await?,
        other => return Err(format!("{other} is not a native tool of this session")),
    };
    Ok(value.to_string())
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

async fn workspace_call(ctx: &ToolContext<'_>, call: WorkspaceCall) -> Result<String, String> {
    let (bucket, agent) = (ctx.bucket, ctx.agent_id);
    let shown = |e: gsv_protocol::ErrorShape| e.message;
    let value = match call {
        WorkspaceCall::Read { path } => {
            let p = WorkspaceReadParams {
                path: path.as_str().into(),
                agent_id: None,
            };
            json!(workspace_rpc::read(bucket, agent, p).await.map_err(shown)?)
        }
        WorkspaceCall::Write { path, content } => {
            let p = WorkspaceWriteParams {
                path: path.as_str().into(),
                content,
                agent_id: None,
            };
            json!(workspace_rpc::write(bucket, agent, p)
                .await
                .map_err(shown)?)
        }
        WorkspaceCall::List { path } => {
            let p = WorkspaceListParams {
                path: Some(path.as_str().into()),
                agent_id: None,
            };
            json!(workspace_rpc::list(bucket, agent, p).await.map_err(shown)?)
        }
        WorkspaceCall::Delete { path } => {
            let p = WorkspaceDeleteParams {
                path: path.as_str().into(),
                agent_id: None,
            };
            json!(workspace_rpc::delete(bucket, agent, p)
                .await
                .map_err(shown)?)
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
                if let Some(obj) = r2::read_text(bucket, key).await.map_err(err)? {
                    current = Some(obj.content);
                    break;
                }
            }
            let Some(current) = current else {
                return Err(format!(
                    "{} does not exist; create it with gsv__WriteFile",
                    path.as_str()
                ));
            };
            let edited =
                apply_edit(&current, &old_string, &new_string, replace_all).map_err(err)?;
            r2::write_text(bucket, write_key(agent, &path), &edited.content)
                .await
                .map_err(err)?;
            json!({"path": path.as_str(), "replacements": edited.replacements})
        }
    };
    Ok(value.to_string())
}

async fn my_stats(ctx: &ToolContext<'_>) -> Result<MyStats, String> {
    let root = crate::workspace::paths::agent_root(ctx.agent_id);
    let sessions_prefix = format!("{root}sessions/");
    let (files, archives, memory) = futures::join!(
        r2::list(ctx.bucket, &root, Some("/")),
        r2::list(ctx.bucket, &sessions_prefix, None),
        r2::read_text(ctx.bucket, file_key(ctx.agent_id, MEMORY_MD))
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
