//! Session activity for the registry, written at most once a second per
//! session: a stamp newer than the one stored by less than `EVERY_MS` is
//! kept in memory and written before the registry is next read. An
//! eviction in between loses at most that much of `lastActiveAt`'s
//! precision, never a session: its first touch is always written.

use std::collections::HashMap;

/// How often one session's activity is written at most.
pub const EVERY_MS: i64 = 1_000;
/// Beyond this many sessions, the stamps written are forgotten (each
/// session is then written once more on its next message).
const KEPT: usize = 10_000;

#[derive(Debug, Default)]
pub struct Touches {
    /// The last stamp written, per session.
    written: HashMap<String, i64>,
    /// Stamps not yet written.
    pending: HashMap<String, i64>,
}

impl Touches {
    /// Whether activity of `key` at `now` must be written now (then call
    /// [`Touches::wrote`]); if not, it is kept for [`Touches::take_pending`].
    /// A label change is always written.
    pub fn must_write(&mut self, key: &str, now: i64, label_changes: bool) -> bool {
        let recent = self.written.get(key).is_some_and(|&at| now - at < EVERY_MS);
        if recent && !label_changes {
            self.pending.insert(key.to_string(), now);
            return false;
        }
        true
    }

    /// `key`'s activity at `at` is stored.
    pub fn wrote(&mut self, key: &str, at: i64) {
        if self.written.len() >= KEPT && !self.written.contains_key(key) {
            self.written.clear();
        }
        self.written.insert(key.to_string(), at);
        self.pending.remove(key);
    }

    /// The stamps kept back, to be written now (counted as written).
    pub fn take_pending(&mut self) -> Vec<(String, i64)> {
        let mut pending: Vec<(String, i64)> = self.pending.drain().collect();
        pending.sort();
        for (key, at) in &pending {
            self.written.insert(key.clone(), *at);
        }
        pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_touch_is_written_and_touches_within_a_second_wait() {
        let mut t = Touches::default();
        assert!(t.must_write("a", 1_000, false));
        t.wrote("a", 1_000);
        assert!(!t.must_write("a", 1_400, false));
        assert!(!t.must_write("a", 1_999, false));
        assert!(t.must_write("b", 1_999, false));
        t.wrote("b", 1_999);
        assert_eq!(t.take_pending(), vec![("a".to_string(), 1_999)]);
        assert_eq!(t.take_pending(), vec![]);
    }

    #[test]
    fn a_touch_a_second_after_the_last_write_is_written() {
        let mut t = Touches::default();
        t.wrote("a", 1_000);
        assert!(!t.must_write("a", 1_500, false));
        // The kept-back stamp was taken at 1 500: a second after it counts.
        assert_eq!(t.take_pending(), vec![("a".to_string(), 1_500)]);
        assert!(!t.must_write("a", 2_400, false));
        assert!(t.must_write("a", 2_500, false));
        t.wrote("a", 2_500);
        assert_eq!(t.take_pending(), vec![]);
    }

    #[test]
    fn a_label_change_is_always_written() {
        let mut t = Touches::default();
        t.wrote("a", 1_000);
        assert!(t.must_write("a", 1_001, true));
    }

    #[test]
    fn past_the_limit_written_stamps_are_forgotten_not_pending_ones() {
        let mut t = Touches::default();
        for i in 0..KEPT {
            t.wrote(&format!("s{i}"), 5);
        }
        assert!(!t.must_write("s0", 6, false));
        t.wrote("new", 6);
        // Forgotten: written again on the next touch.
        assert!(t.must_write("s1", 7, false));
        assert_eq!(t.take_pending(), vec![("s0".to_string(), 6)]);
    }
}
