//! Media as WhatsApp encrypts and serves it (the WhatsApp security
//! whitepaper, "Transmitting Media and Other Attachments"; the path and
//! query shapes from the client's `upload.rs`/`download.rs`):
//!
//! - A random 32-byte `mediaKey` expands (HKDF-SHA256, no salt, info
//!   `WhatsApp {Image|Video|Audio|Document} Keys`) to 112 bytes: IV, AES key,
//!   MAC key. The file is AES-256-CBC (PKCS#7) then the first 10 bytes of
//!   HMAC-SHA256(MAC key, IV ‖ ciphertext); `fileSha256` is the plaintext's
//!   hash, `fileEncSha256` the uploaded blob's.
//! - The CDN (`media_conn`'s host, plain HTTP here): uploads are
//!   `POST /mms/{type}/{token}?auth={auth}&token={token}` with the
//!   encrypted blob, the token being the blob's SHA-256 in unpadded
//!   base64url; the answer is `{"url","direct_path"}`. A `&resume=1` probe
//!   answers `{"resume":"complete",…}` for a blob it has. Downloads are
//!   `GET {direct_path}?auth=…&token=…`.

use super::Shared;
use base64::Engine as _;
use bytes::Bytes;
use hmac::{Hmac, Mac};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rand::RngExt as _;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpListener;
use wacore::libsignal::crypto::{aes_256_cbc_decrypt_into, aes_256_cbc_encrypt_into};

pub(crate) fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

pub(crate) fn b64url(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

pub(crate) fn sha256(b: &[u8]) -> [u8; 32] {
    Sha256::digest(b).into()
}

pub(crate) fn hmac_sha256(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC key");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// HKDF-SHA256 (RFC 5869); an empty salt is HashLen zeros.
pub(crate) fn hkdf(ikm: &[u8], salt: &[u8], info: &[u8], len: usize) -> Vec<u8> {
    let prk = hmac_sha256(if salt.is_empty() { &[0u8; 32] } else { salt }, ikm);
    let mut out = Vec::with_capacity(len);
    let mut t = Vec::new();
    let mut i = 1u8;
    while out.len() < len {
        t = hmac_sha256(&prk, &[&t[..], info, &[i]].concat()).to_vec();
        out.extend_from_slice(&t);
        i += 1;
    }
    out.truncate(len);
    out
}

/// The kinds of media the double sends and takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Image,
    Audio,
    Video,
    Document,
}

impl Kind {
    pub fn info(self) -> &'static [u8] {
        match self {
            Kind::Image => b"WhatsApp Image Keys",
            Kind::Audio => b"WhatsApp Audio Keys",
            Kind::Video => b"WhatsApp Video Keys",
            Kind::Document => b"WhatsApp Document Keys",
        }
    }
    pub fn mms(self) -> &'static str {
        match self {
            Kind::Image => "image",
            Kind::Audio => "audio",
            Kind::Video => "video",
            Kind::Document => "document",
        }
    }
}

/// An encrypted file and what a message says about it.
pub(crate) struct Encrypted {
    pub media_key: [u8; 32],
    pub blob: Vec<u8>,
    pub file_sha256: [u8; 32],
    pub file_enc_sha256: [u8; 32],
}

fn keys(media_key: &[u8], kind: Kind) -> Vec<u8> {
    hkdf(media_key, &[], kind.info(), 112)
}

pub(crate) fn encrypt(plain: &[u8], kind: Kind) -> Encrypted {
    let media_key: [u8; 32] = rand::rng().random();
    let k = keys(&media_key, kind);
    let (iv, key, mac_key) = (&k[..16], &k[16..48], &k[48..80]);
    let mut blob = Vec::new();
    aes_256_cbc_encrypt_into(plain, key, iv, &mut blob).expect("AES-CBC");
    let mac = hmac_sha256(mac_key, &[iv, &blob].concat());
    blob.extend_from_slice(&mac[..10]);
    Encrypted {
        media_key,
        file_sha256: sha256(plain),
        file_enc_sha256: sha256(&blob),
        blob,
    }
}

/// Checks the blob against the message's hashes and MAC, and opens it.
pub(crate) fn decrypt(
    blob: &[u8],
    media_key: &[u8],
    kind: Kind,
    file_enc_sha256: Option<&[u8]>,
    file_sha256: Option<&[u8]>,
) -> Result<Vec<u8>, String> {
    if file_enc_sha256.is_some_and(|h| h != sha256(blob)) {
        return Err("fileEncSha256 does not match the blob".into());
    }
    if blob.len() < 10 + 16 {
        return Err("blob too short".into());
    }
    let k = keys(media_key, kind);
    let (iv, key, mac_key) = (&k[..16], &k[16..48], &k[48..80]);
    let (ct, mac) = blob.split_at(blob.len() - 10);
    if hmac_sha256(mac_key, &[iv, ct].concat())[..10] != *mac {
        return Err("media MAC does not match".into());
    }
    let mut plain = Vec::new();
    aes_256_cbc_decrypt_into(ct, key, iv, &mut plain).map_err(|e| format!("AES-CBC: {e:?}"))?;
    if file_sha256.is_some_and(|h| h != sha256(&plain)) {
        return Err("fileSha256 does not match the plaintext".into());
    }
    Ok(plain)
}

/// Stores a blob on the CDN: its direct path.
pub(crate) fn store(w: &mut super::World, kind: Kind, blob: Vec<u8>) -> String {
    let r: [u8; 12] = rand::rng().random();
    let path = format!(
        "/v/t62.7118-24/{}_{}.enc",
        hex(&r),
        hex(&sha256(&blob)[..8])
    );
    let _ = kind;
    w.media.insert(path.clone(), blob);
    path
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

pub(crate) async fn serve(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(shared.clone(), req));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn reply(status: u16, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(body.into()))
        .expect("response")
}

async fn handle(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_string();
    let query: HashMap<String, String> = req
        .uri()
        .query()
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let method = req.method().clone();
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return Ok(reply(400, "")),
    };
    let mut w = shared.lock();
    if query.get("auth") != Some(&w.media_auth) {
        return Ok(reply(401, r#"{"error":"auth"}"#));
    }
    let host = w.media_host.clone();
    if method == hyper::Method::POST && path.starts_with("/mms/") {
        let token = query.get("token").cloned().unwrap_or_default();
        if query.contains_key("resume") {
            let known = w
                .media
                .iter()
                .find(|(_, blob)| b64url(&sha256(blob)) == token)
                .map(|(p, _)| p.clone());
            return Ok(match known {
                Some(p) => reply(
                    200,
                    format!(
                        r#"{{"resume":"complete","url":"https://{host}{p}","direct_path":"{p}"}}"#
                    ),
                ),
                None => reply(200, r#"{"resume":"0"}"#),
            });
        }
        if b64url(&sha256(&body)) != token || !path.ends_with(&format!("/{token}")) {
            return Ok(reply(400, r#"{"error":"hash mismatch"}"#));
        }
        let kind = match path.split('/').nth(2) {
            Some("audio") => Kind::Audio,
            Some("video") => Kind::Video,
            Some("document") => Kind::Document,
            _ => Kind::Image,
        };
        let p = store(&mut w, kind, body.to_vec());
        return Ok(reply(
            200,
            format!(r#"{{"url":"https://{host}{p}","direct_path":"{p}"}}"#),
        ));
    }
    if method == hyper::Method::GET {
        if let Some(blob) = w.media.get(&path) {
            if query
                .get("token")
                .is_some_and(|t| *t != b64url(&sha256(blob)))
            {
                return Ok(reply(403, ""));
            }
            return Ok(Response::builder()
                .status(200)
                .header("content-type", "application/octet-stream")
                .body(Full::new(Bytes::from(blob.clone())))
                .expect("response"));
        }
        return Ok(reply(404, ""));
    }
    Ok(reply(405, ""))
}
