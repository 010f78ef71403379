//! Pre-reset memory extraction: like the summarizer but
//! only `<memories>`; chunks above half the window are skipped and a failed
//! chunk is skipped too (extraction is best-effort).

use super::estimate_message_tokens;
use super::split::chunk_ranges;
use super::summarize::{clean_memories, serialize_for_summary, SummarizerRequest};
use gsv_protocol::Message;
use std::ops::Range;

pub const MEMORY_EXTRACTION_SYSTEM_PROMPT: &str = "You are extracting durable, long-term memories from a conversation \
that is about to be archived. Keep facts, preferences, decisions and context that will matter in future conversations.";

fn extraction_prompt(conversation: &str, existing: &str) -> String {
    let mut parts = Vec::new();
    if !existing.is_empty() {
        parts.push(format!(
            "<existing-memories>\nThese memories are already recorded. Do not repeat them.\n\n{existing}\n</existing-memories>"
        ));
    }
    parts.push(format!("<conversation>\n{conversation}\n</conversation>"));
    parts.push(format!(
        "List the durable facts from this conversation worth remembering long-term — stable information, \
not transient details — one \"- \" bullet each, inside <memories></memories>. {} Leave it empty if there are none.{}",
        crate::memory::extracted::CATEGORY_HINT,
        if existing.is_empty() {
            ""
        } else {
            " Skip anything already in <existing-memories>."
        }
    ));
    parts.join("\n\n")
}

/// Drives the extraction calls: `while let Some(req) = x.next_request(msgs)
/// { match call(req) { Ok(t) => x.accept(&t), Err(_) => x.skip() } }`,
/// then [`MemoryExtraction::memories`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryExtraction {
    chunks: Vec<Range<usize>>,
    chunk_tokens: Vec<u64>,
    half_window: u64,
    next: usize,
    existing: String,
    memories: Vec<String>,
}

impl MemoryExtraction {
    /// Chunks `messages` at a quarter of `context_window`; `existing` is the
    /// target memory file's current content.
    pub fn new(messages: &[Message], context_window: u64, existing: Option<&str>) -> Self {
        let tokens: Vec<u64> = messages.iter().map(estimate_message_tokens).collect();
        let chunks = chunk_ranges(&tokens, (context_window / 4).max(1));
        Self {
            chunk_tokens: chunks
                .iter()
                .map(|r| tokens[r.clone()].iter().sum())
                .collect(),
            chunks,
            half_window: context_window / 2,
            next: 0,
            existing: existing.unwrap_or("").trim().to_string(),
            memories: Vec::new(),
        }
    }

    /// The next call, `None` when every chunk was done or skipped.
    pub fn next_request(&mut self, messages: &[Message]) -> Option<SummarizerRequest> {
        while self.next < self.chunks.len() && self.chunk_tokens[self.next] > self.half_window {
            self.next += 1;
        }
        let range = self.chunks.get(self.next)?.clone();
        Some(SummarizerRequest {
            system: MEMORY_EXTRACTION_SYSTEM_PROMPT.to_string(),
            user: extraction_prompt(
                &serialize_for_summary(messages.get(range).unwrap_or(&[])),
                &self.existing,
            ),
        })
    }

    /// The answer to the last request (`<memories>` or, without the tag,
    /// the whole answer).
    pub fn accept(&mut self, answer: &str) {
        let body = match answer.find("<memories>") {
            Some(i) => {
                let rest = &answer[i + "<memories>".len()..];
                &rest[..rest.find("</memories>").unwrap_or(rest.len())]
            }
            None => answer,
        };
        let found = clean_memories(body);
        if !found.is_empty() {
            if !self.existing.is_empty() {
                self.existing.push('\n');
            }
            self.existing.push_str(&found);
            self.memories.push(found);
        }
        self.next += 1;
    }

    /// The last request failed: go on with the next chunk.
    pub fn skip(&mut self) {
        self.next += 1;
    }

    /// Everything extracted, `\n`-joined bullets (empty when none).
    pub fn memories(&self) -> String {
        self.memories.join("\n")
    }
}
