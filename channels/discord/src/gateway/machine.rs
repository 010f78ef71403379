//! The Discord gateway session as a pure state machine: inputs (socket
//! opened, frame, closed, alarm, start, stop) in, typed actions out. The
//! Durable Object only performs the actions, so every path of the protocol
//! (HELLO, IDENTIFY/RESUME, heartbeats and their ACKs, op 7, op 9, close
//! codes, backoff) is tested natively.

use super::close::{after_close, AfterClose};
use super::payload::{self, op, Frame, Hello, Message, Ready};
use crate::inbound::normalize;
use gsv_protocol::channels::ChannelAccountStatus;
use serde_json::json;

pub use super::io::{Action, Clock, ConnectTarget, Input, Persisted, Phase};

/// A connection that has not said HELLO, or a handshake not answered by
/// READY/RESUMED, within this long is dropped and retried.
pub const HANDSHAKE_TIMEOUT_MS: i64 = 30_000;
/// The close code for connections this side drops but wants to RESUME:
/// anything but 1000/1001, which would invalidate the session.
pub const CLOSE_RESUMABLE: u16 = 4000;
const BACKOFF_BASE_MS: f64 = 1_000.0;
const BACKOFF_MAX_MS: f64 = 60_000.0;

#[derive(Debug)]
pub struct Machine {
    p: Persisted,
    phase: Phase,
    conn: u64,
    interval: Option<u64>,
    next_beat: Option<i64>,
    awaiting_ack: bool,
    reconnect_at: Option<i64>,
    handshake_deadline: Option<i64>,
    failures: u32,
    alarm: Option<i64>,
}

impl Machine {
    /// A machine from stored state: a running account reconnects (and
    /// resumes) on the first alarm.
    pub fn restore(p: Persisted, now: i64) -> Self {
        let running = p.running && p.token.is_some();
        Self {
            p,
            phase: if running { Phase::Waiting } else { Phase::Idle },
            conn: 0,
            interval: None,
            next_beat: None,
            awaiting_ack: false,
            reconnect_at: running.then_some(now),
            handshake_deadline: None,
            failures: 0,
            alarm: None,
        }
    }

    pub fn persisted(&self) -> &Persisted {
        &self.p
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// When the alarm should fire now (see [`Action::Alarm`]).
    pub fn alarm_at(&self) -> Option<i64> {
        self.alarm
    }

    /// The number of the socket the machine currently wants.
    pub fn conn(&self) -> u64 {
        self.conn
    }

    pub fn token(&self) -> Option<&str> {
        self.p.token.as_deref()
    }

    /// The account's status, without the token.
    pub fn status(&self, account_id: &str) -> ChannelAccountStatus {
        let ready = self.phase == Phase::Ready;
        ChannelAccountStatus {
            account_id: account_id.to_string(),
            connected: ready,
            authenticated: ready,
            mode: Some("gateway".into()),
            last_activity: self.p.last_activity,
            error: self.p.error.clone(),
            extra: Some(json!({
                "phase": format!("{:?}", self.phase).to_lowercase(),
                "botUserId": self.p.bot_user_id,
                "botUsername": self.p.bot_username,
                "hasToken": self.p.token.is_some(),
            })),
        }
    }

    /// One input; the actions to perform, in order.
    pub fn step(&mut self, input: Input<'_>, clock: Clock) -> Vec<Action> {
        let mut out = Vec::new();
        match input {
            Input::Start { token, intents } => self.start(token, intents, clock, &mut out),
            Input::Stop => self.stop(&mut out),
            Input::Frame { conn, text } if conn == self.conn && self.socket_open() => {
                self.frame(text, clock, &mut out)
            }
            Input::Closed { conn, code } if conn == self.conn && self.socket_open() => {
                self.closed(code, clock, &mut out)
            }
            Input::ConnectFailed { conn, fatal, error }
                if conn == self.conn && self.phase == Phase::Connecting =>
            {
                if fatal {
                    self.fatal(error, &mut out);
                } else {
                    self.set_error(Some(format!("connecting failed: {error}")), &mut out);
                    self.backoff(clock);
                }
            }
            Input::Alarm => self.alarm_fired(clock, &mut out),
            // Events of a socket this side already left behind.
            _ => {}
        }
        self.schedule(&mut out);
        out
    }

    fn socket_open(&self) -> bool {
        !matches!(self.phase, Phase::Idle | Phase::Waiting)
    }

    fn start(
        &mut self,
        token: Option<String>,
        intents: Option<u64>,
        clock: Clock,
        out: &mut Vec<Action>,
    ) {
        let same = token.is_some() && token == self.p.token && intents == self.p.intents;
        if same && self.p.running && self.phase != Phase::Idle {
            return; // already running with these settings: keep the session
        }
        if self.socket_open() {
            out.push(Action::Close { code: 1000 });
        }
        if !same {
            self.forget_session();
        }
        self.p.token = token;
        self.p.intents = intents;
        self.failures = 0;
        self.reset_socket_state();
        if self.p.token.is_none() {
            self.p.running = false;
            self.phase = Phase::Idle;
            self.p.error = Some(
                "no bot token: start the account with config.botToken or set the DISCORD_BOT_TOKEN secret"
                    .into(),
            );
        } else {
            self.p.running = true;
            self.p.error = None;
            self.open_socket(clock.now, out);
        }
        out.push(Action::Persist);
        out.push(Action::Status);
    }

    fn stop(&mut self, out: &mut Vec<Action>) {
        if self.socket_open() {
            // 1000 ends the session on Discord's side too: a stop is final.
            out.push(Action::Close { code: 1000 });
        }
        self.p.running = false;
        self.forget_session();
        self.reset_socket_state();
        self.phase = Phase::Idle;
        out.push(Action::Persist);
        out.push(Action::Status);
    }

    fn frame(&mut self, text: &str, clock: Clock, out: &mut Vec<Action>) {
        let Ok(frame) = serde_json::from_str::<Frame>(text) else {
            return; // not a gateway payload; Discord never sends one
        };
        self.p.last_activity = Some(clock.now);
        match frame.op {
            op::HELLO => self.hello(frame, clock, out),
            op::HEARTBEAT_ACK => self.awaiting_ack = false,
            // The gateway may ask for a beat at once.
            op::HEARTBEAT => out.push(Action::Send(payload::heartbeat(self.p.seq))),
            op::RECONNECT => self.drop_and_resume(clock.now, out),
            op::INVALID_SESSION => {
                if frame.d.as_bool() == Some(true) {
                    self.drop_and_resume(clock.now, out);
                } else {
                    // Not resumable: the session is gone. Discord asks for
                    // a fresh IDENTIFY after 1-5 s; it comes on a new
                    // connection, since this one may already count as
                    // identified (a second IDENTIFY on it is a 4005).
                    out.push(Action::Close {
                        code: CLOSE_RESUMABLE,
                    });
                    if self.phase == Phase::Ready {
                        out.push(Action::Status);
                    }
                    self.forget_session();
                    out.push(Action::Persist);
                    self.reset_socket_state();
                    self.phase = Phase::Waiting;
                    self.reconnect_at = Some(clock.now + 1_000 + (clock.random * 4_000.0) as i64);
                }
            }
            op::DISPATCH => self.dispatch(frame, out),
            _ => {}
        }
    }

    fn hello(&mut self, frame: Frame, clock: Clock, out: &mut Vec<Action>) {
        let Ok(hello) = serde_json::from_value::<Hello>(frame.d) else {
            return;
        };
        self.interval = Some(hello.heartbeat_interval);
        // The first beat is jittered so a fleet of clients does not beat in step.
        self.next_beat = Some(clock.now + (hello.heartbeat_interval as f64 * clock.random) as i64);
        self.awaiting_ack = false;
        let token = self.p.token.clone().unwrap_or_default();
        match (&self.p.session_id, self.phase) {
            (Some(session), Phase::Connecting) if self.p.resume_url.is_some() => {
                out.push(Action::Send(payload::resume(&token, session, self.p.seq)));
                self.phase = Phase::Resuming;
            }
            _ => {
                out.push(Action::Send(payload::identify(
                    &token,
                    self.p.intents.unwrap_or(payload::intents::DEFAULT),
                )));
                self.phase = Phase::Identifying;
            }
        }
        self.handshake_deadline = Some(clock.now + HANDSHAKE_TIMEOUT_MS);
    }

    fn dispatch(&mut self, frame: Frame, out: &mut Vec<Action>) {
        if let Some(s) = frame.s {
            self.p.seq = Some(s);
        }
        match frame.t.as_deref() {
            Some("READY") => {
                if let Ok(ready) = serde_json::from_value::<Ready>(frame.d) {
                    self.p.session_id = Some(ready.session_id);
                    self.p.resume_url = Some(payload::connect_url(&ready.resume_gateway_url));
                    self.p.bot_user_id = Some(ready.user.id);
                    self.p.bot_username = Some(ready.user.username);
                    self.became_ready(out);
                }
            }
            Some("RESUMED") => self.became_ready(out),
            Some("MESSAGE_CREATE") => {
                if let Ok(msg) = serde_json::from_value::<Message>(frame.d) {
                    if let Some(m) = normalize(&msg, self.p.bot_user_id.as_deref()) {
                        out.push(Action::Deliver(Box::new(m)));
                    }
                }
            }
            _ => {}
        }
        out.push(Action::Persist);
    }

    fn became_ready(&mut self, out: &mut Vec<Action>) {
        self.phase = Phase::Ready;
        self.failures = 0;
        self.handshake_deadline = None;
        self.p.error = None;
        out.push(Action::Status);
    }

    fn closed(&mut self, code: u16, clock: Clock, out: &mut Vec<Action>) {
        let was_ready = self.phase == Phase::Ready;
        match after_close(code) {
            AfterClose::Fatal(why) => {
                self.fatal(
                    format!("Discord closed the gateway with code {code} ({why}); not reconnecting until the account is started again"),
                    out,
                );
                return;
            }
            AfterClose::Reidentify => {
                self.forget_session();
                out.push(Action::Persist);
            }
            AfterClose::Resume => {}
        }
        self.set_error(
            Some(format!("the gateway closed with code {code}; reconnecting")),
            out,
        );
        if was_ready {
            out.push(Action::Status);
        }
        self.backoff(clock);
    }

    fn alarm_fired(&mut self, clock: Clock, out: &mut Vec<Action>) {
        let now = clock.now;
        let due = |at: Option<i64>| at.is_some_and(|at| at <= now);
        if self.phase == Phase::Waiting && due(self.reconnect_at) {
            self.open_socket(clock.now, out);
            return;
        }
        if due(self.handshake_deadline) {
            out.push(Action::Close {
                code: CLOSE_RESUMABLE,
            });
            self.set_error(
                Some("the gateway did not complete the handshake in time; reconnecting".into()),
                out,
            );
            self.backoff(clock);
            return;
        }
        if due(self.next_beat) {
            if self.awaiting_ack {
                // No ACK since the last beat: a zombied connection.
                self.drop_and_resume(clock.now, out);
                self.set_error(
                    Some("no heartbeat ACK from the gateway; reconnecting".into()),
                    out,
                );
                return;
            }
            out.push(Action::Send(payload::heartbeat(self.p.seq)));
            self.awaiting_ack = true;
            self.next_beat = self.interval.map(|i| now + i as i64);
        }
    }

    /// Closes the socket (resumably) and opens the next at once.
    fn drop_and_resume(&mut self, now: i64, out: &mut Vec<Action>) {
        out.push(Action::Close {
            code: CLOSE_RESUMABLE,
        });
        if self.phase == Phase::Ready {
            out.push(Action::Status);
        }
        self.open_socket(now, out);
    }

    /// Opens the next socket; the handshake deadline is its watchdog until
    /// HELLO, then until READY/RESUMED.
    fn open_socket(&mut self, now: i64, out: &mut Vec<Action>) {
        self.reset_socket_state();
        self.conn += 1;
        self.phase = Phase::Connecting;
        let target = match (&self.p.session_id, &self.p.resume_url) {
            (Some(_), Some(url)) => ConnectTarget::Resume(url.clone()),
            _ => ConnectTarget::Discover,
        };
        out.push(Action::Connect {
            conn: self.conn,
            target,
        });
        self.handshake_deadline = Some(now + HANDSHAKE_TIMEOUT_MS);
    }

    fn backoff(&mut self, clock: Clock) {
        self.reset_socket_state();
        self.phase = Phase::Waiting;
        self.reconnect_at = Some(clock.now + reconnect_delay_ms(self.failures, clock.random));
        self.failures = self.failures.saturating_add(1);
    }

    fn fatal(&mut self, why: String, out: &mut Vec<Action>) {
        self.reset_socket_state();
        self.phase = Phase::Idle;
        self.p.running = false;
        self.forget_session();
        self.p.error = Some(why);
        out.push(Action::Persist);
        out.push(Action::Status);
    }

    fn set_error(&mut self, error: Option<String>, out: &mut Vec<Action>) {
        if self.p.error != error {
            self.p.error = error;
            out.push(Action::Persist);
        }
    }

    fn forget_session(&mut self) {
        self.p.session_id = None;
        self.p.resume_url = None;
        self.p.seq = None;
    }

    fn reset_socket_state(&mut self) {
        self.interval = None;
        self.next_beat = None;
        self.awaiting_ack = false;
        self.reconnect_at = None;
        self.handshake_deadline = None;
    }

    /// The alarm goes to the earliest deadline; a connecting socket gets
    /// the handshake timeout as its watchdog.
    fn schedule(&mut self, out: &mut Vec<Action>) {
        let next = [self.reconnect_at, self.next_beat, self.handshake_deadline]
            .into_iter()
            .flatten()
            .min();
        if next != self.alarm {
            self.alarm = next;
            out.push(Action::Alarm(next));
        }
    }
}

/// Exponential backoff with jitter: 1 s, 2 s, 4 s … up to 60 s, each
/// between half and all of that.
pub fn reconnect_delay_ms(failures: u32, random: f64) -> i64 {
    let full = (BACKOFF_BASE_MS * 2f64.powi(failures.min(16) as i32)).min(BACKOFF_MAX_MS);
    (full * (0.5 + random / 2.0)) as i64
}

#[cfg(test)]
#[path = "machine_tests.rs"]
mod tests;
