//! R2 access for the workspace: whole-text reads and writes, paginated
//! listings with a delimiter, deletes.

use crate::selfreport::content_type_of;
use worker::{Bucket, HttpMetadata, ListOptionsBuilder, Objects, Result};

/// A text object as read.
pub struct TextObject {
    pub content: String,
    pub size: u64,
    pub uploaded_ms: i64,
}

pub async fn read_text(bucket: &Bucket, key: impl Into<String>) -> Result<Option<TextObject>> {
    let Some(object) = bucket.get(key.into()).execute().await? else {
        return Ok(None);
    };
    let size = object.size();
    let uploaded_ms = object.uploaded().as_millis() as i64;
    let content = match object.body() {
        Some(body) => body.text().await?,
        None => String::new(),
    };
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
    bucket
        .put(key, content.as_bytes().to_vec())
        .http_metadata(metadata)
        .execute()
        .await?;
    Ok(())
}

/// Whether the key existed (and is now gone).
pub async fn delete(bucket: &Bucket, key: &str) -> Result<bool> {
    if bucket.head(key).await?.is_none() {
        return Ok(false);
    }
    bucket.delete(key).await?;
    Ok(true)
}

/// Every page of a listing of `prefix` (the request shaped by `options`),
/// each handed to `each`; the number of pages (each one a dependent
/// request).
async fn pages<'b>(
    bucket: &'b Bucket,
    prefix: &str,
    options: impl Fn(ListOptionsBuilder<'b>) -> ListOptionsBuilder<'b>,
    mut each: impl FnMut(&Objects),
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
        each(&page);
        match (page.truncated(), page.cursor()) {
            (true, Some(c)) => cursor = Some(c),
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
    let options = |req| match delimiter {
        Some(d) => ListOptionsBuilder::delimiter(req, d),
        None => req,
    };
    pages(bucket, prefix, options, |page| {
        keys.extend(page.objects().iter().map(|o| o.key()));
        prefixes.extend(page.delimited_prefixes());
    })
    .await?;
    Ok((keys, prefixes))
}

/// Every object under `prefix` as `(key, etag)`, across pages, and the
/// number of pages.
pub async fn list_objects(bucket: &Bucket, prefix: &str) -> Result<(Vec<(String, String)>, u32)> {
    let mut out = Vec::new();
    let count = pages(
        bucket,
        prefix,
        |req| req,
        |page| {
            out.extend(page.objects().iter().map(|o| (o.key(), o.etag())));
        },
    )
    .await?;
    Ok((out, count))
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
    })
    .await?;
    Ok(out)
}
