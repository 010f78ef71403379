//! When to retry a failed model call, and how long to wait first.
//!
//! Pure arithmetic: the shell supplies the randomness (`jitter`) and does
//! the sleeping, so the schedule is deterministic under test.

use super::LlmError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so at most `max_retries + 1` calls).
    pub max_retries: u32,
    /// The first backoff ceiling; doubles with every retry.
    pub base_ms: u64,
    /// No wait is ever longer than this, not even a server's `Retry-After`.
    pub max_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_ms: 500,
            max_ms: 30_000,
        }
    }
}

impl RetryPolicy {
    /// How long to wait before retrying after `err`, or `None` to give up.
    ///
    /// `attempt` counts the retries already made: 0 after the first call
    /// failed. `jitter` is a random number in `0..=1` from the caller
    /// (clamped; NaN counts as 0).
    ///
    /// A server's `retry_after_ms` wins (capped at `max_ms`). Otherwise the
    /// wait is drawn from `base_ms ..= min(max_ms, base_ms * 2^attempt)`:
    /// "full jitter", spreading clients out, but never below `base_ms`, so a
    /// low draw does not hammer a struggling server.
    pub fn delay_ms(&self, attempt: u32, err: &LlmError, jitter: f64) -> Option<u64> {
        if !err.is_retryable() || attempt >= self.max_retries {
            return None;
        }
        if let Some(server_says) = err.retry_after_ms {
            return Some(server_says.min(self.max_ms));
        }
        let floor = self.base_ms.min(self.max_ms);
        let ceiling = self
            .base_ms
            .saturating_mul(1u64.checked_shl(attempt).unwrap_or(u64::MAX))
            .min(self.max_ms);
        let jitter = if jitter.is_nan() {
            0.0
        } else {
            jitter.clamp(0.0, 1.0)
        };
        Some(floor + ((ceiling - floor) as f64 * jitter).round() as u64)
    }
}

/// Parses a retry hint into milliseconds.
///
/// Accepts a `Retry-After` value in (possibly fractional) seconds, e.g. `"2"`
/// or `"1.5"`, and a value with an `ms` suffix, e.g. `"1500ms"`: the shell
/// passes the non-standard `retry-after-ms` header (sent by OpenAI) that way,
/// preferring it over `Retry-After` when both are present. An HTTP-date
/// `Retry-After` returns `None` (no clock here; the normal backoff applies).
pub fn parse_retry_after(value: &str) -> Option<u64> {
    let value = value.trim();
    let (number, scale) = match value.strip_suffix("ms") {
        Some(ms) => (ms.trim(), 1.0),
        None => (value, 1000.0),
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let parsed: f64 = number.parse().ok()?;
    Some((parsed * scale).ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::LlmErrorKind;

    fn err(kind: LlmErrorKind, retry_after_ms: Option<u64>) -> LlmError {
        LlmError {
            kind,
            message: "x".into(),
            retry_after_ms,
        }
    }

    #[test]
    fn default_policy() {
        assert_eq!(
            RetryPolicy::default(),
            RetryPolicy {
                max_retries: 3,
                base_ms: 500,
                max_ms: 30_000
            }
        );
    }

    #[test]
    fn backoff_doubles_the_ceiling_and_jitter_picks_within_it() {
        let p = RetryPolicy::default();
        let e = err(LlmErrorKind::Server, None);
        let lows: Vec<_> = (0..3).map(|a| p.delay_ms(a, &e, 0.0)).collect();
        let highs: Vec<_> = (0..3).map(|a| p.delay_ms(a, &e, 1.0)).collect();
        let mids: Vec<_> = (0..3).map(|a| p.delay_ms(a, &e, 0.5)).collect();
        assert_eq!(lows, vec![Some(500), Some(500), Some(500)]);
        assert_eq!(highs, vec![Some(500), Some(1000), Some(2000)]);
        assert_eq!(mids, vec![Some(500), Some(750), Some(1250)]);
    }

    #[test]
    fn backoff_is_capped_and_does_not_overflow() {
        let p = RetryPolicy {
            max_retries: 100,
            base_ms: 500,
            max_ms: 30_000,
        };
        let e = err(LlmErrorKind::Network, None);
        assert_eq!(p.delay_ms(10, &e, 1.0), Some(30_000));
        assert_eq!(p.delay_ms(70, &e, 1.0), Some(30_000));
        assert_eq!(p.delay_ms(70, &e, f64::NAN), Some(500));
        assert_eq!(p.delay_ms(70, &e, 7.0), Some(30_000));
    }

    #[test]
    fn gives_up_when_exhausted_or_not_retryable() {
        let p = RetryPolicy::default();
        assert_eq!(
            p.delay_ms(3, &err(LlmErrorKind::RateLimited, None), 0.5),
            None
        );
        for kind in [
            LlmErrorKind::Auth,
            LlmErrorKind::ContextOverflow,
            LlmErrorKind::Invalid,
            LlmErrorKind::Timeout,
        ] {
            assert_eq!(
                p.delay_ms(0, &err(kind.clone(), Some(1)), 0.5),
                None,
                "{kind:?}"
            );
        }
    }

    #[test]
    fn server_retry_after_wins_but_is_capped() {
        let p = RetryPolicy::default();
        let rl = |ms| err(LlmErrorKind::RateLimited, Some(ms));
        assert_eq!(p.delay_ms(0, &rl(7_000), 0.0), Some(7_000));
        assert_eq!(p.delay_ms(2, &rl(10), 1.0), Some(10));
        assert_eq!(p.delay_ms(0, &rl(120_000), 0.0), Some(30_000));
    }

    #[test]
    fn parses_retry_after_values() {
        let cases = [
            ("2", Some(2_000)),
            (" 0 ", Some(0)),
            ("1.5", Some(1_500)),
            ("1500ms", Some(1_500)),
            ("250.4 ms", Some(251)),
            ("Wed, 21 Oct 2015 07:28:00 GMT", None),
            ("-1", None),
            ("", None),
            ("ms", None),
            ("1e3", None),
        ];
        for (input, want) in cases {
            assert_eq!(parse_retry_after(input), want, "{input:?}");
        }
    }
}
