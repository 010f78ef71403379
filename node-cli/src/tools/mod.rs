//! The node's tools: what a gateway may run on this machine through
//! `tool.invoke`.
//!
//! [`Toolbox`] holds one [`Tool`] per tool (one file each) and the state they
//! share: the workspace every path argument is confined to (`paths.rs`), the
//! background shell sessions (`session.rs`) and the sender of their exec
//! events.

mod args;
mod bash;
mod edit;
mod glob;
mod grep;
mod output;
mod paths;
mod process;
mod read;
mod session;
mod text;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use gsv_protocol::{capability, HostRole, NodeExecEventParams, NodeRuntimeInfo, ToolDefinition};
use serde_json::Value;
use tokio::sync::mpsc;

pub use args::Args;
pub use paths::Workspace;
pub use session::Shell;

/// What a tool returns: a JSON result or an error message for the model.
pub type ToolResult = Result<Value, String>;

/// One tool. Calls get the shared context by `Arc` and return a boxed
/// future, so the trait stays object-safe.
pub trait Tool: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    /// JSON schema of the arguments object.
    fn input_schema(&self) -> Value;
    /// Capability ids (`gsv_protocol::capability`) the tool uses.
    fn capabilities(&self) -> &'static [&'static str];
    fn call(
        &self,
        ctx: Arc<Ctx>,
        args: Args,
        call_id: Option<String>,
    ) -> BoxFuture<'static, ToolResult>;
}

/// State shared by the tools.
pub struct Ctx {
    pub workspace: Workspace,
    pub shell: Shell,
    pub sessions: Arc<session::Sessions>,
    pub events: mpsc::UnboundedSender<NodeExecEventParams>,
}

/// The node's tools; cheap to clone (`Arc` inside), `Send + Sync`.
#[derive(Clone)]
pub struct Toolbox {
    ctx: Arc<Ctx>,
    tools: Arc<Vec<Box<dyn Tool>>>,
}

impl Toolbox {
    /// Tools confined to `workspace` (canonicalized; it must exist) unless
    /// `confine` is false. The receiver gets the exec events of background
    /// Bash sessions. Commands run in `$SHELL -lc` (see [`Shell::from_env`]).
    pub fn new(
        workspace: PathBuf,
        confine: bool,
    ) -> std::io::Result<(Toolbox, mpsc::UnboundedReceiver<NodeExecEventParams>)> {
        Self::with_shell(workspace, confine, Shell::from_env())
    }

    /// Like [`Toolbox::new`] with the shell that runs Bash commands.
    pub fn with_shell(
        workspace: PathBuf,
        confine: bool,
        shell: Shell,
    ) -> std::io::Result<(Toolbox, mpsc::UnboundedReceiver<NodeExecEventParams>)> {
        let (events, rx) = mpsc::unbounded_channel();
        let ctx = Ctx {
            workspace: Workspace::new(workspace, confine)?,
            shell,
            sessions: Arc::default(),
            events,
        };
        let tools: Vec<Box<dyn Tool>> = vec![
            Box::new(bash::Bash),
            Box::new(process::Process),
            Box::new(read::Read),
            Box::new(write::Write),
            Box::new(edit::Edit),
            Box::new(glob::Glob),
            Box::new(grep::Grep),
        ];
        let toolbox = Toolbox {
            ctx: Arc::new(ctx),
            tools: Arc::new(tools),
        };
        Ok((toolbox, rx))
    }

    /// Ends every command still running (background sessions included):
    /// SIGTERM to their process groups, SIGKILL 250 ms later. For the
    /// daemon's exit: the groups are not the daemon's, so nothing else ends
    /// them.
    pub async fn shutdown(&self) {
        self.ctx.sessions.shutdown().await;
    }

    /// The canonical workspace root.
    pub fn workspace(&self) -> &Path {
        self.ctx.workspace.root()
    }

    /// Name, description and input schema of each tool, in the order
    /// Bash, Process, Read, Write, Edit, Glob, Grep.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|t| ToolDefinition {
                name: t.name().to_string(),
                description: t.description().to_string(),
                input_schema: t.input_schema(),
            })
            .collect()
    }

    /// What this node is and can do, sent at connect.
    pub fn runtime_info(&self) -> NodeRuntimeInfo {
        let tool_capabilities: BTreeMap<String, Vec<String>> = self
            .tools
            .iter()
            .map(|t| {
                let caps = t.capabilities().iter().map(|c| c.to_string()).collect();
                (t.name().to_string(), caps)
            })
            .collect();
        let host_capabilities = capability::ALL
            .iter()
            .filter(|c| self.tools.iter().any(|t| t.capabilities().contains(c)))
            .map(|c| c.to_string())
            .collect();
        let mut host_env: Vec<String> = std::env::vars_os()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        host_env.sort();
        host_env.dedup();
        NodeRuntimeInfo {
            host_role: Some(HostRole::Execution),
            host_capabilities,
            tool_capabilities,
            host_os: Some(std::env::consts::OS.to_string()),
            host_env,
            host_bin_status: None,
            host_bin_status_updated_at: None,
        }
    }

    /// Runs `tool` (un-namespaced) with `args`. `call_id` is the gateway's
    /// call id, echoed in the exec events of a backgrounded Bash command.
    pub async fn call(&self, tool: &str, args: Value, call_id: Option<&str>) -> ToolResult {
        let found = self.tools.iter().find(|t| t.name() == tool).or_else(|| {
            self.tools
                .iter()
                .find(|t| t.name().eq_ignore_ascii_case(tool))
        });
        let Some(found) = found else {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name()).collect();
            return Err(format!(
                "unknown tool \"{tool}\" (this node offers {})",
                names.join(", ")
            ));
        };
        let args = Args::new(args)?;
        found
            .call(self.ctx.clone(), args, call_id.map(str::to_string))
            .await
    }
}

/// Runs blocking work (filesystem, walks) off the async threads.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, String>
where
    F: FnOnce() -> Result<T, String> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) => Err(format!("the tool failed unexpectedly: {e}")),
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A path for results: lossy UTF-8.
pub(crate) fn show(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests;
