use std::fs;

use serde_json::json;

use super::*;
use crate::tools::tests::toolbox;

#[tokio::test]
async fn numbered_lines_with_offset_and_limit() {
    let (_dir, tb, _rx) = toolbox();
    let path = tb.workspace().join("f.txt");
    let shown = show(&path);
    fs::write(&path, "a\nb\r\nc\nd").unwrap();
    let out = tb
        .call("Read", json!({"path": "f.txt"}), None)
        .await
        .unwrap();
    assert_eq!(
        out,
        json!({"path": shown, "content": "     1\ta\n     2\tb\n     3\tc\n     4\td",
               "lines": 4, "totalLines": 4, "offset": 0, "truncated": false})
    );
    let out = tb
        .call(
            "Read",
            json!({"path": shown, "offset": 1, "limit": 2}),
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        out,
        json!({"path": shown, "content": "     2\tb\n     3\tc", "lines": 2, "totalLines": 4,
               "offset": 1, "truncated": true, "nextOffset": 3,
               "note": "Showing lines 2-3 of 4. Use offset=3 to read more."})
    );
    let out = tb
        .call("Read", json!({"path": "f.txt", "offset": 10}), None)
        .await
        .unwrap();
    assert_eq!(out["content"], "");
    assert_eq!(
        out["note"],
        "offset 10 is past the end of the file (4 lines)."
    );
    fs::write(&path, "").unwrap();
    let out = tb
        .call("Read", json!({"path": "f.txt"}), None)
        .await
        .unwrap();
    assert_eq!(
        (out["content"].clone(), out["totalLines"].clone()),
        (json!(""), json!(0))
    );
}

#[tokio::test]
async fn output_and_lines_are_capped() {
    let (_dir, tb, _rx) = toolbox();
    let line = "x".repeat(200);
    fs::write(
        tb.workspace().join("big.txt"),
        format!("{line}\n").repeat(3000),
    )
    .unwrap();
    let out = tb
        .call("Read", json!({"path": "big.txt"}), None)
        .await
        .unwrap();
    // Each numbered line is 6 + 1 + 200 + 1 = 208 bytes; 256 KiB holds 1260.
    assert_eq!(
        (out["lines"].clone(), out["totalLines"].clone()),
        (json!(1260), json!(3000))
    );
    assert_eq!(out["nextOffset"], 1260);
    assert_eq!(
        out["note"],
        "Showing lines 1-1260 of 3000. Output was capped at 256 KiB. Use offset=1260 to read more."
    );
    assert!(out["content"].as_str().unwrap().len() <= MAX_OUTPUT);

    fs::write(
        tb.workspace().join("long.txt"),
        format!("{}\nshort\n", "é".repeat(3000)),
    )
    .unwrap();
    let out = tb
        .call("Read", json!({"path": "long.txt"}), None)
        .await
        .unwrap();
    assert_eq!(
        out["content"],
        format!("     1\t{}…\n     2\tshort", "é".repeat(2000))
    );
    assert_eq!(
        out["note"],
        "Showing lines 1-2 of 2. 1 line(s) over 2000 characters were cut."
    );
    assert_eq!(out["truncated"], false);
}

#[tokio::test]
async fn binary_files_are_refused() {
    let (_dir, tb, _rx) = toolbox();
    let path = tb.workspace().join("blob.bin");
    fs::write(&path, b"ELF\x00\x01\x02rest").unwrap();
    let err = tb
        .call("Read", json!({"path": "blob.bin"}), None)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        format!(
            "{} is a binary file (10 bytes); Read returns text files and PNG, JPEG, GIF or \
             WebP images only",
            show(&path)
        )
    );
    let err = tb
        .call("Read", json!({"path": "."}), None)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        format!(
            "{} is a directory; use Glob to list its files",
            show(tb.workspace())
        )
    );
    let err = tb
        .call("Read", json!({"path": "nope"}), None)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        format!("file {} does not exist", show(&tb.workspace().join("nope")))
    );
}

#[tokio::test]
async fn images_come_back_as_content_blocks() {
    let (_dir, tb, _rx) = toolbox();
    let path = tb.workspace().join("pic.png");
    let shown = show(&path);
    let bytes = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR";
    fs::write(&path, bytes).unwrap();
    let out = tb
        .call("Read", json!({"path": "pic.png"}), None)
        .await
        .unwrap();
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    assert_eq!(
        out,
        json!({
            "path": shown, "mimeType": "image/png", "size": 16,
            "content": [
                {"type": "image", "data": data, "mimeType": "image/png"},
                {"type": "text", "text": format!("Image {shown} (16 bytes)")}
            ]
        })
    );
    assert_eq!(image_mime(b"GIF89a..."), Some("image/gif"));
    assert_eq!(image_mime(b"\xFF\xD8\xFF\xE0"), Some("image/jpeg"));
    assert_eq!(
        image_mime(b"RIFF\x10\x00\x00\x00WEBPVP8 "),
        Some("image/webp")
    );
    assert_eq!(image_mime(b"RIFF\x10\x00\x00\x00WAVE"), None);

    // Over 5 MiB: refused (a sparse file, cheap to make).
    let big = tb.workspace().join("big.jpg");
    fs::write(&big, b"\xFF\xD8\xFF\xE0").unwrap();
    fs::File::options()
        .write(true)
        .open(&big)
        .unwrap()
        .set_len(6 << 20)
        .unwrap();
    let err = tb
        .call("Read", json!({"path": "big.jpg"}), None)
        .await
        .unwrap_err();
    assert_eq!(
        err,
        format!(
            "{} is an image (image/jpeg, 6291456 bytes); images over 5 MiB are not returned",
            show(&big)
        )
    );
}
