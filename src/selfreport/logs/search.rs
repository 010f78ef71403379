//! A `search` call as it goes: the shell reads one planned session at a
//! time and hands its messages here until enough hits are found.

use super::entries::{fitting, search, Hit};
use super::SearchResult;
use gsv_protocol::Message;

/// Hits collected so far, and which sessions were searched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Search {
    query: String,
    preview_chars: usize,
    limit: usize,
    hits: Vec<Hit>,
    searched: usize,
    not_searched: Vec<String>,
}

impl Search {
    /// A search for `query` stopping at `limit` hits; `not_searched` are
    /// the sessions the plan already left out.
    pub fn new(query: &str, preview_chars: usize, limit: usize, not_searched: Vec<String>) -> Self {
        Self {
            query: query.to_string(),
            preview_chars,
            limit,
            hits: Vec::new(),
            searched: 0,
            not_searched,
        }
    }

    /// Whether another session is worth reading.
    pub fn wants_more(&self) -> bool {
        self.hits.len() < self.limit
    }

    /// Searches one whole session (its messages from entry 0, in order).
    pub fn add(&mut self, session_id: &str, messages: &[Message]) {
        let room = self.limit - self.hits.len().min(self.limit);
        let found = search(session_id, messages, &self.query, self.preview_chars, room);
        self.hits.extend(found);
        self.searched += 1;
    }

    /// A session not read (the limit was reached before it).
    pub fn skip(&mut self, session_id: &str) {
        self.not_searched.push(session_id.to_string());
    }

    /// The result, with as many hits as fit in `budget` characters; hits
    /// cut for room count as reaching the limit (there are more).
    pub fn finish(mut self, budget: usize) -> SearchResult {
        let fit = fitting(self.hits.iter(), budget);
        let cut = fit < self.hits.len();
        self.hits.truncate(fit);
        SearchResult {
            ok: true,
            limit_reached: cut || self.hits.len() >= self.limit,
            query: self.query,
            hits: self.hits,
            searched_sessions: self.searched,
            not_searched: self.not_searched,
        }
    }
}
