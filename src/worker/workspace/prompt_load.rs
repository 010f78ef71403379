//! A run's prompt over R2: `crate::workspace::load` with the `STORAGE`
//! bucket as its store and the Worker's clock.

use crate::worker::rpc::now_ms;
use crate::workspace::load::RunInputs;
use worker::Bucket;

pub use crate::skills::load::{load_skill_files, load_skill_files_of};
pub use crate::workspace::load::RunPrompt;

/// Assembles `run`'s prompt from the `STORAGE` bucket.
pub async fn assemble(bucket: &Bucket, run: RunInputs<'_>) -> worker::Result<RunPrompt> {
    Ok(crate::workspace::load::assemble(bucket, run).await?)
}

/// Now, as the skills' eligibility reads it.
pub fn now() -> u64 {
    now_ms() as u64
}
