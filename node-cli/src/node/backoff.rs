//! Reconnect delays: exponential from 500 ms to 30 s, with jitter so many
//! nodes dropped at once do not all return in the same instant.

use std::time::Duration;

const BASE_MS: u64 = 500;
const MAX_MS: u64 = 30_000;

#[derive(Debug, Default)]
pub struct Backoff {
    attempt: u32,
}

impl Backoff {
    pub fn reset(&mut self) {
        self.attempt = 0;
    }

    /// The next delay; `jitter` in [0, 1) picks a point in its upper half.
    pub fn next_delay_with(&mut self, jitter: f64) -> Duration {
        let ceiling = BASE_MS
            .saturating_mul(1u64 << self.attempt.min(16))
            .min(MAX_MS);
        self.attempt = self.attempt.saturating_add(1);
        let ms = ceiling as f64 * (0.5 + 0.5 * jitter.clamp(0.0, 1.0));
        Duration::from_millis(ms as u64)
    }

    pub fn next_delay(&mut self) -> Duration {
        // The low bits of a fresh v4 uuid are random enough for jitter.
        let r = uuid::Uuid::new_v4().as_u128() as u32;
        self.next_delay_with(f64::from(r) / (f64::from(u32::MAX) + 1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_the_cap_and_resets() {
        let mut b = Backoff::default();
        let lows: Vec<u64> = (0..9)
            .map(|_| b.next_delay_with(0.0).as_millis() as u64)
            .collect();
        assert_eq!(
            lows,
            [250, 500, 1000, 2000, 4000, 8000, 15000, 15000, 15000]
        );
        b.reset();
        let highs: Vec<u64> = (0..8)
            .map(|_| b.next_delay_with(0.999_999).as_millis() as u64)
            .collect();
        assert_eq!(highs, [499, 999, 1999, 3999, 7999, 15999, 29999, 29999]);
    }

    #[test]
    fn random_delays_stay_in_range() {
        let mut b = Backoff::default();
        for _ in 0..3 {
            b.next_delay();
        }
        for _ in 0..100 {
            let mut probe = Backoff { attempt: 3 };
            let d = probe.next_delay().as_millis();
            assert!((2000..4000).contains(&d), "{d}");
        }
    }
}
