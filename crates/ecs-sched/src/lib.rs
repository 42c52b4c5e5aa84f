//! Systems and a parallel, deterministic schedule for [`ecs_core::World`].
//!
//! A system is a function whose parameters are [`Query`], [`Res`], [`ResMut`], [`Commands`],
//! [`Local`] or `&World` (or an exclusive `FnMut(&mut World)`). Its access set comes from those
//! types when it is added. The [`Schedule`] orders every pair of conflicting systems by
//! insertion (or explicit `after` / `before`), and runs the rest in parallel on a rayon pool.

mod access_set;
#[cfg_attr(
    all(target_arch = "x86_64", not(miri), not(loom)),
    expect(unsafe_code, reason = "reads the CPU's time-stamp counter")
)]
mod clock;
mod command_buffer;
mod commands;
#[expect(
    unsafe_code,
    reason = "evaluates run conditions through the unsafe shared-world entry point"
)]
mod condition;
mod error;
#[expect(
    unsafe_code,
    reason = "hands out the events resource through &World under a declared read"
)]
mod events;
#[expect(
    unsafe_code,
    reason = "hands systems to workers through counters and UnsafeCell"
)]
mod executor;
mod fixed;
mod framing;
mod graph;
mod id_lanes;
#[expect(
    unsafe_code,
    reason = "implements the unsafe SystemParam trait for Trigger, through Res"
)]
mod observer;
mod one_shot;
mod panics;
#[expect(
    unsafe_code,
    reason = "hands out component and resource access through &World"
)]
mod param;
#[expect(
    unsafe_code,
    reason = "hands out one member's item at a time through &World"
)]
mod param_set;
mod per_world;
#[expect(
    unsafe_code,
    reason = "hands out query items through &World under the schedule's access guarantee"
)]
mod query;
mod saved_state;
mod schedule;
mod sim_bytes;
mod sim_snapshot;
#[expect(
    unsafe_code,
    reason = "implements the unsafe SystemParam trait for Single and Populated"
)]
mod single;
mod sync;
#[expect(
    unsafe_code,
    reason = "runs systems through the unsafe shared-world entry point"
)]
mod system;
mod timings;
mod trace;

pub use access_set::{Conflict, SystemAccess};
pub use command_buffer::CommandBuffer;
pub use commands::{CommandQueue, Commands, ParCommands};
pub use condition::{
    every_n_runs, named_condition, resource_changed, resource_exists, Condition, IntoCondition,
    Named, NamedCondition, Seen,
};
pub use error::{CommandError, RunSystemError, ScheduleError};
pub use events::{EventReader, EventWriter, Events, ParEvents, ReaderCursor};

/// Plumbing: the executor's dependency counters and the chain driver, public for the loom
/// models of `tests/loom.rs`; not part of the API, and may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::executor::{drive_chain, RunCounters};
}
pub use fixed::{FixedSteps, FixedTime, FixedTimestep};
pub use id_lanes::LanePlan;
pub use observer::{
    EntityEvent, IntoObserver, ObserveExt, OnAdd, OnInsert, OnRemove, OnReplace, Trigger,
    TriggerState,
};
pub use one_shot::{RunSystemExt, SystemId};
pub use param::{Local, ParamItem, Res, ResMut, SystemParam};
pub use param_set::ParamSet;
pub use query::{Query, QueryRef};
pub use saved_state::{StateError, StateReader, StateWriter};
pub use schedule::config::{SetConfig, SystemConfig};
pub use schedule::explain::Ambiguity;
pub use schedule::Schedule;
pub use sim_snapshot::SimSnapshot;
pub use single::{Populated, Single};
pub use system::{Exclusive, IntoSystem, System, SystemParamFunction};
pub use timings::{TimingRow, Timings};
