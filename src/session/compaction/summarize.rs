//! The summarizer: what it is sent, how its answer is read, and the tiered
//! fallbacks (full → partial → plaintext) as a state machine the shell
//! drives with one LLM call per [`SummarizerRequest`].

use super::estimate_messages_tokens;
use gsv_protocol::{AssistantBlock, ContentBlock, Message, UserContent, UserMessage};
use std::ops::Range;

/// Tool results longer than this (in characters) are cut for the summarizer.
pub const TOOL_RESULT_SUMMARY_CHARS: usize = 2000;

pub const SUMMARIZER_SYSTEM_PROMPT: &str = "You are condensing conversation history into a compact summary. \
Be thorough but concise: keep everything needed to continue the conversation coherently, drop pleasantries and repetition.";

/// One summarizer call: a system prompt and a single user message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummarizerRequest {
    pub system: String,
    pub user: String,
}

/// Messages as plain text: `[user]: …`, `[assistant]: …`,
/// `[assistant tool calls]: a, b`, `[tool result: name]: …` (cut at 2,000
/// characters). Thinking and images are left out; a voice note reads as
/// its transcript, another file as its name and type.
pub fn serialize_for_summary(messages: &[Message]) -> String {
    let mut lines = Vec::new();
    for m in messages {
        match m {
            Message::User(u) => {
                let text = crate::media::notes::as_text(&u.content);
                if !text.is_empty() {
                    lines.push(format!("[user]: {text}"));
                }
            }
            Message::Assistant(a) => {
                let texts: Vec<&str> = a
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        AssistantBlock::Text { text } if !text.is_empty() => Some(text.as_str()),
                        _ => None,
                    })
                    .collect();
                if !texts.is_empty() {
                    lines.push(format!("[assistant]: {}", texts.join("\n")));
                }
                let names: Vec<&str> = a.tool_calls().map(|(_, name, _)| name).collect();
                if !names.is_empty() {
                    lines.push(format!("[assistant tool calls]: {}", names.join(", ")));
                }
            }
            Message::ToolResult(r) => {
                let text = gsv_protocol::join_text(&r.content);
                let text = match text.char_indices().nth(TOOL_RESULT_SUMMARY_CHARS) {
                    Some((cut, _)) => format!("{}\n[...truncated]", &text[..cut]),
                    None => text,
                };
                lines.push(format!("[tool result: {}]: {text}", r.tool_name));
            }
        }
    }
    lines.join("\n")
}

/// The user message of a summarizer call.
pub fn summarizer_user_prompt(
    conversation: &str,
    previous_summary: Option<&str>,
    existing_memories: Option<&str>,
) -> String {
    let mut parts = Vec::new();
    if let Some(prev) = previous_summary.filter(|s| !s.trim().is_empty()) {
        parts.push(format!("<previous-summary>\n{prev}\n</previous-summary>"));
    }
    let existing = existing_memories.filter(|s| !s.trim().is_empty());
    if let Some(mem) = existing {
        parts.push(format!(
            "<existing-memories>\nThese memories are already recorded. Do not repeat them; add only new information.\n\n{mem}\n</existing-memories>"
        ));
    }
    parts.push(format!("<conversation>\n{conversation}\n</conversation>"));
    parts.push(format!(
        "Answer with exactly two sections:\n\n<summary>\nA concise summary that preserves decisions, action items, open questions, \
technical context, constraints and the current state of any ongoing work.{}\n</summary>\n\n<memories>\n\
Durable facts worth remembering long-term (preferences, people, commitments, stable facts), one \"- \" bullet each. \
{} Leave it empty if there are none.{}\n</memories>",
        if previous_summary.is_some_and(|s| !s.trim().is_empty()) {
            " Fold in the previous summary; do not drop its context."
        } else {
            ""
        },
        crate::memory::extracted::CATEGORY_HINT,
        if existing.is_some() {
            " Skip anything already in <existing-memories>."
        } else {
            ""
        },
    ));
    parts.join("\n\n")
}

/// A summarizer answer, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummarizerAnswer {
    pub summary: String,
    /// Bullet lines, `\n`-joined; empty when none.
    pub memories: String,
}

fn section<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = text.find(&open)? + open.len();
    let rest = &text[start..];
    let end = rest.find(&format!("</{tag}>")).unwrap_or(rest.len());
    Some(rest[..end].trim())
}

/// Reads `<summary>` (the whole answer when the tag is missing) and the
/// bullets of `<memories>` (lines saying "none" dropped).
pub fn parse_summarizer_answer(text: &str) -> SummarizerAnswer {
    let summary = match section(text, "summary") {
        Some(s) => s.split("<memories>").next().unwrap_or("").trim(),
        None => text.trim(),
    };
    SummarizerAnswer {
        summary: summary.to_string(),
        memories: clean_memories(section(text, "memories").unwrap_or("")),
    }
}

pub(super) fn clean_memories(raw: &str) -> String {
    raw.lines()
        .map(str::trim)
        .filter(|l| {
            let bare = l
                .trim_start_matches(['-', '*', ' '])
                .trim_matches(['(', ')', '.']);
            !bare.is_empty()
                && !["none", "n/a", "nothing new"].contains(&bare.to_ascii_lowercase().as_str())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Which fallback produced the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// Every chunk summarized.
    Full,
    /// Chunks above half the window replaced by a note.
    Partial,
    /// No summary: a note on how many messages were compacted.
    Plaintext,
}

/// The result of a summarization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryOutcome {
    pub tier: Tier,
    pub summary: String,
    /// Memories from every chunk that was summarized (even if a later one failed).
    pub memories: String,
    /// Successful summarizer calls.
    pub calls: u32,
    /// Images in the compacted messages.
    pub image_count: usize,
}

/// Rolling summaries over the chunks of the old messages. Loop:
/// `while let Some(req) = s.next_request(old) { match call(req) { Ok(t) =>
/// s.accept(&t), Err(_) => s.fail() } }` then [`Summarization::finish`].
/// A failure in the full tier retries the same chunk in the partial tier
/// (earlier summaries are kept); a failure there ends in plaintext.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summarization {
    chunks: Vec<Range<usize>>,
    chunk_tokens: Vec<u64>,
    half_window: u64,
    tier: Tier,
    next: usize,
    summary: Option<String>,
    memories: Vec<String>,
    existing_memories: String,
    calls: u32,
}

impl Summarization {
    /// `old` is `messages[..plan.split]`, `chunks` is `plan.chunks`;
    /// `existing_memories` is the target memory file's content, if any.
    pub fn new(
        old: &[Message],
        chunks: Vec<Range<usize>>,
        context_window: u64,
        existing_memories: Option<&str>,
    ) -> Self {
        Self {
            chunk_tokens: chunks
                .iter()
                .map(|r| estimate_messages_tokens(old.get(r.clone()).unwrap_or(&[])))
                .collect(),
            chunks,
            half_window: context_window / 2,
            tier: Tier::Full,
            next: 0,
            summary: None,
            memories: Vec::new(),
            existing_memories: existing_memories.unwrap_or("").trim().to_string(),
            calls: 0,
        }
    }

    /// The next call to make, `None` when done.
    pub fn next_request(&mut self, old: &[Message]) -> Option<SummarizerRequest> {
        if self.tier == Tier::Plaintext {
            return None;
        }
        while let Some(range) = self.chunks.get(self.next) {
            let tokens = self.chunk_tokens[self.next];
            if self.tier == Tier::Partial && tokens > self.half_window {
                let note = format!(
                    "[Large message block (~{}K tokens) omitted from summary]",
                    (tokens + 500) / 1000
                );
                self.summary = Some(match self.summary.take() {
                    Some(s) => format!("{s}\n\n{note}"),
                    None => note,
                });
                self.next += 1;
                continue;
            }
            let user = summarizer_user_prompt(
                &serialize_for_summary(old.get(range.clone()).unwrap_or(&[])),
                self.summary.as_deref(),
                Some(&self.existing_memories),
            );
            return Some(SummarizerRequest {
                system: SUMMARIZER_SYSTEM_PROMPT.to_string(),
                user,
            });
        }
        None
    }

    /// The model's answer to the last request; an empty summary counts as
    /// a failure.
    pub fn accept(&mut self, answer: &str) {
        let parsed = parse_summarizer_answer(answer);
        if parsed.summary.is_empty() {
            return self.fail();
        }
        self.summary = Some(parsed.summary);
        if !parsed.memories.is_empty() {
            if !self.existing_memories.is_empty() {
                self.existing_memories.push('\n');
            }
            self.existing_memories.push_str(&parsed.memories);
            self.memories.push(parsed.memories);
        }
        self.calls += 1;
        self.next += 1;
    }

    /// The last request failed: full → partial (same chunk), partial → plaintext.
    pub fn fail(&mut self) {
        self.tier = match self.tier {
            Tier::Full => Tier::Partial,
            _ => Tier::Plaintext,
        };
    }

    /// The outcome, once [`Self::next_request`] returned `None`.
    pub fn finish(self, old: &[Message]) -> SummaryOutcome {
        let summary = match (self.tier, self.summary) {
            (Tier::Plaintext, _) | (_, None) => format!(
                "[Context contained {} messages that were compacted. Summary unavailable due to size limits.]",
                old.len()
            ),
            (_, Some(s)) => s,
        };
        SummaryOutcome {
            tier: self.tier,
            summary,
            memories: self.memories.join("\n"),
            calls: self.calls,
            image_count: count_images(old),
        }
    }
}

fn count_images(messages: &[Message]) -> usize {
    let blocks = |b: &[ContentBlock]| {
        b.iter()
            .filter(|b| matches!(b, ContentBlock::Image { .. }))
            .count()
    };
    messages
        .iter()
        .map(|m| match m {
            Message::User(UserMessage {
                content: UserContent::Blocks(b),
                ..
            }) => blocks(b),
            Message::ToolResult(r) => blocks(&r.content),
            _ => 0,
        })
        .sum()
}

/// The user message that replaces the compacted messages.
pub fn summary_message(outcome: &SummaryOutcome, timestamp: i64) -> Message {
    let images = match outcome.image_count {
        0 => String::new(),
        n => format!(
            "\n\n[{n} image(s) were present in the compacted history but could not be included in this summary.]"
        ),
    };
    Message::User(UserMessage {
        content: UserContent::Text(format!(
            "[Conversation summary from automatic context compaction]\n\n{}{images}",
            outcome.summary
        )),
        timestamp,
        context: None,
    })
}
