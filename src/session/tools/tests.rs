use super::*;
use serde_json::json;

fn text_result(id: &str, name: &str, text: &str, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content: vec![ContentBlock::Text { text: text.into() }],
        is_error,
        timestamp: 5,
    })
}

fn call(id: &str, dispatched: bool, result: Option<Message>) -> PendingCall {
    PendingCall {
        call_id: id.into(),
        name: "laptop__Bash".into(),
        dispatched,
        result,
    }
}

#[test]
fn results_become_text_or_images() {
    assert_eq!(
        result_message("c1", "laptop__Bash", Ok(json!("hello")), 100, 5),
        text_result("c1", "laptop__Bash", "hello", false)
    );
    assert_eq!(
        result_message(
            "c1",
            "laptop__Read",
            Ok(json!({"path": "/a", "lines": 2})),
            100,
            5
        ),
        text_result("c1", "laptop__Read", r#"{"lines":2,"path":"/a"}"#, false)
    );
    assert_eq!(
        result_message("c1", "laptop__Read", Err("no such file".into()), 100, 5),
        text_result("c1", "laptop__Read", "Error: no such file", true)
    );
    let image = json!({
        "path": "/a.png",
        "content": [
            {"type": "image", "data": "iVBOR", "mimeType": "image/png"},
            {"type": "text", "text": "Image /a.png (5 bytes)"}
        ]
    });
    assert_eq!(
        result_message("c2", "laptop__Read", Ok(image), 100, 5),
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "c2".into(),
            tool_name: "laptop__Read".into(),
            content: vec![
                ContentBlock::Image {
                    data: Some("iVBOR".into()),
                    mime_type: "image/png".into(),
                    r2_key: None,
                    filename: None,
                    size: None,
                },
                ContentBlock::Text {
                    text: "Image /a.png (5 bytes)".into()
                },
            ],
            is_error: false,
            timestamp: 5,
        })
    );
    // A `content` field without images is just data.
    assert_eq!(
        result_message("c3", "x__Read", Ok(json!({"content": "plain"})), 100, 5),
        text_result("c3", "x__Read", r#"{"content":"plain"}"#, false)
    );
}

#[test]
fn long_results_are_cut_on_a_character_boundary() {
    assert_eq!(cap_text("short", 10), "short");
    assert_eq!(cap_text("0123456789", 10), "0123456789");
    assert_eq!(
        cap_text("ééééé€€€", 6),
        "éééééé"[..10].to_string() + "€\n\n[Result truncated: showing the first 6 of 8 characters]"
    );
    assert_eq!(
        result_message("c", "t", Ok(json!("aaaa")), 2, 1),
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: "t".into(),
            content: vec![ContentBlock::Text {
                text: "aa\n\n[Result truncated: showing the first 2 of 4 characters]".into()
            }],
            is_error: false,
            timestamp: 1,
        })
    );
}

#[test]
fn the_run_waits_until_every_call_is_answered() {
    let done = text_result("c1", "laptop__Bash", "ok", false);
    assert_eq!(tool_wait::<Message>(&[]), ToolWait::Idle);
    assert_eq!(
        tool_wait(&[call("c1", false, None), call("c2", true, None)]),
        ToolWait::Dispatch(vec![0])
    );
    // A native call answered inline is never dispatched.
    assert_eq!(
        tool_wait(&[
            call("c1", false, Some(done.clone())),
            call("c2", true, None)
        ]),
        ToolWait::Waiting
    );
    let second = text_result("c2", "laptop__Bash", "two", false);
    assert_eq!(
        tool_wait(&[
            call("c1", true, Some(done.clone())),
            call("c2", true, Some(second.clone()))
        ]),
        ToolWait::Complete(vec![done, second])
    );
}

#[test]
fn unanswered_calls_time_out_with_an_error() {
    assert_eq!(
        timed_out(&call("c9", true, None), 1500, 7),
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "c9".into(),
            tool_name: "laptop__Bash".into(),
            content: vec![ContentBlock::Text {
                text: "Error: laptop__Bash did not answer within 1.5 s (timeouts.toolMs)".into()
            }],
            is_error: true,
            timestamp: 7,
        })
    );
}

#[test]
fn background_completion_becomes_a_system_event() {
    let ev = NodeExecEventParams {
        event_id: "e1".into(),
        session_id: "s1".into(),
        event: ExecEventKind::Finished,
        call_id: Some("c1".into()),
        exit_code: Some(0),
        signal: None,
        output_tail: Some("x".repeat(5000)),
        started_at: Some(1),
        ended_at: Some(2),
    };
    let msg = exec_event_message("laptop", &ev);
    let (head, body) = msg.rsplit_once('\n').unwrap();
    assert_eq!(
        head,
        "System event: async_exec_completion\nBackground command s1 on node laptop finished."
    );
    assert_eq!(
        serde_json::from_str::<Value>(body).unwrap(),
        json!({
            "eventId": "e1", "nodeId": "laptop", "sessionId": "s1", "callId": "c1",
            "event": "finished", "exitCode": 0, "signal": null,
            "outputTail": "x".repeat(4000), "startedAt": 1, "endedAt": 2
        })
    );
}
