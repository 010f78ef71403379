//! Batching streamed text so the Gateway is not called once per token: text
//! is flushed at most every `interval_ms`, and whatever remains at the end.

#[derive(Debug)]
pub struct DeltaCoalescer {
    pending: String,
    last_flush_ms: i64,
    interval_ms: i64,
}

impl DeltaCoalescer {
    pub fn new(now_ms: i64, interval_ms: i64) -> Self {
        // The first text goes out at once so the user sees the reply start.
        Self {
            pending: String::new(),
            last_flush_ms: now_ms - interval_ms,
            interval_ms,
        }
    }

    pub fn push(&mut self, text: &str) {
        self.pending.push_str(text);
    }

    /// The batch to send now, if one is due.
    pub fn take_due(&mut self, now_ms: i64) -> Option<String> {
        if self.pending.is_empty() || now_ms - self.last_flush_ms < self.interval_ms {
            return None;
        }
        self.last_flush_ms = now_ms;
        Some(std::mem::take(&mut self.pending))
    }

    /// Whatever is left, at the end of the stream.
    pub fn take_rest(&mut self) -> Option<String> {
        (!self.pending.is_empty()).then(|| std::mem::take(&mut self.pending))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_text_is_immediate_then_batched() {
        let mut c = DeltaCoalescer::new(1000, 50);
        c.push("He");
        assert_eq!(c.take_due(1000), Some("He".into()));
        c.push("l");
        c.push("lo");
        assert_eq!(c.take_due(1020), None);
        c.push(" wo");
        assert_eq!(c.take_due(1050), Some("llo wo".into()));
        assert_eq!(c.take_due(1200), None, "nothing pending");
        c.push("rld");
        assert_eq!(c.take_rest(), Some("rld".into()));
        assert_eq!(c.take_rest(), None);
    }
}
