//! What the Session's handlers and its run loop share: the store, the
//! alarm, the event link to the Gateway, and the instance's flags. The
//! I/O helpers every part needs (emit an event, end a run) live here.

use super::alarm::Alarm;
use super::error::{Res, SessionError};
use super::events::EventLink;
use super::store::{CurrentRun, Queued, SessionStore};
use crate::agent_tools::session_send::{relayed_text, SessionRelay};
use crate::llm::WrittenHistory;
use crate::session::internal::{ChannelTurn, SessionChatSendReply};
use crate::session::link::is_older_workspace_rev;
use crate::session::run_config::RunConfig;
use crate::worker::rpc::now_ms;
use crate::worker::workspace::prompt_load::RunPrompt;
use gsv_protocol::{
    AssistantMessage, ChatDirectives, ChatEvent, ChatState, Usage, WorkspaceLoadStats,
};
use std::cell::{Cell, OnceCell, RefCell};
use std::rc::{Rc, Weak};
use worker::{Bucket, Env, State};

/// Where a queued message came from, and the files that came with it.
#[derive(Default, Clone, Copy)]
pub struct Origin<'a> {
    /// A chat app (the message is enveloped).
    pub turn: Option<&'a ChannelTurn>,
    /// Another session of the agent (`gsv__SessionSend`).
    pub relay: Option<&'a SessionRelay>,
    /// Its attachments, already kept in R2.
    pub media: &'a [crate::media::Attached],
    /// Who spoke, as the gateway decided.
    pub trust: gsv_protocol::Trust,
}

/// A prompt as the next run may take it again.
pub struct LastPrompt {
    pub prompt: Rc<RunPrompt>,
    pub inputs: PromptInputs,
    /// What loading it cost the run that made or reused it.
    pub load: WorkspaceLoadStats,
}

pub struct Core {
    pub state: State,
    /// This core, for the event link's listener (events.rs).
    pub this: Weak<Core>,
    pub store: SessionStore,
    pub env: Env,
    pub alarm: Alarm,
    pub link: EventLink,
    /// True while a loop runs in this instance (lost, as it should be, on eviction).
    pub running: Cell<bool>,
    /// True while this instance executes a reset plan: nobody else may.
    pub resetting: Cell<bool>,
    /// True while a request is about to reset: the loop starts no new run.
    pub paused: Cell<bool>,
    /// The last prompt this instance assembled and what from (the next
    /// run's early call), shared with the runs that use it, and its load
    /// as `session.stats` reports it.
    pub last_prompt: RefCell<Option<LastPrompt>>,
    /// The memories the last new run recalled for its message (URIs), for
    /// `session.stats` with its prompt's load.
    pub last_recalled: RefCell<Vec<String>>,
    /// The gateway's schedule clock offset, as the last message brought it
    /// (0 but under the test harness's clock).
    pub clock_offset: Cell<i64>,
    /// The newest workspace revision a message or the event link brought
    /// (revisions.rs in the gateway): a kept prompt holds while it is the
    /// same.
    pub workspace_rev: RefCell<String>,
    /// When this instance last checked a prompt against R2 (ms).
    pub checked_at: Cell<i64>,
    /// The last recall found the account's memory index empty: the next
    /// ones are skipped while that holds.
    pub known_empty: RefCell<Option<crate::memory::recall::KnownEmpty>>,
    /// The prompt last kept for a run waiting on tools.
    pub kept_prompt: RefCell<Option<KeptPrompt>>,
    /// The kept history's messages as the model calls wrote them: the next
    /// call writes only what was added (`crate::llm::WrittenHistory`).
    pub written: RefCell<WrittenHistory>,
    /// Whether the session is its agent's main one, under the config and
    /// for the key asked last (`chat.rs`).
    pub main_of: RefCell<Option<(Rc<crate::config::Config>, String, bool)>>,
    /// The R2 binding, looked up once: a lookup is a property read and a
    /// type check in JS, and every run asks for it.
    bucket: OnceCell<Bucket>,
}

/// A prompt kept for a run waiting on tools, as it was (with its body
/// parts serialized), and its revision in the store. The run resumes with
/// it instead of parsing the stored copy, which is read only after an
/// eviction; a later run that waits with the same prompt stores only its
/// revision.
pub struct KeptPrompt {
    pub rev: String,
    pub prompt: Rc<RunPrompt>,
}

/// What a prompt was assembled from, besides the workspace files (the
/// config and nodes by revision).
#[derive(Clone, PartialEq)]
pub struct PromptInputs {
    /// `r2::writes()` before the assembly began.
    pub writes: u64,
    pub config_rev: String,
    pub rc: RunConfig,
    pub nodes_rev: String,
    /// The workspace as the gateway last said it was.
    pub workspace_rev: String,
    /// Today and yesterday in the user's time zone (the daily memory files).
    pub days: (String, String),
    /// Who spoke: another level is offered other tools.
    pub trust: gsv_protocol::Trust,
}

impl Core {
    pub fn new(state: State, env: Env, this: Weak<Core>) -> Self {
        Self {
            this,
            store: SessionStore::open(state.storage().sql()),
            env,
            alarm: Alarm::new(state.storage()),
            link: EventLink::default(),
            running: Cell::new(false),
            resetting: Cell::new(false),
            paused: Cell::new(false),
            last_prompt: RefCell::new(None),
            last_recalled: RefCell::default(),
            clock_offset: Cell::new(0),
            workspace_rev: RefCell::new(String::new()),
            checked_at: Cell::new(i64::MIN),
            known_empty: RefCell::new(None),
            kept_prompt: RefCell::new(None),
            written: RefCell::default(),
            main_of: RefCell::new(None),
            bucket: OnceCell::new(),
            state,
        }
    }

    pub fn bucket(&self) -> Res<Bucket> {
        if let Some(bucket) = self.bucket.get() {
            return Ok(bucket.clone());
        }
        let bucket = crate::worker::bindings::bucket(&self.env).map_err(SessionError::storage)?;
        Ok(self.bucket.get_or_init(|| bucket).clone())
    }

    /// Points the object's one alarm at its earliest deadline.
    pub async fn schedule(&self) {
        self.alarm.schedule(&self.store).await
    }

    /// Makes sure the watchdog tick is pending, scheduling the alarm if
    /// that changed it.
    pub async fn ensure_tick(&self) -> Res<()> {
        if self.alarm.ensure_tick(&self.store)? {
            self.schedule().await;
        }
        Ok(())
    }

    /// Takes the workspace revision `rev` unless it is older than the one
    /// held (a message stamped before a change the link told of already).
    pub fn take_workspace_rev(&self, rev: &str) {
        let older = is_older_workspace_rev(rev, &self.workspace_rev.borrow());
        if !older {
            self.workspace_rev.replace(rev.to_string());
        }
    }

    /// This session's tools wrote to R2: the gateway hears of it, so every
    /// session's next run reads the workspace again.
    pub async fn workspace_written(&self) {
        let call = crate::session::internal::WorkspaceChanged {
            session_key: self.store.known_key().unwrap_or_default(),
        };
        if let Err(e) = crate::worker::bindings::GatewayStub::get(&self.env)
            .call(&call)
            .await
        {
            worker::console_error!(
                "session: telling of a workspace write failed: {}",
                e.message
            );
        }
    }

    pub fn event(&self, run: &CurrentRun, state: ChatState) -> ChatEvent {
        ChatEvent {
            run_id: Some(run.run_id.clone()),
            session_key: self.store.known_key().unwrap_or_default(),
            state,
            delta: None,
            message: None,
            usage: None,
            error: None,
        }
    }

    /// Ends the current run with an error event; its messages stay stored.
    pub async fn fail_run(&self, run: &CurrentRun, error: &str) {
        let evt = ChatEvent {
            error: Some(error.to_string()),
            ..self.event(run, ChatState::Error)
        };
        self.end_run(run, evt).await;
    }

    /// Ends the run, then sends its last event. A run from a chat keeps
    /// that event, stored in the same step as the run's end: should the
    /// event not reach the gateway (a dropped link, a restart), the
    /// gateway asks for it (`RunOutcome`) and the chat still gets its
    /// answer.
    async fn end_run(&self, run: &CurrentRun, evt: ChatEvent) {
        if run.channel.is_some() {
            if let Err(e) = self.store.save_outcome(&evt, now_ms()) {
                worker::console_error!("session: keeping run {}'s end failed: {e}", run.run_id);
            }
        }
        let _ = self.store.end_run();
        crate::worker::fault::stop_at(&self.env, gsv_protocol::fault::RUN_FINISHED).await;
        self.emit(evt).await;
    }

    /// Ends the current run with its answer (`tail`: text not yet streamed).
    pub async fn finish_run(
        &self,
        run: &CurrentRun,
        message: AssistantMessage,
        usage: Usage,
        tail: Option<String>,
    ) {
        let evt = ChatEvent {
            message: Some(message),
            usage: Some(usage),
            delta: tail,
            ..self.event(run, ChatState::Final)
        };
        self.end_run(run, evt).await;
    }

    /// Whether a message may start its run at once: nothing runs, waits
    /// or resets, and it asks for no reset first. (The run loop takes a
    /// run from the queue with no await between finding it empty and
    /// stopping, so it cannot miss a run started here.)
    fn idle(&self, busy: bool, reset_first: bool) -> Res<bool> {
        Ok(!busy
            && !reset_first
            && !self.resetting.get()
            && !self.paused.get()
            && self.store.queue_len()? == 0
            && self.store.load_plan()?.is_none())
    }

    /// Queues a message for its run (or starts the run at once when the
    /// session is idle); `overrides` are its directives and
    /// `reset_first` makes the loop reset the session before taking it. A
    /// message from a chat app (`turn`) is queued in its envelope, and its
    /// run knows the app; one from another session (`relay`) says so, and
    /// its run knows how deep in a chain of sends it is (`origin`).
    pub fn enqueue(
        &self,
        run_id: &str,
        text: &str,
        overrides: Option<&ChatDirectives>,
        reset_first: bool,
        origin: Origin<'_>,
    ) -> Res<SessionChatSendReply> {
        let Origin {
            turn,
            relay,
            media,
            trust,
        } = origin;
        let enveloped = match (turn, relay) {
            (Some(t), _) => Some(t.envelope(text)),
            (None, Some(r)) => Some(relayed_text(r, text)),
            (None, None) => None,
        };
        let original = text;
        let text = enveloped.as_deref().unwrap_or(text);
        let send_depth = relay.map_or(0, |r| r.depth);
        // A chat-app message is about its writer; a relayed one about
        // nobody; the gateway's own clients' about the owner.
        let person = match (turn, relay) {
            (Some(t), _) => t.person.as_deref(),
            (None, Some(_)) => None,
            (None, None) => Some(crate::memory::calls::OWNER),
        };
        let channel = turn.map(|t| t.channel.as_str());
        let overrides_json = overrides
            .map(serde_json::to_string)
            .transpose()
            .map_err(SessionError::storage)?;
        let media_json = match media.is_empty() {
            true => None,
            false => Some(serde_json::to_string(media).map_err(SessionError::storage)?),
        };
        let now = now_ms();
        self.store.touch(now)?;
        self.store.note_trust(trust)?;
        let message = Queued {
            run_id,
            text,
            queued_at: now,
            overrides: overrides_json,
            reset_first,
            channel,
            send_depth,
            person,
            plain: original,
            media: media_json,
            trust,
        };
        let busy = self.store.current_run()?.is_some();
        let position = if self.idle(busy, reset_first)? {
            self.store.start_run_now(message)?;
            0
        } else {
            self.store.enqueue(message)?;
            (self.store.queue_len()? - 1 + i64::from(busy)) as u32
        };
        Ok(SessionChatSendReply::Started {
            queued: position > 0,
            queue_position: position,
            directives: overrides.cloned(),
        })
    }
}
