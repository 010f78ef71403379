//! Where to cut a conversation, and how to chunk the old part.

use gsv_protocol::Message;
use std::collections::HashMap;
use std::ops::Range;

/// `bad[s]` is true when cutting before message `s` would put an assistant
/// tool call in the old part and one of its results in the kept part.
fn crossing_splits(messages: &[Message]) -> Vec<bool> {
    let mut diff = vec![0i64; messages.len() + 2];
    let mut call_at: HashMap<&str, usize> = HashMap::new();
    for (j, m) in messages.iter().enumerate() {
        match m {
            Message::Assistant(a) => {
                for (id, _, _) in a.tool_calls() {
                    call_at.insert(id, j);
                }
            }
            Message::ToolResult(r) => {
                if let Some(&i) = call_at.get(r.tool_call_id.as_str()) {
                    diff[i + 1] += 1;
                    diff[j + 1] -= 1;
                }
            }
            Message::User(_) => {}
        }
    }
    let mut open = 0;
    (0..=messages.len())
        .map(|s| {
            open += diff[s];
            open > 0
        })
        .collect()
}

/// Whether `messages[..split]` / `messages[split..]` keeps every tool call
/// on the same side as its results.
pub fn split_is_valid(messages: &[Message], split: usize) -> bool {
    split <= messages.len() && !crossing_splits(messages)[split]
}

/// The nearest valid split to `split` with at least one message on each
/// side: later first (keeps the recent part within budget), else earlier.
pub(crate) fn adjust_split(messages: &[Message], split: usize) -> Option<usize> {
    if messages.len() < 2 {
        return None;
    }
    let bad = crossing_splits(messages);
    let split = split.clamp(1, messages.len() - 1);
    (split..messages.len())
        .find(|&s| !bad[s])
        .or_else(|| (1..split).rev().find(|&s| !bad[s]))
}

/// `/compact N`: the split that keeps the last `keep` messages verbatim,
/// moved earlier (keeping more) if it would separate a tool call from its
/// results. `None` when nothing would be removed.
pub fn plan_manual(messages: &[Message], keep: usize) -> Option<usize> {
    let split = messages.len().checked_sub(keep).filter(|s| *s > 0)?;
    let bad = crossing_splits(messages);
    (1..=split).rev().find(|&s| !bad[s])
}

/// Greedy chunks of consecutive messages whose token estimates (`tokens`)
/// sum to at most `budget`; a message larger than `budget` is a chunk of
/// its own.
pub fn chunk_ranges(tokens: &[u64], budget: u64) -> Vec<Range<usize>> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut sum = 0u64;
    for (i, t) in tokens.iter().enumerate() {
        if i > start && sum + t > budget {
            chunks.push(start..i);
            start = i;
            sum = 0;
        }
        sum += t;
    }
    if start < tokens.len() {
        chunks.push(start..tokens.len());
    }
    chunks
}
