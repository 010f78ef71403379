//! Listings across pages, on top of `ObjectStore::list_page`.

use super::{ListPage, ListRequest, Listed, ListedObject, ObjectStore, StoreResult, Version};
use std::collections::HashMap;

/// The pages of `req`, each handed to `each`, which says whether to go
/// on; the number of pages (each one a dependent request).
async fn pages<S: ObjectStore + ?Sized>(
    store: &S,
    req: ListRequest<'_>,
    mut each: impl FnMut(ListPage) -> bool,
) -> StoreResult<u32> {
    let mut cursor: Option<String> = None;
    let mut count = 0;
    loop {
        let mut page = store.list_page(req, cursor.take()).await?;
        count += 1;
        let next = page.cursor.take();
        let go_on = each(page);
        match next {
            Some(c) if go_on => cursor = Some(c),
            _ => return Ok(count),
        }
    }
}

pub(super) async fn keys_and_prefixes<S: ObjectStore + ?Sized>(
    store: &S,
    prefix: &str,
    delimiter: Option<&str>,
) -> StoreResult<(Vec<String>, Vec<String>)> {
    let (mut keys, mut prefixes) = (Vec::new(), Vec::new());
    let req = ListRequest {
        prefix,
        delimiter,
        ..Default::default()
    };
    pages(store, req, |page| {
        keys.extend(page.objects.into_iter().map(|o| o.key));
        prefixes.extend(page.prefixes);
        true
    })
    .await?;
    Ok((keys, prefixes))
}

pub(super) async fn objects<S: ObjectStore + ?Sized>(
    store: &S,
    prefix: &str,
    delimiter: Option<&str>,
) -> StoreResult<(Listed, u32)> {
    let mut out = Vec::new();
    let req = ListRequest {
        prefix,
        delimiter,
        ..Default::default()
    };
    let count = pages(store, req, |page| {
        out.extend(page.objects.into_iter().map(listed));
        true
    })
    .await?;
    Ok((out, count))
}

pub(super) async fn window<S: ObjectStore + ?Sized>(
    store: &S,
    prefix: &str,
    start_after: &str,
    last: &str,
) -> StoreResult<(Listed, u32)> {
    let mut out = Vec::new();
    let req = ListRequest {
        prefix,
        start_after: Some(start_after),
        limit: Some(16),
        ..Default::default()
    };
    let count = pages(store, req, |page| {
        // Keys sort: once past `last`, later pages hold nothing wanted.
        let go_on = page.objects.last().is_none_or(|o| o.key.as_str() <= last);
        out.extend(
            page.objects
                .into_iter()
                .filter(|o| o.key.as_str() <= last)
                .map(listed),
        );
        go_on
    })
    .await?;
    Ok((out, count))
}

fn listed(o: ListedObject) -> (String, Version) {
    let version = Version {
        etag: o.etag,
        uploaded_ms: o.uploaded_ms,
    };
    (o.key, version)
}

pub(super) async fn with_metadata<S: ObjectStore + ?Sized>(
    store: &S,
    prefix: &str,
) -> StoreResult<Vec<(String, HashMap<String, String>)>> {
    let mut out = Vec::new();
    let req = ListRequest {
        prefix,
        custom_metadata: true,
        ..Default::default()
    };
    pages(store, req, |page| {
        out.extend(page.objects.into_iter().map(|o| (o.key, o.custom_metadata)));
        true
    })
    .await?;
    Ok(out)
}
