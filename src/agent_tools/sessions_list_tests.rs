//! `gsv__SessionsList` against a fake registry and fake sessions.

use super::*;
use crate::selfreport::logs::Entry;
use crate::session::meta::SessionMeta;
use futures::executor::block_on;
use gsv_protocol::{
    AssistantBlock, AssistantMessage, ErrorShape, SessionPreviewResult, SessionRegistryEntry,
    SessionStatsResult, SessionsListResult, UserContent, UserMessage,
};
use serde_json::json;
use std::cell::RefCell;

const MAIN: &str = "agent:main:main";
const DM: &str = "agent:main:discord:dm:7";
const GROUP: &str = "agent:main:discord:group:9";

fn user(text: &str, ts: i64) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: ts,
        context: None,
    })
}

fn assistant(text: &str, ts: i64) -> Message {
    Message::Assistant(AssistantMessage {
        content: vec![AssistantBlock::Text { text: text.into() }],
        api: None,
        provider: None,
        model: None,
        usage: None,
        stop_reason: None,
        error_message: None,
        timestamp: ts,
    })
}

struct Here;

impl ThisSession for Here {
    fn meta(&self) -> Result<SessionMeta, ErrorShape> {
        Ok(SessionMeta::new("cur".into(), MAIN.into(), 1_000))
    }
    fn message_count(&self) -> Result<u64, ErrorShape> {
        Ok(3)
    }
    fn messages(&self, start: usize, take: usize) -> Result<Vec<Message>, ErrorShape> {
        let all = [
            user("first", 1_100),
            assistant("second", 1_200),
            user("third", 1_300),
        ];
        Ok(all.into_iter().skip(start).take(take).collect())
    }
}

/// Three sessions in the registry; the group's object fails.
#[derive(Default)]
struct Registry {
    asked: RefCell<Vec<String>>,
}

fn registry_entry(key: &str, at: i64, label: Option<&str>) -> SessionRegistryEntry {
    SessionRegistryEntry {
        session_key: key.into(),
        created_at: at - 500,
        last_active_at: at,
        label: label.map(String::from),
    }
}

impl OtherSessions for Registry {
    async fn of_agent(
        &self,
        agent_id: &str,
        limit: u32,
        offset: u32,
    ) -> Result<SessionsListResult, ErrorShape> {
        self.asked
            .borrow_mut()
            .push(format!("list {agent_id} {limit} {offset}"));
        let all = vec![
            registry_entry(MAIN, 3_000, None),
            registry_entry(DM, 2_000, Some("Ada")),
            registry_entry(GROUP, 1_000, None),
        ];
        Ok(SessionsListResult {
            sessions: all
                .into_iter()
                .skip(offset as usize)
                .take(limit as usize)
                .collect(),
            count: 3,
        })
    }
    async fn stats(&self, _: &str) -> Result<SessionStatsResult, ErrorShape> {
        unreachable!("not used by gsv__SessionsList")
    }
    async fn preview(
        &self,
        session_key: &str,
        limit: Option<u32>,
    ) -> Result<SessionPreviewResult, ErrorShape> {
        self.asked
            .borrow_mut()
            .push(format!("preview {session_key} {limit:?}"));
        if session_key == GROUP {
            return Err(ErrorShape::new(500, "object reset"));
        }
        Ok(SessionPreviewResult {
            session_key: session_key.into(),
            session_id: "dm".into(),
            message_count: 10,
            messages: vec![user(&"x".repeat(400), 1_900)],
        })
    }
}

fn listed(key: &str, at: i64, label: Option<&str>) -> ListedSession {
    ListedSession {
        session_key: key.into(),
        label: label.map(String::from),
        created_at: at - 500,
        last_active_at: at,
        this_session: key == MAIN,
        message_count: None,
        messages: None,
        error: None,
    }
}

fn entry_of(index: usize, role: &'static str, ts: i64, preview: String) -> Entry {
    Entry {
        index,
        role,
        timestamp: ts,
        tool_name: None,
        is_error: false,
        preview,
    }
}

#[test]
fn lists_a_page_without_messages_by_default() {
    let reg = Registry::default();
    let r = block_on(run(&Here, &reg, "main", &json!({}))).unwrap();
    assert_eq!(
        r,
        ListResult {
            sessions: vec![
                listed(MAIN, 3_000, None),
                listed(DM, 2_000, Some("Ada")),
                listed(GROUP, 1_000, None)
            ],
            count: 3,
            offset: 0,
            has_more: false,
        }
    );
    assert_eq!(*reg.asked.borrow(), ["list main 20 0"]);

    let reg = Registry::default();
    let r = block_on(run(&Here, &reg, "main", &json!({"limit": 1, "offset": 1}))).unwrap();
    assert_eq!(
        serde_json::to_value(&r).unwrap(),
        json!({"sessions": [{"sessionKey": DM, "label": "Ada", "createdAt": 1500, "lastActiveAt": 2000}],
               "count": 3, "offset": 1, "hasMore": true})
    );
}

#[test]
fn previews_this_session_here_and_the_others_from_their_objects() {
    let reg = Registry::default();
    let r = block_on(run(&Here, &reg, "main", &json!({"messageLimit": 2}))).unwrap();
    let mut main = listed(MAIN, 3_000, None);
    main.message_count = Some(3);
    main.messages = Some(vec![
        entry_of(1, "assistant", 1_200, "second".into()),
        entry_of(2, "user", 1_300, "third".into()),
    ]);
    let mut dm = listed(DM, 2_000, Some("Ada"));
    dm.message_count = Some(10);
    dm.messages = Some(vec![entry_of(
        9,
        "user",
        1_900,
        format!("{}…", "x".repeat(299)),
    )]);
    let mut group = listed(GROUP, 1_000, None);
    group.error = Some("could not read its messages: object reset".into());
    assert_eq!(
        r,
        ListResult {
            sessions: vec![main, dm, group],
            count: 3,
            offset: 0,
            has_more: false,
        }
    );
    assert_eq!(
        *reg.asked.borrow(),
        [
            "list main 20 0",
            "preview agent:main:discord:dm:7 Some(2)",
            "preview agent:main:discord:group:9 Some(2)"
        ]
    );
}

#[test]
fn bad_arguments_are_refused_in_words() {
    let reg = Registry::default();
    for (args, error) in [
        (
            json!({"limit": 0}),
            "limit must be a whole number from 1 to 100",
        ),
        (
            json!({"limit": 101}),
            "limit must be a whole number from 1 to 100",
        ),
        (
            json!({"messageLimit": 21}),
            "messageLimit must be a whole number from 0 to 20",
        ),
        (
            json!({"offset": -1}),
            "offset must be a whole number from 0 to 4294967295",
        ),
    ] {
        assert_eq!(
            block_on(run(&Here, &reg, "main", &args)),
            Err(ToolError::new(error))
        );
    }
    assert!(reg.asked.borrow().is_empty());
}
