//! The native tools in the Session (`crate::selfreport::execute`), with
//! R2 as the store and the other sessions reached through the Gateway's
//! registry and their Session objects (`session_logs`).

mod session_logs;

use crate::selfreport::logs::ThisSession;
use crate::selfreport::NativeCall;
use serde_json::Value;
use session_logs::LiveSessions;
use worker::{Bucket, Env};

pub use crate::selfreport::{is_native, native_tool_definitions as definitions};

/// The agent a call acts for, what it may see, and where it reads.
pub struct ToolContext<'a> {
    pub bucket: &'a Bucket,
    /// For `session_logs`' calls to the Gateway and the other Sessions.
    pub env: &'a Env,
    pub agent_id: &'a str,
    pub model: &'a str,
    pub is_main: bool,
    /// The Session the call runs in (`session_logs` reads its history).
    pub session: &'a dyn ThisSession,
    /// `tools.maxResultChars`: `session_logs` keeps its JSON within it.
    pub max_result_chars: usize,
}

/// Runs a native tool: `Ok` with the result text, `Err` with an error the
/// model can act on.
pub async fn execute(ctx: &ToolContext<'_>, name: &str, args: &Value) -> Result<String, String> {
    let call = NativeCall {
        store: ctx.bucket,
        agent_id: ctx.agent_id,
        model: ctx.model,
        is_main: ctx.is_main,
        this: ctx.session,
        others: &LiveSessions { env: ctx.env },
        max_result_chars: ctx.max_result_chars,
    };
    crate::selfreport::execute(&call, name, args).await
}
