//! Recall: which memories go into a run's prompt, and how they read there.

use serde::{Deserialize, Serialize};

/// A memory that matched the new message, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    pub uri: String,
    pub category: String,
    pub abstract_text: String,
}

/// Most memories recalled into one prompt.
pub const MAX_RECALLED: usize = 5;
/// Default budget for the section, in tokens (about 4 characters each).
pub const DEFAULT_BUDGET_TOKENS: usize = 400;

fn line(c: &Candidate) -> String {
    format!("- [{}] {} ({})", c.category, c.abstract_text, c.uri)
}

/// The best candidates whose lines fit `budget_tokens`, at most
/// [`MAX_RECALLED`]; one too long is skipped, not cut.
pub fn select(candidates: &[Candidate], budget_tokens: usize) -> Vec<Candidate> {
    let mut left = budget_tokens.saturating_mul(4);
    let mut chosen = Vec::new();
    for c in candidates {
        let cost = line(c).chars().count() + 1;
        if cost <= left {
            left -= cost;
            chosen.push(c.clone());
        }
        if chosen.len() == MAX_RECALLED {
            break;
        }
    }
    chosen
}

/// The prompt section for what was recalled; empty when nothing was.
pub fn render(recalled: &[Candidate]) -> String {
    if recalled.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = recalled.iter().map(line).collect();
    format!(
        "## Recalled memories\n\nFrom your long-term memory, the entries that match this message \
         (abstracts; `gsv__MemoryGet` reads one whole):\n{}",
        lines.join("\n")
    )
}

/// A recall that found the account's index empty, and what a session
/// knew then. Until something it would hear of changes, a recall can only
/// find the index empty again, so the session skips that round trip: the
/// index tells the gateway when it gets its first memory (a new prompt
/// revision with the session's next message), the session counts the
/// memory writes it makes itself, and what it knows expires after
/// `workspace.recheckSeconds` in case the index's word was lost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownEmpty {
    /// The account whose index it was (`memory.account` may change).
    pub account: String,
    /// The prompt revision (the workspace revision) the session had.
    pub rev: String,
    /// The session isolate's memory writes (`MemoryStub`'s count).
    pub writes: u64,
    pub at_ms: i64,
}

impl KnownEmpty {
    /// Whether a recall in `account`'s index now would find it empty too.
    pub fn holds(
        &self,
        account: &str,
        rev: &str,
        writes: u64,
        now_ms: i64,
        max_age_ms: i64,
    ) -> bool {
        self.account == account
            && self.rev == rev
            && self.writes == writes
            && (self.at_ms..self.at_ms.saturating_add(max_age_ms)).contains(&now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(slug: &str, text: &str) -> Candidate {
        Candidate {
            uri: format!("ctx://default/users/alice/memories/preferences/{slug}"),
            category: "preferences".into(),
            abstract_text: text.into(),
        }
    }

    #[test]
    fn recall_fits_the_budget_best_first() {
        let all = [
            c("coffee", "Alice drinks black coffee"),
            c("tea", &"t".repeat(300)),
            c("gym", "Gym on Mondays"),
        ];
        assert_eq!(select(&all, 50), [all[0].clone(), all[2].clone()]);
        assert_eq!(select(&all, 0), []);
        let many: Vec<Candidate> = (0..9).map(|i| c(&format!("m{i}"), "x")).collect();
        assert_eq!(select(&many, 10_000).len(), MAX_RECALLED);
    }

    #[test]
    fn the_section_names_each_memory_and_how_to_read_it() {
        assert_eq!(render(&[]), "");
        assert_eq!(
            render(&[c("coffee", "Alice drinks black coffee")]),
            "## Recalled memories\n\nFrom your long-term memory, the entries that match this message \
             (abstracts; `gsv__MemoryGet` reads one whole):\n\
             - [preferences] Alice drinks black coffee (ctx://default/users/alice/memories/preferences/coffee)"
        );
    }

    #[test]
    fn an_empty_index_is_known_until_the_revision_a_write_or_the_age_changes_it() {
        let known = KnownEmpty {
            account: "default".into(),
            rev: "gw1.3.0".into(),
            writes: 2,
            at_ms: 1_000,
        };
        let minute = 60_000;
        assert!(known.holds("default", "gw1.3.0", 2, 1_000, minute));
        assert!(known.holds("default", "gw1.3.0", 2, 60_999, minute));
        // The gateway heard of a first memory (or any workspace change).
        assert!(!known.holds("default", "gw1.4.0", 2, 2_000, minute));
        // This session wrote or deleted a memory itself.
        assert!(!known.holds("default", "gw1.3.0", 3, 2_000, minute));
        // Another account's index (`memory.account` changed).
        assert!(!known.holds("acme", "gw1.3.0", 2, 2_000, minute));
        // Too old: the index's word may have been lost.
        assert!(!known.holds("default", "gw1.3.0", 2, 61_000, minute));
        // A clock that went back knows nothing.
        assert!(!known.holds("default", "gw1.3.0", 2, 999, minute));
        // Rechecking every time (`workspace.recheckSeconds` 0) never skips.
        assert!(!known.holds("default", "gw1.3.0", 2, 1_000, 0));
    }
}
