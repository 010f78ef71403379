//! `model.check`: one tiny call to the model the params name (else the
//! configured one), made here and answered when the model has. What is
//! called and what the outcome says is `crate::session::model_check`.

use super::Gateway;
use crate::session::model_check::{result, run_config, PROMPT};
use crate::worker::llm_call::{complete, Cancel};
use crate::worker::rpc::now_ms;
use gsv_protocol::*;

impl Gateway {
    pub(super) async fn model_check(&self, p: ModelCheckParams) -> ModelCheckResult {
        let config = self.config.borrow().clone();
        let rc = match run_config(&config, &p) {
            Ok(rc) => rc,
            Err(untried) => return *untried,
        };
        let ask = [Message::User(UserMessage::new(
            UserContent::Text(PROMPT.into()),
            now_ms(),
        ))];
        let started = now_ms();
        let outcome = complete(&self.env, &rc, &ask, &[], &Cancel::default(), |_| async {}).await;
        result(&rc, outcome, (now_ms() - started).max(0) as u64)
    }
}
