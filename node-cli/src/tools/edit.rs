//! Edit: replace exact text in a file.

use std::fs;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use gsv_protocol::capability;
use serde_json::{json, Value};

use super::write::atomic_write;
use super::{blocking, show, Args, Ctx, Tool, ToolResult};

pub struct Edit;

impl Tool for Edit {
    fn name(&self) -> &'static str {
        "Edit"
    }

    fn description(&self) -> &'static str {
        "Replace exact text in a file. oldString must match exactly (whitespace included) and \
         exactly once, unless replaceAll is true; include surrounding lines to make it unique. \
         The file is rewritten atomically."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root or absolute inside it."},
                "oldString": {"type": "string", "description": "Exact text to replace."},
                "newString": {"type": "string", "description": "Replacement text."},
                "replaceAll": {"type": "boolean", "description": "Replace every occurrence (default false)."}
            },
            "required": ["path", "oldString", "newString"]
        })
    }

    fn capabilities(&self) -> &'static [&'static str] {
        &[
            capability::FILESYSTEM_EDIT,
            capability::FILESYSTEM_READ,
            capability::FILESYSTEM_WRITE,
        ]
    }

    fn call(
        &self,
        ctx: Arc<Ctx>,
        args: Args,
        _call_id: Option<String>,
    ) -> BoxFuture<'static, ToolResult> {
        Box::pin(async move {
            let input = args.non_empty_str("path")?;
            let old = args.str("oldString")?;
            let new = args.str("newString")?;
            let all = args.bool("replaceAll")?;
            if old.is_empty() {
                return Err(
                    "argument `oldString` must not be empty (use Write to create or \
                            overwrite a file)"
                        .to_string(),
                );
            }
            if old == new {
                return Err("oldString and newString are the same: nothing to change".to_string());
            }
            let path = ctx.workspace.resolve("path", &input)?;
            blocking(move || {
                let shown = show(&path);
                let bytes = fs::read(&path).map_err(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => format!("file {shown} does not exist"),
                    _ => format!("cannot read {shown}: {e}"),
                })?;
                let text = String::from_utf8(bytes).map_err(|_| {
                    format!("{shown} is not a UTF-8 text file; Edit cannot change it")
                })?;
                let (updated, replacements) = replace(&text, &old, &new, all, &shown)?;
                atomic_write(&path, updated.as_bytes())
                    .map_err(|e| format!("cannot write {shown}: {e}"))?;
                Ok(json!({"path": shown, "replacements": replacements}))
            })
            .await
        })
    }
}

/// The text with `old` replaced, and how many times. When `old` is not
/// found in a CRLF file, its CRLF form is tried.
fn replace(
    text: &str,
    old: &str,
    new: &str,
    all: bool,
    shown: &str,
) -> Result<(String, usize), String> {
    let mut count = text.matches(old).count();
    let (mut old, mut new) = (old.to_string(), new.to_string());
    if count == 0 && old.contains('\n') && !old.contains('\r') && text.contains("\r\n") {
        let crlf = old.replace('\n', "\r\n");
        let n = text.matches(&crlf).count();
        if n > 0 {
            count = n;
            old = crlf;
            new = new.replace("\r\n", "\n").replace('\n', "\r\n");
        }
    }
    match count {
        0 => Err(format!(
            "oldString was not found in {shown}; it must match the file exactly, whitespace and \
             indentation included (Read the file to check)"
        )),
        n if n > 1 && !all => Err(format!(
            "oldString matches {n} times in {shown}; add surrounding context to make it unique, \
             or set replaceAll to true to replace every occurrence"
        )),
        n if all => Ok((text.replace(&old, &new), n)),
        _ => Ok((text.replacen(&old, &new, 1), 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::tests::toolbox;
    use std::os::unix::fs::PermissionsExt;

    #[tokio::test]
    async fn replaces_once_all_or_refuses() {
        let (_dir, tb, _rx) = toolbox();
        let path = tb.workspace().join("f.txt");
        let shown = show(&path);
        fs::write(&path, "a b a\nc\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o700)).unwrap();
        let edit = |old: &str, new: &str, all: bool| {
            let args =
                json!({"path": "f.txt", "oldString": old, "newString": new, "replaceAll": all});
            let tb = tb.clone();
            async move { tb.call("Edit", args, None).await }
        };
        assert_eq!(
            edit("zzz", "y", false).await.unwrap_err(),
            format!(
                "oldString was not found in {shown}; it must match the file exactly, whitespace \
                 and indentation included (Read the file to check)"
            )
        );
        assert_eq!(
            edit("a", "y", false).await.unwrap_err(),
            format!(
                "oldString matches 2 times in {shown}; add surrounding context to make it \
                 unique, or set replaceAll to true to replace every occurrence"
            )
        );
        assert_eq!(
            edit("", "y", false).await.unwrap_err(),
            "argument `oldString` must not be empty (use Write to create or overwrite a file)"
        );
        assert_eq!(
            edit("c\n", "d\n", false).await.unwrap(),
            json!({"path": shown, "replacements": 1})
        );
        assert_eq!(
            edit("a", "é", true).await.unwrap(),
            json!({"path": shown, "replacements": 2})
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "é b é\nd\n");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        let err = tb
            .call(
                "Edit",
                json!({"path": "nope", "oldString": "a", "newString": "b"}),
                None,
            )
            .await;
        assert_eq!(
            err.unwrap_err(),
            format!("file {} does not exist", show(&tb.workspace().join("nope")))
        );
    }

    #[test]
    fn crlf_files_accept_lf_old_strings() {
        let (out, n) = replace("x\r\ny\r\n", "x\ny", "1\n2", false, "f").unwrap();
        assert_eq!((out.as_str(), n), ("1\r\n2\r\n", 1));
    }
}
