//! A channel Worker's end of the test-only fault stops
//! (`gsv_protocol::fault`): `GSV_FAULT`, set only by the end-to-end
//! harness, read once per isolate.

use gsv_protocol::fault::FAULT_VAR;
use std::cell::OnceCell;
use worker::Env;

thread_local! {
    static FAULT: OnceCell<Option<String>> = const { OnceCell::new() };
}

/// Stops here for good when the tests armed `step`.
pub async fn stop_at(env: &Env, step: &str) {
    let armed = FAULT.with(|f| {
        f.get_or_init(|| {
            env.var(FAULT_VAR)
                .map(|v| v.to_string())
                .or_else(|_| env.secret(FAULT_VAR).map(|v| v.to_string()))
                .ok()
        })
        .clone()
    });
    if armed.as_deref() == Some(step) {
        worker::console_error!("fault: stopped at {step} (test harness)");
        std::future::pending::<()>().await;
    }
}
