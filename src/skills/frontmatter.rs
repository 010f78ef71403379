//! SKILL.md: YAML frontmatter between `---` lines, then markdown.

use super::yaml;
use serde_json::{Map, Value};

/// Longest description taken from the body when frontmatter has none.
pub const MAX_DEFAULT_DESCRIPTION: usize = 200;

/// Metadata namespaces, first present wins.
pub const NAMESPACES: &[&str] = &["gsv", "openclaw", "clawdbot"];

/// What a SKILL.md says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillDoc {
    /// `name`, else the directory name.
    pub name: String,
    /// `description`, else the body's first paragraph.
    pub description: String,
    /// `homepage`.
    pub homepage: Option<String>,
    /// `always`: eligible whatever the requirements.
    pub always: bool,
    /// `metadata.<ns>.emoji`.
    pub emoji: Option<String>,
    /// The raw `requires` of the winning metadata namespace, parsed later
    /// together with config overrides.
    pub requires: Option<Value>,
}

/// Why a SKILL.md's frontmatter cannot be read: a sentence for the skill's
/// status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontmatterError {
    /// Opened with `---` on line 1 but never closed.
    Unclosed,
    /// YAML that does not parse: 1-based line in the file, column, why.
    InvalidYaml {
        line: usize,
        column: usize,
        message: String,
    },
    /// YAML that is not `key: value` pairs.
    NotPairs,
    /// Field `key` is not text.
    NotText(String),
    AlwaysNotBool,
    EmojiNotString,
    MetadataNotObject,
    /// `metadata` is a string that is not JSON; the parser's words.
    MetadataNotJson(String),
    MetadataNotMapping,
    /// `metadata.{ns}` is not a mapping.
    NamespaceNotMapping(String),
}

impl std::fmt::Display for FrontmatterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unclosed => {
                f.write_str("frontmatter opened with --- on line 1 but has no closing --- line")
            }
            Self::InvalidYaml {
                line,
                column,
                message,
            } => write!(
                f,
                "invalid YAML in frontmatter at line {line} column {column}: {message}"
            ),
            Self::NotPairs => f.write_str("frontmatter must be YAML `key: value` pairs"),
            Self::NotText(key) => write!(f, "`{key}` must be text"),
            Self::AlwaysNotBool => f.write_str("`always` must be true or false"),
            Self::EmojiNotString => f.write_str("metadata emoji must be a string"),
            Self::MetadataNotObject => f.write_str("metadata must be a JSON object"),
            Self::MetadataNotJson(e) => write!(f, "metadata is not valid JSON: {e}"),
            Self::MetadataNotMapping => {
                f.write_str("metadata must be a mapping or a JSON object string")
            }
            Self::NamespaceNotMapping(ns) => write!(f, "metadata.{ns} must be a mapping"),
        }
    }
}

impl std::error::Error for FrontmatterError {}

/// Parses SKILL.md found in directory `dir`. Missing fields take their
/// defaults (name = `dir`, description = the first paragraph of the body);
/// an unreadable frontmatter is an error sentence, never a panic.
pub fn parse_skill(dir: &str, content: &str) -> Result<SkillDoc, FrontmatterError> {
    let (front, body) = split(content)?;
    let map = match front {
        None => Map::new(),
        Some(text) => match yaml::parse(text) {
            Ok(Value::Object(m)) => m,
            Ok(Value::Null) => Map::new(),
            Ok(_) => return Err(FrontmatterError::NotPairs),
            // The frontmatter starts on line 2 of the file.
            Err(e) => {
                return Err(FrontmatterError::InvalidYaml {
                    line: e.line + 1,
                    column: e.column,
                    message: e.message,
                })
            }
        },
    };
    let name = text_field(&map, "name")?.unwrap_or_else(|| dir.to_string());
    let description = text_field(&map, "description")?.unwrap_or_else(|| default_description(body));
    let homepage = text_field(&map, "homepage")?;
    let always = match map.get("always") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) if s == "true" => true,
        Some(Value::String(s)) if s == "false" => false,
        Some(_) => return Err(FrontmatterError::AlwaysNotBool),
    };
    let ns = namespace(map.get("metadata"))?;
    let emoji = match ns.as_ref().and_then(|m| m.get("emoji")) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(FrontmatterError::EmojiNotString),
    };
    let requires = ns.and_then(|mut m| m.remove("requires"));
    Ok(SkillDoc {
        name,
        description,
        homepage,
        always,
        emoji,
        requires,
    })
}

/// Splits off the frontmatter: the file must open with a `---` line and
/// the frontmatter ends at the next `---` (or `...`) line. No opening line
/// means no frontmatter.
fn split(content: &str) -> Result<(Option<&str>, &str), FrontmatterError> {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let (first, rest) = content.split_once('\n').unwrap_or((content, ""));
    if first.trim_end() != "---" {
        return Ok((None, content));
    }
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let t = line.trim_end();
        if t == "---" || t == "..." {
            return Ok((Some(&rest[..offset]), &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    Err(FrontmatterError::Unclosed)
}

/// A string field; numbers and booleans are taken as written, blank is absent.
fn text_field(map: &Map<String, Value>, key: &str) -> Result<Option<String>, FrontmatterError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
        Some(v @ (Value::Number(_) | Value::Bool(_))) => Ok(Some(v.to_string())),
        Some(_) => Err(FrontmatterError::NotText(key.to_string())),
    }
}

/// The first metadata namespace present (`gsv`, then `openclaw`, then
/// `clawdbot`). `metadata` may be a YAML mapping or a JSON string (trailing
/// commas tolerated).
fn namespace(metadata: Option<&Value>) -> Result<Option<Map<String, Value>>, FrontmatterError> {
    let meta = match metadata {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Object(m)) => m.clone(),
        Some(Value::String(s)) => match serde_json::from_str(&strip_trailing_commas(s)) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(FrontmatterError::MetadataNotObject),
            Err(e) => return Err(FrontmatterError::MetadataNotJson(e.to_string())),
        },
        Some(_) => return Err(FrontmatterError::MetadataNotMapping),
    };
    for ns in NAMESPACES {
        match meta.get(*ns) {
            None | Some(Value::Null) => continue,
            Some(Value::Object(m)) => return Ok(Some(m.clone())),
            Some(_) => return Err(FrontmatterError::NamespaceNotMapping(ns.to_string())),
        }
    }
    Ok(None)
}

/// Removes commas that directly precede `}` or `]` outside strings.
fn strip_trailing_commas(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let (mut in_str, mut escaped) = (false, false);
    for (i, &c) in chars.iter().enumerate() {
        if in_str {
            in_str = c != '"' || escaped;
            escaped = c == '\\' && !escaped;
        } else if c == '"' {
            in_str = true;
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// The first paragraph of the body after any headings, whitespace
/// collapsed, at most 200 characters (an ellipsis marks a cut).
fn default_description(body: &str) -> String {
    let para: Vec<&str> = body
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty() || l.starts_with('#'))
        .take_while(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let text = para
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if text.chars().count() <= MAX_DEFAULT_DESCRIPTION {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_DEFAULT_DESCRIPTION - 1).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn full_frontmatter_with_yaml_metadata() {
        let md = "---\nname: github\ndescription: Work with GitHub via gh.\nhomepage: https://cli.github.com\nalways: false\nmetadata:\n  openclaw:\n    emoji: 🐙\n    requires:\n      bins: [gh]\n  clawdbot:\n    emoji: x\n---\n# GitHub\n\nBody.\n";
        assert_eq!(
            parse_skill("gh", md).unwrap(),
            SkillDoc {
                name: "github".into(),
                description: "Work with GitHub via gh.".into(),
                homepage: Some("https://cli.github.com".into()),
                always: false,
                emoji: Some("🐙".into()),
                requires: Some(json!({"bins": ["gh"]})),
            }
        );
    }

    #[test]
    fn metadata_as_json_string_with_trailing_commas_and_gsv_first() {
        let md = "---\nmetadata: '{\"openclaw\": {\"emoji\": \"o\"}, \"gsv\": {\"emoji\": \"g\", \"requires\": {\"env\": [\"TOKEN\",],},},}'\nalways: \"true\"\n---\nx\n";
        let doc = parse_skill("tool", md).unwrap();
        assert_eq!(
            doc,
            SkillDoc {
                name: "tool".into(),
                description: "x".into(),
                homepage: None,
                always: true,
                emoji: Some("g".into()),
                requires: Some(json!({"env": ["TOKEN"]})),
            }
        );
    }

    #[test]
    fn defaults_from_directory_and_first_paragraph() {
        let long = "word ".repeat(60);
        let md = format!("# Title\n\n## Sub\n{long}\nsecond line\n\nOther paragraph.\n");
        let doc = parse_skill("notes", &md).unwrap();
        assert_eq!(doc.name, "notes");
        assert_eq!(doc.description.chars().count(), 200);
        assert_eq!(
            doc.description,
            format!("{}…", "word ".repeat(40).trim_end())
        );
        let short = parse_skill("s", "---\n---\nDoes a thing\nwell.\n\nMore.").unwrap();
        assert_eq!(short.description, "Does a thing well.");
    }

    #[test]
    fn malformed_frontmatter_is_a_clear_error() {
        let cases = [
            (
                "---\nname: [unclosed\n---\n",
                "invalid YAML in frontmatter at line 3 column 1: while parsing a flow sequence, expected ',' or ']'",
            ),
            (
                "---\nname: x\n",
                "frontmatter opened with --- on line 1 but has no closing --- line",
            ),
            (
                "---\n- a\n- b\n---\n",
                "frontmatter must be YAML `key: value` pairs",
            ),
            (
                "---\nalways: maybe\n---\n",
                "`always` must be true or false",
            ),
            ("---\nname: {a: 1}\n---\n", "`name` must be text"),
            (
                "---\nmetadata: '{nope'\n---\n",
                "metadata is not valid JSON: key must be a string at line 1 column 2",
            ),
            (
                "---\nmetadata:\n  gsv: [1]\n---\n",
                "metadata.gsv must be a mapping",
            ),
            (
                "---\nname: a\nname: b\n---\n",
                "invalid YAML in frontmatter at line 3 column 1: duplicate key `name`",
            ),
        ];
        for (md, want) in cases {
            assert_eq!(
                parse_skill("d", md).unwrap_err().to_string(),
                want,
                "{md:?}"
            );
        }
    }
}
