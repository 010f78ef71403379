//! What of a beat's answer reaches the user. The agent says
//! `HEARTBEAT_OK` when nothing needs attention: that acknowledgement is
//! dropped, and the token is cut from the start or end of a real answer.
//! Anything else is delivered WHATEVER ITS LENGTH (even under 300
//! characters), once: the same text within 24 hours is
//! not sent again.

use crate::time::DAY_MS;
use serde::{Deserialize, Serialize};

/// The acknowledgement the heartbeat prompt asks for.
pub const HEARTBEAT_TOKEN: &str = "HEARTBEAT_OK";

/// Identical answers within this window are delivered once.
pub const DEDUPE_WINDOW_MS: i64 = DAY_MS;

/// The last delivered beat answer of an agent (the gateway stores it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastDelivery {
    pub text: String,
    pub at_ms: i64,
}

/// Why an answer was not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suppressed {
    /// Only the token (and punctuation): nothing needs attention.
    Ack,
    /// No text at all.
    Empty,
    /// The same text went out less than 24 hours ago.
    Duplicate,
}

/// The decision on an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Send this (the token cut off); store it as the [`LastDelivery`].
    Deliver(String),
    Suppress(Suppressed),
}

/// Decides on a beat's `answer` at `now_ms`.
pub fn decide_delivery(answer: &str, last: Option<&LastDelivery>, now_ms: i64) -> Delivery {
    if answer.trim().is_empty() {
        return Delivery::Suppress(Suppressed::Empty);
    }
    let Some(text) = strip_token(answer) else {
        return Delivery::Suppress(Suppressed::Ack);
    };
    let duplicate = last.is_some_and(|l| {
        now_ms - l.at_ms < DEDUPE_WINDOW_MS && normalized(&l.text) == normalized(&text)
    });
    if duplicate {
        Delivery::Suppress(Suppressed::Duplicate)
    } else {
        Delivery::Deliver(text)
    }
}

/// `answer` without a leading or trailing token (any case, with the
/// punctuation and markup around it, e.g. `**HEARTBEAT_OK.**`); `None`
/// when nothing else is left. A token in the middle is part of the text.
pub fn strip_token(answer: &str) -> Option<String> {
    let mut s = answer.trim();
    // Leading: `HEARTBEAT_OK. All good` → `All good`.
    let head = s.trim_start_matches(filler);
    if starts_with_token(head) {
        s = head[HEARTBEAT_TOKEN.len()..].trim_start_matches(closer);
    }
    // Trailing: `Done. HEARTBEAT_OK` → `Done.` (its own full stop stays).
    let tail = s.trim_end_matches(filler);
    if ends_with_token(tail) {
        s = tail[..tail.len() - HEARTBEAT_TOKEN.len()].trim_end_matches(separator);
    }
    let rest = s.trim();
    (!rest.trim_matches(filler).is_empty()).then(|| rest.to_string())
}

fn starts_with_token(s: &str) -> bool {
    s.get(..HEARTBEAT_TOKEN.len())
        .is_some_and(|h| h.eq_ignore_ascii_case(HEARTBEAT_TOKEN))
        && !s[HEARTBEAT_TOKEN.len()..].starts_with(word_char)
}

fn ends_with_token(s: &str) -> bool {
    let Some(cut) = s.len().checked_sub(HEARTBEAT_TOKEN.len()) else {
        return false;
    };
    s.get(cut..)
        .is_some_and(|t| t.eq_ignore_ascii_case(HEARTBEAT_TOKEN))
        && !s[..cut].ends_with(word_char)
}

fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whitespace, punctuation and markdown that may wrap the token.
fn filler(c: char) -> bool {
    c.is_whitespace() || ".,:;!?-–—*_~`'\"()[]<>".contains(c)
}

/// What may follow a leading token before the real answer starts.
fn closer(c: char) -> bool {
    c.is_whitespace() || ".,:;!?-–—*_~`'\")]>".contains(c)
}

/// What may sit between a real answer and a trailing token.
fn separator(c: char) -> bool {
    c.is_whitespace() || ",:;-–—*_~`(".contains(c)
}

/// Comparison form for dedupe: whitespace runs collapsed.
fn normalized(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether HEARTBEAT.md has nothing to act on: the prompt's rule (blank
/// lines, HTML comments even multi-line, bare `#` headings, `---` `***`
/// `___` rules) plus lines of only `=` (setext underlines, as v1).
pub fn heartbeat_md_is_empty(content: &str) -> bool {
    let without_equals: String = crate::prompt::strip_html_comments(content)
        .lines()
        .filter(|l| {
            let t = l.trim();
            t.is_empty() || !t.bytes().all(|b| b == b'=')
        })
        .collect::<Vec<_>>()
        .join("\n");
    crate::prompt::heartbeat_is_empty(&without_equals)
}
