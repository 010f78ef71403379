//! The trust boundary end to end, under workerd with the fake LLM, a real
//! `gsv node` and a channel on v1's WebSocket fallback: a group member
//! is offered no node tool and a forged call never reaches the node; an
//! approved person's DMs land in their own session, without MEMORY.md,
//! and their `/reset` leaves main alone; a cron job made from a group
//! runs at the group's level; the owner's own Discord identity lands in
//! main with every tool; `gsv trust explain` and `gsv logs audit` say
//! what the runs did.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{run_gsv, GatewayOptions, Node, Workerd};
use gsv_e2e::ws::{raw_channel, Client};
use serde_json::{json, Value};
use std::time::Duration;

const TOKEN: &str = "test-token";
const GROUP_KEY: &str = "agent:main:discord:group:chan-7";

async fn setup() -> (Workerd, FakeLlm, Client, Client) {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    let discord = raw_channel(&gw.url(), TOKEN, "discord").await;
    (gw, llm, owner, discord)
}

fn message(id: &str, from: &str, text: &str, peer: Value, mentioned: bool) -> Value {
    json!({
        "channel": "discord", "accountId": "default",
        "message": {
            "messageId": id, "peer": peer,
            "sender": {"id": from, "name": format!("user {from}"), "handle": format!("u{from}")},
            "text": text, "wasMentioned": mentioned
        }
    })
}

fn dm(id: &str, from: &str, text: &str) -> Value {
    message(
        id,
        from,
        text,
        json!({"kind": "dm", "id": format!("dm-{from}")}),
        false,
    )
}

fn in_group(id: &str, from: &str, text: &str) -> Value {
    message(
        id,
        from,
        text,
        json!({"kind": "group", "id": "chan-7", "name": "general"}),
        true,
    )
}

/// Hands a message over and returns the session it started a run in.
async fn inbound(ch: &mut Client, params: Value) -> Value {
    let res = ch.request("channel.inbound", params).await;
    assert!(res.ok, "channel.inbound: {res:?}");
    res.payload.unwrap()
}

async fn answer(ch: &mut Client) -> String {
    let out = ch.next_event("channel.outbound").await;
    out["message"]["text"].as_str().unwrap().to_string()
}

/// The model request whose messages mention `text`.
fn request_for(llm: &FakeLlm, text: &str) -> Value {
    llm.requests()
        .into_iter()
        .find(|r| r.body["messages"].to_string().contains(text))
        .unwrap_or_else(|| panic!("no model request mentions {text}"))
        .body
}

fn offered(llm: &FakeLlm, text: &str) -> Vec<String> {
    let body = request_for(llm, text);
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn tool_result(llm: &FakeLlm, id: &str) -> String {
    llm.requests()
        .iter()
        .rev()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str().map(String::from))
        .unwrap_or_else(|| panic!("no result for {id}"))
}

fn gsv(gw: &Workerd, args: &[&str]) -> String {
    let out = run_gsv(&gw.url(), TOKEN, args);
    assert!(
        out.status.success(),
        "gsv {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

async fn rpc(c: &mut Client, method: &str, params: Value) -> Value {
    let res = c.request(method, params).await;
    assert!(res.ok, "{method}: {res:?}");
    res.payload.unwrap()
}

/// What the group's level may use, as `tools.policy.group` says by default.
const GROUP_TOOLS: [&str; 5] = [
    "who_am_i",
    "my_stats",
    "gsv__Cron",
    "gsv__MemorySearch",
    "gsv__MemoryGet",
];

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[tokio::test]
async fn a_group_member_is_offered_no_node_tool_and_a_forged_call_never_runs() {
    let (gw, llm, mut owner, mut discord) = setup().await;
    owner
        .config_set("channels.discord.dmPolicy", json!("open"))
        .await;
    let node = Node::start(&gw.url(), TOKEN, "laptop");
    owner
        .wait_for_tools(&["laptop__Bash"], Duration::from_secs(20))
        .await;
    let marker = node.workspace.join("ran");
    llm.script(
        "list my files",
        vec![
            Step::tool_call(
                "b1",
                "laptop__Bash",
                json!({"command": format!("touch {}", marker.display())}),
            ),
            Step::text("I can't do that here."),
        ],
    );
    let started = inbound(&mut discord, in_group("g1", "300", "@bot list my files")).await;
    assert_eq!(started["sessionKey"], GROUP_KEY);
    assert_eq!(answer(&mut discord).await, "I can't do that here.");

    let tools = offered(&llm, "list my files");
    assert_eq!(
        sorted(tools.clone()),
        sorted(GROUP_TOOLS.map(String::from).to_vec())
    );
    assert_eq!(
        tool_result(&llm, "b1"),
        "Error: laptop__Bash is not allowed in this conversation (trust level group; not in tools.policy.group.allow). It was not run. Tell the person you cannot do this here."
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!marker.exists(), "the node ran a refused call");

    // The session shows who spoke; the explanation names the same tools.
    let got = rpc(&mut owner, "session.get", json!({"sessionKey": GROUP_KEY})).await;
    assert_eq!(got["trust"], json!({"level": "group", "actsAs": "group"}));
    let explained = rpc(
        &mut owner,
        "trust.explain",
        json!({"sessionKey": GROUP_KEY}),
    )
    .await;
    let allowed: Vec<String> = explained["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["allowed"] == true)
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sorted(allowed), sorted(tools));
    assert_eq!(explained["trustSource"], "the session's last message");
    let printed = gsv(&gw, &["trust", "explain", "--session", GROUP_KEY]);
    assert!(
        printed.starts_with(&format!(
            "Session   {GROUP_KEY}\nTrust     group (the session's last message)\n\
             Lands     the group chan-7 on discord: everyone in it, at level group\n\
             Commands  /reset, /new, /model, /think, /compact: refused (only the owner, or a person in their own session)\n"
        )),
        "{printed}"
    );
    assert!(
        printed.contains("  refused  laptop__Bash ")
            && printed.contains("not in tools.policy.group.allow\n"),
        "{printed}"
    );

    // The refused call is in the audit log.
    let audit = rpc(&mut owner, "audit.list", json!({})).await;
    let entry = &audit["entries"][0];
    assert_eq!(
        (
            &entry["sessionKey"],
            &entry["tool"],
            &entry["decision"],
            &entry["rule"],
            &entry["trust"]
        ),
        (
            &json!(GROUP_KEY),
            &json!("laptop__Bash"),
            &json!("refused"),
            &json!("not in tools.policy.group.allow"),
            &json!({"level": "group", "actsAs": "group"})
        )
    );
    assert_eq!(entry["argsDigest"].as_str().unwrap().len(), 16);
    let log = gsv(&gw, &["logs", "audit"]);
    assert!(
        log.contains(&format!(
            "  {GROUP_KEY}  -  group  laptop__Bash  refused  args "
        )),
        "{log}"
    );
    // A group cannot change the session either.
    let reset = inbound(&mut discord, in_group("g2", "300", "/reset")).await;
    assert_eq!(reset["status"], "command", "{reset}");
    assert_eq!(
        answer(&mut discord).await,
        "Only the owner can change this conversation (reset, compact, model, thinking)."
    );
}

#[tokio::test]
async fn an_approved_person_gets_their_own_session_and_cannot_touch_main() {
    let (gw, llm, mut owner, mut discord) = setup().await;
    owner
        .config_set("channels.discord.allowFrom", json!(["82"]))
        .await;
    let write = rpc(
        &mut owner,
        "workspace.write",
        json!({"path": "MEMORY.md", "content": "# Memory\n\nThe owner's secret: tulips."}),
    )
    .await;
    assert_eq!(write["written"], true, "{write}");
    // The owner talks in main first.
    llm.script("owner hello", vec![Step::text("Hi owner.")]);
    let run = owner.chat_send("main", "owner hello").await;
    owner.run_events(&run).await;

    llm.script("friend hello", vec![Step::text("Hi friend.")]);
    let started = inbound(&mut discord, dm("d1", "82", "friend hello")).await;
    assert_eq!(started["sessionKey"], "agent:main:discord:dm:82");
    assert_eq!(answer(&mut discord).await, "Hi friend.");
    let body = request_for(&llm, "friend hello");
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        !system.contains("tulips"),
        "MEMORY.md reached a friend: {system}"
    );
    let tools = offered(&llm, "friend hello");
    assert!(
        tools.iter().all(|t| !t.starts_with("gsv__Config")
            && !t.starts_with("gsv__Session")
            && t != "gsv__WriteFile"
            && t != "gsv__Message"),
        "{tools:?}"
    );
    let got = rpc(
        &mut owner,
        "session.get",
        json!({"sessionKey": "agent:main:discord:dm:82"}),
    )
    .await;
    assert_eq!(
        got["trust"],
        json!({"level": "approved", "actsAs": "approved"})
    );

    // Their /reset resets their own session, not main.
    let main_before = rpc(&mut owner, "session.get", json!({"sessionKey": "main"})).await;
    let reset = inbound(&mut discord, dm("d2", "82", "/reset")).await;
    assert_eq!(reset["status"], "command", "{reset}");
    assert!(answer(&mut discord).await.starts_with("Session reset."));
    let main_after = rpc(&mut owner, "session.get", json!({"sessionKey": "main"})).await;
    assert_eq!(main_after["sessionId"], main_before["sessionId"]);
    assert_eq!(main_after["messageCount"], json!(2));

    // Shared into main by the owner: there, at level approved, /model is
    // refused and the owner's tools are not offered.
    owner
        .config_set("session.shareMainWith", json!(["discord:82"]))
        .await;
    llm.script("friend in main", vec![Step::text("Hello again.")]);
    let started = inbound(&mut discord, dm("d3", "82", "friend in main")).await;
    assert_eq!(started["sessionKey"], "agent:main:main");
    assert_eq!(answer(&mut discord).await, "Hello again.");
    let tools = offered(&llm, "friend in main");
    assert!(!tools.iter().any(|t| t == "gsv__ConfigGet"), "{tools:?}");
    let model = inbound(&mut discord, dm("d4", "82", "/model openai/gpt-x")).await;
    assert_eq!(model["status"], "command", "{model}");
    assert_eq!(
        answer(&mut discord).await,
        "Only the owner can change this conversation (reset, compact, model, thinking)."
    );
    let listed = gsv(&gw, &["channel", "list"]);
    assert!(
        listed.contains(
            "! session.shareMainWith puts other people in your main session (discord:82)"
        ),
        "{listed}"
    );
    let explained = gsv(&gw, &["trust", "explain"]);
    assert!(
        explained.contains(
            "! session.shareMainWith puts other people in your main session (discord:82): they read MEMORY.md and your conversation there, at level approved\n"
        ),
        "{explained}"
    );
}

#[tokio::test]
async fn the_owners_own_discord_identity_lands_in_main_with_every_tool() {
    let (gw, llm, mut owner, mut discord) = setup().await;
    owner
        .config_set("owner.identities", json!(["discord:81"]))
        .await;
    let _node = Node::start(&gw.url(), TOKEN, "laptop");
    owner
        .wait_for_tools(&["laptop__Bash"], Duration::from_secs(20))
        .await;
    llm.script("it's me", vec![Step::text("Welcome back.")]);
    // Not in allowFrom, yet not paired: the owner is never a stranger.
    let started = inbound(&mut discord, dm("o1", "81", "it's me")).await;
    assert_eq!(started["sessionKey"], "agent:main:main", "{started}");
    assert_eq!(answer(&mut discord).await, "Welcome back.");
    let tools = offered(&llm, "it's me");
    for t in [
        "laptop__Bash",
        "gsv__ConfigGet",
        "gsv__SessionSend",
        "gsv__WriteFile",
    ] {
        assert!(tools.iter().any(|o| o == t), "{t} not offered: {tools:?}");
    }
    let got = rpc(&mut owner, "session.get", json!({"sessionKey": "main"})).await;
    assert_eq!(got["trust"], json!({"level": "owner", "actsAs": "owner"}));
    // Nothing the owner does is audited.
    let audit = rpc(&mut owner, "audit.list", json!({})).await;
    assert_eq!(audit, json!({"entries": [], "count": 0}));
}

#[tokio::test]
async fn a_cron_job_made_from_a_group_runs_at_the_groups_level() {
    let (gw, llm, mut owner, mut discord) = setup().await;
    owner
        .config_set("channels.discord.dmPolicy", json!("open"))
        .await;
    let _node = Node::start(&gw.url(), TOKEN, "laptop");
    owner
        .wait_for_tools(&["laptop__Bash"], Duration::from_secs(20))
        .await;
    llm.script(
        "remind us",
        vec![
            Step::tool_call(
                "c1",
                "gsv__Cron",
                json!({"action": "add", "schedule": {"kind": "at", "in": "2h"},
                       "spec": {"kind": "systemEvent", "text": "stand-up reminder"}}),
            ),
            Step::text("Reminder set."),
        ],
    );
    inbound(
        &mut discord,
        in_group("g1", "300", "@bot remind us at noon"),
    )
    .await;
    assert_eq!(answer(&mut discord).await, "Reminder set.");
    let made: Value = serde_json::from_str(&tool_result(&llm, "c1")).unwrap();
    let job = &made["job"];
    assert_eq!(
        job["madeBy"],
        json!({"trust": {"level": "group", "actsAs": "group"}, "sessionKey": GROUP_KEY,
               "chat": {"channel": "discord", "accountId": "default",
                        "peer": {"kind": "group", "id": "chan-7", "name": "general"}}})
    );
    let id = job["id"].as_str().unwrap().to_string();

    // Run now: its own session, at level system acting as the group, its
    // answer to the group.
    llm.script("stand-up reminder", vec![Step::text("Stand-up time!")]);
    rpc(&mut owner, "cron.run", json!({"id": id, "mode": "force"})).await;
    assert_eq!(answer(&mut discord).await, "Stand-up time!");
    let tools = offered(&llm, "stand-up reminder");
    assert_eq!(
        sorted(tools),
        sorted(GROUP_TOOLS.map(String::from).to_vec())
    );
    let key = format!("agent:main:cron:{id}");
    let got = rpc(&mut owner, "session.get", json!({"sessionKey": key})).await;
    assert_eq!(got["trust"], json!({"level": "system", "actsAs": "group"}));

    // Another conversation neither sees nor removes the group's job.
    owner
        .config_set("channels.discord.allowFrom", json!(["82"]))
        .await;
    llm.script(
        "drop that job",
        vec![
            Step::tool_call("c2", "gsv__Cron", json!({"action": "remove", "id": id})),
            Step::text("Done?"),
        ],
    );
    inbound(&mut discord, dm("d1", "82", "drop that job")).await;
    assert_eq!(answer(&mut discord).await, "Done?");
    assert_eq!(
        tool_result(&llm, "c2"),
        format!("Error: no job {id} made in this conversation")
    );
    let listed = gsv(&gw, &["cron", "list"]);
    assert!(listed.contains(&id), "{listed}");
}

fn whatsapp_dm(id: &str, from: &str, text: &str) -> Value {
    json!({
        "channel": "whatsapp", "accountId": "default",
        "message": {
            "messageId": id, "peer": {"kind": "dm", "id": from},
            "sender": {"id": from, "name": "Owner"},
            "text": text
        }
    })
}

/// The code in an approval request the owner was sent.
fn code_in(request: &str) -> String {
    request
        .split("\"approve ")
        .nth(1)
        .and_then(|t| t.get(..8))
        .unwrap_or_else(|| panic!("no code in {request}"))
        .to_string()
}

#[tokio::test]
async fn an_ask_call_runs_once_when_the_owner_approves_from_whatsapp_and_never_otherwise() {
    let (gw, llm, mut owner, mut discord) = setup().await;
    let mut whatsapp = raw_channel(&gw.url(), TOKEN, "whatsapp").await;
    for (path, value) in [
        ("owner.identities", json!(["+4915100000"])),
        ("channels.discord.allowFrom", json!(["82"])),
        ("tools.policy.approved.ask", json!(["laptop__Bash"])),
        ("tools.policy.askTimeoutSeconds", json!(10)),
    ] {
        owner.config_set(path, value).await;
    }
    let node = Node::start(&gw.url(), TOKEN, "laptop");
    owner
        .wait_for_tools(&["laptop__Bash"], Duration::from_secs(20))
        .await;
    let log = node.workspace.join("runs.log");
    // The owner writes from WhatsApp once: requests go to that chat.
    llm.script("morning", vec![Step::text("Morning!")]);
    inbound(&mut whatsapp, whatsapp_dm("w1", "+4915100000", "morning")).await;
    assert_eq!(answer(&mut whatsapp).await, "Morning!");

    let bash = |id: &str, marker: &str| {
        Step::tool_call(
            id,
            "laptop__Bash",
            json!({"command": format!("echo {marker} >> {}", log.display())}),
        )
    };
    // Approved: it runs, once.
    llm.script(
        "count please",
        vec![bash("a1", "approved"), Step::text("Counted.")],
    );
    inbound(&mut discord, dm("d1", "82", "count please")).await;
    let request = answer(&mut whatsapp).await;
    assert!(
        request.starts_with(
            "Approval needed: discord:82 (approved) asks to run laptop__Bash with\n{\n  \"command\": \"echo approved >> "
        ),
        "{request}"
    );
    let code = code_in(&request);
    let waiting = gsv(&gw, &["approvals", "list"]);
    assert!(
        waiting.starts_with(&format!(
            "{code}  laptop__Bash  discord:82 (approved)  in agent:main:discord:dm:82  until "
        )),
        "{waiting}"
    );
    let decided = inbound(
        &mut whatsapp,
        whatsapp_dm("w2", "+4915100000", &format!("approve {code}")),
    )
    .await;
    assert_eq!(decided["status"], "command", "{decided}");
    assert_eq!(
        answer(&mut whatsapp).await,
        format!("laptop__Bash approved for discord:82 (approved) ({code}).")
    );
    assert_eq!(answer(&mut discord).await, "Counted.");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "approved\n");

    // Denied from the chat: never runs, and the model hears why.
    llm.script(
        "count again",
        vec![bash("b1", "denied"), Step::text("Not allowed.")],
    );
    inbound(&mut discord, dm("d2", "82", "count again")).await;
    let code = code_in(&answer(&mut whatsapp).await);
    inbound(
        &mut whatsapp,
        whatsapp_dm("w3", "+4915100000", &format!("deny {code}")),
    )
    .await;
    assert_eq!(
        answer(&mut whatsapp).await,
        format!("laptop__Bash denied for discord:82 (approved) ({code}).")
    );
    assert_eq!(answer(&mut discord).await, "Not allowed.");
    assert_eq!(
        tool_result(&llm, "b1"),
        "Error: laptop__Bash was not run: the owner denied it. Tell the person the owner did not approve it."
    );

    // Unanswered: denied when askTimeoutSeconds pass.
    llm.script(
        "count once more",
        vec![bash("c1", "late"), Step::text("Timed out.")],
    );
    inbound(&mut discord, dm("d3", "82", "count once more")).await;
    answer(&mut whatsapp).await;
    assert_eq!(answer(&mut discord).await, "Timed out.");
    assert_eq!(
        tool_result(&llm, "c1"),
        "Error: laptop__Bash was not run: the owner did not answer within 10 s. Tell the person the owner did not approve it."
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "approved\n");
    assert_eq!(
        gsv(&gw, &["approvals", "list"]),
        "No call waits for your approval.\n"
    );

    // Each step is in the audit log, newest first.
    let audit = rpc(
        &mut owner,
        "audit.list",
        json!({"sessionKey": "agent:main:discord:dm:82"}),
    )
    .await;
    let steps: Vec<(String, String)> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["decision"].as_str().unwrap().to_string(),
                e["tool"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let step = |d: &str| (d.to_string(), "laptop__Bash".to_string());
    assert_eq!(
        steps,
        [
            step("timed out"),
            step("asked"),
            step("denied"),
            step("asked"),
            step("ran"),
            step("approved"),
            step("asked"),
        ]
    );
}

#[tokio::test]
async fn the_owner_hears_of_a_stranger_in_their_chat_and_approves_them_there() {
    let (_gw, llm, mut owner, mut discord) = setup().await;
    owner
        .config_set("owner.identities", json!(["discord:81"]))
        .await;
    llm.script("morning", vec![Step::text("Morning.")]);
    inbound(&mut discord, dm("o1", "81", "morning")).await;
    assert_eq!(answer(&mut discord).await, "Morning.");

    // A stranger gets a code; the owner, in the chat they last wrote from,
    // hears who asks, with the answers as buttons.
    let asked = inbound(&mut discord, dm("s1", "55", "hello?")).await;
    assert_eq!(asked["status"], "pendingPairing", "{asked}");
    let to_stranger = discord.next_event("channel.outbound").await;
    assert_eq!(to_stranger["peer"]["id"], "dm-55");
    let text = to_stranger["message"]["text"].as_str().unwrap().to_string();
    let code = text
        .split("Your pairing code is ")
        .nth(1)
        .and_then(|rest| rest.get(..8))
        .unwrap()
        .to_string();
    let notice = discord.next_event("channel.outbound").await;
    assert_eq!(notice["peer"]["id"], "dm-81");
    assert_eq!(
        notice["message"]["text"],
        format!(
            "user 55 (discord:55) asks to talk with me on discord. Reply \"pair approve {code}\" to let them, or \"pair reject {code}\"; the code is valid for one hour."
        )
    );

    // Only the owner's words decide: the stranger typing them is still a
    // stranger waiting (nothing is sent back to them again).
    let forged = inbound(
        &mut discord,
        dm("s2", "55", &format!("pair approve {code}")),
    )
    .await;
    assert_eq!(forged["status"], "pendingPairing", "{forged}");

    inbound(
        &mut discord,
        dm("o2", "81", &format!("pair approve {code}")),
    )
    .await;
    let mut told: Vec<(String, String)> = Vec::new();
    for _ in 0..2 {
        let out = discord.next_event("channel.outbound").await;
        told.push((
            out["peer"]["id"].as_str().unwrap().to_string(),
            out["message"]["text"].as_str().unwrap().to_string(),
        ));
    }
    told.sort();
    assert_eq!(
        told,
        [
            (
                "dm-55".to_string(),
                "You're approved: I'll answer your messages from now on.".to_string()
            ),
            (
                "dm-81".to_string(),
                "Approved user 55 (discord:55): they can talk with me now.".to_string()
            ),
        ]
    );
    let allowed = rpc(
        &mut owner,
        "config.get",
        json!({"path": "channels.discord.allowFrom"}),
    )
    .await;
    assert_eq!(allowed["value"], json!(["55"]), "{allowed}");
}
