//! Nodes end to end: real `gsv node` processes offering tools to the real
//! gateway under workerd, the fake LLM asking for them.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{run_gsv, GatewayOptions, Node, Workerd};
use gsv_e2e::poll::{self, ms, secs};
use gsv_e2e::ws::{raw_node, Client};
use gsv_protocol::{ChatEvent, ChatState, Frame};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// How long started nodes get to connect.
const WAIT_FOR_NODES: Duration = Duration::from_secs(20);
const TOKEN: &str = "test-token";

/// The tool result messages the model received in its last request.
fn tool_results_sent(llm: &FakeLlm) -> Vec<Value> {
    let last = llm.requests().pop().expect("a model request");
    last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .cloned()
        .collect()
}

async fn setup() -> (FakeLlm, Workerd, Client) {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    (llm, gw, c)
}

fn final_text(events: &[ChatEvent]) -> String {
    let last = events.last().unwrap();
    assert_eq!(last.state, ChatState::Final, "{events:?}");
    last.message.as_ref().unwrap().text()
}

#[tokio::test]
async fn node_tools_answer_the_model_and_run_in_parallel() {
    let (llm, gw, mut c) = setup().await;
    let laptop = Node::start(&gw.url(), TOKEN, "laptop");
    let _server = Node::start(&gw.url(), TOKEN, "server");
    std::fs::write(laptop.workspace.join("notes.txt"), "alpha\nbeta\n").unwrap();
    c.wait_for_tools(
        &["laptop__Bash", "laptop__Read", "server__Grep"],
        WAIT_FOR_NODES,
    )
    .await;

    // One call, its result fed back to the model.
    llm.script(
        "read my notes",
        vec![
            Step::tool_call("call_r", "laptop__Read", json!({"path": "notes.txt"})),
            Step::text("You wrote alpha and beta."),
        ],
    );
    let run = c.chat_send("main", "read my notes").await;
    let events = c.run_events(&run).await;
    assert_eq!(final_text(&events), "You wrote alpha and beta.");
    let results = tool_results_sent(&llm);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["tool_call_id"], "call_r");
    let content: Value = serde_json::from_str(results[0]["content"].as_str().unwrap()).unwrap();
    assert_eq!(content["content"], "     1\talpha\n     2\tbeta");

    // Two slow calls on two machines in one turn: together, not one after
    // the other, and their results in the order of the calls.
    llm.script(
        "both machines",
        vec![
            Step::tool_calls(vec![
                (
                    "call_a",
                    "laptop__Bash",
                    json!({"command": "sleep 2; echo from-laptop"}),
                ),
                (
                    "call_b",
                    "server__Bash",
                    json!({"command": "sleep 2; echo from-server"}),
                ),
            ]),
            Step::text("Both answered."),
        ],
    );
    let started = Instant::now();
    let run = c.chat_send("main", "both machines").await;
    let events = c.run_events(&run).await;
    let took = started.elapsed();
    assert_eq!(final_text(&events), "Both answered.");
    assert!(
        took < Duration::from_millis(3500),
        "calls ran one after the other: {took:?}"
    );
    let all = tool_results_sent(&llm);
    let results = &all[all.len() - 2..];
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["call_a", "call_b"]);
    assert!(results[0]["content"]
        .as_str()
        .unwrap()
        .contains("from-laptop"));
    assert!(results[1]["content"]
        .as_str()
        .unwrap()
        .contains("from-server"));
}

#[tokio::test]
async fn a_killed_node_fails_its_calls_at_once() {
    let (llm, gw, mut c) = setup().await;
    let mut node = Node::start(&gw.url(), TOKEN, "laptop");
    c.wait_for_tools(&["laptop__Bash"], WAIT_FOR_NODES).await;
    llm.script(
        "long job",
        vec![
            Step::tool_call(
                "call_1",
                "laptop__Bash",
                json!({"command": "touch started; sleep 60"}),
            ),
            Step::text("The laptop went away."),
        ],
    );
    let run = c.chat_send("main", "long job").await;
    let marker = node.workspace.join("started");
    poll::until(secs(20), ms(50), async || {
        marker
            .exists()
            .then_some(())
            .ok_or("the command never started")
    })
    .await;
    let killed = Instant::now();
    node.kill();
    // The error result reaches the model at once, not at the call's timeout.
    poll::until(secs(10), ms(10), async || {
        (llm.requests().len() >= 2)
            .then_some(())
            .ok_or("the call was never failed")
    })
    .await;
    let took = killed.elapsed();
    assert!(took < Duration::from_secs(1), "the failure took {took:?}");
    let events = c.run_events(&run).await;
    assert_eq!(final_text(&events), "The laptop went away.");
    let results = tool_results_sent(&llm);
    assert_eq!(results[0]["content"], "Error: node laptop disconnected");
}

/// A node that answers one call twice at once: the model hears the first
/// answer only, and the second is acknowledged as dropped.
#[tokio::test]
async fn a_result_given_twice_reaches_the_model_once() {
    let (llm, gw, mut c) = setup().await;
    let mut node = raw_node(&gw.url(), TOKEN, "twice").await;
    c.wait_for_tools(&["twice__Hang"], WAIT_FOR_NODES).await;
    llm.script(
        "ask twice",
        vec![
            Step::tool_call("call_t", "twice__Hang", json!({})),
            Step::text("Heard it."),
        ],
    );
    let run = c.chat_send("main", "ask twice").await;
    loop {
        match node.next_frame().await.unwrap() {
            Frame::Evt(e) if e.event == "tool.invoke" => break,
            _ => {}
        }
    }
    for (id, text) in [("t1", "first"), ("t2", "second")] {
        let params = json!({"callId": "call_t", "result": text});
        let frame = Frame::request(id.to_string(), "tool.result", Some(params));
        node.send_text(frame.to_json()).await;
    }
    let mut acks = std::collections::BTreeMap::new();
    while acks.len() < 2 {
        if let Frame::Res(res) = node.next_frame().await.unwrap() {
            acks.insert(res.id, res.payload);
        }
    }
    assert_eq!(
        acks,
        [
            ("t1".to_string(), Some(json!({"ok": true}))),
            ("t2".to_string(), Some(json!({"ok": true, "dropped": true}))),
        ]
        .into()
    );
    let events = c.run_events(&run).await;
    assert_eq!(final_text(&events), "Heard it.");
    let results = tool_results_sent(&llm);
    assert_eq!(
        results.iter().map(|r| &r["content"]).collect::<Vec<_>>(),
        [&json!("first")]
    );
}

#[tokio::test]
async fn unanswered_calls_time_out_and_stray_results_are_dropped() {
    let (llm, gw, mut c) = setup().await;
    c.config_set("timeouts.toolMs", json!(1000)).await;
    let mut silent = raw_node(&gw.url(), TOKEN, "mute").await;
    llm.script(
        "ask the mute",
        vec![
            Step::tool_call("call_h", "mute__Hang", json!({})),
            Step::text("It did not answer."),
        ],
    );
    let run = c.chat_send("main", "ask the mute").await;
    let events = c.run_events(&run).await;
    assert_eq!(final_text(&events), "It did not answer.");
    assert_eq!(
        tool_results_sent(&llm)[0]["content"],
        "Error: mute__Hang did not answer within 1 s (timeouts.toolMs)"
    );

    // The node got the call; its late answer finds nobody waiting.
    let invoke = loop {
        match silent.next_frame().await.unwrap() {
            gsv_protocol::Frame::Evt(e) if e.event == "tool.invoke" => break e.payload.unwrap(),
            _ => {}
        }
    };
    assert_eq!(
        invoke,
        json!({"callId": "call_h", "tool": "Hang", "args": {}})
    );
    let late = silent
        .request(
            "tool.result",
            json!({"callId": "call_h", "result": "too late"}),
        )
        .await;
    assert_eq!(late.payload, Some(json!({"ok": true, "dropped": true})));

    // A client's own invoke times out too, answered by the gateway's alarm.
    let res = c
        .request("tool.invoke", json!({"tool": "mute__Hang", "args": {}}))
        .await;
    assert!(!res.ok);
    let err = res.error.unwrap();
    assert_eq!(
        err.message,
        "mute__… did not answer in time (timeouts.toolMs)"
    );

    // Unknown tools and nodes are refused at once.
    let res = c
        .request("tool.invoke", json!({"tool": "ghost__Bash"}))
        .await;
    assert_eq!(res.error.unwrap().message, "Node ghost is not connected");
    let res = c
        .request("tool.invoke", json!({"tool": "mute__Bash"}))
        .await;
    assert_eq!(res.error.unwrap().message, "Node mute has no tool Bash");
}

#[tokio::test]
async fn bad_node_registrations_are_refused_with_the_reason() {
    let gw = Workerd::start(GatewayOptions::default());
    let mut n = Client::open(&gw.url()).await;
    let params = json!({
        "minProtocol": 1, "maxProtocol": 1,
        "client": {"id": "box", "version": "test", "platform": "linux", "mode": "node"},
        "tools": [{"name": "Bash", "description": "shell", "inputSchema": {"type": "object"}}],
        "nodeRuntime": {"hostRole": "execution", "hostCapabilities": ["shell.exec"],
                        "toolCapabilities": {"Bash": ["shell.exec"]}},
        "auth": {"token": TOKEN}
    });
    let res = n.request("connect", params).await;
    let err = res.error.unwrap();
    assert_eq!(err.code, 103);
    assert_eq!(
        err.message,
        "An execution host must offer filesystem.list, filesystem.read, filesystem.write, shell.exec; missing filesystem.list, filesystem.read, filesystem.write"
    );
}

#[tokio::test]
async fn the_cli_lists_and_calls_node_tools() {
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    let node = Node::start(&gw.url(), TOKEN, "laptop");
    std::fs::write(node.workspace.join("hello.txt"), "hi there\n").unwrap();
    c.wait_for_tools(&["laptop__Read"], WAIT_FOR_NODES).await;

    let out = run_gsv(&gw.url(), TOKEN, &["tools", "list"]);
    assert!(out.status.success(), "{out:?}");
    let listing = String::from_utf8(out.stdout).unwrap();
    assert!(listing.contains("gsv__ReadFile"), "{listing}");
    for tool in ["Bash", "Process", "Read", "Write", "Edit", "Glob", "Grep"] {
        assert!(listing.contains(&format!("laptop__{tool} ")), "{listing}");
    }

    let out = run_gsv(
        &gw.url(),
        TOKEN,
        &[
            "tools",
            "call",
            "laptop__Bash",
            r#"{"command": "cat hello.txt"}"#,
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["status"], "completed");
    assert_eq!(result["exitCode"], 0);
    assert_eq!(result["output"], "hi there\n");

    // Outside the workspace is refused, saying why.
    let out = run_gsv(
        &gw.url(),
        TOKEN,
        &[
            "tools",
            "call",
            "laptop__Read",
            r#"{"path": "/etc/passwd"}"#,
        ],
    );
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("outside the node workspace"), "{err}");
}

#[tokio::test]
async fn stop_cancels_a_run_waiting_on_a_tool() {
    let (llm, gw, mut c) = setup().await;
    let _silent = raw_node(&gw.url(), TOKEN, "mute").await;
    llm.script(
        "hang forever",
        vec![Step::tool_call("call_h", "mute__Hang", json!({}))],
    );
    let run = c.chat_send("main", "hang forever").await;
    // Wait until the call is out (the model was asked once).
    poll::until(secs(20), ms(50), async || {
        (!llm.requests().is_empty())
            .then_some(())
            .ok_or("the model was never asked")
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let res = c.request("chat.abort", json!({"sessionKey": "main"})).await;
    assert_eq!(
        res.payload,
        Some(json!({"ok": true, "wasRunning": true, "runId": run, "pendingToolsCancelled": 1}))
    );
    let events = c.run_events(&run).await;
    assert_eq!(
        events.last().unwrap().error.as_deref(),
        Some("Run cancelled by user")
    );
    let res = c
        .request(
            "chat.send",
            json!({"sessionKey": "main", "message": "/stop"}),
        )
        .await;
    assert_eq!(
        res.payload,
        Some(
            json!({"status": "command", "command": "stop", "sessionKey": "agent:main:main",
            "response": "No run in progress."})
        )
    );
    // The session works afterwards.
    let run = c.chat_send("main", "still there?").await;
    assert_eq!(final_text(&c.run_events(&run).await), "echo: still there?");
}

#[tokio::test]
async fn runaway_tool_loops_end_with_a_clear_message() {
    let (llm, gw, mut c) = setup().await;
    c.config_set("tools.maxIterations", json!(2)).await;
    let _node = Node::start(&gw.url(), TOKEN, "laptop");
    c.wait_for_tools(&["laptop__Bash"], WAIT_FOR_NODES).await;
    let again = || Step::tool_call("call_x", "laptop__Bash", json!({"command": "true"}));
    llm.script("loop", vec![again(), again(), again()]);
    let run = c.chat_send("main", "loop").await;
    let text = final_text(&c.run_events(&run).await);
    assert_eq!(
        text,
        "I stopped after 2 model calls in this run without reaching an answer (the limit is tools.maxIterations = 2). Tell me to continue if you want me to keep going."
    );
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test]
async fn a_background_command_reports_back_to_its_session() {
    let (llm, gw, mut c) = setup().await;
    let _node = Node::start(&gw.url(), TOKEN, "laptop");
    c.wait_for_tools(&["laptop__Bash"], WAIT_FOR_NODES).await;
    llm.script(
        "build in the background",
        vec![
            Step::tool_call(
                "call_bg",
                "laptop__Bash",
                json!({"command": "sleep 1; echo build-ok", "background": true}),
            ),
            Step::text("Started the build."),
        ],
    );
    llm.script(
        "async_exec_completion",
        vec![Step::text("The build finished fine.")],
    );
    let run = c.chat_send("main", "build in the background").await;
    assert_eq!(final_text(&c.run_events(&run).await), "Started the build.");
    // The completion arrives as a run of its own.
    let evt = loop {
        let evt = c.next_chat().await;
        if matches!(evt.state, ChatState::Final | ChatState::Error) {
            break evt;
        }
    };
    assert_eq!(evt.message.unwrap().text(), "The build finished fine.");
    let last = llm.requests().pop().unwrap();
    let user = last.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        user.starts_with("System event: async_exec_completion\nBackground command "),
        "{user}"
    );
    assert!(user.contains("on node laptop finished."), "{user}");
    assert!(user.contains("build-ok"), "{user}");
}

#[tokio::test]
async fn a_call_in_flight_survives_a_gateway_restart() {
    let (llm, mut gw, mut c) = setup().await;
    let node = Node::start(&gw.url(), TOKEN, "laptop");
    c.wait_for_tools(&["laptop__Bash"], WAIT_FOR_NODES).await;
    llm.script(
        "slow job",
        vec![
            Step::tool_call(
                "call_s",
                "laptop__Bash",
                json!({"command": "touch started; sleep 4; echo survived"}),
            ),
            Step::text("It survived the restart."),
        ],
    );
    c.chat_send("main", "slow job").await;
    let marker = node.workspace.join("started");
    poll::until(secs(20), ms(50), async || {
        marker
            .exists()
            .then_some(())
            .ok_or("the command never started")
    })
    .await;
    // Gateway and session die with workerd while the call runs: nothing of
    // the run is in memory any more. The node finishes, reconnects, and
    // delivers the result to the gateway that still waits for it.
    c.close().await;
    gw.restart();
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    let messages = poll::until(secs(60), ms(250), async || {
        let preview = c
            .request("session.preview", json!({"sessionKey": "main", "limit": 2}))
            .await
            .payload
            .unwrap();
        let messages = preview["messages"].as_array().unwrap();
        if messages.last().is_some_and(|m| {
            m["role"] == "assistant" && m["content"][0]["text"] == "It survived the restart."
        }) {
            Ok(messages.clone())
        } else {
            Err(format!("the run never finished: {preview}"))
        }
    })
    .await;
    let result = &messages[0];
    assert_eq!(result["role"], "toolResult");
    assert_eq!(result["toolCallId"], "call_s");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("survived\\n"),
        "{result}\nnode log:\n{}\ngateway log:\n{}",
        node.log(),
        gw.log()
    );
    // The run resumed with the prompt it kept (read back from storage),
    // not one assembled again: the model got the same system prompt and
    // tools after the restart as before it.
    let requests = llm.requests();
    let [before, after] = [&requests[0].body, &requests[requests.len() - 1].body];
    assert_eq!(
        (&after["messages"][0], &after["tools"]),
        (&before["messages"][0], &before["tools"])
    );
    assert_eq!(after["messages"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn a_file_a_node_transfers_into_the_workspace_is_what_the_next_read_sees() {
    let (llm, gw, mut c) = setup().await;
    let laptop = Node::start(&gw.url(), TOKEN, "laptop");
    let soul = "# SOUL\nShipped from the laptop.\n";
    std::fs::write(laptop.workspace.join("SOUL.md"), soul).unwrap();
    c.wait_for_tools(&["laptop__Read", "gsv__Transfer"], WAIT_FOR_NODES)
        .await;
    // The first run writes the templates; the second lists the workspace,
    // so SOUL.md is read as that listing says until the workspace changes.
    for text in ["one", "two"] {
        let run = c.chat_send("main", text).await;
        final_text(&c.run_events(&run).await);
    }
    let read = |id: &str| Step::tool_call(id, "gsv__ReadFile", json!({"path": "SOUL.md"}));
    llm.script(
        "ship the soul",
        vec![
            read("r1"),
            Step::tool_call(
                "t1",
                "gsv__Transfer",
                json!({"source": "laptop:SOUL.md", "destination": "gsv:SOUL.md"}),
            ),
            read("r2"),
            Step::text("Done."),
        ],
    );
    let run = c.chat_send("main", "ship the soul").await;
    assert_eq!(final_text(&c.run_events(&run).await), "Done.");
    let contents: Vec<String> = tool_results_sent(&llm)
        .iter()
        .filter(|r| r["tool_call_id"] != "t1")
        .map(|r| {
            let read: Value = serde_json::from_str(r["content"].as_str().unwrap()).unwrap();
            read["content"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        contents,
        [
            include_str!("../../templates/workspace/SOUL.md").to_string(),
            soul.to_string()
        ]
    );
}

#[tokio::test]
async fn transfers_round_trip_byte_exact() {
    let (llm, gw, mut c) = setup().await;
    let laptop = Node::start(&gw.url(), TOKEN, "laptop");
    let server = Node::start(&gw.url(), TOKEN, "server");
    // Several chunks of bytes that are not text.
    let data: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::create_dir(laptop.workspace.join("build")).unwrap();
    std::fs::write(laptop.workspace.join("build/app.bin"), &data).unwrap();
    c.wait_for_tools(
        &["laptop__Read", "server__Read", "gsv__Transfer"],
        WAIT_FOR_NODES,
    )
    .await;

    let transfer = |id: &str, from: &str, to: &str| {
        Step::tool_call(
            id,
            "gsv__Transfer",
            json!({"source": from, "destination": to}),
        )
    };
    llm.script(
        "ship it",
        vec![
            transfer("t1", "laptop:build/app.bin", "gsv:artifacts/app.bin"),
            transfer("t2", "gsv:artifacts/app.bin", "server:incoming/app.bin"),
            transfer("t3", "server:incoming/app.bin", "laptop:back/app.bin"),
            Step::text("Shipped."),
        ],
    );
    let run = c.chat_send("main", "ship it").await;
    assert_eq!(final_text(&c.run_events(&run).await), "Shipped.");
    let got = std::fs::read(server.workspace.join("incoming/app.bin"));
    assert!(
        got.is_ok(),
        "{:?}\nserver log: {}",
        tool_results_sent(&llm),
        server.log()
    );
    assert_eq!(got.unwrap(), data);
    assert_eq!(
        std::fs::read(laptop.workspace.join("back/app.bin")).unwrap(),
        data
    );
    let all = tool_results_sent(&llm);
    let sha = {
        let out = std::process::Command::new("sha256sum")
            .arg(laptop.workspace.join("build/app.bin"))
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()[..64].to_string()
    };
    let results: Vec<Value> = all[all.len() - 3..]
        .iter()
        .map(|r| serde_json::from_str(r["content"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(
        results,
        [
            json!({"source": "laptop:build/app.bin", "destination": "gsv:artifacts/app.bin", "bytes": 300000, "sha256": sha}),
            json!({"source": "gsv:artifacts/app.bin", "destination": "server:incoming/app.bin", "bytes": 300000, "sha256": sha}),
            json!({"source": "server:incoming/app.bin", "destination": "laptop:back/app.bin", "bytes": 300000, "sha256": sha}),
        ]
    );

    // Over the limit: refused, and nothing is left at the destination.
    c.config_set("tools.maxTransferBytes", json!(1000)).await;
    llm.script(
        "too big",
        vec![
            transfer("t4", "laptop:build/app.bin", "server:big.bin"),
            Step::text("Too big."),
        ],
    );
    let run = c.chat_send("main", "too big").await;
    assert_eq!(final_text(&c.run_events(&run).await), "Too big.");
    let content = tool_results_sent(&llm).pop().unwrap()["content"].clone();
    assert!(
        content
            .as_str()
            .unwrap()
            .contains("the limit is 1000 (tools.maxTransferBytes)"),
        "{content}"
    );
    let mut left: Vec<String> = std::fs::read_dir(&server.workspace)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["incoming"]);
}

#[tokio::test]
async fn a_run_resumed_by_a_node_result_keeps_its_prompt() {
    let (llm, gw, mut c) = setup().await;
    let node = Node::start(&gw.url(), TOKEN, "laptop");
    c.wait_for_tools(&["laptop__Bash"], WAIT_FOR_NODES).await;
    llm.script(
        "wait a bit",
        vec![
            Step::tool_call(
                "call_w",
                "laptop__Bash",
                json!({"command": "touch started; sleep 1"}),
            ),
            Step::text("Waited."),
        ],
    );
    let run = c.chat_send("main", "wait a bit").await;
    let marker = node.workspace.join("started");
    poll::until(secs(20), ms(20), async || {
        marker
            .exists()
            .then_some(())
            .ok_or("the command never started")
    })
    .await;
    // The workspace changes while the run waits: the run still reads it
    // once, so both of its model calls get the same prompt.
    let res = c
        .request(
            "workspace.write",
            json!({"path": "SOUL.md", "content": "A soul written mid-run."}),
        )
        .await;
    assert!(res.ok, "{res:?}");
    assert_eq!(final_text(&c.run_events(&run).await), "Waited.");
    let prompts: Vec<Value> = llm
        .requests()
        .iter()
        .rev()
        .take(2)
        .map(|r| r.body["messages"][0]["content"].clone())
        .collect();
    assert_eq!(prompts[0], prompts[1]);
    assert!(!prompts[0]
        .as_str()
        .unwrap()
        .contains("A soul written mid-run."));
}

/// The next `tool.invoke` a raw node is sent: its payload.
async fn next_invoke(node: &mut Client) -> Value {
    loop {
        match node.next_frame().await.unwrap() {
            Frame::Evt(e) if e.event == "tool.invoke" => return e.payload.unwrap(),
            _ => {}
        }
    }
}

/// Scripts `prompt` as one `slow__Hang` call numbered `n`, then `text`.
fn script_hang(llm: &FakeLlm, prompt: &str, n: u32, text: &str) {
    llm.script(
        prompt,
        vec![
            Step::tool_call("call_same", "slow__Hang", json!({"n": n})),
            Step::text(text),
        ],
    );
}

/// Answers `call_same` with `result`, which a session takes.
async fn answer_same(node: &mut Client, result: &str) {
    let params = json!({"callId": "call_same", "result": result});
    let ack = node.request("tool.result", params).await;
    assert_eq!(ack.payload, Some(json!({"ok": true})));
}

/// Two sessions whose models name their calls alike: the second is refused
/// instead of taking over the first's route, so each answer reaches the
/// session that asked. A call id answered is free again for that session's
/// next turn.
#[tokio::test]
async fn a_call_id_out_for_one_session_is_not_taken_by_another() {
    let (llm, gw, mut c) = setup().await;
    let mut node = raw_node(&gw.url(), TOKEN, "slow").await;
    c.wait_for_tools(&["slow__Hang"], WAIT_FOR_NODES).await;
    let invoke = |n: u32| json!({"callId": "call_same", "tool": "Hang", "args": {"n": n}});
    script_hang(&llm, "first asks", 1, "First heard it.");
    script_hang(&llm, "second asks", 2, "Second was refused.");
    let first = c.chat_send("agent:main:first", "first asks").await;
    assert_eq!(next_invoke(&mut node).await, invoke(1));
    let second = c.chat_send("agent:main:second", "second asks").await;
    let events = c.run_events(&second).await;
    assert_eq!(final_text(&events), "Second was refused.");
    assert_eq!(
        tool_results_sent(&llm)[0]["content"],
        "Error: Call call_same is already out at a node"
    );

    answer_same(&mut node, "for the first").await;
    let events = c.run_events(&first).await;
    assert_eq!(final_text(&events), "First heard it.");
    assert_eq!(tool_results_sent(&llm)[0]["content"], "for the first");

    // The same id in the first session's next turn goes to the node again.
    script_hang(&llm, "first asks again", 3, "First heard it again.");
    let again = c.chat_send("agent:main:first", "first asks again").await;
    assert_eq!(next_invoke(&mut node).await, invoke(3));
    answer_same(&mut node, "again").await;
    let events = c.run_events(&again).await;
    assert_eq!(final_text(&events), "First heard it again.");
    let results = tool_results_sent(&llm);
    assert_eq!(results.last().unwrap()["content"], "again");
}
