//! SKILL.md bodies already read, by R2 key and etag.
//!
//! An R2 listing carries each object's etag but not its body. A run lists
//! the skills in the same parallel batch as the workspace files and reads
//! only the SKILL.md files this cache has not seen at the listed etag, so a
//! second, dependent batch happens only when a skill was added or edited
//! (or the isolate is new). An edited file has a new etag, so a stale body
//! is never used.

use std::collections::HashMap;

/// Bodies held at most (bytes of SKILL.md text) before older entries go.
pub const DEFAULT_CAPACITY: usize = 4 * 1024 * 1024;

#[derive(Debug)]
pub struct SkillFileCache {
    entries: HashMap<String, Entry>,
    bytes: usize,
    capacity: usize,
    /// Insertion counter: eviction drops the oldest entries first.
    clock: u64,
}

#[derive(Debug)]
struct Entry {
    etag: String,
    content: String,
    inserted: u64,
}

impl SkillFileCache {
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: HashMap::new(),
            bytes: 0,
            capacity,
            clock: 0,
        }
    }

    /// The body of `key` if it was read at exactly `etag`.
    pub fn get(&self, key: &str, etag: &str) -> Option<&str> {
        self.entries
            .get(key)
            .filter(|e| e.etag == etag)
            .map(|e| e.content.as_str())
    }

    /// Remembers `content` as `key` at `etag`, replacing what was there; a
    /// body larger than the whole capacity is not kept.
    pub fn put(&mut self, key: &str, etag: &str, content: &str) {
        self.remove(key);
        if content.len() > self.capacity {
            return;
        }
        while self.bytes + content.len() > self.capacity {
            let oldest = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.inserted)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => self.remove(&k),
                None => break,
            }
        }
        self.clock += 1;
        self.bytes += content.len();
        self.entries.insert(
            key.to_string(),
            Entry {
                etag: etag.to_string(),
                content: content.to_string(),
                inserted: self.clock,
            },
        );
    }

    /// Bytes of bodies held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    fn remove(&mut self, key: &str) {
        if let Some(old) = self.entries.remove(key) {
            self.bytes -= old.content.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_served_only_at_the_etag_it_was_read_at() {
        let mut cache = SkillFileCache::new(100);
        cache.put("skills/a/SKILL.md", "e1", "body one");
        assert_eq!(cache.get("skills/a/SKILL.md", "e1"), Some("body one"));
        assert_eq!(cache.get("skills/a/SKILL.md", "e2"), None);
        assert_eq!(cache.get("skills/b/SKILL.md", "e1"), None);
        cache.put("skills/a/SKILL.md", "e2", "body two!");
        assert_eq!(
            (
                cache.get("skills/a/SKILL.md", "e1"),
                cache.get("skills/a/SKILL.md", "e2"),
                cache.bytes()
            ),
            (None, Some("body two!"), 9)
        );
    }

    #[test]
    fn the_oldest_bodies_go_first_when_full() {
        let mut cache = SkillFileCache::new(10);
        cache.put("a", "1", "aaaa");
        cache.put("b", "1", "bbbb");
        cache.put("c", "1", "cccc");
        assert_eq!(
            (
                cache.get("a", "1"),
                cache.get("b", "1"),
                cache.get("c", "1"),
                cache.bytes()
            ),
            (None, Some("bbbb"), Some("cccc"), 8)
        );
        cache.put("huge", "1", "this is longer than ten");
        assert_eq!((cache.get("huge", "1"), cache.bytes()), (None, 8));
    }
}
