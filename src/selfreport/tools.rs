//! Tool definitions (name, description, JSON input schema) of the native
//! workspace tools and the self-report tools.

use gsv_protocol::ToolDefinition;
use serde_json::Value;

/// Reads a workspace file.
pub const READ_FILE: &str = "gsv__ReadFile";
/// Writes a workspace file.
pub const WRITE_FILE: &str = "gsv__WriteFile";
/// Edits a workspace file by exact replacement.
pub const EDIT_FILE: &str = "gsv__EditFile";
/// Lists a workspace folder.
pub const LIST_FILES: &str = "gsv__ListFiles";
/// Deletes a workspace file.
pub const DELETE_FILE: &str = "gsv__DeleteFile";
/// Self-report: who the agent is.
pub const WHO_AM_I: &str = "who_am_i";
/// Self-report: MEMORY.md by section.
pub const WHAT_DO_I_KNOW: &str = "what_do_i_know";
/// Self-report: numbers about the agent.
pub const MY_STATS: &str = "my_stats";
/// Self-report: the agent's own transcripts.
pub const SESSION_LOGS: &str = "session_logs";

/// Every definition, as the JSON the model receives. Kept as text rather
/// than `json!` calls: parsing it reuses serde_json code the Worker already
/// has, where `json!` expands to ~17 KB of wasm.
const DEFINITIONS: &str = r#"[
{"name": "gsv__ReadFile",
 "description": "Read a file from your workspace. Under skills/ it reads your own copy of a skill if you have one, else the global skill.",
 "inputSchema": {"type": "object", "properties": {
   "path": {"type": "string", "description": "File path, relative to your workspace root (e.g. MEMORY.md, memory/2026-01-31.md, skills/github/SKILL.md)"}
 }, "required": ["path"]}},
{"name": "gsv__WriteFile",
 "description": "Create or overwrite a file in your workspace with the given content. Writing under skills/ saves your own copy of the skill.",
 "inputSchema": {"type": "object", "properties": {
   "path": {"type": "string", "description": "File path, relative to your workspace root (e.g. MEMORY.md, memory/2026-01-31.md, skills/github/SKILL.md)"},
   "content": {"type": "string", "description": "The complete new content of the file"}
 }, "required": ["path", "content"]}},
{"name": "gsv__EditFile",
 "description": "Replace exact text in a workspace file. oldString must match exactly once, whitespace included, unless replaceAll is true. Editing a global skill saves your own copy.",
 "inputSchema": {"type": "object", "properties": {
   "path": {"type": "string", "description": "File path, relative to your workspace root (e.g. MEMORY.md, memory/2026-01-31.md, skills/github/SKILL.md)"},
   "oldString": {"type": "string", "description": "The exact text to replace"},
   "newString": {"type": "string", "description": "The replacement text"},
   "replaceAll": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one (default false)"}
 }, "required": ["path", "oldString", "newString"]}},
{"name": "gsv__ListFiles",
 "description": "List the files and folders in a workspace folder (default: the root). skills/ shows your own skills merged with the global ones.",
 "inputSchema": {"type": "object", "properties": {
   "path": {"type": "string", "description": "Folder path; omit for the root, relative to your workspace root (e.g. memory, skills)"}
 }}},
{"name": "gsv__DeleteFile",
 "description": "Delete a file from your workspace; fails if it does not exist. Deleting BOOTSTRAP.md ends first-run commissioning.",
 "inputSchema": {"type": "object", "properties": {
   "path": {"type": "string", "description": "File path, relative to your workspace root (e.g. MEMORY.md, memory/2026-01-31.md, skills/github/SKILL.md)"}
 }, "required": ["path"]}},
{"name": "who_am_i",
 "description": "Describe yourself: agent id, model, workspace folder, the identity fields from IDENTITY.md and the start of SOUL.md. Use it when asked who or what you are.",
 "inputSchema": {"type": "object", "properties": {}}},
{"name": "what_do_i_know",
 "description": "Look up your long-term memory (MEMORY.md) by section: headings with up to 10 bullets each. filter matches heading or bullet text, case-insensitive.",
 "inputSchema": {"type": "object", "properties": {
   "filter": {"type": "string", "description": "Text to look for in headings and bullets; omit for everything"}
 }}},
{"name": "my_stats",
 "description": "Numbers about yourself: sessions so far, memories stored in MEMORY.md, and which workspace files exist.",
 "inputSchema": {"type": "object", "properties": {}}},
{"name": "session_logs",
 "description": "Read your own past and current conversations: list_sessions; read_session (sessionId, offset); search (query) across sessions; recent (sessionId, default this session).",
 "inputSchema": {"type": "object", "properties": {
   "action": {"type": "string", "enum": ["list_sessions", "read_session", "search", "recent"]},
   "sessionId": {"type": "string", "description": "A sessionId from list_sessions: the session to read (read_session, recent) or to search only"},
   "query": {"type": "string", "description": "Text to find, ignoring case (search; your own session_logs calls and results are not searched)"},
   "offset": {"type": "integer", "minimum": 0, "description": "First entry to read (read_session; default 0; continue at nextOffset)"},
   "limit": {"type": "integer", "minimum": 1, "maximum": 500, "description": "Sessions, entries or search hits to return (default 50)"},
   "previewChars": {"type": "integer", "minimum": 20, "maximum": 4000, "description": "Characters shown of each entry's text (default 200)"}
 }, "required": ["action"]}}
]"#;

/// Tool definitions kept as JSON text (`[{name, description,
/// inputSchema}]`, a constant each module tests), read through `Value`,
/// whose parser the Worker has anyway (a `ToolDefinition` deserializer
/// would add ~7 KB).
pub fn definitions_in(json: &str) -> Vec<ToolDefinition> {
    let all: Vec<Value> = match serde_json::from_str(json) {
        Ok(Value::Array(all)) => all,
        _ => unreachable!("tool definitions are a valid JSON array (tested)"),
    };
    all.into_iter()
        .map(|mut t| {
            let text = |v: Value| v.as_str().unwrap_or_default().to_string();
            ToolDefinition {
                name: text(t["name"].take()),
                description: text(t["description"].take()),
                input_schema: t["inputSchema"].take(),
            }
        })
        .collect()
}

/// The definitions named, in [`DEFINITIONS`] order.
fn definitions(names: &[&str]) -> Vec<ToolDefinition> {
    definitions_in(DEFINITIONS)
        .into_iter()
        .filter(|t| names.contains(&t.name.as_str()))
        .collect()
}

/// gsv__ReadFile, gsv__WriteFile, gsv__EditFile, gsv__ListFiles,
/// gsv__DeleteFile.
pub fn native_workspace_tools() -> Vec<ToolDefinition> {
    definitions(&[READ_FILE, WRITE_FILE, EDIT_FILE, LIST_FILES, DELETE_FILE])
}

/// who_am_i and my_stats everywhere; what_do_i_know and session_logs in
/// the main session only, like MEMORY.md in the prompt: other sessions
/// are conversations with other people (groups, other DM peers), who must
/// not get the owner's memories or past conversations read out to them.
pub fn self_report_tools(is_main: bool) -> Vec<ToolDefinition> {
    match is_main {
        true => definitions(&[WHO_AM_I, WHAT_DO_I_KNOW, MY_STATS, SESSION_LOGS]),
        false => definitions(&[WHO_AM_I, MY_STATS]),
    }
}
