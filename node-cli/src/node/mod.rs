//! `gsv node --foreground`: connects to the gateway as a node, runs the
//! tool calls it sends (each in its own task, so calls run in parallel),
//! answers the gateway's bin probes (`probe.rs`) and log requests
//! (`logs.rs`), and reconnects after drops with exponential backoff and
//! jitter. Results and background-command events are kept in an outbox
//! until the gateway acknowledges them, so a call that finishes while the
//! link is down is delivered after the reconnect.

mod backoff;
mod logs;
mod outbox;
mod probe;
mod transfer;

use crate::connection::{ConnectError, Connection, Identity, Inbound, RequestError};
use crate::logs::NodeLog;
use crate::tools::{Toolbox, Workspace};
use backoff::Backoff;
use gsv_protocol::transfer::{
    TransferCancelEvent, TransferEndEvent, TransferReceiveEvent, TransferSendEvent,
};
use gsv_protocol::{
    event, EventFrame, LogsGetEvent, NodeProbeEvent, ToolInvokeEvent, ToolResultParams,
};
use outbox::{Outbox, Outgoing};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use transfer::Transfers;

/// A ping goes out after this much silence from the gateway...
const PING_AFTER: Duration = Duration::from_secs(20);
/// ...and the link is declared dead after this much.
const DEAD_AFTER: Duration = Duration::from_secs(45);
/// Unacknowledged items are retried this often while connected.
const RETRY_EVERY: Duration = Duration::from_secs(5);
/// How long one delivery waits for the gateway's answer.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(20);

pub struct NodeOptions {
    pub url: String,
    pub token: Option<String>,
    pub id: String,
    pub workspace: PathBuf,
    /// False when the operator allowed paths outside the workspace.
    pub confine: bool,
}

/// What comes back to the main loop from the tasks it spawns.
enum Report {
    /// A finished call or a background-command event, to deliver.
    Owed(Outgoing),
    /// The gateway took it, or refused it for good.
    Settled(Outgoing),
    /// The delivery failed with the link: keep it for later.
    Unsent(Outgoing),
}

/// Runs until Ctrl-C or SIGTERM (then ends the commands it started), or
/// until a configuration error that retrying cannot fix.
pub async fn run(opts: NodeOptions, log: NodeLog) -> anyhow::Result<()> {
    let (toolbox, exec_events) = Toolbox::new(opts.workspace.clone(), opts.confine)
        .map_err(|e| anyhow::anyhow!("workspace {}: {e}", opts.workspace.display()))?;
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let result = tokio::select! {
        r = serve_forever(&opts, &toolbox, exec_events, &log) => r,
        _ = tokio::signal::ctrl_c() => Ok(()),
        _ = term.recv() => Ok(()),
    };
    // Background commands run in process groups of their own: end them.
    toolbox.shutdown().await;
    log.info("node stopped", json!({"nodeId": opts.id}));
    result
}

async fn serve_forever(
    opts: &NodeOptions,
    toolbox: &Toolbox,
    mut exec_events: mpsc::UnboundedReceiver<gsv_protocol::NodeExecEventParams>,
    log: &NodeLog,
) -> anyhow::Result<()> {
    let workspace = Arc::new(
        Workspace::new(opts.workspace.clone(), opts.confine)
            .map_err(|e| anyhow::anyhow!("workspace {}: {e}", opts.workspace.display()))?,
    );
    let identity = Identity::Node {
        id: opts.id.clone(),
        tools: toolbox.definitions(),
        runtime: toolbox.runtime_info(),
    };
    let (reports, mut inbox) = mpsc::unbounded_channel::<Report>();
    {
        // Background-command events join the outbox like results.
        let reports = reports.clone();
        tokio::spawn(async move {
            while let Some(ev) = exec_events.recv().await {
                let _ = reports.send(Report::Owed(Outgoing::ExecEvent(ev)));
            }
        });
    }
    log.info(
        "node starting",
        json!({"nodeId": opts.id, "workspace": toolbox.workspace(), "confined": opts.confine, "url": opts.url}),
    );
    let mut outbox = Outbox::default();
    let mut backoff = Backoff::default();
    loop {
        match Connection::connect_as(&opts.url, opts.token.as_deref(), &identity).await {
            Ok(conn) => {
                backoff.reset();
                log.info(
                    "connected",
                    json!({"nodeId": opts.id, "owed": outbox.len()}),
                );
                let conn = Arc::new(conn);
                let mut transfers = Transfers::new(workspace.clone());
                let link = Link {
                    conn: &conn,
                    toolbox,
                    reports: &reports,
                    log,
                };
                let why = serve(&link, &mut outbox, &mut transfers, &mut inbox).await;
                log.warn("disconnected", json!({"reason": why}));
            }
            Err(e @ (ConnectError::Invalid { .. } | ConnectError::InvalidUrl { .. })) => {
                log.error("connect refused", json!({"error": e.to_string()}));
                return Err(e.into());
            }
            Err(e) => log.warn("connect failed", json!({"error": e.to_string()})),
        }
        let wait = backoff.next_delay();
        log.info("reconnecting", json!({"inMs": wait.as_millis() as u64}));
        // Calls finishing meanwhile are kept for the next connection.
        let sleep = tokio::time::sleep(wait);
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                _ = &mut sleep => break,
                Some(report) = inbox.recv() => keep(&mut outbox, report),
            }
        }
    }
}

fn keep(outbox: &mut Outbox, report: Report) {
    match report {
        Report::Owed(item) | Report::Unsent(item) => outbox.push(item),
        Report::Settled(item) => outbox.settled(&item),
    }
}

/// What one connection's handlers share.
struct Link<'a> {
    conn: &'a Arc<Connection>,
    toolbox: &'a Toolbox,
    reports: &'a mpsc::UnboundedSender<Report>,
    log: &'a NodeLog,
}

/// Serves one connection until it ends; returns why it ended. Transfers
/// being received end with it (their partial files are deleted).
async fn serve(
    link: &Link<'_>,
    outbox: &mut Outbox,
    transfers: &mut Transfers,
    inbox: &mut mpsc::UnboundedReceiver<Report>,
) -> String {
    let Link { conn, reports, .. } = *link;
    let Some(mut inbound) = conn.take_inbound() else {
        return "the connection's events were already taken".into();
    };
    let mut tick = tokio::time::interval(RETRY_EVERY.min(PING_AFTER));
    let mut last_retry = tokio::time::Instant::now();
    deliver_ready(conn, outbox, reports);
    loop {
        tokio::select! {
            reason = conn.closed() => return reason.to_string(),
            item = inbound.recv() => match item {
                Some(Inbound::Binary(frame)) => transfers.chunk(&frame),
                Some(Inbound::Event(evt)) => on_event(link, outbox, transfers, evt),
                None => return "event stream ended".into(),
            },
            Some(report) = inbox.recv() => {
                let fresh = matches!(report, Report::Owed(_) | Report::Settled(_));
                keep(outbox, report);
                if fresh {
                    deliver_ready(conn, outbox, reports);
                }
            }
            _ = tick.tick() => {
                let idle = conn.idle_for();
                if idle >= DEAD_AFTER {
                    return format!("no answer from the gateway for {} s", idle.as_secs());
                }
                if idle >= PING_AFTER {
                    conn.ping();
                }
                if last_retry.elapsed() >= RETRY_EVERY && outbox.len() > 0 {
                    last_retry = tokio::time::Instant::now();
                    deliver_ready(conn, outbox, reports);
                }
            }
        }
    }
}

/// One event from the gateway; a malformed one is logged and ignored.
fn on_event(link: &Link<'_>, outbox: &mut Outbox, transfers: &mut Transfers, evt: EventFrame) {
    fn parse<T: serde::de::DeserializeOwned>(evt: EventFrame, log: &NodeLog) -> Option<T> {
        let name = evt.event.clone();
        match serde_json::from_value(evt.payload.unwrap_or_default()) {
            Ok(v) => Some(v),
            Err(e) => {
                log.warn(
                    "malformed event",
                    json!({"event": name, "error": e.to_string()}),
                );
                None
            }
        }
    }
    let log = link.log;
    let report_status = |st| {
        let conn = link.conn.clone();
        tokio::spawn(async move { transfer::status(&conn, st).await });
    };
    match evt.event.as_str() {
        event::TOOL_INVOKE => {
            if let Some(call) = parse::<ToolInvokeEvent>(evt, log) {
                outbox.call_started(&call.call_id);
                spawn_call(link.toolbox, call, link.reports, log);
            }
        }
        event::NODE_PROBE => {
            // Its own task: a slow login shell must not hold up tool calls.
            if let Some(e) = parse::<NodeProbeEvent>(evt, log) {
                let (conn, log) = (link.conn.clone(), log.clone());
                tokio::spawn(async move { probe::run(&conn, e, &log).await });
            }
        }
        event::LOGS_GET => {
            if let Some(e) = parse::<LogsGetEvent>(evt, log) {
                let (conn, log) = (link.conn.clone(), log.clone());
                tokio::spawn(async move { logs::run(&conn, e, &log).await });
            }
        }
        event::TRANSFER_SEND => {
            if let Some(e) = parse::<TransferSendEvent>(evt, log) {
                log.info(
                    "transfer out",
                    json!({"transferId": e.transfer_id, "path": e.path}),
                );
                transfers.send(link.conn.clone(), e);
            }
        }
        event::TRANSFER_RECEIVE => {
            if let Some(e) = parse::<TransferReceiveEvent>(evt, log) {
                log.info(
                    "transfer in",
                    json!({"transferId": e.transfer_id, "path": e.path, "size": e.size}),
                );
                if let Err(st) = transfers.receive(&e) {
                    report_status(st);
                }
            }
        }
        event::TRANSFER_END => {
            if let Some(e) = parse::<TransferEndEvent>(evt, log) {
                let st = transfers.end(&e);
                log.info(
                    "transfer end",
                    json!({"transferId": e.transfer_id, "state": st.state, "error": st.error}),
                );
                report_status(st);
            }
        }
        event::TRANSFER_CANCEL => {
            if let Some(e) = parse::<TransferCancelEvent>(evt, log) {
                log.warn(
                    "transfer cancelled",
                    json!({"transferId": e.transfer_id, "reason": e.reason}),
                );
                transfers.cancel(e.transfer_id);
            }
        }
        _ => {}
    }
}

fn spawn_call(
    toolbox: &Toolbox,
    call: ToolInvokeEvent,
    reports: &mpsc::UnboundedSender<Report>,
    log: &NodeLog,
) {
    let (toolbox, reports, log) = (toolbox.clone(), reports.clone(), log.clone());
    tokio::spawn(async move {
        let started = std::time::Instant::now();
        let outcome = toolbox
            .call(&call.tool, call.args, Some(&call.call_id))
            .await;
        log.info(
            "tool call",
            json!({"callId": call.call_id, "tool": call.tool, "ok": outcome.is_ok(),
                   "ms": started.elapsed().as_millis() as u64}),
        );
        let params = ToolResultParams::answer(call.call_id, outcome);
        let _ = reports.send(Report::Owed(Outgoing::ToolResult(params)));
    });
}

/// Sends every item that may go now, each in its own task.
fn deliver_ready(
    conn: &Arc<Connection>,
    outbox: &mut Outbox,
    reports: &mpsc::UnboundedSender<Report>,
) {
    for item in outbox.take_ready() {
        let (conn, reports) = (conn.clone(), reports.clone());
        tokio::spawn(async move {
            let sent = item.send(&conn, DELIVERY_TIMEOUT).await;
            let report = match sent {
                Ok(_) => Report::Settled(item),
                // The gateway asks for a retry (its session was unreachable).
                Err(RequestError::Gateway(e)) if e.retryable == Some(true) => Report::Unsent(item),
                // Refused for good (a malformed result, a call of another node).
                Err(RequestError::Gateway(_)) => Report::Settled(item),
                Err(_) => Report::Unsent(item),
            };
            let _ = reports.send(report);
        });
    }
}
