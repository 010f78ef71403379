use super::*;
use crate::llm::test_messages::{assistant, call, message, result, text, user, PICKS};
use crate::llm::{provider_for, Endpoint, LlmRequest, ThinkingLevel};
use gsv_protocol::StopReason;

fn body(provider: &dyn Provider, messages: &[Message], written: Option<WrittenPrefix>) -> String {
    let request = LlmRequest {
        model: "m",
        system_prompt: "Be brief.",
        messages,
        tools: &[],
        thinking: ThinkingLevel::None,
        max_tokens: None,
        prepared: None,
        written,
        cache: None,
    };
    let endpoint = Endpoint {
        base_url: "http://localhost".into(),
        api_key: String::new(),
    };
    provider.build_request(&endpoint, &request).body
}

fn providers() -> [Box<dyn Provider>; 3] {
    [
        provider_for("openai", None),
        provider_for("anthropic", None),
        provider_for("openai", Some(crate::llm::responses::API)),
    ]
}

proptest::proptest! {
    /// A conversation growing message by message, each call's body
    /// written from what was kept is the body written whole, byte for byte.
    #[test]
    fn a_body_from_kept_messages_is_the_body_written_whole(
        picks in proptest::collection::vec(0..PICKS, 0..30),
    ) {
        let history: Vec<Message> = picks.into_iter().map(message).collect();
        for provider in providers() {
            let mut kept = WrittenHistory::default();
            for n in 0..=history.len() {
                let so_far = &history[..n];
                let written = kept.update(&*provider, 1, so_far);
                proptest::prop_assert_eq!(
                    body(&*provider, so_far, Some(written)),
                    body(&*provider, so_far, None),
                    "{} after {} messages", provider.api(), n
                );
            }
        }
    }
}

#[test]
fn only_what_was_added_is_written_and_a_rewritten_history_starts_again() {
    let openai = provider_for("openai", None);
    let mut history = vec![user("hi"), assistant(vec![text("hello")], StopReason::Stop)];
    let mut kept = WrittenHistory::default();
    let entries = |w: WrittenPrefix| -> (usize, Vec<String>) {
        (
            w.messages,
            w.elements.iter().map(|e| e.get().to_string()).collect(),
        )
    };
    // The last assistant message is where the history may still change.
    assert_eq!(
        entries(kept.update(&*openai, 1, &history)),
        (1, vec![r#"{"role":"user","content":"hi"}"#.to_string()])
    );
    history.extend([user("ls"), assistant(vec![call("a")], StopReason::ToolUse)]);
    history.push(result("a", "x"));
    let first = kept.elements[0].get().as_ptr();
    assert_eq!(
        entries(kept.update(&*openai, 1, &history)),
        (
            3,
            vec![
                r#"{"role":"user","content":"hi"}"#.to_string(),
                r#"{"role":"assistant","content":"hello"}"#.to_string(),
                r#"{"role":"user","content":"ls"}"#.to_string(),
            ]
        )
    );
    // The first entry was kept, not written again.
    assert_eq!(kept.elements[0].get().as_ptr(), first);
    // Compaction: a new generation, shorter, written from its start.
    let compacted = vec![
        user("summary"),
        assistant(vec![text("ok")], StopReason::Stop),
    ];
    assert_eq!(
        entries(kept.update(&*openai, 2, &compacted)),
        (
            1,
            vec![r#"{"role":"user","content":"summary"}"#.to_string()]
        )
    );
    // Another API writes its own.
    let anthropic = provider_for("anthropic", None);
    assert_eq!(
        entries(kept.update(&*anthropic, 2, &compacted)),
        (
            1,
            vec![r#"{"role":"user","content":"summary"}"#.to_string()]
        )
    );
    assert_eq!(kept.api, "anthropic-messages");
}
