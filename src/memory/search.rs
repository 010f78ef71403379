//! Search decisions: the FTS5 query a user's words become (quoted terms,
//! so no input is ever read as FTS syntax), reciprocal rank fusion of the
//! keyword and vector rankings, and cosine similarity.

use std::collections::HashMap;

/// Most terms a query keeps.
const MAX_TERMS: usize = 16;
/// RRF's constant: a hit's weight is 1 / (K + rank).
const RRF_K: f64 = 60.0;

/// An FTS5 MATCH expression for free text: its words, each quoted (FTS5
/// operators and punctuation in the input are only text), any of them
/// matching; `None` when no word is left.
pub fn fts_query(text: &str) -> Option<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
    {
        let word = word.to_lowercase();
        if !terms.contains(&word) {
            terms.push(word);
        }
        if terms.len() == MAX_TERMS {
            break;
        }
    }
    (!terms.is_empty()).then(|| {
        terms
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}

/// Fuses rankings (best first) by reciprocal rank: the fused order, best
/// first, with each item's score. Ties keep first-seen order.
pub fn rrf(rankings: &[Vec<String>]) -> Vec<(String, f64)> {
    let mut scores: HashMap<&str, (f64, usize)> = HashMap::new();
    let mut order = 0;
    for ranking in rankings {
        for (rank, item) in ranking.iter().enumerate() {
            let entry = scores.entry(item.as_str()).or_insert_with(|| {
                order += 1;
                (0.0, order)
            });
            entry.0 += 1.0 / (RRF_K + rank as f64 + 1.0);
        }
    }
    let mut fused: Vec<(&str, (f64, usize))> = scores.into_iter().collect();
    fused.sort_by(|a, b| b.1 .0.total_cmp(&a.1 .0).then(a.1 .1.cmp(&b.1 .1)));
    fused
        .into_iter()
        .map(|(item, (score, _))| (item.to_string(), score))
        .collect()
}

/// Cosine similarity; 0 for mismatched or zero vectors.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    match na > 0.0 && nb > 0.0 {
        true => dot / (na.sqrt() * nb.sqrt()),
        false => 0.0,
    }
}

/// The `k` best-scoring distinct items of a stream, kept as they come
/// (a search reads the stored vectors one row at a time, never all).
pub struct TopK {
    k: usize,
    best: Vec<(String, f32)>,
}

impl TopK {
    pub fn new(k: usize) -> Self {
        Self {
            k,
            best: Vec::new(),
        }
    }

    pub fn push(&mut self, item: &str, score: f32) {
        if let Some(seen) = self.best.iter_mut().find(|(i, _)| i == item) {
            seen.1 = seen.1.max(score);
        } else if self.best.len() < self.k {
            self.best.push((item.to_string(), score));
        } else if let Some(worst) = self.best.iter_mut().min_by(|a, b| a.1.total_cmp(&b.1)) {
            if score > worst.1 {
                *worst = (item.to_string(), score);
            }
        }
    }

    /// The items, best first.
    pub fn ranking(mut self) -> Vec<String> {
        self.best.sort_by(|a, b| b.1.total_cmp(&a.1));
        self.best.into_iter().map(|(i, _)| i).collect()
    }
}

/// A vector as stored in SQLite: little-endian f32s.
pub fn vector_to_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn vector_from_bytes(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_text_becomes_quoted_terms() {
        assert_eq!(
            fts_query("What coffee does Alice like? coffee!").as_deref(),
            Some("\"what\" OR \"coffee\" OR \"does\" OR \"alice\" OR \"like\"")
        );
        // FTS5 syntax in the input stays text.
        assert_eq!(
            fts_query("NEAR(a b) OR \"x\" content:* ^start").as_deref(),
            Some("\"near\" OR \"or\" OR \"content\" OR \"start\"")
        );
        assert_eq!(fts_query("? ! a"), None);
        assert_eq!(
            fts_query("café Zürich").as_deref(),
            Some("\"café\" OR \"zürich\"")
        );
    }

    #[test]
    fn rankings_are_fused_by_reciprocal_rank() {
        let fused = rrf(&[
            vec!["a".into(), "b".into(), "c".into()],
            vec!["c".into(), "a".into()],
        ]);
        let order: Vec<&str> = fused.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(order, ["a", "c", "b"]);
        assert!((fused[0].1 - (1.0 / 61.0 + 1.0 / 62.0)).abs() < 1e-12);
    }

    #[test]
    fn top_k_keeps_the_best_distinct_items() {
        let mut top = TopK::new(2);
        for (item, score) in [("a", 0.1), ("b", 0.9), ("c", 0.5), ("a", 0.95), ("d", 0.2)] {
            top.push(item, score);
        }
        assert_eq!(top.ranking(), ["a", "b"]);
    }

    #[test]
    fn cosine_and_vector_bytes() {
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 2.0]), 0.0);
        let v = vec![0.5f32, -1.25, 3.0];
        assert_eq!(vector_from_bytes(&vector_to_bytes(&v)), v);
    }
}
