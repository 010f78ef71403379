//! Node logs, the decisions: how many lines, which node, what a node's
//! `logs.result` becomes, and the errors of calls that end without one.
//! The Gateway DO (`worker::gateway_do::logs`) keeps the calls in SQLite
//! and sends the frames; `logs.get` from a client and `gsv__LogsGet` from
//! a session share all of this.

use gsv_protocol::{codes, ErrorShape, LogsGetResult, LogsResultParams};
use gsv_protocol::{DEFAULT_LOG_LINES, MAX_LOG_LINES};

/// A node gets this long to answer (v1's internal default).
pub const LOGS_TIMEOUT_MS: i64 = 20_000;

/// `lines` as asked: default 100, refused outside 1–5000.
pub fn line_count(asked: Option<i64>) -> Result<u32, ErrorShape> {
    match asked {
        None => Ok(DEFAULT_LOG_LINES),
        Some(n) if (1..=i64::from(MAX_LOG_LINES)).contains(&n) => Ok(n as u32),
        Some(n) => Err(ErrorShape::new(
            codes::BAD_REQUEST,
            format!("lines must be between 1 and {MAX_LOG_LINES}, not {n}"),
        )),
    }
}

/// The node a call goes to: the one named, which must be connected, or
/// the only one connected. `connected` is sorted.
pub fn pick_node(asked: Option<&str>, connected: &[String]) -> Result<String, ErrorShape> {
    let asked = asked.map(str::trim).filter(|s| !s.is_empty());
    match (asked, connected) {
        (Some(id), _) if connected.iter().any(|c| c == id) => Ok(id.to_string()),
        (Some(id), []) => Err(unavailable(format!(
            "Node {id} is not connected (no node is)"
        ))),
        (Some(id), _) => Err(unavailable(format!(
            "Node {id} is not connected; connected: {}",
            connected.join(", ")
        ))),
        (None, []) => Err(unavailable(
            "No node is connected: start one with `gsv node`".to_string(),
        )),
        (None, [only]) => Ok(only.clone()),
        (None, several) => Err(ErrorShape::new(
            codes::BAD_REQUEST,
            format!(
                "nodeId is required: {} nodes are connected ({})",
                several.len(),
                several.join(", ")
            ),
        )),
    }
}

/// What the asker gets for a node's answer. A node that sends more lines
/// than asked for is cut to the last `asked` (and marked truncated).
pub fn logs_answer(
    node_id: &str,
    asked: u32,
    p: LogsResultParams,
) -> Result<LogsGetResult, ErrorShape> {
    if let Some(error) = p.error {
        return Err(ErrorShape::new(
            codes::INTERNAL,
            format!("Node {node_id} could not read its log: {error}"),
        ));
    }
    let mut lines = p.lines.unwrap_or_default();
    let cut = lines.len().saturating_sub(asked as usize);
    lines.drain(..cut);
    Ok(LogsGetResult {
        node_id: node_id.to_string(),
        count: lines.len() as u32,
        lines,
        truncated: p.truncated.unwrap_or(false) || cut > 0,
    })
}

/// The node's connection closed before it answered.
pub fn node_gone(node_id: &str) -> ErrorShape {
    unavailable(format!(
        "Node {node_id} disconnected before sending its log"
    ))
}

/// A newer connection of the node took over before the old one answered.
pub fn node_replaced(node_id: &str) -> ErrorShape {
    unavailable(format!(
        "Node {node_id} reconnected before sending its log; ask again"
    ))
}

/// The node did not answer within [`LOGS_TIMEOUT_MS`].
pub fn timed_out(node_id: &str) -> ErrorShape {
    unavailable(format!(
        "Node {node_id} did not send its log within {} s",
        LOGS_TIMEOUT_MS / 1000
    ))
}

fn unavailable(message: String) -> ErrorShape {
    ErrorShape::new(codes::UNAVAILABLE, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn lines_default_to_100_and_stay_within_1_to_5000() {
        assert_eq!(line_count(None), Ok(100));
        assert_eq!(line_count(Some(1)), Ok(1));
        assert_eq!(line_count(Some(5000)), Ok(5000));
        for bad in [0, -3, 5001] {
            assert_eq!(
                line_count(Some(bad)),
                Err(ErrorShape::new(
                    400,
                    format!("lines must be between 1 and 5000, not {bad}")
                ))
            );
        }
    }

    #[test]
    fn the_node_is_the_named_one_or_the_only_one() {
        let two = ids(&["laptop", "server"]);
        assert_eq!(pick_node(Some("server"), &two), Ok("server".into()));
        assert_eq!(pick_node(None, &ids(&["laptop"])), Ok("laptop".into()));
        assert_eq!(pick_node(Some(" "), &ids(&["laptop"])), Ok("laptop".into()));
        assert_eq!(
            pick_node(None, &two),
            Err(ErrorShape::new(
                400,
                "nodeId is required: 2 nodes are connected (laptop, server)"
            ))
        );
        assert_eq!(
            pick_node(None, &[]),
            Err(ErrorShape::new(
                503,
                "No node is connected: start one with `gsv node`"
            ))
        );
        assert_eq!(
            pick_node(Some("pi"), &two),
            Err(ErrorShape::new(
                503,
                "Node pi is not connected; connected: laptop, server"
            ))
        );
        assert_eq!(
            pick_node(Some("pi"), &[]),
            Err(ErrorShape::new(
                503,
                "Node pi is not connected (no node is)"
            ))
        );
    }

    #[test]
    fn answers_keep_at_most_the_lines_asked_for() {
        let p = |lines: &[&str], truncated| LogsResultParams {
            call_id: "c".into(),
            lines: Some(ids(lines)),
            truncated,
            error: None,
        };
        assert_eq!(
            logs_answer("laptop", 2, p(&["a", "b"], Some(true))),
            Ok(LogsGetResult {
                node_id: "laptop".into(),
                lines: ids(&["a", "b"]),
                count: 2,
                truncated: true
            })
        );
        assert_eq!(
            logs_answer("laptop", 2, p(&["a", "b", "c"], None)),
            Ok(LogsGetResult {
                node_id: "laptop".into(),
                lines: ids(&["b", "c"]),
                count: 2,
                truncated: true
            })
        );
        let empty = LogsResultParams {
            call_id: "c".into(),
            ..Default::default()
        };
        assert_eq!(
            logs_answer("laptop", 5, empty),
            Ok(LogsGetResult {
                node_id: "laptop".into(),
                lines: vec![],
                count: 0,
                truncated: false
            })
        );
        let failed = LogsResultParams {
            call_id: "c".into(),
            error: Some("permission denied".into()),
            ..Default::default()
        };
        assert_eq!(
            logs_answer("laptop", 5, failed),
            Err(ErrorShape::new(
                500,
                "Node laptop could not read its log: permission denied"
            ))
        );
    }

    #[test]
    fn calls_that_end_unanswered_say_why() {
        assert_eq!(
            [node_gone("pi"), node_replaced("pi"), timed_out("pi")],
            [
                ErrorShape::new(503, "Node pi disconnected before sending its log"),
                ErrorShape::new(503, "Node pi reconnected before sending its log; ask again"),
                ErrorShape::new(503, "Node pi did not send its log within 20 s"),
            ]
        );
    }
}
