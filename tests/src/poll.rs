//! Waiting for something to happen: the one poll loop of the tests.
//!
//! A probe looks once and answers `Ok(value)` when the wait is over, or
//! `Err(what it saw)` when it is not. The loop probes at once, then every
//! `every`, until the first probe after `within` has passed, and never
//! sleeps after a success. [`until`] and [`until_blocking`] panic then with
//! the last `Err` and where the wait was written ("gave up after 20s at
//! tests/tests/cron.rs:296: {…}"), so a failure shows the last state seen;
//! [`try_until`] and [`try_until_blocking`] hand the last `Err` back, for a
//! caller that decides on its own what a timeout means.
//!
//! The async probe is an async closure, so one probe may borrow what the
//! closure captures, a `&mut Client` included:
//!
//! ```ignore
//! let runs = poll::until(secs(20), ms(200), async || {
//!     let r = rpc(&mut c, "cron.runs", json!({"jobId": id})).await;
//!     if r["count"] == 2 { Ok(r["runs"].clone()) } else { Err(r) }
//! })
//! .await;
//! ```
//!
//! A plain condition: `async || marker.exists().then_some(()).ok_or("never started")`.
//! [`secs`] and [`ms`] keep a wait's call on one line: `until(secs(20), ms(200), …)`.

use std::fmt::Display;
use std::future::Future;
use std::ops::AsyncFnMut;
use std::panic::Location;
use std::time::{Duration, Instant};

/// `n` seconds.
pub const fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// `n` milliseconds.
pub const fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Probes until `probe` gives `Ok`; at the deadline, its last `Err`.
pub async fn try_until<T, E>(
    within: Duration,
    every: Duration,
    mut probe: impl AsyncFnMut() -> Result<T, E>,
) -> Result<T, E> {
    let deadline = Instant::now() + within;
    loop {
        match probe().await {
            Ok(v) => return Ok(v),
            Err(last) if Instant::now() >= deadline => return Err(last),
            Err(_) => tokio::time::sleep(every).await,
        }
    }
}

/// Probes until `probe` gives `Ok`, and that value; at the deadline, panics
/// with the last `Err` and the caller's place.
#[track_caller]
pub fn until<T, E: Display>(
    within: Duration,
    every: Duration,
    probe: impl AsyncFnMut() -> Result<T, E>,
) -> impl Future<Output = T> {
    // Taken here: `#[track_caller]` does not reach into an async body.
    let at = Location::caller();
    async move {
        match try_until(within, every, probe).await {
            Ok(v) => v,
            Err(last) => panic!("gave up after {within:?} at {at}: {last}"),
        }
    }
}

/// [`try_until`] for a test without a runtime: sleeps the thread.
pub fn try_until_blocking<T, E>(
    within: Duration,
    every: Duration,
    mut probe: impl FnMut() -> Result<T, E>,
) -> Result<T, E> {
    let deadline = Instant::now() + within;
    loop {
        match probe() {
            Ok(v) => return Ok(v),
            Err(last) if Instant::now() >= deadline => return Err(last),
            Err(_) => std::thread::sleep(every),
        }
    }
}

/// [`until`] for a test without a runtime: sleeps the thread.
#[track_caller]
pub fn until_blocking<T, E: Display>(
    within: Duration,
    every: Duration,
    probe: impl FnMut() -> Result<T, E>,
) -> T {
    let at = Location::caller();
    match try_until_blocking(within, every, probe) {
        Ok(v) => v,
        Err(last) => panic!("gave up after {within:?} at {at}: {last}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;
    use std::panic::AssertUnwindSafe;

    fn message(payload: Box<dyn std::any::Any + Send>) -> String {
        payload
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default()
    }

    #[tokio::test]
    async fn it_gives_the_value_of_the_nth_try() {
        let mut tries = 0;
        let v = until(secs(10), ms(1), async || {
            tries += 1;
            if tries == 3 {
                Ok(tries * 10)
            } else {
                Err("not yet")
            }
        })
        .await;
        assert_eq!((v, tries), (30, 3));
    }

    #[test]
    fn it_gives_the_value_of_the_nth_try_blocking() {
        let mut tries = 0;
        let v = until_blocking(secs(10), ms(1), || {
            tries += 1;
            if tries == 3 {
                Ok(tries * 10)
            } else {
                Err("not yet")
            }
        });
        assert_eq!((v, tries), (30, 3));
    }

    #[tokio::test]
    async fn a_probe_may_borrow_what_it_captures_mutably() {
        async fn next(v: &mut Vec<u32>) -> u32 {
            v.push(v.len() as u32);
            v.len() as u32
        }
        let mut seen = Vec::new();
        let n = until(secs(10), ms(1), async || {
            let n = next(&mut seen).await;
            if n == 4 {
                Ok(n)
            } else {
                Err(n)
            }
        })
        .await;
        assert_eq!((n, seen), (4, vec![0, 1, 2, 3]));
    }

    #[tokio::test]
    async fn at_the_deadline_it_panics_with_the_last_message_and_the_callers_place() {
        let mut tries = 0;
        let line = line!() + 1;
        let waited = until(ms(100), ms(10), async || {
            tries += 1;
            Err::<(), _>(format!("seen {tries}"))
        });
        let payload = AssertUnwindSafe(waited).catch_unwind().await.unwrap_err();
        assert!(tries >= 2, "{tries}");
        let m = message(payload);
        let at = format!("gave up after 100ms at {}:{line}:", file!());
        assert!(
            m.starts_with(&at) && m.ends_with(&format!(": seen {tries}")),
            "{m}"
        );
    }

    #[test]
    fn at_the_deadline_it_panics_with_the_last_message_blocking() {
        let mut tries = 0;
        let line = line!() + 2;
        let payload = std::panic::catch_unwind(AssertUnwindSafe(|| {
            until_blocking(ms(100), ms(10), || {
                tries += 1;
                Err::<(), _>(format!("seen {tries}"))
            })
        }))
        .unwrap_err();
        assert!(tries >= 2, "{tries}");
        let m = message(payload);
        let at = format!("gave up after 100ms at {}:{line}:", file!());
        assert!(
            m.starts_with(&at) && m.ends_with(&format!(": seen {tries}")),
            "{m}"
        );
    }

    #[tokio::test]
    async fn try_until_gives_back_the_last_err_once_the_time_is_up() {
        let started = Instant::now();
        let mut tries = 0;
        let last = try_until(ms(100), ms(10), async || {
            tries += 1;
            Err::<(), _>(tries)
        })
        .await;
        assert_eq!(last, Err(tries));
        assert!(started.elapsed() >= ms(100));
        let last = try_until_blocking(Duration::ZERO, secs(60), || Err::<(), _>("once"));
        assert_eq!(last, Err("once"), "one probe, no sleep after it");
    }

    #[tokio::test]
    async fn it_never_sleeps_after_a_success() {
        let every = secs(60);
        let started = Instant::now();
        until(every, every, async || Ok::<_, &str>(())).await;
        until_blocking(every, every, || Ok::<_, &str>(()));
        assert!(started.elapsed() < secs(5));
        // Nor before the first probe: two tries, one sleep.
        let started = Instant::now();
        let mut tries = 0;
        until_blocking(every, ms(500), || {
            tries += 1;
            if tries == 2 {
                Ok(())
            } else {
                Err("once more")
            }
        });
        let took = started.elapsed();
        assert!(took >= ms(500) && took < ms(1000), "{took:?}");
    }
}
