//! What `whatsapp-rust` needs from its host, as a Worker has it: an
//! executor (the isolate's event loop), clocks (`Date.now`), a socket
//! (`socket.rs`) and an HTTP client (`http.rs`).
//!
//! A Worker is single-threaded: the crate's wasm32 traits drop `Send` from
//! futures but still ask `Send + Sync` of the types, which hold nothing
//! shared across threads here.

use futures::future::{AbortHandle as Abort, Abortable};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use whatsapp_rust::wacore::runtime::{AbortHandle, Runtime};
use whatsapp_rust::wacore::time::{MonotonicProvider, TimeProvider};

/// Tasks on the isolate's event loop; sleeps on its timers.
pub struct WorkerRuntime;

#[async_trait::async_trait(?Send)]
impl Runtime for WorkerRuntime {
    fn spawn(&self, future: Pin<Box<dyn Future<Output = ()> + 'static>>) -> AbortHandle {
        let (abort, registration) = Abort::new_pair();
        wasm_bindgen_futures::spawn_local(async move {
            let _ = Abortable::new(future, registration).await;
        });
        AbortHandle::new(move || abort.abort())
    }

    fn spawn_detached(&self, future: Pin<Box<dyn Future<Output = ()> + 'static>>) {
        wasm_bindgen_futures::spawn_local(future);
    }

    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()>>> {
        Box::pin(worker::Delay::from(duration))
    }

    /// No threads: the work runs now, on the caller's turn.
    fn spawn_blocking(&self, f: Box<dyn FnOnce() + 'static>) -> Pin<Box<dyn Future<Output = ()>>> {
        f();
        Box::pin(std::future::ready(()))
    }

    /// A microtask: lets the other tasks queued on the loop run.
    fn yield_now(&self) -> Option<Pin<Box<dyn Future<Output = ()>>>> {
        let resolved = js_sys::Promise::resolve(&wasm_bindgen::JsValue::UNDEFINED);
        Some(Box::pin(async move {
            let _ = wasm_bindgen_futures::JsFuture::from(resolved).await;
        }))
    }

    fn yield_frequency(&self) -> u32 {
        1
    }
}

/// The wall clock and the monotonic one, both from `Date.now()` (a Worker's
/// `performance.now()` is no finer).
pub struct JsClock;

impl TimeProvider for JsClock {
    fn now_millis(&self) -> i64 {
        js_sys::Date::now() as i64
    }
}

impl MonotonicProvider for JsClock {
    fn now_nanos(&self) -> u64 {
        (js_sys::Date::now() * 1_000_000.0) as u64
    }
}

/// The crate's warnings and errors, in the Worker's log; the last failed
/// connect kept for a login waiting on it (the crate retries on its own and
/// says why only here).
struct ConsoleLog;

thread_local! {
    static LAST_CONNECT_FAILURE: std::cell::RefCell<Option<(i64, String)>> =
        const { std::cell::RefCell::new(None) };
}

impl log::Log for ConsoleLog {
    fn enabled(&self, meta: &log::Metadata<'_>) -> bool {
        meta.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let text = record.args().to_string();
        if log::max_level() >= log::LevelFilter::Debug {
            // When, to line the steps of a turn up (the clock moves on I/O).
            worker::console_log!(
                "whatsapp-rust {} @{}: {text}",
                record.level(),
                js_sys::Date::now() as i64
            );
        } else {
            worker::console_log!("whatsapp-rust {}: {text}", record.level());
        }
        if let Some(why) = text.strip_prefix("Failed to connect: ") {
            let why = why.trim_end_matches(". Will retry...").to_string();
            LAST_CONNECT_FAILURE
                .with(|f| *f.borrow_mut() = Some((js_sys::Date::now() as i64, why)));
        }
    }

    fn flush(&self) {}
}

static LOGGER: ConsoleLog = ConsoleLog;

/// Why the last connect failed, if one failed at or after `since_ms`.
pub fn connect_failure_since(since_ms: i64) -> Option<String> {
    LAST_CONNECT_FAILURE.with(|f| {
        f.borrow()
            .as_ref()
            .filter(|(at, _)| *at >= since_ms)
            .map(|(_, why)| why.clone())
    })
}

/// How much of the crate's log to show: `WHATSAPP_WEB_LOG` (`error`,
/// `warn`, `info`, `debug`, `trace`); warnings and errors by default. From
/// `debug` each line carries `Date.now()` and the object's own steps (taken,
/// handed over, typing, send); `trace` adds each SQL statement of the store.
pub fn set_log_level(level: Option<&str>) {
    let filter = match level.map(str::trim) {
        Some("error") => log::LevelFilter::Error,
        Some("info") => log::LevelFilter::Info,
        Some("debug") => log::LevelFilter::Debug,
        Some("trace") => log::LevelFilter::Trace,
        _ => log::LevelFilter::Warn,
    };
    log::set_max_level(filter);
}

/// Installs the clocks and the log; once per isolate (the Worker's start).
pub fn install_clocks() {
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
    // Already set: a second start in the same isolate; keep the first.
    let _ = whatsapp_rust::wacore::time::set_time_provider(JsClock);
    let _ = whatsapp_rust::wacore::time::set_monotonic_provider(JsClock);
}
