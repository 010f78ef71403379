//! The queue, the current run and the current turn's tool calls.

use super::*;

impl SessionStore {
    // --- the queue and the current run -------------------------------------

    pub fn enqueue(&self, q: Queued<'_>) -> Res<()> {
        self.exec(
            "INSERT INTO run_queue (run_id, message, queued_at, overrides, reset_first, channel, send_depth, person, plain, media, trust) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            vec![
                q.run_id.into(),
                q.text.into(),
                q.queued_at.into(),
                q.overrides.into(),
                i64::from(q.reset_first).into(),
                q.channel.map(str::to_string).into(),
                i64::from(q.send_depth).into(),
                q.person.map(str::to_string).into(),
                q.plain.into(),
                q.media.into(),
                trust_json(q.trust).into(),
            ],
        )?;
        let mut kept = self.kept.borrow_mut();
        if let Some(n) = kept.queued.as_mut() {
            *n += 1;
        }
        if let Some(n) = kept.reset_marks.as_mut() {
            *n += i64::from(q.reset_first);
        }
        Ok(())
    }

    pub fn queue_len(&self) -> Res<i64> {
        if let Some(n) = self.kept.borrow().queued {
            return Ok(n);
        }
        let n = self.count("SELECT COUNT(*) AS n FROM run_queue", vec![])?;
        self.kept.borrow_mut().queued = Some(n);
        Ok(n)
    }

    /// Whether the next queued message asks for an automatic reset first.
    pub fn head_resets_first(&self) -> Res<bool> {
        if self.queue_len()? == 0 {
            return Ok(false);
        }
        let known = self.kept.borrow().reset_marks;
        let marks = match known {
            Some(n) => n,
            None => {
                let n = self.count(
                    "SELECT COUNT(*) AS n FROM run_queue WHERE reset_first = 1",
                    vec![],
                )?;
                self.kept.borrow_mut().reset_marks = Some(n);
                n
            }
        };
        if marks == 0 {
            return Ok(false);
        }
        let n = self.count(
            "SELECT COUNT(*) AS n FROM run_queue WHERE seq = (SELECT MIN(seq) FROM run_queue) AND reset_first = 1",
            vec![],
        )?;
        Ok(n > 0)
    }

    /// Saves a reset's plan and clears the queue's reset marks in one
    /// synchronous step: after a crash there is either a plan to resume or
    /// a marked message to start it again.
    pub fn begin_auto_reset(&self, plan: &ResetPlan) -> Res<()> {
        self.save_plan(Some(plan))?;
        self.exec("UPDATE run_queue SET reset_first = 0", vec![])?;
        self.kept.borrow_mut().reset_marks = Some(0);
        Ok(())
    }

    pub fn current_run(&self) -> Res<Option<CurrentRun>> {
        if let Some(run) = &self.kept.borrow().run {
            return Ok(run.clone());
        }
        let rows: Vec<CurrentRun> = self.rows(
            "SELECT run_id, first_idx, usage, iterations, resumes,
                 COALESCE(prompt, (SELECT body FROM kept_prompts WHERE rev = current_run.prompt_rev)) AS prompt,
                 prompt_rev, overrides, channel, send_depth, person, plain, trust
             FROM current_run WHERE id = 1",
            vec![],
        )?;
        let run = rows.into_iter().next();
        self.kept.borrow_mut().run = Some(run.clone());
        Ok(run)
    }

    /// Whether `run_id` is still the current run (not cancelled meanwhile).
    pub fn is_current(&self, run_id: &str) -> bool {
        if let Some(run) = &self.kept.borrow().run {
            return run.as_ref().is_some_and(|r| r.run_id == run_id);
        }
        self.current_run()
            .ok()
            .flatten()
            .is_some_and(|r| r.run_id == run_id)
    }

    /// Changes the kept current run the way a statement just changed its row.
    fn kept_run(&self, change: impl FnOnce(&mut CurrentRun)) {
        if let Some(Some(run)) = self.kept.borrow_mut().run.as_mut() {
            change(run);
        }
    }

    /// Moves the oldest queued message into the history and makes it the
    /// current run, in one synchronous step (atomic in the object).
    pub fn start_next_run(&self) -> Res<Option<CurrentRun>> {
        #[derive(Deserialize)]
        struct Row {
            seq: i64,
            run_id: String,
            message: String,
            queued_at: i64,
            overrides: Option<String>,
            channel: Option<String>,
            send_depth: i64,
            person: Option<String>,
            plain: Option<String>,
            media: Option<String>,
            reset_first: i64,
            trust: Option<String>,
        }
        // Known empty: every queued row is counted as it is written.
        if self.kept.borrow().queued == Some(0) {
            return Ok(None);
        }
        let rows: Vec<Row> = self.rows(
            "SELECT seq, run_id, message, queued_at, overrides, channel, send_depth, person, plain, media, reset_first, trust FROM run_queue ORDER BY seq LIMIT 1",
            vec![],
        )?;
        let Some(q) = rows.into_iter().next() else {
            self.kept.borrow_mut().queued = Some(0);
            return Ok(None);
        };
        self.exec("DELETE FROM run_queue WHERE seq = ?", vec![q.seq.into()])?;
        let mut kept = self.kept.borrow_mut();
        if let Some(n) = kept.queued.as_mut() {
            *n -= 1;
        }
        if let Some(n) = kept.reset_marks.as_mut() {
            *n -= q.reset_first.min(1);
        }
        drop(kept);
        self.begin_run(
            Queued {
                run_id: &q.run_id,
                text: &q.message,
                queued_at: q.queued_at,
                overrides: q.overrides.clone(),
                reset_first: false,
                channel: q.channel.as_deref(),
                send_depth: q.send_depth as u32,
                person: q.person.as_deref(),
                plain: q.plain.as_deref().unwrap_or(&q.message),
                media: q.media.clone(),
                trust: read_trust(q.trust.as_deref()),
            },
            q.plain.is_some(),
        )
        .map(Some)
    }

    /// A message for an idle session (no run, nothing queued, no reset
    /// pending) becomes its current run at once: the same rows as going
    /// through the queue, without writing, reading and deleting its row.
    pub fn start_run_now(&self, q: Queued<'_>) -> Res<CurrentRun> {
        self.begin_run(q, true)
    }

    /// `q` into the history and the current run. `has_plain`: rows queued
    /// before the plain text was kept have none.
    fn begin_run(&self, q: Queued<'_>, has_plain: bool) -> Res<CurrentRun> {
        let first_idx = self.next_idx()?;
        let now = now_ms();
        // A message with files is stored with them as blocks, by R2 key.
        let media: Vec<crate::media::Attached> = match q.media.as_deref() {
            Some(json) => serde_json::from_str(json).map_err(SessionError::storage)?,
            None => Vec::new(),
        };
        self.append(&Message::User(UserMessage {
            content: crate::media::message::user_content(q.text, &media),
            timestamp: q.queued_at,
            context: None,
        }))?;
        let plain = has_plain.then(|| q.plain.to_string());
        let channel = q.channel.map(str::to_string);
        let person = q.person.map(str::to_string);
        let send_depth = i64::from(q.send_depth);
        let trust = Some(trust_json(q.trust));
        self.exec(
            "INSERT INTO current_run (id, run_id, first_idx, started_at, usage, overrides, channel, send_depth, person, plain, trust) VALUES (1, ?, ?, ?, '{}', ?, ?, ?, ?, ?, ?)",
            vec![
                q.run_id.into(),
                first_idx.into(),
                now.into(),
                q.overrides.clone().into(),
                channel.clone().into(),
                send_depth.into(),
                person.clone().into(),
                plain.clone().into(),
                trust.clone().into(),
            ],
        )?;
        let run = CurrentRun {
            run_id: q.run_id.to_string(),
            first_idx,
            usage: "{}".into(),
            iterations: 0,
            resumes: 0,
            prompt: None,
            prompt_rev: None,
            overrides: q.overrides,
            channel,
            send_depth,
            person,
            plain,
            trust,
        };
        self.kept.borrow_mut().run = Some(Some(run.clone()));
        Ok(run)
    }

    pub fn end_run(&self) -> Res<()> {
        self.flush_meta()?;
        self.exec("DELETE FROM current_run WHERE id = 1", vec![])?;
        self.kept.borrow_mut().run = Some(None);
        Ok(())
    }

    /// What a run that goes on to tool calls has used so far: its usage
    /// and the model calls answered.
    pub fn set_run_progress(&self, usage_json: String, iterations: i64) -> Res<()> {
        self.exec(
            "UPDATE current_run SET usage = ?, iterations = ? WHERE id = 1",
            vec![usage_json.clone().into(), iterations.into()],
        )?;
        self.kept_run(|r| {
            r.usage = usage_json;
            r.iterations = iterations;
        });
        Ok(())
    }

    /// Keeps the run's assembled prompt while it waits on tools: the run
    /// names it by `rev`, and its text (`body`, asked for only then) is
    /// written when `rev` is not the one stored already, in place of it.
    pub fn keep_run_prompt(&self, rev: &str, body: impl FnOnce() -> String) -> Res<()> {
        if self.kept_prompt_rev()?.as_deref() != Some(rev) {
            self.exec("DELETE FROM kept_prompts", vec![])?;
            self.exec(
                "INSERT INTO kept_prompts (rev, body) VALUES (?, ?)",
                vec![rev.into(), body().into()],
            )?;
            self.kept.borrow_mut().kept_prompt = Some(Some(rev.to_string()));
        }
        self.exec(
            "UPDATE current_run SET prompt = NULL, prompt_rev = ? WHERE id = 1",
            vec![rev.into()],
        )?;
        self.kept_run(|r| {
            r.prompt = None;
            r.prompt_rev = Some(rev.to_string());
        });
        Ok(())
    }

    /// The stored text of the prompt `rev`.
    pub fn kept_prompt_body(&self, rev: &str) -> Res<Option<String>> {
        self.first_text(
            "SELECT body AS text FROM kept_prompts WHERE rev = ?",
            vec![rev.into()],
        )
    }

    fn kept_prompt_rev(&self) -> Res<Option<String>> {
        if let Some(rev) = &self.kept.borrow().kept_prompt {
            return Ok(rev.clone());
        }
        let rev = self.first_text("SELECT rev AS text FROM kept_prompts", vec![])?;
        self.kept.borrow_mut().kept_prompt = Some(rev.clone());
        Ok(rev)
    }

    /// Counts one more resume of an interrupted run.
    pub fn count_resume(&self) -> Res<()> {
        self.exec(
            "UPDATE current_run SET resumes = resumes + 1 WHERE id = 1",
            vec![],
        )?;
        self.kept_run(|r| r.resumes += 1);
        Ok(())
    }

    // --- the current turn's tool calls -------------------------------------

    /// Stores the calls of an assistant turn, in call order.
    pub fn store_calls<'a>(
        &self,
        calls: impl Iterator<Item = (&'a str, &'a str, &'a Value)>,
    ) -> Res<()> {
        for (seq, (id, name, args)) in calls.enumerate() {
            let row = CallRow {
                call_id: id.to_string(),
                name: name.to_string(),
                args: args.to_string(),
                dispatched: 0,
                result: None,
                approved: 0,
            };
            self.exec(
                "INSERT INTO tool_calls (seq, call_id, name, args) VALUES (?, ?, ?, ?)",
                vec![
                    (seq as i64).into(),
                    id.into(),
                    name.into(),
                    row.args.as_str().into(),
                ],
            )?;
            if let Some(kept) = self.kept.borrow_mut().calls.as_mut() {
                kept.push(row);
            }
        }
        Ok(())
    }

    pub fn call_rows(&self) -> Res<Vec<CallRow>> {
        if let Some(rows) = &self.kept.borrow().calls {
            return Ok(rows.clone());
        }
        let rows: Vec<CallRow> = self.rows(
            "SELECT call_id, name, args, dispatched, result, approved FROM tool_calls ORDER BY seq",
            vec![],
        )?;
        self.kept.borrow_mut().calls = Some(rows.clone());
        Ok(rows)
    }

    /// The owner approved the call: dispatched again, this time to run.
    pub fn approve_call(&self, call_id: &str) -> Res<()> {
        self.exec(
            "UPDATE tool_calls SET approved = 1, dispatched = 0 WHERE call_id = ? AND result IS NULL",
            vec![call_id.into()],
        )?;
        self.kept_call(call_id, |row| {
            if !row.answered() {
                row.approved = 1;
                row.dispatched = 0;
            }
        });
        Ok(())
    }

    pub fn mark_dispatched(&self, call_id: &str) -> Res<()> {
        self.exec(
            "UPDATE tool_calls SET dispatched = 1 WHERE call_id = ?",
            vec![call_id.into()],
        )?;
        self.kept_call(call_id, |row| row.dispatched = 1);
        Ok(())
    }

    /// Stores a call's result unless it already has one (the first of a
    /// result, a timeout and a cancellation wins).
    pub fn save_call_result(&self, call_id: &str, result: &Message) -> Res<()> {
        let data = serde_json::to_string(result).map_err(SessionError::storage)?;
        self.exec(
            "UPDATE tool_calls SET result = ?, dispatched = 1 WHERE call_id = ? AND result IS NULL",
            vec![data.as_str().into(), call_id.into()],
        )?;
        self.kept_call(call_id, |row| {
            if row.result.is_none() {
                row.result = Some(data);
                row.dispatched = 1;
            }
        });
        Ok(())
    }

    /// The tool name of call `call_id` if it still waits for its result.
    pub fn open_call(&self, call_id: &str) -> Res<Option<String>> {
        let rows = self.call_rows()?;
        let open = rows
            .into_iter()
            .find(|r| r.call_id == call_id && !r.answered());
        Ok(open.map(|r| r.name))
    }

    /// Mirrors a write to the kept row of call `call_id`.
    fn kept_call(&self, call_id: &str, write: impl FnOnce(&mut CallRow)) {
        let mut kept = self.kept.borrow_mut();
        let row = kept
            .calls
            .as_mut()
            .and_then(|rows| rows.iter_mut().find(|r| r.call_id == call_id));
        if let Some(row) = row {
            write(row);
        }
    }

    /// The turn is over: its calls and the deadline of `deadline_kind` go.
    pub fn clear_calls(&self, deadline_kind: &str) -> Res<()> {
        if !self.kept.borrow().calls.as_ref().is_some_and(Vec::is_empty) {
            self.exec("DELETE FROM tool_calls", vec![])?;
            self.kept.borrow_mut().calls = Some(Vec::new());
        }
        self.delete_deadline(deadline_kind)
    }
}

fn trust_json(trust: gsv_protocol::Trust) -> String {
    serde_json::to_string(&trust).unwrap_or_default()
}
