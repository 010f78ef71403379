//! Node logs end to end: `logs.get` through the real gateway under
//! workerd to a real `gsv node`, which answers from its own JSONL log;
//! `gsv logs` (and `--follow`); and the protocol's edges with raw nodes:
//! who may answer, nodes that leave or are replaced, nodes that never
//! answer. Also `tool.request`, v1's socket form of a session's node call.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::harness::{gsv_bin, run_gsv, GatewayOptions, Node, Workerd};
use gsv_e2e::poll::{self, ms, secs};
use gsv_e2e::ws::{raw_node, Client};
use gsv_protocol::{Frame, ResponseFrame};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "test-token";
const WAIT_FOR_NODES: Duration = Duration::from_secs(20);

/// The node's log as lines.
fn log_lines(node: &Node) -> Vec<String> {
    node.log().lines().map(String::from).collect()
}

fn msg(line: &str) -> String {
    let v: Value = serde_json::from_str(line).unwrap();
    v["msg"].as_str().unwrap().to_string()
}

/// Where in the node's log the `n`-th (from the end, 1 = last) `logs.get`
/// entry is: the node writes it just after reading, so the lines it sent
/// are the ones right before it.
fn nth_last_logs_get(lines: &[String], n: usize) -> usize {
    let at: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| msg(l) == "logs.get")
        .map(|(i, _)| i)
        .collect();
    at[at.len() - n]
}

/// The next event named `name` a raw node receives.
async fn event(n: &mut Client, name: &str) -> Value {
    loop {
        match n.next_frame().await.unwrap() {
            Frame::Evt(e) if e.event == name => return e.payload.unwrap(),
            _ => {}
        }
    }
}

/// Sends a request and returns its id; the answer is read later.
async fn send(c: &mut Client, id: &str, method: &str, params: Value) {
    c.send_text(Frame::request(id, method, Some(params)).to_json())
        .await;
}

fn err(res: &ResponseFrame) -> (i64, String) {
    let e = res.error.clone().unwrap();
    (e.code, e.message)
}

#[tokio::test]
async fn a_real_nodes_log_through_the_gateway_and_gsv_logs() {
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    let node = Node::start(&gw.url(), TOKEN, "laptop");
    c.wait_for_tools(&["laptop__Bash"], WAIT_FOR_NODES).await;

    // The only node: no nodeId needed. The last line of a longer log.
    let res = c.request("logs.get", json!({"lines": 1})).await;
    let lines = log_lines(&node);
    let at = nth_last_logs_get(&lines, 1);
    assert!(at >= 2, "{lines:?}");
    assert_eq!(
        res.payload.unwrap(),
        json!({"nodeId": "laptop", "lines": lines[at - 1..at], "count": 1, "truncated": true})
    );
    // The default (100) holds the whole log so far.
    let res = c.request("logs.get", json!({"nodeId": "laptop"})).await;
    let lines = log_lines(&node);
    let at = nth_last_logs_get(&lines, 1);
    assert_eq!(
        res.payload.unwrap(),
        json!({"nodeId": "laptop", "lines": lines[..at], "count": at, "truncated": false})
    );
    assert_eq!(msg(&lines[0]), "node starting");

    // Bad requests are refused before any node is asked.
    let res = c.request("logs.get", json!({"lines": 0})).await;
    assert_eq!(
        err(&res),
        (400, "lines must be between 1 and 5000, not 0".into())
    );
    let res = c.request("logs.get", json!({"lines": 5001})).await;
    assert_eq!(
        err(&res),
        (400, "lines must be between 1 and 5000, not 5001".into())
    );
    let res = c.request("logs.get", json!({"nodeId": "server"})).await;
    assert_eq!(
        err(&res),
        (
            503,
            "Node server is not connected; connected: laptop".into()
        )
    );

    // `gsv logs`: the same lines, printed one a line.
    let out = run_gsv(&gw.url(), TOKEN, &["logs", "-n", "3"]);
    assert!(out.status.success(), "{out:?}");
    let lines = log_lines(&node);
    let at = nth_last_logs_get(&lines, 1);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{}\n", lines[at - 3..at].join("\n"))
    );
    let out = run_gsv(&gw.url(), TOKEN, &["logs", "--node", "server"]);
    assert!(!out.status.success());
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "error: Node server is not connected; connected: laptop (code 503)\n"
    );

    // `gsv logs --follow`: the tail, then only what is written afterwards.
    let config = tempfile::tempdir().unwrap();
    let mut follow = Command::new(gsv_bin())
        .args(["logs", "--node", "laptop", "-n", "2", "--follow"])
        .env("GSV_URL", gw.url())
        .env("GSV_TOKEN", TOKEN)
        .env("GSV_CONFIG_DIR", config.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = follow.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    let mut printed = vec![rx.recv_timeout(Duration::from_secs(30)).unwrap()];
    printed.push(rx.recv_timeout(Duration::from_secs(30)).unwrap());
    // A tool call makes the node write a line.
    let res = c
        .request(
            "tool.invoke",
            json!({"tool": "laptop__Bash", "args": {"command": "echo followed"}}),
        )
        .await;
    assert!(res.ok, "{res:?}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !printed.iter().any(|l| msg(l) == "tool call") {
        let left = deadline.saturating_duration_since(Instant::now());
        printed.push(
            rx.recv_timeout(left)
                .expect("the tool call was never printed"),
        );
    }
    let _ = follow.kill();
    let _ = follow.wait();
    // What was printed is one stretch of the log, each line once.
    let lines = log_lines(&node);
    let start = lines.iter().position(|l| *l == printed[0]).unwrap();
    assert_eq!(printed, lines[start..start + printed.len()]);
}

#[tokio::test]
async fn log_calls_go_to_the_node_asked_and_fail_at_once_when_it_leaves() {
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    let mut pi = raw_node(&gw.url(), TOKEN, "pi").await;
    let mut pc = raw_node(&gw.url(), TOKEN, "pc").await;

    // Two nodes: which one must be said.
    let res = c.request("logs.get", json!({})).await;
    assert_eq!(
        err(&res),
        (
            400,
            "nodeId is required: 2 nodes are connected (pc, pi)".into()
        )
    );

    // The node asked gets the event; its answer, cut to the lines asked
    // for, goes to the client.
    send(
        &mut c,
        "q1",
        "logs.get",
        json!({"nodeId": "pi", "lines": 2}),
    )
    .await;
    let evt = event(&mut pi, "logs.get").await;
    let call_id = evt["callId"].as_str().unwrap().to_string();
    assert_eq!(evt, json!({"callId": call_id, "lines": 2}));
    // Another node cannot answer for it.
    let res = pc
        .request(
            "logs.result",
            json!({"callId": call_id, "lines": ["forged"]}),
        )
        .await;
    assert_eq!(
        err(&res),
        (
            403,
            format!("Logs call {call_id} was sent to node pi, not to pc")
        )
    );
    let res = pi
        .request(
            "logs.result",
            json!({"callId": call_id, "lines": ["a", "b", "c"], "truncated": false}),
        )
        .await;
    assert_eq!(res.payload, Some(json!({"ok": true})));
    assert_eq!(
        c.response_to("q1").await.payload,
        Some(json!({"nodeId": "pi", "lines": ["b", "c"], "count": 2, "truncated": true}))
    );
    // Answered already: a second answer finds nobody.
    let res = pi
        .request("logs.result", json!({"callId": call_id, "lines": []}))
        .await;
    assert_eq!(res.payload, Some(json!({"ok": true, "dropped": true})));

    // A node that cannot read its log says why.
    send(&mut c, "q2", "logs.get", json!({"nodeId": "pi"})).await;
    let evt = event(&mut pi, "logs.get").await;
    assert_eq!(evt["lines"], 100);
    let res = pi
        .request(
            "logs.result",
            json!({"callId": evt["callId"], "error": "permission denied"}),
        )
        .await;
    assert_eq!(res.payload, Some(json!({"ok": true})));
    assert_eq!(
        err(&c.response_to("q2").await),
        (
            500,
            "Node pi could not read its log: permission denied".into()
        )
    );

    // Only clients ask and only nodes answer.
    let res = pi.request("logs.get", json!({"nodeId": "pc"})).await;
    assert_eq!(
        err(&res),
        (
            403,
            "Method logs.get is not allowed for node connections".into()
        )
    );
    let res = c.request("logs.result", json!({"callId": "x"})).await;
    assert_eq!(
        err(&res),
        (
            403,
            "Method logs.result is not allowed for client connections".into()
        )
    );

    // A node that disconnects fails its calls at once...
    send(&mut c, "q3", "logs.get", json!({"nodeId": "pc"})).await;
    event(&mut pc, "logs.get").await;
    let gone = Instant::now();
    pc.close().await;
    assert_eq!(
        err(&c.response_to("q3").await),
        (503, "Node pc disconnected before sending its log".into())
    );
    assert!(
        gone.elapsed() < Duration::from_secs(5),
        "{:?}",
        gone.elapsed()
    );

    // ...and so does one replaced by a newer connection of the same id.
    send(&mut c, "q4", "logs.get", json!({"nodeId": "pi"})).await;
    let old_call = event(&mut pi, "logs.get").await["callId"].clone();
    let replaced = Instant::now();
    let mut pi2 = raw_node(&gw.url(), TOKEN, "pi").await;
    assert_eq!(
        err(&c.response_to("q4").await),
        (
            503,
            "Node pi reconnected before sending its log; ask again".into()
        )
    );
    assert!(replaced.elapsed() < Duration::from_secs(5));
    // The new connection answers the calls sent to it, not the old ones.
    let res = pi2
        .request("logs.result", json!({"callId": old_call, "lines": ["x"]}))
        .await;
    assert_eq!(res.payload, Some(json!({"ok": true, "dropped": true})));
    send(&mut c, "q5", "logs.get", json!({"lines": 1})).await;
    let evt = event(&mut pi2, "logs.get").await;
    let res = pi2
        .request(
            "logs.result",
            json!({"callId": evt["callId"], "lines": ["fresh"]}),
        )
        .await;
    assert_eq!(res.payload, Some(json!({"ok": true})));
    assert_eq!(
        c.response_to("q5").await.payload,
        Some(json!({"nodeId": "pi", "lines": ["fresh"], "count": 1, "truncated": false}))
    );
}

#[tokio::test]
async fn a_node_that_never_answers_times_out_after_20_seconds() {
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    let mut mute = raw_node(&gw.url(), TOKEN, "mute").await;
    let asked = Instant::now();
    send(&mut c, "q", "logs.get", json!({"nodeId": "mute"})).await;
    let evt = event(&mut mute, "logs.get").await;
    let res = c.response_to("q").await;
    let took = asked.elapsed();
    assert_eq!(
        err(&res),
        (503, "Node mute did not send its log within 20 s".into())
    );
    assert!(
        took >= Duration::from_secs(19) && took < Duration::from_secs(28),
        "{took:?}"
    );
    // Its late answer finds nobody waiting.
    let res = mute
        .request(
            "logs.result",
            json!({"callId": evt["callId"], "lines": ["late"]}),
        )
        .await;
    assert_eq!(res.payload, Some(json!({"ok": true, "dropped": true})));
}

#[tokio::test]
async fn tool_request_sends_a_call_whose_result_goes_to_the_session() {
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    let node = Node::start(&gw.url(), TOKEN, "laptop");
    c.wait_for_tools(&["laptop__Bash"], WAIT_FOR_NODES).await;

    let params = json!({"callId": "req-1", "tool": "laptop__Bash",
                        "args": {"command": "sleep 1; echo ran > marker"}, "sessionKey": "main"});
    let res = c.request("tool.request", params.clone()).await;
    assert_eq!(res.payload, Some(json!({"status": "sent"})));
    // While it is out, its call id cannot be taken over.
    let res = c.request("tool.request", params).await;
    assert_eq!(
        err(&res),
        (409, "Call req-1 is already out at a node".into())
    );
    // The real node ran it...
    let marker = node.workspace.join("marker");
    poll::until(secs(20), ms(50), async || {
        marker.exists().then_some(()).ok_or("the command never ran")
    })
    .await;
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "ran\n");
    // ...and its result went to the session, which waited for no such
    // call: nothing was added to its history.
    poll::until(secs(20), ms(50), async || {
        let logged = log_lines(&node)
            .iter()
            .any(|l| msg(l) == "tool call" && l.contains("\"req-1\""));
        logged
            .then_some(())
            .ok_or("the node never finished the call")
    })
    .await;
    let res = c
        .request("session.preview", json!({"sessionKey": "main"}))
        .await;
    assert_eq!(res.payload.unwrap()["messageCount"], 0);

    // Unknown tools and nodes, empty ids; and nodes may not send calls.
    let res = c
        .request(
            "tool.request",
            json!({"callId": "r2", "tool": "ghost__Bash", "args": {}, "sessionKey": "main"}),
        )
        .await;
    assert_eq!(err(&res), (503, "Node ghost is not connected".into()));
    let res = c
        .request(
            "tool.request",
            json!({"callId": " ", "tool": "laptop__Bash", "args": {}, "sessionKey": "main"}),
        )
        .await;
    assert_eq!(err(&res), (400, "callId must not be empty".into()));
    let mut other = raw_node(&gw.url(), TOKEN, "pi").await;
    let res = other
        .request(
            "tool.request",
            json!({"callId": "r3", "tool": "laptop__Bash", "args": {}, "sessionKey": "main"}),
        )
        .await;
    assert_eq!(
        err(&res),
        (
            403,
            "Method tool.request is not allowed for node connections".into()
        )
    );
}
