//! `chat.send` inside the session: a slash command is
//! answered without a run; inline directives ride on their one message;
//! a message arriving after the reset policy ended the conversation is
//! marked to reset the session first; everything else joins the queue.

use super::core::Origin;
use super::error::{Res, SessionError};
use super::Session;
use crate::commands::NOT_YOURS;
use crate::commands::{
    applied_directives, directive_ack, is_empty, model_command, parse_command, parse_directives,
    status_text, think_command, Command, CommandReply, SettingChange, StatusInfo, HELP_TEXT,
};
use crate::config::Config;
use crate::routing::{is_main_session_key, RoutingConfig};
use crate::session::internal::{SessionChatSend, SessionChatSendReply, SessionQuery};
use crate::session::reset::{reset_due, ResetPolicy};
use crate::session::run_config::RunConfig;
use crate::trust::may_change_session;
use crate::worker::rpc::now_ms;
use crate::worker::tz::user_time_zone;
use gsv_protocol::*;

impl Session {
    pub(super) async fn chat_send(&self, send: SessionChatSend) -> Res<SessionChatSendReply> {
        let core = &self.core;
        let inbound_id = send.inbound_id.clone();
        if let Some(id) = inbound_id.as_deref() {
            if let Some((run_id, first)) = core.store.taken(id)? {
                // Its run may have been cut off with the instance that
                // took it: the loop goes on with whatever is queued.
                self.start_queued().await?;
                return Ok(SessionChatSendReply::Taken {
                    run_id,
                    first: Box::new(first),
                });
            }
        }
        let took = |reply: &SessionChatSendReply| -> Res<()> {
            match inbound_id.as_deref() {
                Some(id) => core.store.take_message(id, &send.run_id, reply, now_ms()),
                None => Ok(()),
            }
        };
        let meta = core.store.meta(&send.session_key)?;
        // Activity is stamped only once the reset policy has looked at the
        // previous message.
        self.take_revisions(&send)?;
        core.clock_offset.set(send.clock_offset_ms);
        if let Some(relay) = &send.relay {
            // Another session's words, not a person's: no commands and no
            // directives are read from them.
            let config = core.store.config()?;
            let reset_first = self.reset_is_due(&config)?;
            let reply = core.enqueue(
                &send.run_id,
                &send.message,
                None,
                reset_first,
                Origin {
                    relay: Some(relay),
                    trust: send.trust,
                    ..Origin::default()
                },
            )?;
            took(&reply)?;
            self.start_queued().await?;
            return Ok(reply);
        }
        // The config named is the one stored, kept parsed.
        let config = core.store.config()?;
        let is_main = self.is_main(&config, &send.session_key);
        let may_change = may_change_session(send.trust, is_main);
        if let Some(command) = parse_command(&send.message) {
            let reply = match command.changes_session() && !may_change {
                true => SessionChatSendReply::Command {
                    command: command.name().to_string(),
                    response: None,
                    error: Some(NOT_YOURS.to_string()),
                    run_id: None,
                },
                // A command's effect is not undone should the session stop
                // before it is marked taken: a retry runs it again (`/reset`
                // of a session just reset archives nothing).
                false => self.command(command, &send).await?,
            };
            took(&reply)?;
            return Ok(reply);
        }
        let current = RunConfig::model_for(&config, &meta.settings);
        // Inline directives change the model of a run: read only from
        // those who may change the session; others' are plain text.
        let d = parse_directives(if may_change { &send.message } else { "" });
        let mut applied = applied_directives(&d, &current);
        if let Some(given) = &send.directives {
            applied.model = applied.model.or_else(|| given.model.clone());
            applied.thinking_level = applied
                .thinking_level
                .or_else(|| given.thinking_level.clone());
        }
        if d.is_directive_only() && send.media.is_empty() {
            let reply = SessionChatSendReply::DirectiveOnly {
                response: directive_ack(&d, &current),
                directives: applied,
            };
            took(&reply)?;
            return Ok(reply);
        }
        let text = if d.has_any() { d.text } else { send.message };
        let overrides = (!is_empty(&applied)).then_some(applied);
        let reset_first = self.reset_is_due(&config)?;
        let reply = core.enqueue(
            &send.run_id,
            &text,
            overrides.as_ref(),
            reset_first,
            Origin {
                turn: send.channel.as_ref(),
                relay: None,
                media: &send.media,
                trust: send.trust,
            },
        )?;
        // Taken in the same step as queued: no stop between them.
        took(&reply)?;
        crate::worker::fault::stop_at(&core.env, gsv_protocol::fault::SESSION_STORED).await;
        self.start_queued().await?;
        Ok(reply)
    }

    /// Whether `key` is its agent's main session under `config`: asked
    /// once per config this instance holds, not once per message (the
    /// routing it takes is built from the whole config).
    fn is_main(&self, config: &std::rc::Rc<Config>, key: &str) -> bool {
        let mut kept = self.core.main_of.borrow_mut();
        if let Some((c, k, is_main)) = kept.as_ref() {
            if std::rc::Rc::ptr_eq(c, config) && k == key {
                return *is_main;
            }
        }
        let is_main = is_main_session_key(key, &RoutingConfig::from_config(config));
        *kept = Some((config.clone(), key.to_string(), is_main));
        is_main
    }

    /// Takes the config and nodes a message names: stored when they came
    /// with it (and new here), else they must be the ones this session
    /// has; and the workspace revision, which the next run compares.
    fn take_revisions(&self, send: &SessionChatSend) -> Res<()> {
        let store = &self.core.store;
        let has = store.has_config(&send.config_rev)?;
        take("config", send.config.as_ref(), &send.config_rev, has, |c| {
            store.save_config(&send.config_rev, c)
        })?;
        let has = store.has_nodes(&send.nodes_rev)?;
        take("nodes", send.nodes.as_ref(), &send.nodes_rev, has, |n| {
            store.save_nodes(&send.nodes_rev, n)
        })?;
        self.core.take_workspace_rev(&send.workspace_rev);
        Ok(())
    }

    /// Whether the session's reset policy ended the conversation before
    /// this message: never while a run or a queued message is pending (the
    /// conversation is plainly going on) nor for an empty session.
    fn reset_is_due(&self, config: &Config) -> Res<bool> {
        let store = &self.core.store;
        let meta = store.meta("")?;
        if store.message_count()? == 0 || store.current_run()?.is_some() || store.queue_len()? > 0 {
            return Ok(false);
        }
        let policy = ResetPolicy::effective(meta.reset_policy.as_ref(), config);
        Ok(reset_due(
            &policy,
            meta.updated_at,
            now_ms(),
            &*user_time_zone(config),
        ))
    }

    async fn command(&self, command: Command, send: &SessionChatSend) -> Res<SessionChatSendReply> {
        let core = &self.core;
        let name = command.name().to_string();
        let query = SessionQuery {
            session_key: send.session_key.clone(),
            limit: None,
        };
        let mut run_id = None;
        let reply = match command {
            Command::Stop => {
                let r = self.abort(query, "Run cancelled by user").await?;
                CommandReply::text(match r.run_id {
                    Some(id) => format!(
                        "Stopped run {id}, cancelled {} pending tool(s).",
                        r.pending_tools_cancelled
                    ),
                    None => "No run in progress.".to_string(),
                })
            }
            Command::Reset { message } => {
                let r = self
                    .reset(query, "Run ended: the session was reset")
                    .await?;
                if let Some(text) = message {
                    core.enqueue(
                        &send.run_id,
                        &text,
                        None,
                        false,
                        Origin {
                            turn: send.channel.as_ref(),
                            relay: None,
                            media: &send.media,
                            trust: send.trust,
                        },
                    )?;
                    self.start_queued().await?;
                    run_id = Some(send.run_id.clone());
                }
                CommandReply::text(format!(
                    "Session reset. Archived {} messages.",
                    r.archived_messages
                ))
            }
            Command::Compact { keep } => {
                let p = SessionCompactParams {
                    session_key: send.session_key.clone(),
                    keep_messages: Some(keep as u32),
                };
                match self.compact(p).await {
                    Ok(r) if r.trimmed_messages == 0 => CommandReply::text(format!(
                        "Nothing to compact: the session has {} messages.",
                        r.kept_messages
                    )),
                    Ok(r) => CommandReply::text(format!(
                        "Compacted: archived {} messages, kept the last {}.",
                        r.trimmed_messages, r.kept_messages
                    )),
                    Err(e) => CommandReply::error(e.to_string()),
                }
            }
            Command::Status => {
                let meta = core.store.meta("")?;
                let config = core.store.config()?;
                let rc = RunConfig::resolve(&config, &meta.settings);
                let model = rc.model_selection();
                CommandReply::text(status_text(&StatusInfo {
                    session_key: &meta.session_key,
                    message_count: core.store.message_count()?,
                    tokens: &meta.tokens,
                    model: &model,
                    thinking: rc.thinking,
                    reset: &ResetPolicy::effective(meta.reset_policy.as_ref(), &config),
                }))
            }
            Command::Model(arg) => {
                let current = core.store.run_config()?.model_selection();
                self.apply(model_command(arg.as_ref(), &current))?
            }
            Command::Think(arg) => {
                let rc = core.store.run_config()?;
                self.apply(think_command(arg.as_ref(), rc.thinking))?
            }
            Command::Help => CommandReply::text(HELP_TEXT),
            Command::Usage(usage) => CommandReply::error(usage),
        };
        Ok(SessionChatSendReply::Command {
            command: name,
            response: reply.response,
            error: reply.error,
            run_id,
        })
    }

    /// Stores the setting a command changed.
    fn apply(&self, reply: CommandReply) -> Res<CommandReply> {
        let Some(change) = &reply.change else {
            return Ok(reply);
        };
        let store = &self.core.store;
        let mut meta = store.meta("")?;
        match change {
            SettingChange::Model(m) => meta.settings.model = Some(m.clone()),
            SettingChange::Thinking(level) => {
                meta.settings.thinking_level = Some(crate::commands::level_name(*level).into())
            }
        }
        store.save_meta(&meta)?;
        Ok(reply)
    }

    /// `session.reset` and `/reset`: a run in progress is ended first (its
    /// clients get `reason` as the run's error), then the manual reset.
    pub(super) async fn reset(&self, q: SessionQuery, reason: &str) -> Res<SessionResetResult> {
        let core = &self.core;
        core.store.meta(&q.session_key)?;
        let bucket = core.bucket()?;
        // Queued messages wait for the new session: no run may start
        // between ending this one and the reset.
        core.paused.set(true);
        let result = match core.store.current_run() {
            Ok(Some(_)) => self.abort(q.clone(), reason).await.map(|_| ()),
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        };
        let result = match result {
            Ok(()) => self.resetter(&bucket).manual(&q.session_key).await,
            Err(e) => Err(e),
        };
        core.paused.set(false);
        self.start_loop();
        result
    }
}

/// One thing a message names by revision (`has`: the session holds that
/// revision): stored when it came along and is new here, nothing to do
/// when held, else the gateway must send it whole.
fn take<T>(
    kind: &str,
    given: Option<&T>,
    rev: &str,
    has: bool,
    save: impl FnOnce(&T) -> Res<()>,
) -> Res<()> {
    match (given, has) {
        (_, true) => Ok(()),
        (Some(body), false) => save(body),
        (None, false) => Err(SessionError::Stale(format!("no {kind} at {rev}"))),
    }
}
