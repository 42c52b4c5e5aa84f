//! The one-shot query handles straight off a world: [`QueryExt::query`] and its
//! [`QueryBorrow`] (`world_ext.rs`, the world borrowed exclusively) and
//! [`QueryExt::query_ref`] and its [`SharedQuery`] (`shared.rs`, through `&World`). Each takes
//! the world's cached state for the query type (`state/cache.rs`), builds one [`QueryRun`] and
//! adds only how it got its access; the loops are the run's (`run/`).
//!
//! [`QueryExt::query`]: crate::QueryExt::query
//! [`QueryExt::query_ref`]: crate::QueryExt::query_ref
//! [`QueryBorrow`]: crate::QueryBorrow
//! [`SharedQuery`]: crate::SharedQuery
//! [`QueryRun`]: crate::QueryRun

pub(crate) mod shared;
#[expect(
    unsafe_code,
    reason = "runs queries over an exclusively borrowed world"
)]
pub(crate) mod world_ext;
