//! The memory tools in the Session: each call goes to the account's index
//! object, acting for the run's agent and person (`Caller`).

use crate::memory::calls::{Caller, IndexDelete, IndexGet, IndexSearch, IndexWrite};
use crate::memory::tools::{get_text, parse, search_text, written_text, MemoryToolCall};
use crate::session::tools::ToolError;
use crate::worker::bindings::MemoryStub;
use serde_json::Value;
use worker::Env;

pub async fn run(
    env: &Env,
    caller: &Caller,
    name: &str,
    args: &Value,
) -> Result<String, ToolError> {
    let call = parse(name, args).map_err(ToolError::new)?;
    let index = MemoryStub::for_account(env, &caller.account);
    let caller = caller.clone();
    let text = match call {
        MemoryToolCall::Write(params) => {
            written_text(&index.call(&IndexWrite { caller, params }).await?)
        }
        MemoryToolCall::Search(params) => {
            search_text(&index.call(&IndexSearch { caller, params }).await?)
        }
        MemoryToolCall::Get(params) => {
            let uri = params.uri.clone();
            get_text(&uri, &index.call(&IndexGet { caller, params }).await?)
        }
        MemoryToolCall::Delete(uri) => {
            let r = index
                .call(&IndexDelete {
                    caller,
                    uri: uri.clone(),
                })
                .await?;
            match r.deleted {
                true => format!("Forgot {uri}"),
                false => format!("No memory {uri}"),
            }
        }
    };
    Ok(text)
}
