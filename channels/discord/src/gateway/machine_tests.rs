use super::*;
use serde_json::{json, Value};

const TOKEN: &str = "tok";

fn at(now: i64) -> Clock {
    Clock { now, random: 0.5 }
}

fn sent(actions: &[Action]) -> Vec<Value> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Send(t) => Some(serde_json::from_str(t).unwrap()),
            _ => None,
        })
        .collect()
}

fn hello(interval: u64) -> String {
    json!({"op": 10, "d": {"heartbeat_interval": interval}}).to_string()
}

fn ready(s: u64) -> String {
    json!({"op": 0, "s": s, "t": "READY", "d": {
        "v": 10, "session_id": "sess", "resume_gateway_url": "wss://resume.example",
        "user": {"id": "900", "username": "gsv", "bot": true}, "guilds": []
    }})
    .to_string()
}

fn dm(s: u64, id: &str) -> String {
    json!({"op": 0, "s": s, "t": "MESSAGE_CREATE", "d": {
        "id": id, "channel_id": "dm1", "author": {"id": "42", "username": "ann"}, "content": "hi"
    }})
    .to_string()
}

fn identify_frame() -> Value {
    json!({"op": 2, "d": {"token": TOKEN, "intents": 37377,
        "properties": {"os": "cloudflare", "browser": "gsv", "device": "gsv"}}})
}

/// A machine that went through HELLO (interval 1000) and READY (s = 1) on
/// socket 1 at t = 0.
fn ready_machine() -> Machine {
    let mut m = Machine::restore(Persisted::default(), 0);
    m.step(
        Input::Start {
            token: Some(TOKEN.into()),
            intents: None,
        },
        at(0),
    );
    m.step(
        Input::Frame {
            conn: 1,
            text: &hello(1000),
        },
        at(0),
    );
    m.step(
        Input::Frame {
            conn: 1,
            text: &ready(1),
        },
        at(10),
    );
    assert_eq!(m.phase(), Phase::Ready);
    m
}

#[test]
fn start_connects_by_discovery_and_hello_identifies_with_a_jittered_first_beat() {
    let mut m = Machine::restore(Persisted::default(), 0);
    let out = m.step(
        Input::Start {
            token: Some(TOKEN.into()),
            intents: None,
        },
        at(100),
    );
    assert_eq!(
        out,
        vec![
            Action::Connect {
                conn: 1,
                target: ConnectTarget::Discover
            },
            Action::Persist,
            Action::Status,
            Action::Alarm(Some(100 + HANDSHAKE_TIMEOUT_MS)),
        ]
    );
    let out = m.step(
        Input::Frame {
            conn: 1,
            text: &hello(40_000),
        },
        Clock {
            now: 1000,
            random: 0.25,
        },
    );
    assert_eq!(sent(&out), vec![identify_frame()]);
    // First beat at interval × random.
    assert_eq!(out.last(), Some(&Action::Alarm(Some(11_000))));
    assert_eq!(m.phase(), Phase::Identifying);
}

#[test]
fn configured_intents_are_identified() {
    let mut m = Machine::restore(Persisted::default(), 0);
    m.step(
        Input::Start {
            token: Some(TOKEN.into()),
            intents: Some(513),
        },
        at(0),
    );
    let out = m.step(
        Input::Frame {
            conn: 1,
            text: &hello(1000),
        },
        at(0),
    );
    assert_eq!(sent(&out)[0]["d"]["intents"], json!(513));
}

#[test]
fn ready_stores_the_session_and_reports_connected() {
    let m = ready_machine();
    let p = m.persisted();
    assert_eq!(
        (
            p.session_id.as_deref(),
            p.resume_url.as_deref(),
            p.seq,
            p.bot_user_id.as_deref()
        ),
        (
            Some("sess"),
            Some("wss://resume.example/?v=10&encoding=json"),
            Some(1),
            Some("900")
        )
    );
    assert_eq!(
        m.status("default"),
        ChannelAccountStatus {
            account_id: "default".into(),
            connected: true,
            authenticated: true,
            mode: Some("gateway".into()),
            last_activity: Some(10),
            error: None,
            extra: Some(
                json!({"phase": "ready", "botUserId": "900", "botUsername": "gsv", "hasToken": true})
            ),
        }
    );
    assert!(!serde_json::to_string(&m.status("default"))
        .unwrap()
        .contains(TOKEN));
}

#[test]
fn heartbeats_carry_the_sequence_and_a_missing_ack_resumes() {
    let mut m = ready_machine();
    // First beat was due at 500 (1000 × 0.5).
    let out = m.step(Input::Alarm, at(500));
    assert_eq!(sent(&out), vec![json!({"op": 1, "d": 1})]);
    assert_eq!(out.last(), Some(&Action::Alarm(Some(1500))));
    m.step(
        Input::Frame {
            conn: 1,
            text: r#"{"op":11}"#,
        },
        at(600),
    );
    let out = m.step(Input::Alarm, at(1500));
    assert_eq!(sent(&out), vec![json!({"op": 1, "d": 1})]);
    // No ACK this time: the next due beat closes (resumably) and reconnects.
    let out = m.step(Input::Alarm, at(2500));
    assert_eq!(
        out,
        vec![
            Action::Close {
                code: CLOSE_RESUMABLE
            },
            Action::Status,
            Action::Connect {
                conn: 2,
                target: ConnectTarget::Resume("wss://resume.example/?v=10&encoding=json".into())
            },
            Action::Persist,
            Action::Alarm(Some(2500 + HANDSHAKE_TIMEOUT_MS)),
        ]
    );
    assert_eq!(
        m.status("a").error.as_deref(),
        Some("no heartbeat ACK from the gateway; reconnecting")
    );
}

#[test]
fn the_gateway_may_ask_for_a_beat() {
    let mut m = ready_machine();
    let out = m.step(
        Input::Frame {
            conn: 1,
            text: r#"{"op":1,"d":null}"#,
        },
        at(20),
    );
    assert_eq!(sent(&out), vec![json!({"op": 1, "d": 1})]);
}

#[test]
fn reconnect_op_7_resumes_with_the_last_sequence() {
    let mut m = ready_machine();
    m.step(
        Input::Frame {
            conn: 1,
            text: &dm(2, "m2"),
        },
        at(20),
    );
    let out = m.step(
        Input::Frame {
            conn: 1,
            text: r#"{"op":7,"d":null}"#,
        },
        at(30),
    );
    assert_eq!(
        &out[..3],
        &[
            Action::Close {
                code: CLOSE_RESUMABLE
            },
            Action::Status,
            Action::Connect {
                conn: 2,
                target: ConnectTarget::Resume("wss://resume.example/?v=10&encoding=json".into())
            }
        ]
    );
    // The old socket's close and frames no longer count.
    assert_eq!(
        m.step(
            Input::Closed {
                conn: 1,
                code: 4000
            },
            at(31)
        ),
        vec![]
    );
    let out = m.step(
        Input::Frame {
            conn: 2,
            text: &hello(1000),
        },
        at(40),
    );
    assert_eq!(
        sent(&out),
        vec![json!({"op": 6, "d": {"token": TOKEN, "session_id": "sess", "seq": 2}})]
    );
    assert_eq!(m.phase(), Phase::Resuming);
    // Replayed events, then RESUMED.
    let out = m.step(
        Input::Frame {
            conn: 2,
            text: &dm(3, "m3"),
        },
        at(41),
    );
    assert!(matches!(&out[0], Action::Deliver(msg) if msg.message_id == "m3"));
    let out = m.step(
        Input::Frame {
            conn: 2,
            text: r#"{"op":0,"s":4,"t":"RESUMED","d":{}}"#,
        },
        at(42),
    );
    assert!(out.contains(&Action::Status));
    assert_eq!((m.phase(), m.persisted().seq), (Phase::Ready, Some(4)));
}

#[test]
fn invalid_session_resumable_reconnects_and_resumes() {
    let mut m = ready_machine();
    let out = m.step(
        Input::Frame {
            conn: 1,
            text: r#"{"op":9,"d":true}"#,
        },
        at(20),
    );
    assert!(out.contains(&Action::Connect {
        conn: 2,
        target: ConnectTarget::Resume("wss://resume.example/?v=10&encoding=json".into())
    }));
}

#[test]
fn invalid_session_not_resumable_identifies_anew_on_a_new_connection_after_1_to_5_seconds() {
    let mut m = ready_machine();
    let out = m.step(
        Input::Frame {
            conn: 1,
            text: r#"{"op":9,"d":false}"#,
        },
        Clock {
            now: 100,
            random: 0.5,
        },
    );
    // 100 + 1000 + 0.5 × 4000.
    assert_eq!(
        out,
        vec![
            Action::Close {
                code: CLOSE_RESUMABLE
            },
            Action::Status,
            Action::Persist,
            Action::Alarm(Some(3100)),
        ]
    );
    assert_eq!(
        (m.phase(), m.persisted().session_id.clone()),
        (Phase::Waiting, None)
    );
    assert_eq!(m.step(Input::Alarm, at(3000)), vec![]);
    let out = m.step(Input::Alarm, at(3100));
    assert_eq!(
        out[0],
        Action::Connect {
            conn: 2,
            target: ConnectTarget::Discover
        }
    );
    let out = m.step(
        Input::Frame {
            conn: 2,
            text: &hello(1000),
        },
        at(3200),
    );
    assert_eq!(sent(&out), vec![identify_frame()]);
}

#[test]
fn fatal_close_codes_stop_with_a_plain_reason() {
    for code in [4004u16, 4010, 4011, 4012, 4013, 4014] {
        let mut m = ready_machine();
        let out = m.step(Input::Closed { conn: 1, code }, at(50));
        assert_eq!(
            out,
            vec![Action::Persist, Action::Status, Action::Alarm(None)],
            "{code}"
        );
        let status = m.status("a");
        assert!(!status.connected);
        let error = status.error.unwrap_or_default();
        assert!(
            error.starts_with(&format!("Discord closed the gateway with code {code} (")),
            "{error}"
        );
        assert!(!m.persisted().running);
        // Nothing reconnects it.
        assert_eq!(m.step(Input::Alarm, at(1_000_000)), vec![]);
    }
}

#[test]
fn the_4004_reason_names_the_token() {
    let mut m = ready_machine();
    m.step(
        Input::Closed {
            conn: 1,
            code: 4004,
        },
        at(50),
    );
    assert_eq!(
        m.status("a").error.as_deref(),
        Some("Discord closed the gateway with code 4004 (authentication failed: Discord refused the bot token); not reconnecting until the account is started again")
    );
}

#[test]
fn other_closes_back_off_and_resume() {
    let mut m = ready_machine();
    let out = m.step(
        Input::Closed {
            conn: 1,
            code: 1006,
        },
        at(50),
    );
    // Delay 1000 × (0.5 + 0.5 / 2) = 750.
    assert_eq!(out.last(), Some(&Action::Alarm(Some(800))));
    assert_eq!(m.phase(), Phase::Waiting);
    let out = m.step(Input::Alarm, at(800));
    assert_eq!(
        out[0],
        Action::Connect {
            conn: 2,
            target: ConnectTarget::Resume("wss://resume.example/?v=10&encoding=json".into())
        }
    );
    // A second failure waits longer.
    m.step(
        Input::Closed {
            conn: 2,
            code: 1006,
        },
        at(900),
    );
    let out = m.step(Input::Alarm, at(900));
    assert!(out.is_empty());
    assert_eq!(m.alarm, Some(900 + 1500));
}

#[test]
fn invalid_seq_and_session_timeout_reidentify() {
    for code in [4007u16, 4009] {
        let mut m = ready_machine();
        m.step(Input::Closed { conn: 1, code }, at(50));
        let out = m.step(Input::Alarm, at(800));
        assert_eq!(
            out[0],
            Action::Connect {
                conn: 2,
                target: ConnectTarget::Discover
            },
            "{code}"
        );
    }
}

#[test]
fn a_refused_token_at_discovery_is_fatal() {
    let mut m = Machine::restore(Persisted::default(), 0);
    m.step(
        Input::Start {
            token: Some(TOKEN.into()),
            intents: None,
        },
        at(0),
    );
    m.step(
        Input::ConnectFailed {
            conn: 1,
            fatal: true,
            error: "GET /gateway/bot failed: Discord refused the bot token (401)".into(),
        },
        at(5),
    );
    assert_eq!(
        (m.phase(), m.status("a").error.as_deref()),
        (
            Phase::Idle,
            Some("GET /gateway/bot failed: Discord refused the bot token (401)")
        )
    );
}

#[test]
fn a_failed_connect_backs_off() {
    let mut m = Machine::restore(Persisted::default(), 0);
    m.step(
        Input::Start {
            token: Some(TOKEN.into()),
            intents: None,
        },
        at(0),
    );
    let out = m.step(
        Input::ConnectFailed {
            conn: 1,
            fatal: false,
            error: "refused".into(),
        },
        at(5),
    );
    assert_eq!(out.last(), Some(&Action::Alarm(Some(755))));
    assert_eq!(m.phase(), Phase::Waiting);
}

#[test]
fn no_hello_in_time_reconnects() {
    let mut m = Machine::restore(Persisted::default(), 0);
    m.step(
        Input::Start {
            token: Some(TOKEN.into()),
            intents: None,
        },
        at(0),
    );
    let out = m.step(Input::Alarm, at(HANDSHAKE_TIMEOUT_MS));
    assert_eq!(
        out[0],
        Action::Close {
            code: CLOSE_RESUMABLE
        }
    );
    assert_eq!(m.phase(), Phase::Waiting);
}

#[test]
fn no_token_stays_idle_and_says_so() {
    let mut m = Machine::restore(Persisted::default(), 0);
    let out = m.step(
        Input::Start {
            token: None,
            intents: None,
        },
        at(0),
    );
    assert_eq!(out, vec![Action::Persist, Action::Status]);
    let s = m.status("a");
    assert_eq!(
        (s.connected, s.error.as_deref()),
        (false, Some("no bot token: start the account with config.botToken or set the DISCORD_BOT_TOKEN secret"))
    );
}

#[test]
fn stop_closes_for_good_and_forgets_the_session() {
    let mut m = ready_machine();
    let out = m.step(Input::Stop, at(50));
    assert_eq!(
        out,
        vec![
            Action::Close { code: 1000 },
            Action::Persist,
            Action::Status,
            Action::Alarm(None)
        ]
    );
    assert_eq!(
        (m.persisted().running, m.persisted().session_id.clone()),
        (false, None)
    );
}

#[test]
fn starting_again_with_the_same_token_keeps_the_session() {
    let mut m = ready_machine();
    let out = m.step(
        Input::Start {
            token: Some(TOKEN.into()),
            intents: None,
        },
        at(50),
    );
    assert_eq!(out, vec![]);
    assert_eq!(m.phase(), Phase::Ready);
}

#[test]
fn a_restored_running_account_resumes_on_its_first_alarm() {
    let p = ready_machine().persisted().clone();
    let mut m = Machine::restore(p, 1000);
    assert_eq!(m.phase(), Phase::Waiting);
    let out = m.step(Input::Alarm, at(1000));
    assert_eq!(
        out[0],
        Action::Connect {
            conn: 1,
            target: ConnectTarget::Resume("wss://resume.example/?v=10&encoding=json".into())
        }
    );
}

#[test]
fn messages_are_delivered_and_the_sequence_kept() {
    let mut m = ready_machine();
    let out = m.step(
        Input::Frame {
            conn: 1,
            text: &dm(2, "m2"),
        },
        at(20),
    );
    assert!(matches!(&out[0], Action::Deliver(msg) if msg.message_id == "m2" && msg.text == "hi"));
    assert_eq!(out[1], Action::Persist);
    assert_eq!(m.persisted().seq, Some(2));
}

#[test]
fn backoff_grows_and_caps() {
    assert_eq!(reconnect_delay_ms(0, 1.0), 1000);
    assert_eq!(reconnect_delay_ms(0, 0.0), 500);
    assert_eq!(reconnect_delay_ms(3, 1.0), 8000);
    assert_eq!(reconnect_delay_ms(30, 1.0), 60_000);
}
