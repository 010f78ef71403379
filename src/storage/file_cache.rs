//! Text bodies of R2 objects already read or written, by key and etag, and
//! keys known to be absent.
//!
//! An R2 listing carries each object's etag but not its body. A run lists
//! the workspace (its top level, the daily memory files, the skills) and
//! takes each body from here when this cache holds it at the listed etag,
//! so a run whose files did not change reads no body at all, and an edited
//! file (new etag) is read again: a stale body is never used. What the
//! cache has never seen is read at once, alongside the listings.

use std::collections::HashMap;

/// Bytes of text held at most before older entries go.
pub const DEFAULT_CAPACITY: usize = 8 * 1024 * 1024;

#[derive(Debug)]
pub struct FileCache {
    entries: HashMap<String, Entry>,
    bytes: usize,
    capacity: usize,
    /// Insertion counter: eviction drops the oldest entries first.
    clock: u64,
}

#[derive(Debug)]
struct Entry {
    /// `None`: the key was found absent.
    body: Option<Held>,
    inserted: u64,
}

/// A body held, at the version it was read or written at.
#[derive(Debug)]
struct Held {
    etag: String,
    content: String,
}

impl FileCache {
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: HashMap::new(),
            bytes: 0,
            capacity,
            clock: 0,
        }
    }

    /// Whether `key` was ever read, written or found absent (and not
    /// evicted since).
    pub fn knows(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// What is known of `key` given what a listing just said of it:
    /// `Some(None)` when the listing has no such object, `Some(Some(body))`
    /// when the body held is the one at the listed etag, `None` when the
    /// body must be read.
    pub fn lookup(&self, key: &str, listed_etag: Option<&str>) -> Option<Option<&str>> {
        let Some(etag) = listed_etag else {
            return Some(None);
        };
        match &self.entries.get(key)?.body {
            Some(held) if held.etag == etag => Some(Some(held.content.as_str())),
            _ => None,
        }
    }

    /// The body of `key` if it is held at exactly `etag`.
    pub fn get(&self, key: &str, etag: &str) -> Option<&str> {
        self.lookup(key, Some(etag)).flatten()
    }

    /// Remembers `content` as `key` at `etag`, replacing what was there;
    /// a body larger than a sixteenth of the capacity is not kept (one
    /// large file must not push out a whole workspace).
    pub fn put(&mut self, key: &str, etag: &str, content: &str) {
        self.remove(key);
        if content.len() > self.capacity / 16 {
            return;
        }
        self.make_room(content.len());
        let held = Held {
            etag: etag.to_string(),
            content: content.to_string(),
        };
        self.insert(key, Some(held));
    }

    /// Remembers that `key` does not exist.
    pub fn put_absent(&mut self, key: &str) {
        self.remove(key);
        self.insert(key, None);
    }

    /// Bytes of bodies held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    fn insert(&mut self, key: &str, body: Option<Held>) {
        self.clock += 1;
        self.bytes += body.as_ref().map_or(0, |h| h.content.len());
        let inserted = self.clock;
        self.entries
            .insert(key.to_string(), Entry { body, inserted });
    }

    fn make_room(&mut self, len: usize) {
        while self.bytes + len > self.capacity {
            let oldest = self
                .entries
                .iter()
                .filter(|(_, e)| e.body.is_some())
                .min_by_key(|(_, e)| e.inserted)
                .map(|(k, _)| k.clone());
            match oldest {
                Some(k) => self.remove(&k),
                None => break,
            }
        }
    }

    fn remove(&mut self, key: &str) {
        if let Some(Entry {
            body: Some(held), ..
        }) = self.entries.remove(key)
        {
            self.bytes -= held.content.len();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_is_served_only_at_the_etag_it_was_read_at() {
        let mut cache = FileCache::new(1600);
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
    fn a_lookup_follows_the_listing() {
        let mut cache = FileCache::new(1600);
        cache.put("SOUL.md", "e1", "soul");
        cache.put_absent("USER.md");
        assert_eq!(
            [
                cache.lookup("SOUL.md", Some("e1")),
                cache.lookup("SOUL.md", Some("e2")),
                // Listed as gone: gone, whatever was held.
                cache.lookup("SOUL.md", None),
                cache.lookup("USER.md", None),
                // Created since it was found absent: read it.
                cache.lookup("USER.md", Some("e1")),
                cache.lookup("NEVER.md", Some("e1")),
                cache.lookup("NEVER.md", None),
            ],
            [
                Some(Some("soul")),
                None,
                Some(None),
                Some(None),
                None,
                None,
                Some(None)
            ]
        );
        assert_eq!(
            [
                cache.knows("SOUL.md"),
                cache.knows("USER.md"),
                cache.knows("NEVER.md")
            ],
            [true, true, false]
        );
    }

    #[test]
    fn the_oldest_bodies_go_first_when_full_and_absences_stay() {
        // 32 bytes: bodies of at most 2 bytes are kept.
        let mut cache = FileCache::new(32);
        cache.put_absent("gone");
        for i in 0..17 {
            cache.put(&format!("k{i}"), "1", "ab");
        }
        assert_eq!(
            (
                cache.knows("k0"),
                cache.get("k1", "1"),
                cache.get("k16", "1"),
                cache.knows("gone"),
                cache.bytes()
            ),
            (false, Some("ab"), Some("ab"), true, 32)
        );
        // Too large to keep: not kept, and what it replaced is gone too
        // (it is stale).
        cache.put("k1", "2", "abc");
        assert_eq!(
            (cache.knows("k1"), cache.get("k1", "1"), cache.bytes()),
            (false, None, 30)
        );
    }
}
