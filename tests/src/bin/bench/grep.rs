//! The node's Grep against `rg` on one generated tree of files.

use super::{ms, percentile, procs, round2, TOKEN, WAIT_FOR_NODES};
use gsv_e2e::harness::{Node, Workerd};
use gsv_e2e::ws::Client;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// The node's Grep against `rg` on one generated tree, alternating, warm
/// cache. Grep is timed through the agent's path (`tool.invoke` → gateway →
/// node → gateway), and inside the node: its log's `tool call` entry (the
/// tool's own time, whole milliseconds) and the node process's CPU time.
/// `rg`'s CPU time comes from `getrusage`: on a shared machine CPU time
/// moves less than wall time when other work runs.
pub async fn grep_vs_rg(gw: &Workerd, files: usize, runs: usize) -> Value {
    let started = Instant::now();
    let tree = grep_tree::ensure(files);
    eprintln!(
        "[bench] grep tree: {} ({}, {:.1} s)",
        tree.dir.display(),
        if tree.generated {
            "generated"
        } else {
            "reused"
        },
        started.elapsed().as_secs_f64()
    );
    let rg = Command::new("rg")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success());
    let mut out = json!({
        "tree": tree.summary(),
        "pattern": grep_tree::PATTERN,
        "runs": runs,
    });
    let node = Node::start_in(&gw.url(), TOKEN, "tree", &tree.dir, &[]);
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.wait_for_tools(&["tree__Grep"], WAIT_FOR_NODES).await;

    // Warm-up (and the page cache): one of each.
    let warm = grep_once(&mut c, &node).await;
    out["matches"] = json!({"expected": tree.expected_matches, "grep": warm.matches});
    let rg_version = match &rg {
        Some(rg) => {
            let warm_rg = rg_once(&tree.dir);
            out["matches"]["rg"] = json!(warm_rg.matches);
            out["sameMatches"] =
                json!(warm.matches == warm_rg.matches && warm_rg.matches == tree.expected_matches);
            String::from_utf8_lossy(&rg.stdout)
                .lines()
                .next()
                .unwrap_or_default()
                .to_string()
        }
        None => {
            out["sameMatches"] = json!(warm.matches == tree.expected_matches);
            out["rg"] = json!(
                "rg not found: install ripgrep (e.g. apt-get install -y ripgrep) to compare; \
                 Grep alone was timed"
            );
            String::new()
        }
    };
    eprintln!("[bench] grep vs rg: {runs} runs each, alternating");
    let (mut rgs, mut greps) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        if rg.is_some() {
            rgs.push(rg_once(&tree.dir));
        }
        greps.push(grep_once(&mut c, &node).await);
    }
    let series = |f: &dyn Fn(&Timed) -> Option<f64>, of: &[Timed]| -> Vec<f64> {
        of.iter().filter_map(f).collect()
    };
    let via = series(&|t| Some(t.wall_ms), &greps);
    let inside = series(&|t| t.tool_ms, &greps);
    let grep_cpu = series(&|t| t.cpu_ms, &greps);
    out["grepViaGatewayMs"] = runs_json(&via);
    out["grepInNodeMs"] = runs_json(&inside);
    out["grepNodeCpuMs"] = runs_json(&grep_cpu);
    if rg.is_none() {
        return out;
    }
    let rg_wall = series(&|t| Some(t.wall_ms), &rgs);
    let rg_cpu = series(&|t| t.cpu_ms, &rgs);
    out["rg"] = json!({
        "version": rg_version,
        "command": format!("rg {}", grep_tree::rg_args().join(" ")),
    });
    out["rgMs"] = runs_json(&rg_wall);
    out["rgCpuMs"] = runs_json(&rg_cpu);
    let rg_median = median(&rg_wall);
    out["ratioViaGatewayToRg"] = json!(round2(median(&via) / rg_median));
    if !inside.is_empty() {
        out["ratioInNodeToRg"] = json!(round2(median(&inside) / rg_median));
    }
    if !grep_cpu.is_empty() && !rg_cpu.is_empty() {
        out["ratioCpuToRg"] = json!(round2(median(&grep_cpu) / median(&rg_cpu)));
    }
    out
}

/// One timed search.
struct Timed {
    matches: usize,
    wall_ms: f64,
    /// Grep: the node's own figure for the call (its log).
    tool_ms: Option<f64>,
    /// User + system CPU time of the process that searched.
    cpu_ms: Option<f64>,
}

/// One Grep through the gateway.
async fn grep_once(c: &mut Client, node: &Node) -> Timed {
    let logged = node_grep_times(node).len();
    let cpu_before = node.pid().and_then(procs::process_cpu_ms);
    let t = Instant::now();
    let res = c
        .request(
            "tool.invoke",
            json!({"tool": "tree__Grep", "args": {"pattern": grep_tree::PATTERN}}),
        )
        .await;
    let wall_ms = ms(t.elapsed());
    let cpu_after = node.pid().and_then(procs::process_cpu_ms);
    assert!(res.ok, "Grep failed: {res:?}");
    let result = &res.payload.unwrap()["result"];
    assert_eq!(result["truncated"], false, "{result}");
    let matches = result["count"].as_u64().unwrap() as usize;
    // The node logs the call just before it sends the result.
    let mut tool_ms = None;
    for _ in 0..100 {
        let times = node_grep_times(node);
        if times.len() > logged {
            tool_ms = times.last().copied();
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Timed {
        matches,
        wall_ms,
        tool_ms,
        cpu_ms: cpu_before.zip(cpu_after).map(|(b, a)| a - b),
    }
}

/// CPU time of the children waited for so far.
fn children_cpu_ms() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 * 1000.0 + tv.tv_usec as f64 / 1000.0;
    t(usage.ru_utime) + t(usage.ru_stime)
}

/// The `ms` of every Grep call in the node's log.
fn node_grep_times(node: &Node) -> Vec<f64> {
    node.log()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["msg"] == "tool call" && e["tool"] == "Grep")
        .filter_map(|e| e["ms"].as_f64())
        .collect()
}

/// One `rg` over the tree, its output read through a pipe (rg may stop at
/// the first match when it writes to /dev/null).
fn rg_once(dir: &Path) -> Timed {
    let cpu_before = children_cpu_ms();
    let t = Instant::now();
    let out = Command::new("rg")
        .args(grep_tree::rg_args())
        .current_dir(dir)
        .output()
        .expect("run rg");
    let wall_ms = ms(t.elapsed());
    let cpu_ms = children_cpu_ms() - cpu_before;
    assert!(
        out.status.success(),
        "rg failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let matches = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    Timed {
        matches,
        wall_ms,
        tool_ms: None,
        cpu_ms: Some(cpu_ms),
    }
}

fn median(samples: &[f64]) -> f64 {
    percentile(samples, 50.0)
}

fn runs_json(samples: &[f64]) -> Value {
    if samples.is_empty() {
        return Value::Null;
    }
    json!({
        "median": round2(median(samples)),
        "min": round2(percentile(samples, 0.0)),
        "max": round2(percentile(samples, 100.0)),
        "all": samples.iter().map(|s| round2(*s)).collect::<Vec<_>>(),
    })
}

/// The tree Grep and `rg` search: generated deterministically once per size
/// and kept under the target directory (`bench-grep-tree/`), so reruns
/// reuse it (and the page cache).
mod grep_tree {
    use gsv_e2e::harness::repo_root;
    use serde_json::{json, Value};
    use std::path::{Path, PathBuf};

    /// Matches one line in a handful of files: both tools walk the whole
    /// tree, and Grep's 100-match cap never cuts it short.
    pub const PATTERN: &str = "needle_[0-9]+_marker";
    /// Bump when the layout or contents change.
    const VERSION: u32 = 1;
    /// Searched text files that hold the needle.
    const NEEDLE_FILES: usize = 24;

    /// `rg` with Grep's semantics: .gitignore respected without a git
    /// repository (Grep's `require_git(false)`), hidden and binary files
    /// skipped (both tools' defaults), line numbers, no config file.
    pub fn rg_args() -> Vec<&'static str> {
        vec!["--no-config", "--no-require-git", "--line-number", PATTERN]
    }

    pub struct Tree {
        pub dir: PathBuf,
        pub generated: bool,
        pub expected_matches: usize,
        summary: Value,
    }

    impl Tree {
        pub fn summary(&self) -> Value {
            let mut s = self.summary.clone();
            s["dir"] = json!(self.dir.display().to_string());
            s
        }
    }

    fn target_dir() -> PathBuf {
        std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_root().join("target"))
    }

    /// The tree of `files` files, generated unless a complete one exists.
    pub fn ensure(files: usize) -> Tree {
        let root = target_dir().join("bench-grep-tree");
        let dir = root.join(format!("v{VERSION}-{files}"));
        let stamp = root.join(format!("v{VERSION}-{files}.json"));
        let done: Option<Value> = std::fs::read_to_string(&stamp)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let (summary, generated) = match done {
            Some(summary) if dir.is_dir() => (summary, false),
            _ => {
                eprintln!("[bench] generating {files} files in {}", dir.display());
                let _ = std::fs::remove_dir_all(&dir);
                let summary = generate(&dir, files);
                std::fs::write(&stamp, summary.to_string()).unwrap();
                (summary, true)
            }
        };
        Tree {
            dir,
            generated,
            expected_matches: summary["expectedMatches"].as_u64().unwrap() as usize,
            summary,
        }
    }

    /// xorshift64*: deterministic across runs and platforms.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    const WORDS: &[&str] = &[
        "let", "fn", "struct", "impl", "return", "match", "value", "config", "session", "node",
        "gateway", "request", "response", "error", "result", "string", "buffer", "index", "count",
        "length", "path", "file", "line", "token", "stream", "message", "event", "handler",
        "client", "server", "state", "update", "create", "delete", "parse", "render", "format",
        "async", "await", "option", "vector", "map", "filter", "into", "from", "self", "the", "a",
        "of", "to", "and", "is", "in", "for", "with", "on", "timeout", "retry", "backoff",
        "worker", "durable", "object", "storage", "query",
    ];
    const EXTENSIONS: &[&str] = &["rs", "ts", "py", "md", "txt", "json", "go", "toml"];

    /// Lines of words, `size` bytes give or take a line.
    fn text(rng: &mut Rng, size: usize) -> String {
        let mut out = String::with_capacity(size + 100);
        while out.len() < size {
            let indent = rng.below(4) * 4;
            out.extend(std::iter::repeat_n(' ', indent));
            let width = 30 + rng.below(70);
            let start = out.len();
            while out.len() - start < width {
                out.push_str(WORDS[rng.below(WORDS.len())]);
                out.push(if rng.below(8) == 0 { '(' } else { ' ' });
            }
            out.push('\n');
        }
        out
    }

    fn write(path: &Path, bytes: &[u8]) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, bytes).unwrap();
    }

    /// A file of searched text holding `needle` (if any) on one line.
    fn text_file(rng: &mut Rng, needle: Option<usize>) -> Vec<u8> {
        let size = 1024 + rng.below(3072);
        let mut body = text(rng, size);
        if let Some(k) = needle {
            let at = body[..body.len() / 2].rfind('\n').map_or(0, |i| i + 1);
            body.insert_str(at, &format!("    let needle_{k}_marker = lookup(index);\n"));
        }
        body.into_bytes()
    }

    /// Layout, for `files` files in all:
    /// - `src/pkgNN/modN/partN/`: searched text files, 50 per directory,
    ///   1–4 KB of code-like lines; `NEEDLE_FILES` of them hold the needle;
    /// - `vendor/` (10 %): excluded by the root `.gitignore`;
    /// - `.cache/` (1 %): hidden;
    /// - 100 binary files (a NUL byte early) among the sources;
    /// - the needle is also in every ignored, hidden and binary file, so a
    ///   tool that searched them would report more matches.
    fn generate(dir: &Path, files: usize) -> Value {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let ignored = files / 10;
        let hidden = files / 100;
        let binary = 100.min(files / 100);
        let searched = files - ignored - hidden - binary - 1; // - .gitignore
        let mut bytes = 0u64;
        write(
            &dir.join(".gitignore"),
            b"# generated by the bench\n/vendor/\n*.log\n",
        );
        let every = (searched / NEEDLE_FILES).max(1);
        let mut needles = 0;
        for k in 0..searched {
            let leaf = k / 50;
            let ext = EXTENSIONS[k % EXTENSIONS.len()];
            let path = dir.join(format!(
                "src/pkg{:02}/mod{}/part{}/file{k}.{ext}",
                leaf / 100,
                (leaf / 10) % 10,
                leaf % 10
            ));
            let needle = (k % every == every / 2 && needles < NEEDLE_FILES).then(|| {
                needles += 1;
                k
            });
            let body = text_file(&mut rng, needle);
            bytes += body.len() as u64;
            write(&path, &body);
        }
        for k in 0..ignored {
            let body = text_file(&mut rng, (k % 100 == 0).then_some(k));
            bytes += body.len() as u64;
            write(
                &dir.join(format!("vendor/lib{:02}/src/file{k}.rs", k / 500)),
                &body,
            );
        }
        for k in 0..hidden {
            let body = text_file(&mut rng, (k % 50 == 0).then_some(k));
            bytes += body.len() as u64;
            write(
                &dir.join(format!(".cache/d{:02}/entry{k}.txt", k / 100)),
                &body,
            );
        }
        for k in 0..binary {
            let mut body: Vec<u8> = (0..2048 + rng.below(6144))
                .map(|_| (rng.next() >> 56) as u8)
                .collect();
            body[16] = 0;
            let needle = format!("needle_{k}_marker\n");
            body[64..64 + needle.len()].copy_from_slice(needle.as_bytes());
            bytes += body.len() as u64;
            let leaf = (k * 37) % (searched / 50).max(1);
            write(
                &dir.join(format!(
                    "src/pkg{:02}/mod{}/part{}/blob{k}.bin",
                    leaf / 100,
                    (leaf / 10) % 10,
                    leaf % 10
                )),
                &body,
            );
        }
        json!({
            "files": files,
            "searchedTextFiles": searched,
            "ignoredFiles": ignored,
            "hiddenFiles": hidden,
            "binaryFiles": binary,
            "bytes": bytes,
            "expectedMatches": needles,
        })
    }
}
