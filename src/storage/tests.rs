//! The provided methods of `ObjectStore` over `MemoryStore`: text reads
//! and writes keep the cache and the write count, listings go across
//! pages and count them.

use super::*;
use futures::executor::block_on;
use memory::Requests;

#[test]
fn texts_round_trip_through_the_cache() {
    let store = MemoryStore::new();
    store.set_now(1_700);
    block_on(async {
        assert_eq!(store.read_text("a/x.md").await, Ok(None));
        assert!(store.texts().knows("a/x.md"));
        let written = store.write_text("a/x.md", "hello").await.unwrap();
        assert_eq!(
            store.read_text("a/x.md").await,
            Ok(Some(TextObject {
                content: "hello".into(),
                size: 5,
                uploaded_ms: 1_700,
                etag: written.unwrap(),
            }))
        );
        let (listed, pages) = store.list_objects("a/", None).await.unwrap();
        assert_eq!(pages, 1);
        let etag = listed[0].1.etag.as_str();
        assert_eq!(
            store.texts().cached_text("a/x.md", Some(etag)),
            Some(Some("hello".into()))
        );
        // Another writer: a new etag, and the cache no longer answers.
        store.insert("a/x.md", "changed");
        let (listed, _) = store.list_objects("a/", None).await.unwrap();
        assert_eq!(
            store.texts().cached_text("a/x.md", Some(&listed[0].1.etag)),
            None
        );
        assert_eq!(store.delete("a/x.md").await, Ok(true));
        assert_eq!(store.delete("a/x.md").await, Ok(false));
        assert_eq!(store.texts().cached_text("a/x.md", None), Some(None));
    });
    // The write and the first delete count; the missed delete does not.
    assert_eq!(store.texts().writes(), 2);
    assert_eq!(
        store.requests(),
        Requests {
            gets: 2,
            puts: 1,
            heads: 2,
            deletes: 1,
            lists: 2
        }
    );
}

#[test]
fn not_utf8_is_a_typed_error() {
    let store = MemoryStore::new();
    block_on(async {
        store
            .put("bin", vec![0xff, 0xfe], "application/octet-stream")
            .await
            .unwrap();
        assert!(matches!(
            store.read_text("bin").await,
            Err(StoreError::NotText(_))
        ));
    });
}

fn store_of(keys: &[&str], page: usize) -> MemoryStore {
    let store = MemoryStore::with_page_size(page);
    for k in keys {
        store.insert(k, k);
    }
    store
}

#[test]
fn delimited_listings_gather_pages() {
    let store = store_of(
        &[
            "a/1.md", "a/2.md", "a/d/x", "a/d/y", "a/e/z", "a/f.md", "b/no",
        ],
        2,
    );
    let listed = block_on(store.list("a/", Some("/"))).unwrap();
    assert_eq!(
        listed,
        (
            vec!["a/1.md".into(), "a/2.md".into(), "a/f.md".into()],
            vec!["a/d/".into(), "a/e/".into()]
        )
    );
    // Five entries, two a page.
    assert_eq!(store.requests().lists, 3);
    let (objects, pages) = block_on(store.list_objects("a/", None)).unwrap();
    let keys: Vec<&str> = objects.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        (keys, pages),
        (
            vec!["a/1.md", "a/2.md", "a/d/x", "a/d/y", "a/e/z", "a/f.md"],
            3
        )
    );
}

#[test]
fn windows_stop_at_their_last_key() {
    let days: Vec<String> = (1..=40).map(|d| format!("m/2024-01-{d:02}.md")).collect();
    let keys: Vec<&str> = days.iter().map(String::as_str).collect();
    let store = store_of(&keys, 1000);
    // Sixteen a page: the window's two keys are on the first.
    let (objects, pages) =
        block_on(store.list_window("m/", "m/2024-01-09.md", "m/2024-01-11.md")).unwrap();
    let keys: Vec<&str> = objects.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        (keys, pages),
        (vec!["m/2024-01-10.md", "m/2024-01-11.md"], 1)
    );
    // Ending beyond the first page: a second one, and no third.
    let (objects, pages) =
        block_on(store.list_window("m/", "m/2024-01-00.md", "m/2024-01-17.md")).unwrap();
    assert_eq!((objects.len(), pages), (17, 2));
}

#[test]
fn listings_carry_custom_metadata_when_asked() {
    let store = MemoryStore::new();
    let meta = HashMap::from([("sessionId".to_string(), "s1".to_string())]);
    store.insert_with_metadata("p/s1.jsonl.gz", b"", meta.clone());
    store.insert("p/notes", "");
    assert_eq!(
        block_on(store.list_with_metadata("p/")).unwrap(),
        vec![
            ("p/notes".to_string(), HashMap::new()),
            ("p/s1.jsonl.gz".to_string(), meta)
        ]
    );
}

#[test]
fn a_conditional_write_replaces_only_the_version_read() {
    let store = MemoryStore::new();
    block_on(async {
        let v1 = store.write_text("a/x.md", "one").await.unwrap().unwrap();
        // Written over the version read: a new version.
        let v2 = store
            .write_text_if_match("a/x.md", "two", &v1)
            .await
            .unwrap();
        let v2 = v2.expect("written over v1");
        assert_ne!(v2, v1);
        assert_eq!(store.text("a/x.md").as_deref(), Some("two"));
        // Someone else's write came first: nothing written.
        store.insert("a/x.md", "theirs");
        assert_eq!(
            store.write_text_if_match("a/x.md", "mine", &v2).await,
            Ok(None)
        );
        assert_eq!(store.text("a/x.md").as_deref(), Some("theirs"));
        // A deleted file is not at any version.
        let current = store.read_text("a/x.md").await.unwrap().unwrap().etag;
        store.delete("a/x.md").await.unwrap();
        assert_eq!(
            store.write_text_if_match("a/x.md", "mine", &current).await,
            Ok(None)
        );
        assert_eq!(store.text("a/x.md"), None);
    });
}
