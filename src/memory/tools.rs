//! The agent's memory tools: `gsv__MemoryWrite`, `gsv__MemorySearch`,
//! `gsv__MemoryGet`, `gsv__MemoryDelete`. Their definitions, their
//! arguments read into the wire types, and their answers as the model
//! reads them. The Session runs them against the index object.

use gsv_protocol::{
    MemoryGetParams, MemoryGetResult, MemoryPutParams, MemoryPutResult, MemoryScope,
    MemorySearchParams, MemorySearchResult, ToolDefinition,
};
use serde_json::Value;

pub const MEMORY_WRITE: &str = "gsv__MemoryWrite";
pub const MEMORY_SEARCH: &str = "gsv__MemorySearch";
pub const MEMORY_GET: &str = "gsv__MemoryGet";
pub const MEMORY_DELETE: &str = "gsv__MemoryDelete";

/// As text, like the other native tools' definitions.
const DEFINITIONS: &str = r#"[
{"name": "gsv__MemoryWrite",
 "description": "Remember something for good: a fact, preference, person, event, case or pattern worth knowing in later conversations. One memory per topic: writing the same category and slug again replaces it (a new version). Give an abstract (one line, at most 100 characters: what later recall shows) and, for longer content, an overview; both are made from the content when left out. space \"user\" (default) is about the person you are talking to; \"agent\" is your own knowledge (cases, patterns, skills).",
 "inputSchema": {"type": "object", "properties": {
   "category": {"type": "string", "enum": ["profile", "preferences", "entities", "events", "cases", "patterns", "skills"]},
   "title": {"type": "string", "description": "Short name; the slug is made from it"},
   "slug": {"type": "string", "description": "Instead of title: the exact slug (letters, digits, - _ .)"},
   "content": {"type": "string", "description": "The memory, in markdown"},
   "abstract": {"type": "string", "description": "One line, at most 100 characters"},
   "overview": {"type": "string", "description": "A few lines of structure: key facts"},
   "tags": {"type": "array", "items": {"type": "string"}},
   "relations": {"type": "array", "items": {"type": "object", "properties": {
     "toUri": {"type": "string"}, "relationType": {"type": "string"}, "weight": {"type": "number"}, "reason": {"type": "string"}}}},
   "space": {"type": "string", "enum": ["user", "agent"]}
 }, "required": ["category", "content"], "additionalProperties": false}},
{"name": "gsv__MemorySearch",
 "description": "Search your long-term memory by keywords (and by meaning when embeddings are set up). Returns the best matches with their URIs, abstracts and the text that matched; read one whole with gsv__MemoryGet.",
 "inputSchema": {"type": "object", "properties": {
   "query": {"type": "string"},
   "scope": {"type": "string", "enum": ["all", "user", "agent"], "description": "Whose memories: the person's, yours, or both (default)"},
   "category": {"type": "string"},
   "level": {"type": "integer", "minimum": 0, "maximum": 2, "description": "Only matches in the abstract (0), overview (1) or content (2)"},
   "limit": {"type": "integer", "minimum": 1, "maximum": 50}
 }, "required": ["query"]}},
{"name": "gsv__MemoryGet",
 "description": "Read one memory by its URI (ctx://…): its content (level 2, the default), overview (1) or abstract (0), with its tags and relations.",
 "inputSchema": {"type": "object", "properties": {
   "uri": {"type": "string"},
   "level": {"type": "integer", "minimum": 0, "maximum": 2}
 }, "required": ["uri"]}},
{"name": "gsv__MemoryDelete",
 "description": "Forget one memory by its URI (ctx://…): when it is wrong, outdated, or the person asks you to forget it.",
 "inputSchema": {"type": "object", "properties": {
   "uri": {"type": "string"}
 }, "required": ["uri"]}}
]"#;

pub fn definitions() -> Vec<ToolDefinition> {
    crate::selfreport::definitions_in(DEFINITIONS)
}

pub fn is_memory_tool(name: &str) -> bool {
    [MEMORY_WRITE, MEMORY_SEARCH, MEMORY_GET, MEMORY_DELETE].contains(&name)
}

/// A memory tool's call, its arguments read.
#[derive(Debug, Clone, PartialEq)]
pub enum MemoryToolCall {
    Write(MemoryPutParams),
    Search(MemorySearchParams),
    Get(MemoryGetParams),
    Delete(String),
}

fn bad(name: &str, e: impl std::fmt::Display) -> String {
    format!("{name}: invalid arguments: {e}")
}

/// Reads a call's arguments (the camelCase wire names, which the
/// definitions use).
pub fn parse(name: &str, args: &Value) -> Result<MemoryToolCall, String> {
    let args = match args {
        Value::Null => Value::Object(Default::default()),
        a => a.clone(),
    };
    let call = match name {
        MEMORY_WRITE => {
            let mut p: MemoryPutParams = serde_json::from_value(args).map_err(|e| bad(name, e))?;
            // The agent writes for the person it talks to, never another.
            p.user = None;
            p.agent_id = None;
            if p.space == Some(MemoryScope::All) {
                p.space = None;
            }
            MemoryToolCall::Write(p)
        }
        MEMORY_SEARCH => {
            let mut p: MemorySearchParams =
                serde_json::from_value(args).map_err(|e| bad(name, e))?;
            p.user = None;
            p.agent_id = None;
            MemoryToolCall::Search(p)
        }
        MEMORY_GET => MemoryToolCall::Get(serde_json::from_value(args).map_err(|e| bad(name, e))?),
        MEMORY_DELETE => {
            let p: gsv_protocol::MemoryDeleteParams =
                serde_json::from_value(args).map_err(|e| bad(name, e))?;
            MemoryToolCall::Delete(p.uri)
        }
        other => return Err(format!("{other} is not a memory tool")),
    };
    Ok(call)
}

pub fn written_text(r: &MemoryPutResult) -> String {
    match r.version {
        1 => format!("Remembered as {}", r.uri),
        v => format!("Updated {} (version {v})", r.uri),
    }
}

pub fn search_text(r: &MemorySearchResult) -> String {
    if r.hits.is_empty() {
        return "No memory matches.".into();
    }
    let lines: Vec<String> = r
        .hits
        .iter()
        .map(|h| {
            format!(
                "- {} [{}] {}\n  matched: {}",
                h.uri, h.category, h.abstract_text, h.snippet
            )
        })
        .collect();
    lines.join("\n")
}

pub fn get_text(uri: &str, r: &MemoryGetResult) -> String {
    let Some(n) = &r.node else {
        return format!("No memory {uri}");
    };
    let mut out = format!(
        "{} [{}] version {}, updated {}{}\n\n{}",
        n.uri,
        n.category,
        n.version,
        n.updated_at,
        match n.tags.is_empty() {
            true => String::new(),
            false => format!(", tags: {}", n.tags.join(", ")),
        },
        n.text
    );
    for r in &n.relations {
        out.push_str(&format!(
            "\n→ {} {} ({})",
            r.relation_type, r.to_uri, r.reason
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_definitions_parse_and_name_the_four_tools() {
        let names: Vec<String> = definitions().into_iter().map(|d| d.name).collect();
        assert_eq!(
            names,
            [MEMORY_WRITE, MEMORY_SEARCH, MEMORY_GET, MEMORY_DELETE]
        );
    }

    #[test]
    fn arguments_are_read_and_the_person_cannot_be_chosen() {
        let call = parse(
            MEMORY_WRITE,
            &json!({"category": "preferences", "title": "coffee", "content": "Black, no sugar",
                    "abstract": "Takes coffee black", "tags": ["drinks"], "user": "mallory", "space": "all"}),
        )
        .unwrap();
        assert_eq!(
            call,
            MemoryToolCall::Write(MemoryPutParams {
                category: "preferences".into(),
                title: Some("coffee".into()),
                content: "Black, no sugar".into(),
                abstract_text: Some("Takes coffee black".into()),
                tags: vec!["drinks".into()],
                ..Default::default()
            })
        );
        assert_eq!(
            parse(
                MEMORY_DELETE,
                &json!({"uri": "ctx://default/agents/main/memories/cases/x"})
            )
            .unwrap(),
            MemoryToolCall::Delete("ctx://default/agents/main/memories/cases/x".into())
        );
        assert_eq!(
            parse(MEMORY_GET, &json!({})).unwrap_err(),
            "gsv__MemoryGet: invalid arguments: missing field `uri`"
        );
    }
}
