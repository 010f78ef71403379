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
}
