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

/// Installs the clocks; once per isolate (the Worker's start).
pub fn install_clocks() {
    // Already set: a second start in the same isolate; keep the first.
    let _ = whatsapp_rust::wacore::time::set_time_provider(JsClock);
    let _ = whatsapp_rust::wacore::time::set_monotonic_provider(JsClock);
}
