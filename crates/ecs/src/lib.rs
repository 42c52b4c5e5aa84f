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

/// `#[derive(Bundle)]` and `#[derive(Query)]` (also in the [`prelude`]; `docs/queries.md` has
/// more).
///
/// A derived bundle spawns, inserts, removes and takes as its fields, each a component; a field
/// marked `#[bundle]` holds a bundle (derived, or a tuple) whose components are flattened in
/// its place, to any depth, and a bundle may have any number of fields. A derived query struct
/// `Foo` queries as the tuple of its fields and yields `FooItem<'w>`, a struct with the same
/// field names. Both are plain structs with named fields and no generic parameters; the
/// generated code names this crate as `::ecs` (override with `#[ecs(crate = path)]`, see the
/// `ecs-macros` crate).
///
/// A bundle is never one component by accident: inside a tuple (`world.spawn((body, Frozen))`)
/// a derived bundle panics naming it, as a nested tuple does, and a field whose type is a
/// bundle but is not marked `#[bundle]` does not compile.
///
/// ```
/// use ecs::prelude::*;
///
/// #[derive(Debug, PartialEq)]
/// struct Position(f32);
/// struct Velocity(f32);
/// struct Frozen;
///
/// #[derive(Bundle)]
/// struct Body { position: Position, velocity: Velocity }
///
/// #[derive(Query)]
/// struct Movement { entity: Entity, position: RefRW<Position>, velocity: RefRO<Velocity> }
///
/// let mut world = World::new();
/// let e = world.spawn(Body { position: Position(0.0), velocity: Velocity(2.0) });
/// world.query_filtered::<Movement, Without<Frozen>>().for_each(|m: MovementItem| {
///     m.position.0 += m.velocity.0;
/// });
/// assert_eq!(world.get::<Position>(e), Ok(&Position(2.0)));
/// ```
///
/// Nesting, and the refusal of a bundle inside a tuple:
///
/// ```
/// use ecs::prelude::*;
/// struct Position(f32);
/// struct Velocity(f32);
/// struct Health(u32);
/// struct Frozen;
///
/// #[derive(Bundle)]
/// struct Body { position: Position, velocity: Velocity }
///
/// #[derive(Bundle)]
/// struct Unit { #[bundle] body: Body, health: Health }
///
/// let mut world = World::new();
/// let body = || Body { position: Position(0.0), velocity: Velocity(1.0) };
/// let e = world.spawn(Unit { body: body(), health: Health(10) });
/// assert!(world.has::<Position>(e) && world.has::<Health>(e));
///
/// let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
///     world.spawn((body(), Frozen)); // would store one `Body`: refused, naming it
/// }));
/// assert!(refused.is_err());
/// ```
pub use ecs_macros::{Bundle, Query, SystemParam};

/// bytemuck, for its traits and casts (`ecs::bytemuck::cast_slice`) without a dependency of
/// your own; its derives are [`Pod`], [`Zeroable`], [`NoUninit`] and [`CheckedBitPattern`]
/// here, which run bytemuck's checks through this path.
pub use bytemuck;

/// bytemuck's derives, reachable with `ecs` alone: `#[derive(Pod, Zeroable)]` on a `repr(C)`
/// type makes it a pod component (`World::register_pod`, `PodColumns`, snapshots in bytes).
/// Every check is bytemuck's: a field that is not `Pod`, or padding, does not compile.
///
/// ```
/// use ecs::prelude::*;
/// #[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
/// #[repr(C)]
/// struct Position {
///     x: f32,
///     y: f32,
/// }
/// #[derive(Clone, Copy, Debug, PartialEq, NoUninit, CheckedBitPattern)]
/// #[repr(u8)]
/// enum State {
///     Healthy,
///     Infectious,
/// }
/// let bytes: &[u8] = ecs::bytemuck::bytes_of(&Position { x: 1.0, y: 2.0 });
/// assert_eq!(ecs::bytemuck::pod_read_unaligned::<Position>(bytes), Position { x: 1.0, y: 2.0 });
/// assert_eq!(ecs::bytemuck::checked::try_cast::<u8, State>(1), Ok(State::Infectious));
/// assert!(ecs::bytemuck::checked::try_cast::<u8, State>(2).is_err());
/// ```
///
/// Padding is refused at compile time, as by bytemuck itself:
///
/// ```compile_fail
/// #[derive(Clone, Copy, ecs::Pod, ecs::Zeroable)]
/// #[repr(C)]
/// struct Padded {
///     a: u8,
///     b: u32,
/// }
/// ```
pub use ecs_macros::{CheckedBitPattern, NoUninit, Pod, Zeroable};

#[doc(hidden)]
pub mod __private {
    pub use bytemuck;
    pub use ecs_macros::BytemuckAttribute;
}

/// Misuse of the derives does not compile.
///
/// A field that is not a query element:
///
/// ```compile_fail
/// use ecs::prelude::*;
/// #[derive(Query)]
/// struct Bad { health: u32 } // should be `RefRO<u32>` or `RefRW<u32>`
/// ```
///
/// Two fields aliasing one component, one of them writing:
///
/// ```compile_fail
/// use ecs::prelude::*;
/// struct Position(f32);
/// #[derive(Query)]
/// struct Aliased { a: RefRW<Position>, b: RefRO<Position> }
/// ```
///
/// A writing derived query through `&World`:
///
/// ```compile_fail
/// use ecs::prelude::*;
/// struct Position(f32);
/// #[derive(Query)]
/// struct Moves { position: RefRW<Position> }
/// let world = World::new();
/// world.query_ref::<Moves>().count();
/// ```
///
/// A bundle field that is not a component (a reference is not `'static`), a tuple struct, a
/// generic struct:
///
/// ```compile_fail
/// use ecs::prelude::*;
/// #[derive(Bundle)]
/// struct Borrowed<'a> { name: &'a str }
/// ```
///
/// ```compile_fail
/// use ecs::prelude::*;
/// #[derive(Bundle)]
/// struct Pair(u32, f32);
/// ```
///
/// A field that is itself a bundle but is not marked `#[bundle]` (it would be one component;
/// the error names `NestedBundleNeedsTheBundleAttribute`):
///
/// ```compile_fail
/// use ecs::prelude::*;
/// struct Position(f32);
/// #[derive(Bundle)]
/// struct Body { position: Position }
/// #[derive(Bundle)]
/// struct Unit { body: Body, health: u32 }
/// ```
///
/// The same struct with `#[bundle]` on the field compiles:
///
/// ```
/// use ecs::prelude::*;
/// struct Position(f32);
/// #[derive(Bundle)]
/// struct Body { position: Position }
/// #[derive(Bundle)]
/// struct Unit { #[bundle] body: Body, health: u32 }
/// ```
///
/// ```compile_fail
/// use ecs::prelude::*;
/// #[derive(Bundle)]
/// struct Generic<T: Send + Sync + 'static> { value: T }
/// ```
///
/// A derived system parameter whose lifetimes are not `'w` and `'s`, or that is not a struct
/// with named fields:
///
/// ```compile_fail
/// use ecs::prelude::*;
/// #[derive(SystemParam)]
/// struct Odd<'a> { n: Res<'a, u32> }
/// ```
///
/// ```compile_fail
/// use ecs::prelude::*;
/// #[derive(SystemParam)]
/// struct Pair<'w>(Res<'w, u32>, ResMut<'w, f32>);
/// ```
///
/// The same shapes compile when used correctly:
///
/// ```
/// use ecs::prelude::*;
/// struct Position(f32);
/// #[derive(Query)]
/// struct Reads { a: RefRO<Position>, b: RefRO<Position> } // two reads do not alias
/// let mut world = World::new();
/// world.spawn((Position(1.0),));
/// let item = world.query_ref::<Reads>().single().unwrap();
/// assert_eq!(item.a.0 + item.b.0, 2.0);
/// ```
#[cfg(doctest)]
pub struct DeriveMisuse;

/// `#[derive(SystemParam)]`: a struct of system parameters is one parameter (lifetimes `'w` for
/// world borrows and `'s` for state borrows, as in bevy). Its access is the union of its fields',
/// refused on a conflict between two fields as between two parameters of one function; its
/// `Single` fields skip the system as they would alone; it nests and may take type parameters.
///
/// ```
/// use ecs::prelude::*;
///
/// struct Hp(u32);
/// struct Enemy;
/// #[derive(Default)]
/// struct Score(u32);
///
/// #[derive(SystemParam)]
/// struct Combat<'w, 's> {
///     enemies: Query<'w, 's, RefRW<Hp>, With<Enemy>>,
///     score: ResMut<'w, Score>,
///     commands: Commands<'w, 's>,
/// }
///
/// fn strike(mut combat: Combat) {
///     combat.enemies.for_each(|hp| hp.0 = hp.0.saturating_sub(1));
///     combat.score.0 += 1;
/// }
///
/// let mut world = World::new();
/// world.insert_resource(Score::default());
/// world.spawn((Hp(2), Enemy));
/// let mut schedule = Schedule::new();
/// schedule.add_system(strike);
/// schedule.run(&mut world).unwrap();
/// assert_eq!(world.resource::<Score>().0, 1);
/// ```
#[cfg(doctest)]
pub struct DeriveSystemParam;

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
        Bundle, Component, ComponentError, Entity, EntityError, EntityRef, World, WorldError,
        WorldLayout,
    };
    pub use ecs_macros::{Bundle, CheckedBitPattern, NoUninit, Pod, Query, SystemParam, Zeroable};
    pub use ecs_query::{
        Added, Changed, ChunkView, EntityMut, FilteredEntityMut, FilteredEntityRef, Or, Propagate,
        QueryBorrow, QueryError, QueryExt, QueryRun, QueryState, RefRO, RefRW, SharedQuery, With,
        Without,
    };
    pub use ecs_sched::{
        every_n_runs, named_condition, resource_changed, resource_exists, CommandBuffer,
        CommandError, Commands, EventReader, EventWriter, Events, FixedTime, FixedTimestep, Local,
        ParamSet, Populated, Query, Res, ResMut, RunSystemError, RunSystemExt, Schedule,
        ScheduleError, Single, SystemId, SystemParam, Timings,
    };

    // Observers.
    pub use ecs_sched::{EntityEvent, ObserveExt, OnAdd, OnInsert, OnRemove, OnReplace, Trigger};

    // Snapshots, rollback and pod column views.
    #[cfg(feature = "serde")]
    pub use ecs_core::SerdeFormat;
    pub use ecs_core::{Snapshot, SnapshotError, Unregistered};
    pub use ecs_query::PodColumns;
    pub use ecs_sched::{SimSnapshot, StateError};

    // Hooks, relationships, the hierarchy and required components.
    pub use ecs_core::{
        ChildOf, Children, ComponentHooks, DeferredWorld, DespawnPolicy, HierarchyError,
        HookContext, Relationship, RelationshipTarget,
    };

    // Cloning, and entity ids remapped in clones.
    pub use ecs_core::{CloneError, CloneOptions, MapEntities};

    // Enableable components, chunk components and compaction.
    pub use ecs_core::CompactReport;
    pub use ecs_query::{
        ChunkMut, ChunkRO, ChunkRW, Disabled, EnabledMut, EnabledRO, EnabledRW, IgnoreEnabled,
    };
}

/// The code of `docs/relationships.md`, compiled and run as doctests.
#[doc = include_str!("../../../docs/relationships.md")]
#[cfg(doctest)]
pub struct RelationshipsDoctests;

/// The code of `docs/coming-from.md`, compiled and run as doctests.
#[doc = include_str!("../../../docs/coming-from.md")]
#[cfg(doctest)]
pub struct ComingFromDoctests;

/// The README's quickstart, compiled and run as a doctest.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
