//! Write: create or replace a file atomically.

use std::fs;
use std::io::{self, Write as _};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use gsv_protocol::capability;
use serde_json::{json, Value};

use super::{blocking, show, Args, Ctx, Tool, ToolResult};

pub struct Write;

impl Tool for Write {
    fn name(&self) -> &'static str {
        "Write"
    }

    fn description(&self) -> &'static str {
        "Write a file in the workspace, creating parent directories. An existing file is \
         replaced atomically and keeps its permissions. Prefer Edit for changes to an \
         existing file."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File path, relative to the workspace root or absolute inside it."},
                "content": {"type": "string", "description": "The whole new content."}
            },
            "required": ["path", "content"]
        })
    }

    fn capabilities(&self) -> &'static [&'static str] {
        &[capability::FILESYSTEM_WRITE]
    }

    fn call(
        &self,
        ctx: Arc<Ctx>,
        args: Args,
        _call_id: Option<String>,
    ) -> BoxFuture<'static, ToolResult> {
        Box::pin(async move {
            let input = args.non_empty_str("path")?;
            let content = args.str("content")?;
            let path = ctx.workspace.resolve("path", &input)?;
            blocking(move || {
                let shown = show(&path);
                if path.is_dir() {
                    return Err(format!("{shown} is a directory"));
                }
                let existed = path.exists();
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent).map_err(|e| {
                        format!("cannot create the directory {}: {e}", show(parent))
                    })?;
                }
                atomic_write(&path, content.as_bytes())
                    .map_err(|e| format!("cannot write {shown}: {e}"))?;
                Ok(json!({"path": shown, "bytes": content.len(), "created": !existed}))
            })
            .await
        })
    }
}

/// Writes `data` to a temporary file beside `path`, syncs it and renames it
/// over `path`. The file keeps the mode of the one it replaces; a new file
/// gets 0666 less the umask.
pub fn atomic_write(path: &Path, data: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mode = match fs::metadata(path) {
        Ok(meta) => meta.permissions().mode() & 0o7777,
        Err(e) if e.kind() == io::ErrorKind::NotFound => 0o666 & !umask(),
        Err(e) => return Err(e),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".gsv-write-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(data)?;
    tmp.as_file()
        .set_permissions(fs::Permissions::from_mode(mode))?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The process umask, read without changing it (Linux); 022 elsewhere.
fn umask() -> u32 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::tests::toolbox;
    use serde_json::json;

    #[tokio::test]
    async fn creates_parents_and_replaces_atomically_keeping_the_mode() {
        let (dir, tb, _rx) = toolbox();
        let ws = tb.workspace().to_path_buf();
        let out = tb
            .call(
                "Write",
                json!({"path": "a/b/new.txt", "content": "héllo"}),
                None,
            )
            .await;
        let path = ws.join("a/b/new.txt");
        assert_eq!(
            out.unwrap(),
            json!({"path": show(&path), "bytes": 6, "created": true})
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "héllo");
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask());

        fs::set_permissions(&path, fs::Permissions::from_mode(0o751)).unwrap();
        let before = fs::metadata(&path).unwrap();
        let out = tb
            .call("Write", json!({"path": show(&path), "content": ""}), None)
            .await;
        assert_eq!(
            out.unwrap(),
            json!({"path": show(&path), "bytes": 0, "created": false})
        );
        let after = fs::metadata(&path).unwrap();
        use std::os::unix::fs::MetadataExt;
        assert_ne!(
            before.ino(),
            after.ino(),
            "replaced by rename, not rewritten in place"
        );
        assert_eq!(after.permissions().mode() & 0o777, 0o751);
        assert_eq!(fs::read_to_string(&path).unwrap(), "");
        // No temporary files left behind.
        let names: Vec<_> = fs::read_dir(ws.join("a/b"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("new.txt")]);
        drop(dir);
    }

    #[tokio::test]
    async fn refusals() {
        let (dir, tb, _rx) = toolbox();
        let err = tb
            .call("Write", json!({"path": "x"}), None)
            .await
            .unwrap_err();
        assert_eq!(err, "missing required argument `content`");
        let err = tb
            .call("Write", json!({"path": ".", "content": "x"}), None)
            .await
            .unwrap_err();
        assert_eq!(err, format!("{} is a directory", show(tb.workspace())));
        let err = tb
            .call("Write", json!({"path": "../x", "content": "x"}), None)
            .await
            .unwrap_err();
        assert!(
            err.starts_with("path ../x is outside the node workspace"),
            "{err}"
        );
        // A new file under a linked directory that leads outside.
        let outside = fs::canonicalize(dir.path()).unwrap().join("outside");
        fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, tb.workspace().join("out")).unwrap();
        let args = json!({"path": "out/sub/new.txt", "content": "x"});
        let err = tb.call("Write", args, None).await.unwrap_err();
        assert!(err.contains("resolves through a symbolic link"), "{err}");
        assert!(!outside.join("sub").exists());
        let args = json!({"path": "out/f", "oldString": "a", "newString": "b"});
        let err = tb.call("Edit", args, None).await.unwrap_err();
        assert!(err.contains("outside the node workspace"), "{err}");
    }
}
