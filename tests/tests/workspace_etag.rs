//! `workspace.write` with `expectedEtag` under workerd's R2: it replaces
//! only the version read, so an editor shows a conflict instead of
//! overwriting a change made meanwhile; without it, v1's write is unchanged.

// Test support (harness, doubles, bench): a failed unwrap here is a failed
// test or a broken fixture, so panicking is the right report.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use gsv_e2e::harness::{GatewayOptions, Workerd};
use gsv_e2e::ws::Client;
use serde_json::json;

const TOKEN: &str = "test-token";

#[tokio::test]
async fn a_conditional_write_replaces_only_the_version_read() {
    let gw = Workerd::start(GatewayOptions::default());
    let mut c = Client::connect(&gw.url(), Some(TOKEN)).await;

    // v1's write: no etag asked, none answered.
    let res = c
        .request(
            "workspace.write",
            json!({"path": "notes.md", "content": "one"}),
        )
        .await;
    assert_eq!(
        res.payload.unwrap(),
        json!({"path": "notes.md", "size": 3, "written": true})
    );
    let read = c
        .request("workspace.read", json!({"path": "notes.md"}))
        .await
        .payload
        .unwrap();
    let v1 = read["etag"].as_str().unwrap().to_string();
    assert!(!v1.is_empty());

    // Over the version read: written, with the new version's etag.
    let res = c
        .request(
            "workspace.write",
            json!({"path": "notes.md", "content": "two", "expectedEtag": v1}),
        )
        .await
        .payload
        .unwrap();
    let v2 = res["etag"].as_str().unwrap().to_string();
    assert_ne!(v2, v1);
    assert_eq!(
        res,
        json!({"path": "notes.md", "size": 3, "written": true, "etag": v2})
    );
    let read = c
        .request("workspace.read", json!({"path": "notes.md"}))
        .await
        .payload
        .unwrap();
    assert_eq!(
        (read["content"].clone(), read["etag"].clone()),
        (json!("two"), json!(v2))
    );

    // Over a version that is gone: a 409, nothing written.
    let res = c
        .request(
            "workspace.write",
            json!({"path": "notes.md", "content": "stale", "expectedEtag": v1}),
        )
        .await;
    let err = res.error.unwrap();
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "notes.md in the workspace of agent main changed since it was read (or was deleted); nothing was written"
    );
    let read = c
        .request("workspace.read", json!({"path": "notes.md"}))
        .await
        .payload
        .unwrap();
    assert_eq!(read["content"], json!("two"));

    // A deleted file is at no version: not recreated.
    c.request("workspace.delete", json!({"path": "notes.md"}))
        .await;
    let res = c
        .request(
            "workspace.write",
            json!({"path": "notes.md", "content": "back?", "expectedEtag": v2}),
        )
        .await;
    assert_eq!(res.error.unwrap().code, 409);
    let res = c
        .request("workspace.read", json!({"path": "notes.md"}))
        .await;
    assert_eq!(res.error.unwrap().code, 404);
}
