//! `gsv__Transfer`: which file goes where. An endpoint is `gsv:<path>`
//! (the agent's R2 workspace) or `<nodeId>:<path>` (a file on a node,
//! resolved inside that node's workspace by the node itself).

use crate::gateway::nodes::NodeError;
use crate::workspace::paths::WorkspacePath;
use gsv_protocol::ToolDefinition;
use serde::{Deserialize, Serialize};
use serde_json::json;

pub const TRANSFER: &str = "gsv__Transfer";

/// Largest file moved unless `tools.maxTransferBytes` says otherwise. The
/// gateway holds a file bound for R2 in memory before it checks and
/// stores it, so this stays well under an isolate's 128 MB.
pub const DEFAULT_MAX_TRANSFER_BYTES: u64 = 32 * 1024 * 1024;

/// Why a `gsv__Transfer` endpoint or plan was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransferError {
    /// The endpoint, as written, has no `host:`.
    NoHost(String),
    /// The endpoint, as written, has nothing after the `:`.
    NoFile(String),
    /// A `gsv:` path the workspace refuses: (endpoint as written, why).
    BadWorkspacePath(String, String),
    BadNode(NodeError),
    Source(Box<TransferError>),
    Destination(Box<TransferError>),
    SameFile,
    BothInWorkspace,
}

impl std::fmt::Display for TransferError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoHost(text) => write!(
                f,
                "{text:?} names no host: write gsv:<path> for the workspace or <nodeId>:<path> for a node"
            ),
            Self::NoFile(text) => write!(f, "{text:?} names no file after the ':'"),
            Self::BadWorkspacePath(text, e) => write!(f, "{text}: {e}"),
            Self::BadNode(e) => e.fmt(f),
            Self::Source(e) => write!(f, "source: {e}"),
            Self::Destination(e) => write!(f, "destination: {e}"),
            Self::SameFile => f.write_str("source and destination are the same file"),
            Self::BothInWorkspace => f.write_str(
                "both ends are in the workspace: copy with gsv__ReadFile and gsv__WriteFile",
            ),
        }
    }
}

impl std::error::Error for TransferError {}

#[derive(Debug, Clone, PartialEq)]
pub enum Endpoint {
    Workspace(WorkspacePath),
    Node { node_id: String, path: String },
}

impl Endpoint {
    pub fn parse(text: &str) -> Result<Self, TransferError> {
        let Some((host, path)) = text.split_once(':') else {
            return Err(TransferError::NoHost(text.to_string()));
        };
        if path.is_empty() {
            return Err(TransferError::NoFile(text.to_string()));
        }
        if host == "gsv" {
            return WorkspacePath::file(path)
                .map(Endpoint::Workspace)
                .map_err(|e| TransferError::BadWorkspacePath(text.to_string(), e.to_string()));
        }
        crate::gateway::nodes::check_node_id(host).map_err(TransferError::BadNode)?;
        Ok(Endpoint::Node {
            node_id: host.to_string(),
            path: path.to_string(),
        })
    }

    pub fn describe(&self) -> String {
        match self {
            Endpoint::Workspace(p) => format!("gsv:{}", p.as_str()),
            Endpoint::Node { node_id, path } => format!("{node_id}:{path}"),
        }
    }
}

/// `gsv__Transfer` arguments.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TransferArgs {
    pub source: String,
    pub destination: String,
}

/// The request a Session sends the Gateway for one `gsv__Transfer` call;
/// the result comes back later as a tool result for `call_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransferRequest {
    pub call_id: String,
    pub session_key: String,
    pub agent_id: String,
    pub source: String,
    pub destination: String,
}

/// What a finished transfer reports to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TransferResult {
    pub source: String,
    pub destination: String,
    pub bytes: u64,
    pub sha256: String,
}

/// Checks both ends; moving a workspace file onto itself is refused.
pub fn plan(args: &TransferArgs) -> Result<(Endpoint, Endpoint), TransferError> {
    let source = Endpoint::parse(&args.source).map_err(|e| TransferError::Source(Box::new(e)))?;
    let destination =
        Endpoint::parse(&args.destination).map_err(|e| TransferError::Destination(Box::new(e)))?;
    if source == destination {
        return Err(TransferError::SameFile);
    }
    if matches!(
        (&source, &destination),
        (Endpoint::Workspace(_), Endpoint::Workspace(_))
    ) {
        return Err(TransferError::BothInWorkspace);
    }
    Ok((source, destination))
}

pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: TRANSFER.into(),
        description: "Copy a file between machines and your workspace: node → workspace, workspace → node, or node → node. Endpoints are gsv:<path> for your R2 workspace (e.g. gsv:artifacts/build.tar.gz) or <nodeId>:<path> for a file on a connected node (relative to that node's workspace, e.g. laptop:dist/app.zip). Binary files are fine; the copy is checked with SHA-256 and a failed copy leaves no partial file.".into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "source": {"type": "string", "description": "gsv:<path> or <nodeId>:<path> of the file to copy"},
                "destination": {"type": "string", "description": "gsv:<path> or <nodeId>:<path> to write (replaced if it exists)"}
            },
            "required": ["source", "destination"]
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(source: &str, destination: &str) -> TransferArgs {
        TransferArgs {
            source: source.into(),
            destination: destination.into(),
        }
    }

    #[test]
    fn endpoints() {
        assert_eq!(
            Endpoint::parse("laptop:dist/app.zip"),
            Ok(Endpoint::Node {
                node_id: "laptop".into(),
                path: "dist/app.zip".into()
            })
        );
        assert_eq!(
            Endpoint::parse("server:/var/log/syslog")
                .unwrap()
                .describe(),
            "server:/var/log/syslog"
        );
        assert_eq!(
            Endpoint::parse("gsv:artifacts/a.bin").unwrap().describe(),
            "gsv:artifacts/a.bin"
        );
        assert_eq!(
            Endpoint::parse("a.bin").map_err(|e| e.to_string()),
            Err("\"a.bin\" names no host: write gsv:<path> for the workspace or <nodeId>:<path> for a node".into())
        );
        assert_eq!(
            Endpoint::parse("laptop:").map_err(|e| e.to_string()),
            Err("\"laptop:\" names no file after the ':'".into())
        );
        assert!(Endpoint::parse("gsv:../other-agent/SOUL.md")
            .unwrap_err()
            .to_string()
            .starts_with("gsv:../other-agent/SOUL.md: "));
        assert!(Endpoint::parse("bad id:x")
            .unwrap_err()
            .to_string()
            .starts_with("Invalid node id"));
    }

    #[test]
    fn plans() {
        assert!(plan(&args("laptop:a", "gsv:a")).is_ok());
        assert_eq!(
            plan(&args("gsv:a", "gsv:b")).map_err(|e| e.to_string()),
            Err(
                "both ends are in the workspace: copy with gsv__ReadFile and gsv__WriteFile".into()
            )
        );
        assert_eq!(
            plan(&args("laptop:a", "laptop:a")).map_err(|e| e.to_string()),
            Err("source and destination are the same file".into())
        );
        assert!(plan(&args("nowhere", "gsv:a"))
            .unwrap_err()
            .to_string()
            .starts_with("source: "));
    }
}
