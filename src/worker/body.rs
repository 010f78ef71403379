//! Response bodies read chunk by chunk, without releasing the reader's lock
//! once they end.
//!
//! worker's `Response::bytes()` and `stream()` read through wasm-streams,
//! which releases the reader's lock when the stream ends. By the Streams
//! standard a release rejects the reader's `closed` promise with a new
//! TypeError, stack trace and all: under workerd ~0.1 ms a body, the largest
//! single item of the gateway's call to a session in the turn's profile. A
//! reader whose stream has ended holds nothing, so it is simply dropped; one
//! dropped before the end cancels its stream, so the connection is let go.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use worker::{Response, ResponseBody};

#[wasm_bindgen]
extern "C" {
    /// A `ReadableStreamDefaultReader`, as much of it as is read here.
    type Reader;
    #[wasm_bindgen(method)]
    fn read(this: &Reader) -> js_sys::Promise;
    #[wasm_bindgen(method)]
    fn cancel(this: &Reader) -> js_sys::Promise;

    /// What `read()` resolves to.
    type ReadResult;
    #[wasm_bindgen(method, getter)]
    fn done(this: &ReadResult) -> bool;
    #[wasm_bindgen(method, getter)]
    fn value(this: &ReadResult) -> JsValue;
}

/// A response's body, chunk by chunk.
pub struct BodyReader {
    reader: Option<Reader>,
    /// A body that was already in memory (a response built in Rust).
    whole: Option<Vec<u8>>,
}

impl BodyReader {
    pub fn new(resp: &Response) -> Self {
        let (reader, whole) = match resp.body() {
            ResponseBody::Stream(stream) => (Some(stream.get_reader().unchecked_into()), None),
            ResponseBody::Body(bytes) => (None, Some(bytes.clone())),
            ResponseBody::Empty => (None, None),
        };
        Self { reader, whole }
    }

    /// A stream that is not a response's (a binding's answer).
    pub fn from_stream(stream: &worker::web_sys::ReadableStream) -> Self {
        Self {
            reader: Some(stream.get_reader().unchecked_into()),
            whole: None,
        }
    }

    /// The next chunk; `None` at the end. A read aborted by the request's
    /// signal ends the body, as worker's `ByteStream` has it.
    pub async fn next(&mut self) -> Option<worker::Result<Vec<u8>>> {
        if let Some(bytes) = self.whole.take() {
            return Some(Ok(bytes));
        }
        let read = self.reader.as_ref()?.read();
        match JsFuture::from(read).await {
            Ok(result) => {
                let result: ReadResult = result.unchecked_into();
                if result.done() {
                    self.reader = None;
                    return None;
                }
                // A body's chunks are `Uint8Array`s: copied once, straight
                // into Wasm memory (`new Uint8Array(chunk)` copied it in JS
                // first).
                let chunk = match result.value().dyn_into::<js_sys::Uint8Array>() {
                    Ok(bytes) => bytes,
                    Err(other) => js_sys::Uint8Array::new(&other),
                };
                Some(Ok(chunk.to_vec()))
            }
            Err(e) => {
                self.reader = None;
                let e = worker::Error::from(e);
                (e.to_string() != "Error: aborted").then_some(Err(e))
            }
        }
    }

    /// The whole body.
    pub async fn read_all(mut self) -> worker::Result<Vec<u8>> {
        let mut all = Vec::new();
        while let Some(chunk) = self.next().await {
            let chunk = chunk?;
            match all.is_empty() {
                true => all = chunk,
                false => all.extend_from_slice(&chunk),
            }
        }
        Ok(all)
    }

    /// The whole body as UTF-8 text.
    pub async fn read_text(self) -> worker::Result<String> {
        String::from_utf8(self.read_all().await?)
            .map_err(|e| worker::Error::RustError(e.to_string()))
    }
}

impl Drop for BodyReader {
    fn drop(&mut self) {
        if let Some(reader) = self.reader.take() {
            // Not read to its end: nobody will read the rest.
            let ignore = Closure::once(|_: JsValue| {});
            let _ = reader.cancel().catch(&ignore);
            ignore.forget();
        }
    }
}
