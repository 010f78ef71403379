//! The Worker's media I/O (the decisions are `crate::media`'s): files
//! streamed into R2 — a channel's download, a client's upload — without
//! passing through the isolate's memory; read back for model calls
//! through the isolate's cache (`read`); transcribed once (`transcribe`);
//! and the HTTP routes of uploads and of channels reading a file to send
//! (`routes`).

mod read;
mod routes;
mod transcribe;

pub use read::{for_call, forget_session};
pub use routes::{channel_read, upload};

use crate::media::MAX_MEDIA_BYTES;
use futures::StreamExt;
use std::collections::HashMap;
use worker::{web_sys, Bucket, Data, HttpMetadata, Response, ResponseBody};

/// A new file in R2 and what is recorded with it (the seed layout's
/// metadata: its type, original name, upload time and session).
pub struct NewFile<'a> {
    pub key: &'a str,
    pub mime: &'a str,
    pub filename: Option<&'a str>,
    pub session_key: &'a str,
}

impl NewFile<'_> {
    fn metadata(&self) -> (HttpMetadata, HashMap<String, String>) {
        let http = HttpMetadata {
            content_type: Some(self.mime.to_string()),
            ..Default::default()
        };
        let custom = HashMap::from([
            (
                "originalFilename".to_string(),
                self.filename.unwrap_or_default().to_string(),
            ),
            (
                "uploadedAt".to_string(),
                crate::worker::rpc::now_ms().to_string(),
            ),
            ("sessionKey".to_string(), self.session_key.to_string()),
        ]);
        (http, custom)
    }
}

fn js_error(e: wasm_bindgen::JsValue) -> worker::Error {
    worker::Error::from(e)
}

/// Streams `body` (`len` bytes, as declared) into R2: piped through a
/// `FixedLengthStream` in JS, so the bytes never enter the Wasm memory,
/// and a body longer or shorter than declared fails the write.
pub async fn put_stream(
    bucket: &Bucket,
    file: &NewFile<'_>,
    body: web_sys::ReadableStream,
    len: u64,
) -> worker::Result<()> {
    let sized = worker::worker_sys::FixedLengthStream::new(len as u32).map_err(js_error)?;
    // The pipe runs as soon as it is asked for (a JS promise), while the
    // put reads the other end; its outcome is looked at after.
    let piped = wasm_bindgen_futures::JsFuture::from(body.pipe_to(&sized.writable()));
    let (http, custom) = file.metadata();
    bucket
        .put(file.key, Data::ReadableStream(sized.readable()))
        .http_metadata(http)
        .custom_metadata(custom)
        .execute()
        .await?;
    piped.await.map(|_| ()).map_err(js_error)
}

pub async fn put_bytes(bucket: &Bucket, file: &NewFile<'_>, bytes: Vec<u8>) -> worker::Result<()> {
    let (http, custom) = file.metadata();
    bucket
        .put(file.key, bytes)
        .http_metadata(http)
        .custom_metadata(custom)
        .execute()
        .await
        .map(|_| ())
}

/// How a response body went into R2.
pub enum Stored {
    Kept {
        size: u64,
    },
    /// Larger than the limit (by its declared length, or once more than
    /// the limit had been read): nothing stored.
    TooLarge {
        size: u64,
    },
}

/// Stores a response's body: streamed when its length is declared,
/// otherwise read up to the limit (and refused past it).
pub async fn store_response(
    bucket: &Bucket,
    file: &NewFile<'_>,
    resp: &mut Response,
) -> worker::Result<Stored> {
    let declared = resp
        .headers()
        .get("content-length")?
        .and_then(|l| l.trim().parse::<u64>().ok());
    if let Some(len) = declared {
        if len > MAX_MEDIA_BYTES {
            cancel(resp);
            return Ok(Stored::TooLarge { size: len });
        }
        if let ResponseBody::Stream(body) = resp.body() {
            let body = body.clone();
            put_stream(bucket, file, body, len).await?;
            return Ok(Stored::Kept { size: len });
        }
    }
    let bytes = match resp.body() {
        ResponseBody::Stream(_) => {
            let mut stream = resp.stream()?;
            let mut bytes = Vec::new();
            while let Some(chunk) = stream.next().await {
                bytes.extend_from_slice(&chunk?);
                if bytes.len() as u64 > MAX_MEDIA_BYTES {
                    return Ok(Stored::TooLarge {
                        size: bytes.len() as u64,
                    });
                }
            }
            bytes
        }
        ResponseBody::Body(b) => b.clone(),
        ResponseBody::Empty => Vec::new(),
    };
    let size = bytes.len() as u64;
    if size > MAX_MEDIA_BYTES {
        return Ok(Stored::TooLarge { size });
    }
    put_bytes(bucket, file, bytes).await?;
    Ok(Stored::Kept { size })
}

/// Drops a body that will not be read (the download stops).
fn cancel(resp: &Response) {
    if let ResponseBody::Stream(body) = resp.body() {
        let _ = body.cancel();
    }
}
