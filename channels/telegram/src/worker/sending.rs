//! The account's sends: a text as HTML (plain when Telegram cannot read
//! the HTML), files by upload, each piece once per idempotency key; and
//! what a refused token does to the account.

use super::account_do::{now_ms, random_bytes, TelegramAccount};
use super::bot_client::{self, api_base};
use super::store::SENT_TTL_MS;
use crate::api::ApiError;
use crate::outbound::{self, file_method, fits_caption, send_message, sent_id, Target, Upload};
use crate::CHANNEL_ID;
use gsv_channel_worker::gateway;
use gsv_protocol::channels::*;
use worker::*;

fn send_failed(e: ApiError) -> ChannelSendResult {
    ChannelSendResult {
        ok: false,
        message_id: None,
        error: Some(e.message),
        retryable: Some(e.retryable),
        retry_after_ms: e.retry_after_ms,
    }
}

/// A failure decided here, before Telegram was asked.
fn refusal(message: String, retryable: bool) -> ApiError {
    ApiError {
        message,
        code: None,
        retryable,
        retry_after_ms: None,
    }
}

impl TelegramAccount {
    /// One piece: its message id (`"{chat}:{message}"`), or why not.
    pub(super) async fn send(&self, p: ChannelSendParams) -> ChannelSendResult {
        let msg = &p.message;
        let target = match outbound::target(&msg.peer, msg.reply_to_id.as_deref()) {
            Ok(t) => t,
            Err(e) => return send_failed(refusal(e, false)),
        };
        // The answer is here: the chat stops showing typing.
        self.stop_typing(&target).await;
        let Some(token) = self.token() else {
            return send_failed(refusal(
                format!(
                    "the account {} is not started: gsv channel start telegram",
                    p.account_id
                ),
                false,
            ));
        };
        let key = msg.idempotency_key.as_deref().filter(|k| !k.is_empty());
        // A retry of a piece Telegram already took: the same answer, not a second message.
        if let Some(id) = key.and_then(|k| self.sent(k)) {
            return sent_ok(id);
        }
        // A retry while the first try still waits for Telegram (the
        // gateway gave up on it): later, when its outcome is known.
        if let Some(key) = key {
            if !self.sending.borrow_mut().insert(key.to_string()) {
                return send_failed(ApiError {
                    retry_after_ms: Some(5_000),
                    ..refusal(
                        "an earlier send of this piece is still under way".into(),
                        true,
                    )
                });
            }
        }
        let result = self.send_piece(&token, &target, msg, key).await;
        if let Some(key) = key {
            self.sending.borrow_mut().remove(key);
        }
        result
    }

    async fn send_piece(
        &self,
        token: &str,
        target: &Target,
        msg: &ChannelOutboundMessage,
        key: Option<&str>,
    ) -> ChannelSendResult {
        let sent = match msg.media.is_empty() {
            true => self.send_text(token, target, &msg.text, &msg.actions).await,
            false => self.send_files(token, target, msg, key).await,
        };
        match sent {
            Ok(id) => {
                self.remember(key, &id);
                self.update(|a| a.last_activity = Some(now_ms()));
                sent_ok(id)
            }
            Err(e) => {
                if e.token_refused() {
                    self.token_refused(&e.message).await;
                }
                send_failed(e)
            }
        }
    }

    fn sent(&self, key: &str) -> Option<String> {
        self.store.as_ref()?.sent_id(key).ok().flatten()
    }

    fn remember(&self, key: Option<&str>, id: &str) {
        if let (Some(store), Some(key)) = (&self.store, key) {
            if let Err(e) = store.remember_sent(key, id, now_ms(), SENT_TTL_MS) {
                console_error!("telegram: remembering sent {id} failed: {e}");
            }
        }
    }

    /// `sendMessage` as HTML; again as plain text when Telegram cannot
    /// read the HTML.
    async fn send_text(
        &self,
        token: &str,
        target: &Target,
        text: &str,
        actions: &[ChannelAction],
    ) -> Result<String, ApiError> {
        if text.trim().is_empty() {
            return Err(refusal(
                "the message is empty: Telegram refuses empty texts".into(),
                false,
            ));
        }
        let base = api_base(&self.env);
        let html = send_message(target, text, false, actions);
        let (status, body) = bot_client::call_raw(&base, token, &html).await?;
        match sent_id(status, &body) {
            Err(e) if e.entities_refused() => {
                console_log!(
                    "telegram: the HTML was refused ({}); sending plain text",
                    e.message
                );
                let plain = send_message(target, text, true, actions);
                let (status, body) = bot_client::call_raw(&base, token, &plain).await?;
                sent_id(status, &body)
            }
            other => other,
        }
    }

    /// The piece's files, each uploaded by the method Telegram plays it
    /// with; the text is the first file's caption when it fits, else its
    /// own message first. Each part is remembered under the piece's key,
    /// so a retry sends only what did not go.
    async fn send_files(
        &self,
        token: &str,
        target: &Target,
        msg: &ChannelOutboundMessage,
        key: Option<&str>,
    ) -> Result<String, ApiError> {
        let captioned = msg.media.len() == 1 && fits_caption(&msg.text);
        let mut target = target.clone();
        let mut last = None;
        if !msg.text.trim().is_empty() && !captioned {
            let part = key.map(|k| format!("{k}#text"));
            let id = match part.as_deref().and_then(|k| self.sent(k)) {
                Some(id) => id,
                None => {
                    self.send_text(token, &target, &msg.text, &msg.actions)
                        .await?
                }
            };
            self.remember(part.as_deref(), &id);
            // The text answered the message; the files follow it.
            target.reply_to = None;
            last = Some(id);
        }
        for (i, file) in msg.media.iter().enumerate() {
            let part = key.map(|k| format!("{k}#{i}"));
            if let Some(id) = part.as_deref().and_then(|k| self.sent(k)) {
                target.reply_to = None;
                last = Some(id);
                continue;
            }
            let method = file_method(&file.mime_type, file.size).map_err(|e| refusal(e, false))?;
            let bytes = gateway::read_media(&self.env, &file.key)
                .await
                .map_err(|e| refusal(e, true))?;
            let first_caption = i == 0 && captioned;
            let no_text = msg.text.trim().is_empty();
            let upload = Upload {
                target: &target,
                method,
                filename: &file.filename,
                mime: &file.mime_type,
                bytes: &bytes,
                caption: first_caption.then_some(msg.text.as_str()),
                // The buttons go with the text, or under the last file.
                actions: match first_caption || (no_text && i + 1 == msg.media.len()) {
                    true => &msg.actions,
                    false => &[],
                },
            };
            let id = self.upload(token, &upload).await?;
            self.remember(part.as_deref(), &id);
            target.reply_to = None;
            last = Some(id);
        }
        last.ok_or_else(|| refusal("nothing to send".into(), false))
    }

    async fn upload(&self, token: &str, upload: &Upload<'_>) -> Result<String, ApiError> {
        let base = api_base(&self.env);
        let boundary = format!("gsv{}", hex(&random_bytes::<12>()));
        let method = upload.method.method();
        let (content_type, body) = upload.form(&boundary, false);
        let (status, answer) =
            bot_client::upload(&base, token, method, &content_type, &body).await?;
        match sent_id(status, &answer) {
            Err(e) if e.entities_refused() && upload.caption.is_some() => {
                let (content_type, body) = upload.form(&boundary, true);
                let (status, answer) =
                    bot_client::upload(&base, token, method, &content_type, &body).await?;
                sent_id(status, &answer)
            }
            other => other,
        }
    }

    /// Telegram refused the token mid-flight: the account says so, and the
    /// gateway hears it.
    pub(super) async fn token_refused(&self, description: &str) {
        self.update(|a| {
            a.authenticated = false;
            a.error = Some(crate::account::token_refused(description));
        });
        self.report_status().await;
    }

    /// Tells the gateway how the account is doing now.
    pub(super) async fn report_status(&self) {
        let Some((id, account)) = self.account.get() else {
            return;
        };
        let has_token = account.token(self.env_token().as_deref()).is_some();
        let params = ChannelStatusParams {
            channel: CHANNEL_ID.into(),
            account_id: id.clone(),
            status: account.status(&id, has_token),
        };
        gateway::report_status(&self.env, &params).await;
    }
}

fn sent_ok(id: String) -> ChannelSendResult {
    ChannelSendResult {
        ok: true,
        message_id: Some(id),
        error: None,
        retryable: None,
        retry_after_ms: None,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
