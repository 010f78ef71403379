//! The channel and pairing methods: `channels.list`, `channel.start|stop|
//! status|login|logout` (passed to the channel, its answers recorded in
//! the registry) and `pair.list|approve|reject`. An approval adds the
//! sender to `channels.<ch>.allowFrom` and tells them through their chat,
//! whatever the channel's transport.

use super::Gateway;
use crate::channels::access::ChannelAccess;
use crate::channels::delivery::{receipt_change, ReceiptChange};
use crate::channels::pairing::{self, PendingPair as Pending, APPROVED_REPLY};
use crate::routing::normalize::{normalize_account_id, normalize_channel};
use crate::worker::channels::Channel;
use crate::worker::rpc::now_ms;
use gsv_protocol::channels::{
    ChannelDeliveryParams, ChannelLoginParams, ChannelPeer, ChannelStatusParams, DeliveryState,
    OkResult, PeerKind,
};
use gsv_protocol::*;
use serde_json::Value;
use std::collections::BTreeMap;

type Res<T> = std::result::Result<T, ErrorShape>;

fn no_channel(name: &str) -> ErrorShape {
    ErrorShape::new(
        codes::NOT_FOUND,
        format!(
            "No {name} channel: deploy its Worker with a service binding CHANNEL_{} on the gateway, \
             or connect it over WebSocket",
            name.to_ascii_uppercase()
        ),
    )
}

fn refused(channel: &str, r: OkResult) -> Res<()> {
    match r.ok {
        true => Ok(()),
        false => Err(ErrorShape::new(
            codes::BAD_REQUEST,
            format!(
                "The {channel} channel refused: {}",
                r.error.unwrap_or_else(|| "no reason given".into())
            ),
        )),
    }
}

impl Gateway {
    fn named_channel(&self, name: &str) -> Res<(String, Box<dyn Channel>)> {
        let name = normalize_channel(name);
        let channel = self.channel(&name).ok_or_else(|| no_channel(&name))?;
        Ok((name, channel))
    }

    pub(in crate::worker::gateway_do) async fn channels_list(&self) -> Res<ChannelsListResult> {
        let store = self.channel_store();
        let mut channels = Vec::new();
        for row in store.accounts()? {
            let (failed_deliveries, last_delivery_error) =
                store.failures(&row.channel, &row.account_id)?;
            let (delivered, read) = store.receipts(&row.channel, &row.account_id)?;
            channels.push(ChannelRegistryEntry {
                transport: self
                    .channel(&row.channel)
                    .map(|c| c.transport().to_string()),
                status: row.status(),
                channel: row.channel,
                account_id: row.account_id,
                connected_at: row.connected_at,
                last_message_at: row.last_message_at,
                failed_deliveries,
                last_delivery_error,
                delivered,
                read,
            });
        }
        let warnings =
            crate::trust::explain::warnings(&self.config.borrow(), &self.routing.borrow());
        Ok(ChannelsListResult {
            count: channels.len() as u64,
            channels,
            warnings,
        })
    }

    pub(in crate::worker::gateway_do) async fn channel_start(
        &self,
        p: ChannelStartRpcParams,
    ) -> Res<ChannelAccountResult> {
        let (name, channel) = self.named_channel(&p.channel)?;
        let account = normalize_account_id(&p.account_id);
        let r = channel
            .start(&account, p.config.unwrap_or_default())
            .await?;
        refused(&name, r)?;
        self.refresh_status(&name, &*channel, &account).await;
        Ok(ChannelAccountResult {
            ok: true,
            channel: name,
            account_id: account,
            message: None,
        })
    }

    /// `channel.stop` (`logout: false`) or `channel.logout`: the account
    /// leaves the registry once the channel has let it go.
    pub(in crate::worker::gateway_do) async fn channel_end(
        &self,
        p: ChannelAccountParams,
        logout: bool,
    ) -> Res<ChannelAccountResult> {
        let (name, channel) = self.named_channel(&p.channel)?;
        let account = normalize_account_id(&p.account_id);
        let answer = match logout {
            true => channel.logout(&account).await?,
            false => channel.stop(&account).await?,
        };
        refused(&name, answer)?;
        self.channel_store().forget_account(&name, &account)?;
        Ok(ChannelAccountResult {
            ok: true,
            channel: name,
            account_id: account,
            message: None,
        })
    }

    pub(in crate::worker::gateway_do) async fn channel_status(
        &self,
        p: ChannelStatusRpcParams,
    ) -> Res<ChannelStatusRpcResult> {
        let (name, channel) = self.named_channel(&p.channel)?;
        let account = p.account_id.as_deref().map(normalize_account_id);
        let accounts = channel.status(account.as_deref()).await?;
        let store = self.channel_store();
        let mut undelivered = Vec::new();
        let mut owed = Vec::new();
        for status in &accounts {
            store.update_status(&name, status, now_ms())?;
            let answers = store.owed_answers(&name, &status.account_id)?;
            let pieces = store.pending_pieces(&name, &status.account_id)?;
            if answers + pieces > 0 {
                owed.push(OwedAnswers {
                    account_id: status.account_id.clone(),
                    answers,
                    pieces,
                });
            }
            let (count, last_error) = store.failures(&name, &status.account_id)?;
            if count > 0 {
                undelivered.push(UndeliveredPieces {
                    account_id: status.account_id.clone(),
                    count,
                    last_error,
                });
            }
        }
        Ok(ChannelStatusRpcResult {
            channel: name,
            accounts,
            undelivered,
            owed,
        })
    }

    /// Asks the channel how an account is doing and records it.
    async fn refresh_status(&self, name: &str, channel: &dyn Channel, account: &str) {
        if let Ok(accounts) = channel.status(Some(account)).await {
            let store = self.channel_store();
            for status in &accounts {
                let _ = store.save_status(name, status, now_ms());
            }
        }
    }

    /// A channel Worker reporting an account's status on its own.
    pub(in crate::worker::gateway_do) fn channel_status_changed(
        &self,
        p: ChannelStatusParams,
    ) -> Res<OkResult> {
        let name = normalize_channel(&p.channel);
        self.channel_store()
            .save_status(&name, &p.status, now_ms())?;
        Ok(OkResult {
            ok: true,
            error: None,
        })
    }

    /// A channel's receipt for a message it sent (WhatsApp's `statuses`),
    /// recorded on the ledger's piece: delivered, read, or failed after
    /// the platform had accepted it (then `channels.list` and
    /// `channel.status` count it as undelivered, with the reason). A
    /// receipt for a message the ledger does not know yet waits for it
    /// (`apply_early_receipts`).
    pub(in crate::worker::gateway_do) fn channel_delivery(
        &self,
        p: ChannelDeliveryParams,
    ) -> Res<OkResult> {
        let name = normalize_channel(&p.channel);
        let account = normalize_account_id(&p.account_id);
        let at = p.timestamp.unwrap_or_else(now_ms);
        let store = self.channel_store();
        let known = self.record_receipt(
            &name,
            &account,
            &p.message_id,
            p.state,
            p.error.as_deref(),
            at,
        )?;
        if !known && p.state != DeliveryState::Sent {
            store.keep_early_receipt(
                &name,
                &account,
                &p.message_id,
                p.state,
                p.error.as_deref(),
                now_ms(),
            )?;
        }
        Ok(OkResult {
            ok: true,
            error: None,
        })
    }

    /// The receipts that came for `message_id` before its send's answer,
    /// now that the ledger knows it.
    pub(super) fn apply_early_receipts(
        &self,
        channel: &str,
        account_id: &str,
        message_id: &str,
    ) -> Res<()> {
        let early = self
            .channel_store()
            .take_early_receipts(channel, account_id, message_id)?;
        for (state, error, at) in early {
            self.record_receipt(channel, account_id, message_id, state, error.as_deref(), at)?;
        }
        Ok(())
    }

    /// Records a receipt on its piece; false when no piece has that id.
    fn record_receipt(
        &self,
        channel: &str,
        account_id: &str,
        message_id: &str,
        state: DeliveryState,
        error: Option<&str>,
        at: i64,
    ) -> Res<bool> {
        let store = self.channel_store();
        let Some(piece) = store.sent_piece(channel, account_id, message_id)? else {
            return Ok(false);
        };
        match receipt_change(&piece.status, piece.receipt(), state, error) {
            ReceiptChange::Nothing => {}
            ReceiptChange::Receipt(state) => store.set_receipt(&piece.key, state, at)?,
            ReceiptChange::Failed(reason) => {
                worker::console_error!(
                    "gateway: {channel}/{account_id} could not deliver {message_id}: {reason}"
                );
                store.fail_after_send(&piece.key, &reason, now_ms())?
            }
        }
        Ok(true)
    }

    pub(in crate::worker::gateway_do) async fn channel_login(
        &self,
        p: ChannelLoginRpcParams,
    ) -> Res<ChannelLoginRpcResult> {
        let (name, channel) = self.named_channel(&p.channel)?;
        let account = normalize_account_id(&p.account_id);
        let params = ChannelLoginParams {
            account_id: account.clone(),
            force: p.force,
            phone_number: p.phone_number,
        };
        let r = channel.login(&params).await?;
        Ok(ChannelLoginRpcResult {
            ok: r.ok,
            channel: name,
            account_id: account,
            qr_data_url: r.qr_data_url,
            qr: r.qr,
            pair_code: r.pair_code,
            linked: r.linked,
            message: r.message,
        })
    }

    fn live_pairs(&self) -> Res<Vec<Pending>> {
        let store = self.channel_store();
        store.drop_expired_pairs(now_ms() - pairing::CODE_TTL_MS)?;
        store.pending_pairs()
    }

    pub(in crate::worker::gateway_do) fn pair_list(&self) -> Res<PairListResult> {
        let pairs = self
            .live_pairs()?
            .into_iter()
            .map(|p| {
                let entry = PendingPair {
                    channel: p.channel.clone(),
                    account_id: p.account_id.clone(),
                    sender_id: p.sender_id.clone(),
                    sender_name: p.sender_name.clone(),
                    code: p.code.clone(),
                    requested_at: p.created_at_ms,
                    expires_at: p.expires_at_ms(),
                };
                (p.address(), entry)
            })
            .collect::<BTreeMap<_, _>>();
        Ok(PairListResult { pairs })
    }

    /// The pending request the params name: by code, or channel + sender.
    fn chosen_pair(&self, p: &PairDecisionParams) -> Res<Pending> {
        let selector = match (&p.code, &p.channel, &p.sender_id) {
            (Some(code), _, _) if !code.trim().is_empty() => code.clone(),
            (_, Some(channel), Some(sender)) => {
                let channel = normalize_channel(channel);
                let sender =
                    ChannelAccess::from_config(&self.config.borrow(), &channel).normalize(sender);
                format!("{channel}:{sender}")
            }
            _ => {
                return Err(ErrorShape::new(
                    codes::BAD_REQUEST,
                    "Name the request by its code, or by channel and senderId",
                ))
            }
        };
        let pairs = self.live_pairs()?;
        pairing::find(&pairs, &selector, now_ms())
            .cloned()
            .ok_or_else(|| {
                ErrorShape::new(
                    codes::NOT_FOUND,
                    format!("No pending pairing request {selector} (codes expire after an hour)"),
                )
            })
    }

    pub(in crate::worker::gateway_do) async fn pair_approve(
        &self,
        p: PairDecisionParams,
    ) -> Res<PairApproveResult> {
        let pair = self.chosen_pair(&p)?;
        // The sender joins allowFrom; the request goes once that is stored.
        let path = format!("channels.{}.allowFrom", pair.channel);
        let mut allow: Vec<Value> = self
            .config
            .borrow()
            .raw(&path)
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default();
        if !allow
            .iter()
            .any(|v| v.as_str() == Some(pair.sender_id.as_str()))
        {
            allow.push(Value::String(pair.sender_id.clone()));
        }
        self.config_set(ConfigSetParams {
            path,
            value: Value::Array(allow),
        })?;
        self.channel_store().delete_pair(&pair)?;
        let peer = ChannelPeer {
            kind: PeerKind::Dm,
            id: pair.peer_id.clone(),
            name: pair.sender_name.clone(),
            handle: None,
            thread_id: None,
        };
        let source = format!("paired:{}:{}", pair.address(), pair.created_at_ms);
        let sent = self
            .send_text(
                &pair.channel,
                &pair.account_id,
                &peer,
                &source,
                APPROVED_REPLY,
                None,
            )
            .await?;
        Ok(PairApproveResult {
            approved: true,
            channel: pair.channel,
            sender_id: pair.sender_id,
            sender_name: pair.sender_name,
            notified: sent.failed.is_none(),
        })
    }

    pub(in crate::worker::gateway_do) fn pair_reject(
        &self,
        p: PairDecisionParams,
    ) -> Res<PairRejectResult> {
        let pair = self.chosen_pair(&p)?;
        self.channel_store().delete_pair(&pair)?;
        Ok(PairRejectResult {
            rejected: true,
            channel: pair.channel,
            sender_id: pair.sender_id,
        })
    }
}
