//! Files people send, for the gateway: the message kept when it came
//! (`tables::received`), its file downloaded from WhatsApp's CDN and
//! decrypted by the client, handed back as the response's body.

use super::account_do::Inner;
use super::tables;
use gsv_protocol::channels::*;
use whatsapp_rust::wacore::download::Downloadable;
use whatsapp_rust::wacore::proto_helpers::MessageExt;
use whatsapp_rust::waproto::buffa::Message as _;
use whatsapp_rust::waproto::whatsapp as wa;
use worker::*;

/// The downloadable part of a message, and its size.
fn medium(m: &wa::Message) -> Option<(&dyn Downloadable, Option<u64>)> {
    let m = m.get_base_message();
    if let Some(i) = m.image_message.as_option() {
        return Some((i, i.file_length));
    }
    if let Some(a) = m.audio_message.as_option() {
        return Some((a, a.file_length));
    }
    if let Some(v) = m.video_message.as_option() {
        return Some((v, v.file_length));
    }
    let document = m.document_message.as_option().or_else(|| {
        m.document_with_caption_message
            .as_option()
            .and_then(|w| w.message.as_option())
            .and_then(|inner| inner.document_message.as_option())
    });
    document.map(|d| (d as &dyn Downloadable, d.file_length))
}

impl Inner {
    pub async fn fetch_media(&self, p: ChannelMediaFetchParams) -> Result<Response> {
        let refuse = |status: u16, error: String, size: Option<u64>| {
            Ok(Response::from_json(&MediaFetchRefusal { error, size })?.with_status(status))
        };
        let Some(media_ref) = p.media.id.clone().filter(|id| !id.is_empty()) else {
            return refuse(400, "the media names no WhatsApp message".into(), None);
        };
        let Some((chat, id)) = media_ref.rsplit_once('/') else {
            return refuse(400, format!("{media_ref} names no WhatsApp message"), None);
        };
        let Some(store) = &self.store else {
            return refuse(503, "the account's storage is not open".into(), None);
        };
        let Some((_, bytes)) = tables::received(store, chat, id)? else {
            return refuse(
                410,
                "the message is no longer kept (files are kept a day)".into(),
                None,
            );
        };
        let message = match wa::Message::decode_from_slice(&bytes) {
            Ok(m) => m,
            Err(e) => return refuse(500, format!("the kept message does not read: {e}"), None),
        };
        let Some((file, size)) = medium(&message) else {
            return refuse(404, "the message has no file".into(), None);
        };
        if let Some(size) = size.filter(|s| *s > p.max_bytes) {
            return refuse(413, "larger than the gateway takes".into(), Some(size));
        }
        let Some(client) = self.client() else {
            return refuse(503, "not connected to WhatsApp".into(), None);
        };
        match client.download(file).await {
            Ok(data) if data.len() as u64 > p.max_bytes => refuse(
                413,
                "larger than the gateway takes".into(),
                Some(data.len() as u64),
            ),
            Ok(data) => {
                let headers = Headers::new();
                headers.set("content-type", &p.media.mime_type)?;
                Ok(Response::from_bytes(data)?.with_headers(headers))
            }
            Err(e) => refuse(
                502,
                format!("downloading the file from WhatsApp failed: {e}"),
                size,
            ),
        }
    }
}
