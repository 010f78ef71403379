//! The account's sends: text through the Graph API (once per idempotency
//! key), a file by upload (`/{phone-number-id}/media`) then a message
//! naming it, the read receipt with typing, downloads of the files people
//! send, and what a refused token does to the account.

use super::account_do::{now_ms, WhatsAppAccount};
use super::graph_client::{self, api_base};
use crate::graph::{
    self, mark_read_with_typing, media_info, parse_media_info, send_kind, send_media, send_text,
    succeeded, upload_media, upload_type, uploaded_media_id, GraphError, GraphRequest,
};
use crate::lost_send::{after_lost_answer, receipt_wait_left, LostSend};
use crate::phone::to_wa_id;
use crate::CHANNEL_ID;
use gsv_channel_worker::gateway;
use gsv_protocol::channels::*;
use worker::*;

/// A retry of a piece whose earlier send got no answer, `age` ms after
/// that send (`lost_send`): `None` when it is sent again.
fn unknown_outcome(age: i64, receipts_name_sends: bool) -> Option<ChannelSendResult> {
    match after_lost_answer(age, receipts_name_sends) {
        // Tried again once the receipt could have come, not before: the
        // gateway's retries would be spent within the wait.
        LostSend::Wait => Some(ChannelSendResult {
            retry_after_ms: Some(receipt_wait_left(age)),
            ..send_failed(
                "an earlier send of this piece got no answer; waiting for WhatsApp's receipt before sending it again"
                    .into(),
                true,
            )
        }),
        LostSend::SendAgain => None,
        LostSend::GiveUp => Some(send_failed(
            "may not have been delivered: WhatsApp's answer to the send was lost and no receipt \
             named it within a minute; not sent again, to avoid sending it twice"
                .into(),
            false,
        )),
    }
}

fn send_failed(error: String, retryable: bool) -> ChannelSendResult {
    ChannelSendResult {
        ok: false,
        message_id: None,
        error: Some(error),
        retryable: Some(retryable),
        retry_after_ms: None,
    }
}

impl WhatsAppAccount {
    /// One text to a DM: Meta's message id, or why not in plain words.
    pub(super) async fn send(&self, p: ChannelSendParams) -> ChannelSendResult {
        let Some((account_id, account)) = self.account.get() else {
            return send_failed(
                "the account is not started: gsv channel start whatsapp".into(),
                false,
            );
        };
        if !account.started {
            return send_failed(
                format!("the account {account_id} is stopped: gsv channel start whatsapp --account {account_id}"),
                false,
            );
        }
        let msg = &p.message;
        if msg.peer.kind != PeerKind::Dm {
            return send_failed("WhatsApp groups are not handled: only DMs".into(), false);
        }
        let (Some(phone), Some(token)) = (
            account.phone_number_id.clone(),
            account.token(self.env_token().as_deref()),
        ) else {
            return send_failed(
                "the account has no phone number id or access token".into(),
                false,
            );
        };
        let key = msg.idempotency_key.as_deref().filter(|k| !k.is_empty());
        if let (Some(store), Some(key)) = (&self.store, key) {
            // A retry of a piece Meta already took: the same answer, not a second message.
            if let Ok(Some(id)) = store.sent_id(key) {
                return ChannelSendResult {
                    ok: true,
                    message_id: Some(id),
                    error: None,
                    retryable: None,
                    retry_after_ms: None,
                };
            }
            // A send whose answer never came: Meta may have taken it.
            if let Ok(Some(at)) = store.attempt_at(key) {
                let receipts_name_sends = store.tracked_receipts_seen(now_ms()).unwrap_or(false);
                if let Some(refusal) = unknown_outcome(now_ms() - at, receipts_name_sends) {
                    return refusal;
                }
            }
        }
        let to = to_wa_id(&msg.peer.id);
        let request = match msg.media.as_slice() {
            [] => send_text(&phone, &to, &msg.text, msg.reply_to_id.as_deref()),
            [file] => self.upload(&phone, &token, &to, file, msg).await,
            _ => Err(GraphError {
                message: "WhatsApp sends one file per message (the gateway sends each file as \
                          its own piece)"
                    .into(),
                retryable: false,
                token_refused: false,
            }),
        };
        let request = match request {
            Ok(r) => r,
            Err(e) => {
                if e.token_refused {
                    self.token_refused(&e.message).await;
                }
                return send_failed(e.message, e.retryable);
            }
        };
        let request = match key {
            Some(key) => graph::with_tracking(request, key),
            None => request,
        };
        // Stored before the call: should its answer be lost (a dropped
        // connection, a restart), the piece is not sent again blindly.
        if let (Some(store), Some(key)) = (&self.store, key) {
            if let Err(e) = store.begin_attempt(key, now_ms()) {
                return send_failed(format!("recording the send failed: {e}"), true);
            }
        }
        let called = graph_client::call(&api_base(&self.env), &token, &request).await;
        gsv_channel_worker::fault::stop_at(&self.env, gsv_protocol::fault::PLATFORM_CALLED).await;
        let answer = match called {
            Ok((status, body)) => graph::sent_message_id(status, &body),
            Err(e) => return send_failed(e, true),
        };
        gsv_channel_worker::fault::stop_at(&self.env, gsv_protocol::fault::PLATFORM_ANSWERED).await;
        // Meta answered: whatever it said, the outcome is known.
        if let (Some(store), Some(key), Err(_)) = (&self.store, key, &answer) {
            if let Err(e) = store.end_attempt(key) {
                console_error!("whatsapp: clearing a send's attempt failed: {e}");
            }
        }
        match answer {
            Ok(id) => {
                let now = now_ms();
                if let (Some(store), Some(key)) = (&self.store, key) {
                    if let Err(e) = store.remember_sent(key, &id, now) {
                        console_error!("whatsapp: remembering sent {id} failed: {e}");
                    }
                }
                self.touch(now);
                ChannelSendResult {
                    ok: true,
                    message_id: Some(id),
                    error: None,
                    retryable: None,
                    retry_after_ms: None,
                }
            }
            Err(e) => {
                if e.token_refused {
                    self.token_refused(&e.message).await;
                }
                send_failed(e.message, e.retryable)
            }
        }
    }

    /// Uploads `file` (read from the gateway) and gives the message that
    /// sends it, with the piece's text as its caption.
    async fn upload(
        &self,
        phone: &str,
        token: &str,
        to: &str,
        file: &OutboundMedia,
        msg: &ChannelOutboundMessage,
    ) -> Result<GraphRequest, GraphError> {
        let fail = |message: String, retryable: bool| GraphError {
            message,
            retryable,
            token_refused: false,
        };
        let mime = upload_type(&file.mime_type).map_err(|e| fail(e, false))?;
        let kind = send_kind(&mime, file.size).map_err(|e| fail(e, false))?;
        let bytes = gateway::read_media(&self.env, &file.key)
            .await
            .map_err(|e| fail(e, true))?;
        let boundary = format!("gsv{:016x}", (js_sys::Math::random() * 1e16) as u64);
        let (path, content_type, body) =
            upload_media(phone, &boundary, &mime, &file.filename, &bytes);
        let base = api_base(&self.env);
        let media_id = match graph_client::upload(&base, token, &path, &content_type, &body).await {
            Ok((status, answer)) => uploaded_media_id(status, &answer)?,
            Err(e) => return Err(fail(e, true)),
        };
        Ok(send_media(
            phone,
            to,
            kind,
            &media_id,
            &file.filename,
            Some(msg.text.as_str()),
            msg.reply_to_id.as_deref(),
        ))
    }

    /// A file someone sent (by its media id): `GET /{media-id}` for its
    /// short-lived URL, then the file from there with the same token,
    /// streamed back to the gateway. Refused unread when WhatsApp says it
    /// is larger than the gateway takes.
    pub(super) async fn fetch_media(&self, p: ChannelMediaFetchParams) -> Result<Response> {
        let refuse = |status: u16, error: String, size: Option<u64>| {
            Ok(Response::from_json(&MediaFetchRefusal { error, size })?.with_status(status))
        };
        let Some(media_id) = p.media.id.clone().filter(|id| !id.is_empty()) else {
            return refuse(400, "the media has no WhatsApp media id".into(), None);
        };
        let account = self.current().unwrap_or_default();
        let Some(token) = account.token(self.env_token().as_deref()) else {
            return refuse(503, "the account has no access token".into(), None);
        };
        let base = api_base(&self.env);
        let info = match graph_client::call(&base, &token, &media_info(&media_id)).await {
            Ok((status, body)) => parse_media_info(status, &body),
            Err(e) => return refuse(502, e, None),
        };
        let info = match info {
            Ok(info) => info,
            Err(e) => {
                if e.token_refused {
                    self.token_refused(&e.message).await;
                }
                return refuse(502, e.message, None);
            }
        };
        if let Some(size) = info.file_size.filter(|s| *s > p.max_bytes) {
            return refuse(413, "larger than the gateway takes".into(), Some(size));
        }
        let resp = match graph_client::download(&info.url, &token).await {
            Ok(r) => r,
            Err(e) => return refuse(502, e, None),
        };
        let status = resp.status_code();
        if status != 200 {
            let e = graph::failure(status, "");
            if e.token_refused {
                self.token_refused(&e.message).await;
            }
            return refuse(502, format!("downloading the file: {}", e.message), None);
        }
        Ok(resp)
    }

    /// Typing on: the chat's last message is marked read and the typing
    /// indicator shows (until the answer, or 25 s). Off is a no-op: the
    /// answer clears it.
    pub(super) async fn typing(&self, p: ChannelTypingParams) -> OkResult {
        let fail = |e: String| OkResult {
            ok: false,
            error: Some(e),
        };
        if !p.typing {
            return OkResult {
                ok: true,
                error: None,
            };
        }
        let account = self.current().unwrap_or_default();
        let (Some(phone), Some(token), true) = (
            account.phone_number_id.clone(),
            account.token(self.env_token().as_deref()),
            account.started,
        ) else {
            return fail("the account is not started".into());
        };
        let last = self
            .store
            .as_ref()
            .and_then(|s| s.last_message(&p.peer.id).ok().flatten());
        let Some(message_id) = last else {
            return fail(
                "WhatsApp shows typing only in answer to a message, and this chat has none".into(),
            );
        };
        let request = mark_read_with_typing(&phone, &message_id);
        match graph_client::call(&api_base(&self.env), &token, &request).await {
            Ok((status, body)) => match succeeded(status, &body) {
                Ok(()) => OkResult {
                    ok: true,
                    error: None,
                },
                Err(e) => fail(e.message),
            },
            Err(e) => fail(e),
        }
    }

    pub(super) fn touch(&self, now: i64) {
        let saved = self
            .account
            .update(self.store.as_deref(), |a| a.last_activity = Some(now));
        if let Err(e) = saved {
            console_error!("whatsapp: saving the account failed: {e}");
        }
    }

    /// Meta refused the token mid-flight: the account says so, and the
    /// gateway hears it.
    pub(super) async fn token_refused(&self, error: &str) {
        let Some((id, mut account)) = self.account.get() else {
            return;
        };
        account.authenticated = false;
        account.error = Some(error.to_string());
        let has_token = account.token(self.env_token().as_deref()).is_some();
        let status = account.status(&id, has_token);
        if let Err(e) = self.save(&id, account) {
            console_error!("whatsapp: saving the account failed: {e}");
        }
        let params = ChannelStatusParams {
            channel: CHANNEL_ID.into(),
            account_id: id,
            status,
        };
        gateway::report_status(&self.env, &params).await;
    }
}
