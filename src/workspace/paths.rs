//! R2 key layout and the rules for
//! paths the agent and clients pass to the workspace tools and RPCs.

use crate::skills::SkillSource;
use crate::storage::Version;

/// Operating instructions.
pub const AGENTS_MD: &str = "AGENTS.md";
/// Character and values.
pub const SOUL_MD: &str = "SOUL.md";
/// Persona fields.
pub const IDENTITY_MD: &str = "IDENTITY.md";
/// About the human.
pub const USER_MD: &str = "USER.md";
/// Long-term memory (main session only).
pub const MEMORY_MD: &str = "MEMORY.md";
/// Tool notes.
pub const TOOLS_MD: &str = "TOOLS.md";
/// Heartbeat tasks.
pub const HEARTBEAT_MD: &str = "HEARTBEAT.md";
/// First-run commissioning.
pub const BOOTSTRAP_MD: &str = "BOOTSTRAP.md";

/// Every top-level workspace file, in layout order.
pub const WORKSPACE_FILES: [&str; 8] = [
    AGENTS_MD,
    SOUL_MD,
    IDENTITY_MD,
    USER_MD,
    MEMORY_MD,
    TOOLS_MD,
    HEARTBEAT_MD,
    BOOTSTRAP_MD,
];

/// Prefix of the global skills.
pub const GLOBAL_SKILLS_PREFIX: &str = "skills/";

/// `agents/{agentId}/`: the workspace root.
pub fn agent_root(agent_id: &str) -> String {
    format!("agents/{agent_id}/")
}

/// `agents/{agentId}/{path}` for a validated workspace path.
pub fn workspace_key(agent_id: &str, path: &WorkspacePath) -> String {
    format!("agents/{agent_id}/{}", path.as_str())
}

/// `agents/{agentId}/{file}` for one of [`WORKSPACE_FILES`].
pub fn file_key(agent_id: &str, file: &str) -> String {
    format!("agents/{agent_id}/{file}")
}

/// `memory/{YYYY-MM-DD}.md`, relative to the workspace.
pub fn daily_memory_path(date: &str) -> String {
    format!("memory/{date}.md")
}

/// `agents/{agentId}/memory/{YYYY-MM-DD}.md`.
pub fn daily_memory_key(agent_id: &str, date: &str) -> String {
    format!("agents/{agent_id}/memory/{date}.md")
}

/// The listing window that holds exactly the daily memory files from
/// `yesterday` to `today` (keys sort by date), however many other days
/// the agent's `memory/` holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DailyWindow {
    pub prefix: String,
    /// Just before yesterday's key: a listing starts with it.
    pub start_after: String,
    /// Today's key: a listing stops after it.
    pub last: String,
}

pub fn daily_memory_window(agent_id: &str, today: &str, yesterday: &str) -> DailyWindow {
    DailyWindow {
        prefix: format!("agents/{agent_id}/memory/"),
        start_after: format!("agents/{agent_id}/memory/{yesterday}"),
        last: daily_memory_key(agent_id, today),
    }
}

/// `agents/{agentId}/sessions/{sessionId}.jsonl.gz`: archive at reset.
pub fn session_archive_key(agent_id: &str, session_id: &str) -> String {
    format!("agents/{agent_id}/sessions/{session_id}.jsonl.gz")
}

/// `agents/{agentId}/sessions/{sessionId}-part{timestamp}.jsonl.gz`:
/// partial archive written by compaction.
pub fn session_part_key(agent_id: &str, session_id: &str, timestamp_ms: u64) -> String {
    format!("agents/{agent_id}/sessions/{session_id}-part{timestamp_ms}.jsonl.gz")
}

/// `agents/{agentId}/skills/`: listed (undelimited) to find the skills.
pub fn agent_skills_prefix(agent_id: &str) -> String {
    format!("agents/{agent_id}/skills/")
}

/// `agents/{agentId}/skills/{name}/SKILL.md`.
pub fn agent_skill_key(agent_id: &str, name: &str) -> String {
    format!("agents/{agent_id}/skills/{name}/SKILL.md")
}

/// A SKILL.md found by an undelimited R2 listing of a skills prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedSkill {
    /// The skill directory (`{name}` in `{prefix}{name}/SKILL.md`).
    pub dir: String,
    pub key: String,
    pub etag: String,
}

/// The SKILL.md files in an undelimited listing of `prefix` (the agent's
/// or the global skills prefix), given as `(key, etag)`: every
/// `{prefix}{name}/SKILL.md` one level down, sorted by name. Listing the
/// objects rather than the directories is what carries their etags, so
/// the bodies already read need no second request.
pub fn skill_md_files(prefix: &str, objects: &[(String, Version)]) -> Vec<ListedSkill> {
    let mut found: Vec<ListedSkill> = objects
        .iter()
        .filter_map(|(key, version)| {
            let dir = key.strip_prefix(prefix)?.strip_suffix("/SKILL.md")?;
            (!dir.is_empty() && !dir.contains('/')).then(|| ListedSkill {
                dir: dir.to_string(),
                key: key.clone(),
                etag: version.etag.clone(),
            })
        })
        .collect();
    found.sort_unstable_by(|a, b| a.dir.cmp(&b.dir));
    found.dedup_by(|a, b| a.dir == b.dir);
    found
}

/// `skills/{name}/SKILL.md`.
pub fn global_skill_key(name: &str) -> String {
    format!("skills/{name}/SKILL.md")
}

/// `YYYY-MM-DD` (UTC) of an epoch-ms instant.
pub fn utc_date(epoch_ms: i64) -> String {
    gsv_protocol::dates::CivilDate::from_epoch_ms(epoch_ms).to_string()
}

/// Today's and yesterday's UTC dates, for the daily memory files.
pub fn daily_memory_dates(now_ms: i64) -> (String, String) {
    (utc_date(now_ms), utc_date(now_ms - 86_400_000))
}

/// A path inside the workspace: relative, `/`-separated, no `.`/`..` or
/// empty segments, no backslashes or control characters. The empty path
/// is the workspace root (directories only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspacePath(String);

/// Why a workspace path was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    /// The path as given.
    pub path: String,
    /// Why it was refused.
    pub reason: &'static str,
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid workspace path {:?}: {}", self.path, self.reason)
    }
}

impl std::error::Error for PathError {}

impl WorkspacePath {
    /// A file path such as `MEMORY.md` or `memory/2026-02-18.md`.
    pub fn file(path: &str) -> Result<Self, PathError> {
        if path.is_empty() {
            return Err(err(
                path,
                "the path is empty; give a file path relative to your workspace, like MEMORY.md",
            ));
        }
        check(path, path)?;
        Ok(Self(path.to_string()))
    }

    /// A directory path. `""`, `"/"` and `"."` mean the workspace root
    /// (so a tool's default of `/` works); one trailing `/` is allowed.
    pub fn dir(path: &str) -> Result<Self, PathError> {
        if matches!(path, "" | "/" | ".") {
            return Ok(Self(String::new()));
        }
        let trimmed = path.strip_suffix('/').unwrap_or(path);
        check(path, trimmed)?;
        Ok(Self(trimmed.to_string()))
    }

    /// The path, without a trailing `/`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is the workspace root.
    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// For paths in the virtual `skills/` view: the part after `skills/`
    /// (empty for `skills` itself).
    pub fn skills_rest(&self) -> Option<&str> {
        if self.0 == "skills" {
            return Some("");
        }
        self.0.strip_prefix("skills/")
    }
}

fn err(path: &str, reason: &'static str) -> PathError {
    PathError {
        path: path.to_string(),
        reason,
    }
}

fn check(original: &str, path: &str) -> Result<(), PathError> {
    if path.starts_with('/') {
        return Err(err(original, "absolute paths are not allowed; paths are relative to your workspace root (write memory/notes.md, not /memory/notes.md)"));
    }
    if path.contains('\\') {
        return Err(err(
            original,
            "backslashes are not allowed; separate folders with /",
        ));
    }
    if path.chars().any(char::is_control) {
        return Err(err(original, "control characters are not allowed"));
    }
    for segment in path.split('/') {
        match segment {
            "" => return Err(err(original, "empty path segment (a double or trailing /)")),
            "." => {
                return Err(err(
                    original,
                    "`.` segments are not allowed; write a/b, not ./a/b",
                ))
            }
            ".." => {
                return Err(err(
                    original,
                    "`..` is not allowed; paths cannot leave your workspace",
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The R2 keys to try, in order, when reading `path`: inside `skills/`
/// the agent's own override, then the global skill; elsewhere the agent's
/// file only.
pub fn read_candidates(agent_id: &str, path: &WorkspacePath) -> Vec<(String, SkillSource)> {
    let own = (workspace_key(agent_id, path), SkillSource::Agent);
    match path.skills_rest() {
        Some(rest) if !rest.is_empty() => vec![
            own,
            (format!("{GLOBAL_SKILLS_PREFIX}{rest}"), SkillSource::Global),
        ],
        _ => vec![own],
    }
}

/// The R2 key written (or deleted) for `path`: always the agent's own,
/// so writing or editing `skills/x/SKILL.md` creates an agent override
/// and global skills are never changed.
pub fn write_key(agent_id: &str, path: &WorkspacePath) -> String {
    workspace_key(agent_id, path)
}

/// The R2 prefixes to list (with delimiter `/`) for directory `dir`:
/// inside `skills/` both the agent's and the global one.
pub fn list_prefixes(agent_id: &str, dir: &WorkspacePath) -> Vec<String> {
    let under = |base: String| match dir.is_root() {
        true => base,
        false => format!("{base}/"),
    };
    let own = under(workspace_key(agent_id, dir));
    match dir.skills_rest() {
        Some(rest) => vec![own, under(format!("skills{}", prefixed(rest)))],
        None => vec![own],
    }
}

fn prefixed(rest: &str) -> String {
    match rest {
        "" => String::new(),
        r => format!("/{r}"),
    }
}

/// A directory listing, paths relative to the workspace.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Listing {
    /// The listed directory (empty = root).
    pub path: String,
    /// Files, workspace-relative.
    pub files: Vec<String>,
    /// Subdirectories, workspace-relative.
    pub directories: Vec<String>,
}

/// Builds the listing of `dir` from R2 list results, one
/// `(prefix, object keys, delimited prefixes)` per prefix of
/// [`list_prefixes`]: names made workspace-relative, merged, deduplicated
/// (an agent override and a global skill show once) and sorted. The root
/// always shows the virtual `skills` directory.
pub fn listing(dir: &WorkspacePath, results: &[(String, Vec<String>, Vec<String>)]) -> Listing {
    let base = match dir.is_root() {
        true => String::new(),
        false => format!("{}/", dir.as_str()),
    };
    let mut files: Vec<String> = Vec::new();
    let mut dirs: Vec<String> = Vec::new();
    for (prefix, keys, prefixes) in results {
        for key in keys {
            if let Some(name) = key.strip_prefix(prefix.as_str()).filter(|n| !n.is_empty()) {
                files.push(format!("{base}{name}"));
            }
        }
        for p in prefixes {
            if let Some(name) = p.strip_prefix(prefix.as_str()) {
                let name = name.trim_end_matches('/');
                if !name.is_empty() {
                    dirs.push(format!("{base}{name}"));
                }
            }
        }
    }
    if dir.is_root() {
        dirs.push("skills".to_string());
    }
    for list in [&mut files, &mut dirs] {
        list.sort_unstable();
        list.dedup();
    }
    Listing {
        path: dir.as_str().to_string(),
        files,
        directories: dirs,
    }
}

#[cfg(test)]
#[path = "paths_tests.rs"]
mod tests;
