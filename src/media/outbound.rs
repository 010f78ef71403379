//! Files the agent sends (`gsv__Message`'s `attachments`, or `MEDIA:`
//! lines in an answer to a chat): what each reference names in R2 — a
//! file of this conversation's media (its `media/…` key, as the history
//! shows it) or a file of the agent's workspace (a workspace path, `gsv:`
//! optional) — and the checks before anything is read.

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

/// An answer's `MEDIA: <reference>` lines (outside code blocks), taken out
/// of its text: the text to send and the files to attach (at most
/// [`MAX_ATTACHMENTS`]; further lines stay in the text).
pub fn split_media_lines(text: &str) -> (String, Vec<String>) {
    let mut kept = Vec::new();
    let mut files = Vec::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        }
        let reference = line
            .trim()
            .strip_prefix("MEDIA:")
            .map(str::trim)
            .filter(|r| !r.is_empty() && !in_code && files.len() < MAX_ATTACHMENTS);
        match reference {
            Some(r) => files.push(r.to_string()),
            None => kept.push(line),
        }
    }
    if files.is_empty() {
        return (text.to_string(), files);
    }
    (kept.join("\n").trim_end().to_string(), files)
}
