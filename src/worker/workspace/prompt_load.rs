//! A run's prompt over R2: `crate::workspace::load` with the `STORAGE`
//! bucket as its store and the Worker's clock.

use crate::config::Config;
use crate::session::internal::NodeSnapshot;
use crate::session::run_config::RunConfig;
use crate::worker::bindings;
use crate::worker::rpc::now_ms;
use crate::workspace::load::RunInputs;
use worker::Env;

pub use crate::skills::load::{load_skill_files, load_skill_files_of};
pub use crate::workspace::load::RunPrompt;

/// `days`: today and yesterday in the user's time zone, as the run saw them.
pub async fn assemble(
    env: &Env,
    config: &Config,
    rc: &RunConfig,
    session_key: &str,
    nodes: &NodeSnapshot,
    days: &(String, String),
    channel: Option<&str>,
) -> worker::Result<RunPrompt> {
    let bucket = bindings::bucket(env)?;
    let run = RunInputs {
        config,
        rc,
        session_key,
        nodes,
        days,
        channel,
        now_ms: now_ms() as u64,
    };
    Ok(crate::workspace::load::assemble(&bucket, run).await?)
}
