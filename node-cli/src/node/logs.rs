//! `logs.get`: the gateway asks for the end of this node's own log (the
//! JSONL file `NodeLog` writes, rotated files included); the node answers
//! `logs.result` with the last lines, oldest first, or with why it could
//! not read them.

use crate::connection::Connection;
use crate::logs::{tail_window, NodeLog};
use gsv_protocol::{method, LogsGetEvent, LogsResultParams, MAX_FRAME_BYTES};
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// How long the answer's delivery may take (the gateway waits 20 s in all).
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(15);
/// Room in a frame for everything but the lines.
const FRAME_OVERHEAD: usize = 4096;

/// Answers one `logs.get` on `conn`; runs in a task of its own.
pub async fn run(conn: &Connection, evt: LogsGetEvent, log: &NodeLog) {
    let path = log.path().to_path_buf();
    let n = evt.lines as usize;
    let read = tokio::task::spawn_blocking(move || read(path, n)).await;
    let answer = match read {
        Ok(answer) => answer,
        Err(e) => Err(format!("reading the log failed: {e}")),
    };
    let params = result_params(evt.call_id.clone(), answer);
    log.info(
        "logs.get",
        json!({"callId": evt.call_id, "lines": evt.lines,
               "sent": params.lines.as_ref().map(Vec::len), "error": params.error}),
    );
    if let Err(e) = conn
        .call_with_timeout::<method::LogsResult>(&params, DELIVERY_TIMEOUT)
        .await
    {
        log.warn(
            "logs.result not delivered",
            json!({"callId": evt.call_id, "error": e.to_string()}),
        );
    }
}

fn read(path: PathBuf, n: usize) -> Result<(Vec<String>, bool), String> {
    tail_window(&path, n).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The `logs.result` for what was read, kept within one frame.
pub fn result_params(
    call_id: String,
    read: Result<(Vec<String>, bool), String>,
) -> LogsResultParams {
    match read {
        Ok((lines, more)) => {
            let (lines, cut) = fit(lines, MAX_FRAME_BYTES - FRAME_OVERHEAD);
            LogsResultParams {
                call_id,
                lines: Some(lines),
                truncated: Some(more || cut),
                error: None,
            }
        }
        Err(error) => LogsResultParams {
            call_id,
            lines: None,
            truncated: None,
            error: Some(error),
        },
    }
}

/// The newest of `lines` whose JSON encoding fits in `budget` bytes, and
/// whether older ones were left out for it.
fn fit(mut lines: Vec<String>, budget: usize) -> (Vec<String>, bool) {
    let mut used = 0;
    let mut keep = 0;
    for line in lines.iter().rev() {
        // The string as JSON, quotes and escapes included, and a comma.
        let size = serde_json::to_string(line).map_or(line.len() * 6, |s| s.len()) + 1;
        if used + size > budget {
            break;
        }
        used += size;
        keep += 1;
    }
    let cut = lines.len() - keep;
    lines.drain(..cut);
    (lines, cut > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn answers_carry_the_lines_or_the_error() {
        assert_eq!(
            result_params("c1".into(), Ok((strings(&["{\"a\":1}", "{}"]), true))),
            LogsResultParams {
                call_id: "c1".into(),
                lines: Some(strings(&["{\"a\":1}", "{}"])),
                truncated: Some(true),
                error: None,
            }
        );
        assert_eq!(
            result_params("c2".into(), Ok((vec![], false))),
            LogsResultParams {
                call_id: "c2".into(),
                lines: Some(vec![]),
                truncated: Some(false),
                error: None,
            }
        );
        assert_eq!(
            result_params("c3".into(), Err("cannot read /x: denied".into())),
            LogsResultParams {
                call_id: "c3".into(),
                lines: None,
                truncated: None,
                error: Some("cannot read /x: denied".into()),
            }
        );
    }

    #[test]
    fn the_newest_lines_that_fit_a_frame_are_kept() {
        // "{\"k\":1}" encodes as 11 bytes, plus a comma.
        let lines = strings(&["{\"k\":1}", "{\"k\":2}", "{\"k\":3}"]);
        assert_eq!(fit(lines.clone(), 36), (lines.clone(), false));
        assert_eq!(
            fit(lines.clone(), 35),
            (strings(&["{\"k\":2}", "{\"k\":3}"]), true)
        );
        assert_eq!(fit(lines, 5), (vec![], true));
        // A log of 5000 long lines still fits one frame.
        let long = vec!["x".repeat(400); 5000];
        let params = result_params("c".into(), Ok((long, false)));
        let frame = serde_json::to_string(&params).unwrap();
        assert!(frame.len() < MAX_FRAME_BYTES - 1000, "{}", frame.len());
        assert_eq!(params.truncated, Some(true));
    }
}
