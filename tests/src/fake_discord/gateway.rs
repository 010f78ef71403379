//! The fake gateway socket: one task per connection, Discord's rules for
//! what may be sent when, and its close codes.

use super::{ConnectionEnd, GatewayRecord, Out, Session, Shared, State};
use super::{BOT_USERNAME, BOT_USER_ID, FAKE_BOT_TOKEN, PRIVILEGED_INTENTS};
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

/// Every intent Discord defines up to bit 25 (anything above is 4013).
const KNOWN_INTENTS: u64 = (1 << 26) - 1;

pub(crate) async fn serve(listener: TcpListener, state: Shared) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let state = state.clone();
        tokio::spawn(async move {
            if let Ok(ws) = tokio_tungstenite::accept_async(stream).await {
                connection(ws, state).await;
            }
        });
    }
}

/// Where the connection is in Discord's handshake.
#[derive(PartialEq)]
enum Auth {
    Hello,
    /// Identified or resumed into this session.
    In(String),
}

async fn connection(ws: tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>, state: Shared) {
    let (mut sink, mut source) = ws.split();
    let (tx, mut rx) = mpsc::unbounded_channel::<Out>();
    let (conn, interval, grace) = {
        let mut s = state.lock().unwrap();
        s.next_conn += 1;
        let conn = s.next_conn;
        s.conns.insert(conn, tx.clone());
        (conn, s.heartbeat_interval_ms, s.heartbeat_grace_ms)
    };
    let _ = tx.send(Out::Frame(
        json!({"op": 10, "d": {"heartbeat_interval": interval}}),
    ));
    let mut auth = Auth::Hello;
    let beat_timeout = Duration::from_millis(interval + grace);
    let mut deadline = tokio::time::Instant::now() + beat_timeout;
    let end = loop {
        tokio::select! {
            incoming = source.next() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    let mut s = state.lock().unwrap();
                    let frame: Value = match serde_json::from_str(&text) {
                        Ok(v) => v,
                        Err(_) => {
                            let _ = tx.send(Out::Close(4002, "Error while decoding payload."));
                            continue;
                        }
                    };
                    s.gateway_log.push(GatewayRecord { conn, from_client: true, frame: frame.clone() });
                    if frame["op"] == 1 {
                        deadline = tokio::time::Instant::now() + beat_timeout;
                    }
                    for out in on_frame(&mut s, conn, &mut auth, &frame) {
                        let _ = tx.send(out);
                    }
                }
                Some(Ok(Message::Close(frame))) => {
                    break (frame.map(|f| u16::from(f.code)), false);
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break (None, false),
            },
            Some(out) = rx.recv() => match out {
                Out::Frame(frame) => {
                    state.lock().unwrap().gateway_log.push(GatewayRecord { conn, from_client: false, frame: frame.clone() });
                    if sink.send(Message::Text(frame.to_string().into())).await.is_err() {
                        break (None, false);
                    }
                }
                Out::Close(code, reason) => {
                    // The session ends before the client can hear of it.
                    if code == 4009 || code == 4007 {
                        invalidate(&mut state.lock().unwrap(), &auth);
                    }
                    let _ = sink.send(Message::Close(Some(CloseFrame {
                        code: CloseCode::from(code),
                        reason: reason.into(),
                    }))).await;
                    break (Some(code), true);
                }
            },
            _ = tokio::time::sleep_until(deadline) => {
                invalidate(&mut state.lock().unwrap(), &auth);
                let _ = sink.send(Message::Close(Some(CloseFrame {
                    code: CloseCode::from(4009),
                    reason: "Session timed out.".into(),
                }))).await;
                break (Some(4009), true);
            }
        }
    };
    let mut s = state.lock().unwrap();
    s.conns.remove(&conn);
    if let Auth::In(id) = &auth {
        if let Some(session) = s.sessions.get_mut(id) {
            if session.conn == Some(conn) {
                session.conn = None;
            }
        }
    }
    s.ends.push(ConnectionEnd {
        conn,
        code: end.0,
        by_server: end.1,
    });
}

fn invalidate(state: &mut State, auth: &Auth) {
    if let Auth::In(id) = auth {
        state.sessions.remove(id);
        if state.live.as_deref() == Some(id) {
            state.live = None;
        }
    }
}

/// Discord's answer to one client frame.
fn on_frame(state: &mut State, conn: u64, auth: &mut Auth, frame: &Value) -> Vec<Out> {
    let d = &frame["d"];
    match frame["op"].as_u64() {
        Some(1) if state.acks => vec![Out::Frame(json!({"op": 11}))],
        Some(1) => vec![],
        Some(2) => {
            if *auth != Auth::Hello {
                return vec![Out::Close(4005, "Already authenticated.")];
            }
            if d["token"] != FAKE_BOT_TOKEN {
                return vec![Out::Close(4004, "Authentication failed.")];
            }
            let Some(intents) = d["intents"].as_u64() else {
                return vec![Out::Close(4002, "Error while decoding payload.")];
            };
            if intents & !KNOWN_INTENTS != 0 {
                return vec![Out::Close(4013, "Invalid intent(s).")];
            }
            if intents & PRIVILEGED_INTENTS != 0 && !state.privileged_allowed {
                return vec![Out::Close(4014, "Disallowed intent(s).")];
            }
            let id = format!("fake-session-{conn}");
            state.sessions.insert(
                id.clone(),
                Session {
                    seq: 0,
                    events: Vec::new(),
                    conn: Some(conn),
                },
            );
            state.live = Some(id.clone());
            *auth = Auth::In(id.clone());
            let resume_url = format!(
                "ws://{}",
                state.ws_addr.map(|a| a.to_string()).unwrap_or_default()
            );
            let ready = json!({
                "v": 10,
                "user": {"id": BOT_USER_ID, "username": BOT_USERNAME, "discriminator": "0",
                         "global_name": null, "avatar": null, "bot": true},
                "guilds": [],
                "session_id": id,
                "resume_gateway_url": resume_url,
                "application": {"id": BOT_USER_ID, "flags": 0}
            });
            dispatch(state, &id, "READY", ready);
            vec![]
        }
        Some(6) => {
            if *auth != Auth::Hello {
                return vec![Out::Close(4005, "Already authenticated.")];
            }
            if d["token"] != FAKE_BOT_TOKEN {
                return vec![Out::Close(4004, "Authentication failed.")];
            }
            let id = d["session_id"].as_str().unwrap_or_default().to_string();
            let Some(session) = state.sessions.get_mut(&id) else {
                return vec![Out::Frame(json!({"op": 9, "d": false}))];
            };
            let from = d["seq"].as_u64().unwrap_or(0);
            if from > session.seq {
                return vec![Out::Close(4007, "Invalid seq.")];
            }
            session.conn = Some(conn);
            *auth = Auth::In(id.clone());
            let replay: Vec<Out> = session
                .events
                .iter()
                .filter(|e| e["s"].as_u64().is_some_and(|s| s > from))
                .map(|e| Out::Frame(e.clone()))
                .collect();
            // The replay goes out first, then RESUMED (itself a dispatch).
            let mut out = replay;
            let resumed = next_dispatch(state, &id, "RESUMED", json!({}));
            out.extend(resumed.map(Out::Frame));
            out
        }
        Some(_) if *auth == Auth::Hello => vec![Out::Close(4003, "Not authenticated.")],
        Some(3) | Some(4) | Some(8) | Some(31) => vec![],
        _ => vec![Out::Close(4001, "Unknown opcode.")],
    }
}

/// Numbers an event in a session and keeps it for replay; the frame.
fn next_dispatch(state: &mut State, session: &str, event: &str, d: Value) -> Option<Value> {
    let s = state.sessions.get_mut(session)?;
    s.seq += 1;
    let frame = json!({"op": 0, "s": s.seq, "t": event, "d": d});
    s.events.push(frame.clone());
    Some(frame)
}

/// Dispatches an event in a session: sent now if a client is connected to
/// it. The event's sequence number (0 if the session is gone).
pub(crate) fn dispatch(state: &mut State, session: &str, event: &str, d: Value) -> u64 {
    let Some(frame) = next_dispatch(state, session, event, d) else {
        return 0;
    };
    let seq = frame["s"].as_u64().unwrap_or(0);
    let conn = state.sessions.get(session).and_then(|s| s.conn);
    if let Some(tx) = conn.and_then(|c| state.conns.get(&c)) {
        let _ = tx.send(Out::Frame(frame));
    }
    seq
}

/// Sends something on the newest session's connection and detaches the
/// session from it (what follows waits for a RESUME).
pub(crate) fn to_live_connection(state: &mut State, make: impl FnOnce(u64) -> Option<Out>) {
    let Some(live) = state.live.clone() else {
        return;
    };
    let Some(conn) = state.sessions.get_mut(&live).and_then(|s| s.conn.take()) else {
        return;
    };
    if let (Some(out), Some(tx)) = (make(conn), state.conns.get(&conn)) {
        let _ = tx.send(out);
    }
}
