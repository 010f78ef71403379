//! Workspace confinement: every path argument is resolved inside the node's
//! workspace unless the operator opted out.
//!
//! A path is joined to the workspace when relative, normalized lexically
//! (`.` and `..`), then its longest existing ancestor is canonicalized
//! (following symbolic links, dangling ones too) and the rest appended. The
//! result is the real path the tool then works on, so a link cannot lead a
//! later open() somewhere the check did not see.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

const MAX_LINK_DEPTH: u32 = 40;

#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    confine: bool,
}

impl Workspace {
    /// Canonicalizes `root`, which must be an existing directory.
    pub fn new(root: PathBuf, confine: bool) -> io::Result<Self> {
        let root = fs::canonicalize(&root)
            .map_err(|e| io::Error::new(e.kind(), format!("workspace {}: {e}", root.display())))?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("workspace {} is not a directory", root.display()),
            ));
        }
        Ok(Workspace { root, confine })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves the optional argument `field`; absent means the workspace.
    pub fn resolve_or_root(&self, field: &str, input: Option<&str>) -> Result<PathBuf, String> {
        match input {
            Some(s) if !s.trim().is_empty() => self.resolve(field, s),
            _ => Ok(self.root.clone()),
        }
    }

    /// Resolves the path argument `field` = `input` to a real absolute path,
    /// refusing one outside the workspace when confined.
    pub fn resolve(&self, field: &str, input: &str) -> Result<PathBuf, String> {
        if input.is_empty() {
            return Err(format!("argument `{field}` must not be empty"));
        }
        let expanded = expand_tilde(input);
        let joined = if expanded.is_absolute() {
            expanded
        } else {
            self.root.join(expanded)
        };
        let lexical = normalize(&joined);
        let real = real_path(&lexical, 0)
            .map_err(|e| format!("{field} {input}: cannot resolve the path: {e}"))?;
        if self.confine && !real.starts_with(&self.root) {
            let how = if lexical.starts_with(&self.root) {
                format!(
                    "resolves through a symbolic link to {}, which is",
                    real.display()
                )
            } else {
                "is".to_string()
            };
            return Err(format!(
                "{field} {input} {how} outside the node workspace {} \
                 (start the node with --allow-outside-workspace to permit this)",
                self.root.display()
            ));
        }
        Ok(real)
    }
}

fn expand_tilde(input: &str) -> PathBuf {
    let home = || dirs::home_dir().filter(|h| h.is_absolute());
    if input == "~" {
        if let Some(h) = home() {
            return h;
        }
    } else if let Some(rest) = input.strip_prefix("~/") {
        if let Some(h) = home() {
            return h.join(rest);
        }
    }
    PathBuf::from(input)
}

/// Removes `.` and applies `..` lexically (`..` at the root stays there).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                out.push(c.as_os_str())
            }
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
        }
    }
    out
}

/// The real path of the normalized absolute `path`: its longest existing
/// ancestor canonicalized, plus the components that do not exist yet.
fn real_path(path: &Path, depth: u32) -> io::Result<PathBuf> {
    if depth > MAX_LINK_DEPTH {
        return Err(io::Error::other("too many levels of symbolic links"));
    }
    let mut existing = path;
    let mut tail: Vec<OsString> = Vec::new();
    let meta = loop {
        match fs::symlink_metadata(existing) {
            Ok(meta) => break meta,
            Err(e)
                if e.kind() == io::ErrorKind::NotFound
                    || e.kind() == io::ErrorKind::NotADirectory =>
            {
                let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                    return Err(e);
                };
                tail.push(name.to_owned());
                existing = parent;
            }
            Err(e) => return Err(e),
        }
    };
    let mut base = match fs::canonicalize(existing) {
        Ok(c) => c,
        // A dangling (or looping) link: follow it by hand, so that a new
        // file "created through" it is checked where it would really land.
        Err(_) if meta.file_type().is_symlink() => {
            let target = fs::read_link(existing)?;
            let parent = existing.parent().unwrap_or(Path::new("/"));
            real_path(&normalize(&parent.join(target)), depth + 1)?
        }
        Err(e) => return Err(e),
    };
    for name in tail.into_iter().rev() {
        base.push(name);
    }
    Ok(base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Fixture {
        _dir: tempfile::TempDir,
        ws: PathBuf,
        outside: PathBuf,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let ws = base.join("ws");
        let outside = base.join("outside");
        fs::create_dir_all(ws.join("sub")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret"), "s").unwrap();
        fs::write(ws.join("sub/file"), "f").unwrap();
        symlink(outside.join("secret"), ws.join("link-file")).unwrap();
        symlink(&outside, ws.join("link-dir")).unwrap();
        symlink(outside.join("nope"), ws.join("dangling")).unwrap();
        symlink(ws.join("sub"), ws.join("inner-link")).unwrap();
        Fixture {
            _dir: dir,
            ws,
            outside,
        }
    }

    fn refusal(ws: &Workspace, input: &str) -> String {
        ws.resolve("path", input).unwrap_err()
    }

    #[test]
    fn inside_paths_resolve_to_real_paths() {
        let f = fixture();
        let ws = Workspace::new(f.ws.clone(), true).unwrap();
        assert_eq!(
            ws.resolve("path", "sub/file").unwrap(),
            f.ws.join("sub/file")
        );
        assert_eq!(
            ws.resolve("path", "./sub/../sub/new/x").unwrap(),
            f.ws.join("sub/new/x")
        );
        let abs = f.ws.join("sub/file");
        assert_eq!(ws.resolve("path", abs.to_str().unwrap()).unwrap(), abs);
        assert_eq!(
            ws.resolve("path", "inner-link/file").unwrap(),
            f.ws.join("sub/file")
        );
        assert_eq!(ws.resolve_or_root("path", None).unwrap(), f.ws);
    }

    #[test]
    fn escapes_are_refused_with_a_reason() {
        let f = fixture();
        let ws = Workspace::new(f.ws.clone(), true).unwrap();
        let root = f.ws.display();
        let hint = "(start the node with --allow-outside-workspace to permit this)";
        assert_eq!(
            refusal(&ws, "/etc/passwd"),
            format!("path /etc/passwd is outside the node workspace {root} {hint}")
        );
        assert_eq!(
            refusal(&ws, "../outside/secret"),
            format!("path ../outside/secret is outside the node workspace {root} {hint}")
        );
        let secret = f.outside.join("secret");
        assert_eq!(
            refusal(&ws, "link-file"),
            format!(
                "path link-file resolves through a symbolic link to {}, which is outside \
                 the node workspace {root} {hint}",
                secret.display()
            )
        );
        assert!(refusal(&ws, "link-dir/secret").contains("outside the node workspace"));
        // New files under a linked directory, or through a dangling link.
        assert!(refusal(&ws, "link-dir/new/deeper.txt").contains(&format!(
            "to {}, which is outside",
            f.outside.join("new/deeper.txt").display()
        )));
        assert!(refusal(&ws, "dangling")
            .contains(&format!("to {}, which", f.outside.join("nope").display())));
    }

    #[test]
    fn opting_out_allows_any_path() {
        let f = fixture();
        let ws = Workspace::new(f.ws.clone(), false).unwrap();
        assert_eq!(
            ws.resolve("path", "link-file").unwrap(),
            f.outside.join("secret")
        );
        assert_eq!(
            ws.resolve("path", "../outside/x").unwrap(),
            f.outside.join("x")
        );
        assert_eq!(
            ws.resolve("path", "/etc").unwrap(),
            fs::canonicalize("/etc").unwrap()
        );
    }
}
