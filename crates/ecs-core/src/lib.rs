//! The storage core of the `ecs` engine: entities, components, archetypes and chunks.
//!
//! Entities with the same set of component types share an [`Archetype`]. An archetype stores its
//! rows in fixed-size [`Chunk`]s (16 KiB by default; a [`ChunkPolicy`] may size each archetype
//! differently, and a [`ColumnOrder`] place its columns) laid out as struct-of-arrays, so a query
//! walks a few dense arrays per chunk. Adding or removing components moves an entity's row along
//! a cached edge of the archetype graph.
//!
//! ```
//! use ecs_core::World;
//!
//! #[derive(Debug, PartialEq)]
//! struct Position(f32);
//! struct Velocity(f32);
//!
//! let mut world = World::new();
//! let e = world.spawn((Position(0.0), Velocity(1.0)));
//! world.get_mut::<Position>(e).unwrap().0 += world.get::<Velocity>(e).unwrap().0;
//! assert_eq!(world.get::<Position>(e), Ok(&Position(1.0)));
//! let (v,) = world.remove::<(Velocity,)>(e).unwrap();
//! assert_eq!(v.0, 1.0);
//! assert!(!world.has::<Velocity>(e));
//! ```
//!
//! `unsafe` is confined to the modules that own raw memory or hand out pointers; each says so
//! below.

#[expect(
    unsafe_code,
    reason = "hands out raw column pointers and moves rows between chunks"
)]
mod archetype;
// Chunk storage; each of its files that needs `unsafe` says so in `chunk/mod.rs`.
mod chunk;
// Component types, their registry, bundles and signatures; `info.rs` (drop glue) and
// `bundle.rs` (tuple elements through column pointers) are its unsafe files.
mod component;
mod entity;
mod error;
mod ids;
mod relationship;
#[expect(
    unsafe_code,
    reason = "resources are handed out through UnsafeCell for schedulers"
)]
mod resource;
#[expect(
    unsafe_code,
    reason = "reads pod columns as bytes; type-erased cloned columns"
)]
mod snapshot;
mod sync;
mod unwind;
// Typed access (`world/access.rs`) and the snapshot copies (`world/snapshot/`) are its only
// unsafe; row moves live in `archetype/`.
mod world;

/// Plumbing of `#[derive(Bundle)]`: the process-wide list of derived bundle types.
#[doc(hidden)]
pub use component::derived_bundles;

pub use archetype::graph::Archetypes;
pub use archetype::query_cache::QueryCache;
pub use archetype::Archetype;
pub use chunk::block::{prefetch_line, Chunk};
pub use chunk::cache_sizes::CacheSizes;
pub use chunk::enable::{ChunkMasks, EnableMask};
pub use chunk::layout::{ChunkLayout, ColumnSpec, CHUNK_ALIGN, CHUNK_SIZE};
pub use chunk::policy::{
    batch_chunk_size, ChunkPolicy, ColumnOrder, MAX_CHUNK_SIZE, MIN_CHUNK_SIZE,
};
pub use chunk::pool::{ChunkPool, PoolStats};
pub use chunk::row_ticks::ChangeWindow;
pub use chunk::values::ChunkValues;
pub use component::bundle::{Bundle, BundleIds};
pub use component::derived_bundles::derived_bundle_name;
pub use component::{Component, ComponentId, ComponentInfo, Components, RegistryId, TypeIdMap};
pub use entity::bits::EntityBits;
pub use entity::map::MapEntities;
pub use entity::{Entities, Entity, Location};
pub use error::{CloneError, ComponentError, EntityError, HierarchyError, RowTooLarge, WorldError};
pub use ids::{ArchetypeId, RowTicks, WorldId};
pub use relationship::hierarchy::{ChildOf, Children};
pub use relationship::{DespawnPolicy, Relationship, RelationshipTarget};
pub use resource::Resources;
pub use world::entity_ref::EntityRef;
pub use world::hierarchy::{Ancestors, Descendants, DescendantsBreadthFirst};
pub use world::report::{
    short_name, ArchetypeLayout, ColumnLayout, Footprint, WorldLayout, WorldMemory,
};

pub use component::signature::Signature;
#[cfg(feature = "serde")]
pub use snapshot::codec::SerdeFormat;
pub use snapshot::error::SnapshotError;
pub use snapshot::state_types::StateValue;
pub use snapshot::{Snapshot, Unregistered};
pub use unwind::{drop_each, resume_unless_unwinding, PanicPayload};
pub use world::clone::CloneOptions;
pub use world::compact::CompactReport;
pub use world::hooks::HookCommands;
pub use world::register_many::{CloneComponents, PodComponents};
pub use world::spawn_batch::SpawnBatch;
pub use world::{
    ComponentHook, ComponentHooks, DeferredWorld, HookContext, Lifecycle, ObserverId, ObserverKey,
};
pub use world::{Tick, World};

/// The `bytemuck` crate whose `Pod` bound [`World::register_pod`] takes, re-exported.
pub use bytemuck;

/// Plumbing: the block pool's constants and the `TypeId` hasher behind [`TypeIdMap`]. Reachable
/// for the engine's own crates, tests and benchmarks; not part of the API, and may change in any
/// release.
#[doc(hidden)]
pub mod __private {
    pub use crate::chunk::pool::{BLOCK_BYTES, CACHED_BLOCKS};
    pub use crate::component::TypeIdHasher;
}
