//! Files the agent sends (`gsv__Message`'s `attachments`): what each
//! reference names in R2 — a file of this conversation's media (its
//! `media/…` key, as the history shows it) or a file of the agent's
//! workspace (a workspace path, `gsv:` optional) — and the checks before
//! anything is read.

use super::key::in_session;
use crate::workspace::paths::{read_candidates, WorkspacePath};

/// Files one message may carry (Discord's limit per message is 10).
pub const MAX_ATTACHMENTS: usize = 10;

/// Where an attachment is, to try in order (a workspace path may be the
/// agent's skill or a global one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// What the agent wrote.
    pub reference: String,
    pub keys: Vec<String>,
    /// The file's name as the recipient sees it.
    pub filename: String,
}

/// The R2 keys `reference` may be, for the agent `agent_id` in
/// `session_key`; why not in words the model can act on.
pub fn locate(reference: &str, agent_id: &str, session_key: &str) -> Result<Located, String> {
    let r = reference.trim();
    if r.starts_with("media/") {
        if !in_session(r, session_key) {
            return Err(format!(
                "{r}: not a file of this conversation (media keys look like media/{session_key}/<id>.<ext>)"
            ));
        }
        return Ok(Located {
            reference: r.to_string(),
            keys: vec![r.to_string()],
            filename: r.rsplit('/').next().unwrap_or(r).to_string(),
        });
    }
    let path = r.strip_prefix("gsv:").unwrap_or(r);
    let path = WorkspacePath::file(path).map_err(|e| format!("{r}: {e}"))?;
    let filename = path
        .as_str()
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_string();
    Ok(Located {
        reference: r.to_string(),
        keys: read_candidates(agent_id, &path)
            .into_iter()
            .map(|(k, _)| k)
            .collect(),
        filename,
    })
}
