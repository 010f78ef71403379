use super::*;
use gsv_protocol::{
    AssistantBlock, AssistantMessage, ContentBlock, ToolResultMessage, UserContent, UserMessage,
};
use serde_json::json;

pub(super) fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: 1,
        context: None,
    })
}

pub(super) fn assistant(text: &str, calls: &[(&str, &str)]) -> Message {
    let mut content = vec![];
    if !text.is_empty() {
        content.push(AssistantBlock::Text { text: text.into() });
    }
    for (id, name) in calls {
        content.push(AssistantBlock::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: json!({}),
        });
    }
    Message::Assistant(AssistantMessage::new(content, 2))
}

pub(super) fn result(id: &str, name: &str, text: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content: vec![ContentBlock::Text { text: text.into() }],
        is_error: false,
        timestamp: 3,
    })
}

fn settings(window: u64, reserve: u64, keep: u64) -> CompactionSettings {
    CompactionSettings {
        enabled: true,
        reserve_tokens: reserve,
        keep_recent_tokens: keep,
        extract_memories: true,
        context_window: window,
    }
}

#[test]
fn token_estimates() {
    assert_eq!(estimate_text_tokens(""), 0);
    assert_eq!(estimate_text_tokens("abcd"), 2);
    assert_eq!(estimate_text_tokens(&"x".repeat(10)), 3);
    // 4 UTF-16 units.
    assert_eq!(estimate_text_tokens("éé😀"), 2);
    // Counted from the bytes as JS counts them, over every UTF-8 length.
    let mixed = "a — é… 😀 中文 \u{10FFFF} z".repeat(50);
    assert_eq!(
        estimate_text_tokens(&mixed),
        (mixed.encode_utf16().count() as u64 * 3).div_ceil(10)
    );
    // Its JSON line is 59 characters: ceil(59 / 4 × 1.2) = 18.
    let hello = Message::User(UserMessage {
        content: UserContent::Text("Hello".into()),
        timestamp: 1708300000000,
        context: None,
    });
    assert_eq!(estimate_message_tokens(&hello), 18);
    assert_eq!(estimate_messages_tokens(&[hello.clone(), hello]), 36);
}

#[test]
fn settings_from_config() {
    let config = Config::from_overrides(json!({"compaction": {"reserveTokens": 5000},
        "providers": {"local": {"contextWindow": 32768}}}));
    assert_eq!(
        CompactionSettings::from_config(&config, "anthropic", "claude-sonnet-4-20250514"),
        CompactionSettings {
            enabled: true,
            reserve_tokens: 5000,
            keep_recent_tokens: 20_000,
            extract_memories: true,
            context_window: 200_000,
        }
    );
    assert_eq!(
        CompactionSettings::from_config(&config, "local", "claude-x").context_window,
        32_768
    );
    assert_eq!(settings(200_000, 20_000, 0).threshold(), 180_000);
    assert_eq!(settings(200_000, 20_000, 0).chunk_budget(), 50_000);
}

#[test]
fn context_windows() {
    for (model, want) in [
        ("claude-sonnet-4-20250514", Some(200_000)),
        ("anthropic/claude-3-5-haiku", Some(200_000)),
        ("gpt-4.1-mini", Some(1_047_576)),
        ("GPT-4o", Some(128_000)),
        ("o3-mini", Some(200_000)),
        ("gemini-2.5-pro", Some(1_048_576)),
        ("llama3.1:8b", None),
    ] {
        assert_eq!(known_context_window(model), want, "{model}");
    }
    assert_eq!(
        context_window(&Config::default(), "ollama", "llama3.1:8b"),
        128_000
    );
}

#[test]
fn trigger_by_estimate_and_by_provider_count() {
    let msgs = vec![user(&"a".repeat(400)), assistant("ok", &[]), user("next")];
    let est = estimate_messages_tokens(&msgs);
    let s = settings(est + 100, 100, 10);
    // Disabled, or too few messages: never.
    assert_eq!(
        should_compact(
            &CompactionSettings {
                enabled: false,
                ..s
            },
            &msgs,
            1000,
            None
        ),
        None
    );
    assert_eq!(should_compact(&s, &msgs[..2], 1000, Some(1_000_000)), None);
    // The estimate alone (messages + system prompt).
    assert_eq!(should_compact(&s, &msgs, 0, None), None);
    assert_eq!(
        should_compact(&s, &msgs, 1, None),
        Some(CompactionTrigger::Estimated {
            estimated_tokens: est + 1,
            threshold: est
        })
    );
    // The provider's count plus what came after the last assistant message.
    let since = estimate_message_tokens(&msgs[2]);
    assert_eq!(
        should_compact(&s, &msgs, 0, Some(est - since + 1)),
        Some(CompactionTrigger::ProviderReported {
            tokens: est + 1,
            estimated_tokens: est,
            threshold: est
        })
    );
    assert_eq!(should_compact(&s, &msgs, 0, Some(est - since)), None);
}

#[test]
fn provider_trigger_plans_even_when_the_estimate_is_small() {
    // A real-count trigger is not re-checked with the estimate (that made it a no-op).
    let msgs = vec![
        user("one"),
        assistant("two", &[]),
        user("three"),
        assistant("four", &[]),
        user("five"),
    ];
    let s = settings(1000, 100, 40);
    let trigger = should_compact(&s, &msgs, 0, Some(950)).unwrap();
    let tokens: Vec<u64> = msgs.iter().map(estimate_message_tokens).collect();
    assert!(tokens.iter().sum::<u64>() < s.threshold());
    // 950 reported vs ~estimate: the 40-token budget shrinks accordingly.
    let budget = trigger.keep_budget(40);
    assert!(budget < 40);
    let plan = plan_compaction(&msgs, &s, &trigger).unwrap();
    assert_eq!(
        plan,
        CompactionPlan {
            split: 4,
            chunks: vec![std::ops::Range { start: 0, end: 4 }],
            old_tokens: tokens[..4].iter().sum(),
            kept_tokens: tokens[4],
        }
    );
}

#[test]
fn split_never_separates_a_tool_call_from_its_results() {
    let msgs = vec![
        user("start"),
        assistant("", &[("c1", "Bash"), ("c2", "Read")]),
        result("c1", "Bash", &"x".repeat(300)),
        result("c2", "Read", "y"),
        assistant("done", &[]),
        user("thanks"),
    ];
    let tokens: Vec<u64> = msgs.iter().map(estimate_message_tokens).collect();
    // A budget that would keep exactly the last three messages (c2's result
    // without its call): the split moves later, past the results.
    let keep = tokens[3] + tokens[4] + tokens[5];
    let plan = plan_compaction(
        &msgs,
        &settings(100_000, 0, keep),
        &CompactionTrigger::Overflow,
    )
    .unwrap();
    assert_eq!(plan.split, 4);
    assert_eq!(
        (0..=msgs.len())
            .filter(|&s| split_is_valid(&msgs, s))
            .collect::<Vec<_>>(),
        vec![0, 1, 4, 5, 6]
    );
    // When the conversation ends inside a tool round, the split moves earlier.
    let running = &msgs[..4];
    let plan = plan_compaction(
        running,
        &settings(100_000, 0, tokens[3]),
        &CompactionTrigger::Overflow,
    )
    .unwrap();
    assert_eq!(plan.split, 1);
    // Nothing can be compacted if the only valid splits keep nothing.
    assert_eq!(
        plan_compaction(
            &msgs[1..4],
            &settings(100_000, 0, 0),
            &CompactionTrigger::Overflow
        ),
        None
    );
}

#[test]
fn manual_compaction_keeps_last_n() {
    let msgs = vec![
        user("a"),
        assistant("", &[("c1", "Bash")]),
        result("c1", "Bash", "out"),
        assistant("b", &[]),
        user("c"),
    ];
    assert_eq!(plan_manual(&msgs, 2), Some(3));
    // Keeping 3 would start at c1's result: keep its call too.
    assert_eq!(plan_manual(&msgs, 3), Some(1));
    assert_eq!(plan_manual(&msgs, 0), Some(5));
    assert_eq!(plan_manual(&msgs, 5), None);
    assert_eq!(plan_manual(&msgs, 20), None);
}

#[test]
fn chunking() {
    assert_eq!(
        chunk_ranges(&[10, 10, 10, 50, 5, 5], 25),
        vec![0..2, 2..3, 3..4, 4..6]
    );
    assert_eq!(chunk_ranges(&[], 25), Vec::<std::ops::Range<usize>>::new());
}
