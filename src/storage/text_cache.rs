//! The text cache a store's text reads and writes keep current, and the
//! count of its writes: a run then needs only listings to know which
//! bodies it already has (see `FileCache`), and a prompt assembled before
//! the last write may be stale.

use super::listings::{Listed, Listings, Reuse};
use super::{TextObject, Version};
use crate::storage::file_cache::{FileCache, DEFAULT_CAPACITY};
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

    /// Remembers that `key` does not exist.
    pub fn remember_absent(&self, key: &str) {
        self.files.borrow_mut().put_absent(key);
    }

    /// Remembers a version of `key` as it was read.
    pub fn remember_read(&self, key: &str, object: &TextObject) {
        let mut files = self.files.borrow_mut();
        files.put(key, &object.etag, &object.content);
    }

    /// `key` as a listing kept for a prompt says it is, without a store
    /// request: `listing` is the one that lists it, and it must still be
    /// able to stand for a new one under `reuse` (so `key` is seen as a
    /// run's prompt sees it). `Some(None)`: not in that listing. `None`:
    /// no such listing, or the body at its etag was never read here.
    pub fn as_listed(&self, key: &str, listing: &str, reuse: &Reuse) -> Option<Option<TextObject>> {
        let listings = self.listings.borrow();
        let Some(listed) = listings.version_of(listing, key, reuse, self.writes())? else {
            return Some(None);
        };
        let files = self.files.borrow();
        let content = files.get(key, &listed.etag)?;
        // The listing's upload time: the same content put again keeps its
        // etag but is a new version, uploaded later than the body held.
        Some(Some(TextObject {
            content: content.to_string(),
            size: content.len() as u64,
            uploaded_ms: listed.uploaded_ms,
            etag: listed.etag.clone(),
        }))
    }

    /// Remembers a write (the version stored, and its body) or a delete
    /// made here.
    pub fn remember_write(&self, key: &str, body: Option<(&Version, &str)>) {
        self.count_write();
        let mut files = self.files.borrow_mut();
        match body {
            Some((v, content)) => files.put(key, &v.etag, content),
            None => files.put_absent(key),
        }
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
