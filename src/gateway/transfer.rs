//! `gsv__Transfer`: which file goes where. An endpoint is `gsv:<path>`
//! (the agent's R2 workspace) or `<nodeId>:<path>` (a file on a node,
//! resolved inside that node's workspace by the node itself).

use crate::workspace::paths::WorkspacePath;
use gsv_protocol::ToolDefinition;
use serde::{Deserialize, Serialize};
use serde_json::json;

pub const TRANSFER: &str = "gsv__Transfer";

/// Largest file moved unless `tools.maxTransferBytes` says otherwise. The
/// gateway holds a file bound for R2 in memory before it checks and
/// stores it, so this stays well under an isolate's 128 MB.
pub const DEFAULT_MAX_TRANSFER_BYTES: u64 = 32 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq)]
pub enum Endpoint {
    Workspace(WorkspacePath),
    Node { node_id: String, path: String },
}

impl Endpoint {
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some((host, path)) = text.split_once(':') else {
            return Err(format!(
                "{text:?} names no host: write gsv:<path> for the workspace or <nodeId>:<path> for a node"
            ));
        };
        if path.is_empty() {
            return Err(format!("{text:?} names no file after the ':'"));
        }
        if host == "gsv" {
            return WorkspacePath::file(path)
                .map(Endpoint::Workspace)
                .map_err(|e| format!("{text}: {e}"));
        }
        crate::gateway::nodes::check_node_id(host)?;
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
pub fn plan(args: &TransferArgs) -> Result<(Endpoint, Endpoint), String> {
    let source = Endpoint::parse(&args.source).map_err(|e| format!("source: {e}"))?;
    let destination =
        Endpoint::parse(&args.destination).map_err(|e| format!("destination: {e}"))?;
    if source == destination {
        return Err("source and destination are the same file".into());
    }
    if matches!(
        (&source, &destination),
        (Endpoint::Workspace(_), Endpoint::Workspace(_))
    ) {
        return Err(
            "both ends are in the workspace: copy with gsv__ReadFile and gsv__WriteFile".into(),
        );
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
            Endpoint::parse("a.bin"),
            Err("\"a.bin\" names no host: write gsv:<path> for the workspace or <nodeId>:<path> for a node".into())
        );
        assert_eq!(
            Endpoint::parse("laptop:"),
            Err("\"laptop:\" names no file after the ':'".into())
        );
        assert!(Endpoint::parse("gsv:../other-agent/SOUL.md")
            .unwrap_err()
            .starts_with("gsv:../other-agent/SOUL.md: "));
        assert!(Endpoint::parse("bad id:x")
            .unwrap_err()
            .starts_with("Invalid node id"));
    }

    #[test]
    fn plans() {
        assert!(plan(&args("laptop:a", "gsv:a")).is_ok());
        assert_eq!(
            plan(&args("gsv:a", "gsv:b")),
            Err(
                "both ends are in the workspace: copy with gsv__ReadFile and gsv__WriteFile".into()
            )
        );
        assert_eq!(
            plan(&args("laptop:a", "laptop:a")),
            Err("source and destination are the same file".into())
        );
        assert!(plan(&args("nowhere", "gsv:a"))
            .unwrap_err()
            .starts_with("source: "));
    }
}
