//! Node logs (v1 §2.10): `logs.get` from a client (answered when the node
//! answers), the `logs.get` event to the node, and its `logs.result`.

use serde::{Deserialize, Serialize};

/// Lines sent when `lines` is not given.
pub const DEFAULT_LOG_LINES: u32 = 100;
/// The most lines one call returns.
pub const MAX_LOG_LINES: u32 = 5000;

/// `logs.get` params. `lines` is read as any integer so that 0 or -1 get
/// a clear error rather than a type error.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LogsGetParams {
    /// Optional only while exactly one node is connected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// Default 100, 1–5000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<i64>,
}

/// `logs.get` result: the node's last lines, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct LogsGetResult {
    pub node_id: String,
    pub lines: Vec<String>,
    pub count: u32,
    /// True when the log holds older lines than these.
    pub truncated: bool,
}

/// `logs.get` event (gateway → node): send the last `lines` lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogsGetEvent {
    pub call_id: String,
    pub lines: u32,
}

/// `logs.result` params (node → gateway): the lines, or why there are none.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogsResultParams {
    pub call_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes_on_the_wire() {
        let p: LogsGetParams =
            serde_json::from_value(json!({"nodeId": "laptop", "lines": -1})).unwrap();
        assert_eq!(
            p,
            LogsGetParams {
                node_id: Some("laptop".into()),
                lines: Some(-1)
            }
        );
        assert_eq!(
            serde_json::to_value(LogsGetEvent {
                call_id: "c1".into(),
                lines: 100
            })
            .unwrap(),
            json!({"callId": "c1", "lines": 100})
        );
        let r: LogsResultParams =
            serde_json::from_value(json!({"callId": "c1", "error": "no log"})).unwrap();
        assert_eq!(
            r,
            LogsResultParams {
                call_id: "c1".into(),
                error: Some("no log".into()),
                ..Default::default()
            }
        );
        assert_eq!(
            serde_json::to_value(LogsGetResult {
                node_id: "laptop".into(),
                lines: vec!["{}".into()],
                count: 1,
                truncated: false
            })
            .unwrap(),
            json!({"nodeId": "laptop", "lines": ["{}"], "count": 1, "truncated": false})
        );
    }
}
