//! A message from a chat app, from a channel Worker (internal path) or a
//! channel socket (`channel.inbound`). In order: check it, drop a
//! redelivery, decide access (pairing an unknown sender), route it to an
//! agent and session, then hand it to the session with its envelope while
//! the chat shows typing. Nothing of a refused or pending sender is stored
//! in any session.

use super::Gateway;
use crate::channels::access::{decide, Access, ChannelAccess};
use crate::channels::delivery::TYPING_RENEW_MS;
use crate::channels::envelope::envelope_time;
use crate::channels::pairing::{self, code_reply, Asker, PairRequest};
use crate::routing::normalize::{normalize_account_id, normalize_channel};
use crate::routing::{resolve_route, Inbound};
use crate::session::internal::{ChannelTurn, SessionChatSend, SessionChatSendReply};
use crate::worker::rpc::{new_id, now_ms};
use crate::worker::tz::user_time_zone;
use gsv_protocol::channels::*;
use gsv_protocol::{codes, ErrorShape};
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

/// The longest text taken from a chat message (longer is cut, and said so).
const MAX_TEXT_CHARS: usize = 32_000;

fn answer(status: InboundStatus) -> ChannelInboundResult {
    ChannelInboundResult {
        ok: true,
        status,
        session_key: None,
        run_id: None,
        error: None,
    }
}

fn bad(what: &str) -> ErrorShape {
    ErrorShape::new(
        codes::BAD_REQUEST,
        format!("Invalid channel message: {what}"),
    )
}

/// The message's text, cut at `MAX_TEXT_CHARS`, after the text it
/// quotes (its attachments go with it as blocks).
fn message_text(msg: &ChannelInboundMessage) -> String {
    let mut text: String = msg.text.chars().take(MAX_TEXT_CHARS).collect();
    if msg.text.chars().count() > MAX_TEXT_CHARS {
        text.push_str("\n[… message cut at 32000 characters]");
    }
    if let Some(quoted) = msg
        .reply_to_text
        .as_deref()
        .filter(|q| !q.trim().is_empty())
    {
        let quoted: String = quoted.chars().take(500).collect();
        text = format!("[replying to: {quoted}]\n{text}");
    }
    text
}

/// Why a message was not taken, as the channel must read it: the session
/// could not be reached or failed, so the channel tries again later (it
/// holds the message); only a message the session judged bad is not
/// worth another try.
fn not_taken(e: ErrorShape) -> ErrorShape {
    if e.code == codes::BAD_REQUEST {
        return e;
    }
    ErrorShape::new(
        codes::UNAVAILABLE,
        format!(
            "The session did not take the message; try again: {}",
            e.message
        ),
    )
    .retryable(true)
}

impl Gateway {
    pub(in crate::worker::gateway_do) async fn channel_inbound(
        &self,
        p: ChannelInboundParams,
    ) -> Res<ChannelInboundResult> {
        let channel = normalize_channel(&p.channel);
        let account_id = normalize_account_id(&p.account_id);
        let msg = &p.message;
        if channel.is_empty() {
            return Err(bad("channel is required"));
        }
        if msg.message_id.trim().is_empty() {
            return Err(bad("message.messageId is required"));
        }
        if msg.peer.id.trim().is_empty() {
            return Err(bad("message.peer.id is required"));
        }
        if msg.text.trim().is_empty() && msg.media.is_empty() {
            return Ok(answer(InboundStatus::Ignored));
        }
        let store = self.channel_store();
        if store.was_taken(&channel, &account_id, &msg.message_id)? {
            console_log!(
                "gateway: {channel} redelivered {}; taken once already",
                msg.message_id
            );
            return Ok(answer(InboundStatus::Ignored));
        }
        self.take_message(&channel, &account_id, msg).await
    }

    /// A message not taken before: access decided (pairing an unknown
    /// sender), then run in its session. It is marked taken only once it
    /// was (its session stored it, or the owner's decision was applied):
    /// a hand-over that failed is answered as retryable, and the channel's
    /// retry runs it (the session takes each message once, should the
    /// first have reached it). A redelivery of one ignored or paired runs
    /// to the same end again, and needs no mark.
    async fn take_message(
        &self,
        channel: &str,
        account_id: &str,
        msg: &ChannelInboundMessage,
    ) -> Res<ChannelInboundResult> {
        let (channel, account_id) = (channel.to_string(), account_id.to_string());
        let store = self.channel_store();
        let now = now_ms();
        store.touch_account(&channel, &account_id, now)?;
        let is_group = msg.peer.kind != PeerKind::Dm;
        let sender = msg.sender.clone().unwrap_or_else(|| ChannelSender {
            id: msg.peer.id.clone(),
            name: msg.peer.name.clone(),
            handle: msg.peer.handle.clone(),
            is_bot: None,
        });
        if sender.is_bot == Some(true) {
            return Ok(answer(InboundStatus::Ignored));
        }
        let addressed = msg.was_mentioned || msg.is_reply_to_bot == Some(true);
        let access = ChannelAccess::from_config(&self.config.borrow(), &channel);
        // The owner's own identities are never strangers to pair.
        let owner_dm = !is_group
            && self
                .routing
                .borrow()
                .is_owner(Some(&channel), &access.normalize(&sender.id));
        let decided = match owner_dm {
            true => Access::Allow,
            false => decide(&access, &sender.id, is_group, addressed),
        };
        match decided {
            Access::Allow => {}
            Access::Pair => {
                return self
                    .pair_sender(&channel, &account_id, msg, &sender, &access)
                    .await
            }
            Access::Ignore(reason) => {
                console_log!(
                    "gateway: {channel} message from {} ignored: {reason}",
                    sender.id
                );
                let status = match addressed || !is_group {
                    true => InboundStatus::Blocked,
                    false => InboundStatus::Ignored,
                };
                return Ok(answer(status));
            }
        }
        if owner_dm {
            // Approval requests go to the chat the owner last wrote from,
            // and an answer to one is the owner's decision, not a message.
            self.note_owner_chat(&channel, &account_id, &msg.peer);
            if let Some(text) = self.owner_reply(&msg.text).await {
                let source = format!("approval-reply:{channel}:{account_id}:{}", msg.message_id);
                self.send_text(
                    &channel,
                    &account_id,
                    &msg.peer,
                    &source,
                    &text,
                    Some(&msg.message_id),
                )
                .await?;
                store.mark_taken(&channel, &account_id, &msg.message_id, now_ms())?;
                return Ok(answer(InboundStatus::Command));
            }
        }
        self.run_channel_message(&channel, &account_id, msg, &sender, &access)
            .await
    }

    /// An unknown sender under `pairing`: one reply with a code, the
    /// message itself dropped.
    async fn pair_sender(
        &self,
        channel: &str,
        account_id: &str,
        msg: &ChannelInboundMessage,
        sender: &ChannelSender,
        access: &ChannelAccess,
    ) -> Res<ChannelInboundResult> {
        let store = self.channel_store();
        let now = now_ms();
        store.drop_expired_pairs(now - pairing::CODE_TTL_MS)?;
        let sender_id = access.normalize(&sender.id);
        let asker = Asker {
            channel,
            account_id,
            sender_id: &sender_id,
            sender_name: sender.name.as_deref().or(sender.handle.as_deref()),
            peer_id: &msg.peer.id,
        };
        let mut random = [0u8; pairing::CODE_LEN];
        random.copy_from_slice(&uuid::Uuid::new_v4().as_bytes()[..pairing::CODE_LEN]);
        match pairing::request(
            &store.pending_pairs()?,
            &asker,
            pairing::code_from(random),
            now,
        ) {
            PairRequest::New(pair) => {
                store.save_pair(&pair)?;
                let source = format!("pair:{channel}:{account_id}:{sender_id}:{now}");
                let reply = code_reply(&pair.code);
                let sent = self
                    .send_text(channel, account_id, &msg.peer, &source, &reply, None)
                    .await?;
                if let Some(e) = sent.failed {
                    console_error!(
                        "gateway: the pairing code for {sender_id} was not delivered: {e}"
                    );
                }
                self.tell_owner_of_pair(&pair).await;
                Ok(answer(InboundStatus::PendingPairing))
            }
            PairRequest::AlreadyPending => Ok(answer(InboundStatus::PendingPairing)),
            PairRequest::Full => {
                console_log!("gateway: {channel}/{account_id} has 3 pairing requests pending; {sender_id} ignored");
                Ok(answer(InboundStatus::Blocked))
            }
        }
    }

    /// An allowed message: routed, enveloped and handed to its session.
    async fn run_channel_message(
        &self,
        channel: &str,
        account_id: &str,
        msg: &ChannelInboundMessage,
        sender: &ChannelSender,
        access: &ChannelAccess,
    ) -> Res<ChannelInboundResult> {
        let store = self.channel_store();
        let now = now_ms();
        let is_group = msg.peer.kind != PeerKind::Dm;
        // A DM is routed by who wrote it (identity links name people); a
        // group by where it was said.
        let sender_id = access.normalize(&sender.id);
        let (peer_kind, peer_id) = match is_group {
            true => ("group", msg.peer.id.as_str()),
            false => ("dm", sender_id.as_str()),
        };
        let route = resolve_route(
            &self.routing.borrow(),
            &Inbound {
                channel,
                account_id: Some(account_id),
                peer_kind,
                peer_id,
            },
        );
        store.save_last_active(
            &route.agent_id,
            channel,
            account_id,
            &msg.peer,
            &route.session_key,
            now,
        )?;
        let label = match is_group {
            true => msg.peer.name.clone().unwrap_or_else(|| msg.peer.id.clone()),
            false => sender
                .name
                .clone()
                .or(sender.handle.clone())
                .unwrap_or_else(|| sender.id.clone()),
        };
        self.touch_session(&route.session_key, Some(&label), true)?;

        let tz = user_time_zone(&self.config.borrow());
        let run_id = new_id();
        let mut send = SessionChatSend {
            channel: Some(ChannelTurn {
                channel: channel.to_string(),
                account_id: account_id.to_string(),
                time: envelope_time(&*tz, msg.timestamp.unwrap_or(now)),
                sender_id: sender.id.clone(),
                sender_name: sender.name.clone(),
                sender_handle: sender.handle.clone(),
                group: is_group
                    .then(|| msg.peer.name.clone().unwrap_or_else(|| msg.peer.id.clone())),
                // The owner's own identities remember as the owner does.
                person: (!is_group).then(|| match route.from_owner {
                    true => crate::memory::calls::OWNER.to_string(),
                    false => crate::memory::calls::person_of(
                        &self.routing.borrow().identity_links,
                        channel,
                        &sender_id,
                    ),
                }),
            }),
            trust: match (is_group, route.from_owner) {
                (true, _) => gsv_protocol::Trust::GROUP,
                (false, true) => gsv_protocol::Trust::OWNER,
                (false, false) => gsv_protocol::Trust::APPROVED,
            },
            inbound_id: Some(format!("{channel}:{account_id}:{}", msg.message_id)),
            ..self.message_for(&route.session_key, &run_id, message_text(msg))
        };
        // Recorded before the session runs: its first event finds the chat.
        store.save_run(
            &run_id,
            channel,
            account_id,
            &msg.peer,
            Some(&msg.message_id),
            &route.session_key,
            now,
            Some(now + TYPING_RENEW_MS),
        )?;
        self.follow_run(&run_id);
        crate::worker::fault::stop_at(&self.env, gsv_protocol::fault::INBOUND_RECORDED).await;
        // Typing comes on while the session takes the message, not
        // before; a message with files shows it while they are fetched
        // too (a second typing call then renews it).
        if !msg.media.is_empty() {
            self.typing(channel, account_id, &msg.peer, true).await;
        }
        let kept = self
            .keep_channel_media(channel, account_id, &msg.media, &route.session_key)
            .await;
        send.media = kept.attached;
        let ((), reply) = futures::join!(
            self.typing(channel, account_id, &msg.peer, true),
            self.send_to_session(send)
        );
        // The sender hears which of their files were too large to take.
        for (i, (name, size)) in kept.too_large.iter().enumerate() {
            let source = format!("media:{channel}:{account_id}:{}:{i}", msg.message_id);
            let text = crate::media::too_large_reply(name.as_deref(), *size);
            if let Err(e) = self
                .send_text(
                    channel,
                    account_id,
                    &msg.peer,
                    &source,
                    &text,
                    Some(&msg.message_id),
                )
                .await
            {
                console_error!(
                    "gateway: telling {} a file was too large failed: {}",
                    sender.id,
                    e.message
                );
            }
        }
        let reply = match reply {
            Ok(r) => r,
            Err(e) => {
                store.end_run(&run_id)?;
                self.typing(channel, account_id, &msg.peer, false).await;
                return Err(not_taken(e));
            }
        };
        // Taken before (a retry whose first hand-over reached the session):
        // the first answer stands, for the first run, whose chat is recorded.
        let (run_id, reply) = match reply {
            SessionChatSendReply::Taken {
                run_id: first,
                first: reply,
            } => {
                if first != run_id {
                    store.end_run(&run_id)?;
                }
                (first, *reply)
            }
            reply => (run_id, reply),
        };
        // In the same step as what follows the session's answer (the
        // alarm, the run's end), not a commit of its own.
        store.mark_taken(channel, account_id, &msg.message_id, now_ms())?;
        let started = |status| ChannelInboundResult {
            ok: true,
            status,
            session_key: Some(route.session_key.clone()),
            run_id: Some(run_id.clone()),
            error: None,
        };
        let (status, text, runs) = match reply {
            SessionChatSendReply::Started { .. } => {
                self.schedule_alarm().await;
                return Ok(started(InboundStatus::Started));
            }
            SessionChatSendReply::Command {
                response,
                error,
                run_id: command_run,
                ..
            } => (
                InboundStatus::Command,
                response.or(error),
                command_run.is_some(),
            ),
            SessionChatSendReply::DirectiveOnly { response, .. } => {
                (InboundStatus::Directive, response, false)
            }
            // The session answers a repeat with the first answer only.
            SessionChatSendReply::Taken { .. } => (InboundStatus::Ignored, None, false),
        };
        // A command answers at once; only `/new TEXT` goes on to a run.
        if !runs {
            store.end_run(&run_id)?;
            self.typing(channel, account_id, &msg.peer, false).await;
        }
        if let Some(text) = text {
            let source = format!("cmd:{channel}:{account_id}:{}", msg.message_id);
            self.send_text(
                channel,
                account_id,
                &msg.peer,
                &source,
                &text,
                Some(&msg.message_id),
            )
            .await?;
        }
        Ok(started(status))
    }
}
