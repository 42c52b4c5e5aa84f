//! Queries over an [`ecs_core::World`].
//!
//! A query is a tuple type: data elements ([`RefRO<T>`] / `&T` read, [`RefRW<T>`] / `&mut T`
//! write, [`Entity`](ecs_core::Entity), `Option<..>`) and filters ([`With`], [`Without`],
//! [`Changed`], [`Added`], [`Or`]). Matching is two bitset tests per archetype, done once per archetype and
//! cached in a [`QueryState`]; iteration then walks each matched chunk's columns as slices.
//! Enableable components (`World::register_enableable`) add per-row enable bits: a disabled
//! `T` counts as absent, [`Disabled`] selects it, [`IgnoreEnabled`] looks past the bits, and
//! [`EnabledRW`] toggles them in a loop (see the `enabled` module and `docs/queries.md`).
//!
//! ```
//! use ecs_core::World;
//! use ecs_query::{QueryExt, RefRO, RefRW};
//!
//! struct Position(f32);
//! struct Velocity(f32);
//!
//! let mut world = World::new();
//! world.spawn_batch((0..100).map(|i| (Position(i as f32), Velocity(1.0))));
//! world.query::<(RefRW<Position>, RefRO<Velocity>)>().for_each(|(p, v)| p.0 += v.0);
//! world.query::<(RefRW<Position>, RefRO<Velocity>)>().for_each_chunk(|mut chunk| {
//!     let (pos, vel) = chunk.columns();
//!     for (p, v) in pos.iter_mut().zip(vel) {
//!         p.0 += v.0;
//!     }
//! });
//! let sum: f32 = world.query::<RefRO<Position>>().iter().map(|p| p.0).sum();
//! assert_eq!(sum, (0..100).map(|i| i as f32 + 2.0).sum::<f32>());
//! ```
//!
//! A query that aliases itself panics when built, naming the component:
//!
//! ```should_panic
//! # use ecs_core::World;
//! # use ecs_query::{QueryExt, RefRO, RefRW};
//! let mut world = World::new();
//! world.query::<(RefRW<u32>, RefRO<u32>)>(); // panics: `u32` read and written
//! ```
//!
//! Read-only query state cannot yield `&mut`:
//!
//! ```compile_fail
//! # use ecs_core::World;
//! # use ecs_query::{QueryState, RefRW};
//! let mut world = World::new();
//! let mut state = QueryState::<RefRW<u32>>::new(&mut world);
//! state.iter(&world); // `iter` needs a read-only query: use `iter_mut`
//! ```

mod access;
#[expect(
    unsafe_code,
    reason = "implements WorldQuery for chunk component elements"
)]
mod chunk_value;
#[expect(unsafe_code, reason = "turns column pointers into typed references")]
mod element;
#[expect(
    unsafe_code,
    reason = "implements WorldQuery for enable-bit elements and toggles bits through chunks"
)]
mod enabled;
#[expect(
    unsafe_code,
    reason = "implements WorldQuery for EntityMut, writing a row's components through its chunk"
)]
mod entity_mut;
#[expect(
    unsafe_code,
    reason = "implements WorldQuery for EntityRef through the run's world"
)]
mod entity_view;
mod error;
#[expect(unsafe_code, reason = "declares the unsafe WorldQuery trait")]
mod fetch;
#[expect(
    unsafe_code,
    reason = "implements the unsafe WorldQuery trait for filters"
)]
mod filter;
#[expect(
    unsafe_code,
    reason = "implements WorldQuery for the filtered entity views by forwarding to the full ones"
)]
mod filtered_entity;
mod handle;
#[expect(unsafe_code, reason = "forwards Option<Q> to Q where it matches")]
mod option;
mod pod;
#[expect(
    unsafe_code,
    reason = "writes each node's cell and reads its parent's through cached row positions"
)]
mod propagate;
mod rows; // safe: row masks and enable-slot reads
mod run;
#[expect(
    unsafe_code,
    reason = "builds a state's fetch states through the registry and keeps raw chunk addresses"
)]
mod state;
#[expect(
    unsafe_code,
    reason = "implements the unsafe WorldQuery trait for the row-tick filters"
)]
mod tick_filter;
#[expect(unsafe_code, reason = "forwards tuples of elements to each element")]
mod tuple;

pub use access::{Access, AccessConflict, FilteredAccess, EVERY_COMPONENT};
pub use chunk_value::{ChunkMut, ChunkRO, ChunkRW};
pub use element::{RefRO, RefRW};
pub use enabled::{Disabled, EnabledMut, EnabledRO, EnabledRW, IgnoreEnabled};
pub use entity_mut::{EntityMut, EntityMutFetch, EntityMuts};
pub use entity_view::{EntityRefFetch, EntityRefs};
pub use error::QueryError;
pub use fetch::{ExactQuery, QueryKind, ROItem, ReadKind, ReadOnlyQuery, WorldQuery, WriteKind};
pub use filter::{Or, QueryFilter, With, Without};
pub use filtered_entity::{
    ComponentList, FilteredEntityMut, FilteredEntityMuts, FilteredEntityRef, FilteredEntityRefs,
};
pub use run::chunk_view::ChunkView;
pub use run::iter::QueryIter;
pub use state::iteration::Iteration;

/// Plumbing: the per-archetype and per-chunk fetch types that the elements name as their
/// `WorldQuery` associated types. Reachable for the engine's own crates and macros; not part of
/// the API, and may change in any release.
#[doc(hidden)]
pub mod __private {
    pub use crate::chunk_value::ChunkSlot;
    pub use crate::element::ArchetypeColumn;
    pub use crate::enabled::{EnableColumn, MaskFetch};
    pub use crate::option::OptionFetch;
}
pub use handle::shared::SharedQuery;
pub use handle::world_ext::{QueryBorrow, QueryExt};
pub use pod::PodColumns;
pub use propagate::{Propagate, UNIT_NODES};
pub use rows::Rows;
pub use run::par::Parallelism;
pub use run::QueryRun;
pub use state::{QueryState, RunTicks};
pub use tick_filter::{AddTick, Added, ChangeTick, Changed, TickFilter, TickKind};
