use super::*;
use gsv_protocol::{
    AssistantBlock, AssistantMessage, ContentBlock, ToolResultMessage, UserContent, UserMessage,
};
use serde_json::json;

fn message(i: usize) -> Message {
    let t = 1_708_300_000_000 + i as i64;
    match i % 3 {
        0 => Message::User(UserMessage {
            content: UserContent::Text(format!("question {i} — ünïcödé ✓")),
            timestamp: t,
            context: None,
        }),
        1 => Message::Assistant(AssistantMessage::new(
            vec![
                AssistantBlock::Text {
                    text: format!("answer {i}\nwith a newline"),
                },
                AssistantBlock::ToolCall {
                    id: format!("c{i}"),
                    name: "Bash".into(),
                    arguments: json!({"command": "ls"}),
                },
            ],
            t,
        )),
        _ => Message::ToolResult(ToolResultMessage {
            tool_call_id: format!("c{}", i - 1),
            tool_name: "Bash".into(),
            content: vec![ContentBlock::Text {
                text: "x".repeat(i % 500),
            }],
            is_error: false,
            timestamp: t,
        }),
    }
}

#[test]
fn keys() {
    assert_eq!(
        archive_key("main", "s-1"),
        "agents/main/sessions/s-1.jsonl.gz"
    );
    assert_eq!(
        part_archive_key("main", "s-1", 1708300000000),
        "agents/main/sessions/s-1-part1708300000000.jsonl.gz"
    );
}

#[test]
fn round_trip_of_2000_messages_in_chunks() {
    let messages: Vec<Message> = (0..2000).map(message).collect();
    let mut w = ArchiveWriter::new(4096);
    let mut chunks = Vec::new();
    for m in &messages {
        chunks.extend(w.push_message(m).unwrap());
        chunks.extend(std::iter::from_fn(|| w.take_chunk()));
    }
    assert_eq!(w.message_count(), 2000);
    chunks.extend(w.finish_chunks().unwrap());
    assert!(chunks.len() > 2);
    let (last, full) = chunks.split_last().unwrap();
    assert!(full.iter().all(|c| c.len() == 4096));
    assert!(!last.is_empty() && last.len() <= 4096);
    let gz = chunks.concat();
    let all: Page<Message> = read_page(&gz[..], 0, usize::MAX).unwrap();
    assert_eq!(
        all,
        Page {
            items: messages.clone(),
            next_offset: None
        }
    );
    let page: Page<Message> = read_page(&gz[..], 1990, 4).unwrap();
    assert_eq!(
        page,
        Page {
            items: messages[1990..1994].to_vec(),
            next_offset: Some(1994)
        }
    );
    let tail: Page<Message> = read_page(&gz[..], 1998, 5).unwrap();
    assert_eq!(
        tail,
        Page {
            items: messages[1998..].to_vec(),
            next_offset: None
        }
    );
    let past: Page<Message> = read_page(&gz[..], 5000, 5).unwrap();
    assert_eq!(
        past,
        Page {
            items: vec![],
            next_offset: None
        }
    );
}

#[test]
fn plain_jsonl_lines_and_pages() {
    let messages: Vec<Message> = (0..5).map(message).collect();
    let text: String = messages.iter().map(|m| jsonl_line(m).unwrap()).collect();
    assert_eq!(text.lines().count(), 5);
    assert_eq!(
        jsonl_line(&messages[0]).unwrap(),
        "{\"role\":\"user\",\"content\":\"question 0 — ünïcödé ✓\",\"timestamp\":1708300000000}\n"
    );
    let page: Page<Message> = read_jsonl_page(text.as_bytes(), 1, 2).unwrap();
    assert_eq!(
        page,
        Page {
            items: messages[1..3].to_vec(),
            next_offset: Some(3)
        }
    );
}

#[test]
fn raw_json_lines_pass_through() {
    let mut w = ArchiveWriter::new(R2_MIN_PART_BYTES);
    assert_eq!(
        w.push_json(r#"{"role":"user","content":"Hello","timestamp":1}"#)
            .unwrap(),
        None
    );
    assert_eq!(
        w.push_json("{\"role\":\"user\",\n \"content\":\"Hi\",\"timestamp\":2}")
            .unwrap(),
        None
    );
    assert_eq!(
        w.push_json("not json\n").unwrap_err(),
        ArchiveError("message is not JSON: expected ident at line 1 column 2".into())
    );
    let gz = w.finish().unwrap();
    let page: Page<serde_json::Value> = read_page(&gz[..], 0, 10).unwrap();
    assert_eq!(
        page.items,
        vec![
            json!({"role":"user","content":"Hello","timestamp":1}),
            json!({"role":"user","content":"Hi","timestamp":2})
        ]
    );
}

#[test]
fn corrupt_lines_are_reported() {
    let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
    enc.write_all(b"{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1}\n{oops}\n")
        .unwrap();
    let gz = enc.finish().unwrap();
    let err = read_page::<Message, _>(&gz[..], 0, 10).unwrap_err();
    assert_eq!(
        err,
        ArchiveError("archive line 2: key must be a string at line 1 column 2".into())
    );
    assert!(read_page::<Message, _>(&b"not gzip"[..], 0, 1).is_err());
}

#[test]
fn metadata_maps() {
    let info = ArchiveInfo {
        session_key: "agent:main:main",
        session_id: "8d6c",
        agent_id: "main",
        message_count: 42,
        archived_at_ms: 1708300000000,
    };
    let tokens = TokenCounts {
        input: 1000,
        output: 200,
        total: 1200,
        ..Default::default()
    };
    let s = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert_eq!(
        archive_metadata(&info, &tokens),
        s(&[
            ("sessionKey", "agent:main:main"),
            ("sessionId", "8d6c"),
            ("agentId", "main"),
            ("messageCount", "42"),
            ("archivedAt", "1708300000000"),
            ("inputTokens", "1000"),
            ("outputTokens", "200"),
            ("totalTokens", "1200"),
        ])
    );
    assert_eq!(
        part_archive_metadata(&info, 1708300005000),
        s(&[
            ("sessionKey", "agent:main:main"),
            ("sessionId", "8d6c"),
            ("agentId", "main"),
            ("partNumber", "1708300005000"),
            ("messageCount", "42"),
            ("archivedAt", "1708300000000"),
        ])
    );
}
