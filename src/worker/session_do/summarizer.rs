//! The model calls behind compaction and pre-reset memory extraction, and
//! the append of what they found to a daily memory file.

use crate::config::Config;
use crate::llm::{LlmError, ThinkingLevel};
use crate::session::compaction::SummarizerRequest;
use crate::session::memory::{append_section, memory_section, MemorySource};
use crate::session::run_config::RunConfig;
use crate::worker::llm_call::{complete, Cancel};
use crate::worker::r2;
use crate::worker::rpc::now_ms;
use gsv_protocol::{Message, UserContent, UserMessage};
use worker::{console_error, Bucket};

/// One summarizer call: its own system prompt, one user message, no tools,
/// no thinking; the answer's text. Retries and `timeouts.llmMs` are those
/// of any model call.
pub async fn ask(
    env: &worker::Env,
    rc: &RunConfig,
    req: &SummarizerRequest,
) -> Result<String, LlmError> {
    let rc = RunConfig {
        system_prompt: req.system.clone(),
        thinking: ThinkingLevel::None,
        ..rc.clone()
    };
    let history = [Message::User(UserMessage {
        content: UserContent::Text(req.user.clone()),
        timestamp: now_ms(),
        context: None,
    })];
    let answer = complete(env, &rc, &history, &[], &Cancel::default(), |_| async {}).await?;
    Ok(answer.text())
}

/// Appends `memories` to the daily file `key` as a section of `source`
/// with `marker`; a section already carrying the marker (a repeat after a
/// crash) is left alone. Returns whether the file was written.
pub async fn append_memories(
    bucket: &Bucket,
    key: &str,
    source: MemorySource,
    hh_mm: &str,
    marker: &str,
    memories: &str,
) -> worker::Result<bool> {
    let Some(section) = memory_section(source, hh_mm, marker, memories) else {
        return Ok(false);
    };
    let existing = r2::read_text(bucket, key).await?.map(|o| o.content);
    match append_section(existing.as_deref(), marker, &section) {
        Some(text) => {
            r2::write_text(bucket, key, &text).await?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// The current content of a daily file (what the model is told not to repeat).
pub async fn existing_memories(bucket: &Bucket, key: &str) -> Option<String> {
    r2::read_text(bucket, key)
        .await
        .ok()
        .flatten()
        .map(|o| o.content)
}

/// Writes the categorized bullets of an extraction as memory nodes too:
/// about the session's person (the agent's own space in a group), or the
/// agent's own for cases and patterns. Best-effort, like the daily file:
/// a failure is logged and the summary still holds the facts.
pub async fn write_extracted(
    env: &worker::Env,
    config: &Config,
    session_key: &str,
    memories: &str,
    source: &str,
) {
    use crate::memory::calls::{Caller, IndexWrite};
    use crate::memory::extracted::{extracted_puts, session_person};
    use crate::memory::settings::MemorySettings;
    use gsv_protocol::MemoryScope;
    let puts = extracted_puts(memories, source);
    if puts.is_empty() {
        return;
    }
    let settings = MemorySettings::from_config(config);
    let routing = crate::routing::RoutingConfig::from_config(config);
    let caller = Caller {
        account: settings.account.clone(),
        agent_id: crate::routing::agent_id_of(session_key),
        user: session_person(session_key, &routing),
        operator: false,
        settings: settings.index,
    };
    let index = crate::worker::bindings::MemoryStub::for_account(env, &settings.account);
    for mut params in puts {
        if caller.user.is_none() {
            params.space = Some(MemoryScope::Agent);
        }
        let call = IndexWrite {
            caller: caller.clone(),
            params,
        };
        if let Err(e) = index.call(&call).await {
            console_error!(
                "session {session_key}: writing an extracted memory: {}",
                e.message
            );
        }
    }
}
