//! The native tools in the Session (`crate::selfreport::execute`), with
//! R2 as the store and the other sessions reached through the Gateway's
//! registry and their Session objects (`session_logs`).

pub mod memory;
mod session_logs;

use crate::agent_tools::{sessions_list, SESSIONS_LIST};
use crate::channels::message_tool::{result_text, MessageArgs, MESSAGE_TOOL};
use crate::memory::calls::IndexStats;
use crate::schedule::tool::{CronToolRequest, CRON_TOOL};
use crate::selfreport::logs::ThisSession;
use crate::selfreport::NativeCall;
use crate::session::internal::ChannelMessageRequest;
use crate::session::tools::ToolError;
use crate::worker::bindings::{GatewayStub, MemoryStub};
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
    /// The asking session and who spoke in its run.
    pub session_key: &'a str,
    pub trust: gsv_protocol::Trust,
    pub model: &'a str,
    pub is_main: bool,
    /// The Session the call runs in (`session_logs` reads its history).
    pub session: &'a dyn ThisSession,
    /// `tools.maxResultChars`: `session_logs` keeps its JSON within it.
    pub max_result_chars: usize,
    /// The call's id (`gsv__Message` names its text in the delivery ledger by it).
    pub call_id: &'a str,
    /// Who `my_stats`' memory figures are for.
    pub memory: &'a crate::memory::calls::Caller,
    /// When the workspace tools, `who_am_i` and `what_do_i_know` read a
    /// prompt's file as its listing says.
    pub reuse: Option<crate::storage::Reuse<'a>>,
}

/// Runs a native tool: `Ok` with the result text, `Err` with an error the
/// model can act on.
pub async fn execute(ctx: &ToolContext<'_>, name: &str, args: &Value) -> Result<String, ToolError> {
    if name == MESSAGE_TOOL && ctx.is_main {
        return message(ctx, args).await;
    }
    if name == CRON_TOOL {
        return cron(ctx, args).await;
    }
    if name == SESSIONS_LIST && ctx.is_main {
        let others = LiveSessions { env: ctx.env };
        let list = sessions_list::run(ctx.session, &others, ctx.agent_id, args).await?;
        return serde_json::to_string(&list).map_err(|e| ToolError::new(e.to_string()));
    }
    let call = NativeCall {
        store: ctx.bucket,
        agent_id: ctx.agent_id,
        model: ctx.model,
        is_main: ctx.is_main,
        this: ctx.session,
        others: &LiveSessions { env: ctx.env },
        max_result_chars: ctx.max_result_chars,
        reuse: ctx.reuse,
    };
    let text = crate::selfreport::execute(&call, name, args).await?;
    match name == crate::selfreport::MY_STATS {
        true => with_memory_stats(ctx, &text).await,
        false => Ok(text),
    }
}

/// `my_stats` with the long-term memory figures of the index and this
/// session's tokens.
async fn with_memory_stats(ctx: &ToolContext<'_>, text: &str) -> Result<String, ToolError> {
    let stats: crate::selfreport::MyStats =
        serde_json::from_str(text).map_err(|e| ToolError::new(e.to_string()))?;
    let memory = MemoryStub::for_account(ctx.env, &ctx.memory.account)
        .call(&IndexStats {
            caller: ctx.memory.clone(),
        })
        .await?;
    let stats = crate::selfreport::MyStats {
        session_tokens: Some(ctx.session.meta().map_err(ToolError::from)?.tokens),
        ..stats.with_memory(&memory)
    };
    serde_json::to_string(&stats).map_err(|e| ToolError::new(e.to_string()))
}

/// `gsv__Message`: the Gateway sends it through the chat's channel.
async fn message(ctx: &ToolContext<'_>, args: &Value) -> Result<String, ToolError> {
    let args = MessageArgs::parse(args).map_err(|e| ToolError::new(e.to_string()))?;
    let session_key = ctx.session.meta().map_err(ToolError::from)?.session_key;
    let files = args.attachments.len();
    let req = ChannelMessageRequest {
        agent_id: ctx.agent_id.to_string(),
        session_key,
        call_id: ctx.call_id.to_string(),
        text: args.text,
        target: args.target,
        attachments: args.attachments,
    };
    let reply = GatewayStub::get(ctx.env)
        .call(&req)
        .await
        .map_err(ToolError::from)?;
    match reply.error {
        Some(error) => Err(ToolError::new(format!(
            "Not delivered to {}:{}: {error}",
            reply.channel, reply.to
        ))),
        None => Ok(result_text(
            &reply.channel,
            &reply.to,
            reply.pieces as usize,
            files,
        )),
    }
}

/// `gsv__Cron`: the Gateway owns the jobs and words the answer.
async fn cron(ctx: &ToolContext<'_>, args: &Value) -> Result<String, ToolError> {
    let req = CronToolRequest {
        agent_id: ctx.agent_id.to_string(),
        args: args.clone(),
        trust: ctx.trust,
        session_key: ctx.session_key.to_string(),
    };
    let reply = GatewayStub::get(ctx.env)
        .call(&req)
        .await
        .map_err(ToolError::from)?;
    serde_json::to_string_pretty(&reply.result).map_err(|e| ToolError::new(e.to_string()))
}
