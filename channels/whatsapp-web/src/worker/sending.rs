//! The account's sends: each piece once per idempotency key (and under a
//! WhatsApp id made from it, so even a send whose answer was lost is the
//! same message to the phone), a reply quoting what it answers, files
//! uploaded to WhatsApp's CDN first; and typing (`composing` / `paused`),
//! renewed from the alarm.

use super::account_do::{now_ms, Inner};
use super::alarm::{Deadline, TYPING_MAX_MS, TYPING_RENEW_MS};
use super::tables::{self, SENT_TTL_MS};
use crate::account::Link;
use crate::inbound::peer_jid;
use crate::outbound::{self, message_id, Quote, Uploaded};
use gsv_channel_worker::gateway;
use gsv_protocol::channels::*;
use std::str::FromStr;
use whatsapp_rust::prelude::*;
use whatsapp_rust::upload::UploadOptions;
use whatsapp_rust::waproto::buffa::Message as _;
use whatsapp_rust::waproto::whatsapp as wa;
use worker::*;

/// Later than any deadline (and within JavaScript's safe integers).
const ANY_TIME: i64 = 1 << 52;

fn failed(error: String, retryable: bool) -> ChannelSendResult {
    ChannelSendResult {
        ok: false,
        message_id: None,
        error: Some(error),
        retryable: Some(retryable),
        retry_after_ms: None,
    }
}

fn sent(id: String) -> ChannelSendResult {
    ChannelSendResult {
        ok: true,
        message_id: Some(id),
        error: None,
        retryable: None,
        retry_after_ms: None,
    }
}

impl Inner {
    /// One piece: its WhatsApp message id, or why not.
    pub async fn send(&self, p: ChannelSendParams) -> ChannelSendResult {
        let msg = &p.message;
        let jid_text = match peer_jid(&msg.peer.id) {
            Ok(j) => j,
            Err(e) => return failed(e, false),
        };
        let Ok(jid) = Jid::from_str(&jid_text) else {
            return failed(format!("{jid_text} is not a WhatsApp id"), false);
        };
        log::debug!("send: to {jid_text}");
        self.stop_typing(&jid_text).await;
        let account = self.current().unwrap_or_default();
        let Some(client) = self.client().filter(|c| c.is_connected()) else {
            // Linked but between sockets: the gateway tries again.
            let linked = account.started && matches!(account.link, Link::Linked | Link::Connecting);
            return failed(
                match linked {
                    true => "not connected to WhatsApp right now".into(),
                    false => format!(
                        "the account {} is not linked: gsv channel login whatsapp-web",
                        p.account_id
                    ),
                },
                linked,
            );
        };
        let key = msg.idempotency_key.as_deref().filter(|k| !k.is_empty());
        if let Some(id) = key.and_then(|k| self.store.as_ref()?.sent_id(k).ok().flatten()) {
            return sent(id);
        }
        let quote = msg
            .reply_to_id
            .as_deref()
            .and_then(|id| self.quote(&jid_text, id));
        let message = match msg.media.first() {
            None => outbound::text(&msg.text, quote.as_ref()),
            Some(file) => match self.upload(&client, file).await {
                Ok(up) => outbound::file(
                    file.media_type,
                    &file.mime_type,
                    &file.filename,
                    &up,
                    Some(&msg.text),
                    quote.as_ref(),
                ),
                Err(e) => return e,
            },
        };
        let options = match key {
            Some(k) => SendOptions::default().with_message_id(message_id(k)),
            None => SendOptions::default(),
        };
        log::debug!("send: handing the message to the client");
        match client
            .send_message_with_options(jid, message, options)
            .await
        {
            Ok(r) => {
                log::debug!("send: sent {}", r.message_id);
                let now = now_ms();
                if let (Some(k), Some(store)) = (key, &self.store) {
                    if let Err(e) = store.remember_sent(k, &r.message_id, now, SENT_TTL_MS) {
                        console_error!("whatsapp-web: remembering a sent piece failed: {e}");
                    }
                }
                self.update(|a| a.last_activity = Some(now));
                sent(r.message_id)
            }
            Err(e) => failed(format!("WhatsApp did not take the message: {e}"), true),
        }
    }

    /// The message a reply answers, as its quote needs it.
    fn quote(&self, chat: &str, id: &str) -> Option<Quote> {
        let kept = self
            .store
            .as_ref()
            .and_then(|s| tables::received(s, chat, id).ok().flatten());
        match kept {
            Some((sender, bytes)) => Some(Quote {
                id: id.to_string(),
                participant: sender,
                message: wa::Message::decode_from_slice(&bytes).ok(),
            }),
            // Not kept (older than a day): a DM's other side wrote it.
            None if !chat.ends_with("@g.us") => Some(Quote {
                id: id.to_string(),
                participant: chat.to_string(),
                message: None,
            }),
            None => None,
        }
    }

    /// A file from the gateway, encrypted and uploaded to WhatsApp's CDN.
    async fn upload(
        &self,
        client: &Client,
        file: &OutboundMedia,
    ) -> std::result::Result<Uploaded, ChannelSendResult> {
        let bytes = gateway::read_media(&self.env, &file.key)
            .await
            .map_err(|e| failed(e, true))?;
        let kind = outbound::upload_kind(file.media_type, &file.mime_type);
        let up = client
            .upload(bytes, kind, UploadOptions::default())
            .await
            .map_err(|e| {
                failed(
                    format!("uploading {} to WhatsApp failed: {e}", file.filename),
                    true,
                )
            })?;
        Ok(Uploaded {
            url: up.url,
            direct_path: up.direct_path,
            media_key: up.media_key,
            file_enc_sha256: up.file_enc_sha256,
            file_sha256: up.file_sha256,
            file_length: up.file_length,
            media_key_timestamp: up.media_key_timestamp,
            streaming_sidecar: up.streaming_sidecar,
        })
    }

    /// Typing on: `composing` now, renewed by the alarm until it is turned
    /// off, an answer goes to the chat, or it runs out.
    pub async fn typing(&self, p: ChannelTypingParams) -> OkResult {
        let fail = |e: String| OkResult {
            ok: false,
            error: Some(e),
        };
        let jid = match peer_jid(&p.peer.id) {
            Ok(j) => j,
            Err(e) => return fail(e),
        };
        if !p.typing {
            self.stop_typing(&jid).await;
            return OkResult {
                ok: true,
                error: None,
            };
        }
        let Some(store) = &self.store else {
            return fail("the account's storage is not open".into());
        };
        let now = now_ms();
        let kind = Deadline::Typing(jid.clone()).kind();
        if let Err(e) = store.set_deadline(&kind, now + TYPING_RENEW_MS, Some(now + TYPING_MAX_MS))
        {
            return fail(format!("keeping typing's deadline failed: {e}"));
        }
        log::debug!("typing: on in {jid}");
        self.arm().await;
        match self.chat_state(&jid, true).await {
            Ok(()) => OkResult {
                ok: true,
                error: None,
            },
            Err(e) => fail(e),
        }
    }

    pub async fn renew_typing(&self, jid: &str, expired: bool) {
        let Some(store) = &self.store else {
            return;
        };
        let kind = Deadline::Typing(jid.to_string()).kind();
        if expired {
            let _ = store.clear_deadline(&kind);
            let _ = self.chat_state(jid, false).await;
            return;
        }
        if let Err(e) = self.chat_state(jid, true).await {
            console_log!("whatsapp-web: renewing typing failed: {e}");
        }
        let until = store
            .due(i64::MAX, &kind)
            .ok()
            .and_then(|d| d.into_iter().next())
            .and_then(|d| d.until_ms);
        let _ = store.set_deadline(&kind, now_ms() + TYPING_RENEW_MS, until);
    }

    async fn stop_typing(&self, jid: &str) {
        let Some(store) = &self.store else {
            return;
        };
        let kind = Deadline::Typing(jid.to_string()).kind();
        let was = store
            .due(ANY_TIME, &kind)
            .map(|d| !d.is_empty())
            .unwrap_or(false);
        if was {
            let _ = store.clear_deadline(&kind);
            let _ = self.chat_state(jid, false).await;
        }
    }

    async fn chat_state(&self, jid: &str, composing: bool) -> std::result::Result<(), String> {
        let client = self
            .client()
            .filter(|c| c.is_connected())
            .ok_or("not connected to WhatsApp")?;
        let to = Jid::from_str(jid).map_err(|e| format!("{jid}: {e}"))?;
        let chat = client.chatstate();
        let sent = match composing {
            true => chat.send_composing(&to).await,
            false => chat.send_paused(&to).await,
        };
        sent.map_err(|e| format!("{e}"))
    }
}
