//! Serialization, prompts, answers, tiers and extraction.

use super::tests::{assistant, result, user};
use super::*;
use gsv_protocol::{ContentBlock, UserContent, UserMessage};

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
Start each bullet with its category in brackets: [profile] (who the person is), \
[preferences], [entities] (people, places, things), [events], [cases] (problems and how they were solved) or [patterns] (what tends to work). Leave it empty if there are none. Skip anything already in <existing-memories>.\n</memories>"
    );
    assert_eq!(
        summarizer_user_prompt("[user]: hi", None, Some("  ")),
        "<conversation>\n[user]: hi\n</conversation>\n\n\
Answer with exactly two sections:\n\n<summary>\nA concise summary that preserves decisions, action items, open questions, \
technical context, constraints and the current state of any ongoing work.\n</summary>\n\n\
<memories>\nDurable facts worth remembering long-term (preferences, people, commitments, stable facts), one \"- \" bullet each. \
Start each bullet with its category in brackets: [profile] (who the person is), \
[preferences], [entities] (people, places, things), [events], [cases] (problems and how they were solved) or [patterns] (what tends to work). Leave it empty if there are none.\n</memories>"
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
    let mut full = Summarization::new(&old, chunks.clone(), 2000, None);
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
    let mut partial = Summarization::new(&old, chunks.clone(), 2000, None);
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
    let mut partial_last = Summarization::new(&old, vec![0..1, 1..2], 2000, None);
    run(
        &mut partial_last,
        &old,
        &mut [Some("<summary>S1</summary>"), None].into_iter(),
    );
    assert_eq!(partial_last.finish(&old).summary, format!("S1\n\n{note}"));

    // Failing again ends in plaintext, keeping memories already found.
    let mut plain = Summarization::new(&old, chunks, 2000, None);
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
            context: None,
        })
    );
    let image = Message::User(UserMessage {
        content: UserContent::Blocks(vec![ContentBlock::Image {
            data: None,
            mime_type: "image/png".into(),
            r2_key: Some("k".into()),
            filename: None,
            size: None,
        }]),
        timestamp: 1,
        context: None,
    });
    assert_eq!(
        Summarization::new(&[], vec![], 1000, None)
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
one \"- \" bullet each, inside <memories></memories>. Start each bullet with its category in brackets: [profile] (who the person is), \
[preferences], [entities] (people, places, things), [events], [cases] (problems and how they were solved) or [patterns] (what tends to work). Leave it empty if there are none. Skip anything already in <existing-memories>."
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
