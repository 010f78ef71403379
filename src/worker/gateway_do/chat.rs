//! Chat and session methods: forwarded to the session's Session object,
//! with the asking socket set to watch the session's `chat` events.

use super::{Attachment, Gateway};
use crate::calls::InternalCall;
use crate::session::internal::{SessionChatSend, SessionChatSendReply, SessionQuery};
use crate::worker::bindings::SessionStub;
use crate::worker::rpc::new_id;
use gsv_protocol::*;
use std::rc::Rc;
use worker::*;

type Res<T> = std::result::Result<T, ErrorShape>;

/// How many sessions one socket follows at most (the newest are kept).
const MAX_WATCHED: usize = 64;

impl Gateway {
    /// `ws` receives the `chat` events of session `key` (canonical), under
    /// `asked`, the key it named the session by.
    pub(super) fn watch(
        &self,
        ws: &WebSocket,
        att: &mut Rc<Attachment>,
        key: &str,
        asked: &str,
    ) -> Res<()> {
        let alias = (asked != key).then(|| (key.to_string(), asked.to_string()));
        let known = att.watch.iter().any(|k| k == key);
        let same_alias = att.aliases.iter().find(|(k, _)| k == key).cloned() == alias;
        if known && same_alias {
            return Ok(());
        }
        // Written only when it changes (the one copy a frame may make).
        let att = Rc::make_mut(att);
        if !known {
            att.watch.push(key.to_string());
            if att.watch.len() > MAX_WATCHED {
                let gone = att.watch.remove(0);
                att.aliases.retain(|(k, _)| *k != gone);
            }
        }
        att.aliases.retain(|(k, _)| k != key);
        att.aliases.extend(alias);
        self.save_attachment(ws, att)
    }

    /// Sends a `chat` event to every socket watching its session; returns
    /// how many got it.
    pub(super) fn deliver_chat_event(&self, evt: &ChatEvent) -> usize {
        // A chat event is strings and numbers: writing it cannot fail.
        let frame = |evt: &ChatEvent| Frame::event_json(event::CHAT, evt).unwrap_or_default();
        let text = frame(evt);
        let mut delivered = 0;
        for (ws, att) in self.sockets().iter() {
            if att.peer.is_none() || !att.watch.contains(&evt.session_key) {
                continue;
            }
            let alias = att.aliases.iter().find(|(k, _)| *k == evt.session_key);
            let sent = match alias {
                Some((_, asked)) => ws.send_with_str(frame(&ChatEvent {
                    session_key: asked.clone(),
                    ..evt.clone()
                })),
                None => ws.send_with_str(&text),
            };
            if sent.is_ok() {
                delivered += 1;
            }
        }
        delivered
    }

    pub(super) async fn chat_send(
        &self,
        ws: &WebSocket,
        att: &mut Rc<Attachment>,
        p: ChatSendParams,
    ) -> Res<ChatSendResult> {
        if p.message.trim().is_empty() && p.media.is_empty() {
            return Err(ErrorShape::new(
                codes::BAD_REQUEST,
                "message must not be empty",
            ));
        }
        let session_key = self.canonical_key(&p.session_key);
        let run_id = p.run_id.filter(|r| !r.is_empty()).unwrap_or_else(new_id);
        // Watch first, so not even the first streamed chunk is missed.
        self.watch(ws, att, &session_key, &p.session_key)?;
        self.touch_session(&session_key, None, false)?;
        let media = self.keep_client_media(&p.media, &session_key).await?;
        // A client holds the token: the owner.
        let send = SessionChatSend {
            media,
            trust: gsv_protocol::Trust::OWNER,
            ..self.message_for(&session_key, &run_id, p.message)
        };
        // Slash commands and directives are the session's to read: it owns
        // the settings, the run and the history they act on.
        let reply = self.send_to_session(send).await?;
        Ok(match reply {
            SessionChatSendReply::Started {
                queued,
                queue_position,
                directives,
            } => ChatSendResult::Started(ChatStartedResult {
                run_id,
                session_key: Some(session_key),
                queued,
                queue_position: queued.then_some(queue_position),
                directives,
            }),
            SessionChatSendReply::Command {
                command,
                response,
                error,
                run_id,
            } => ChatSendResult::Command(ChatCommandResult {
                command,
                session_key,
                response,
                error,
                run_id,
            }),
            SessionChatSendReply::DirectiveOnly {
                response,
                directives,
            } => ChatSendResult::DirectiveOnly(ChatDirectiveOnlyResult {
                session_key,
                response,
                directives,
            }),
            // Only a chat-app message names an inbound id to be taken once.
            SessionChatSendReply::Taken { run_id, .. } => {
                return Err(crate::worker::rpc::internal_error(format!(
                    "the session took run {run_id} as a repeat of a chat message"
                )))
            }
        })
    }

    /// Asks the session's object `call` (one of the `SessionQuery` calls);
    /// the asker watches the session.
    pub(super) async fn session_query<C: InternalCall>(
        &self,
        ws: &WebSocket,
        att: &mut Rc<Attachment>,
        key: String,
        limit: Option<u32>,
        call: impl FnOnce(SessionQuery) -> C,
    ) -> Res<C::Reply> {
        let session_key = self.canonical_key(&key);
        self.watch(ws, att, &session_key, &key)?;
        let query = SessionQuery {
            session_key: session_key.clone(),
            limit,
        };
        SessionStub::for_key(&self.env, &session_key)
            .call(&call(query))
            .await
    }

    /// `session.patch`: the registry keeps the session's label.
    pub(super) async fn session_patch(&self, mut p: SessionPatchParams) -> Res<SessionPatchResult> {
        p.session_key = self.canonical_key(&p.session_key);
        let key = p.session_key.clone();
        let result = SessionStub::for_key(&self.env, &key).call(&p).await?;
        self.touch_session(&key, result.label.as_deref(), p.label.is_some())?;
        Ok(SessionPatchResult { ok: true })
    }
}
