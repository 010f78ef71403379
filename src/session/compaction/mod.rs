//! Context compaction: when a conversation approaches the
//! model's context window, older messages are summarized, archived as a
//! part archive, mined for memories and replaced by one summary message.
//!
//! Pure decisions only; the Session DO runs them in this order, each step
//! safe to repeat after a crash:
//! 1. [`should_compact`] before an LLM call (or a context-overflow error →
//!    [`CompactionTrigger::Overflow`]);
//! 2. [`plan_compaction`] with *that* trigger — it never re-checks with a
//!    different measure;
//! 3. [`Summarization`] drives the summarizer calls through the tiers;
//! 4. part archive `{sessionId}-part{ms}.jsonl.gz` of `messages[..split]`,
//!    verified (`crate::archive`);
//! 5. memories appended to the daily file (`super::memory`, marker
//!    [`super::memory::compaction_marker`]);
//! 6. one SQL transaction: delete `messages[..split]`, insert the
//!    [`summary_message`] in front of the kept messages;
//! 7. meta: `compactionCount += 1`, `lastCompactedAt`, clear
//!    `lastInputTokens` (it measured the old context).

mod extract;
mod split;
mod summarize;
mod window;

pub use extract::{MemoryExtraction, MEMORY_EXTRACTION_SYSTEM_PROMPT};
pub use split::{chunk_ranges, plan_manual, split_is_valid};
pub use summarize::{
    parse_summarizer_answer, serialize_for_summary, summarizer_user_prompt, summary_message,
    Summarization, SummarizerAnswer, SummarizerRequest, SummaryOutcome, Tier,
    SUMMARIZER_SYSTEM_PROMPT,
};
pub use window::{context_window, known_context_window, DEFAULT_CONTEXT_WINDOW};

use crate::config::Config;
use gsv_protocol::Message;
use std::ops::Range;

/// The `compaction.*` settings plus the model's context window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionSettings {
    pub enabled: bool,
    pub reserve_tokens: u64,
    pub keep_recent_tokens: u64,
    pub extract_memories: bool,
    pub context_window: u64,
}

impl CompactionSettings {
    /// Reads `compaction.*` and the context window of `provider`/`model`.
    pub fn from_config(config: &Config, provider: &str, model: &str) -> Self {
        let flag = |path: &str| config.raw(path).and_then(|v| v.as_bool()).unwrap_or(true);
        Self {
            enabled: flag("compaction.enabled"),
            reserve_tokens: config.u64_at("compaction.reserveTokens").unwrap_or(20_000),
            keep_recent_tokens: config
                .u64_at("compaction.keepRecentTokens")
                .unwrap_or(20_000),
            extract_memories: flag("compaction.extractMemories"),
            context_window: context_window(config, provider, model),
        }
    }

    /// Above this many tokens the context is compacted.
    pub fn threshold(&self) -> u64 {
        self.context_window.saturating_sub(self.reserve_tokens)
    }

    /// Summarizer chunks hold at most a quarter of the window.
    pub fn chunk_budget(&self) -> u64 {
        (self.context_window / 4).max(1)
    }
}

/// Tokens of a text: `ceil(len / 4 × 1.2)` with `len` in UTF-16 code units
/// (JS `length`), computed in integers.
pub fn estimate_text_tokens(text: &str) -> u64 {
    let len = utf16_len(text) as u64;
    (len * 3).div_ceil(10)
}

/// UTF-16 units, as JS counts a string's length, from the bytes without
/// decoding them: one per character (every byte but a continuation byte)
/// and one more for a character beyond the BMP (a 4-byte lead byte).
fn utf16_len(text: &str) -> usize {
    // Most prompts and messages are ASCII, checked a word at a time.
    if text.is_ascii() {
        return text.len();
    }
    text.bytes()
        .map(|b| usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0))
        .sum()
}

/// Tokens of one message: the estimate of its JSON.
pub fn estimate_message_tokens(message: &Message) -> u64 {
    estimate_text_tokens(&serde_json::to_string(message).unwrap_or_default())
}

/// Sum of [`estimate_message_tokens`].
pub fn estimate_messages_tokens(messages: &[Message]) -> u64 {
    messages.iter().map(estimate_message_tokens).sum()
}

/// Why compaction runs; planning uses the same measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionTrigger {
    /// The provider's input count of the last call plus the estimate of the
    /// messages added since (after the last assistant message).
    ProviderReported {
        tokens: u64,
        estimated_tokens: u64,
        threshold: u64,
    },
    /// Estimated messages + system prompt.
    Estimated {
        estimated_tokens: u64,
        threshold: u64,
    },
    /// The provider rejected the prompt as too long.
    Overflow,
}

impl CompactionTrigger {
    /// The recent-message budget in estimate units: when the provider
    /// counted more tokens than estimated, the budget shrinks by that ratio
    /// so the kept messages really fit `keepRecentTokens`.
    pub fn keep_budget(&self, keep_recent_tokens: u64) -> u64 {
        match *self {
            CompactionTrigger::ProviderReported {
                tokens,
                estimated_tokens,
                ..
            } if tokens > estimated_tokens && estimated_tokens > 0 => {
                (u128::from(keep_recent_tokens) * u128::from(estimated_tokens) / u128::from(tokens))
                    as u64
            }
            _ => keep_recent_tokens,
        }
    }
}

/// Whether to compact before the next LLM call: enabled, more than two
/// messages, and either the provider-reported count (`last_input_tokens`,
/// plus what was added since) or the estimate of messages + system prompt
/// exceeds `contextWindow − reserveTokens`.
pub fn should_compact(
    settings: &CompactionSettings,
    messages: &[Message],
    system_prompt_tokens: u64,
    last_input_tokens: Option<u64>,
) -> Option<CompactionTrigger> {
    let tokens: Vec<u64> = messages.iter().map(estimate_message_tokens).collect();
    should_compact_counted(
        settings,
        messages,
        &tokens,
        system_prompt_tokens,
        last_input_tokens,
    )
}

/// [`should_compact`] with each message's estimate already known
/// (`message_tokens[i]` for `messages[i]`): a session keeps them with its
/// history, so a long one is not serialized again for every model call.
pub fn should_compact_counted(
    settings: &CompactionSettings,
    messages: &[Message],
    message_tokens: &[u64],
    system_prompt_tokens: u64,
    last_input_tokens: Option<u64>,
) -> Option<CompactionTrigger> {
    if !settings.enabled || messages.len() <= 2 {
        return None;
    }
    let threshold = settings.threshold();
    let estimated_tokens = message_tokens.iter().sum::<u64>() + system_prompt_tokens;
    if let Some(reported) = last_input_tokens.filter(|n| *n > 0) {
        let since = messages
            .iter()
            .rposition(|m| matches!(m, Message::Assistant(_)))
            .map_or(0, |i| i + 1);
        let tokens = reported
            + message_tokens[since.min(message_tokens.len())..]
                .iter()
                .sum::<u64>();
        if tokens > threshold {
            return Some(CompactionTrigger::ProviderReported {
                tokens,
                estimated_tokens,
                threshold,
            });
        }
    }
    (estimated_tokens > threshold).then_some(CompactionTrigger::Estimated {
        estimated_tokens,
        threshold,
    })
}

/// What to compact: `messages[..split]` are summarized and archived,
/// `messages[split..]` kept verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionPlan {
    pub split: usize,
    /// Summarizer chunks over `messages[..split]`.
    pub chunks: Vec<Range<usize>>,
    pub old_tokens: u64,
    pub kept_tokens: u64,
}

/// Splits for `trigger`: walks back from the newest message keeping at most
/// the recent budget, then moves the split so no tool call is separated
/// from its results (later first, earlier if that would keep nothing).
/// At least one message is compacted and one kept; `None` if impossible.
pub fn plan_compaction(
    messages: &[Message],
    settings: &CompactionSettings,
    trigger: &CompactionTrigger,
) -> Option<CompactionPlan> {
    let tokens: Vec<u64> = messages.iter().map(estimate_message_tokens).collect();
    let budget = trigger.keep_budget(settings.keep_recent_tokens);
    let mut split = messages.len();
    let mut kept = 0u64;
    while split > 0 && kept + tokens[split - 1] <= budget {
        kept += tokens[split - 1];
        split -= 1;
    }
    let split = split::adjust_split(messages, split.max(1))?;
    Some(CompactionPlan {
        split,
        chunks: chunk_ranges(&tokens[..split], settings.chunk_budget()),
        old_tokens: tokens[..split].iter().sum(),
        kept_tokens: tokens[split..].iter().sum(),
    })
}

#[cfg(test)]
mod summarize_tests;
#[cfg(test)]
mod tests;
