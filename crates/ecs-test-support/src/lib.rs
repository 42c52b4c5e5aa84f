//! Test-only support for the engine's model-based property tests.
//!
//! The model tests of `ecs-core` (`tests/model`), of the `ecs` facade (`tests/surface_model`)
//! and of `ecs-query` (`tests/model`, and the `par_` tests) compare a `World` with a naive
//! reference model after every random operation. The pieces they share live here, once:
//!
//! - [`kinds`]: the model's component types ([`Tracked`], [`Zst`], [`Aligned`], [`Kib`],
//!   [`Num`], [`Name`], [`Wide`]), each made from a `u32` seed and summarised as a `u64`, and
//!   [`with_kind`], which turns a run-time kind index into a static type;
//! - [`ledger`](mod@ledger): the thread-local drop ledger of [`Tracked`] values (double drops, leaks);
//! - [`bundle`]: tuples of kinds as bundles ([`ModelBundle`]) and [`with_bundle_of`], which
//!   turns a run-time list of kinds into a static tuple type;
//! - [`model`]: the reference model, entities to rows of encoded values ([`Model`]), with
//!   the handles it picks (live, stale, forged), what `get` / `remove` must return, and
//!   [`Model::check_world`], which compares a `World` with it;
//! - [`strategy`]: proptest strategies for picks and kind sets, and the case-count config;
//! - [`shapes`]: running one query shape one-shot or through a cached `QueryState`, by each
//!   path (`iter`, `for_each`, `for_each_chunk`, `par_for_each`, `get`, `count`), and
//!   comparing what it saw with the model's prediction;
//! - [`pool`]: [`in_pool`], where `par_for_each` finds a thread pool that Miri accepts;
//! - [`run`]: [`run_case`], which runs a sequence of operations with checks after each step
//!   and balances the drop ledger at the end;
//! - [`worlds`]: worlds whose archetypes size and lay out their chunks differently;
//! - [`panics`]: [`panic_message`], a closure's panic message.
//!
//! This crate is `publish = false` and only ever a dev-dependency: nothing in it is part of
//! the engine's API, and it may change with the tests.

pub mod bundle;
pub mod kinds;
pub mod ledger;
pub mod model;
pub mod panics;
pub mod pool;
pub mod run;
pub mod shapes;
pub mod strategy;
pub mod worlds;

pub use bundle::{elem_seed, with_bundle_of, BundleFn, ModelBundle};
pub use kinds::{
    code, with_kind, Aligned, Kib, Kind, KindFn, Name, NameOf, Num, Tracked, Wide, Zst, ALIGNED,
    KIB, KINDS, NAME, NUM, TRACKED, WIDE, ZST,
};
pub use ledger::{ledger, Ledger};
pub use model::{nth_alive, Model, Pick, Row, Summary};
pub use panics::panic_message;
pub use pool::in_pool;
pub use run::{run_case, Steps};
