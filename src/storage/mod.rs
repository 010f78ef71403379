//! Object storage behind a small trait, so the code that reads and writes
//! the workspace (prompt loading, the workspace methods and tools,
//! `session_logs`) is tested natively against [`MemoryStore`] instead of
//! only under workerd, where R2 implements it (`worker/r2.rs`).
//!
//! An implementation gives the primitives (one request each: get, put,
//! head, delete, one listing page). The provided methods build on them
//! what the callers use: whole-text reads and writes that keep the text
//! cache current ([`TextCache`]), and listings across pages, each of which
//! also says how many pages it took (a run's `WorkspaceLoadStats`).
//!
//! Futures are `!Send` on wasm, hence `async fn` in the trait and generic
//! callers (`S: ObjectStore`), never `dyn`.

pub mod file_cache;
mod list;
mod listings;
mod memory;
/// Content type for an R2 key or file name, by extension.
pub fn content_type_of(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md") => "text/markdown; charset=utf-8",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "text/yaml; charset=utf-8",
        _ => "text/plain; charset=utf-8",
    }
}

#[cfg(test)]
mod tests;
mod text_cache;

pub use listings::{
    list_or_reuse, top_level_listing, tree_listing, Listed, Listing, ListingCost, Reuse,
};
pub use memory::{MemoryStore, Requests};
pub use text_cache::TextCache;

use std::collections::HashMap;

/// A failed store request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// The storage service failed; its message, as it gave it.
    Backend(String),
    /// An object read as text is not UTF-8.
    NotText(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Backend(m) | Self::NotText(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for StoreError {}

pub type StoreResult<T> = Result<T, StoreError>;

/// An object as read: its bytes and what the store says of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredObject {
    pub body: Vec<u8>,
    pub etag: String,
    pub size: u64,
    pub uploaded_ms: i64,
}

/// The version a put stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub etag: String,
    pub uploaded_ms: i64,
}

/// A text object as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextObject {
    pub content: String,
    pub size: u64,
    pub uploaded_ms: i64,
    /// The version read (what a conditional write names).
    pub etag: String,
}

/// One listing request: the keys under `prefix`, after `start_after`,
/// grouped at `delimiter`, at most `limit` a page.
#[derive(Debug, Clone, Copy, Default)]
pub struct ListRequest<'a> {
    pub prefix: &'a str,
    pub delimiter: Option<&'a str>,
    pub start_after: Option<&'a str>,
    pub limit: Option<u32>,
    /// Whether each listed object carries its custom metadata.
    pub custom_metadata: bool,
}

/// An object as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedObject {
    pub key: String,
    pub etag: String,
    /// When this version was uploaded (ms since the epoch).
    pub uploaded_ms: i64,
    /// Empty unless the listing asked for it.
    pub custom_metadata: HashMap<String, String>,
}

/// One page of a listing.
#[derive(Debug, Clone, Default)]
pub struct ListPage {
    pub objects: Vec<ListedObject>,
    /// The delimited prefixes (with a delimiter only).
    pub prefixes: Vec<String>,
    /// Where the next page starts; `None` on the last page.
    pub cursor: Option<String>,
}

#[allow(async_fn_in_trait)]
pub trait ObjectStore {
    /// The text cache and write counter this store's text reads and writes
    /// keep current (R2's is shared by the whole isolate).
    fn texts(&self) -> &TextCache;

    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>>;
    /// Stores `body` as `key`; the new version (`None`: a conditional put
    /// that did not happen).
    async fn put(
        &self,
        key: &str,
        body: Vec<u8>,
        content_type: &str,
    ) -> StoreResult<Option<Version>>;
    /// Stores `body` as `key` only if `key` exists at etag `expected`,
    /// in one request (so no write can slip in between a check and the
    /// put); the new version, or `None` when the condition failed.
    async fn put_if_match(
        &self,
        key: &str,
        body: Vec<u8>,
        content_type: &str,
        expected: &str,
    ) -> StoreResult<Option<Version>>;
    /// Stores `body` as `key` only if no object has that key; whether it
    /// did (atomic in the store: of two racing creators, one wins).
    async fn put_new(&self, key: &str, body: Vec<u8>, content_type: &str) -> StoreResult<bool>;
    async fn exists(&self, key: &str) -> StoreResult<bool>;
    async fn remove(&self, key: &str) -> StoreResult<()>;
    /// One page of `req`, from `cursor` (a previous page's) if any.
    async fn list_page(
        &self,
        req: ListRequest<'_>,
        cursor: Option<String>,
    ) -> StoreResult<ListPage>;

    /// Reads `key` as text, remembering the body (or its absence).
    async fn read_text(&self, key: &str) -> StoreResult<Option<TextObject>> {
        let Some(object) = self.get(key).await? else {
            self.texts().remember_absent(key);
            return Ok(None);
        };
        let content =
            String::from_utf8(object.body).map_err(|e| StoreError::NotText(e.to_string()))?;
        let text = TextObject {
            content,
            size: object.size,
            uploaded_ms: object.uploaded_ms,
            etag: object.etag,
        };
        self.texts().remember_read(key, &text);
        Ok(Some(text))
    }

    /// Writes `content` as `key` with the content type its name implies;
    /// the new etag (`None` only if the store did not say).
    async fn write_text(&self, key: &str, content: &str) -> StoreResult<Option<String>> {
        let version = self
            .put(key, content.as_bytes().to_vec(), content_type_of(key))
            .await?;
        // No version only for a conditional put; the cache is checked by
        // etag anyway, so the stale body left there is never served.
        match &version {
            Some(v) => self.texts().remember_write(key, Some((v, content))),
            None => self.texts().count_write(),
        }
        Ok(version.map(|v| v.etag))
    }

    /// [`Self::write_text`] only over version `expected` of `key`: the new
    /// etag, or `None` (nothing written) when `key` is at another version
    /// or gone.
    async fn write_text_if_match(
        &self,
        key: &str,
        content: &str,
        expected: &str,
    ) -> StoreResult<Option<String>> {
        let version = self
            .put_if_match(
                key,
                content.as_bytes().to_vec(),
                content_type_of(key),
                expected,
            )
            .await?;
        if let Some(v) = &version {
            self.texts().remember_write(key, Some((v, content)));
        }
        Ok(version.map(|v| v.etag))
    }

    /// Whether the key existed (and is now gone).
    async fn delete(&self, key: &str) -> StoreResult<bool> {
        if !self.exists(key).await? {
            self.texts().remember_absent(key);
            return Ok(false);
        }
        self.remove(key).await?;
        self.texts().remember_write(key, None);
        Ok(true)
    }

    /// Every key and delimited prefix under `prefix`, across pages.
    async fn list(
        &self,
        prefix: &str,
        delimiter: Option<&str>,
    ) -> StoreResult<(Vec<String>, Vec<String>)> {
        list::keys_and_prefixes(self, prefix, delimiter).await
    }

    /// Every object under `prefix` (only the top level of it with a
    /// delimiter) as `(key, version)`, across pages, and the number of pages.
    async fn list_objects(
        &self,
        prefix: &str,
        delimiter: Option<&str>,
    ) -> StoreResult<(Listed, u32)> {
        list::objects(self, prefix, delimiter).await
    }

    /// The objects under `prefix` with keys after `start_after` up to
    /// `last` (inclusive) as `(key, version)`, and the number of pages: a
    /// small window of a prefix that may hold many keys (the daily memory
    /// files).
    async fn list_window(
        &self,
        prefix: &str,
        start_after: &str,
        last: &str,
    ) -> StoreResult<(Listed, u32)> {
        list::window(self, prefix, start_after, last).await
    }

    /// Every key under `prefix` with its custom metadata, across pages:
    /// one listing instead of a `head` per object.
    async fn list_with_metadata(
        &self,
        prefix: &str,
    ) -> StoreResult<Vec<(String, HashMap<String, String>)>> {
        list::with_metadata(self, prefix).await
    }
}
