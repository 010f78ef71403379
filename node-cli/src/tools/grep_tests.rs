use std::fs;

use serde_json::json;

use super::*;
use crate::tools::tests::{toolbox, touch};
use crate::tools::Toolbox;

async fn grep(tb: &Toolbox, args: Value) -> Value {
    tb.call("Grep", args, None).await.unwrap()
}

fn locations(out: &Value) -> Vec<String> {
    out["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| format!("{}:{}", m["path"].as_str().unwrap(), m["line"]))
        .collect()
}

#[tokio::test]
async fn respects_gitignore_and_skips_hidden_binary_and_links() {
    let (dir, tb, _rx) = toolbox();
    let ws = tb.workspace().to_path_buf();
    touch(&ws.join(".gitignore"), "ignored/\n*.tmp\n", 0);
    touch(&ws.join("src/a.rs"), "fn main() {}\nlet needle = 1;\n", 0);
    touch(
        &ws.join("src/b.txt"),
        "Needle here\nnothing\nneedle again",
        0,
    );
    touch(&ws.join("ignored/c.rs"), "needle\n", 0);
    touch(&ws.join("x.tmp"), "needle\n", 0);
    touch(&ws.join(".hidden/d"), "needle\n", 0);
    touch(&ws.join("bin.dat"), "needle\n\0binary\n", 0);
    let outside = fs::canonicalize(dir.path()).unwrap().join("outside");
    touch(&outside.join("e.txt"), "needle\n", 0);
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    std::os::unix::fs::symlink(outside.join("e.txt"), ws.join("link.txt")).unwrap();

    let out = grep(&tb, json!({"pattern": "needle"})).await;
    assert_eq!(
        out,
        json!({
            "pattern": "needle",
            "basePath": show(&ws),
            "count": 2,
            "matches": [
                {"path": "src/a.rs", "line": 2, "content": "let needle = 1;"},
                {"path": "src/b.txt", "line": 3, "content": "needle again"}
            ],
            "truncated": false
        })
    );
    let out = grep(&tb, json!({"pattern": "needle", "ignoreCase": true})).await;
    assert_eq!(
        locations(&out),
        ["src/a.rs:2", "src/b.txt:1", "src/b.txt:3"]
    );
    let out = grep(&tb, json!({"pattern": "needle", "include": "*.rs"})).await;
    assert_eq!(locations(&out), ["src/a.rs:2"]);
    let out = grep(&tb, json!({"pattern": "needle", "include": "src/*.txt"})).await;
    assert_eq!(locations(&out), ["src/b.txt:3"]);
    let out = grep(&tb, json!({"pattern": "needle", "path": "src/b.txt"})).await;
    assert_eq!(locations(&out), ["b.txt:3"]);
    assert_eq!(out["basePath"], show(&ws.join("src")));
    let err = tb
        .call("Grep", json!({"pattern": "needle", "path": "link"}), None)
        .await
        .unwrap_err();
    assert!(err.contains("outside the node workspace"), "{err}");
}

#[tokio::test]
async fn context_lines() {
    let (_dir, tb, _rx) = toolbox();
    let text: String = (1..=10).map(|i| format!("l{i}\n")).collect();
    touch(&tb.workspace().join("f.txt"), &text, 0);
    let out = grep(&tb, json!({"pattern": "^l(3|5|10)$", "context": 2})).await;
    assert_eq!(
        out["matches"],
        json!([
            {"path": "f.txt", "line": 3, "content": "l3", "before": ["l1", "l2"], "after": ["l4", "l5"]},
            {"path": "f.txt", "line": 5, "content": "l5", "before": ["l3", "l4"], "after": ["l6", "l7"]},
            {"path": "f.txt", "line": 10, "content": "l10", "before": ["l8", "l9"], "after": []}
        ])
    );
}

#[tokio::test]
async fn caps_are_deterministic() {
    let (_dir, tb, _rx) = toolbox();
    let ws = tb.workspace().to_path_buf();
    for d in 0..4 {
        for f in 0..6 {
            touch(
                &ws.join(format!("d{d}/f{f}.txt")),
                "hit\nhit\nmiss\nhit\n",
                0,
            );
        }
    }
    let first = grep(&tb, json!({"pattern": "hit", "maxMatches": 7})).await;
    assert_eq!(
        locations(&first),
        [
            "d0/f0.txt:1",
            "d0/f0.txt:2",
            "d0/f0.txt:4",
            "d0/f1.txt:1",
            "d0/f1.txt:2",
            "d0/f1.txt:4",
            "d0/f2.txt:1"
        ]
    );
    assert_eq!(first["truncated"], true);
    assert_eq!(
        first["note"],
        "Stopped at maxMatches (7); there may be more matches. Narrow the path, pattern or \
         include, or raise maxMatches."
    );
    for _ in 0..10 {
        assert_eq!(
            grep(&tb, json!({"pattern": "hit", "maxMatches": 7})).await,
            first
        );
    }
    // A cap inside one file keeps that file's after-context.
    let out = grep(
        &tb,
        json!({"pattern": "hit", "maxMatches": 2, "path": "d3/f5.txt", "context": 1}),
    )
    .await;
    assert_eq!(
        out["matches"][1],
        json!({"path": "f5.txt", "line": 2, "content": "hit", "before": ["hit"], "after": ["miss"]})
    );
    let all = grep(&tb, json!({"pattern": "hit", "maxMatches": 5000})).await;
    assert_eq!(
        (all["count"].clone(), all["truncated"].clone()),
        (json!(72), json!(false))
    );
}

#[tokio::test]
async fn long_lines_are_cut_around_the_match() {
    let (_dir, tb, _rx) = toolbox();
    let line = format!("{}needle{}", "é".repeat(1000), "b".repeat(1000));
    touch(&tb.workspace().join("min.js"), &line, 0);
    let out = grep(&tb, json!({"pattern": "needle"})).await;
    let m = &out["matches"][0];
    assert_eq!(m["truncated"], true);
    assert_eq!(
        m["content"],
        format!("…{}needle{}…", "é".repeat(40), "b".repeat(154))
    );
}

/// Timing against a real tree: `GSV_GREP_BENCH=dir GSV_GREP_PATTERN=re
/// cargo test --release -p gsv grep_bench -- --ignored --nocapture`.
#[test]
#[ignore]
fn grep_bench() {
    let dir = std::path::PathBuf::from(std::env::var("GSV_GREP_BENCH").unwrap());
    let pattern = std::env::var("GSV_GREP_PATTERN").unwrap_or_else(|_| "RAREtoken".into());
    let max = std::env::var("GSV_GREP_MAX").map_or(100, |m| m.parse().unwrap());
    let opts = Opts {
        ignore_case: false,
        context: 0,
        max,
        include: None,
    };
    let cpu = || {
        // SAFETY: getrusage fills the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        secs(u.ru_utime) + secs(u.ru_stime)
    };
    for _ in 0..5 {
        let (started, cpu0) = (std::time::Instant::now(), cpu());
        let out = super::grep(&dir, &pattern, &opts).unwrap();
        eprintln!(
            "{:?} cpu {:.2}s count={} truncated={}",
            started.elapsed(),
            cpu() - cpu0,
            out["count"],
            out["truncated"]
        );
    }
}
