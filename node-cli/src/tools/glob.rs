//! Glob: find files by name pattern, newest first, skipping what
//! .gitignore (and .ignore) exclude. Symbolic links are listed, never
//! followed.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};
use std::time::SystemTime;

use futures_util::future::BoxFuture;
use globset::GlobBuilder;
use gsv_protocol::capability;
use ignore::{WalkBuilder, WalkState};
use serde_json::{json, Value};

use super::{blocking, show, Args, Ctx, Tool, ToolResult};

const MAX_MATCHES: usize = 1000;

pub struct Glob;

impl Tool for Glob {
    fn name(&self) -> &'static str {
        "Glob"
    }

    fn description(&self) -> &'static str {
        "Find files whose path matches a glob pattern (e.g. \"**/*.rs\", \"src/**/*.{ts,tsx}\"; \
         `*` does not cross `/`), relative to path (default: the workspace root). Files \
         ignored by .gitignore and hidden files are skipped unless the pattern names them. \
         Newest first, at most 1000."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Glob pattern, relative to path."},
                "path": {"type": "string", "description": "Directory to search (default: the workspace root)."}
            },
            "required": ["pattern"]
        })
    }

    fn capabilities(&self) -> &'static [&'static str] {
        &[capability::FILESYSTEM_LIST]
    }

    fn call(
        &self,
        ctx: Arc<Ctx>,
        args: Args,
        _call_id: Option<String>,
    ) -> BoxFuture<'static, ToolResult> {
        Box::pin(async move {
            let pattern = args.non_empty_str("pattern")?;
            let path = args.opt_str("path")?;
            let (prefix, sub) = split_literal(&pattern);
            let (base, start) = if Path::new(&pattern).is_absolute() {
                // An absolute pattern: its literal directories are the base.
                let base = ctx.workspace.resolve("pattern", &prefix)?;
                (base.clone(), base)
            } else {
                let base = ctx.workspace.resolve_or_root("path", path.as_deref())?;
                if prefix.is_empty() {
                    (base.clone(), base)
                } else {
                    // Walk only below the literal directories of the pattern.
                    let start = ctx
                        .workspace
                        .resolve("pattern", &show(&base.join(&prefix)))?;
                    let base = if start.starts_with(&base) {
                        base
                    } else {
                        start.clone()
                    };
                    (base, start)
                }
            };
            blocking(move || glob(&base, &start, &sub, &pattern)).await
        })
    }
}

/// Splits the leading directories without glob syntax off `pattern`.
fn split_literal(pattern: &str) -> (String, String) {
    let pattern = pattern.trim_start_matches("./");
    let parts: Vec<&str> = pattern.split('/').collect();
    let literal = parts[..parts.len() - 1]
        .iter()
        .take_while(|p| !p.contains(['*', '?', '[', '{', '\\']))
        .count();
    let mut prefix = parts[..literal].join("/");
    if prefix.is_empty() && pattern.starts_with('/') {
        prefix = "/".to_string();
    }
    (prefix, parts[literal..].join("/"))
}

/// Walks `start` (`base` or below it) for paths matching `sub` relative to
/// `start`; reports them relative to `base`.
fn glob(base: &Path, start: &Path, sub: &str, pattern: &str) -> ToolResult {
    let result = |matches: Vec<String>, total: usize| {
        let count = matches.len();
        json!({
            "pattern": pattern,
            "basePath": show(base),
            "matches": matches,
            "count": count,
            "truncated": total > count,
        })
    };
    if !start.is_dir() {
        if start.exists() {
            return Err(format!("path {} is not a directory", show(start)));
        }
        return Ok(result(Vec::new(), 0));
    }
    let full = match start.strip_prefix(base) {
        Ok(p) if !p.as_os_str().is_empty() => format!("{}/{sub}", show(p)),
        _ => sub.to_string(),
    };
    let matcher = GlobBuilder::new(&full)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("invalid glob pattern {pattern}: {e}"))?
        .compile_matcher();
    let wants_hidden = full.split('/').any(|p| p.starts_with('.'));
    let mut walk = WalkBuilder::new(start);
    walk.hidden(!wants_hidden)
        .follow_links(false)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git");
    if !sub.contains("**") {
        walk.max_depth(Some(sub.split('/').count()));
    }
    let (tx, rx) = mpsc::channel::<(SystemTime, PathBuf)>();
    walk.build_parallel().run(|| {
        let tx = tx.clone();
        let matcher = matcher.clone();
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if entry.file_type().is_none_or(|t| t.is_dir()) {
                return WalkState::Continue;
            }
            let Ok(rel) = entry.path().strip_prefix(base) else {
                return WalkState::Continue;
            };
            if matcher.is_match(rel) {
                let mtime = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                let _ = tx.send((mtime, rel.to_path_buf()));
            }
            WalkState::Continue
        })
    });
    drop(tx);
    let mut found: Vec<(SystemTime, PathBuf)> = rx.into_iter().collect();
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    let matches = found
        .into_iter()
        .take(MAX_MATCHES)
        .map(|(_, p)| show(&p))
        .collect();
    Ok(result(matches, total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::tests::{toolbox, touch};
    use std::fs;

    #[test]
    fn literal_prefixes() {
        assert_eq!(
            split_literal("src/**/*.rs"),
            ("src".into(), "**/*.rs".into())
        );
        assert_eq!(split_literal("./a/b/c.txt"), ("a/b".into(), "c.txt".into()));
        assert_eq!(split_literal("*.rs"), ("".into(), "*.rs".into()));
        assert_eq!(split_literal("/ws/x/*/y"), ("/ws/x".into(), "*/y".into()));
    }

    #[tokio::test]
    async fn gitignore_aware_and_newest_first() {
        let (_dir, tb, _rx) = toolbox();
        let ws = tb.workspace().to_path_buf();
        touch(&ws.join(".gitignore"), "target/\n*.log\n", 10);
        touch(&ws.join("src/old.rs"), "", 100);
        touch(&ws.join("src/new.rs"), "", 300);
        touch(&ws.join("src/deep/mid.rs"), "", 200);
        touch(&ws.join("top.rs"), "", 50);
        touch(&ws.join("target/skip.rs"), "", 400);
        touch(&ws.join("src/x.log"), "", 400);
        touch(&ws.join(".hidden/h.rs"), "", 400);
        std::os::unix::fs::symlink(ws.join("src"), ws.join("linked")).unwrap();

        let out = tb
            .call("Glob", json!({"pattern": "**/*.rs"}), None)
            .await
            .unwrap();
        assert_eq!(
            out,
            json!({
                "pattern": "**/*.rs",
                "basePath": show(&ws),
                "matches": ["src/new.rs", "src/deep/mid.rs", "src/old.rs", "top.rs"],
                "count": 4,
                "truncated": false
            })
        );
        let out = tb
            .call("Glob", json!({"pattern": "*.rs"}), None)
            .await
            .unwrap();
        assert_eq!(out["matches"], json!(["top.rs"]));
        let out = tb
            .call("Glob", json!({"pattern": "src/*.rs"}), None)
            .await
            .unwrap();
        assert_eq!(out["matches"], json!(["src/new.rs", "src/old.rs"]));
        let out = tb
            .call("Glob", json!({"pattern": "*.rs", "path": "src/deep"}), None)
            .await
            .unwrap();
        assert_eq!(out["matches"], json!(["mid.rs"]));
        assert_eq!(out["basePath"], json!(show(&ws.join("src/deep"))));
        let out = tb
            .call("Glob", json!({"pattern": ".hidden/*"}), None)
            .await
            .unwrap();
        assert_eq!(out["matches"], json!([".hidden/h.rs"]));
        let abs = format!("{}/src/**/m*.rs", show(&ws));
        let out = tb
            .call("Glob", json!({"pattern": abs}), None)
            .await
            .unwrap();
        assert_eq!(out["matches"], json!(["deep/mid.rs"]));
    }

    #[tokio::test]
    async fn confined_and_capped() {
        let (dir, tb, _rx) = toolbox();
        let ws = tb.workspace().to_path_buf();
        let outside = fs::canonicalize(dir.path()).unwrap().join("outside");
        touch(&outside.join("secret.rs"), "", 1);
        std::os::unix::fs::symlink(&outside, ws.join("out")).unwrap();
        for i in 0..1005 {
            touch(&ws.join(format!("many/{i}.txt")), "", 1);
        }
        let out = tb
            .call("Glob", json!({"pattern": "**/*.rs"}), None)
            .await
            .unwrap();
        assert_eq!(out["matches"], json!([]), "links are not followed");
        let err = tb
            .call("Glob", json!({"pattern": "out/*.rs"}), None)
            .await
            .unwrap_err();
        assert!(err.contains("outside the node workspace"), "{err}");
        let err = tb
            .call("Glob", json!({"pattern": "*", "path": ".."}), None)
            .await
            .unwrap_err();
        assert!(err.starts_with("path .. is outside"), "{err}");
        let out = tb
            .call("Glob", json!({"pattern": "many/*.txt"}), None)
            .await
            .unwrap();
        assert_eq!(
            (out["count"].clone(), out["truncated"].clone()),
            (json!(1000), json!(true))
        );
        assert_eq!(
            out["matches"][0],
            json!("many/0.txt"),
            "ties sorted by path"
        );
    }
}
