//! The gateway's and sessions' end of the test-only fault stops
//! (`gsv_protocol::fault`): read once per isolate, honoured only under the
//! test harness (`GSV_TEST_CLOCK=1`), so production pays one lookup.

use gsv_protocol::fault::FAULT_VAR;
use std::cell::OnceCell;
use worker::Env;

thread_local! {
    static FAULT: OnceCell<Option<String>> = const { OnceCell::new() };
}

fn var(env: &Env, name: &str) -> Option<String> {
    env.var(name)
        .map(|v| v.to_string())
        .or_else(|_| env.secret(name).map(|v| v.to_string()))
        .ok()
}

/// The step this isolate stops at, if any.
fn armed(env: &Env) -> Option<String> {
    FAULT.with(|f| {
        f.get_or_init(|| {
            let testing = var(env, super::gateway_do::TEST_CLOCK_VAR).is_some_and(|v| v == "1");
            testing.then(|| var(env, FAULT_VAR)).flatten()
        })
        .clone()
    })
}

/// Stops here for good when the tests armed `step`.
pub async fn stop_at(env: &Env, step: &str) {
    if armed(env).as_deref() == Some(step) {
        worker::console_error!("fault: stopped at {step} (test harness)");
        std::future::pending::<()>().await;
    }
}
