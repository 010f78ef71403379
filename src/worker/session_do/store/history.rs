//! The history: its rows in SQLite, and the parsed messages an instance
//! keeps while they are few enough.

use super::*;
use std::borrow::Cow;

impl SessionStore {
    // --- the history ---------------------------------------------------

    pub fn message_count(&self) -> Res<u64> {
        if let Some(h) = &self.kept.borrow().history {
            return Ok(h.messages.len() as u64);
        }
        self.count("SELECT COUNT(*) AS n FROM messages", vec![])
            .map(|n| n as u64)
    }

    /// Every stored message in order: its index and its JSON.
    pub fn message_rows(&self) -> Res<Vec<MessageRow>> {
        self.rows("SELECT idx, data FROM messages ORDER BY idx", vec![])
    }

    /// Every stored message's JSON in order, one row at a time (archives
    /// stream it without holding the history).
    pub fn message_data(&self) -> Res<impl Iterator<Item = Res<String>>> {
        #[derive(Deserialize)]
        struct Row {
            data: String,
        }
        let cursor = self.exec("SELECT data FROM messages ORDER BY idx", vec![])?;
        Ok(cursor
            .next::<Row>()
            .map(|r| r.map(|r| r.data).map_err(SessionError::storage)))
    }

    /// Every stored message, parsed.
    pub fn messages(&self) -> Res<Vec<Message>> {
        parse_all(self.rows("SELECT data FROM messages ORDER BY idx", vec![])?)
    }

    /// The last `limit` messages, oldest first.
    pub fn last_messages(&self, limit: u32) -> Res<Vec<Message>> {
        let mut m = parse_all(self.rows(
            "SELECT data FROM messages ORDER BY idx DESC LIMIT ?",
            vec![i64::from(limit).into()],
        )?)?;
        m.reverse();
        Ok(m)
    }

    /// A page of the history, oldest first.
    pub fn message_page(&self, limit: u32, offset: u64) -> Res<Vec<Message>> {
        parse_all(self.rows(
            "SELECT data FROM messages ORDER BY idx LIMIT ? OFFSET ?",
            vec![i64::from(limit).into(), (offset as i64).into()],
        )?)
    }

    /// The whole history, and where the part of it from message index
    /// `first_idx` on begins (an index, not a position: older messages may
    /// be compacted away). Read from SQLite once per instance and kept
    /// while it is small enough; each model call then costs no read and no
    /// copy (the run shares the kept messages).
    pub fn history_from(&self, first_idx: i64) -> Res<HistoryRead> {
        if self.kept.borrow().history.is_none() {
            let rows = self.message_rows()?;
            let mut history = History::default();
            for row in rows {
                let message: Message =
                    serde_json::from_str(&row.data).map_err(SessionError::storage)?;
                history.push(row.idx, message, measure(&row.data));
            }
            if history.bytes > KEEP_HISTORY_BYTES {
                return Ok(history.read_from(first_idx));
            }
            let generation = self.generations.get() + 1;
            self.generations.set(generation);
            history.generation = Some(generation);
            self.kept.borrow_mut().history = Some(history);
        }
        let kept = self.kept.borrow();
        match kept.history.as_ref() {
            Some(history) => Ok(history.read_from(first_idx)),
            None => Ok(HistoryRead::default()),
        }
    }

    pub fn append(&self, msg: &Message) -> Res<()> {
        let data = serde_json::to_string(msg).map_err(SessionError::storage)?;
        self.append_with(Cow::Borrowed(msg), data)
    }

    /// Appends a message stored already as JSON (a tool call's result): its
    /// text goes in as it is, parsed once for the history kept in memory.
    pub fn append_stored(&self, data: &str) -> Res<()> {
        let msg: Message = serde_json::from_str(data).map_err(SessionError::storage)?;
        self.append_with(Cow::Owned(msg), data.to_string())
    }

    /// Appends `msg`, whose JSON is `data`.
    fn append_with(&self, msg: Cow<'_, Message>, data: String) -> Res<()> {
        let size = measure(&data);
        // The next index is known when the history is kept.
        let next = self.kept.borrow().history.as_ref().map(History::next_idx);
        match next {
            Some(idx) => self.exec(
                "INSERT INTO messages (idx, role, data, timestamp) VALUES (?, ?, ?, ?)",
                vec![idx.into(), msg.role().into(), data.into(), msg.timestamp().into()],
            )?,
            None => self.exec(
                "INSERT INTO messages (idx, role, data, timestamp) VALUES ((SELECT COALESCE(MAX(idx), -1) + 1 FROM messages), ?, ?, ?)",
                vec![msg.role().into(), data.into(), msg.timestamp().into()],
            )?,
        };
        let mut kept = self.kept.borrow_mut();
        if let (Some(idx), Some(h)) = (next, kept.history.as_mut()) {
            h.push(idx, msg.into_owned(), size);
            if h.bytes > KEEP_HISTORY_BYTES {
                kept.history = None;
            }
        }
        Ok(())
    }

    /// The index the next appended message gets.
    pub(super) fn next_idx(&self) -> Res<i64> {
        if let Some(h) = &self.kept.borrow().history {
            return Ok(h.next_idx());
        }
        self.count(
            "SELECT COALESCE(MAX(idx), -1) + 1 AS n FROM messages",
            vec![],
        )
    }

    /// The history was rewritten (compaction, a transcript, a reset): it is
    /// read again when next needed.
    fn history_changed(&self) {
        self.kept.borrow_mut().history = None;
    }

    /// Removes the messages before index `idx` (they are archived).
    pub fn delete_messages_before(&self, idx: i64) -> Res<()> {
        self.exec("DELETE FROM messages WHERE idx < ?", vec![idx.into()])?;
        self.history_changed();
        Ok(())
    }

    /// Replaces the messages before `first_kept` by `summary`, at the index
    /// just before it, in one synchronous step.
    pub fn replace_with_summary(&self, first_kept: i64, summary: &Message, at_ms: i64) -> Res<()> {
        let data = serde_json::to_string(summary).map_err(SessionError::storage)?;
        self.delete_messages_before(first_kept)?;
        self.exec(
            "INSERT INTO messages (idx, role, data, timestamp) VALUES (?, 'user', ?, ?)",
            vec![(first_kept - 1).into(), data.into(), at_ms.into()],
        )?;
        self.history_changed();
        Ok(())
    }

    /// Writes a voice note's transcript (or why there is none) into the
    /// stored message that holds it (found by its R2 key, a fresh UUID).
    pub fn save_transcript(&self, key: &str, outcome: &Result<String, String>) -> Res<()> {
        let rows: Vec<MessageRow> = self.rows(
            "SELECT idx, data FROM messages WHERE instr(data, ?) > 0",
            vec![key.into()],
        )?;
        for row in rows {
            let mut message: Message =
                serde_json::from_str(&row.data).map_err(SessionError::storage)?;
            if crate::media::hydrate::set_transcript(&mut message, key, outcome) {
                let data = serde_json::to_string(&message).map_err(SessionError::storage)?;
                self.exec(
                    "UPDATE messages SET data = ? WHERE idx = ?",
                    vec![data.into(), row.idx.into()],
                )?;
                self.history_changed();
            }
        }
        Ok(())
    }

    /// Attaches `context` (empty: nothing) to the user message at `idx`,
    /// the current run's, before a model call sent it. The kept history
    /// changes in place without a new generation: the message is after
    /// the last assistant message, and nothing from there on was written
    /// for a provider yet (`WrittenHistory` writes up to that message).
    pub fn set_message_context(&self, idx: i64, context: &str) -> Res<()> {
        let context = (!context.is_empty()).then(|| context.to_string());
        let kept = self.kept.borrow().history.as_ref().and_then(|h| h.get(idx));
        let message = match kept {
            Some(message) => message,
            None => {
                let rows: Vec<DataRow> =
                    self.rows("SELECT data FROM messages WHERE idx = ?", vec![idx.into()])?;
                match parse_all(rows)?.pop() {
                    Some(message) => message,
                    None => return Ok(()),
                }
            }
        };
        let Message::User(mut user) = message else {
            return Ok(());
        };
        if user.context == context {
            return Ok(());
        }
        user.context = context;
        let message = Message::User(user);
        let data = serde_json::to_string(&message).map_err(SessionError::storage)?;
        let size = measure(&data);
        self.exec(
            "UPDATE messages SET data = ? WHERE idx = ?",
            vec![data.into(), idx.into()],
        )?;
        if let Some(h) = self.kept.borrow_mut().history.as_mut() {
            h.replace(idx, message, size);
        }
        Ok(())
    }

    pub fn clear_messages(&self) -> Res<()> {
        self.exec("DELETE FROM messages", vec![])?;
        self.history_changed();
        Ok(())
    }
}

/// The stored messages by index, each with its token estimate (of its
/// JSON, as compaction measures), and their JSON's size. The messages and
/// estimates are shared with the run that read them; a run lets go of
/// them before it stores what comes next, so appending copies nothing.
#[derive(Default)]
pub(super) struct History {
    idxs: Vec<i64>,
    messages: Rc<Vec<Message>>,
    tokens: Rc<Vec<u64>>,
    bytes: usize,
    /// Set once kept: from then on it is only appended to.
    generation: Option<u64>,
}

impl History {
    /// `message` at index `idx`, stored as `data` (its size and estimate).
    fn push(&mut self, idx: i64, message: Message, (bytes, tokens): (usize, u64)) {
        self.idxs.push(idx);
        Rc::make_mut(&mut self.messages).push(message);
        Rc::make_mut(&mut self.tokens).push(tokens);
        self.bytes += bytes;
    }

    fn next_idx(&self) -> i64 {
        self.idxs.last().map_or(0, |idx| idx + 1)
    }

    /// The message at index `idx`, if kept.
    fn get(&self, idx: i64) -> Option<Message> {
        let at = self.idxs.binary_search(&idx).ok()?;
        self.messages.get(at).cloned()
    }

    /// The message at index `idx` becomes `message`, stored as `data` (its
    /// size and estimate).
    fn replace(&mut self, idx: i64, message: Message, (bytes, tokens): (usize, u64)) {
        let Ok(at) = self.idxs.binary_search(&idx) else {
            return;
        };
        let old = serde_json::to_string(&self.messages[at]).map_or(0, |d| d.len());
        Rc::make_mut(&mut self.messages)[at] = message;
        Rc::make_mut(&mut self.tokens)[at] = tokens;
        self.bytes = self.bytes.saturating_sub(old) + bytes;
    }

    fn read_from(&self, first_idx: i64) -> HistoryRead {
        HistoryRead {
            all: self.messages.clone(),
            from: self.idxs.partition_point(|idx| *idx < first_idx),
            tokens: self.tokens.clone(),
            generation: self.generation,
        }
    }
}

/// A message's JSON: its size and token estimate.
fn measure(data: &str) -> (usize, u64) {
    (data.len(), estimate_text_tokens(data))
}

/// A history past this much JSON is read from SQLite for each model call
/// rather than kept (the isolate's memory is shared by its objects).
pub(super) const KEEP_HISTORY_BYTES: usize = 4 << 20;

/// A history as a run reads it.
#[derive(Default)]
pub struct HistoryRead {
    /// Every message, oldest first.
    pub all: Rc<Vec<Message>>,
    /// The position in `all` of the run's first message.
    pub from: usize,
    /// The token estimate of each of `all`.
    pub tokens: Rc<Vec<u64>>,
    /// Names the kept history `all` was read from: while it is the same,
    /// `all` only grew at its end since (`None`: read from SQLite, not kept).
    pub generation: Option<u64>,
}

#[derive(Deserialize)]
struct DataRow {
    data: String,
}

fn parse_all(rows: Vec<DataRow>) -> Res<Vec<Message>> {
    rows.iter()
        .map(|r| serde_json::from_str(&r.data).map_err(SessionError::storage))
        .collect()
}
