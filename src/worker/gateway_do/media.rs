//! Attachments of incoming messages into the session's media, once the
//! routing has named the session: a chat app's file is downloaded by its
//! channel (which holds the platform's credentials) and streamed into R2
//! at `media/{sessionKey}/{uuid}.{ext}`; a client's file is one it
//! uploaded (`/media/upload`) or, small, inline. A file over the limit or
//! one that cannot be had is not kept: the model gets a note, and the
//! sender of a file too large is told so.

use super::Gateway;
use crate::media::key::{in_session, media_key};
use crate::media::{mime, too_large_reason, Attached, MediaType, MAX_MEDIA_BYTES};
use crate::worker::bindings;
use crate::worker::body::BodyReader;
use crate::worker::media::{put_bytes, store_response, NewFile, Stored};
use crate::worker::rpc::{internal_error, new_id};
use gsv_protocol::channels::{ChannelMedia, ChannelMediaFetchParams, MediaFetchRefusal};
use gsv_protocol::{codes, ErrorShape};
use worker::{console_error, Bucket};

type Res<T> = std::result::Result<T, ErrorShape>;

/// Files of a chat message as its session gets them, and the files the
/// sender must hear were too large (name, size).
pub(super) struct Kept {
    pub attached: Vec<Attached>,
    pub too_large: Vec<(Option<String>, u64)>,
}

fn described(m: &ChannelMedia) -> Attached {
    let mime_type = mime::resolve(Some(&m.mime_type), m.filename.as_deref());
    // A photo sent as a file is still a photo.
    let kind = match m.media_type {
        MediaType::Document => mime::media_type(&mime_type),
        kind => kind,
    };
    Attached {
        kind,
        mime_type,
        filename: m.filename.clone().filter(|f| !f.trim().is_empty()),
        size: m.size,
        duration: m.duration,
        r2_key: None,
        refused: None,
    }
}

fn refused(mut a: Attached, why: String) -> Attached {
    a.refused = Some(why);
    a
}

/// Whether a file was refused for its size (its sender is told).
fn is_too_large(a: &Attached) -> bool {
    matches!((&a.refused, a.size), (Some(why), Some(size)) if *why == too_large_reason(size))
}

fn decode_base64(data: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .ok()
}

impl Gateway {
    /// Keeps the files of a message from `channel` routed to `session_key`.
    pub(super) async fn keep_channel_media(
        &self,
        channel: &str,
        account_id: &str,
        media: &[ChannelMedia],
        session_key: &str,
    ) -> Kept {
        let mut kept = Kept {
            attached: Vec::new(),
            too_large: Vec::new(),
        };
        let bucket = match bindings::bucket(&self.env) {
            Ok(b) => b,
            Err(e) => {
                for m in media {
                    kept.attached.push(refused(
                        described(m),
                        format!("it could not be stored: {e}"),
                    ));
                }
                return kept;
            }
        };
        for m in media {
            // Boxed: one poll function of its own instead of its state
            // machine folded into every caller's (smaller Wasm).
            let a = Box::pin(self.keep_one(&bucket, channel, account_id, m, session_key)).await;
            if let (true, Some(size)) = (is_too_large(&a), a.size) {
                kept.too_large.push((a.filename.clone(), size));
            }
            kept.attached.push(a);
        }
        kept
    }

    async fn keep_one(
        &self,
        bucket: &Bucket,
        channel: &str,
        account_id: &str,
        m: &ChannelMedia,
        session_key: &str,
    ) -> Attached {
        let mut a = described(m);
        if let Some(size) = m.size.filter(|s| *s > MAX_MEDIA_BYTES) {
            return refused(a, too_large_reason(size));
        }
        let key = media_key(session_key, &new_id(), &a.mime_type);
        let file = NewFile {
            key: &key,
            mime: &a.mime_type,
            filename: a.filename.as_deref(),
            session_key,
        };
        // v1's channels send the bytes inline.
        if let Some(data) = &m.data {
            let Some(bytes) = decode_base64(data) else {
                return refused(a, "its inline data is not valid base64".into());
            };
            let size = bytes.len() as u64;
            if size > MAX_MEDIA_BYTES {
                a.size = Some(size);
                return refused(a, too_large_reason(size));
            }
            return match put_bytes(bucket, &file, bytes).await {
                Ok(()) => Attached {
                    r2_key: Some(key),
                    size: Some(size),
                    ..a
                },
                Err(e) => refused(a, format!("it could not be stored: {e}")),
            };
        }
        let Some(ch) = self.channel(channel) else {
            return refused(a, format!("no {channel} channel is bound to download it"));
        };
        let params = ChannelMediaFetchParams {
            account_id: account_id.to_string(),
            media: m.clone(),
            max_bytes: MAX_MEDIA_BYTES,
        };
        let mut resp = match ch.fetch_media(&params).await {
            Ok(r) => r,
            Err(e) => return refused(a, format!("it could not be downloaded: {}", e.message)),
        };
        let status = resp.status_code();
        if !(200..300).contains(&status) {
            let text = BodyReader::new(&resp).read_text().await.unwrap_or_default();
            let refusal: MediaFetchRefusal =
                serde_json::from_str(&text).unwrap_or_else(|_| MediaFetchRefusal {
                    error: format!(
                        "{channel} answered {status}: {}",
                        text.chars().take(200).collect::<String>()
                    ),
                    size: None,
                });
            if let Some(size) = refusal.size {
                a.size = Some(size);
                if status == 413 || size > MAX_MEDIA_BYTES {
                    return refused(a, too_large_reason(size));
                }
            }
            return refused(a, format!("it could not be downloaded: {}", refusal.error));
        }
        match store_response(bucket, &file, &mut resp).await {
            Ok(Stored::Kept { size }) => Attached {
                r2_key: Some(key),
                size: Some(size),
                ..a
            },
            Ok(Stored::TooLarge { size }) => {
                a.size = Some(size);
                refused(a, too_large_reason(size))
            }
            Err(e) => {
                console_error!("gateway: storing {key} failed: {e}");
                refused(a, format!("it could not be stored: {e}"))
            }
        }
    }

    /// The files of a client's `chat.send` for `session_key`: uploaded
    /// ones (their key must be this session's, and exist) or small inline
    /// ones. A bad one fails the request: the client can say so at once.
    pub(super) async fn keep_client_media(
        &self,
        media: &[ChannelMedia],
        session_key: &str,
    ) -> Res<Vec<Attached>> {
        if media.is_empty() {
            // Most messages: no binding to look up.
            return Ok(Vec::new());
        }
        let bad = |i: usize, why: String| {
            ErrorShape::new(codes::BAD_REQUEST, format!("media[{i}]: {why}"))
        };
        let bucket = bindings::bucket(&self.env).map_err(internal_error)?;
        let mut out = Vec::with_capacity(media.len());
        for (i, m) in media.iter().enumerate() {
            let mut a = described(m);
            match (&m.r2_key, &m.data) {
                (Some(key), _) => {
                    if !in_session(key, session_key) {
                        return Err(bad(
                            i,
                            format!("{key} is not a file of session {session_key} (upload it to /media/upload with this sessionKey)"),
                        ));
                    }
                    let Some(head) = bucket.head(key).await.map_err(internal_error)? else {
                        return Err(bad(i, format!("{key} does not exist")));
                    };
                    if let Some(t) = head.http_metadata().content_type {
                        a.mime_type = mime::resolve(Some(&t), a.filename.as_deref());
                        if m.media_type == MediaType::Document {
                            a.kind = mime::media_type(&a.mime_type);
                        }
                    }
                    a.size = Some(head.size());
                    a.r2_key = Some(key.clone());
                }
                (None, Some(data)) => {
                    let bytes = decode_base64(data)
                        .ok_or_else(|| bad(i, "data is not valid base64".into()))?;
                    let size = bytes.len() as u64;
                    if size > MAX_MEDIA_BYTES {
                        return Err(ErrorShape::new(
                            codes::PAYLOAD_TOO_LARGE,
                            format!("media[{i}]: {}", too_large_reason(size)),
                        ));
                    }
                    let key = media_key(session_key, &new_id(), &a.mime_type);
                    let file = NewFile {
                        key: &key,
                        mime: &a.mime_type,
                        filename: a.filename.as_deref(),
                        session_key,
                    };
                    put_bytes(&bucket, &file, bytes)
                        .await
                        .map_err(internal_error)?;
                    a.size = Some(size);
                    a.r2_key = Some(key);
                }
                (None, None) => {
                    return Err(bad(
                        i,
                        "give r2Key (a file uploaded to /media/upload) or data (base64)".into(),
                    ))
                }
            }
            out.push(a);
        }
        Ok(out)
    }
}
