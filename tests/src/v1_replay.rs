//! Replays recorded client conversations against the real gateway and
//! checks that every answer and event the recorded client needed comes
//! back with the fields and types it reads.
//!
//! A fixture (tests/fixtures/v1/COMMIT/SCENARIO.jsonl) is what a
//! [`crate::ws_recorder::WsRecorder`] saw between one of GSV v1's own CLI
//! builds and this gateway: a header line, then one line per frame,
//! `{"conn": N, "dir": "sent"|"received", "frame": {...}}`. Secrets and
//! machine paths are stored as placeholders (`$TOKEN`, `$WORKSPACE`, ...).
//!
//! The replay opens one socket per recorded connection, sends the
//! recorded client frames in the recorded order, and before going on waits
//! for each recorded answer (`res`) and each event the client acts on (a
//! run's `final`/`error` `chat` event, `tool.invoke`, `logs.get`,
//! `node.probe`). Values the gateway makes up (a `callId`, a `probeId`)
//! are learned from the live frames and put in the frames sent after them,
//! so the node answers the call the gateway made this time.

use futures::{SinkExt, StreamExt};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::ws_recorder::{Dir, Recorded};

/// A recorded conversation: its header (what was run, what it printed)
/// and its frames.
#[derive(Debug, Clone, PartialEq)]
pub struct Fixture {
    pub header: Value,
    pub frames: Vec<Recorded>,
}

/// The frame recorded for a socket's close (WebSocket close, not JSON).
pub fn close_marker(code: Option<u16>) -> Value {
    json!({"$close": code})
}

fn is_close(frame: &Value) -> bool {
    frame.get("$close").is_some()
}

impl Fixture {
    pub fn parse(text: &str) -> Self {
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let header = serde_json::from_str(lines.next().expect("a fixture header")).unwrap();
        let frames = lines
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                Recorded {
                    conn: v["conn"].as_u64().unwrap() as usize,
                    dir: match v["dir"].as_str().unwrap() {
                        "sent" => Dir::Sent,
                        "received" => Dir::Received,
                        other => panic!("unknown dir {other}"),
                    },
                    frame: v["frame"].clone(),
                }
            })
            .collect();
        Self { header, frames }
    }

    pub fn to_jsonl(&self) -> String {
        let mut out = self.header.to_string();
        out.push('\n');
        for f in &self.frames {
            out.push_str(
                &json!({"conn": f.conn, "dir": f.dir.as_str(), "frame": f.frame}).to_string(),
            );
            out.push('\n');
        }
        out
    }
}

/// `value` with every occurrence of each `from` inside its strings (keys
/// included) replaced by its `to`, longest `from` first.
pub fn substitute(value: &Value, pairs: &[(String, String)]) -> Value {
    let mut pairs: Vec<&(String, String)> = pairs.iter().filter(|(f, _)| !f.is_empty()).collect();
    pairs.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    fn text(s: &str, pairs: &[&(String, String)]) -> String {
        let mut s = s.to_string();
        for (from, to) in pairs {
            s = s.replace(from.as_str(), to);
        }
        s
    }
    fn walk(v: &Value, pairs: &[&(String, String)]) -> Value {
        match v {
            Value::String(s) => Value::String(text(s, pairs)),
            Value::Array(a) => Value::Array(a.iter().map(|x| walk(x, pairs)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (text(k, pairs), walk(x, pairs)))
                    .collect::<Map<String, Value>>(),
            ),
            other => other.clone(),
        }
    }
    walk(value, &pairs)
}

/// `value` with every string equal to a `from` replaced by its `to`
/// (values made up on one side, learned from the other: whole values
/// only, so a short id cannot change other text).
pub fn replace_values(value: &Value, pairs: &[(String, String)]) -> Value {
    match value {
        Value::String(s) => pairs
            .iter()
            .find(|(from, _)| from == s)
            .map(|(_, to)| Value::String(to.clone()))
            .unwrap_or_else(|| value.clone()),
        Value::Array(a) => Value::Array(a.iter().map(|x| replace_values(x, pairs)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), replace_values(x, pairs)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The fields a client reads in one kind of frame: `key` is `res METHOD`
/// or `evt EVENT`; each path is dotted, `[]` stands for every element of
/// an array and `{}` for every value of an object, and a trailing `=`
/// asks for the recorded value itself, not only its type.
#[derive(Debug, Clone, Copy)]
pub struct Reads {
    pub key: &'static str,
    pub paths: &'static [&'static str],
}

/// The JSON type of a value as a client reading it sees it: integers
/// (`as_i64`) apart from other numbers.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The values at `path` (several when it crosses `[]` or `{}`).
pub fn values_at<'a>(v: &'a Value, path: &str) -> Vec<&'a Value> {
    let mut current = vec![v];
    for segment in path.split('.') {
        let (name, each) = if let Some(n) = segment.strip_suffix("[]") {
            (n, Some("[]"))
        } else if let Some(n) = segment.strip_suffix("{}") {
            (n, Some("{}"))
        } else {
            (segment, None)
        };
        let mut next = Vec::new();
        for value in current {
            let Some(field) = value.get(name) else {
                continue;
            };
            match each {
                Some("[]") => {
                    if let Some(items) = field.as_array() {
                        next.extend(items.iter());
                    } else {
                        next.push(field);
                    }
                }
                Some(_) => {
                    if let Some(items) = field.as_object() {
                        next.extend(items.values());
                    } else {
                        next.push(field);
                    }
                }
                None => next.push(field),
            }
        }
        current = next;
    }
    current
}

/// What is wrong with `live` for a client that reads `paths` and got
/// `recorded` (empty: nothing). A field the recording lacks is not
/// required (the client reads it only when present); one it had must
/// come back, with one of the types it had there.
pub fn check_reads(recorded: &Value, live: &Value, paths: &[&str]) -> Vec<String> {
    let mut problems = Vec::new();
    for spec in paths {
        let (path, exact) = match spec.strip_suffix('=') {
            Some(p) => (p, true),
            None => (*spec, false),
        };
        let want = values_at(recorded, path);
        if want.is_empty() {
            continue;
        }
        let got = values_at(live, path);
        if got.is_empty() {
            problems.push(format!("{path}: missing (recorded {})", want[0]));
            continue;
        }
        if exact {
            if want != got {
                problems.push(format!(
                    "{path}: {} instead of {}",
                    Value::Array(got.into_iter().cloned().collect()),
                    Value::Array(want.into_iter().cloned().collect())
                ));
            }
            continue;
        }
        let kinds: Vec<&str> = want.iter().map(|v| kind(v)).collect();
        for g in got {
            if !kinds.contains(&kind(g)) {
                problems.push(format!(
                    "{path}: {} {g} instead of {}",
                    kind(g),
                    kinds.join("|")
                ));
            }
        }
    }
    problems
}

/// Whether the client waits for this received frame (it answers it, or
/// its command ends with it). Other events (a run's `delta`s, a `partial`
/// it only prints) are not waited for.
pub fn is_awaited(frame: &Value) -> bool {
    match frame["type"].as_str() {
        Some("res") => true,
        Some("evt") => match frame["event"].as_str() {
            Some("chat") => matches!(frame["payload"]["state"].as_str(), Some("final" | "error")),
            Some("tool.invoke" | "logs.get" | "node.probe") => true,
            _ => false,
        },
        _ => false,
    }
}

/// Whether `live` is the gateway's counterpart of `recorded`.
fn same_frame(recorded: &Value, live: &Value) -> bool {
    if recorded["type"] != live["type"] {
        return false;
    }
    match recorded["type"].as_str() {
        Some("res") => recorded["id"] == live["id"],
        Some("evt") => {
            recorded["event"] == live["event"]
                && match recorded["event"].as_str() {
                    Some("chat") => {
                        recorded["payload"]["state"] == live["payload"]["state"]
                            && recorded["payload"]["runId"] == live["payload"]["runId"]
                    }
                    Some("tool.invoke") => recorded["payload"]["tool"] == live["payload"]["tool"],
                    _ => true,
                }
        }
        _ => false,
    }
}

/// Keys whose values the gateway makes up, learned from live frames.
const MINTED: &[&str] = &["callId", "probeId"];

fn learn(recorded: &Value, live: &Value, map: &mut Vec<(String, String)>) {
    learn_keys(recorded, live, MINTED, map);
}

/// Learns `recorded value → live value` for the string fields named in
/// `keys` that differ between two counterpart frames.
pub fn learn_keys(recorded: &Value, live: &Value, keys: &[&str], map: &mut Vec<(String, String)>) {
    match (recorded, live) {
        (Value::Object(r), Value::Object(l)) => {
            for (k, rv) in r {
                let Some(lv) = l.get(k) else { continue };
                if keys.contains(&k.as_str()) {
                    if let (Some(rs), Some(ls)) = (rv.as_str(), lv.as_str()) {
                        if rs != ls && !map.iter().any(|(f, _)| f == rs) {
                            map.push((rs.to_string(), ls.to_string()));
                        }
                    }
                } else {
                    learn_keys(rv, lv, keys, map);
                }
            }
        }
        (Value::Array(r), Value::Array(l)) => {
            for (rv, lv) in r.iter().zip(l) {
                learn_keys(rv, lv, keys, map);
            }
        }
        _ => {}
    }
}

/// The key of the reads for a received frame: `res METHOD` (the method of
/// the request it answers) or `evt EVENT`.
fn reads_key(frame: &Value, methods: &HashMap<(usize, String), String>, conn: usize) -> String {
    match frame["type"].as_str() {
        Some("res") => {
            let id = frame["id"].as_str().unwrap_or_default().to_string();
            format!(
                "res {}",
                methods.get(&(conn, id)).map(String::as_str).unwrap_or("?")
            )
        }
        _ => format!("evt {}", frame["event"].as_str().unwrap_or("?")),
    }
}

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

struct Conn {
    ws: Socket,
    /// Frames read while waiting for another, not yet matched.
    unmatched: Vec<Value>,
}

/// What a replay did: each awaited frame's reads key, in order.
#[derive(Debug, Default)]
pub struct Replayed {
    pub checked: Vec<String>,
    pub sent: usize,
}

/// Replays `fixture` against the gateway at `url`; `placeholders` turn the
/// fixture's placeholders into this run's values (`("$TOKEN", token)`).
/// Panics with every problem found.
pub async fn replay(
    url: &str,
    fixture: &Fixture,
    placeholders: &[(String, String)],
    reads: &[Reads],
    within: Duration,
) -> Replayed {
    let mut conns: HashMap<usize, Conn> = HashMap::new();
    let mut minted: Vec<(String, String)> = Vec::new();
    let mut methods: HashMap<(usize, String), String> = HashMap::new();
    let mut problems: Vec<String> = Vec::new();
    let mut done = Replayed::default();
    for (line, rec) in fixture.frames.iter().enumerate() {
        let line = line + 2; // 1-based, after the header
        match rec.dir {
            Dir::Sent => {
                if is_close(&rec.frame) {
                    if let Some(mut c) = conns.remove(&rec.conn) {
                        let _ = c.ws.close(None).await;
                    }
                    continue;
                }
                let frame = replace_values(&substitute(&rec.frame, placeholders), &minted);
                if let (Some(id), Some(method)) = (frame["id"].as_str(), frame["method"].as_str()) {
                    methods.insert((rec.conn, id.to_string()), method.to_string());
                }
                if let std::collections::hash_map::Entry::Vacant(slot) = conns.entry(rec.conn) {
                    let (ws, _) = tokio_tungstenite::connect_async(url)
                        .await
                        .unwrap_or_else(|e| panic!("line {line}: open socket: {e}"));
                    slot.insert(Conn {
                        ws,
                        unmatched: Vec::new(),
                    });
                }
                let conn = conns.get_mut(&rec.conn).unwrap();
                conn.ws
                    .send(Message::text(frame.to_string()))
                    .await
                    .unwrap_or_else(|e| panic!("line {line}: send on conn {}: {e}", rec.conn));
                done.sent += 1;
            }
            Dir::Received => {
                if !is_awaited(&rec.frame) {
                    continue;
                }
                let Some(conn) = conns.get_mut(&rec.conn) else {
                    panic!("line {line}: conn {} received before it sent", rec.conn);
                };
                let want = replace_values(&substitute(&rec.frame, placeholders), &minted);
                let live = match await_frame(conn, &want, within).await {
                    Ok(live) => live,
                    Err(seen) => panic!(
                        "line {line}: conn {} never got {want}\nframes it got meanwhile:\n{}",
                        rec.conn,
                        seen.join("\n")
                    ),
                };
                learn(&want, &live, &mut minted);
                let key = reads_key(&want, &methods, rec.conn);
                let paths: Vec<&str> = reads
                    .iter()
                    .filter(|r| r.key == key)
                    .flat_map(|r| r.paths.iter().copied())
                    .collect();
                // Every answer is read for `ok` first.
                let mut all = if want["type"] == "res" {
                    vec!["ok="]
                } else {
                    vec![]
                };
                all.extend(paths);
                for p in check_reads(&want, &live, &all) {
                    problems.push(format!("line {line} ({key}): {p}\n  live: {live}"));
                }
                done.checked.push(key);
            }
        }
    }
    for (_, mut c) in conns {
        let _ = c.ws.close(None).await;
    }
    assert!(
        problems.is_empty(),
        "the gateway's answers differ from what the v1 client read:\n{}",
        problems.join("\n")
    );
    done
}

/// Reads `conn` until a frame matching `want` comes (frames read before
/// that are kept for later waits); on timeout, the frames seen.
async fn await_frame(
    conn: &mut Conn,
    want: &Value,
    within: Duration,
) -> Result<Value, Vec<String>> {
    if let Some(i) = conn.unmatched.iter().position(|f| same_frame(want, f)) {
        return Ok(conn.unmatched.remove(i));
    }
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let next = tokio::time::timeout_at(deadline, conn.ws.next()).await;
        match next {
            Ok(Some(Ok(Message::Text(t)))) => {
                let frame: Value = serde_json::from_str(t.as_str()).unwrap_or(Value::Null);
                if same_frame(want, &frame) {
                    return Ok(frame);
                }
                conn.unmatched.push(frame);
            }
            Ok(Some(Ok(_))) => continue,
            Ok(Some(Err(_)) | None) | Err(_) => {
                return Err(conn.unmatched.iter().map(Value::to_string).collect())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_check_types_and_exact_values() {
        let recorded = json!({"ok": true, "payload": {
            "sessions": [{"sessionKey": "a", "lastActiveAt": 5}],
            "count": 1, "agents": {"main": {"nextHeartbeatAt": 7}}}});
        let good = json!({"ok": true, "payload": {
            "sessions": [{"sessionKey": "b", "lastActiveAt": 6, "label": "x"},
                         {"sessionKey": "c", "lastActiveAt": 9}],
            "count": 2, "agents": {"main": {"nextHeartbeatAt": 8}}}});
        let paths = [
            "ok=",
            "payload.sessions[].sessionKey",
            "payload.sessions[].lastActiveAt",
            "payload.sessions[].label",
            "payload.count",
            "payload.agents{}.nextHeartbeatAt",
        ];
        assert_eq!(check_reads(&recorded, &good, &paths), Vec::<String>::new());
        let bad = json!({"ok": false, "payload": {
            "sessions": [{"sessionKey": 3, "lastActiveAt": 1.5}],
            "agents": {"main": {}}}});
        assert_eq!(
            check_reads(&recorded, &bad, &paths),
            vec![
                "ok: [false] instead of [true]".to_string(),
                "payload.sessions[].sessionKey: integer 3 instead of string".to_string(),
                "payload.sessions[].lastActiveAt: number 1.5 instead of integer".to_string(),
                "payload.count: missing (recorded 1)".to_string(),
                "payload.agents{}.nextHeartbeatAt: missing (recorded 7)".to_string(),
            ]
        );
    }

    #[test]
    fn placeholders_and_minted_ids_are_substituted_deeply() {
        let frame = json!({"params": {"auth": {"token": "$TOKEN"},
                                      "result": {"path": "$WORKSPACE/notes.txt", "n": "1 of 1"},
                                      "callId": "1"}});
        let pairs = vec![
            ("$TOKEN".to_string(), "t0k".to_string()),
            ("$WORKSPACE".to_string(), "/tmp/w".to_string()),
        ];
        let minted = vec![("1".to_string(), "c-live".to_string())];
        assert_eq!(
            replace_values(&substitute(&frame, &pairs), &minted),
            json!({"params": {"auth": {"token": "t0k"},
                              "result": {"path": "/tmp/w/notes.txt", "n": "1 of 1"},
                              "callId": "c-live"}})
        );
    }

    #[test]
    fn minted_ids_are_learned_from_the_live_counterpart() {
        let rec = json!({"type": "evt", "event": "tool.invoke",
                         "payload": {"callId": "a", "tool": "Read", "args": {"path": "x"}}});
        let live = json!({"type": "evt", "event": "tool.invoke",
                          "payload": {"callId": "b", "tool": "Read", "args": {"path": "x"}}});
        assert!(same_frame(&rec, &live));
        let mut map = Vec::new();
        learn(&rec, &live, &mut map);
        assert_eq!(map, vec![("a".to_string(), "b".to_string())]);
    }

    #[test]
    fn only_what_the_client_acts_on_is_awaited() {
        let chat =
            |state: &str| json!({"type": "evt", "event": "chat", "payload": {"state": state}});
        assert!(is_awaited(&chat("final")));
        assert!(is_awaited(&chat("error")));
        assert!(!is_awaited(&chat("delta")));
        assert!(!is_awaited(&chat("partial")));
        assert!(is_awaited(&json!({"type": "res", "id": "1", "ok": true})));
        assert!(is_awaited(&json!({"type": "evt", "event": "node.probe"})));
    }

    #[test]
    fn fixtures_round_trip() {
        let f = Fixture {
            header: json!({"v1": {"commit": "c"}}),
            frames: vec![
                Recorded {
                    conn: 0,
                    dir: Dir::Sent,
                    frame: json!({"type": "req"}),
                },
                Recorded {
                    conn: 1,
                    dir: Dir::Received,
                    frame: close_marker(Some(1000)),
                },
            ],
        };
        assert_eq!(Fixture::parse(&f.to_jsonl()), f);
    }
}
