//! Long-term memory end to end, under workerd with the fake LLM: the
//! agent writes a memory with its tool in one chat and it is recalled
//! into the prompt of a session in another channel; `gsv memory` finds,
//! reads and deletes it; the repair job fixes what a cut write left in R2;
//! the nightly dream promotes a memory recalled on three days into
//! MEMORY.md and DREAMS.md, and `my_stats` counts it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{FakeLlm, Step, FAKE_API_KEY};
use gsv_e2e::harness::{run_gsv, GatewayOptions, Workerd};
use gsv_e2e::poll::{self, ms, secs};
use gsv_e2e::ws::{raw_channel, Client};
use gsv_protocol::ChatState;
use serde_json::{json, Value};

const TOKEN: &str = "test-token";
const STEVE_COFFEE: &str = "ctx://default/users/steve/memories/preferences/coffee";
const DAY_MS: i64 = 86_400_000;

async fn rpc(c: &mut Client, method: &str, params: Value) -> Value {
    let res = c.request(method, params).await;
    assert!(res.ok, "{method}: {res:?}");
    res.payload.unwrap()
}

fn dm(channel: &str, id: &str, from: &str, text: &str) -> Value {
    json!({
        "channel": channel, "accountId": "default",
        "message": {
            "messageId": id,
            "peer": {"kind": "dm", "id": format!("dm-{from}")},
            "sender": {"id": from, "name": "Steve"},
            "text": text
        }
    })
}

/// Sends a DM through a socket channel and waits for the answer it sends out.
async fn converse(ch: &mut Client, channel: &str, id: &str, from: &str, text: &str) -> String {
    let res = ch
        .request("channel.inbound", dm(channel, id, from, text))
        .await;
    assert!(res.ok, "channel.inbound: {res:?}");
    let out = ch.next_event("channel.outbound").await;
    out["message"]["text"].as_str().unwrap().to_string()
}

/// The system prompt of the model request whose messages mention `text`.
/// What the model read as the user's message `text`: its words, then the
/// memories recalled for it (they go with the message; the system prompt,
/// the same from message to message, never has them).
fn read_with(llm: &FakeLlm, text: &str) -> String {
    let req = llm
        .requests()
        .into_iter()
        .rev()
        .find(|r| r.body["messages"].to_string().contains(text))
        .unwrap_or_else(|| panic!("no model request mentions {text}"));
    let messages = req.body["messages"].as_array().unwrap();
    let system = messages[0]["content"].as_str().unwrap();
    assert!(!system.contains("Recalled memories"), "{system}");
    let message = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user" && m["content"].to_string().contains(text))
        .unwrap();
    match &message["content"] {
        Value::String(words) => words.clone(),
        parts => parts
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n\n"),
    }
}

/// The text of the result the model got for tool call `id`.
fn tool_result(llm: &FakeLlm, id: &str) -> String {
    llm.requests()
        .iter()
        .rev()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str().map(String::from))
        .unwrap_or_else(|| panic!("no result for {id}"))
}

async fn chat(c: &mut Client, key: &str, message: &str) -> String {
    let run = c.chat_send(key, message).await;
    let events = c.run_events(&run).await;
    let last = events.last().unwrap();
    assert_eq!(last.state, ChatState::Final, "{events:?}");
    last.message.as_ref().unwrap().text()
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

/// A workspace file once it contains `marker` (within 15 s).
async fn eventually_read(c: &mut Client, path: &str, marker: &str) -> String {
    poll::until(secs(15), ms(100), async || {
        let res = c.request("workspace.read", json!({"path": path})).await;
        let text = res
            .payload
            .as_ref()
            .and_then(|p| p["content"].as_str())
            .unwrap_or_default()
            .to_string();
        if text.contains(marker) {
            Ok(text)
        } else {
            Err(format!("{path} never got {marker:?}: {text}"))
        }
    })
    .await
}

const RECALL_INTRO: &str =
    "## Recalled memories\n\nFrom your long-term memory, the entries that match this message \
(abstracts; `gsv__MemoryGet` reads one whole):\n";

#[tokio::test]
async fn a_memory_written_in_one_chat_is_recalled_in_another_and_forgotten() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut owner = Client::connect(&gw.url(), Some(TOKEN)).await;
    owner.use_fake_openai(&llm).await;
    owner
        .config_set("channels.discord.dmPolicy", json!("open"))
        .await;
    owner
        .config_set("channels.whatsapp.dmPolicy", json!("open"))
        .await;
    owner
        .config_set("session.dmScope", json!("per-channel-peer"))
        .await;
    owner
        .config_set(
            "session.identityLinks",
            json!({"steve": ["discord:81", "+4915100000"]}),
        )
        .await;
    let mut discord = raw_channel(&gw.url(), TOKEN, "discord").await;
    let mut whatsapp = raw_channel(&gw.url(), TOKEN, "whatsapp").await;

    llm.script(
        "remember my coffee",
        vec![
            Step::tool_call(
                "w1",
                "gsv__MemoryWrite",
                json!({"category": "preferences", "title": "coffee",
                       "content": "Steve takes his coffee black, no sugar, from the corner cafe.",
                       "abstract": "Steve takes his coffee black", "tags": ["drinks"]}),
            ),
            Step::text("Noted."),
        ],
    );
    assert_eq!(
        converse(&mut discord, "discord", "m1", "81", "remember my coffee").await,
        "Noted."
    );
    assert_eq!(
        tool_result(&llm, "w1"),
        format!("Remembered as {STEVE_COFFEE}")
    );

    // Another channel, another session, the same person: recalled.
    llm.script("which coffee", vec![Step::text("Black.")]);
    assert_eq!(
        converse(
            &mut whatsapp,
            "whatsapp",
            "w1",
            "+4915100000",
            "which coffee should I order?"
        )
        .await,
        "Black."
    );
    let prompt = read_with(&llm, "which coffee should I order?");
    let section =
        format!("{RECALL_INTRO}- [preferences] Steve takes his coffee black ({STEVE_COFFEE})");
    assert!(prompt.contains(&section), "{prompt}");
    let stats = rpc(
        &mut owner,
        "session.stats",
        json!({"sessionKey": "agent:main:whatsapp:dm:steve"}),
    )
    .await;
    assert_eq!(
        stats["lastWorkspaceLoad"]["recalled"],
        json!([STEVE_COFFEE])
    );

    // The owner's own session does not see Steve's memories.
    llm.script("owner coffee", vec![Step::text("No idea.")]);
    assert_eq!(
        chat(&mut owner, "main", "owner coffee: which one?").await,
        "No idea."
    );
    assert!(!read_with(&llm, "owner coffee: which one?").contains("Recalled memories"));

    // The CLI finds it, reads it whole, and deletes it.
    let found = gsv(&gw, &["memory", "search", "coffee", "black"]);
    assert!(
        found.starts_with(&format!(
            "{STEVE_COFFEE}  [preferences] Steve takes his coffee black\n"
        )),
        "{found}"
    );
    assert!(found.contains("1 found (keyword search"), "{found}");
    let node = gsv(&gw, &["memory", "get", STEVE_COFFEE]);
    assert!(
        node.starts_with(&format!(
            "{STEVE_COFFEE}\n[preferences] user:steve · version 1 · updated "
        )),
        "{node}"
    );
    assert!(
        node.contains(
            " · tags drinks\n\nSteve takes his coffee black, no sugar, from the corner cafe.\n"
        ),
        "{node}"
    );
    let status = rpc(&mut owner, "memory.status", json!({})).await;
    assert_eq!(
        (
            &status["account"],
            &status["nodes"],
            &status["pendingEvents"],
            &status["searchMode"]
        ),
        (&json!("default"), &json!(1), &json!(0), &json!("keyword"))
    );
    assert_eq!(
        gsv(&gw, &["memory", "rm", STEVE_COFFEE]),
        format!("Deleted {STEVE_COFFEE}\n")
    );
    assert_eq!(
        gsv(&gw, &["memory", "search", "coffee"]),
        "No memory matches (keyword search).\n"
    );
    let gone = rpc(&mut owner, "memory.get", json!({"uri": STEVE_COFFEE})).await;
    assert_eq!(gone, json!({}));
    llm.script("coffee again", vec![Step::text("Hm.")]);
    converse(
        &mut whatsapp,
        "whatsapp",
        "w2",
        "+4915100000",
        "coffee again?",
    )
    .await;
    assert!(!read_with(&llm, "coffee again?").contains("Recalled memories"));
}

#[tokio::test]
async fn bad_memory_calls_get_clear_errors() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    let cases = [
        (
            "memory.get",
            json!({"uri": "ctx://default/users/../memories/profile/x"}),
            "invalid user \"..\": use letters, digits and - _ . (ids may also hold + : @), not . or .. alone, at most 128 characters",
        ),
        (
            "memory.get",
            json!({"uri": "ctx://other/users/u/memories/profile/x"}),
            "access denied: account \"other\" is not this request's account",
        ),
        (
            "memory.put",
            json!({"category": "moods", "content": "x", "title": "t"}),
            "unknown category \"moods\": one of profile, preferences, entities, events, cases, patterns, skills",
        ),
        ("memory.put", json!({"category": "profile", "content": "  "}), "content is empty"),
        (
            "memory.put",
            json!({"category": "profile", "content": "x", "title": "t",
                   "uri": "ctx://other/users/u/memories/profile/t"}),
            "Invalid params for memory.put: unknown field `uri`, expected one of `category`, `slug`, `title`, `content`, `abstract`, `overview`, `tags`, `relations`, `space`, `agentId`, `user`",
        ),
    ];
    for (method, params, message) in cases {
        let res = c.request(method, params.clone()).await;
        assert!(!res.ok, "{method} {params}");
        assert_eq!(res.error.unwrap().message, message, "{method} {params}");
    }
    // The refused put wrote nothing, in this account or the other.
    for key in [
        "accounts/default/users/owner/memories/profile/t/.meta.json",
        "accounts/other/users/u/memories/profile/t/.meta.json",
    ] {
        assert_eq!(gw.r2_get_outside(key), None, "{key}");
    }
}

const JOB: &str = "ctx://default/users/owner/memories/profile/job";
const JOB_DIR: &str = "accounts/default/users/owner/memories/profile/job/";

/// The URIs `memory.search` finds for `query`.
async fn found(c: &mut Client, query: &str) -> Vec<String> {
    let hits = rpc(c, "memory.search", json!({ "query": query })).await;
    hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["uri"].as_str().unwrap().to_string())
        .collect()
}

/// Whether the main session's message `message` came with the job recalled.
async fn job_recalled(c: &mut Client, llm: &FakeLlm, message: &str) -> bool {
    llm.script(message, vec![Step::text("Ok.")]);
    assert_eq!(chat(c, "main", message).await, "Ok.");
    let prompt = read_with(llm, message);
    prompt.contains(&format!("- [profile] Works as a nurse in Lisbon ({JOB})"))
}

/// The job node's meta with its status replaced, as a write cut short
/// (or a person's hand) would leave it in R2.
fn force_status(gw: &Workerd, status: &str) {
    let key = format!("{JOB_DIR}.meta.json");
    let mut meta: Value = serde_json::from_slice(&gw.r2_get_outside(&key).unwrap()).unwrap();
    meta["status"] = json!(status);
    gw.r2_put_outside(&key, &meta.to_string());
}

async fn by_status(c: &mut Client) -> (Value, Value) {
    let status = rpc(c, "memory.status", json!({})).await;
    (status["byStatus"].clone(), status["broken"].clone())
}

#[tokio::test]
async fn retrieval_sees_only_active_nodes() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    gsv(
        &gw,
        &[
            "memory",
            "put",
            "profile",
            "Works as a nurse in Lisbon",
            "--title",
            "job",
        ],
    );
    assert_eq!(found(&mut c, "nurse Lisbon").await, [JOB]);
    assert!(job_recalled(&mut c, &llm, "a nurse in Lisbon, right?").await);

    // PENDING in R2 (an update cut short): found by neither search nor
    // recall, and counted as pending once a retrieval has read its meta.
    force_status(&gw, "PENDING");
    assert_eq!(found(&mut c, "nurse Lisbon").await, Vec::<String>::new());
    assert!(!job_recalled(&mut c, &llm, "still a nurse in Lisbon?").await);
    assert_eq!(
        by_status(&mut c).await,
        (json!({"active": 0, "pending": 1, "broken": 0}), json!([]))
    );
    // The repair job finds every file and activates it: back in both.
    let report = rpc(&mut c, "memory.repair", json!({})).await;
    assert_eq!(report["activated"], json!([JOB]));
    assert_eq!(found(&mut c, "nurse Lisbon").await, [JOB]);
    assert!(job_recalled(&mut c, &llm, "and the nurse in Lisbon now?").await);

    // PENDING with its overview lost: the repair marks it BROKEN, and it
    // is gone from search and recall at once, listed with what it misses.
    force_status(&gw, "PENDING");
    gw.r2_delete_outside(&format!("{JOB_DIR}.overview.md"));
    let report = rpc(&mut c, "memory.repair", json!({})).await;
    assert_eq!(report["markedBroken"], json!([JOB]));
    assert_eq!(found(&mut c, "nurse Lisbon").await, Vec::<String>::new());
    assert!(!job_recalled(&mut c, &llm, "is the nurse in Lisbon gone?").await);
    assert_eq!(
        by_status(&mut c).await,
        (
            json!({"active": 0, "pending": 0, "broken": 1}),
            json!([{"uri": JOB, "missing": [".overview.md"]}])
        )
    );
    let status = gsv(&gw, &["memory", "status"]);
    assert!(
        status.contains("By status      0 active, 0 pending, 1 broken\nLast repair"),
        "{status}"
    );
    assert!(
        status.contains(&format!(
            "! {JOB}: BROKEN, missing .overview.md (restore them, then `gsv memory repair`)\n"
        )),
        "{status}"
    );
    // A second repair leaves it BROKEN; the file restored, the next one
    // brings it back to search and recall.
    let report = rpc(&mut c, "memory.repair", json!({})).await;
    assert_eq!(report["restored"], json!([]));
    gw.r2_put_outside(&format!("{JOB_DIR}.overview.md"), "Nurse, Lisbon");
    let report = rpc(&mut c, "memory.repair", json!({})).await;
    assert_eq!(report["restored"], json!([JOB]));
    assert_eq!(found(&mut c, "nurse Lisbon").await, [JOB]);
    assert!(job_recalled(&mut c, &llm, "the nurse in Lisbon is back?").await);
    assert_eq!(
        by_status(&mut c).await,
        (json!({"active": 1, "pending": 0, "broken": 0}), json!([]))
    );
}

#[tokio::test]
async fn the_repair_job_recovers_cut_writes_and_flags_broken_nodes() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    let saved = gsv(
        &gw,
        &[
            "memory",
            "put",
            "profile",
            "Works as a nurse in Lisbon",
            "--title",
            "job",
        ],
    );
    assert_eq!(
        saved,
        "Saved ctx://default/users/owner/memories/profile/job (version 1)\n"
    );
    // A write cut after its content (no meta), and a PENDING node that lost
    // its layers: as a crash or a lost object would leave them.
    let orphan = "accounts/default/users/owner/memories/events/trip/";
    gw.r2_put_outside(
        &format!("{orphan}content.md"),
        "# Trip to Porto\n\nIn May, by train.",
    );
    let broken = "accounts/default/agents/main/memories/cases/vpn/";
    gw.r2_put_outside(&format!("{broken}content.md"), "Deploys need the VPN.");
    gw.r2_put_outside(
        &format!("{broken}.meta.json"),
        &json!({"uri": "ctx://default/agents/main/memories/cases/vpn", "context_type": "MEMORY",
                "category": "cases", "level": 3, "owner_space": "agent:main", "status": "PENDING",
                "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
                "version": 1, "tags": []})
        .to_string(),
    );
    let report = rpc(&mut c, "memory.repair", json!({})).await;
    assert_eq!(report["nodesScanned"], json!(3));
    assert_eq!(
        report["recreated"],
        json!(["ctx://default/users/owner/memories/events/trip"])
    );
    assert_eq!(
        report["markedBroken"],
        json!(["ctx://default/agents/main/memories/cases/vpn"])
    );
    assert_eq!(
        report["alerts"],
        json!(["ctx://default/agents/main/memories/cases/vpn: BROKEN, missing .relations.json, .abstract.md, .overview.md"])
    );
    // The recovered node is searchable; the broken one is not.
    let hits = rpc(&mut c, "memory.search", json!({"query": "Porto train VPN"})).await;
    let uris: Vec<&str> = hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["ctx://default/users/owner/memories/events/trip"]);
    let status = gsv(&gw, &["memory", "status"]);
    assert!(status.contains("Memories       2\n"), "{status}");
    assert!(
        status.contains("! ctx://default/agents/main/memories/cases/vpn: BROKEN"),
        "{status}"
    );
}

#[tokio::test]
async fn a_memory_recalled_on_three_days_is_dreamt_into_memory_md() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    // No daily resets or heartbeats in the way of the clock's jumps.
    c.config_set("session.defaultResetPolicy", json!({"mode": "manual"}))
        .await;
    c.config_set("agents.defaultHeartbeat", json!({"every": "0"}))
        .await;
    rpc(
        &mut c,
        "memory.put",
        json!({"category": "preferences", "title": "brevity", "content": "Prefers short answers, no preamble.",
               "abstract": "Prefers short answers", "tags": ["style"]}),
    )
    .await;
    for day in 1..=3 {
        llm.script(&format!("answer day {day}"), vec![Step::text("Sure.")]);
        chat(
            &mut c,
            "main",
            &format!("short answers please, answer day {day}"),
        )
        .await;
        assert!(read_with(&llm, &format!("answer day {day}")).contains(
            "- [preferences] Prefers short answers (ctx://default/users/owner/memories/preferences/brevity)"
        ));
        // A day later on the gateway's clock: the nightly sweep runs.
        gw.advance_clock(DAY_MS);
    }
    // The sweep runs from the gateway's alarm, just after the clock moved.
    let memory = eventually_read(&mut c, "MEMORY.md", "## Dreamed ").await;
    let memory = memory.as_str();
    let dreamed = memory
        .split("## Dreamed ")
        .nth(1)
        .unwrap_or_else(|| panic!("{memory}"));
    let line = dreamed.lines().nth(1).unwrap();
    assert!(
        line.starts_with("- Prefers short answers _(score=0."),
        "{memory}"
    );
    assert!(line.ends_with(", hits=3, days=3)_"), "{memory}");
    assert_eq!(
        memory.matches("Prefers short answers").count(),
        1,
        "{memory}"
    );
    let dreams = rpc(&mut c, "workspace.read", json!({"path": "DREAMS.md"})).await;
    let dreams = dreams["content"].as_str().unwrap();
    assert!(dreams.starts_with("# Dreams\n"), "{dreams}");
    assert!(
        dreams.contains(
            "Considered 1 recalled memory; promoted 1.\n- Prefers short answers _(score="
        ),
        "{dreams}"
    );
    // Another night: nothing new to promote, MEMORY.md unchanged.
    let dreams_before = rpc(&mut c, "memory.status", json!({})).await["lastDreamAtMs"].clone();
    gw.advance_clock(DAY_MS);
    poll::until(secs(15), ms(100), async || {
        let status = rpc(&mut c, "memory.status", json!({})).await;
        (status["lastDreamAtMs"] != dreams_before)
            .then_some(())
            .ok_or("the second night's dream did not run")
    })
    .await;
    let again = rpc(&mut c, "workspace.read", json!({"path": "MEMORY.md"})).await;
    assert_eq!(again["content"].as_str().unwrap(), memory);

    llm.script(
        "how am i doing",
        vec![
            Step::tool_call("s1", "my_stats", json!({})),
            Step::text("Fine."),
        ],
    );
    chat(&mut c, "main", "how am i doing").await;
    let stats: Value = serde_json::from_str(&tool_result(&llm, "s1")).unwrap();
    assert_eq!(
        (
            &stats["memories_promoted"],
            &stats["recall_events_7d"],
            &stats["top_concept_tags_7d"]
        ),
        (&json!(1), &json!(3), &json!(["style"]))
    );
    assert!(stats["last_dream_ts"].as_u64().is_some(), "{stats}");
    // This session's tokens so far, counted as the provider reported them.
    assert!(
        stats["session_tokens"]["input"].as_u64().unwrap() > 0,
        "{stats}"
    );
    let status = rpc(&mut c, "memory.status", json!({})).await;
    assert_eq!(status["memoriesPromoted"], json!(1));
}

#[tokio::test]
async fn with_embeddings_search_is_hybrid_and_a_failing_index_update_is_retried() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    c.config_set(
        "memory.embeddings",
        json!({"url": format!("{}/embeddings", llm.base_url_openai()), "model": "text-embedding-3-small",
               "apiKey": FAKE_API_KEY}),
    )
    .await;
    rpc(
        &mut c,
        "memory.put",
        json!({"category": "preferences", "title": "coffee",
        "content": "Takes coffee black.", "abstract": "Takes coffee black"}),
    )
    .await;
    rpc(
        &mut c,
        "memory.put",
        json!({"category": "profile", "title": "job",
        "content": "Works as a nurse.", "abstract": "Works as a nurse"}),
    )
    .await;
    // Each write embedded its abstract and overview in one request.
    assert_eq!(llm.embedding_calls(), 2);
    // "espresso" is in no memory: only the vectors find the coffee one.
    let found = rpc(&mut c, "memory.search", json!({"query": "espresso"})).await;
    assert_eq!(found["mode"], json!("hybrid"));
    assert_eq!(
        found["hits"][0]["uri"],
        json!("ctx://default/users/owner/memories/preferences/coffee")
    );

    // The embeddings service fails: the node is committed, its index
    // update waits in the outbox and is retried until it goes through.
    llm.set_embeddings_failing(true);
    rpc(
        &mut c,
        "memory.put",
        json!({"category": "events", "title": "trip",
        "content": "Trip to Porto in May.", "abstract": "Trip to Porto"}),
    )
    .await;
    let status = rpc(&mut c, "memory.status", json!({})).await;
    assert_eq!(
        (&status["nodes"], &status["pendingEvents"]),
        (&json!(2), &json!(1))
    );
    let node = rpc(
        &mut c,
        "memory.get",
        json!({"uri": "ctx://default/users/owner/memories/events/trip", "level": 0}),
    )
    .await;
    assert_eq!(node["node"]["text"], json!("Trip to Porto"));
    llm.set_embeddings_failing(false);
    let status = poll::until(secs(20), ms(200), async || {
        let status = rpc(&mut c, "memory.status", json!({})).await;
        if status["pendingEvents"] == json!(0) {
            Ok(status)
        } else {
            Err(format!("the retry never went through: {status}"))
        }
    })
    .await;
    assert_eq!(
        (&status["nodes"], &status["deadLettered"]),
        (&json!(3), &json!(0))
    );
    let found = rpc(&mut c, "memory.search", json!({"query": "Porto"})).await;
    assert_eq!(
        found["hits"][0]["uri"],
        json!("ctx://default/users/owner/memories/events/trip")
    );
}

#[tokio::test]
async fn a_resets_extracted_memories_become_memory_nodes() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    llm.script(
        "List the durable facts",
        vec![Step::text(
            "<memories>\n- [preferences] Sails at dawn\n- [cases] The dinghy leaks when overloaded\n- An untagged fact\n</memories>",
        )],
    );
    chat(
        &mut c,
        "main",
        "we sailed at dawn; the dinghy leaked with four aboard",
    )
    .await;
    rpc(&mut c, "session.reset", json!({"sessionKey": "main"})).await;
    let uris = |r: &Value| -> Vec<String> {
        r["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["uri"].as_str().unwrap().to_string())
            .collect()
    };
    let dawn = rpc(&mut c, "memory.search", json!({"query": "dawn"})).await;
    assert_eq!(
        uris(&dawn),
        ["ctx://default/users/owner/memories/preferences/sails_at_dawn"]
    );
    let dinghy = rpc(&mut c, "memory.search", json!({"query": "dinghy"})).await;
    assert_eq!(
        uris(&dinghy),
        ["ctx://default/agents/main/memories/cases/the_dinghy_leaks_when_overloaded"]
    );
    let node = rpc(
        &mut c,
        "memory.get",
        json!({"uri": "ctx://default/users/owner/memories/preferences/sails_at_dawn"}),
    )
    .await;
    assert_eq!(
        (&node["node"]["text"], &node["node"]["tags"]),
        (&json!("Sails at dawn"), &json!(["reset"]))
    );
    let status = rpc(&mut c, "memory.status", json!({})).await;
    assert_eq!(status["nodes"], json!(2));
}

/// A session whose recall found the index empty skips the next recalls
/// while nothing it would hear of changed; a first memory written anywhere
/// (here by `memory.put`, then the agent's tool in another session) is
/// still recalled by its very next turn. (Here every object shares one
/// isolate, whose R2 write count is part of the workspace revision, so the
/// index's word to the gateway is not the only thing that moves it; on
/// Cloudflare the objects' isolates are apart and that word carries it.)
#[tokio::test]
async fn a_session_that_found_no_memories_recalls_the_first_one_written_anywhere() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    llm.script("sail", vec![Step::text("Ok.")]);
    chat(&mut c, "main", "sail: when do we leave?").await;
    chat(&mut c, "main", "sail: and the tide?").await;
    assert!(!read_with(&llm, "sail: and the tide?").contains("Recalled memories"));

    let put = rpc(
        &mut c,
        "memory.put",
        json!({"category": "preferences", "title": "dawn",
               "content": "Sails at dawn with the ebb tide.", "abstract": "Sails at dawn"}),
    )
    .await;
    let dawn = put["uri"].as_str().unwrap().to_string();
    chat(&mut c, "main", "sail: what time tomorrow?").await;
    assert!(
        read_with(&llm, "sail: what time tomorrow?")
            .contains(&format!("- [preferences] Sails at dawn ({dawn})")),
        "{}",
        read_with(&llm, "sail: what time tomorrow?")
    );

    // Emptied, found empty again, then a first memory from a tool call in
    // another session.
    rpc(&mut c, "memory.delete", json!({"uri": dawn})).await;
    chat(&mut c, "main", "sail: anything on dawn?").await;
    chat(&mut c, "main", "sail: anything at all?").await;
    assert!(!read_with(&llm, "sail: anything at all?").contains("Recalled memories"));
    llm.script(
        "note the mooring",
        vec![
            Step::tool_call(
                "w1",
                "gsv__MemoryWrite",
                json!({"category": "preferences", "title": "mooring",
                       "content": "The boat is moored at buoy 12.",
                       "abstract": "Moored at buoy 12"}),
            ),
            Step::text("Noted."),
        ],
    );
    assert_eq!(chat(&mut c, "other", "note the mooring").await, "Noted.");
    chat(&mut c, "main", "sail: where is the mooring buoy?").await;
    let prompt = read_with(&llm, "sail: where is the mooring buoy?");
    assert!(
        prompt.contains("- [preferences] Moored at buoy 12 ("),
        "{prompt}"
    );
}
