use super::tail::follow_every;
use super::*;
use serde_json::json;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

fn msgs(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["msg"].as_str().unwrap().to_string()
        })
        .collect()
}

fn msg_of(line: &str) -> String {
    let v: Value = serde_json::from_str(line).unwrap();
    v["msg"].as_str().unwrap().to_string()
}

fn names(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("line {i:03}")).collect()
}

#[test]
fn timestamps_are_rfc3339_utc_with_millis() {
    let at = |secs: u64, millis: u64| {
        format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(secs * 1000 + millis))
    };
    assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
    assert_eq!(at(951_786_061, 7), "2000-02-29T01:01:01.007Z");
    assert_eq!(at(1_735_689_599, 999), "2024-12-31T23:59:59.999Z");
    assert_eq!(at(1_771_405_503, 42), "2026-02-18T09:05:03.042Z");
    assert_eq!(at(4_102_444_799, 0), "2099-12-31T23:59:59.000Z");
}

#[test]
fn json_line_puts_fixed_keys_first() {
    let ts = "2026-02-18T09:05:03.042Z";
    assert_eq!(
        json_line(
            ts,
            "info",
            "say \"hi\"",
            &json!({"b": 1, "a": "x", "msg": "dup"})
        ),
        r#"{"ts":"2026-02-18T09:05:03.042Z","level":"info","msg":"say \"hi\"","a":"x","b":1}"#
    );
    assert_eq!(
        json_line(ts, "warn", "m", &Value::Null),
        r#"{"ts":"2026-02-18T09:05:03.042Z","level":"warn","msg":"m"}"#
    );
    assert_eq!(
        json_line(ts, "error", "m", &json!([1, 2])),
        r#"{"ts":"2026-02-18T09:05:03.042Z","level":"error","msg":"m","fields":[1,2]}"#
    );
}

#[test]
fn human_line_for_stderr() {
    assert_eq!(
        human_line(
            "T",
            "info",
            "connected",
            &json!({"id": "n1", "url": "ws://h x", "n": 3})
        ),
        r#"T info  connected id=n1 n=3 url="ws://h x""#
    );
    assert_eq!(
        human_line("T", "error", "boom", &Value::Null),
        "T error boom"
    );
}

#[test]
fn limits_from_env_values() {
    assert_eq!(
        parse_limits(None, None),
        ((DEFAULT_MAX_BYTES, DEFAULT_MAX_FILES), vec![])
    );
    assert_eq!(parse_limits(Some("2048"), Some(" 3 ")), ((2048, 3), vec![]));
    let ((bytes, files), problems) = parse_limits(Some("10MB"), Some("0"));
    assert_eq!((bytes, files), (DEFAULT_MAX_BYTES, DEFAULT_MAX_FILES));
    assert_eq!(problems.len(), 2);
}

/// Writes `count` entries whose lines are all the same length; returns it.
fn write_lines(log: &NodeLog, range: std::ops::Range<usize>) -> u64 {
    for i in range {
        log.info(&format!("line {i:03}"), Value::Null);
    }
    json_line("2026-02-18T09:05:03.042Z", "info", "line 000", &Value::Null).len() as u64 + 1
}

#[test]
fn rotation_shifts_files_and_drops_the_oldest() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("logs/node.log");
    let line_len =
        json_line("2026-02-18T09:05:03.042Z", "info", "line 000", &Value::Null).len() as u64 + 1;
    // Three lines a file.
    let log = NodeLog::open(&path, line_len * 3 + 10, 3).unwrap();
    write_lines(&log, 0..20);
    // 20 lines: files of 3, newest has 20 % 3 = 2 → node.log 18–19, .1 15–17, .2 12–14.
    assert_eq!(msgs(&path), names(18..20));
    assert_eq!(msgs(&rotated_path(&path, 1)), names(15..18));
    assert_eq!(msgs(&rotated_path(&path, 2)), names(12..15));
    assert!(!rotated_path(&path, 3).exists());
    for n in 0..3 {
        assert!(std::fs::metadata(rotated_path(&path, n)).unwrap().len() <= line_len * 3 + 10);
    }
}

#[test]
fn one_file_means_no_rotated_copies() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.log");
    let log = NodeLog::open(&path, 200, 1).unwrap();
    let line_len = write_lines(&log, 0..10);
    let per_file = (200 / line_len) as usize;
    let in_newest = 9 % per_file + 1;
    assert_eq!(msgs(&path), names(10 - in_newest..10));
    assert!(!rotated_path(&path, 1).exists());
}

#[test]
fn reopening_continues_the_size_count() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.log");
    let line_len = write_lines(&NodeLog::open(&path, 1000, 2).unwrap(), 0..2);
    let log = NodeLog::open(&path, line_len * 3, 2).unwrap();
    write_lines(&log, 2..4);
    assert_eq!(msgs(&path), names(3..4));
    assert_eq!(msgs(&rotated_path(&path, 1)), names(0..3));
}

#[test]
fn tail_reads_across_rotated_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.log");
    let line_len =
        json_line("2026-02-18T09:05:03.042Z", "info", "line 000", &Value::Null).len() as u64 + 1;
    let log = NodeLog::open(&path, line_len * 3, 4).unwrap();
    write_lines(&log, 0..20);
    // Kept: node.log 18–19, .1 15–17, .2 12–14, .3 9–11.
    let tail = |n| {
        tail_lines(&path, n)
            .unwrap()
            .iter()
            .map(|l| msg_of(l))
            .collect::<Vec<_>>()
    };
    assert_eq!(tail(1), names(19..20));
    assert_eq!(tail(0), names(19..20), "n is clamped to at least 1");
    assert_eq!(tail(5), names(15..20));
    assert_eq!(tail(7), names(13..20));
    assert_eq!(tail(100), names(9..20));
    assert!(tail_lines(&dir.path().join("missing.log"), 10)
        .unwrap()
        .is_empty());
}

#[test]
fn tail_window_says_whether_older_lines_exist() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.log");
    let line_len =
        json_line("2026-02-18T09:05:03.042Z", "info", "line 000", &Value::Null).len() as u64 + 1;
    let log = NodeLog::open(&path, line_len * 3, 4).unwrap();
    write_lines(&log, 0..20);
    // Kept: lines 9–19, across node.log and three rotated files.
    let window = |n| {
        let (lines, more) = tail_window(&path, n).unwrap();
        (lines.iter().map(|l| msg_of(l)).collect::<Vec<_>>(), more)
    };
    assert_eq!(window(2), (names(18..20), true));
    assert_eq!(window(10), (names(10..20), true));
    assert_eq!(window(11), (names(9..20), false));
    assert_eq!(window(5000), (names(9..20), false));
    assert_eq!(
        tail_window(&dir.path().join("missing.log"), 10).unwrap(),
        (vec![], false)
    );
}

#[test]
fn tail_reads_backwards_over_block_boundaries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.log");
    let text: String = (0..20_000)
        .map(|i| format!("row {i:05} {}\n", "x".repeat(i % 50)))
        .collect();
    assert!(text.len() as u64 > 4 * BLOCK_FOR_TESTS);
    std::fs::write(&path, &text).unwrap();
    let all: Vec<&str> = text.lines().collect();
    assert_eq!(tail_lines(&path, 3000).unwrap(), all[17_000..]);
    assert_eq!(
        tail_lines(&path, 9999).unwrap().len(),
        5000,
        "n is clamped to 5000"
    );
    // No final newline: the last line still counts.
    std::fs::write(&path, "a\nb\nc").unwrap();
    assert_eq!(tail_lines(&path, 2).unwrap(), ["b", "c"]);
    assert_eq!(tail_lines(&path, 10).unwrap(), ["a", "b", "c"]);
}

const BLOCK_FOR_TESTS: u64 = 64 * 1024;

#[cfg(unix)]
#[test]
fn log_files_are_0600_in_a_0700_dir() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fresh/node.log");
    let log = NodeLog::open(&path, 150, 3).unwrap();
    write_lines(&log, 0..5);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&rotated_path(&path, 1)), 0o600);

    let loose = dir.path().join("loose.log");
    std::fs::write(&loose, "").unwrap();
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o644)).unwrap();
    NodeLog::open(&loose, 100, 2).unwrap();
    assert_eq!(mode(&loose), 0o600);
}

#[test]
fn clones_share_the_file_across_threads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.log");
    let log = NodeLog::open(&path, 1 << 20, 2).unwrap();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let log = log.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    log.warn("hello", json!({"t": t, "i": i}));
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    assert_eq!(msgs(&path).len(), 200);
}

const WAIT: Duration = Duration::from_secs(5);

async fn next_msg<R: tokio::io::AsyncBufRead + Unpin>(lines: &mut tokio::io::Lines<R>) -> String {
    let line = tokio::time::timeout(WAIT, lines.next_line())
        .await
        .expect("follow printed nothing in time")
        .unwrap()
        .expect("follow stopped");
    msg_of(&line)
}

async fn next_msgs<R: tokio::io::AsyncBufRead + Unpin>(
    lines: &mut tokio::io::Lines<R>,
    n: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(next_msg(lines).await);
    }
    out
}

#[tokio::test]
async fn follow_prints_the_tail_then_new_lines_through_rotations() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.log");
    let line_len =
        json_line("2026-02-18T09:05:03.042Z", "info", "line 000", &Value::Null).len() as u64 + 1;
    let log = NodeLog::open(&path, line_len * 4, 3).unwrap();
    write_lines(&log, 0..6); // node.log 4–5, .1 0–3

    let (writer, reader) = tokio::io::duplex(1 << 16);
    let follow_path = path.clone();
    let task = tokio::spawn(async move {
        follow_every(&follow_path, 3, writer, Duration::from_millis(10)).await
    });
    let mut lines = BufReader::new(reader).lines();
    assert_eq!(next_msgs(&mut lines, 3).await, names(3..6));

    write_lines(&log, 6..8); // fills node.log to 4 lines
    assert_eq!(next_msgs(&mut lines, 2).await, names(6..8));

    // Rotations: 8–11 go to a new file, 12–13 to the next; none may be lost.
    write_lines(&log, 8..14);
    assert_eq!(next_msgs(&mut lines, 6).await, names(8..14));
    assert!(rotated_path(&path, 2).exists());

    // node.log holds 12–13; 14–15 fill it, 16 rotates once.
    write_lines(&log, 14..17);
    assert_eq!(next_msgs(&mut lines, 3).await, names(14..17));
    task.abort();
}

#[tokio::test]
async fn follow_handles_truncation_and_a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("node.log");
    let (writer, reader) = tokio::io::duplex(1 << 16);
    let follow_path = path.clone();
    let task = tokio::spawn(async move {
        follow_every(&follow_path, 10, writer, Duration::from_millis(10)).await
    });
    let mut lines = BufReader::new(reader).lines();

    tokio::time::sleep(Duration::from_millis(30)).await;
    let log = NodeLog::open(&path, 1 << 20, 2).unwrap();
    write_lines(&log, 0..2);
    assert_eq!(next_msgs(&mut lines, 2).await, names(0..2));

    // Someone empties the file in place (e.g. `: > node.log`).
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    tokio::time::sleep(Duration::from_millis(30)).await;
    std::fs::write(&path, "{\"msg\":\"after\"}\n").unwrap();
    assert_eq!(next_msg(&mut lines).await, "after");
    task.abort();
}
