//! Arguments and pure semantics of the workspace file tools.

use super::tools::{DELETE_FILE, EDIT_FILE, LIST_FILES, READ_FILE, WRITE_FILE};
use crate::session::tools::ToolError;
use crate::storage::content_type_of;
use crate::workspace::paths::WorkspacePath;
use serde_json::Value;

/// A validated call of one of the native workspace tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkspaceCall {
    /// `gsv__ReadFile`.
    Read {
        /// The file.
        path: WorkspacePath,
    },
    /// `gsv__WriteFile`.
    Write {
        /// The file.
        path: WorkspacePath,
        /// The whole new content.
        content: String,
    },
    /// `gsv__EditFile`.
    Edit {
        /// The file.
        path: WorkspacePath,
        /// The exact text to replace.
        old_string: String,
        /// The replacement.
        new_string: String,
        /// Replace every match instead of requiring one.
        replace_all: bool,
    },
    /// `gsv__ListFiles`.
    List {
        /// The directory (root when empty).
        path: WorkspacePath,
    },
    /// `gsv__DeleteFile`.
    Delete {
        /// The file.
        path: WorkspacePath,
    },
}

impl WorkspaceCall {
    /// Reads the arguments of tool `name`; `None` when `name` is not a
    /// workspace tool. Errors say which argument is wrong and why.
    pub fn parse(name: &str, args: &Value) -> Option<Result<Self, ToolError>> {
        if ![READ_FILE, WRITE_FILE, EDIT_FILE, LIST_FILES, DELETE_FILE].contains(&name) {
            return None;
        }
        let str_arg = |key: &str| -> Result<String, ToolError> {
            match args.get(key) {
                Some(Value::String(s)) => Ok(s.clone()),
                None | Some(Value::Null) => Err(format!("{name} needs `{key}` (a string)").into()),
                Some(_) => Err(format!("{name}: `{key}` must be a string").into()),
            }
        };
        let file = |key: &str| -> Result<WorkspacePath, ToolError> {
            WorkspacePath::file(&str_arg(key)?).map_err(|e| format!("{name}: {e}").into())
        };
        Some((|| match name {
            READ_FILE => Ok(Self::Read {
                path: file("path")?,
            }),
            WRITE_FILE => Ok(Self::Write {
                path: file("path")?,
                content: str_arg("content")?,
            }),
            EDIT_FILE => Ok(Self::Edit {
                path: file("path")?,
                old_string: str_arg("oldString")?,
                new_string: str_arg("newString")?,
                replace_all: match args.get("replaceAll") {
                    None | Some(Value::Null) => false,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => {
                        return Err(format!("{name}: `replaceAll` must be true or false").into())
                    }
                },
            }),
            LIST_FILES => {
                let dir = match args.get("path") {
                    None | Some(Value::Null) => String::new(),
                    Some(_) => str_arg("path")?,
                };
                WorkspacePath::dir(&dir)
                    .map(|path| Self::List { path })
                    .map_err(|e| format!("{name}: {e}").into())
            }
            _ => Ok(Self::Delete {
                path: file("path")?,
            }),
        })())
    }
}

/// A successful edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The file's new content.
    pub content: String,
    /// How many matches were replaced.
    pub replacements: usize,
}

/// Why an edit was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditError {
    /// `oldString` is empty.
    EmptyOldString,
    /// `oldString` occurs nowhere.
    NotFound,
    /// `oldString` occurs this many times and `replaceAll` is not set.
    Ambiguous(usize),
    /// `oldString` equals `newString`.
    Unchanged,
}

impl std::fmt::Display for EditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::EmptyOldString => f.write_str("oldString is empty: give the exact text to replace (use gsv__WriteFile to replace a whole file)"),
            Self::NotFound => f.write_str("oldString was not found (0 matches): it must match the file exactly, including spaces and line breaks; read the file first"),
            Self::Ambiguous(n) => write!(f, "oldString matches {n} places: include more surrounding text so it matches exactly one, or set replaceAll: true to replace all {n}"),
            Self::Unchanged => f.write_str("oldString and newString are identical: nothing to change"),
        }
    }
}

impl std::error::Error for EditError {}

/// `gsv__EditFile`: replaces the exact text `old` with `new`. Exactly one
/// match is required unless `replace_all` (then every non-overlapping
/// match is replaced).
pub fn apply_edit(
    content: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<Edited, EditError> {
    if old.is_empty() {
        return Err(EditError::EmptyOldString);
    }
    if old == new {
        return Err(EditError::Unchanged);
    }
    let n = content.matches(old).count();
    match (n, replace_all) {
        (0, _) => Err(EditError::NotFound),
        (1, _) | (_, true) => Ok(Edited {
            content: content.replace(old, new),
            replacements: n,
        }),
        (n, false) => Err(EditError::Ambiguous(n)),
    }
}

/// Content type stored with a written file, by extension.
pub fn content_type(path: &WorkspacePath) -> &'static str {
    content_type_of(path.as_str())
}
