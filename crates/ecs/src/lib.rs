//! An archetype-and-chunk entity component system.
//!
//! Entities with the same component types share an archetype whose rows live in fixed 16 KiB
//! struct-of-arrays chunks; queries walk those chunks as plain slices; a schedule runs systems
//! in parallel wherever their parameter types say they do not conflict.
//!
//! This crate re-exports [`ecs_core`], [`ecs_query`] and [`ecs_sched`]; most programs need only
//! the [`prelude`].
//!
//! ```
//! use ecs::prelude::*;
//!
//! #[derive(Debug, PartialEq)]
//! struct Position { x: f32, y: f32 }
//! struct Velocity { x: f32, y: f32 }
//! struct Time { dt: f32 }
//!
//! fn movement(mut q: Query<(RefRW<Position>, RefRO<Velocity>)>, time: Res<Time>) {
//!     q.for_each(|(p, v)| { p.x += v.x * time.dt; p.y += v.y * time.dt; });
//! }
//!
//! let mut world = World::new();
//! world.insert_resource(Time { dt: 0.5 });
//! let e = world.spawn((Position { x: 0.0, y: 0.0 }, Velocity { x: 2.0, y: 4.0 }));
//! let mut schedule = Schedule::new();
//! schedule.add_system(movement);
//! schedule.run(&mut world).unwrap();
//! assert_eq!(world.get::<Position>(e), Ok(&Position { x: 1.0, y: 2.0 }));
//! ```

pub use ecs_core as core;
pub use ecs_query as query;
pub use ecs_sched as sched;

/// The types most programs use, in one import.
///
/// ```
/// use ecs::prelude::*;
/// let mut world = World::new();
/// let e: Entity = world.spawn((1u32,));
/// world.query::<RefRW<u32>>().for_each(|n| *n += 1);
/// assert_eq!(world.get::<u32>(e), Ok(&2));
/// ```
pub mod prelude {
    pub use ecs_core::{
        Bundle, Component, ComponentError, Entity, EntityError, World, WorldError, WorldLayout,
    };
    pub use ecs_query::{
        Changed, ChunkView, Or, QueryBorrow, QueryError, QueryExt, QueryState, RefRO, RefRW, With,
        Without,
    };
    pub use ecs_sched::{
        every_n_runs, named_condition, resource_changed, resource_exists, CommandError, Commands,
        EventReader, EventWriter, Events, FixedTime, FixedTimestep, Local, ParamSet, Query, Res,
        ResMut, Schedule, ScheduleError, Timings,
    };
}

/// The README's quickstart, compiled and run as a doctest.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
