//! A GSV v1 gateway played back from a recording: this project's `gsv`
//! (chat client, node) against what the real v1 gateway answered it.
//!
//! A fixture (tests/fixtures/v1-gateway/COMMIT/SCENARIO.jsonl, the format
//! of [`crate::v1_replay::Fixture`]) holds what a recording proxy saw
//! between `gsv` and GSV v1's gateway run locally. The double accepts the
//! same connections in the same order and goes through the recording in
//! order: each frame the client sent must come (a request of the same
//! method, with every field the recorded one had, of the same JSON type:
//! what the v1 gateway accepted), and each frame the gateway sent is sent,
//! with the values the client made up this time (request ids, run ids) put
//! in place of the recorded ones.

use futures::{SinkExt, StreamExt};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use crate::poll::{self, ms};
use crate::v1_replay::{kind, learn_keys, replace_values, Fixture};
use crate::ws_recorder::Dir;

/// Keys whose values the client makes up: learned from its frames, put
/// into the gateway's.
const CLIENT_MINTED: &[&str] = &["id", "runId", "callId", "eventId", "probeId"];

/// What the playback found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Playback {
    /// Recorded frames gone through (sent or matched).
    pub played: usize,
    /// Everything that did not go as recorded, in words.
    pub problems: Vec<String>,
    /// Whether the whole recording was played.
    pub finished: bool,
}

pub struct GatewayDouble {
    addr: std::net::SocketAddr,
    playback: Arc<Mutex<Playback>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for GatewayDouble {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

enum Incoming {
    Opened(usize, mpsc::UnboundedSender<Message>),
    Frame(usize, Value),
}

impl GatewayDouble {
    /// Serves `fixture`; each frame the client owes may take `within`.
    pub fn start(fixture: Fixture, within: Duration) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("v1-gateway-double")
            .enable_all()
            .build()
            .expect("double runtime");
        let listener = {
            let _context = runtime.enter();
            crate::fake_discord::loopback_listener()
        };
        let addr = listener.local_addr().unwrap();
        let playback = Arc::new(Mutex::new(Playback::default()));
        let (tx, rx) = mpsc::unbounded_channel();
        runtime.spawn(async move {
            let mut next = 0usize;
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let Ok(ws) = tokio_tungstenite::accept_async(stream).await else {
                    continue;
                };
                let conn = next;
                next += 1;
                let (mut sink, mut source) = ws.split();
                let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Message>();
                let _ = tx.send(Incoming::Opened(conn, out_tx));
                tokio::spawn(async move {
                    while let Some(msg) = out_rx.recv().await {
                        let close = matches!(msg, Message::Close(_));
                        if sink.send(msg).await.is_err() || close {
                            break;
                        }
                    }
                });
                let tx = tx.clone();
                tokio::spawn(async move {
                    while let Some(Ok(msg)) = source.next().await {
                        if let Message::Text(t) = msg {
                            let v = serde_json::from_str(t.as_str())
                                .unwrap_or_else(|_| Value::String(t.to_string()));
                            let _ = tx.send(Incoming::Frame(conn, v));
                        }
                    }
                });
            }
        });
        runtime.spawn(play(fixture, rx, playback.clone(), within));
        Self {
            addr,
            playback,
            runtime: Some(runtime),
        }
    }

    /// The URL to give `gsv` (`GSV_URL`).
    pub fn url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// Waits until the recording is played through or a frame the client
    /// owes did not come; the outcome.
    pub fn wait(&self, within: Duration) -> Playback {
        poll::try_until_blocking(within, ms(50), || {
            let p = self.playback.lock().unwrap().clone();
            if p.finished || !p.problems.is_empty() {
                Ok(p)
            } else {
                Err(p)
            }
        })
        .unwrap_or_else(|last| last)
    }
}

/// What is missing or of another type in `live` against `recorded`
/// (fields the recorded frame had, recursively; array items by
/// position). A tool's `inputSchema` is the node's own content, not the
/// protocol's: not compared.
pub fn shape_problems(recorded: &Value, live: &Value, path: &str) -> Vec<String> {
    match (recorded, live) {
        (Value::Object(r), Value::Object(l)) => r
            .iter()
            .filter(|(k, _)| k.as_str() != "inputSchema")
            .flat_map(|(k, rv)| {
                let p = format!("{path}.{k}");
                match l.get(k) {
                    Some(lv) => shape_problems(rv, lv, &p),
                    None => vec![format!("{p}: missing")],
                }
            })
            .collect(),
        (Value::Array(r), Value::Array(l)) => r
            .iter()
            .zip(l)
            .flat_map(|(rv, lv)| shape_problems(rv, lv, &format!("{path}[]")))
            .collect(),
        _ if kind(recorded) != kind(live) => vec![format!(
            "{path}: {} {live} instead of {}",
            kind(live),
            kind(recorded)
        )],
        _ => vec![],
    }
}

async fn play(
    fixture: Fixture,
    mut rx: mpsc::UnboundedReceiver<Incoming>,
    playback: Arc<Mutex<Playback>>,
    within: Duration,
) {
    // A connection is the first recorded one not yet taken that opened
    // the same way (its first frame: the method and the client's mode):
    // a node and a command started together may connect in either order.
    let mut firsts: Vec<(usize, Value)> = Vec::new();
    for f in &fixture.frames {
        if f.dir == Dir::Sent && !firsts.iter().any(|(c, _)| *c == f.conn) {
            firsts.push((f.conn, f.frame.clone()));
        }
    }
    let mut conns = Conns {
        firsts,
        live: HashMap::new(),
        unassigned: HashMap::new(),
    };
    let mut writers: HashMap<usize, mpsc::UnboundedSender<Message>> = HashMap::new();
    let mut pending: HashMap<usize, VecDeque<Value>> = HashMap::new();
    let mut minted: Vec<(String, String)> = Vec::new();
    let problem = |text: String| playback.lock().unwrap().problems.push(text);
    for (i, rec) in fixture.frames.iter().enumerate() {
        let line = i + 2;
        let is_close = rec.frame.get("$close").is_some();
        let deadline = tokio::time::Instant::now() + within;
        match rec.dir {
            Dir::Received => {
                // Sent once the client has opened that connection.
                while !writers.contains_key(&rec.conn) {
                    match tokio::time::timeout_at(deadline, rx.recv()).await {
                        Ok(Some(msg)) => take(msg, &mut conns, &mut writers, &mut pending),
                        _ => {
                            problem(format!("line {line}: connection {} never opened", rec.conn));
                            return;
                        }
                    }
                }
                let msg = if is_close {
                    Message::Close(None)
                } else {
                    Message::text(replace_values(&rec.frame, &minted).to_string())
                };
                let _ = writers[&rec.conn].send(msg);
            }
            Dir::Sent if is_close => {}
            Dir::Sent => loop {
                let queue = pending.entry(rec.conn).or_default();
                let found = queue.iter().position(|f| {
                    f["type"] == rec.frame["type"] && f["method"] == rec.frame["method"]
                });
                if let Some(at) = found {
                    let live = queue.remove(at).unwrap_or_default();
                    for p in shape_problems(&rec.frame, &live, "") {
                        problem(format!("line {line} ({}): {p}", rec.frame["method"]));
                    }
                    learn_keys(&rec.frame, &live, CLIENT_MINTED, &mut minted);
                    break;
                }
                match tokio::time::timeout_at(deadline, rx.recv()).await {
                    Ok(Some(msg)) => take(msg, &mut conns, &mut writers, &mut pending),
                    _ => {
                        let got: Vec<String> = pending
                            .get(&rec.conn)
                            .map(|q| q.iter().map(Value::to_string).collect())
                            .unwrap_or_default();
                        problem(format!(
                            "line {line}: conn {} never sent {}\n  it sent meanwhile: {got:?}",
                            rec.conn, rec.frame
                        ));
                        return;
                    }
                }
            },
        }
        playback.lock().unwrap().played += 1;
    }
    // What the client sent beyond the recording got no answer.
    while let Ok(msg) = rx.try_recv() {
        take(msg, &mut conns, &mut writers, &mut pending);
    }
    for (conn, queue) in pending {
        for f in queue {
            if f.get("method").is_some() {
                problem(format!(
                    "conn {conn} sent a request not in the recording: {f}"
                ));
            }
        }
    }
    playback.lock().unwrap().finished = true;
    // Keep the sockets open until the clients end them.
    while rx.recv().await.is_some() {}
}

/// Which recorded connection each live one is.
struct Conns {
    /// Recorded connections not yet taken, with their first frame.
    firsts: Vec<(usize, Value)>,
    /// Live connection → recorded one.
    live: HashMap<usize, usize>,
    /// Live connections that sent nothing yet, with their writer.
    unassigned: HashMap<usize, mpsc::UnboundedSender<Message>>,
}

fn opens_alike(recorded: &Value, live: &Value) -> bool {
    recorded["method"] == live["method"]
        && recorded["params"]["client"]["mode"] == live["params"]["client"]["mode"]
}

fn take(
    msg: Incoming,
    conns: &mut Conns,
    writers: &mut HashMap<usize, mpsc::UnboundedSender<Message>>,
    pending: &mut HashMap<usize, VecDeque<Value>>,
) {
    match msg {
        Incoming::Opened(live, tx) => {
            conns.unassigned.insert(live, tx);
        }
        Incoming::Frame(live, v) => {
            let recorded = match conns.live.get(&live) {
                Some(r) => *r,
                None => {
                    // Not in the recording: kept apart, reported at the end.
                    let r = match conns.firsts.iter().position(|(_, f)| opens_alike(f, &v)) {
                        Some(at) => conns.firsts.remove(at).0,
                        None => usize::MAX - live,
                    };
                    conns.live.insert(live, r);
                    if let Some(tx) = conns.unassigned.remove(&live) {
                        writers.insert(r, tx);
                    }
                    r
                }
            };
            pending.entry(recorded).or_default().push_back(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes_compare_fields_and_types_not_values() {
        let recorded = json!({"type": "req", "params": {"sessionKey": "a", "runId": "r",
                               "tools": [{"name": "Bash", "inputSchema": {"y": 2}},
                                         {"name": "Read", "description": "d"}]}});
        let same = json!({"type": "req", "params": {"sessionKey": "b", "runId": "s", "extra": 1,
                           "tools": [{"name": "Bash", "inputSchema": {"x": 1}},
                                     {"name": "Read", "description": "e"}, {"name": "Grep"}]}});
        assert_eq!(shape_problems(&recorded, &same, ""), Vec::<String>::new());
        let other = json!({"type": "req", "params": {"sessionKey": 3,
                            "tools": [{"name": "Bash"}, {"name": "Read"}]}});
        assert_eq!(
            shape_problems(&recorded, &other, ""),
            vec![
                ".params.runId: missing".to_string(),
                ".params.sessionKey: integer 3 instead of string".to_string(),
                ".params.tools[].description: missing".to_string(),
            ]
        );
    }
}
