//! Every way to run a query. A [`QueryRun`] (`query_run.rs`) is one run: a state, its world
//! and the run's change window, built by the one unsafe constructor [`QueryRun::new`], with
//! every loop a safe method of it. Beneath it are the loops themselves: the state's own entry
//! points and the unchecked ones schedulers call (`state_run.rs`), the external [`QueryIter`]
//! (`iter.rs`), the per-chunk [`ChunkView`] (`chunk_view.rs`) and the parallel runs
//! (`par.rs`, with its work split in `par_task.rs`). This folder builds on `state/` (matching
//! and classifying chunks) and knows nothing of the handles (`handle/`) that start runs.

#[expect(unsafe_code, reason = "hands out a chunk's column slices")]
pub(crate) mod chunk_view;
#[expect(unsafe_code, reason = "yields items from per-chunk fetches")]
pub(crate) mod iter;
#[expect(unsafe_code, reason = "hands disjoint row ranges to parallel tasks")]
pub(crate) mod par;
mod par_task;
#[expect(
    unsafe_code,
    reason = "the one unsafe constructor of a query run; every loop is a safe method of it"
)]
mod query_run;
#[expect(unsafe_code, reason = "runs queries through shared world references")]
mod state_run;

pub use query_run::QueryRun;
