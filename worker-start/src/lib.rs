//! What each gsv Worker does when its Wasm starts (`#[event(start)]`),
//! before any request: panics are written to the console, and the futures'
//! wake-ups are queued as promise jobs.
//!
//! wasm-bindgen's executor runs woken tasks from a microtask, which it
//! queues with the global `queueMicrotask` when there is one, else with a
//! resolved promise's `then`, and it chooses once, when the first task is
//! spawned. In workerd `queueMicrotask` goes through the runtime's C++
//! (each callback wrapped in a new function): about 2 µs a call against
//! 0.1 µs for `then` (the bench's `microtasks`, BENCHMARKS.md), and a turn
//! queues hundreds. Both put the job on V8's one microtask queue, in order.

#[cfg(target_arch = "wasm32")]
mod start {
    use js_sys::Reflect;
    use wasm_bindgen::prelude::*;

    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_namespace = console, js_name = error)]
        fn console_error(message: &str);
    }

    /// Call from the Worker's `#[event(start)]` (a new instance after a
    /// panic starts there again).
    pub fn start() {
        console_error_panic_hook::set_once();
        use_promise_jobs();
    }

    /// Spawns the executor's first task with `queueMicrotask` hidden, so it
    /// settles on promise jobs, and puts the global back.
    fn use_promise_jobs() {
        let global = js_sys::global();
        let key = JsValue::from_str("queueMicrotask");
        let Ok(original) = Reflect::get(&global, &key) else {
            return;
        };
        if !matches!(Reflect::set(&global, &key, &JsValue::UNDEFINED), Ok(true)) {
            return;
        }
        wasm_bindgen_futures::spawn_local(async {});
        if !matches!(Reflect::set(&global, &key, &original), Ok(true)) {
            console_error("queueMicrotask could not be put back");
        }
    }
}

#[cfg(target_arch = "wasm32")]
pub use start::start;
