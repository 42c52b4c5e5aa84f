//! Systems and a parallel, deterministic schedule for [`ecs_core::World`].
//!
//! A system is a function whose parameters are [`Query`], [`Res`], [`ResMut`], [`Commands`],
//! [`Local`] or `&World` (or an exclusive `FnMut(&mut World)`). Its access set comes from those
//! types when it is added. The [`Schedule`] orders every pair of conflicting systems by
//! insertion (or explicit `after` / `before`), and runs the rest in parallel on a rayon pool.
//!
//! The tree follows the pipeline from the bottom: `error.rs` and `trace.rs` (profiler spans);
//! `saved_state/` (what systems keep between runs, and its byte framing); `commands/` (deferred
//! structural changes and id lanes); `system/` (systems, their parameters and access sets, run
//! conditions, one-shot systems); `events/` and `observer.rs` (built on system parameters);
//! `schedule/` (the graph, the executor, the fixed timestep); `sim/` (simulation snapshots of
//! a world and its schedules). Each folder imports only folders before it in that list.

mod commands;
mod error;
#[expect(
    unsafe_code,
    reason = "hands out the events resource through &World under a declared read"
)]
mod events;
#[expect(
    unsafe_code,
    reason = "implements the unsafe SystemParam trait for Trigger, through Res"
)]
mod observer;
mod saved_state;
mod schedule;
mod sim;
mod system;
mod trace;

pub use commands::buffer::CommandBuffer;
pub use commands::{CommandQueue, Commands, ParCommands};
pub use error::{CommandError, RunSystemError, ScheduleError};
pub use events::{EventReader, EventWriter, Events, ParEvents, ReaderCursor};
pub use system::access::{Conflict, SystemAccess};
pub use system::condition::{
    every_n_runs, named_condition, resource_changed, resource_exists, Condition, IntoCondition,
    Named, NamedCondition, Seen,
};

/// Plumbing: the executor's dependency counters and the chain driver, public for the loom
/// models of `tests/loom.rs`; not part of the API, and may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::schedule::executor::{drive_chain, RunCounters};
}
pub use commands::id_lanes::LanePlan;
pub use observer::{
    EntityEvent, IntoObserver, ObserveExt, OnAdd, OnInsert, OnRemove, OnReplace, Trigger,
    TriggerState,
};
pub use saved_state::{StateError, StateReader, StateWriter};
pub use schedule::config::{SetConfig, SystemConfig};
pub use schedule::explain::Ambiguity;
pub use schedule::fixed::{FixedSteps, FixedTime, FixedTimestep};
pub use schedule::timings::{TimingRow, Timings};
pub use schedule::Schedule;
pub use sim::SimSnapshot;
pub use system::one_shot::{RunSystemExt, SystemId};
pub use system::param::{Local, ParamItem, Res, ResMut, SystemParam};
pub use system::param_set::ParamSet;
pub use system::query::{Query, QueryRef};
pub use system::single::{Populated, Single};
pub use system::{Exclusive, IntoSystem, System, SystemParamFunction};
