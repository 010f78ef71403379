//! The Session Durable Object (one per canonical session key): history in
//! SQLite, a persisted FIFO of messages waiting for their run, and the
//! agent loop. A watchdog deadline (the object's alarm) resumes or ends a
//! run whose loop died with an eviction or restart.

mod alarm;
mod archives;
mod chat;
mod compaction;
mod core;
mod error;
mod events;
mod link;
mod reset;
mod run;
mod run_prompt;
mod store;
mod summarizer;
mod tools;

use self::core::Core;
use crate::session::internal::{path, RunOutcome, SessionExecEvent, SessionQuery};
use crate::session::patch::apply_patch;
use crate::session::tools::{exec_event_message, ToolWait};
use crate::worker::rpc::{new_id, now_ms, read_json, reply};
use alarm::{TICK, TICK_MS};
use error::{Res, SessionError};
use gsv_protocol::*;
use reset::Reset;
use run::run_loop;
use serde::Serialize;
use std::rc::Rc;
use store::Queued;
use tools::{Tools, TOOLS_DEADLINE};
use worker::*;

/// Resumes of one interrupted run before it is ended with an error.
const MAX_RESUMES: i64 = 2;
/// Background-command events are recognised as repeats for this long.
const SEEN_EXEC_EVENT_MS: i64 = 24 * 3600 * 1000;

#[durable_object]
pub struct Session {
    core: Rc<Core>,
    /// These handlers answer on the event link, not as a request.
    on_link: bool,
}

impl DurableObject for Session {
    fn new(state: State, env: Env) -> Self {
        let core = Rc::new_cyclic(|this| Core::new(state, env, this.clone()));
        Self {
            core,
            on_link: false,
        }
    }

    async fn fetch(&self, mut req: Request) -> Result<Response> {
        let req = &mut req;
        match req.path().as_str() {
            path::CHAT_SEND => answer(async { self.chat_send(body(req).await?).await }.await),
            path::GET => answer(async { self.get(body(req).await?) }.await),
            path::PREVIEW => answer(async { self.preview(body(req).await?) }.await),
            path::STATS => answer(async { self.stats(body(req).await?) }.await),
            path::HISTORY => answer(async { self.history(body(req).await?) }.await),
            path::PATCH => answer(async { self.patch(body(req).await?) }.await),
            path::COMPACT => answer(async { self.compact(body(req).await?).await }.await),
            path::RESET => answer(
                async {
                    let q = body(req).await?;
                    self.reset(q, "Run ended: the session was reset").await
                }
                .await,
            ),
            path::TOOL_RESULT => answer(async { self.tool_result(body(req).await?) }.await),
            path::APPROVAL_DECIDED => {
                answer(async { self.approval_decided(body(req).await?) }.await)
            }
            path::EXEC_EVENT => answer(async { self.exec_event(body(req).await?) }.await),
            path::RUN_OUTCOME => answer(async { self.run_outcome(body(req).await?) }.await),
            path::ABORT => answer(
                async {
                    let q = body(req).await?;
                    self.abort(q, "Run cancelled by user").await
                }
                .await,
            ),
            path::USAGE_DAYS => answer(
                async {
                    let q: crate::session::internal::UsageDays = body(req).await?;
                    self.core.store.usage_days(&q.from)
                }
                .await,
            ),
            path::TRANSCRIPT => answer(
                async {
                    let p = body(req).await?;
                    archives::transcript(&self.core.store, &self.core.bucket()?, p).await
                }
                .await,
            ),
            _ => Response::error("Not found", 404),
        }
    }

    async fn alarm(&self) -> Result<Response> {
        let core = &self.core;
        let now = now_ms();
        core.alarm.fired();
        let due = core
            .store
            .take_due_deadlines(now)
            .map_err(|e| Error::RustError(e.to_string()))?;
        if due.iter().any(|k| k == TOOLS_DEADLINE) {
            // Unanswered calls become timeout errors and the run goes on.
            self.tools()
                .time_out()
                .map_err(|e| Error::RustError(e.to_string()))?;
            if !core.running.get() {
                run_loop(core.clone()).await;
            }
        }
        if due.iter().any(|k| k == TICK) {
            self.tick(now)
                .await
                .map_err(|e| Error::RustError(e.to_string()))?;
        }
        core.schedule().await;
        Response::ok("ok")
    }
}

impl Session {
    /// The object's handlers over its shared parts, for work that arrives
    /// other than as a request (a message on the event link).
    fn of(core: Rc<Core>) -> Self {
        Self {
            core,
            on_link: true,
        }
    }

    async fn tick(&self, now: i64) -> Res<()> {
        let core = &self.core;
        let store = &core.store;
        if core.running.get() {
            // The loop is alive in this instance: keep watching.
            return store.set_deadline(TICK, now + TICK_MS);
        }
        let waiting = matches!(self.tools().state()?, ToolWait::Waiting);
        if let Some(run) = store.current_run()?.filter(|_| !waiting) {
            if run.resumes >= MAX_RESUMES {
                core.fail_run(&run, "The run was interrupted and could not be resumed")
                    .await;
            } else {
                store.count_resume()?;
            }
        }
        let work_left = (store.current_run()?.is_some() && !waiting)
            || store.queue_len()? > 0
            || store.reset_pending();
        if work_left {
            // Runs the interrupted run and the queue right here: an alarm
            // handler may take its time.
            run_loop(core.clone()).await;
            return Ok(());
        }
        if core.link.is_open() {
            let open = !core.link.idle_at(now) || core.link.wind_down(now);
            if open {
                store.set_deadline(TICK, now + TICK_MS)?;
            }
        }
        Ok(())
    }

    /// Runs the loop past this request; the watchdog covers its death.
    fn start_loop(&self) {
        if !self.core.running.get() {
            let core = self.core.clone();
            // A request's answer goes out only once its handler returns:
            // the loop waits a zero timer, else its first writes and
            // workspace reads ran ahead of the answer, which (chat.send's
            // "started") reached the Gateway only once the prompt was loaded,
            // ~16 ms locally instead of ~2 ms. An answer on the link is sent
            // as the handler ends, before the loop is first polled.
            let wait = !self.on_link;
            self.core.state.wait_until(async move {
                if wait {
                    Delay::from(std::time::Duration::from_millis(0)).await;
                }
                run_loop(core).await
            });
        }
    }

    /// A message was queued: the watchdog is armed before the request
    /// answers (should this object die before its loop starts, the alarm
    /// runs the queue), then the loop starts.
    async fn start_queued(&self) -> Res<()> {
        self.core.ensure_tick().await?;
        self.start_loop();
        Ok(())
    }

    fn tools(&self) -> Tools<'_> {
        Tools { core: &self.core }
    }

    /// The reset machinery over this instance's store and flag.
    fn resetter<'a>(&'a self, bucket: &'a Bucket) -> Reset<'a> {
        Reset {
            store: &self.core.store,
            bucket,
            env: &self.core.env,
            busy: &self.core.resetting,
        }
    }

    async fn compact(&self, p: SessionCompactParams) -> Res<SessionCompactResult> {
        let bucket = self.core.bucket()?;
        archives::compact(&self.core.store, &bucket, self.core.resetting.get(), p).await
    }

    /// How a chat's run stands, for a gateway that may have missed its end.
    fn run_outcome(&self, q: crate::session::internal::RunOutcomeQuery) -> Res<RunOutcome> {
        let store = &self.core.store;
        if let Some(event) = store.outcome(&q.run_id)? {
            return Ok(RunOutcome::Ended {
                event: Box::new(event),
            });
        }
        if store.current_run()?.is_some_and(|r| r.run_id == q.run_id) {
            return Ok(RunOutcome::Running);
        }
        match store.is_queued(&q.run_id)? {
            true => Ok(RunOutcome::Queued),
            false => Ok(RunOutcome::Unknown),
        }
    }

    fn approval_decided(&self, d: crate::session::internal::ApprovalDecided) -> Res<AckResult> {
        let (ack, go_on) = self.tools().take_decision(d)?;
        if go_on {
            self.start_loop();
        }
        Ok(ack)
    }

    fn tool_result(&self, p: ToolResultParams) -> Res<AckResult> {
        let (ack, complete) = self.tools().take_result(p)?;
        if complete {
            self.start_loop();
        }
        Ok(ack)
    }

    /// A background command of this session ended: the agent hears of it
    /// in a run of its own, queued like a message (once per event).
    fn exec_event(&self, ev: SessionExecEvent) -> Res<AckResult> {
        let store = &self.core.store;
        store.meta(&ev.session_key)?;
        let now = now_ms();
        if !store.first_sight_of_exec_event(&ev.event.event_id, now, SEEN_EXEC_EVENT_MS)? {
            return Ok(AckResult {
                ok: true,
                dropped: Some(true),
            });
        }
        store.save_nodes(&ev.nodes_rev, &ev.nodes)?;
        let text = exec_event_message(&ev.node_id, &ev.event);
        store.enqueue(Queued {
            run_id: &new_id(),
            text: &text,
            queued_at: now,
            overrides: None,
            reset_first: false,
            channel: None,
            send_depth: 0,
            // The agent's own news: nobody's memory, nothing to recall.
            person: None,
            plain: "",
            media: None,
            // At the level of whoever last spoke here (who started what
            // the node reports on).
            trust: gsv_protocol::Trust::system(store.meta("")?.trust.unwrap_or_default()),
        })?;
        self.start_loop();
        Ok(AckResult {
            ok: true,
            dropped: None,
        })
    }

    /// Cancels the current run and forgets its outstanding tool calls; a
    /// loop still waiting on the model drops the answer when it comes.
    async fn abort(&self, q: SessionQuery, reason: &str) -> Res<ChatAbortResult> {
        let core = &self.core;
        core.store.meta(&q.session_key)?;
        let Some(run) = core.store.current_run()? else {
            return Ok(ChatAbortResult {
                ok: true,
                was_running: false,
                run_id: None,
                pending_tools_cancelled: 0,
            });
        };
        let cancelled = self.tools().cancel()?;
        core.fail_run(&run, reason).await;
        core.schedule().await;
        // The next queued message starts (unless a reset holds the loop).
        self.start_loop();
        Ok(ChatAbortResult {
            ok: true,
            was_running: true,
            run_id: Some(run.run_id),
            pending_tools_cancelled: cancelled,
        })
    }

    fn stats(&self, q: SessionQuery) -> Res<SessionStatsResult> {
        let core = &self.core;
        let meta = core.store.meta(&q.session_key)?;
        let queued = core.store.queue_len()?;
        Ok(SessionStatsResult {
            message_count: core.store.message_count()?,
            uptime: now_ms() - meta.created_at,
            is_processing: core.store.current_run()?.is_some(),
            queue_size: queued as u64,
            session_key: meta.session_key,
            session_id: meta.session_id,
            tokens: meta.tokens,
            created_at: meta.created_at,
            updated_at: meta.updated_at,
            trust: meta.trust,
            last_turn: meta.last_turn,
            last_workspace_load: core.last_prompt.borrow().as_ref().map(|last| {
                WorkspaceLoadStats {
                    recalled: core.last_recalled.borrow().clone(),
                    ..last.load.clone()
                }
            }),
        })
    }

    fn get(&self, q: SessionQuery) -> Res<SessionGetResult> {
        let store = &self.core.store;
        let meta = store.meta(&q.session_key)?;
        Ok(meta.to_result(store.message_count()?))
    }

    fn history(&self, q: SessionQuery) -> Res<SessionHistoryResult> {
        let m = self.core.store.meta(&q.session_key)?;
        Ok(SessionHistoryResult {
            session_key: m.session_key,
            current_session_id: m.session_id,
            previous_session_ids: m.previous_session_ids,
        })
    }

    fn patch(&self, p: SessionPatchParams) -> Res<SessionGetResult> {
        let store = &self.core.store;
        let meta = store.meta(&p.session_key)?;
        let next = apply_patch(&meta, &p).map_err(|e| SessionError::Invalid(e.to_string()))?;
        store.save_meta(&next)?;
        Ok(next.to_result(store.message_count()?))
    }

    fn preview(&self, q: SessionQuery) -> Res<SessionPreviewResult> {
        let store = &self.core.store;
        let meta = store.meta(&q.session_key)?;
        let messages = match q.limit {
            Some(limit) => store.last_messages(limit)?,
            None => store.messages()?,
        };
        Ok(SessionPreviewResult {
            session_key: meta.session_key,
            session_id: meta.session_id,
            message_count: store.message_count()?,
            messages,
        })
    }
}

/// A request's JSON body; a malformed one is refused with a 400.
async fn body<T: serde::de::DeserializeOwned>(req: &mut Request) -> Res<T> {
    Ok(read_json(req).await?)
}

/// The answer to an internal request: the value, or the error in the
/// wire's shape with its status.
fn answer<T: Serialize>(result: Res<T>) -> Result<Response> {
    reply(result.map_err(ErrorShape::from))
}
