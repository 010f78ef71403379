//! The deadlines behind the object's one alarm, and the background-command
//! events already seen.

use super::*;

impl SessionStore {
    // --- deadlines (the object's one alarm) --------------------------------

    /// The deadlines table, read once per instance.
    fn deadlines(&self) -> Res<Vec<(String, i64)>> {
        if let Some(d) = &self.kept.borrow().deadlines {
            return Ok(d.clone());
        }
        #[derive(Deserialize)]
        struct Row {
            kind: String,
            at_ms: i64,
        }
        let rows: Vec<Row> = self.rows("SELECT kind, at_ms FROM deadlines", vec![])?;
        let all: Vec<(String, i64)> = rows.into_iter().map(|r| (r.kind, r.at_ms)).collect();
        self.kept.borrow_mut().deadlines = Some(all.clone());
        Ok(all)
    }

    /// Changes the kept deadlines the way a statement just changed the table.
    fn kept_deadlines(&self, change: impl FnOnce(&mut Vec<(String, i64)>)) {
        if let Some(d) = self.kept.borrow_mut().deadlines.as_mut() {
            change(d);
        }
    }

    pub fn set_deadline(&self, kind: &str, at_ms: i64) -> Res<()> {
        self.exec(
            "INSERT INTO deadlines (kind, at_ms) VALUES (?, ?) ON CONFLICT(kind) DO UPDATE SET at_ms = excluded.at_ms",
            vec![kind.into(), at_ms.into()],
        )?;
        self.kept_deadlines(|d| {
            d.retain(|(k, _)| k != kind);
            d.push((kind.to_string(), at_ms));
        });
        Ok(())
    }

    /// Sets a deadline unless one of `kind` is already set.
    pub fn set_deadline_once(&self, kind: &str, at_ms: i64) -> Res<()> {
        self.exec(
            "INSERT INTO deadlines (kind, at_ms) VALUES (?, ?) ON CONFLICT(kind) DO NOTHING",
            vec![kind.into(), at_ms.into()],
        )?;
        self.kept_deadlines(|d| {
            if !d.iter().any(|(k, _)| k == kind) {
                d.push((kind.to_string(), at_ms));
            }
        });
        Ok(())
    }

    pub fn deadline(&self, kind: &str) -> Res<Option<i64>> {
        Ok(self
            .deadlines()?
            .iter()
            .find(|(k, _)| k == kind)
            .map(|(_, at)| *at))
    }

    pub fn delete_deadline(&self, kind: &str) -> Res<()> {
        if self.deadline(kind)?.is_none() {
            return Ok(());
        }
        self.exec("DELETE FROM deadlines WHERE kind = ?", vec![kind.into()])?;
        self.kept_deadlines(|d| d.retain(|(k, _)| k != kind));
        Ok(())
    }

    /// The earliest deadline, if any.
    pub fn next_deadline(&self) -> Option<i64> {
        let all = self.deadlines().ok()?;
        all.iter().map(|(_, at)| *at).min()
    }

    /// Removes and returns the deadlines that are due.
    pub fn take_due_deadlines(&self, now: i64) -> Res<Vec<String>> {
        let due: Vec<String> = self
            .deadlines()?
            .into_iter()
            .filter(|(_, at)| *at <= now)
            .map(|(k, _)| k)
            .collect();
        if !due.is_empty() {
            self.exec("DELETE FROM deadlines WHERE at_ms <= ?", vec![now.into()])?;
            self.kept_deadlines(|d| d.retain(|(_, at)| *at > now));
        }
        Ok(due)
    }

    // --- background-command events ------------------------------------------

    /// Records `event_id` unless it was seen in the last `ttl_ms`; false
    /// for a repeat.
    pub fn first_sight_of_exec_event(&self, event_id: &str, now: i64, ttl_ms: i64) -> Res<bool> {
        let seen = self.count(
            "SELECT COUNT(*) AS n FROM seen_exec_events WHERE event_id = ?",
            vec![event_id.into()],
        )?;
        if seen > 0 {
            return Ok(false);
        }
        self.exec(
            "DELETE FROM seen_exec_events WHERE seen_at < ?",
            vec![(now - ttl_ms).into()],
        )?;
        self.exec(
            "INSERT INTO seen_exec_events (event_id, seen_at) VALUES (?, ?)",
            vec![event_id.into(), now.into()],
        )?;
        Ok(true)
    }
}
