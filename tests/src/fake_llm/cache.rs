//! Anthropic's prompt caching, as its documentation states the rules
//! ("Prompt caching", Messages API):
//!
//! - A prompt is read in the order tools → system → messages; each tool,
//!   each system text block and each message content block (a string
//!   content is one block) is a block.
//! - `cache_control` on a block marks a breakpoint: the prefix up to and
//!   including that block is written to the cache (billed as
//!   `cache_creation_input_tokens`), unless it is shorter than the model's
//!   minimum (1 024 tokens; 2 048 for Haiku models), which caches nothing.
//! - At each breakpoint the API looks for a cached prefix at that block's
//!   boundary and the 19 before it; the longest found is read
//!   (`cache_read_input_tokens`) and its lifetime renewed.
//! - An entry lives 5 minutes (`"ttl": "1h"`: an hour) from its last use,
//!   and belongs to one model. Moving a breakpoint does not change a
//!   prefix: the marks are not part of what is cached.
//! - `input_tokens` counts what is neither read nor written.
//! - A string `content` (or `system`) is the one text block it stands for.
//!
//! Token counts are the fake's estimate (four characters a token) of each
//! block's JSON without its mark.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::checks::estimate_tokens;

/// How far back from a breakpoint the API looks for a cached prefix.
const LOOKBACK_BLOCKS: usize = 20;

/// The cached prefixes, by hash of model and prefix.
#[derive(Debug, Default)]
pub(crate) struct PromptCache {
    entries: HashMap<u64, Entry>,
    /// OpenAI's: recent prompts by model and `prompt_cache_key`, each
    /// with when it expires.
    prompts: HashMap<String, Vec<(String, Instant)>>,
    /// Added to the real clock (tests age entries past their lifetime).
    pub skew: Duration,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    ttl: Duration,
    expires: Instant,
}

/// A request's input tokens as the API bills them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CacheUsage {
    pub input: u64,
    pub read: u64,
    pub write: u64,
}

/// One block of the prompt: the hash of the prefix it ends, the tokens up
/// to and including it, and its mark's lifetime.
struct Boundary {
    hash: u64,
    tokens: u64,
    mark: Option<Duration>,
}

impl PromptCache {
    /// The usage of a Messages API `body`, reading and writing the cache as
    /// its breakpoints ask. `None` when nothing in it is marked: the
    /// caller bills its whole input.
    pub fn anthropic(&mut self, body: &Value) -> Option<CacheUsage> {
        let boundaries = boundaries(body);
        let breakpoints: Vec<usize> = (0..boundaries.len())
            .filter(|&i| boundaries[i].mark.is_some())
            .collect();
        if breakpoints.is_empty() {
            return None;
        }
        let now = Instant::now() + self.skew;
        self.entries.retain(|_, e| e.expires > now);
        let read = breakpoints
            .iter()
            .flat_map(|&b| (b.saturating_sub(LOOKBACK_BLOCKS - 1)..=b).rev())
            .filter(|&i| self.entries.contains_key(&boundaries[i].hash))
            .max();
        if let Some(i) = read {
            let entry = self.entries.get_mut(&boundaries[i].hash).expect("found");
            entry.expires = now + entry.ttl;
        }
        let read_tokens = read.map_or(0, |i| boundaries[i].tokens);
        let minimum = minimum_tokens(body["model"].as_str().unwrap_or_default());
        let mut written_to = None;
        for &b in &breakpoints {
            let boundary = &boundaries[b];
            if read.is_some_and(|r| r >= b) || boundary.tokens < minimum {
                continue;
            }
            let ttl = boundary.mark.expect("a breakpoint");
            self.entries.insert(
                boundary.hash,
                Entry {
                    ttl,
                    expires: now + ttl,
                },
            );
            written_to = Some(boundary.tokens);
        }
        let total = boundaries.last().map_or(0, |b| b.tokens);
        let write = written_to.map_or(0, |t| t - read_tokens);
        Some(CacheUsage {
            input: total - read_tokens - write,
            read: read_tokens,
            write,
        })
    }
}

/// The API's own refusals of marks: more than four, or one on a thinking
/// block.
pub(crate) fn check_marks(body: &Value) -> Result<(), String> {
    let mut marked = 0;
    let tools = body["tools"].as_array().into_iter().flatten();
    let system = body["system"].as_array().into_iter().flatten();
    let messages = body["messages"].as_array().into_iter().flatten();
    let contents = messages.flat_map(|m| m["content"].as_array().into_iter().flatten());
    for block in tools.chain(system).chain(contents) {
        if block.get("cache_control").is_none() {
            continue;
        }
        if matches!(
            block["type"].as_str(),
            Some("thinking" | "redacted_thinking")
        ) {
            return Err("Thinking blocks cannot be marked with cache_control directly".into());
        }
        marked += 1;
    }
    match marked {
        0..=4 => Ok(()),
        n => Err(format!(
            "A maximum of 4 blocks with cache_control may be provided. Found {n}."
        )),
    }
}

/// The smallest prefix a model caches.
fn minimum_tokens(model: &str) -> u64 {
    if model.contains("haiku") {
        2048
    } else {
        1024
    }
}

/// Every block of the prompt in the order the API reads them.
fn boundaries(body: &Value) -> Vec<Boundary> {
    let mut hasher = DefaultHasher::new();
    body["model"].as_str().unwrap_or_default().hash(&mut hasher);
    let mut out = Vec::new();
    let mut tokens = 0;
    let mut push = |hasher: &mut DefaultHasher, part: &str, block: &Value| {
        let (text, mark) = unmarked(block);
        part.hash(hasher);
        text.hash(hasher);
        tokens += estimate_tokens(text.chars().count());
        out.push(Boundary {
            hash: hasher.finish(),
            tokens,
            mark,
        });
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push(&mut hasher, "tool", tool);
    }
    match &body["system"] {
        Value::Array(blocks) => blocks.iter().for_each(|b| push(&mut hasher, "system", b)),
        Value::Null => {}
        text => push(&mut hasher, "system", text),
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or_default();
        match &message["content"] {
            Value::Array(blocks) => blocks.iter().for_each(|b| push(&mut hasher, role, b)),
            content => push(&mut hasher, role, content),
        }
    }
    out
}

/// A block's JSON without its mark, and the mark's lifetime. A string
/// content is the text block it stands for (the API reads it as one).
fn unmarked(block: &Value) -> (String, Option<Duration>) {
    if let Value::String(text) = block {
        return (
            serde_json::json!({"type": "text", "text": text}).to_string(),
            None,
        );
    }
    let Some(fields) = block.as_object() else {
        return (block.to_string(), None);
    };
    let Some(mark) = fields.get("cache_control") else {
        return (block.to_string(), None);
    };
    let ttl = match mark["ttl"].as_str() {
        Some("1h") => Duration::from_secs(3600),
        _ => Duration::from_secs(300),
    };
    let mut rest = fields.clone();
    rest.remove("cache_control");
    (Value::Object(rest).to_string(), Some(ttl))
}

/// OpenAI's automatic prompt caching ("Prompt caching" guide): nothing is
/// marked; a prompt of 1 024 tokens or more is cached, and a later request
/// whose prompt begins the same way reads the longest common prefix,
/// counted from 1 024 tokens in steps of 128 (`prompt_tokens_details.
/// cached_tokens`). A conversation meets its cache through
/// `prompt_cache_key`: the fake keeps each key's (and model's) recent
/// prompts, and caches nothing for a request without one. Chat Completions
/// and the Responses API cache alike; a Responses prompt is its tools,
/// `instructions` and `input`.
const OPENAI_MINIMUM: u64 = 1024;
const OPENAI_STEP: u64 = 128;
/// Prompts kept per key (the last calls of a conversation).
const OPENAI_KEPT: usize = 8;

impl PromptCache {
    /// The tokens of a Chat Completions or Responses `body` read from
    /// cache (0 without a `prompt_cache_key`).
    pub fn openai(&mut self, body: &Value) -> u64 {
        let Some(key) = body["prompt_cache_key"].as_str() else {
            return 0;
        };
        let prompt = match body.get("input") {
            Some(input) => format!("{}{}{input}", body["tools"], body["instructions"]),
            None => format!("{}{}", body["tools"], body["messages"]),
        };
        let now = Instant::now() + self.skew;
        let slot = format!("{}\u{0}{key}", body["model"]);
        let kept = self.prompts.entry(slot).or_default();
        kept.retain(|(_, expires)| *expires > now);
        let common = kept
            .iter()
            .map(|(p, _)| common_prefix(p, &prompt))
            .max()
            .unwrap_or(0);
        let tokens = estimate_tokens(common);
        let cached = match tokens {
            t if t < OPENAI_MINIMUM => 0,
            t => OPENAI_MINIMUM + (t - OPENAI_MINIMUM) / OPENAI_STEP * OPENAI_STEP,
        };
        if estimate_tokens(prompt.chars().count()) >= OPENAI_MINIMUM {
            kept.push((prompt, now + Duration::from_secs(300)));
            if kept.len() > OPENAI_KEPT {
                kept.remove(0);
            }
        }
        cached
    }
}

/// The characters two texts begin with alike.
fn common_prefix(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mark() -> Value {
        json!({"type": "ephemeral"})
    }

    /// A conversation of `turns` user/assistant pairs after a long system
    /// prompt, the last entry marked as the gateway marks it.
    fn body(system: &str, turns: usize) -> Value {
        let mut messages = Vec::new();
        for i in 0..turns {
            messages.push(json!({"role": "user", "content": format!("question {i}")}));
            messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("answer {i}")}]}));
        }
        messages.push(json!({"role": "user", "content": [
            {"type": "text", "text": "now?", "cache_control": mark()}
        ]}));
        json!({
            "model": "claude-sonnet-4-5",
            "system": [{"type": "text", "text": system, "cache_control": mark()}],
            "messages": messages,
        })
    }

    #[test]
    fn a_prefix_is_written_once_then_read_and_grows() {
        let mut cache = PromptCache::default();
        let system = "x".repeat(8000); // about 2 000 tokens
        let first = cache.anthropic(&body(&system, 0)).unwrap();
        assert_eq!((first.read, first.input), (0, 0));
        assert!(first.write > 2000, "{first:?}");
        // One turn later the system prompt is read (the question after it
        // is a new block), and the rest up to the last mark written.
        let second = cache.anthropic(&body(&system, 1)).unwrap();
        assert!(
            second.read > 2000 && second.read < first.write,
            "{second:?}"
        );
        assert!(second.write > 0 && second.input == 0, "{second:?}");
        // The same request again reads all of it.
        let again = cache.anthropic(&body(&system, 1)).unwrap();
        assert_eq!(
            again,
            CacheUsage {
                input: 0,
                read: second.read + second.write,
                write: 0
            }
        );
    }

    #[test]
    fn below_the_minimum_nothing_is_cached() {
        let mut cache = PromptCache::default();
        let short = body("Be brief.", 1);
        let usage = cache.anthropic(&short).unwrap();
        assert_eq!(usage.read + usage.write, 0);
        assert_eq!(cache.anthropic(&short).unwrap().read, 0);
    }

    #[test]
    fn unmarked_requests_are_not_cached_and_entries_expire() {
        let mut cache = PromptCache::default();
        let plain = json!({"model": "m", "system": "x", "messages": []});
        assert_eq!(cache.anthropic(&plain), None);
        let long = body(&"y".repeat(8000), 0);
        cache.anthropic(&long);
        assert!(cache.anthropic(&long).unwrap().read > 0);
        cache.skew = Duration::from_secs(301);
        assert_eq!(cache.anthropic(&long).unwrap().read, 0);
    }

    #[test]
    fn another_model_has_its_own_cache() {
        let mut cache = PromptCache::default();
        let long = body(&"y".repeat(8000), 0);
        cache.anthropic(&long);
        let mut other = long.clone();
        other["model"] = json!("claude-opus-4-1");
        assert_eq!(cache.anthropic(&other).unwrap().read, 0);
    }

    #[test]
    fn openai_reads_the_common_prefix_of_a_conversations_prompts() {
        let mut cache = PromptCache::default();
        let system = "s".repeat(6000); // 1 500 tokens
        let ask = |key: Option<&str>, turns: &[&str]| {
            let mut messages = vec![json!({"role": "system", "content": system})];
            messages.extend(turns.iter().map(|t| json!({"role": "user", "content": t})));
            let mut body = json!({"model": "gpt-5", "messages": messages});
            if let Some(key) = key {
                body["prompt_cache_key"] = json!(key);
            }
            body
        };
        assert_eq!(cache.openai(&ask(Some("a"), &["hi"])), 0);
        // The system prompt is shared: 1 024 tokens and whole steps of 128.
        let cached = cache.openai(&ask(Some("a"), &["hi", "more"]));
        assert_eq!(cached, 1024 + 3 * 128);
        // Another conversation, or none named, meets no cache.
        assert_eq!(cache.openai(&ask(Some("b"), &["hi", "more"])), 0);
        assert_eq!(cache.openai(&ask(None, &["hi", "more"])), 0);
    }
}
