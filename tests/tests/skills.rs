//! Skill bin probes end to end: a real `gsv node` is probed when it
//! connects, `skills.status` and the prompt see its bins, `skills.update`
//! (over the protocol and from the CLI) probes again, and probes that
//! time out or lose their node come back as errors, not hangs.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::FakeLlm;
use gsv_e2e::harness::{run_gsv, GatewayOptions, Node, Workerd};
use gsv_e2e::poll::{self, ms, secs};
use gsv_e2e::ws::{raw_node, Client};
use gsv_protocol::{ChatState, Frame};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const TOKEN: &str = "test-token";
const MISSING: &str = "definitely-not-a-bin-xyz";

/// Two agent skills: one needs `sh` (on every machine), one a bin no
/// machine has.
async fn write_skills(c: &mut Client) {
    let skill = |desc: &str, bin: &str| {
        format!("---\ndescription: {desc}\nmetadata:\n  gsv:\n    requires:\n      bins: [{bin}]\n---\n# Body\n")
    };
    for (path, content) in [
        ("skills/shell/SKILL.md", skill("Run sh.", "sh")),
        ("skills/ghost/SKILL.md", skill("Needs a ghost.", MISSING)),
    ] {
        let res = c
            .request("workspace.write", json!({"path": path, "content": content}))
            .await;
        assert!(res.ok, "{res:?}");
    }
}

/// `(name, eligible, eligibleHosts, reasons)` of each skill.
fn verdicts(status: &Value) -> Vec<(String, bool, Value, Value)> {
    status["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["eligible"].as_bool().unwrap(),
                s["eligibleHosts"].clone(),
                s["reasons"].clone(),
            )
        })
        .collect()
}

fn ghost_reason(hosts: &str) -> Value {
    json!([format!(
        "no connected host satisfies requires.bins (has every binary: {MISSING}); hosts checked: {hosts}"
    )])
}

/// The probe results fields of a `skills.update` answer.
fn probe_report(update: &Value) -> Value {
    json!({
        "updatedNodeCount": update["updatedNodeCount"],
        "updatedNodeIds": update["updatedNodeIds"],
        "skippedNodeIds": update["skippedNodeIds"],
        "errors": update["errors"],
    })
}

async fn status(c: &mut Client) -> Value {
    let res = c.request("skills.status", json!({})).await;
    res.payload.unwrap_or_else(|| panic!("{:?}", res.error))
}

async fn update(c: &mut Client, params: Value) -> Value {
    let res = c.request("skills.update", params).await;
    res.payload.unwrap_or_else(|| panic!("{:?}", res.error))
}

#[tokio::test]
async fn a_connecting_node_is_probed_and_skills_update_probes_again() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    write_skills(&mut c).await;
    let none = json!(["no node is connected, and this skill needs a host"]);
    assert_eq!(
        verdicts(&status(&mut c).await),
        vec![
            ("ghost".into(), false, json!([]), none.clone()),
            ("shell".into(), false, json!([]), none),
        ]
    );

    // The node is probed when it connects; nobody asks for it.
    let _laptop = Node::start(&gw.url(), TOKEN, "laptop");
    let probed = poll::until(secs(20), ms(100), async || {
        let st = status(&mut c).await;
        if st["nodes"][0]["hostBinStatusUpdatedAt"].is_u64() {
            Ok(st)
        } else {
            Err(format!("never probed: {st}"))
        }
    })
    .await;
    assert_eq!(probed["requiredBins"], json!([MISSING, "sh"]));
    assert_eq!(probed["nodes"][0]["hostBins"], json!(["sh"]));
    let after_probe = vec![
        ("ghost".into(), false, json!([]), ghost_reason("laptop")),
        ("shell".into(), true, json!(["laptop"]), json!([])),
    ];
    assert_eq!(verdicts(&probed), after_probe);

    // Fresh status: skipped unless forced.
    let fresh = update(&mut c, json!({})).await;
    assert_eq!(
        probe_report(&fresh),
        json!({"updatedNodeCount": 0, "updatedNodeIds": [], "skippedNodeIds": ["laptop"], "errors": []})
    );
    let forced = update(&mut c, json!({"force": true})).await;
    assert_eq!(
        probe_report(&forced),
        json!({"updatedNodeCount": 1, "updatedNodeIds": ["laptop"], "skippedNodeIds": [], "errors": []})
    );
    assert_eq!(verdicts(&forced), after_probe);
    assert!(
        forced["nodes"][0]["hostBinStatusUpdatedAt"].as_u64()
            > probed["nodes"][0]["hostBinStatusUpdatedAt"].as_u64()
    );

    // The CLI says the same.
    let out = run_gsv(&gw.url(), TOKEN, &["skills", "update", "--force"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "Binaries the skills need: {MISSING}, sh.\n  probed: laptop\nSkills of agent main:\n  ✓ shell (agent) — Run sh.\n  ✗ ghost (agent) — {}\n",
            ghost_reason("laptop")[0].as_str().unwrap()
        )
    );

    // A run's prompt offers the skill the node's bins allow, not the other.
    assert!(
        c.request(
            "workspace.write",
            json!({"path": "BOOTSTRAP.md", "content": ""})
        )
        .await
        .ok
    );
    let run = c.chat_send("main", "any skills?").await;
    let events = c.run_events(&run).await;
    assert_eq!(events.last().unwrap().state, ChatState::Final, "{events:?}");
    let prompt = llm.requests().pop().unwrap().body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        prompt.contains("<read_path>skills/shell/SKILL.md</read_path>"),
        "{prompt}"
    );
    assert!(!prompt.contains("skills/ghost/SKILL.md"), "{prompt}");
}

/// The next `node.probe` event the node receives.
async fn next_probe(n: &mut Client) -> Value {
    loop {
        let frame = if n.events.is_empty() {
            n.next_frame().await.expect("node socket closed")
        } else {
            n.events.remove(0)
        };
        if let Frame::Evt(e) = frame {
            if e.event == "node.probe" {
                return e.payload.unwrap();
            }
        }
    }
}

#[tokio::test]
async fn probes_answer_time_out_or_fail_with_their_node() {
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    write_skills(&mut c).await;
    let mut mute = raw_node(&gw.url(), TOKEN, "mute").await;

    // Probed on connect, for the bins the skills need.
    let probe = next_probe(&mut mute).await;
    let probe_id = probe["probeId"].as_str().unwrap().to_string();
    assert_eq!(
        probe,
        json!({"probeId": probe_id, "kind": "bins", "bins": [MISSING, "sh"], "timeoutMs": 15000})
    );

    // Only the probed node may answer, and unknown probes are dropped.
    let answer = json!({"probeId": probe_id, "ok": true, "bins": {"sh": true, MISSING: false}});
    let res = c.request("node.probe.result", answer.clone()).await;
    assert_eq!(
        res.error.unwrap().message,
        "Method node.probe.result is not allowed for client connections"
    );
    let mut other = raw_node(&gw.url(), TOKEN, "other").await;
    let res = other.request("node.probe.result", answer.clone()).await;
    let err = res.error.unwrap();
    assert_eq!(
        (err.code, err.message),
        (
            403,
            format!("Probe {probe_id} was sent to node mute, not to other")
        )
    );
    other.close().await;
    let res = mute.request("node.probe.result", answer.clone()).await;
    assert_eq!(res.payload, Some(json!({"ok": true})));
    let res = mute.request("node.probe.result", answer).await;
    assert_eq!(res.payload, Some(json!({"ok": true, "dropped": true})));
    assert_eq!(
        verdicts(&status(&mut c).await),
        vec![
            ("ghost".into(), false, json!([]), ghost_reason("mute")),
            ("shell".into(), true, json!(["mute"]), json!([])),
        ]
    );

    // A probe that gets no answer is an error once its timeout passes.
    let started = Instant::now();
    let timed_out = update(&mut c, json!({"force": true, "timeoutMs": 1000})).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        probe_report(&timed_out),
        json!({"updatedNodeCount": 0, "updatedNodeIds": [], "skippedNodeIds": [], "errors": [
            {"nodeId": "mute", "error": "node mute did not answer the bin probe within 1000 ms"}
        ]})
    );
    // What the node answered before still counts.
    assert_eq!(timed_out["nodes"][0]["hostBins"], json!(["sh"]));
    next_probe(&mut mute).await;

    // A node that goes away mid-probe fails it at once, not at its timeout.
    let frame = Frame::request(
        "u1",
        "skills.update",
        Some(json!({"force": true, "timeoutMs": 60000})),
    );
    c.send_text(frame.to_json()).await;
    next_probe(&mut mute).await;
    let closed = Instant::now();
    mute.close().await;
    let res = c.response_to("u1").await;
    assert!(closed.elapsed() < Duration::from_secs(5));
    let gone = res.payload.unwrap();
    assert_eq!(
        probe_report(&gone),
        json!({"updatedNodeCount": 0, "updatedNodeIds": [], "skippedNodeIds": [], "errors": [
            {"nodeId": "mute", "error": "node mute disconnected before answering the bin probe"}
        ]})
    );
}
