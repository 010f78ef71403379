//! The prompt a run starts with: the one it kept while waiting on tools,
//! the session's last one when nothing it was made from changed (checked
//! again in the background once `workspace.recheckSeconds` passed, see
//! `early_call`), or a new one assembled from R2. Also who the run's
//! memory calls act for and what they recall (which goes with the run's
//! message, not into the prompt).

use super::core::{Core, KeptPrompt, LastPrompt, PromptInputs};
use super::error::{Res, SessionError};
use super::store::CurrentRun;
use crate::config::Config;
use crate::memory::calls::{Caller, IndexRecall};
use crate::memory::recall::{Candidate, KnownEmpty};
use crate::memory::settings::MemorySettings;
use crate::schedule::heartbeat::light::heartbeat_session_key;
use crate::session::internal::NodeSnapshot;
use crate::storage::Reuse;
use crate::worker::bindings::{memory_writes, MemoryStub};
use crate::worker::rpc::now_ms;
use crate::worker::workspace::prompt_load::{self, RunPrompt};
use crate::workspace::load::RunInputs;
use gsv_protocol::{EarlyCall, WorkspaceLoadStats};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use worker::console_error;

/// A workspace check under way (its prompt, once assembled).
pub(super) type Checking<'a> = Pin<Box<dyn Future<Output = worker::Result<RunPrompt>> + 'a>>;

pub(super) fn workspace_error(e: &worker::Error) -> String {
    format!("Could not load the agent's workspace from R2: {e}")
}

/// The prompt a run starts with, and the workspace check an early model
/// call goes out beside (`None`: the prompt is checked or kept).
pub(super) async fn choose<'a>(
    core: &'a Core,
    run: &CurrentRun,
    config: &Rc<Config>,
    nodes: &Rc<NodeSnapshot>,
    inputs: &PromptInputs,
    kept: Option<Rc<RunPrompt>>,
    session_key: &str,
) -> Res<(Rc<RunPrompt>, Option<Checking<'a>>)> {
    let early = match (&kept, run.iterations, &*core.last_prompt.borrow()) {
        (None, 0, Some(last)) if last.inputs == *inputs => Some(last.prompt.clone()),
        _ => None,
    };
    let fresh = now_ms() - core.checked_at.get() < recheck_ms(config);
    let mut check = None;
    let prompt = match (kept, early) {
        (Some(p), _) => p,
        (None, Some(p)) if fresh => {
            loaded(core, &p, inputs, Some(EarlyCall::Reused), false);
            p
        }
        (None, Some(p)) => {
            check = Some(assemble(core, config, nodes, inputs, session_key));
            p
        }
        (None, None) => {
            let p = assemble(core, config, nodes, inputs, session_key)
                .await
                .map_err(|e| SessionError::Storage(workspace_error(&e)))?;
            let p = Rc::new(p);
            loaded(core, &p, inputs, None, true);
            p
        }
    };
    Ok((prompt, check))
}

/// Reads the workspace and assembles the run's prompt from `inputs` (the
/// run's `rc` takes the prompt once it is known).
fn assemble<'a>(
    core: &'a Core,
    config: &Rc<Config>,
    nodes: &Rc<NodeSnapshot>,
    inputs: &PromptInputs,
    session_key: &str,
) -> Checking<'a> {
    let (config, rc, nodes) = (config.clone(), inputs.rc.clone(), nodes.clone());
    let (key, days) = (session_key.to_string(), inputs.days.clone());
    let (writes, workspace_rev) = (inputs.writes, inputs.workspace_rev.clone());
    let trust = inputs.trust;
    Box::pin(async move {
        let now_ms = prompt_load::now();
        let run = RunInputs {
            config: &config,
            rc: &rc,
            session_key: &key,
            nodes: &nodes,
            days: &days,
            now_ms,
            // Another session's listings hold as this session's own
            // check would (see `loaded`).
            reuse: Some(Reuse {
                now_ms,
                within_ms: recheck_ms(&config) as u64,
                workspace_rev: &workspace_rev,
                writes,
            }),
            trust,
        };
        let bucket = core
            .bucket()
            .map_err(|e| worker::Error::RustError(e.to_string()))?;
        prompt_load::assemble(&bucket, run).await
    })
}

/// A prompt assembled from `inputs` (`checked`: against R2 just now): the
/// next run may use it, `session.stats` reports its load.
pub(super) fn loaded(
    core: &Core,
    prompt: &Rc<RunPrompt>,
    inputs: &PromptInputs,
    early: Option<EarlyCall>,
    checked: bool,
) {
    let load = if checked {
        // Checked when its oldest listing was taken, if another run took it.
        let at = prompt.reused_listing_from.map_or_else(now_ms, |t| t as i64);
        core.checked_at.set(at);
        WorkspaceLoadStats {
            early_call: early,
            ..prompt.load.clone()
        }
    } else {
        // Nothing was read for this run.
        WorkspaceLoadStats {
            early_call: early,
            ..Default::default()
        }
    };
    *core.last_prompt.borrow_mut() = Some(LastPrompt {
        prompt: prompt.clone(),
        inputs: inputs.clone(),
        load,
    });
}

/// The prompt a run waiting on tools kept: as this instance kept it, else
/// (after an eviction, or a run stored before prompts had revisions) the
/// stored copy, parsed and then kept here.
pub(super) fn kept_prompt(core: &Core, run: &CurrentRun) -> Option<Rc<RunPrompt>> {
    let rev = run.prompt_rev.as_deref();
    if let Some(k) = &*core.kept_prompt.borrow() {
        if rev == Some(k.rev.as_str()) {
            return Some(k.prompt.clone());
        }
    }
    let json = match (&run.prompt, rev) {
        (Some(json), _) => json.clone(),
        (None, Some(rev)) => core.store.kept_prompt_body(rev).ok().flatten()?,
        (None, None) => return None,
    };
    let prompt = Rc::new(serde_json::from_str::<RunPrompt>(&json).ok()?);
    if let Some(rev) = rev {
        core.kept_prompt.replace(Some(KeptPrompt {
            rev: rev.to_string(),
            prompt: prompt.clone(),
        }));
    }
    Some(prompt)
}

/// How long a prompt checked against R2 holds without another check
/// (`workspace.recheckSeconds`): edits made outside the gateway are seen
/// within it.
pub(super) fn recheck_ms(config: &Config) -> i64 {
    let seconds = config.u64_at("workspace.recheckSeconds");
    (seconds.unwrap_or(DEFAULT_RECHECK_SECONDS) as i64).saturating_mul(1000)
}

const DEFAULT_RECHECK_SECONDS: u64 = 60;

/// Who a run's memory calls act for: the account and agent, and the
/// person its message came from (none in a group, so a group never
/// reads a person's memories).
pub(super) fn memory_caller(config: &Config, session_key: &str, person: Option<String>) -> Caller {
    let settings = MemorySettings::from_config(config);
    Caller {
        account: settings.account,
        agent_id: crate::routing::agent_id_of(session_key),
        user: person,
        operator: false,
        settings: settings.index,
    }
}

/// The memories matching a new run's message, within the recall budget.
/// A heartbeat recalls nothing (its message is always the same), and a
/// failed recall costs the run nothing but the section.
pub(super) async fn recall(
    core: &Core,
    config: &Config,
    caller: &Caller,
    run: &CurrentRun,
    session_key: &str,
    (today, now): (&str, i64),
) -> Vec<Candidate> {
    let settings = MemorySettings::from_config(config);
    let query = run.plain.as_deref().unwrap_or_default();
    let heartbeat = session_key == heartbeat_session_key(&caller.agent_id);
    if !settings.recall || query.trim().is_empty() || heartbeat {
        return Vec::new();
    }
    let rev = core.workspace_rev.borrow().clone();
    let writes = memory_writes();
    let max_age = recheck_ms(config);
    let known = core.known_empty.borrow().clone();
    if known.is_some_and(|k| k.holds(&caller.account, &rev, writes, now, max_age)) {
        return Vec::new();
    }
    let call = IndexRecall {
        caller: caller.clone(),
        query: query.to_string(),
        budget_tokens: settings.recall_budget_tokens,
        day: today.to_string(),
        at_ms: now,
    };
    let reply = MemoryStub::for_account(&core.env, &caller.account)
        .call(&call)
        .await;
    let empty = matches!(&reply, Ok(r) if r.empty);
    core.known_empty.replace(empty.then(|| KnownEmpty {
        account: caller.account.clone(),
        rev,
        writes,
        at_ms: now,
    }));
    match reply {
        Ok(reply) => reply.recalled,
        Err(e) => {
            console_error!("session: memory recall failed: {}", e.message);
            Vec::new()
        }
    }
}
