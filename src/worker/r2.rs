//! R2 as an `ObjectStore` (`crate::storage`): each primitive is one R2
//! request. The text cache is the isolate's, shared by every object of it:
//! listings' etags say which bodies are still current.
//!
//! The free functions keep the shape the objects' call sites use.

pub use crate::storage::TextObject;
use crate::storage::{
    ListPage, ListRequest, ListedObject, ObjectStore, StoreError, StoreResult, StoredObject,
    TextCache, Version,
};
use worker::{Bucket, Conditional, HttpMetadata, Include, Result};

thread_local! {
    /// Leaked once per isolate (which never ends before its objects do),
    /// so `texts()` can lend it to every store of the isolate.
    static TEXTS: &'static TextCache = Box::leak(Box::default());
}

fn backend(e: worker::Error) -> StoreError {
    StoreError::Backend(e.to_string())
}

impl From<StoreError> for worker::Error {
    fn from(e: StoreError) -> Self {
        worker::Error::RustError(e.to_string())
    }
}

impl ObjectStore for Bucket {
    fn texts(&self) -> &TextCache {
        TEXTS.with(|t| *t)
    }

    async fn get(&self, key: &str) -> StoreResult<Option<StoredObject>> {
        let Some(object) = self.get(key).execute().await.map_err(backend)? else {
            return Ok(None);
        };
        let body = match object.body() {
            Some(body) => body.bytes().await.map_err(backend)?,
            None => Vec::new(),
        };
        Ok(Some(StoredObject {
            body,
            etag: object.etag(),
            size: object.size(),
            uploaded_ms: object.uploaded().as_millis() as i64,
        }))
    }

    async fn put(
        &self,
        key: &str,
        body: Vec<u8>,
        content_type: &str,
    ) -> StoreResult<Option<Version>> {
        put_with(self, key, body, content_type, None).await
    }

    async fn put_if_match(
        &self,
        key: &str,
        body: Vec<u8>,
        content_type: &str,
        expected: &str,
    ) -> StoreResult<Option<Version>> {
        let only_if = Conditional {
            etag_matches: Some(expected.to_string()),
            ..Default::default()
        };
        // R2 answers a failed condition with no object (a missing key
        // fails it too).
        put_with(self, key, body, content_type, Some(only_if)).await
    }

    /// R2's conditional put: `etagDoesNotMatch: "*"` holds only while no
    /// object has the key; a put refused by it answers no object.
    async fn put_new(&self, key: &str, body: Vec<u8>, content_type: &str) -> StoreResult<bool> {
        let only_if = Conditional {
            etag_does_not_match: Some("*".into()),
            ..Default::default()
        };
        let stored = put_with(self, key, body, content_type, Some(only_if)).await?;
        Ok(stored.is_some())
    }

    async fn exists(&self, key: &str) -> StoreResult<bool> {
        Ok(self.head(key).await.map_err(backend)?.is_some())
    }

    async fn remove(&self, key: &str) -> StoreResult<()> {
        Bucket::delete(self, key).await.map_err(backend)?;
        wrote(self, key);
        Ok(())
    }

    async fn list_page(
        &self,
        req: ListRequest<'_>,
        cursor: Option<String>,
    ) -> StoreResult<ListPage> {
        let mut list = self.list().prefix(req.prefix);
        if let Some(d) = req.delimiter {
            list = list.delimiter(d);
        }
        if let Some(s) = req.start_after {
            list = list.start_after(s);
        }
        if let Some(l) = req.limit {
            list = list.limit(l);
        }
        if req.custom_metadata {
            list = list.include(vec![Include::CustomMetadata]);
        }
        if let Some(c) = cursor {
            list = list.cursor(c);
        }
        let page = list.execute().await.map_err(backend)?;
        let objects = page
            .objects()
            .iter()
            .map(|o| ListedObject {
                key: o.key(),
                etag: o.etag(),
                uploaded_ms: o.uploaded().as_millis() as i64,
                custom_metadata: match req.custom_metadata {
                    true => o.custom_metadata().unwrap_or_default(),
                    false => Default::default(),
                },
            })
            .collect();
        Ok(ListPage {
            objects,
            prefixes: page.delimited_prefixes(),
            cursor: page.cursor().filter(|_| page.truncated()),
        })
    }
}

/// One R2 put with its content type, under `only_if` when given: the new
/// version, or `None` when the condition failed (nothing written). A write
/// made is counted (`wrote`).
async fn put_with(
    bucket: &Bucket,
    key: &str,
    body: Vec<u8>,
    content_type: &str,
    only_if: Option<Conditional>,
) -> StoreResult<Option<Version>> {
    let metadata = HttpMetadata {
        content_type: Some(content_type.into()),
        ..Default::default()
    };
    let conditional = only_if.is_some();
    let mut put = Bucket::put(bucket, key, body).http_metadata(metadata);
    if let Some(only_if) = only_if {
        put = put.only_if(only_if);
    }
    let object = put.execute().await.map_err(backend)?;
    if object.is_some() || !conditional {
        wrote(bucket, key);
    }
    Ok(object.map(|o| Version {
        etag: o.etag(),
        uploaded_ms: o.uploaded().as_millis() as i64,
    }))
}

/// Counts a write or delete of a key a prompt may be made of (an agent's
/// workspace or skills, the global skills; not archives, memory nodes or
/// media), whatever its content type.
pub fn wrote(bucket: &Bucket, key: &str) {
    let agent_file = key.starts_with("agents/") && !key.contains("/sessions/");
    if agent_file || key.starts_with(crate::workspace::paths::GLOBAL_SKILLS_PREFIX) {
        bucket.texts().count_write();
    }
}

/// How many text writes and deletes this isolate has made: a prompt
/// assembled before the last of them may be stale.
pub fn writes() -> u64 {
    TEXTS.with(|t| t.writes())
}

pub async fn read_text(bucket: &Bucket, key: impl Into<String>) -> Result<Option<TextObject>> {
    Ok(bucket.read_text(&key.into()).await?)
}

pub async fn write_text(bucket: &Bucket, key: impl Into<String>, content: &str) -> Result<()> {
    bucket.write_text(&key.into(), content).await?;
    Ok(())
}

/// Every key and delimited prefix under `prefix`, across pages.
pub async fn list(
    bucket: &Bucket,
    prefix: &str,
    delimiter: Option<&str>,
) -> Result<(Vec<String>, Vec<String>)> {
    Ok(ObjectStore::list(bucket, prefix, delimiter).await?)
}
