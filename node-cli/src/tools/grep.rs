//! Grep: search file contents with a regex, using ripgrep's crates.
//!
//! The walk is parallel and gitignore-aware; hidden and binary files are
//! skipped, symbolic links are not followed. Results are the first
//! `maxMatches` matches in (path, line) order whatever the thread timing:
//! once that many are held, the largest path held is a threshold and files
//! and directories after it are skipped, so a common pattern stops early.
//! A result with `maxMatches` matches is marked `truncated`.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use futures_util::future::BoxFuture;
use globset::{GlobBuilder, GlobMatcher};
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use gsv_protocol::capability;
use ignore::{WalkBuilder, WalkState};
use serde_json::{json, Value};

use super::text::{cap_line, excerpt};
use super::{blocking, show, Args, Ctx, Tool, ToolResult};

const DEFAULT_MAX_MATCHES: u64 = 100;
const MAX_MATCHES_LIMIT: u64 = 5000;
const MAX_CONTEXT: u64 = 50;
/// Characters of a line in a result.
const LINE_CHARS: usize = 200;

pub struct Grep;

impl Tool for Grep {
    fn name(&self) -> &'static str {
        "Grep"
    }

    fn description(&self) -> &'static str {
        "Search file contents for a regular expression (Rust regex syntax) under path \
         (default: the workspace root), like ripgrep: .gitignore is respected, hidden and \
         binary files are skipped. include filters files by glob (\"*.rs\" matches names, \
         \"src/**/*.rs\" paths). Returns matches sorted by path and line, at most maxMatches \
         (default 100); lines are cut at 200 characters."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression (Rust regex syntax)."},
                "path": {"type": "string", "description": "File or directory to search (default: the workspace root)."},
                "include": {"type": "string", "description": "Only files matching this glob, e.g. \"*.{ts,tsx}\"."},
                "ignoreCase": {"type": "boolean", "description": "Case-insensitive search."},
                "context": {"type": "integer", "minimum": 0, "maximum": 50, "description": "Lines of context before and after each match."},
                "maxMatches": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "Most matches returned (default 100)."}
            },
            "required": ["pattern"]
        })
    }

    fn capabilities(&self) -> &'static [&'static str] {
        &[capability::TEXT_SEARCH, capability::FILESYSTEM_READ]
    }

    fn call(
        &self,
        ctx: Arc<Ctx>,
        args: Args,
        _call_id: Option<String>,
    ) -> BoxFuture<'static, ToolResult> {
        Box::pin(async move {
            let pattern = args.str("pattern")?;
            if pattern.is_empty() {
                return Err("argument `pattern` must not be empty".to_string());
            }
            let path = args.opt_str("path")?;
            let base = ctx.workspace.resolve_or_root("path", path.as_deref())?;
            let include = match args.opt_str("include")?.filter(|s| !s.trim().is_empty()) {
                None => None,
                Some(glob) => Some(Include::new(&glob)?),
            };
            let opts = Opts {
                ignore_case: args.bool("ignoreCase")?,
                context: args.opt_u64("context")?.unwrap_or(0).min(MAX_CONTEXT) as usize,
                max: args
                    .opt_u64("maxMatches")?
                    .unwrap_or(DEFAULT_MAX_MATCHES)
                    .clamp(1, MAX_MATCHES_LIMIT) as usize,
                include,
            };
            blocking(move || grep(&base, &pattern, &opts)).await
        })
    }
}

struct Opts {
    ignore_case: bool,
    context: usize,
    max: usize,
    include: Option<Include>,
}

/// The include glob: on the file name when it has no `/`, else on the path
/// relative to the base.
struct Include {
    matcher: GlobMatcher,
    on_name: bool,
}

impl Include {
    fn new(glob: &str) -> Result<Include, String> {
        let glob = glob.trim().trim_start_matches("./");
        let matcher = GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("invalid glob in `include` {glob}: {e}"))?
            .compile_matcher();
        Ok(Include {
            matcher,
            on_name: !glob.contains('/'),
        })
    }

    fn matches(&self, rel: &Path) -> bool {
        if self.on_name {
            rel.file_name().is_some_and(|n| self.matcher.is_match(n))
        } else {
            self.matcher.is_match(rel)
        }
    }
}

fn grep(base: &Path, pattern: &str, opts: &Opts) -> ToolResult {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(opts.ignore_case)
        .line_terminator(Some(b'\n'))
        .build(pattern)
        .map_err(|e| format!("invalid regex {pattern}: {e}"))?;
    let meta = std::fs::metadata(base).map_err(|e| format!("cannot search {}: {e}", show(base)))?;
    let collected = Collected::new(opts.max);
    let root = if meta.is_dir() {
        walk(base, &matcher, opts, &collected);
        base
    } else {
        let mut searcher = searcher(opts.context);
        search_file(&mut searcher, &matcher, base, opts, &collected);
        base.parent().unwrap_or(Path::new("/"))
    };
    Ok(collected.into_json(root, pattern, opts.context > 0))
}

fn searcher(context: usize) -> Searcher {
    SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .line_number(true)
        .before_context(context)
        .after_context(context)
        .build()
}

fn walk(base: &Path, matcher: &RegexMatcher, opts: &Opts, collected: &Collected) {
    let mut builder = WalkBuilder::new(base);
    builder.follow_links(false).require_git(false);
    builder.build_parallel().run(|| {
        let mut searcher = searcher(opts.context);
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            let Some(kind) = entry.file_type() else {
                return WalkState::Continue;
            };
            if collected.after_threshold(entry.path()) {
                return WalkState::Skip;
            }
            if !kind.is_file() {
                return WalkState::Continue; // directories go on; links are not followed
            }
            if let Some(include) = &opts.include {
                let rel = entry.path().strip_prefix(base).unwrap_or(entry.path());
                if !include.matches(rel) {
                    return WalkState::Continue;
                }
            }
            search_file(&mut searcher, matcher, entry.path(), opts, collected);
            WalkState::Continue
        })
    });
}

fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    path: &Path,
    opts: &Opts,
    collected: &Collected,
) {
    let mut sink = FileSink {
        matcher,
        context: opts.context,
        cap: opts.max,
        matches: Vec::new(),
        recent: VecDeque::new(),
        more: false,
        binary: false,
    };
    if searcher.search_path(matcher, path, &mut sink).is_err() || sink.binary {
        return;
    }
    if !sink.matches.is_empty() {
        collected.add(path.to_path_buf(), sink.matches);
    }
}

#[derive(Debug)]
struct Match {
    line: u64,
    content: String,
    cut: bool,
    before: Vec<String>,
    after: Vec<String>,
}

/// Collects one file's matches with their context lines.
struct FileSink<'a> {
    matcher: &'a RegexMatcher,
    context: usize,
    cap: usize,
    matches: Vec<Match>,
    /// The last `context` lines seen (line number, capped text).
    recent: VecDeque<(u64, String)>,
    /// More matches than `cap`: stop once the last one's context is done.
    more: bool,
    binary: bool,
}

impl FileSink<'_> {
    /// Records a line seen (context or match) as after-context of earlier
    /// matches and as possible before-context of later ones; false to stop.
    fn saw(&mut self, line: u64, bytes: &[u8]) -> bool {
        if self.context == 0 {
            return !self.more;
        }
        let (text, _) = cap_line(&String::from_utf8_lossy(trim_eol(bytes)), LINE_CHARS);
        for m in self.matches.iter_mut().rev() {
            if m.line + self.context as u64 >= line {
                if m.line < line && m.after.len() < self.context {
                    m.after.push(text.clone());
                }
            } else {
                break;
            }
        }
        if self.more {
            let last = self.matches.last().map_or(0, |m| m.line);
            return line < last + self.context as u64;
        }
        if self.recent.len() == self.context {
            self.recent.pop_front();
        }
        self.recent.push_back((line, text));
        true
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let line = m.line_number().unwrap_or(0);
        if self.matches.len() >= self.cap {
            self.more = true;
            return Ok(self.saw(line, m.bytes()));
        }
        let bytes = trim_eol(m.bytes());
        let at = self
            .matcher
            .find(bytes)
            .ok()
            .flatten()
            .map_or(0, |m| m.start());
        let (content, cut) = excerpt(&String::from_utf8_lossy(bytes), at, LINE_CHARS);
        let lowest = line.saturating_sub(self.context as u64);
        let before = self
            .recent
            .iter()
            .filter(|(n, _)| *n >= lowest && *n < line)
            .map(|(_, t)| t.clone())
            .collect();
        let keep_going = self.saw(line, m.bytes());
        self.matches.push(Match {
            line,
            content,
            cut,
            before,
            after: Vec::new(),
        });
        Ok(keep_going)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        Ok(self.saw(c.line_number().unwrap_or(0), c.bytes()))
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

fn trim_eol(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}

/// The first `cap` matches in path order, shared by the walk's threads.
struct Collected {
    cap: usize,
    inner: Mutex<Held>,
    /// Set once `cap` matches are held.
    full: AtomicBool,
    /// The largest path held once full: later paths cannot make the cut.
    threshold: RwLock<PathBuf>,
}

#[derive(Default)]
struct Held {
    files: BTreeMap<PathBuf, Vec<Match>>,
    total: usize,
}

impl Collected {
    fn new(cap: usize) -> Collected {
        Collected {
            cap,
            inner: Mutex::new(Held::default()),
            full: AtomicBool::new(false),
            threshold: RwLock::new(PathBuf::new()),
        }
    }

    fn after_threshold(&self, path: &Path) -> bool {
        if !self.full.load(Ordering::Acquire) {
            return false;
        }
        *self.threshold.read().unwrap_or_else(|e| e.into_inner()) < *path
    }

    fn add(&self, path: PathBuf, matches: Vec<Match>) {
        let mut held = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        held.total += matches.len();
        held.files.insert(path, matches);
        while held.total > self.cap {
            let excess = held.total - self.cap;
            let Some(mut last) = held.files.last_entry() else {
                break;
            };
            if last.get().len() <= excess {
                held.total -= last.remove().len();
            } else {
                let keep = last.get().len() - excess;
                last.get_mut().truncate(keep);
                held.total = self.cap;
            }
        }
        if held.total == self.cap {
            if let Some(last) = held.files.keys().next_back() {
                *self.threshold.write().unwrap_or_else(|e| e.into_inner()) = last.clone();
                self.full.store(true, Ordering::Release);
            }
        }
    }

    fn into_json(self, root: &Path, pattern: &str, with_context: bool) -> Value {
        let held = self.inner.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::with_capacity(held.total);
        for (path, matches) in held.files {
            let rel = show(path.strip_prefix(root).unwrap_or(&path));
            for m in matches {
                let mut v = json!({"path": rel, "line": m.line, "content": m.content});
                if m.cut {
                    v["truncated"] = json!(true);
                }
                if with_context {
                    v["before"] = json!(m.before);
                    v["after"] = json!(m.after);
                }
                out.push(v);
            }
        }
        // Whether more matches exist past the cap is not known (the search
        // stopped early): a full result counts as truncated.
        let truncated = out.len() >= self.cap;
        let mut result = json!({
            "pattern": pattern,
            "basePath": show(root),
            "count": out.len(),
            "matches": out,
            "truncated": truncated,
        });
        if truncated {
            result["note"] = json!(format!(
                "Stopped at maxMatches ({}); there may be more matches. Narrow the path, \
                 pattern or include, or raise maxMatches.",
                self.cap
            ));
        }
        result
    }
}

#[cfg(test)]
#[path = "grep_tests.rs"]
mod tests;
