//! An in-memory `ObjectStore` for native tests: a sorted map like R2's
//! key order, etags that (like R2's MD5) depend only on the body, pages
//! of a chosen size so tests reach the paging paths, and a count of the
//! requests made so tests can check what a caller says it did.

use super::{
    ListPage, ListRequest, ListedObject, ObjectStore, StoreResult, StoredObject, TextCache, Version,
};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

/// R2's largest (and default) page.
const MAX_PAGE: usize = 1000;

#[derive(Debug, Clone)]
struct Object {
    body: Vec<u8>,
    etag: String,
    uploaded_ms: i64,
    custom_metadata: HashMap<String, String>,
}

/// Requests made, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Requests {
    pub gets: u32,
    pub puts: u32,
    pub heads: u32,
    pub deletes: u32,
    pub lists: u32,
}

#[derive(Debug)]
pub struct MemoryStore {
    objects: RefCell<BTreeMap<String, Object>>,
    texts: TextCache,
    page_size: usize,
    /// Stamped on each put as its upload time.
    now_ms: Cell<i64>,
    requests: Cell<Requests>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::with_page_size(MAX_PAGE)
    }
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// A store whose listings return at most `n` entries a page.
    pub fn with_page_size(n: usize) -> Self {
        Self {
            objects: RefCell::default(),
            texts: TextCache::default(),
            page_size: n.max(1),
            now_ms: Cell::new(0),
            requests: Cell::default(),
        }
    }

    /// The upload time of the puts from now on.
    pub fn set_now(&self, ms: i64) {
        self.now_ms.set(ms);
    }

    /// Stores `key` directly (no request counted, the cache untouched), as
    /// another isolate or an earlier test step would have.
    pub fn insert(&self, key: &str, body: &str) {
        self.insert_with_metadata(key, body.as_bytes(), HashMap::new());
    }

    /// `insert` of any bytes, with custom metadata (an archive's).
    pub fn insert_with_metadata(&self, key: &str, body: &[u8], meta: HashMap<String, String>) {
        let object = Object {
            body: body.to_vec(),
            etag: etag_of(body),
            uploaded_ms: self.now_ms.get(),
            custom_metadata: meta,
        };
        self.objects.borrow_mut().insert(key.to_string(), object);
    }

    /// The text of `key`, read directly (no request counted).
    pub fn text(&self, key: &str) -> Option<String> {
        let objects = self.objects.borrow();
        Some(String::from_utf8_lossy(&objects.get(key)?.body).into_owned())
    }

    /// Every key, in order.
    pub fn keys(&self) -> Vec<String> {
        self.objects.borrow().keys().cloned().collect()
    }

    /// The requests made so far.
    pub fn requests(&self) -> Requests {
        self.requests.get()
    }

    fn count(&self, f: impl FnOnce(&mut Requests)) {
        let mut r = self.requests.get();
        f(&mut r);
        self.requests.set(r);
    }
}

/// A hash of the body, so rewriting the same text keeps its etag (R2's is
/// its MD5).
fn etag_of(body: &[u8]) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    body.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// A listing's entry: an object, or a delimited prefix.
enum Entry {
    Object(ListedObject),
    Prefix(String),
}

impl ObjectStore for MemoryStore {
    fn texts(&self) -> &TextCache {
        &self.texts
    }

    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        self.count(|r| r.gets += 1);
        Ok(self.objects.borrow().get(key).map(|o| StoredObject {
            body: o.body.clone(),
            etag: o.etag.clone(),
            size: o.body.len() as u64,
            uploaded_ms: o.uploaded_ms,
        }))
    }

    async fn put(
        &self,
        key: &str,
        body: Vec<u8>,
        _content_type: &str,
    ) -> StoreResult<Option<Version>> {
        self.count(|r| r.puts += 1);
        let version = Version {
            etag: etag_of(&body),
            uploaded_ms: self.now_ms.get(),
        };
        let object = Object {
            body,
            etag: version.etag.clone(),
            uploaded_ms: version.uploaded_ms,
            custom_metadata: HashMap::new(),
        };
        self.objects.borrow_mut().insert(key.to_string(), object);
        Ok(Some(version))
    }

    async fn put_if_match(
        &self,
        key: &str,
        body: Vec<u8>,
        content_type: &str,
        expected: &str,
    ) -> StoreResult<Option<Version>> {
        let current = self.objects.borrow().get(key).map(|o| o.etag.clone());
        if current.as_deref() != Some(expected) {
            self.count(|r| r.puts += 1);
            return Ok(None);
        }
        self.put(key, body, content_type).await
    }

    async fn put_new(&self, key: &str, body: Vec<u8>, content_type: &str) -> StoreResult<bool> {
        if self.objects.borrow().contains_key(key) {
            self.count(|r| r.puts += 1);
            return Ok(false);
        }
        self.put(key, body, content_type).await?;
        Ok(true)
    }

    async fn exists(&self, key: &str) -> StoreResult<bool> {
        self.count(|r| r.heads += 1);
        Ok(self.objects.borrow().contains_key(key))
    }

    async fn remove(&self, key: &str) -> StoreResult<()> {
        self.count(|r| r.deletes += 1);
        self.objects.borrow_mut().remove(key);
        Ok(())
    }

    /// The cursor is the index of the page's first entry in the whole
    /// listing (which is recomputed: tests do not write between pages).
    async fn list_page(
        &self,
        req: ListRequest<'_>,
        cursor: Option<String>,
    ) -> StoreResult<ListPage> {
        self.count(|r| r.lists += 1);
        let objects = self.objects.borrow();
        let mut entries: Vec<Entry> = Vec::new();
        let after = |k: &str| req.start_after.is_none_or(|s| k > s);
        for (key, o) in objects.range(req.prefix.to_string()..) {
            let Some(rest) = key.strip_prefix(req.prefix) else {
                break;
            };
            if !after(key) {
                continue;
            }
            let group = req
                .delimiter
                .and_then(|d| rest.find(d).map(|i| &key[..req.prefix.len() + i + d.len()]));
            match group {
                Some(p) => {
                    if !matches!(entries.last(), Some(Entry::Prefix(q)) if q == p) {
                        entries.push(Entry::Prefix(p.to_string()));
                    }
                }
                None => entries.push(Entry::Object(ListedObject {
                    key: key.clone(),
                    etag: o.etag.clone(),
                    uploaded_ms: o.uploaded_ms,
                    custom_metadata: match req.custom_metadata {
                        true => o.custom_metadata.clone(),
                        false => HashMap::new(),
                    },
                })),
            }
        }
        let start: usize = cursor.and_then(|c| c.parse().ok()).unwrap_or(0);
        let limit = req
            .limit
            .map_or(MAX_PAGE, |l| l as usize)
            .min(self.page_size);
        let end = (start + limit).min(entries.len());
        let mut page = ListPage {
            cursor: (end < entries.len()).then(|| end.to_string()),
            ..Default::default()
        };
        for e in entries.drain(start.min(end)..end) {
            match e {
                Entry::Object(o) => page.objects.push(o),
                Entry::Prefix(p) => page.prefixes.push(p),
            }
        }
        Ok(page)
    }
}
