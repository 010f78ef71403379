//! The trust boundary's decisions, over plain values: which tools a turn
//! at a given level may use (`tools.policy`, overridable per agent), and
//! whether its sender may change the session with a slash command. The
//! session offers the model only what is allowed here and refuses any
//! other call, whatever name the model sends.

pub mod approvals;
pub mod explain;
pub mod policy;

#[cfg(test)]
mod tests;

pub use gsv_protocol::{Trust, TrustLevel};
pub use policy::{Decision, ToolPolicy};

use crate::memory::tools::{parse, MemoryToolCall};
use gsv_protocol::MemoryScope;
use serde_json::Value;

/// Why a memory call of a turn below the owner is refused, if it is:
/// people other than the owner write and forget only their own memories
/// (the person's space), never the agent's own knowledge, which every
/// conversation recalls.
pub fn memory_refusal(
    trust: Trust,
    name: &str,
    args: &Value,
    person: Option<&str>,
) -> Option<String> {
    if trust.is_owner() {
        return None;
    }
    let own_space = |uri: &str| {
        person.is_some_and(|p| {
            crate::memory::uri::NodeUri::parse(uri)
                .is_ok_and(|u| u.space.owner() == format!("user:{p}"))
        })
    };
    match parse(name, args).ok()? {
        MemoryToolCall::Write(p) if p.space == Some(MemoryScope::Agent) || person.is_none() => Some(
            format!("{name}: only the owner can write the agent's own memories; this conversation may remember things about the person writing (space \"user\")"),
        ),
        MemoryToolCall::Delete(uri) if !own_space(&uri) => Some(format!(
            "{name}: only the owner can forget {uri}; this conversation may forget only what it remembered about the person writing"
        )),
        _ => None,
    }
}

/// Whether a turn may run the slash commands that change its session
/// (`/reset`, `/new`, `/model`, `/think`, `/compact`) and inline
/// directives: the owner anywhere, a person in their own session (not the
/// agent's main one, not a group).
pub fn may_change_session(trust: Trust, is_main: bool) -> bool {
    match trust.acts_as {
        TrustLevel::Owner => true,
        TrustLevel::Approved => !is_main && trust.level == TrustLevel::Approved,
        TrustLevel::Group | TrustLevel::System => false,
    }
}
