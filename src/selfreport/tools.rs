//! Tool definitions (name, description, JSON input schema) of the native
//! workspace tools and the self-report tools.

use gsv_protocol::ToolDefinition;
use serde_json::{json, Value};

pub const READ_FILE: &str = "gsv__ReadFile";
pub const WRITE_FILE: &str = "gsv__WriteFile";
pub const EDIT_FILE: &str = "gsv__EditFile";
pub const LIST_FILES: &str = "gsv__ListFiles";
pub const DELETE_FILE: &str = "gsv__DeleteFile";
pub const WHO_AM_I: &str = "who_am_i";
pub const WHAT_DO_I_KNOW: &str = "what_do_i_know";
pub const MY_STATS: &str = "my_stats";
pub const SESSION_LOGS: &str = "session_logs";

fn def(name: &str, description: &str, input_schema: Value) -> ToolDefinition {
    ToolDefinition {
        name: name.to_string(),
        description: description.to_string(),
        input_schema,
    }
}

fn path_prop(what: &str) -> Value {
    json!({"type": "string", "description": format!("{what}, relative to your workspace root (e.g. MEMORY.md, memory/2026-01-31.md, skills/github/SKILL.md)")})
}

/// gsv__ReadFile, gsv__WriteFile, gsv__EditFile, gsv__ListFiles,
/// gsv__DeleteFile (reference §5).
pub fn native_workspace_tools() -> Vec<ToolDefinition> {
    vec![
        def(
            READ_FILE,
            "Read a file from your workspace. Under skills/ it reads your own copy of a skill if you have one, else the global skill.",
            json!({"type": "object", "properties": {"path": path_prop("File path")}, "required": ["path"]}),
        ),
        def(
            WRITE_FILE,
            "Create or overwrite a file in your workspace with the given content. Writing under skills/ saves your own copy of the skill.",
            json!({"type": "object", "properties": {
                "path": path_prop("File path"),
                "content": {"type": "string", "description": "The complete new content of the file"}
            }, "required": ["path", "content"]}),
        ),
        def(
            EDIT_FILE,
            "Replace exact text in a workspace file. oldString must match exactly once, whitespace included, unless replaceAll is true. Editing a global skill saves your own copy.",
            json!({"type": "object", "properties": {
                "path": path_prop("File path"),
                "oldString": {"type": "string", "description": "The exact text to replace"},
                "newString": {"type": "string", "description": "The replacement text"},
                "replaceAll": {"type": "boolean", "description": "Replace every occurrence instead of requiring exactly one (default false)"}
            }, "required": ["path", "oldString", "newString"]}),
        ),
        def(
            LIST_FILES,
            "List the files and folders in a workspace folder (default: the root). skills/ shows your own skills merged with the global ones.",
            json!({"type": "object", "properties": {"path": path_prop("Folder path; omit for the root")}}),
        ),
        def(
            DELETE_FILE,
            "Delete a file from your workspace; fails if it does not exist. Deleting BOOTSTRAP.md ends first-run commissioning.",
            json!({"type": "object", "properties": {"path": path_prop("File path")}, "required": ["path"]}),
        ),
    ]
}

/// who_am_i, my_stats, and in the main session only what_do_i_know and
/// session_logs: MEMORY.md and the transcripts of every session are
/// private to the main session, like MEMORY.md in the prompt.
pub fn self_report_tools(is_main: bool) -> Vec<ToolDefinition> {
    let mut tools = vec![
        def(
            WHO_AM_I,
            "Describe yourself: agent id, model, workspace folder, the identity fields from IDENTITY.md and the start of SOUL.md. Use it when asked who or what you are.",
            json!({"type": "object", "properties": {}}),
        ),
        def(
            MY_STATS,
            "Numbers about yourself: sessions so far, memories stored in MEMORY.md, and which workspace files exist.",
            json!({"type": "object", "properties": {}}),
        ),
    ];
    if is_main {
        tools.insert(1, def(
            WHAT_DO_I_KNOW,
            "Look up your long-term memory (MEMORY.md) by section: headings with up to 10 bullets each. filter matches heading or bullet text, case-insensitive.",
            json!({"type": "object", "properties": {
                "filter": {"type": "string", "description": "Text to look for in headings and bullets; omit for everything"}
            }}),
        ));
        tools.push(def(
            SESSION_LOGS,
            "Read your own conversation transcripts: list_sessions; read_session (sessionId); search (query) across sessions; recent (sessionId, default this session).",
            json!({"type": "object", "properties": {
                "action": {"type": "string", "enum": ["list_sessions", "read_session", "search", "recent"]},
                "sessionId": {"type": "string", "description": "Session id (read_session, recent)"},
                "query": {"type": "string", "description": "Text to search for (search)"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 500, "description": "Entries to return (default 50)"},
                "previewChars": {"type": "integer", "minimum": 1, "maximum": 4000, "description": "Characters of each entry's content (default 200)"}
            }, "required": ["action"]}),
        ));
    }
    tools
}
