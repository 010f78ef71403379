use super::*;
use gsv_protocol::{
    AssistantBlock, AssistantMessage, ContentBlock, ToolResultMessage, UserContent, UserMessage,
};
use serde_json::json;

fn user(text: &str) -> Message {
    Message::User(UserMessage {
        content: UserContent::Text(text.into()),
        timestamp: 1,
    })
}

fn assistant(text: &str, calls: &[(&str, &str)]) -> Message {
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
    Message::Assistant(AssistantMessage {
        content,
        api: None,
        provider: None,
        model: None,
        usage: None,
        stop_reason: None,
        error_message: None,
        timestamp: 2,
    })
}

fn result(id: &str, name: &str, text: &str) -> Message {
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
    assert_eq!(estimate_text_tokens("éé😀"), 2); // 4 UTF-16 units
                                                 // The seed's example line is 59 characters: ceil(59 / 4 × 1.2) = 18.
    let hello = Message::User(UserMessage {
        content: UserContent::Text("Hello".into()),
        timestamp: 1708300000000,
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
    // v1 §12 #12: a real-count trigger re-checked with the estimate was a no-op.
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
            chunks: vec![0..4],
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

#[test]
fn serialization_for_the_summarizer() {
    let long = format!("{}é", "z".repeat(2000));
    let msgs = vec![
        user("hi"),
        user(""),
        assistant("let me check", &[("c1", "Bash"), ("c2", "Read")]),
        result("c1", "Bash", "ok"),
        result("c2", "Read", &long),
    ];
    assert_eq!(
        serialize_for_summary(&msgs),
        format!(
            "[user]: hi\n[assistant]: let me check\n[assistant tool calls]: Bash, Read\n\
             [tool result: Bash]: ok\n[tool result: Read]: {}\n[...truncated]",
            "z".repeat(2000)
        )
    );
}

#[test]
fn summarizer_prompts() {
    assert_eq!(
        summarizer_user_prompt("[user]: hi", Some("Earlier: setup."), Some("- likes tea")),
        "<previous-summary>\nEarlier: setup.\n</previous-summary>\n\n\
<existing-memories>\nThese memories are already recorded. Do not repeat them; add only new information.\n\n- likes tea\n</existing-memories>\n\n\
<conversation>\n[user]: hi\n</conversation>\n\n\
Answer with exactly two sections:\n\n<summary>\nA concise summary that preserves decisions, action items, open questions, \
technical context, constraints and the current state of any ongoing work. Fold in the previous summary; do not drop its context.\n</summary>\n\n\
<memories>\nDurable facts worth remembering long-term (preferences, people, commitments, stable facts), one \"- \" bullet each. \
Leave it empty if there are none. Skip anything already in <existing-memories>.\n</memories>"
    );
    assert_eq!(
        summarizer_user_prompt("[user]: hi", None, Some("  ")),
        "<conversation>\n[user]: hi\n</conversation>\n\n\
Answer with exactly two sections:\n\n<summary>\nA concise summary that preserves decisions, action items, open questions, \
technical context, constraints and the current state of any ongoing work.\n</summary>\n\n\
<memories>\nDurable facts worth remembering long-term (preferences, people, commitments, stable facts), one \"- \" bullet each. \
Leave it empty if there are none.\n</memories>"
    );
}

#[test]
fn parsing_summarizer_answers() {
    let answer = |s: &str, m: &str| SummarizerAnswer {
        summary: s.into(),
        memories: m.into(),
    };
    assert_eq!(
        parse_summarizer_answer("Sure!\n<summary>\nWe set up X.\n</summary>\n<memories>\n- likes tea\n\n* none\n- has a cat\n</memories>"),
        answer("We set up X.", "- likes tea\n- has a cat")
    );
    assert_eq!(
        parse_summarizer_answer("  plain text answer "),
        answer("plain text answer", "")
    );
    assert_eq!(
        parse_summarizer_answer("<summary>cut off <memories>- x"),
        answer("cut off", "- x")
    );
    assert_eq!(
        parse_summarizer_answer("<summary>S</summary><memories>\n- None.\n</memories>"),
        answer("S", "")
    );
}

fn run(
    s: &mut Summarization,
    old: &[Message],
    answers: &mut dyn Iterator<Item = Option<&'static str>>,
) -> Vec<SummarizerRequest> {
    let mut requests = vec![];
    while let Some(req) = s.next_request(old) {
        requests.push(req);
        match answers.next().expect("an answer per request") {
            Some(text) => s.accept(text),
            None => s.fail(),
        }
    }
    requests
}

#[test]
fn summarization_tiers() {
    let old = vec![
        user("small one"),
        user(&"b".repeat(4000)),
        user("small two"),
    ];
    let tokens: Vec<u64> = old.iter().map(estimate_message_tokens).collect();
    let chunks = vec![0..1, 1..2, 2..3];
    // Full: rolling summaries, memories accumulated, fed to the next call.
    let mut full = Summarization::new(chunks.clone(), &tokens, 2000, None);
    let answers = [
        Some("<summary>S1</summary><memories>- m1</memories>"),
        Some("<summary>S2</summary>"),
        Some("<summary>S3</summary><memories>- m3</memories>"),
    ];
    let reqs = run(&mut full, &old, &mut answers.into_iter());
    assert_eq!(reqs.len(), 3);
    assert_eq!(
        reqs[1],
        SummarizerRequest {
            system: SUMMARIZER_SYSTEM_PROMPT.into(),
            user: summarizer_user_prompt(
                &serialize_for_summary(&old[1..2]),
                Some("S1"),
                Some("- m1")
            ),
        }
    );
    let outcome = full.finish(&old);
    assert_eq!(
        outcome,
        SummaryOutcome {
            tier: Tier::Full,
            summary: "S3".into(),
            memories: "- m1\n- m3".into(),
            calls: 3,
            image_count: 0
        }
    );

    // The big chunk fails in full; the partial tier replaces it with a note.
    let mut partial = Summarization::new(chunks.clone(), &tokens, 2000, None);
    let answers = [
        Some("<summary>S1</summary><memories>- m1</memories>"),
        None,
        Some("<summary>S3</summary>"),
    ];
    run(&mut partial, &old, &mut answers.into_iter());
    let note = format!(
        "[Large message block (~{}K tokens) omitted from summary]",
        (tokens[1] + 500) / 1000
    );
    assert_eq!(
        partial.clone().finish(&old),
        SummaryOutcome {
            tier: Tier::Partial,
            summary: "S3".into(),
            memories: "- m1".into(),
            calls: 2,
            image_count: 0
        }
    );
    let mut partial_last = Summarization::new(vec![0..1, 1..2], &tokens, 2000, None);
    run(
        &mut partial_last,
        &old,
        &mut [Some("<summary>S1</summary>"), None].into_iter(),
    );
    assert_eq!(partial_last.finish(&old).summary, format!("S1\n\n{note}"));

    // Failing again ends in plaintext, keeping memories already found.
    let mut plain = Summarization::new(chunks, &tokens, 2000, None);
    run(
        &mut plain,
        &old,
        &mut [
            Some("<summary>S1</summary><memories>- m1</memories>"),
            None,
            Some(""),
        ]
        .into_iter(),
    );
    let outcome = plain.finish(&old);
    assert_eq!(
        outcome,
        SummaryOutcome {
            tier: Tier::Plaintext,
            summary: "[Context contained 3 messages that were compacted. Summary unavailable due to size limits.]".into(),
            memories: "- m1".into(),
            calls: 1,
            image_count: 0,
        }
    );
}

#[test]
fn the_summary_message() {
    let outcome = SummaryOutcome {
        tier: Tier::Full,
        summary: "We did X.".into(),
        memories: String::new(),
        calls: 1,
        image_count: 2,
    };
    assert_eq!(
        summary_message(&outcome, 77),
        Message::User(UserMessage {
            content: UserContent::Text(
                "[Conversation summary from automatic context compaction]\n\nWe did X.\n\n\
[2 image(s) were present in the compacted history but could not be included in this summary.]"
                    .into()
            ),
            timestamp: 77,
        })
    );
    let image = Message::User(UserMessage {
        content: UserContent::Blocks(vec![ContentBlock::Image {
            data: None,
            mime_type: "image/png".into(),
            r2_key: Some("k".into()),
        }]),
        timestamp: 1,
    });
    assert_eq!(
        Summarization::new(vec![], &[], 1000, None)
            .finish(&[image])
            .image_count,
        1
    );
}

#[test]
fn memory_extraction_before_reset() {
    let msgs = vec![
        user("I moved to Berlin"),
        user(&"b".repeat(4000)),
        user("I like tea"),
    ];
    let mut x = MemoryExtraction::new(&msgs, 2000, Some("- has a cat"));
    let first = x.next_request(&msgs).unwrap();
    assert_eq!(
        first,
        SummarizerRequest {
            system: MEMORY_EXTRACTION_SYSTEM_PROMPT.into(),
            user: "<existing-memories>\nThese memories are already recorded. Do not repeat them.\n\n- has a cat\n</existing-memories>\n\n\
<conversation>\n[user]: I moved to Berlin\n</conversation>\n\n\
List the durable facts from this conversation worth remembering long-term — stable information, not transient details — \
one \"- \" bullet each, inside <memories></memories>. Leave it empty if there are none. Skip anything already in <existing-memories>."
                .into(),
        }
    );
    x.accept("<memories>\n- lives in Berlin\n</memories>");
    // The oversized middle chunk is skipped; the last one fails and is skipped.
    let last = x.next_request(&msgs).unwrap();
    assert!(
        last.user.contains("- has a cat\n- lives in Berlin")
            && last.user.contains("[user]: I like tea")
    );
    x.skip();
    assert_eq!(x.next_request(&msgs), None);
    assert_eq!(x.memories(), "- lives in Berlin");
}
