//! The agent workspace in R2 end to end: first-start templates, the
//! workspace methods, and the system prompt the model receives.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::fake_llm::{FakeLlm, Step};
use gsv_e2e::harness::{GatewayOptions, Workerd};
use gsv_e2e::poll::{self, ms, secs};
use gsv_e2e::ws::Client;
use gsv_protocol::ChatState;
use serde_json::{json, Value};
use std::time::Duration;

const TOKEN: &str = "test-token";

/// The system prompt of the last model request whose last message is `text`.
fn system_prompt_for(llm: &FakeLlm, text: &str) -> String {
    prompts_for(llm, text)
        .pop()
        .unwrap_or_else(|| panic!("no model request ended with {text:?}"))
}

async fn chat(c: &mut Client, key: &str, text: &str) {
    let run = c.chat_send(key, text).await;
    let events = c.run_events(&run).await;
    assert_eq!(events.last().unwrap().state, ChatState::Final, "{events:?}");
}

fn today_utc() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    gsv_gateway::workspace::paths::utc_date(now.as_millis() as i64)
}

#[tokio::test]
async fn the_model_gets_the_prompt_assembled_from_the_workspace() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;

    // First start: the templates are written and commissioning begins.
    chat(&mut c, "main", "hello, who are you?").await;
    let prompt = system_prompt_for(&llm, "hello, who are you?");
    assert!(
        prompt.contains("## COMMISSIONING CEREMONY (First Run)"),
        "{prompt}"
    );
    let root = c
        .request("workspace.list", json!({}))
        .await
        .payload
        .unwrap();
    assert_eq!(
        root,
        json!({"path": "", "directories": ["skills"], "files":
            ["AGENTS.md", "BOOTSTRAP.md", "HEARTBEAT.md", "IDENTITY.md", "MEMORY.md", "SOUL.md", "TOOLS.md", "USER.md"]})
    );

    // Commissioning done: a soul, a memory, a daily note; BOOTSTRAP.md gone.
    let write = |path: &str, content: &str| json!({"path": path, "content": content});
    for (path, content) in [
        (
            "SOUL.md",
            "I am a careful crab who double-checks everything.",
        ),
        ("MEMORY.md", "- The human's cat is called Ziggy."),
        (
            &format!("memory/{}.md", today_utc()),
            "- Talked about tide pools today.",
        ),
    ] {
        let res = c.request("workspace.write", write(path, content)).await;
        assert_eq!(
            res.payload.unwrap(),
            json!({"path": path, "size": content.len(), "written": true})
        );
    }
    let res = c
        .request("workspace.delete", json!({"path": "BOOTSTRAP.md"}))
        .await;
    assert_eq!(
        res.payload.unwrap(),
        json!({"path": "BOOTSTRAP.md", "deleted": true})
    );
    let read = c
        .request("workspace.read", json!({"path": "SOUL.md"}))
        .await
        .payload
        .unwrap();
    assert_eq!(
        read["content"],
        json!("I am a careful crab who double-checks everything.")
    );

    chat(&mut c, "main", "what do you remember?").await;
    let prompt = system_prompt_for(&llm, "what do you remember?");
    assert!(!prompt.contains("COMMISSIONING"), "{prompt}");
    for expected in [
        "## Your Soul",
        "I am a careful crab who double-checks everything.",
        "## Long-Term Memory",
        "The human's cat is called Ziggy.",
        "Talked about tide pools today.",
        "## Runtime",
    ] {
        assert!(
            prompt.contains(expected),
            "missing {expected:?} in:\n{prompt}"
        );
    }
    let soul_at = prompt.find("## Your Soul").unwrap();
    let memory_at = prompt.find("## Long-Term Memory").unwrap();
    assert!(soul_at < memory_at, "sections out of order");

    // MEMORY.md is private to the main session.
    chat(&mut c, "agent:main:discord:group:42", "group hello").await;
    let prompt = system_prompt_for(&llm, "group hello");
    assert!(prompt.contains("I am a careful crab"), "{prompt}");
    assert!(
        !prompt.contains("Ziggy"),
        "MEMORY.md leaked into a non-main session:\n{prompt}"
    );
}

#[tokio::test]
async fn workspace_paths_stay_inside_the_workspace() {
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    let err = |v: Value| serde_json::to_value(v["error"].clone()).unwrap();
    let cases = [
        ("workspace.read", json!({"path": "../agents/other/SOUL.md"})),
        (
            "workspace.write",
            json!({"path": "/etc/passwd", "content": "x"}),
        ),
        (
            "workspace.write",
            json!({"path": "memory/../../x", "content": "x"}),
        ),
        ("workspace.delete", json!({"path": "a\\b"})),
    ];
    for (method, params) in cases {
        let res = c.request(method, params.clone()).await;
        let e = err(serde_json::to_value(&res).unwrap());
        assert_eq!(e["code"], json!(400), "{method} {params}: {e}");
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .starts_with("invalid workspace path"),
            "{e}"
        );
    }
    let res = c
        .request("workspace.read", json!({"path": "NOPE.md"}))
        .await;
    assert_eq!(res.error.unwrap().code, 404);
    // Agents have separate workspaces.
    c.request(
        "workspace.write",
        json!({"path": "SOUL.md", "content": "work soul", "agentId": "work"}),
    )
    .await;
    let res = c
        .request("workspace.read", json!({"path": "SOUL.md"}))
        .await;
    assert_eq!(
        res.error.unwrap().code,
        404,
        "the main agent must not see the work agent's file"
    );
}

#[tokio::test]
async fn the_agent_commissions_itself_with_the_workspace_tools() {
    use gsv_e2e::fake_llm::Step;
    use gsv_protocol::Message;
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    c.request(
        "workspace.write",
        json!({"path": "IDENTITY.md", "content": "- **Name:** Nim\n- **Emoji:** 🦀\n"}),
    )
    .await;
    c.request(
        "workspace.write",
        json!({"path": "BOOTSTRAP.md", "content": "Ask who the human is, then delete this file."}),
    )
    .await;

    llm.script(
        "commission-e2e",
        vec![
            // Calls of one turn run in parallel, so they are independent.
            Step::tool_calls(vec![
                (
                    "c1",
                    "gsv__WriteFile",
                    json!({"path": "USER.md", "content": "The human likes tea."}),
                ),
                ("c2", "gsv__DeleteFile", json!({"path": "BOOTSTRAP.md"})),
                ("c3", "who_am_i", json!({})),
            ]),
            Step::tool_call(
                "c4",
                "gsv__EditFile",
                json!({"path": "USER.md", "oldString": "tea", "newString": "green tea"}),
            ),
        ],
    );
    chat(&mut c, "main", "commission-e2e: I am Sam").await;

    // The tools were offered to the model, and did their work.
    let first = llm
        .requests()
        .into_iter()
        .find(|r| r.body.to_string().contains("commission-e2e"))
        .unwrap();
    let offered: Vec<&str> = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    for name in [
        "gsv__ReadFile",
        "gsv__WriteFile",
        "gsv__EditFile",
        "gsv__ListFiles",
        "gsv__DeleteFile",
        "who_am_i",
        "what_do_i_know",
        "my_stats",
    ] {
        assert!(offered.contains(&name), "{name} not offered: {offered:?}");
    }
    let user = c
        .request("workspace.read", json!({"path": "USER.md"}))
        .await
        .payload
        .unwrap();
    assert_eq!(user["content"], json!("The human likes green tea."));
    assert_eq!(
        c.request("workspace.read", json!({"path": "BOOTSTRAP.md"}))
            .await
            .error
            .unwrap()
            .code,
        404
    );

    let preview = c
        .request("session.preview", json!({"sessionKey": "main"}))
        .await
        .payload
        .unwrap();
    let messages: Vec<Message> = serde_json::from_value(preview["messages"].clone()).unwrap();
    let results: Vec<(String, bool, String)> = messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((
                r.tool_call_id.clone(),
                r.is_error,
                gsv_protocol::join_text(&r.content),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 4, "{results:?}");
    assert_eq!(
        results[0],
        (
            "c1".into(),
            false,
            json!({"path": "USER.md", "size": 20, "written": true}).to_string()
        )
    );
    assert_eq!(
        results[1],
        (
            "c2".into(),
            false,
            json!({"path": "BOOTSTRAP.md", "deleted": true}).to_string()
        )
    );
    let who: Value = serde_json::from_str(&results[2].2).unwrap();
    assert_eq!(
        (who["agent_id"].clone(), who["identity_line"].clone()),
        (json!("main"), json!("name=Nim, emoji=🦀"))
    );
    assert_eq!(
        results[3],
        (
            "c4".into(),
            false,
            json!({"path": "USER.md", "replacements": 1}).to_string()
        )
    );

    // The workspace was read once for the run: its three model calls got the
    // same prompt although the tools changed USER.md and BOOTSTRAP.md.
    let run_prompts: Vec<String> = llm
        .requests()
        .into_iter()
        .filter(|r| r.body.to_string().contains("commission-e2e"))
        .map(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(run_prompts.len(), 3);
    assert!(
        run_prompts.iter().all(|p| p == &run_prompts[0]),
        "the prompt changed within a run"
    );
    assert!(run_prompts[0].contains("COMMISSIONING"));

    // Commissioning is over: the next run gets the normal prompt.
    chat(&mut c, "main", "good morning").await;
    let prompt = system_prompt_for(&llm, "good morning");
    assert!(!prompt.contains("COMMISSIONING"), "{prompt}");
    assert!(prompt.contains("The human likes green tea."), "{prompt}");
}

#[tokio::test]
async fn skills_status_reports_skills_and_eligible_ones_reach_the_prompt() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    let skill = "---\nname: tide-tables\ndescription: Look up tide tables for a harbour.\n---\n# Tides\nUse the almanac.\n";
    let broken = "---\nname: [unclosed\n---\nbody\n";
    for (path, content) in [
        ("skills/tides/SKILL.md", skill),
        ("skills/broken/SKILL.md", broken),
        ("BOOTSTRAP.md", ""),
    ] {
        assert!(
            c.request("workspace.write", json!({"path": path, "content": content}))
                .await
                .ok
        );
    }
    let status = c.request("skills.status", json!({})).await.payload.unwrap();
    assert_eq!(status["agentId"], json!("main"));
    let skills = status["skills"].as_array().unwrap();
    let tides = skills
        .iter()
        .find(|s| s["name"] == json!("tide-tables"))
        .expect("tides listed");
    assert_eq!(
        (
            tides["eligible"].clone(),
            tides["source"].clone(),
            tides["readPath"].clone(),
            tides["description"].clone()
        ),
        (
            json!(true),
            json!("agent"),
            json!("skills/tides/SKILL.md"),
            json!("Look up tide tables for a harbour.")
        )
    );
    let broken = skills
        .iter()
        .find(|s| s["location"].as_str().unwrap().contains("broken"))
        .expect("broken listed");
    assert_eq!(broken["eligible"], json!(false));
    assert!(
        broken["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{broken}"
    );

    // The CLI shows the same.
    let out = gsv_e2e::harness::run_gsv(&gw.url(), TOKEN, &["skills", "status"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.starts_with("Skills of agent main:\n  ✓ tide-tables (agent) — Look up tide tables for a harbour.\n  ✗ "), "{stdout}");

    chat(&mut c, "main", "any skills?").await;
    let prompt = system_prompt_for(&llm, "any skills?");
    assert!(prompt.contains("## Skills (Mandatory Scan)"), "{prompt}");
    assert!(prompt.contains("tide-tables"), "{prompt}");
}

/// The R2 requests of the session's last prompt, from `session.stats`.
async fn last_load(c: &mut Client, key: &str) -> Value {
    let res = c.request("session.stats", json!({"sessionKey": key})).await;
    res.payload.unwrap_or_else(|| panic!("{:?}", res.error))["lastWorkspaceLoad"].clone()
}

/// `lastWorkspaceLoad` as `session.stats` reports it: R2 GETs, listing
/// pages, PUTs, dependent batches, workspace and daily files known without
/// a read, SKILL.md bodies cached and read, and what became of a model
/// call made alongside the load.
fn load(
    gets: u32,
    lists: u32,
    puts: u32,
    batches: u32,
    files: u32,
    skills: (u32, u32),
    early: Option<&str>,
) -> Value {
    let mut v = json!({
        "r2Gets": gets,
        "r2Lists": lists,
        "r2Puts": puts,
        "batches": batches,
        "filesCached": files,
        "skillsCached": skills.0,
        "skillsRead": skills.1,
    });
    if let Some(early) = early {
        v["earlyCall"] = json!(early);
    }
    v
}

/// The system prompts of the model requests made for the user message `text`.
fn prompts_for(llm: &FakeLlm, text: &str) -> Vec<String> {
    llm.requests()
        .into_iter()
        .filter(|r| {
            r.body["messages"]
                .as_array()
                .and_then(|m| m.last())
                .is_some_and(|m| m["content"] == json!(text))
        })
        .map(|r| {
            r.body["messages"][0]["content"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn a_run_validates_the_workspace_with_listings_in_one_batch() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;

    // First start, nothing seen yet: the 8 workspace files and 2 daily
    // files are read with both skill listings, then the templates written.
    chat(&mut c, "main", "one").await;
    assert_eq!(
        last_load(&mut c, "main").await,
        load(10, 2, 8, 2, 0, (0, 0), None)
    );
    // Commissioned: the Skills section is part of the normal prompt.
    let res = c
        .request("workspace.delete", json!({"path": "BOOTSTRAP.md"}))
        .await;
    assert!(res.ok, "{res:?}");

    let skill = |name: &str, version: u32| {
        format!("---\nname: {name}\ndescription: Skill {name}, version {version}.\n---\nBody\n")
    };
    for name in ["alpha", "beta"] {
        let path = format!("skills/{name}/SKILL.md");
        let res = c
            .request(
                "workspace.write",
                json!({"path": path, "content": skill(name, 1)}),
            )
            .await;
        assert!(res.ok, "{res:?}");
    }
    // Everything was read or written by this gateway: four listings (the
    // top level, the daily window, both skills prefixes) and no read. The
    // gateway wrote to the workspace since the last prompt, so the model
    // was not called before the check.
    chat(&mut c, "main", "two").await;
    assert_eq!(
        last_load(&mut c, "main").await,
        load(0, 4, 0, 1, 10, (2, 0), None)
    );
    let prompt = system_prompt_for(&llm, "two");
    assert!(prompt.contains("Skill beta, version 1."), "{prompt}");
    assert!(!prompt.contains("COMMISSIONING CEREMONY"), "{prompt}");

    // Written outside the gateway, as an operator would: nothing the
    // gateway knows of changed, and the prompt was checked against R2 less
    // than `workspace.recheckSeconds` (60) ago, so the next run takes the
    // previous prompt as it is and reads nothing.
    let today = today_utc();
    gw.r2_put_outside(
        "agents/main/SOUL.md",
        "# SOUL\nYou answer like a lighthouse keeper.\n",
    );
    gw.r2_put_outside("agents/main/skills/beta/SKILL.md", &skill("beta", 2));
    gw.r2_put_outside(
        &format!("agents/main/memory/{today}.md"),
        "- The user moved to Harwich.\n",
    );
    chat(&mut c, "main", "three").await;
    assert_eq!(
        last_load(&mut c, "main").await,
        load(0, 0, 0, 0, 0, (0, 0), Some("reused"))
    );
    assert_eq!(prompts_for(&llm, "three").len(), 1);
    let prompt = system_prompt_for(&llm, "three");
    assert!(!prompt.contains("lighthouse keeper"), "{prompt}");

    // `gsv workspace refresh`: the next run reads the workspace again. The
    // listings' etags show what changed, and only that is read.
    let out = gsv_e2e::harness::run_gsv(&gw.url(), TOKEN, &["workspace", "refresh"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "The agent's next runs read the workspace again (edits made outside the gateway included).\n"
    );
    chat(&mut c, "main", "four").await;
    assert_eq!(
        last_load(&mut c, "main").await,
        load(3, 4, 0, 2, 8, (1, 1), None)
    );
    assert_eq!(prompts_for(&llm, "four").len(), 1);
    let prompt = system_prompt_for(&llm, "four");
    for new in [
        "You answer like a lighthouse keeper.",
        "Skill beta, version 2.",
        "The user moved to Harwich.",
        "Skill alpha, version 1.",
    ] {
        assert!(prompt.contains(new), "{new:?} missing from {prompt}");
    }
    assert!(!prompt.contains("Skill beta, version 1."), "{prompt}");
    // The history holds each answer once.
    assert_eq!(
        c.history_roles("main", 100).await,
        ["user", "assistant"].repeat(4)
    );

    // Another session of the same agent, in the same isolate, within
    // `workspace.recheckSeconds` of the listings the last run took: its
    // first run (no previous prompt to call early with) takes them, so it
    // requests nothing, and its prompt holds the same files.
    chat(&mut c, "other", "five").await;
    assert_eq!(
        last_load(&mut c, "other").await,
        load(0, 0, 0, 0, 10, (2, 0), None)
    );
    let prompt = system_prompt_for(&llm, "five");
    assert!(
        prompt.contains("You answer like a lighthouse keeper."),
        "{prompt}"
    );
    assert!(prompt.contains("Skill beta, version 2."), "{prompt}");

    // The CLI shows it.
    let out = gsv_e2e::harness::run_gsv(&gw.url(), TOKEN, &["session", "stats", "other"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "Last prompt  nothing requested from R2: 10 files and 2 skills cached, as another session listed them\n"
        ),
        "{stdout}"
    );
}

#[tokio::test]
async fn an_edit_made_outside_the_gateway_reaches_a_prompt_within_recheck_seconds() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    c.config_set("workspace.recheckSeconds", json!(2)).await;

    // The first run writes the first-start templates, so the second reads
    // the workspace again; after it, nothing the gateway knows of changes.
    chat(&mut c, "main", "one").await;
    chat(&mut c, "main", "two").await;
    let checked = std::time::Instant::now();
    gw.r2_put_outside(
        "agents/main/SOUL.md",
        "# SOUL\nYou answer like a lighthouse keeper.\n",
    );
    // Past the bound, the run checks R2: its first call, made alongside
    // with the previous prompt, is discarded for the new one.
    tokio::time::sleep(Duration::from_millis(2500).saturating_sub(checked.elapsed())).await;
    chat(&mut c, "main", "three").await;
    let load = last_load(&mut c, "main").await;
    assert_eq!(load["earlyCall"], "discarded", "{load}");
    assert_eq!(load["r2Gets"], 1, "only SOUL.md is read again: {load}");
    let prompts = prompts_for(&llm, "three");
    assert_eq!(prompts.len(), 2, "{prompts:?}");
    assert!(!prompts[0].contains("lighthouse keeper"), "{}", prompts[0]);
    assert!(prompts[1].contains("lighthouse keeper"), "{}", prompts[1]);
}

/// The content `gsv__ReadFile` call `id` gave the model, once a model
/// request carries its result.
async fn content_read_by(llm: &FakeLlm, id: &str) -> String {
    let text = poll::until(secs(20), ms(20), async || {
        let result = llm.requests().iter().find_map(|r| {
            r.body["messages"].as_array()?.iter().find_map(|m| {
                (m["role"] == "tool" && m["tool_call_id"] == id)
                    .then(|| m["content"].as_str().map(str::to_string))
                    .flatten()
            })
        });
        result.ok_or_else(|| format!("no result of {id}"))
    })
    .await;
    let read: Value = serde_json::from_str(&text).unwrap_or_else(|_| json!(text));
    read["content"].as_str().unwrap_or(&text).to_string()
}

#[tokio::test]
async fn the_agent_reads_its_files_as_its_prompt_sees_them_and_hears_of_changes_mid_run() {
    let llm = FakeLlm::start().await;
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;
    let mut other = Client::connect(&gw.url(), Some(TOKEN)).await;
    c.use_fake_openai(&llm).await;
    c.config_set("workspace.recheckSeconds", json!(60)).await;
    // The first run writes the templates; the second lists the workspace.
    chat(&mut c, "main", "one").await;
    chat(&mut c, "main", "two").await;
    let soul = |text: &str| format!("# SOUL\n{text}\n");
    gw.r2_put_outside("agents/main/SOUL.md", &soul("Edited outside."));

    let read = |id: &str| Step::tool_call(id, "gsv__ReadFile", json!({"path": "SOUL.md"}));
    llm.script(
        "three",
        vec![
            read("r1"),
            Step::delay(3000, read("r2")),
            Step::delay(3000, read("r3")),
            Step::text("done"),
        ],
    );
    let run = c.chat_send("main", "three").await;
    // Within `workspace.recheckSeconds` of the listing the prompt was
    // checked with, a file is read as the prompt sees it.
    let first = content_read_by(&llm, "r1").await;
    assert_eq!(first, include_str!("../../templates/workspace/SOUL.md"));
    // `gsv workspace refresh` while the run waits on the model: its next
    // read has the edit.
    let out = gsv_e2e::harness::run_gsv(&gw.url(), TOKEN, &["workspace", "refresh"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(content_read_by(&llm, "r2").await, soul("Edited outside."));
    // An edit through the gateway, from another client: the next read has it.
    let written = other
        .request(
            "workspace.write",
            json!({"path": "SOUL.md", "content": soul("Edited through the gateway.")}),
        )
        .await;
    assert!(written.ok, "{written:?}");
    assert_eq!(
        content_read_by(&llm, "r3").await,
        soul("Edited through the gateway.")
    );
    let events = c.run_events(&run).await;
    assert_eq!(events.last().unwrap().state, ChatState::Final, "{events:?}");
}
