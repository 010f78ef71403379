//! The machine's vocabulary: what it is told (`Input`), what it asks the
//! shell to do (`Action`), what it keeps across restarts (`Persisted`).

use gsv_protocol::channels::ChannelInboundMessage;
use serde::{Deserialize, Serialize};

/// What survives a restart of the Durable Object (its SQLite row, as
/// JSON: fields added later default, so older rows still load). The token
/// is here but never in a status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Persisted {
    pub token: Option<String>,
    pub intents: Option<u64>,
    /// Started and not stopped (nor stopped by a fatal close).
    pub running: bool,
    pub session_id: Option<String>,
    pub resume_url: Option<String>,
    pub seq: Option<u64>,
    pub bot_user_id: Option<String>,
    pub bot_username: Option<String>,
    pub error: Option<String>,
    pub last_activity: Option<i64>,
}

/// The current time and a uniform random number in [0, 1), given to every
/// step so the machine stays deterministic under test.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub now: i64,
    pub random: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No token, stopped, or stopped by a fatal close.
    Idle,
    /// A reconnect is due at `reconnect_at`.
    Waiting,
    /// The socket is being opened, or is open and HELLO has not come.
    Connecting,
    /// IDENTIFY sent, waiting for READY.
    Identifying,
    /// RESUME sent, waiting for RESUMED (and the replayed events).
    Resuming,
    Ready,
}

/// Where to open the next socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectTarget {
    /// A fresh session: ask `GET /gateway/bot` for the URL.
    Discover,
    /// The session's `resume_gateway_url` (already with `?v=10&encoding=json`).
    Resume(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Open socket number `conn` (its events carry this number; older
    /// sockets' events are ignored).
    Connect { conn: u64, target: ConnectTarget },
    /// Send a text frame on the current socket.
    Send(String),
    /// Close the current socket.
    Close { code: u16 },
    /// Point the alarm at this time, or clear it. Actions of one step may
    /// be performed while later steps run (the shell awaits between them),
    /// so the shell sets `Machine::alarm_at` as it is when it performs
    /// this, never a value a later step has replaced.
    Alarm(Option<i64>),
    /// Hand a message to the gateway.
    Deliver(Box<ChannelInboundMessage>),
    /// Write `persisted()` to storage.
    Persist,
    /// The status changed: tell the gateway.
    Status,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Input<'a> {
    /// (Re)start with this token (or none) and intents.
    Start {
        token: Option<String>,
        intents: Option<u64>,
    },
    Stop,
    Frame {
        conn: u64,
        text: &'a str,
    },
    Closed {
        conn: u64,
        code: u16,
    },
    /// The socket could not be opened. `fatal`: trying again cannot help
    /// (e.g. `GET /gateway/bot` refused the token with 401).
    ConnectFailed {
        conn: u64,
        fatal: bool,
        error: String,
    },
    Alarm,
}
