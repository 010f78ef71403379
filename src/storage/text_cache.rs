//! The text cache a store's text reads and writes keep current, and the
//! count of its writes: a run then needs only listings to know which
//! bodies it already has (see `FileCache`), and a prompt assembled before
//! the last write may be stale.

use super::listings::{Listed, Listings, Reuse};
use crate::workspace::file_cache::{FileCache, DEFAULT_CAPACITY};
use std::cell::{Cell, RefCell};

#[derive(Debug)]
pub struct TextCache {
    files: RefCell<FileCache>,
    /// Text writes and deletes made so far.
    writes: Cell<u64>,
    /// Listings taken for prompts, for the isolate's other runs.
    listings: RefCell<Listings>,
}

impl Default for TextCache {
    fn default() -> Self {
        Self::new(DEFAULT_CAPACITY)
    }
}

impl TextCache {
    pub fn new(capacity: usize) -> Self {
        Self {
            files: RefCell::new(FileCache::new(capacity)),
            writes: Cell::new(0),
            listings: RefCell::default(),
        }
    }

    /// How many text writes and deletes went through this cache.
    pub fn writes(&self) -> u64 {
        self.writes.get()
    }

    /// Whether `key` was read, written or found absent here.
    pub fn knows(&self, key: &str) -> bool {
        self.files.borrow().knows(key)
    }

    /// What the cache holds of `key` given a listing's etag for it
    /// (`None`: not listed): see `FileCache::lookup`.
    pub fn cached_text(&self, key: &str, listed_etag: Option<&str>) -> Option<Option<String>> {
        self.files
            .borrow()
            .lookup(key, listed_etag)
            .map(|body| body.map(str::to_string))
    }

    /// Remembers `key`'s body at an etag (`None`: absent).
    pub fn remember(&self, key: &str, body: Option<(&str, &str)>) {
        let mut files = self.files.borrow_mut();
        match body {
            Some((etag, content)) => files.put(key, etag, content),
            None => files.put_absent(key),
        }
    }

    /// `remember` for a write or delete made here.
    pub fn remember_write(&self, key: &str, body: Option<(&str, &str)>) {
        self.count_write();
        self.remember(key, body);
    }

    /// The listing of `key` another run took, when it may stand for a
    /// new one (see `Listings`).
    pub fn listed(&self, key: &str, reuse: &Reuse) -> Option<(Listed, u64)> {
        self.listings.borrow().get(key, reuse, self.writes())
    }

    /// Keeps a listing taken for `reuse`.
    pub fn keep_listing(&self, key: String, objects: &Listed, reuse: &Reuse) {
        self.listings.borrow_mut().keep(key, objects, reuse);
    }

    /// Counts a write whose result is not remembered.
    pub fn count_write(&self) {
        self.writes.set(self.writes.get() + 1);
    }
}
