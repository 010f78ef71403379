//! Answers on their way back to chat apps. A run started from a chat has
//! a row in `channel_runs`; its `partial` and `final` texts (and a failed
//! run's reason) are split for the platform and put in the delivery
//! ledger, one queue per chat, and a pump sends each queue in order. A
//! piece is recorded before it is sent and marked once the platform took
//! it, so retries (a 429, a restart) never send a piece the chat has; a
//! piece that finally fails stays in the ledger for `channels.list`.

use super::store::{dest_key, ChannelRun, ChannelStore, DeliveryRow};
use super::Gateway;
use crate::channels::chunk::platform_limit;
use crate::channels::delivery::{delivery_key, pieces, retry_at, TYPING_MAX_MS, TYPING_RENEW_MS};
use crate::channels::run_check::{after_asking, RunCheck, CHECK_EVERY_MS};
use crate::media::mime;
use crate::media::outbound::{locate, split_media_lines, MAX_ATTACHMENTS};
use crate::session::internal::{
    ChannelMessageReply, ChannelMessageRequest, RunOutcome, RunOutcomeQuery,
};
use crate::worker::bindings::SessionStub;
use crate::worker::channels::{binding_name, BindingChannel, Channel, SocketChannel};
use crate::worker::rpc::now_ms;
use gsv_protocol::channel_key::derive_channel_key;
use gsv_protocol::channels::{
    ChannelAction, ChannelOutboundMessage, ChannelPeer, OutboundMedia, PeerKind,
};
use gsv_protocol::{codes, ChatEvent, ChatState, ClientMode, ErrorShape};
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

/// Run errors that say the user ended the run: nothing to tell the chat.
const QUIET_ERRORS: &[&str] = &["Run cancelled by user", "Run ended: the session was reset"];

/// What the pieces of one text were, once the pump has run.
pub(in crate::worker::gateway_do) struct Sent {
    pub pieces: usize,
    pub failed: Option<String>,
}

impl Gateway {
    /// The key channel Workers present, derived from the auth token.
    /// Derived once per instance: the token is a secret, fixed for the
    /// Worker's deployment.
    pub(super) fn channel_key(&self) -> Option<String> {
        self.channels
            .key
            .get_or_init(|| {
                let token = self.env.secret("GSV_AUTH_TOKEN").ok()?.to_string();
                (!token.is_empty()).then(|| derive_channel_key(&token))
            })
            .clone()
    }

    /// The channel named `name`: a channel connected over WebSocket under
    /// that name (it said so itself), else its Worker's service binding.
    pub(in crate::worker::gateway_do) fn channel(&self, name: &str) -> Option<Box<dyn Channel>> {
        let prefix = format!("{name}:");
        let socket = self.sockets().iter().find_map(|(ws, att)| {
            let peer = att.peer.as_ref()?;
            (peer.mode == ClientMode::Channel && peer.client_id.starts_with(&prefix))
                .then(|| Box::new(SocketChannel::new(name, ws.clone())) as Box<dyn Channel>)
        });
        if socket.is_some() {
            return socket;
        }
        let fetcher = self.env.service(&binding_name(name)).ok()?;
        let key = self.channel_key()?;
        Some(Box::new(BindingChannel::new(name, fetcher, key)))
    }

    /// The longest text one send to `channel` takes: what its Worker says
    /// (asked once per instance), else what its platform is known for.
    async fn text_limit(&self, channel: &str) -> usize {
        if let Some(limit) = self.channels.text_limits.borrow().get(channel) {
            return *limit;
        }
        let asked = match self.channel(channel) {
            Some(c) => c.capabilities().await.ok(),
            None => None,
        };
        match asked {
            Some(caps) => {
                self.channels
                    .text_limits
                    .borrow_mut()
                    .insert(channel.to_string(), caps.max_text_length);
                caps.max_text_length
            }
            None => platform_limit(channel),
        }
    }

    /// Splits `text` for the chat and queues it, then one piece per file;
    /// `source_id` names the message (a run's part, a command's answer) so
    /// queuing it again adds nothing. `actions` go under the last piece of
    /// text. Returns the pieces' ledger keys.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn queue_text(
        &self,
        channel: &str,
        account_id: &str,
        peer: &ChannelPeer,
        source_id: &str,
        text: &str,
        reply_to: Option<&str>,
        media: &[OutboundMedia],
        actions: &[ChannelAction],
    ) -> Res<Vec<String>> {
        let limit = self.text_limit(channel).await;
        let store = self.channel_store();
        let now = now_ms();
        let mut keys = Vec::new();
        let texts = pieces(source_id, text, limit, reply_to);
        // Each file is a piece of its own: a retry resends that file only.
        let first_file = texts.len() as u32;
        for (i, piece) in texts.into_iter().enumerate() {
            let key = piece.key();
            let last = i as u32 + 1 == first_file;
            store.enqueue(
                &key,
                channel,
                account_id,
                peer,
                &piece.text,
                piece.reply_to.as_deref(),
                &[],
                if last { actions } else { &[] },
                now,
            )?;
            keys.push(key);
        }
        for (i, file) in media.iter().enumerate() {
            let key = delivery_key(source_id, first_file + i as u32);
            let reply = (first_file == 0 && i == 0).then_some(reply_to).flatten();
            store.enqueue(
                &key,
                channel,
                account_id,
                peer,
                "",
                reply,
                std::slice::from_ref(file),
                &[],
                now,
            )?;
            keys.push(key);
        }
        Ok(keys)
    }

    /// Queues `text` and sends its chat's queue now; says how it went.
    pub(super) async fn send_text(
        &self,
        channel: &str,
        account_id: &str,
        peer: &ChannelPeer,
        source_id: &str,
        text: &str,
        reply_to: Option<&str>,
    ) -> Res<Sent> {
        self.send_message(
            channel,
            account_id,
            peer,
            source_id,
            text,
            reply_to,
            &[],
            &[],
        )
        .await
    }

    /// Queues `text`, `media` and `actions` and sends the chat's queue
    /// now; says how it went.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::worker::gateway_do) async fn send_message(
        &self,
        channel: &str,
        account_id: &str,
        peer: &ChannelPeer,
        source_id: &str,
        text: &str,
        reply_to: Option<&str>,
        media: &[OutboundMedia],
        actions: &[ChannelAction],
    ) -> Res<Sent> {
        let keys = self
            .queue_text(
                channel, account_id, peer, source_id, text, reply_to, media, actions,
            )
            .await?;
        self.pump(&dest_key(channel, account_id, &peer.id)).await;
        let store = self.channel_store();
        let mut failed = None;
        for key in &keys {
            match store.outcome(key)? {
                Some((status, _)) if status == "sent" => {}
                Some((status, error)) => {
                    failed = Some(match status.as_str() {
                        "pending" => format!(
                            "not delivered yet, will retry: {}",
                            error.unwrap_or_default()
                        ),
                        _ => error.unwrap_or_else(|| "not delivered".into()),
                    });
                    break;
                }
                None => failed = Some("not delivered".into()),
            }
        }
        Ok(Sent {
            pieces: keys.len(),
            failed,
        })
    }

    /// Sends `dest`'s queue in order until it is empty or its head must
    /// wait for a retry. One pump per queue at a time in this instance.
    pub(super) async fn pump(&self, dest: &str) {
        let Some(pumping) = self.channels.start_pump(dest) else {
            return;
        };
        let store = self.channel_store();
        // Whether the alarm must come back for this queue: a piece waits
        // for its retry, or the ledger could not be read or written.
        let waiting = loop {
            let head = match store.head(dest) {
                Ok(Some(row)) if row.next_at <= now_ms() => row,
                Ok(Some(_)) => break true,
                Ok(None) => break false,
                Err(e) => {
                    console_error!("gateway: reading the delivery ledger failed: {}", e.message);
                    break true;
                }
            };
            if let Err(e) = self.send_piece(&store, &head).await {
                console_error!("gateway: recording a delivery failed: {}", e.message);
                break true;
            }
        };
        drop(pumping);
        if waiting {
            self.schedule_alarm().await;
        }
    }

    async fn send_piece(&self, store: &ChannelStore, row: &DeliveryRow) -> Res<()> {
        let now = now_ms();
        let Some(channel) = self.channel(&row.channel) else {
            let error = format!("no {} channel is connected or bound", row.channel);
            let retry = retry_at(now, row.attempts as u32 + 1, None);
            return store.mark_attempt_failed(&row.key, &error, retry, now);
        };
        let message = ChannelOutboundMessage {
            peer: row.peer()?,
            text: row.text.clone(),
            reply_to_id: row.reply_to.clone(),
            idempotency_key: Some(row.key.clone()),
            media: row.media()?,
            actions: row.actions()?,
        };
        let result = channel.send(&row.account_id, &message).await;
        if result.ok {
            store.mark_sent(&row.key, result.message_id.as_deref(), now_ms())?;
            if let Some(id) = result.message_id.as_deref() {
                self.apply_early_receipts(&row.channel, &row.account_id, id)?;
            }
            return Ok(());
        }
        let error = result
            .error
            .unwrap_or_else(|| "the channel refused the message".into());
        console_error!(
            "gateway: {} refused a message for {}: {error}",
            row.channel,
            row.account_id
        );
        let retry = match result.retryable {
            Some(true) => retry_at(now_ms(), row.attempts as u32 + 1, result.retry_after_ms),
            _ => None,
        };
        store.mark_attempt_failed(&row.key, &error, retry, now_ms())
    }

    /// A `chat` event of a run started from a chat: its text goes back
    /// there; at the end typing stops and the run is forgotten.
    pub(in crate::worker::gateway_do) async fn route_chat_event(&self, evt: &ChatEvent) {
        let Some(run_id) = evt.run_id.as_deref() else {
            return;
        };
        if let Err(e) = self.route_run_event(run_id, evt, true).await {
            console_error!(
                "gateway: routing run {run_id} to its chat failed: {}",
                e.message
            );
        }
    }

    /// `settle_older`: before a run's end, the ends of the same session's
    /// earlier runs that were missed are fetched, so a chat's answers keep
    /// their order.
    async fn route_run_event(&self, run_id: &str, evt: &ChatEvent, settle_older: bool) -> Res<()> {
        let store = self.channel_store();
        let Some(run) = store.run(run_id)? else {
            return Ok(());
        };
        let ends = matches!(evt.state, ChatState::Final | ChatState::Error);
        if ends && settle_older {
            for older in store.runs_before(&run.session_key, run.started_at, run_id)? {
                self.check_run(&older, now_ms()).await;
            }
        }
        let peer = run.peer()?;
        let text = match evt.state {
            ChatState::Delta => return Ok(()),
            ChatState::Partial | ChatState::Final => evt.message.as_ref().map(|m| m.text()),
            ChatState::Error => evt
                .error
                .as_deref()
                .filter(|e| !QUIET_ERRORS.contains(e))
                .map(|e| format!("Sorry, I couldn't finish that: {e}")),
        };
        if ends {
            crate::worker::fault::stop_at(&self.env, gsv_protocol::fault::EVENT_SENT).await;
        }
        // Typing goes off beside the answer, not before it: the answer is
        // what the person waits for.
        let typing_off = async {
            if ends {
                self.typing(&run.channel, &run.account_id, &peer, false)
                    .await
            }
        };
        let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
            if ends {
                store.end_run(run_id)?;
            }
            typing_off.await;
            return Ok(());
        };
        // `MEDIA:` lines of the answer are files to send with it.
        let (mut text, refs) = split_media_lines(&text);
        let agent_id = crate::routing::agent_id_of(&run.session_key);
        let (media, failed) = self.find_media(&agent_id, &run.session_key, &refs).await;
        for why in failed {
            text.push_str(&format!("\n(could not attach {why})"));
        }
        let source = format!("{run_id}:{}", run.parts);
        let keys = self
            .queue_text(
                &run.channel,
                &run.account_id,
                &peer,
                &source,
                &text,
                run.reply_to.as_deref(),
                &media,
                &[],
            )
            .await?;
        // The run is let go of only with its answer in the ledger (one
        // step): the ledger owes it to the chat from here.
        match ends {
            true => store.end_run(run_id)?,
            false => store.add_parts(run_id, keys.len().max(1) as i64)?,
        }
        crate::worker::fault::stop_at(&self.env, gsv_protocol::fault::LEDGER_WRITTEN).await;
        let dest = dest_key(&run.channel, &run.account_id, &peer.id);
        futures::join!(self.pump(&dest), typing_off);
        Ok(())
    }

    /// Asks the sessions of the chat runs that are due (all of them, the
    /// first time in an instance: it may have missed their ends while it
    /// was down) how each stands.
    async fn check_runs(&self, now: i64) {
        let all = !self.channels.runs_checked.replace(true);
        let runs = match self.channel_store().runs_to_check(now, all) {
            Ok(runs) => runs,
            Err(e) => return console_error!("gateway: reading chat runs failed: {}", e.message),
        };
        for run in runs {
            self.check_run(&run, now).await;
        }
    }

    /// Asks `run`'s session how it stands: an ended run's answer goes to
    /// its chat as if its event had come, one going on is asked again
    /// later, and one its session does not know is let go.
    async fn check_run(&self, run: &ChannelRun, now: i64) {
        let store = self.channel_store();
        let query = RunOutcomeQuery {
            session_key: run.session_key.clone(),
            run_id: run.run_id.clone(),
        };
        let outcome = SessionStub::for_key(&self.env, &run.session_key)
            .call(&query)
            .await;
        let next = now + CHECK_EVERY_MS;
        if let Err(e) = &outcome {
            console_error!(
                "gateway: asking {} about run {} failed: {}",
                run.session_key,
                run.run_id,
                e.message
            );
        }
        let outcome = outcome.ok();
        let handled = match (
            after_asking(outcome.as_ref(), now - run.started_at),
            outcome,
        ) {
            (RunCheck::Deliver, Some(RunOutcome::Ended { event })) => {
                console_log!(
                    "gateway: run {} had ended unheard; its answer goes to {} now",
                    run.run_id,
                    run.channel
                );
                Box::pin(self.route_run_event(&run.run_id, &event, false)).await
            }
            (RunCheck::LetGo, _) => {
                console_log!(
                    "gateway: session {} does not know run {}; no answer is owed for it",
                    run.session_key,
                    run.run_id
                );
                store.end_run(&run.run_id)
            }
            _ => store.set_check_at(&run.run_id, next),
        };
        if let Err(e) = handled {
            console_error!("gateway: checking run {} failed: {}", run.run_id, e.message);
        }
    }

    /// `gsv__Message`: to the chat named, else the agent's last active one.
    pub(in crate::worker::gateway_do) async fn channel_message(
        &self,
        r: ChannelMessageRequest,
    ) -> Res<ChannelMessageReply> {
        // The files first: a bad reference fails the call before anything is sent.
        let media = self.outbound_media(&r).await?;
        let (channel, account_id, peer) =
            match r.target {
                Some(t) => {
                    let peer = ChannelPeer {
                        kind: PeerKind::Dm,
                        id: t.to,
                        name: None,
                        handle: None,
                        thread_id: None,
                    };
                    (t.channel, t.account_id, peer)
                }
                None => match self.channel_store().last_active(&r.agent_id)? {
                    Some(last) => {
                        let peer = last.peer()?;
                        (last.channel, last.account_id, peer)
                    }
                    None => return Err(ErrorShape::new(
                        codes::NOT_FOUND,
                        "Nobody has written to you from a chat app yet, so there is no last chat; \
                         name channel and to",
                    )),
                },
            };
        let source = format!("msg:{}", r.call_id);
        let sent = self
            .send_message(
                &channel,
                &account_id,
                &peer,
                &source,
                &r.text,
                None,
                &media,
                &[],
            )
            .await?;
        Ok(ChannelMessageReply {
            channel,
            to: peer.id,
            pieces: sent.pieces as u32,
            error: sent.failed,
        })
    }

    /// The files a `gsv__Message` attaches, found in R2: each reference
    /// is this conversation's media or a workspace file, and must exist.
    async fn outbound_media(&self, r: &ChannelMessageRequest) -> Res<Vec<OutboundMedia>> {
        if r.attachments.len() > MAX_ATTACHMENTS {
            return Err(ErrorShape::new(
                codes::BAD_REQUEST,
                format!("at most {MAX_ATTACHMENTS} attachments per message"),
            ));
        }
        let (media, failed) = self
            .find_media(&r.agent_id, &r.session_key, &r.attachments)
            .await;
        match failed.into_iter().next() {
            Some(why) => Err(ErrorShape::new(codes::BAD_REQUEST, why)),
            None => Ok(media),
        }
    }

    /// The files `refs` name for the agent in `session_key`, and why each
    /// of the others could not be had (`"<ref>: <why>"`).
    async fn find_media(
        &self,
        agent_id: &str,
        session_key: &str,
        refs: &[String],
    ) -> (Vec<OutboundMedia>, Vec<String>) {
        let mut out = Vec::with_capacity(refs.len());
        let mut failed = Vec::new();
        if refs.is_empty() {
            return (out, failed);
        }
        let bucket = match crate::worker::bindings::bucket(&self.env) {
            Ok(b) => b,
            Err(e) => return (out, vec![format!("the files: {e}")]),
        };
        for reference in refs {
            let located = match locate(reference, agent_id, session_key) {
                Ok(l) => l,
                Err(e) => {
                    failed.push(e);
                    continue;
                }
            };
            let mut found = None;
            for key in &located.keys {
                match bucket.head(key).await {
                    Ok(Some(head)) => {
                        found = Some((key.clone(), head));
                        break;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        failed.push(format!("{reference}: {e}"));
                        break;
                    }
                }
            }
            let Some((key, head)) = found else {
                if failed
                    .last()
                    .is_none_or(|f| !f.starts_with(reference.as_str()))
                {
                    failed.push(format!("{reference}: no such file"));
                }
                continue;
            };
            let filename = head
                .custom_metadata()
                .ok()
                .and_then(|m| m.get("originalFilename").cloned())
                .filter(|n| !n.trim().is_empty())
                .unwrap_or(located.filename);
            let declared = head.http_metadata().content_type;
            let mime_type = mime::resolve(declared.as_deref(), Some(&filename));
            out.push(OutboundMedia {
                key,
                media_type: mime::media_type(&mime_type),
                mime_type,
                filename,
                size: head.size(),
            });
        }
        (out, failed)
    }

    /// Typing on or off in a chat; a failure costs only the indicator.
    pub(super) async fn typing(
        &self,
        channel: &str,
        account_id: &str,
        peer: &ChannelPeer,
        on: bool,
    ) {
        let Some(ch) = self.channel(channel) else {
            return;
        };
        if let Err(e) = ch.set_typing(account_id, peer, on).await {
            console_log!("gateway: typing in {channel} failed: {}", e.message);
        }
    }

    /// The alarm's share: pieces due for a retry, typing renewals, chat
    /// runs to ask after.
    pub(in crate::worker::gateway_do) async fn channel_alarm(&self, now: i64) {
        self.check_runs(now).await;
        let store = self.channel_store();
        match store.due_dests(now) {
            Ok(dests) => {
                for dest in dests {
                    self.pump(&dest).await;
                }
            }
            Err(e) => console_error!("gateway: reading due deliveries failed: {}", e.message),
        }
        let runs = match store.typing_due(now) {
            Ok(runs) => runs,
            Err(e) => return console_error!("gateway: reading typing renewals: {}", e.message),
        };
        for run in runs {
            let renew = run.started_at + TYPING_MAX_MS > now;
            let next = renew.then_some(now + TYPING_RENEW_MS);
            let _ = store.set_typing_at(&run.run_id, next);
            if let (true, Ok(peer)) = (renew, run.peer()) {
                self.typing(&run.channel, &run.account_id, &peer, true)
                    .await;
            }
        }
    }
}
