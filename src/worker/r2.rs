//! R2 access for the workspace: whole-text reads and writes, paginated
//! listings with a delimiter, deletes. Every text read, write and delete
//! keeps the isolate's text cache current (see `FileCache`): a run then
//! needs only listings to know which bodies it already has.

use crate::selfreport::content_type_of;
use crate::workspace::file_cache::{FileCache, DEFAULT_CAPACITY};
use std::cell::RefCell;
use worker::{Bucket, HttpMetadata, ListOptionsBuilder, Objects, Result};

thread_local! {
    /// Shared by every object of this isolate; listings' etags say which
    /// bodies are still current.
    static TEXTS: RefCell<FileCache> = RefCell::new(FileCache::new(DEFAULT_CAPACITY));
    /// Text writes and deletes made by this isolate so far.
    static WRITES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many text writes and deletes this isolate has made: a prompt
/// assembled before the last of them may be stale.
pub fn writes() -> u64 {
    WRITES.with(|w| w.get())
}

/// Whether this isolate has read, written or found absent `key`.
pub fn cache_knows(key: &str) -> bool {
    TEXTS.with(|c| c.borrow().knows(key))
}

/// What the cache holds of `key` given a listing's etag for it (`None`:
/// not listed): see `FileCache::lookup`.
pub fn cached_text(key: &str, listed_etag: Option<&str>) -> Option<Option<String>> {
    TEXTS.with(|c| {
        c.borrow()
            .lookup(key, listed_etag)
            .map(|body| body.map(str::to_string))
    })
}

fn remember(key: &str, body: Option<(&str, &str)>) {
    TEXTS.with(|c| match body {
        Some((etag, content)) => c.borrow_mut().put(key, etag, content),
        None => c.borrow_mut().put_absent(key),
    });
}

/// `remember` for a write or delete this isolate made.
fn remember_write(key: &str, body: Option<(&str, &str)>) {
    WRITES.with(|w| w.set(w.get() + 1));
    remember(key, body);
}

/// A text object as read.
pub struct TextObject {
    pub content: String,
    pub size: u64,
    pub uploaded_ms: i64,
}

pub async fn read_text(bucket: &Bucket, key: impl Into<String>) -> Result<Option<TextObject>> {
    let key = key.into();
    let Some(object) = bucket.get(&key).execute().await? else {
        remember(&key, None);
        return Ok(None);
    };
    let size = object.size();
    let uploaded_ms = object.uploaded().as_millis() as i64;
    let content = match object.body() {
        Some(body) => body.text().await?,
        None => String::new(),
    };
    remember(&key, Some((&object.etag(), &content)));
    Ok(Some(TextObject {
        content,
        size,
        uploaded_ms,
    }))
}

pub async fn write_text(bucket: &Bucket, key: impl Into<String>, content: &str) -> Result<()> {
    let key = key.into();
    let metadata = HttpMetadata {
        content_type: Some(content_type_of(&key).into()),
        ..Default::default()
    };
    let object = bucket
        .put(&key, content.as_bytes().to_vec())
        .http_metadata(metadata)
        .execute()
        .await?;
    // No object only for a conditional put; the cache is checked by etag
    // anyway, so the stale body left there is never served.
    match object {
        Some(object) => remember_write(&key, Some((&object.etag(), content))),
        None => WRITES.with(|w| w.set(w.get() + 1)),
    }
    Ok(())
}

/// Whether the key existed (and is now gone).
pub async fn delete(bucket: &Bucket, key: &str) -> Result<bool> {
    if bucket.head(key).await?.is_none() {
        remember(key, None);
        return Ok(false);
    }
    bucket.delete(key).await?;
    remember_write(key, None);
    Ok(true)
}

/// The pages of a listing of `prefix` (the request shaped by `options`),
/// each handed to `each`, which says whether to go on; the number of pages
/// (each one a dependent request).
async fn pages<'b>(
    bucket: &'b Bucket,
    prefix: &str,
    options: impl Fn(ListOptionsBuilder<'b>) -> ListOptionsBuilder<'b>,
    mut each: impl FnMut(&Objects) -> bool,
) -> Result<u32> {
    let mut cursor: Option<String> = None;
    let mut count = 0;
    loop {
        let mut req = options(bucket.list().prefix(prefix));
        if let Some(c) = cursor.take() {
            req = req.cursor(c);
        }
        let page = req.execute().await?;
        count += 1;
        let go_on = each(&page);
        match (page.truncated(), page.cursor()) {
            (true, Some(c)) if go_on => cursor = Some(c),
            _ => return Ok(count),
        }
    }
}

/// Every key and delimited prefix under `prefix`, across pages.
pub async fn list(
    bucket: &Bucket,
    prefix: &str,
    delimiter: Option<&str>,
) -> Result<(Vec<String>, Vec<String>)> {
    let (mut keys, mut prefixes) = (Vec::new(), Vec::new());
    pages(bucket, prefix, delimited(delimiter), |page| {
        keys.extend(page.objects().iter().map(|o| o.key()));
        prefixes.extend(page.delimited_prefixes());
        true
    })
    .await?;
    Ok((keys, prefixes))
}

/// Every object under `prefix` (only the top level of it with a
/// delimiter) as `(key, etag)`, across pages, and the number of pages.
pub async fn list_objects(
    bucket: &Bucket,
    prefix: &str,
    delimiter: Option<&str>,
) -> Result<(Vec<(String, String)>, u32)> {
    let mut out = Vec::new();
    let count = pages(bucket, prefix, delimited(delimiter), |page| {
        out.extend(page.objects().iter().map(|o| (o.key(), o.etag())));
        true
    })
    .await?;
    Ok((out, count))
}

/// The objects under `prefix` with keys after `start_after` up to `last`
/// (inclusive) as `(key, etag)`, and the number of pages: a small window
/// of a prefix that may hold many keys (the daily memory files).
pub async fn list_window<'b>(
    bucket: &'b Bucket,
    prefix: &str,
    start_after: &str,
    last: &str,
) -> Result<(Vec<(String, String)>, u32)> {
    let mut out = Vec::new();
    let options = |req: ListOptionsBuilder<'b>| req.start_after(start_after).limit(16);
    let count = pages(bucket, prefix, options, |page| {
        let objects = page.objects();
        out.extend(
            objects
                .iter()
                .map(|o| (o.key(), o.etag()))
                .filter(|(k, _)| k.as_str() <= last),
        );
        // Keys sort: once past `last`, later pages hold nothing wanted.
        objects.last().is_none_or(|o| o.key().as_str() <= last)
    })
    .await?;
    Ok((out, count))
}

/// A listing's options with `delimiter`, if any.
fn delimited<'b>(
    delimiter: Option<&str>,
) -> impl Fn(ListOptionsBuilder<'b>) -> ListOptionsBuilder<'b> + '_ {
    move |req| match delimiter {
        Some(d) => req.delimiter(d),
        None => req,
    }
}

/// Every key under `prefix` with its custom metadata, across pages: one
/// listing instead of a `head` per object.
pub async fn list_with_metadata(
    bucket: &Bucket,
    prefix: &str,
) -> Result<Vec<(String, std::collections::HashMap<String, String>)>> {
    let mut out = Vec::new();
    let options = |req| ListOptionsBuilder::include(req, vec![worker::Include::CustomMetadata]);
    pages(bucket, prefix, options, |page| {
        for o in page.objects() {
            out.push((o.key(), o.custom_metadata().unwrap_or_default()));
        }
        true
    })
    .await?;
    Ok(out)
}
