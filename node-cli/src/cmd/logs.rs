//! `gsv logs [--node ID] [-n N] [--follow]`: a connected node's log, read
//! through the gateway (`logs.get`). Following asks again every 2 s and
//! prints only the lines it has not printed yet.

use super::GatewayTarget;
use crate::cli::LogsArgs;
use crate::connection::RequestError;
use anyhow::Result;
use gsv_protocol::{codes, method, LogsGetParams};
use std::io::Write;
use std::time::Duration;

/// The gateway gives the node 20 s; a little more for the round trip.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
const POLL_EVERY: Duration = Duration::from_secs(2);
/// Lines asked for on each poll while following: more new lines than this
/// between two polls leaves a gap (said on stderr).
const FOLLOW_WINDOW: u32 = 500;

pub async fn run(target: &GatewayTarget, args: LogsArgs) -> Result<()> {
    let conn = target.connect().await?;
    if args.what.as_deref() == Some("audit") {
        let params = gsv_protocol::AuditListParams {
            session_key: args.session.clone(),
            limit: Some(args.lines.clamp(1, 1000)),
        };
        let r = conn.call::<method::AuditList>(&params).await?;
        print!("{}", super::trust::render_audit(&r));
        return Ok(());
    }
    let params = LogsGetParams {
        node_id: args.node.clone(),
        lines: Some(i64::from(args.lines)),
    };
    let first = conn
        .call_with_timeout::<method::LogsGet>(&params, CALL_TIMEOUT)
        .await?;
    print_lines(&first.lines)?;
    if !args.follow {
        return Ok(());
    }
    // The node answered first is the one followed, even if others connect.
    let params = LogsGetParams {
        node_id: Some(first.node_id.clone()),
        lines: Some(i64::from(FOLLOW_WINDOW)),
    };
    let mut seen = first.lines;
    let mut unavailable = false;
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => return Ok(()),
            _ = tokio::time::sleep(POLL_EVERY) => {}
        }
        match conn
            .call_with_timeout::<method::LogsGet>(&params, CALL_TIMEOUT)
            .await
        {
            Ok(now) => {
                unavailable = false;
                let (fresh, gap) = new_lines(&seen, &now.lines);
                if gap {
                    eprintln!("gsv: more than {FOLLOW_WINDOW} new lines since the last look; some were skipped");
                }
                print_lines(fresh)?;
                seen = now.lines;
            }
            // The node is away for now (restarting, reconnecting): say so
            // once and keep asking.
            Err(RequestError::Gateway(e)) if e.code == codes::UNAVAILABLE => {
                if !unavailable {
                    eprintln!("gsv: {}; still asking", e.message);
                }
                unavailable = true;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

fn print_lines(lines: &[String]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for line in lines {
        if let Err(e) = writeln!(out, "{line}") {
            // `gsv logs | head` closes the pipe: that is the end, not an error.
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return Ok(());
            }
            return Err(e.into());
        }
    }
    out.flush()?;
    Ok(())
}

/// The lines of `now` (the log's last lines) that come after what `seen`
/// (an earlier answer) ended with, and whether they may not join up (no
/// overlap: more lines were written than one answer holds). The overlap
/// is found from the end, so lines that repeat earlier text still count
/// as new.
fn new_lines<'a>(seen: &[String], now: &'a [String]) -> (&'a [String], bool) {
    if seen.is_empty() || now.is_empty() {
        return (now, false);
    }
    for end in (1..=now.len()).rev() {
        let t = end.min(seen.len());
        if now[end - t..end] == seen[seen.len() - t..] {
            return (&now[end..], false);
        }
    }
    (now, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn only_lines_after_the_last_seen_are_new() {
        let seen = lines(&["a", "b", "c"]);
        // Nothing written since.
        assert_eq!(new_lines(&seen, &lines(&["a", "b", "c"])), (&[][..], false));
        // Two lines more; the window moved on.
        assert_eq!(
            new_lines(&seen, &lines(&["c", "d", "e"])),
            (&lines(&["d", "e"])[..], false)
        );
        // A wider window than the first answer: older lines are not new.
        assert_eq!(
            new_lines(&seen, &lines(&["x", "a", "b", "c", "d"])),
            (&lines(&["d"])[..], false)
        );
        // A short log that grew.
        assert_eq!(
            new_lines(&lines(&["a"]), &lines(&["a", "b"])),
            (&lines(&["b"])[..], false)
        );
        // Text that repeats an old line is still new.
        assert_eq!(
            new_lines(&seen, &lines(&["b", "c", "c"])),
            (&lines(&["c"])[..], false)
        );
    }

    #[test]
    fn no_overlap_means_a_gap_and_an_empty_answer_none() {
        let seen = lines(&["a", "b"]);
        assert_eq!(
            new_lines(&seen, &lines(&["x", "y"])),
            (&lines(&["x", "y"])[..], true)
        );
        assert_eq!(new_lines(&[], &lines(&["x"])), (&lines(&["x"])[..], false));
        assert_eq!(new_lines(&seen, &[]), (&[][..], false));
    }
}
