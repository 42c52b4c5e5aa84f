//! The [`World`]: entities, their components, and resources.
//!
//! Every structural operation (spawn, insert, remove, despawn) first flushes ids reserved through
//! [`World::reserve_entity`], then hands the change to the archetype store, which finds the
//! cached edge for the bundle type and moves the entity's row along it with the one row move
//! (`archetype/row_move.rs`).
//!
//! Panic safety: user `Drop` code runs only after the world is consistent again (entity table
//! and archetypes agree), so a panicking `Drop` can at worst leak the remaining values of the
//! entity being changed.
//!
//! Lifecycle hooks (`world/hooks.rs`) run around those changes when a type involved has them;
//! this file defines the types a world holds for them ([`ComponentHooks`], [`DeferredWorld`])
//! so that the world and its hooks need not import each other.

#[expect(
    unsafe_code,
    reason = "turns a type-checked component cell or column into a typed reference or slice"
)]
mod access;
pub(crate) mod batch_chunks;
mod batch_toggle;
mod chunk_component;
pub(crate) mod clone;
pub(crate) mod compact;
mod enable;
pub(crate) mod hierarchy;
pub(crate) mod hooks;
mod observers;
mod policy;
pub(crate) mod register_many;
mod relationships;
mod report;
mod required;
mod resources;
mod snapshot_registry;
pub(crate) mod spawn_batch;
mod take;
mod ticks;

use crate::archetype::graph::Archetypes;
use crate::archetype::rows::RowAddr;
use crate::archetype::Archetype;
use crate::bundle::Bundle;
use crate::chunk::layout::CHUNK_SIZE;
use crate::chunk::policy::{ChunkPolicy, ChunkSizing};
use crate::chunk::pool::ChunkPool;
use crate::component::{Component, ComponentId, Components, TypeIdMap};
use crate::entity::{Entities, Entity, Location};
use crate::error::{ComponentError, EntityError, WorldError};
use crate::ids::{ArchetypeId, WorldId};
use crate::query_cache::QueryCache;
use crate::resource::Resources;
use crate::snapshot::registry::SnapshotRegistry;
use crate::sync::{AtomicU64, Ordering};

/// A world's current change tick, see [`World::change_tick`].
///
/// ```
/// # use ecs_core::{Tick, World};
/// let world = World::new();
/// let tick: Tick = world.change_tick();
/// assert!(tick >= 1);
/// ```
pub type Tick = u64;

/// Entities, their components (in archetype chunks) and resources.
///
/// # Invariants
/// 1. Outside a `&mut self` method, no reservation is pending in `entities` except those made
///    through `reserve_entity` since the last structural change.
/// 2. For every live entity `e` at `Location { archetype, row }`, row `row` of that archetype
///    has entity id `e`, and every row of every archetype belongs to a live entity there.
/// 3. `change_tick` only grows.
/// 4. `archetypes` agrees with `components` (`Archetypes` invariants 4 and 5): every column
///    type is registered with the size, alignment and drop glue it is stored with, and every
///    cached edge leads to the source's signature plus or minus exactly its bundle.
///
/// ```
/// # use ecs_core::World;
/// let mut world = World::new();
/// let e = world.spawn((1u32, 'a'));
/// world.insert_resource(0.5f32);
/// assert!(world.has::<char>(e) && world.contains_resource::<f32>());
/// world.check_invariants();
/// ```
pub struct World {
    id: WorldId,
    entities: Entities,
    components: Components,
    archetypes: Archetypes,
    pub(crate) resources: Resources,
    change_tick: AtomicU64,
    pub(crate) snapshots: SnapshotRegistry,
    /// Per-query-type state of one-shot queries (see [`QueryCache`]).
    query_cache: QueryCache,
    /// The tick of the last row-tick clamp ([`World::check_change_ticks`]).
    ticks_checked: u64,
    /// Lifecycle hooks by component type (see [`World::set_component_hooks`]). A type is in
    /// here if and only if `components` marks it hooked once registered.
    hooks: TypeIdMap<ComponentHooks>,
    /// Commands hooks recorded, applied in order before the structural change that ran the
    /// hooks returns; empty outside a `&mut self` method (see `world/hooks.rs`).
    hook_commands: HookQueue,
    /// Per component type, the components it requires, in registration order (see
    /// [`World::register_required`]). A type with requirements is marked hooked in
    /// `components`, so its additions take the path that inserts them.
    required: TypeIdMap<Vec<Required>>,
    /// Observers, in registration order (see `world/observers.rs`).
    observers: ObserverTable,
    /// Per component type registered for snapshots (pod or clone), how to clone a value out
    /// of an entity (see `world/clone.rs`).
    cloners: TypeIdMap<CloneFn>,
    /// Bumped by every write of a relationship component (see
    /// [`World::relationship_version`]).
    relationship_writes: u64,
    /// `(target, source)` pairs of hand-written target lists whose sources were made to point
    /// at the target and whose link has not run yet (`world/relationships.rs`): those sources
    /// are listed already, so their link adds nothing. Empty outside such an insert.
    adopting: std::collections::HashSet<(Entity, Entity), ahash::RandomState>,
}

/// Clones the value of one component type out of an entity, as a change to make on the clone;
/// pushes the entity ids the value holds (for a type registered with
/// [`World::register_map_entities`]) onto the `Vec`.
pub(crate) type CloneFn = fn(&World, Entity, &mut Vec<Entity>) -> Option<ClonedValue>;

/// A cloned value, ready to insert on an entity of any world; the function maps each entity id
/// the value holds to the one the clone should hold.
pub(crate) type ClonedValue =
    Box<dyn FnOnce(&mut World, Entity, &dyn Fn(Entity) -> Entity) + Send + Sync>;

/// What an observer watches: a lifecycle change of one component type, or an event type
/// triggered on entities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObserverKey {
    /// The lifecycle change `Lifecycle` of the component type with this `TypeId`.
    Lifecycle(Lifecycle, std::any::TypeId),
    /// An event of the type with this `TypeId`, triggered on an entity.
    Event(std::any::TypeId),
}

/// The four lifecycle changes hooks and observers follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lifecycle {
    /// The entity gained the type.
    Add,
    /// A value of the type was written.
    Insert,
    /// A value is about to be overwritten or removed.
    Replace,
    /// The entity is about to lose the type.
    Remove,
}

/// An observer registered on a world ([`World::add_observer_fn`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObserverId(pub(crate) u32);

/// An observer's code: runs with the whole world, told the entity the event is about.
pub(crate) type ObserverFn = std::sync::Arc<dyn Fn(&mut World, Entity) + Send + Sync>;

/// One registered observer.
pub(crate) struct ObserverSlot {
    pub(crate) key: ObserverKey,
    /// The entities it watches, or every entity.
    pub(crate) entities: Option<Vec<Entity>>,
    pub(crate) run: ObserverFn,
}

/// Every observer of a world: slots in registration order (a removed one leaves `None`), and
/// per key the slots that watch it.
#[derive(Default)]
pub(crate) struct ObserverTable {
    pub(crate) slots: Vec<Option<ObserverSlot>>,
    pub(crate) by_key: std::collections::HashMap<ObserverKey, Vec<u32>>,
}

/// One requirement: a component type and how to insert it where it is missing.
#[derive(Clone)]
pub(crate) struct Required {
    pub(crate) type_id: std::any::TypeId,
    pub(crate) name: &'static str,
    pub(crate) insert: InsertRequired,
}

/// Inserts one required component, made by its constructor, on an entity.
pub(crate) type InsertRequired = std::sync::Arc<dyn Fn(&mut World, Entity) + Send + Sync>;

/// A lifecycle hook: a plain function the world calls when an entity gains, is written, is
/// about to be overwritten in, or is about to lose a component of the hooked type (see
/// [`World::set_component_hooks`] for the order on each path). It reads the world through
/// [`DeferredWorld`] and changes it only through the commands it records there.
pub type ComponentHook = fn(DeferredWorld<'_>, HookContext);

/// The four lifecycle hooks of one component type, built with [`ComponentHooks::new`] and its
/// `on_*` setters and installed with [`World::set_component_hooks`].
///
/// ```
/// # use std::sync::atomic::{AtomicU32, Ordering};
/// # use ecs_core::{ComponentHooks, DeferredWorld, HookContext, World};
/// struct Health(u32);
/// struct Spawned(AtomicU32);
/// fn count(world: DeferredWorld<'_>, _: HookContext) {
///     world.resource::<Spawned>().0.fetch_add(1, Ordering::Relaxed);
/// }
/// let mut world = World::new();
/// world.insert_resource(Spawned(AtomicU32::new(0)));
/// world.set_component_hooks::<Health>(ComponentHooks::new().on_add(count)).unwrap();
/// world.spawn((Health(10),));
/// assert_eq!(world.resource::<Spawned>().0.load(Ordering::Relaxed), 1);
/// ```
#[derive(Clone, Copy, Default)]
pub struct ComponentHooks {
    pub(crate) on_add: Option<ComponentHook>,
    pub(crate) on_insert: Option<ComponentHook>,
    pub(crate) on_replace: Option<ComponentHook>,
    pub(crate) on_remove: Option<ComponentHook>,
    /// Refuses a despawn before any hook runs (a relationship's `DespawnPolicy::Refuse`).
    pub(crate) check_despawn: Option<DespawnCheck>,
    /// Panics unless both sides of a relationship agree ([`World::check_invariants`]).
    pub(crate) check_invariants: Option<fn(&World)>,
    /// Whether the type is a relationship's target list (kept by the engine: a clone does not
    /// copy it, see `world/clone.rs`).
    pub(crate) relationship_target: bool,
    /// Whether the type is a relationship (its entity ids name entities of this world).
    pub(crate) relationship: bool,
    /// Whether values change only through insert ([`ComponentHooks::immutable`]).
    pub(crate) immutable: bool,
}

/// Refuses the despawn of an entity (a relationship's `Refuse` policy), or lets it go ahead.
pub(crate) type DespawnCheck = fn(&World, Entity) -> Result<(), EntityError>;

/// What a hook is told: the entity, the hooked component and whether the entity is being
/// despawned (an `on_replace` / `on_remove` hook of a relationship acts on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HookContext {
    /// The entity whose component the change is about.
    pub entity: Entity,
    /// The hooked component's id.
    pub component: ComponentId,
    /// Whether the change is a despawn (or a [`World::clear`]).
    pub despawning: bool,
}

/// The world as a hook sees it: every read a `&World` allows (through `Deref`), and
/// [`DeferredWorld::commands`] to record changes. The row is mid-change while a hook runs, so
/// nothing may move it: recorded commands run once the change is complete.
pub struct DeferredWorld<'w> {
    world: &'w World,
    commands: &'w mut Vec<HookCommand>,
}

/// A change a hook recorded, run on the world once the structural change is complete.
pub(crate) type HookCommand = Box<dyn FnOnce(&mut World) + Send + Sync>;

/// The world's queue of hook commands: filled by each structural change that ran hooks,
/// drained by the outermost one (so hooks of commands' changes queue behind, not recurse).
#[derive(Default)]
struct HookQueue {
    pending: std::collections::VecDeque<HookCommand>,
    draining: bool,
    /// What the hooks of a change did before its row moved (`before_insert`, `before_remove`),
    /// parked here until the change finishes rather than held in the change's own frame: held
    /// there, across the inlined row move, it cost `add_remove_wide` 8 % in a world without
    /// hooks (register spills in the column copy loop).
    parked: Option<hooks::PendingHooks>,
    /// While `OnReplace` / `OnRemove` observers run (before their change): the commands they
    /// hand to [`World::defer`], which join the change's queue when they return.
    deferred: Option<Vec<HookCommand>>,
    /// The first panic of an `on_add` / `on_insert` hook since the queue was last drained:
    /// the change is made, so the other hooks still run and the queue is drained before
    /// `finish_hooks` passes it on. In a `Mutex` only so the world stays `Sync` (a payload
    /// is `Send` alone); it is reached through `get_mut`, never locked.
    hook_panic: std::sync::Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

impl HookQueue {
    /// The held `on_add` / `on_insert` panic (see `hook_panic`).
    fn held_panic(&mut self) -> &mut Option<Box<dyn std::any::Any + Send>> {
        // A poisoned lock still holds its value: nothing panics while it is reached.
        self.hook_panic
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Default for World {
    fn default() -> Self {
        Self::new()
    }
}

impl World {
    /// An empty world with 16 KiB chunks for every archetype, however its rows arrive
    /// (batch-fitted chunks are the opt-in [`ChunkPolicy::FitBatch`]).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let world = World::new();
    /// assert!(world.is_empty());
    /// assert_eq!(world.chunk_size(), 16 * 1024);
    /// ```
    pub fn new() -> Self {
        Self::build(ChunkSizing::fixed(CHUNK_SIZE))
    }

    /// An empty world whose chunks are `bytes` long.
    ///
    /// # Errors
    /// [`WorldError::InvalidChunkSize`] unless `bytes` is a power of two from 4 KiB to 1 MiB.
    ///
    /// ```
    /// # use ecs_core::World;
    /// assert!(World::with_chunk_size(64 * 1024).is_ok());
    /// assert!(World::with_chunk_size(10_000).is_err());
    /// ```
    pub fn with_chunk_size(bytes: usize) -> Result<Self, WorldError> {
        Self::with_chunk_policy(ChunkPolicy::Fixed(bytes))
    }

    /// A world with tiny chunks (a power of two of at least 128 bytes), so that tests, and
    /// Miri especially, cross many chunk boundaries with few entities. Not for production.
    ///
    /// # Panics
    /// If `bytes` is not a power of two of at least 128.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let world = World::with_test_chunk_size(256);
    /// assert_eq!(world.chunk_size(), 256);
    /// ```
    #[doc(hidden)]
    pub fn with_test_chunk_size(bytes: usize) -> Self {
        assert!(
            bytes >= 128 && bytes.is_power_of_two(),
            "test chunk size {bytes} refused"
        );
        Self::build(ChunkSizing::fixed(bytes))
    }

    pub(crate) fn build(sizing: ChunkSizing) -> Self {
        let id = WorldId::next();
        let components = Components::default();
        let query_cache = QueryCache::new(id, components.registry_id());
        Self {
            id,
            query_cache,
            entities: Entities::default(),
            components,
            archetypes: Archetypes::new(sizing),
            resources: Resources::default(),
            change_tick: AtomicU64::new(1),
            snapshots: SnapshotRegistry::default(),
            ticks_checked: 1,
            hooks: TypeIdMap::default(),
            hook_commands: HookQueue::default(),
            required: TypeIdMap::default(),
            observers: ObserverTable::default(),
            cloners: TypeIdMap::default(),
            relationship_writes: 0,
            adopting: Default::default(),
        }
        .with_hierarchy()
    }

    /// A counter that changes whenever a relationship component ([`ChildOf`](crate::ChildOf)
    /// or one installed by [`World::register_relationship`]) is inserted or overwritten, the
    /// one change to a relationship that moves no row (removals and despawns move rows: see
    /// [`Archetype::rows_epoch`](crate::Archetype::rows_epoch)). Caches of the hierarchy's
    /// shape compare both.
    ///
    /// ```
    /// # use ecs_core::{ChildOf, World};
    /// let mut world = World::new();
    /// let (a, b) = (world.spawn(()), world.spawn(()));
    /// let child = world.spawn((ChildOf(a),));
    /// let before = world.relationship_version();
    /// world.insert(child, (ChildOf(b),)).unwrap(); // re-parented in place
    /// assert_ne!(world.relationship_version(), before);
    /// ```
    #[inline]
    pub fn relationship_version(&self) -> u64 {
        self.relationship_writes
    }

    /// A counter that changes whenever any archetype's list of chunks changes: a chunk added
    /// (rows past the last chunk's room) or released (its last row gone), the lists emptied
    /// ([`World::clear`], a snapshot restore), chunk blocks moved ([`World::compact`]), or row
    /// ticks switched on ([`World::keep_row_ticks`]). Rows added to or removed from a chunk that
    /// stays, value writes, enable toggles and new (still empty) archetypes leave it alone.
    ///
    /// While it is unchanged, every archetype holds the same chunks in the same order, at the
    /// same addresses: a query state keeps its flat list of chunks to visit against it.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let before = world.chunk_set_version();
    /// world.spawn((2u32,)); // room in the chunk `e` is in
    /// *world.get_mut::<u32>(e).unwrap() = 3;
    /// assert_eq!(world.chunk_set_version(), before);
    /// world.spawn((1u64,)); // a new archetype, and its first chunk
    /// assert_ne!(world.chunk_set_version(), before);
    /// ```
    #[inline]
    pub fn chunk_set_version(&self) -> u64 {
        self.archetypes.chunk_set_version()
    }

    pub(crate) fn note_relationship_write(&mut self) {
        self.relationship_writes += 1;
    }

    /// This world's id.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let (a, b) = (World::new(), World::new());
    /// assert_ne!(a.id(), b.id());
    /// assert_eq!(a.id(), a.id());
    /// ```
    #[inline]
    pub fn id(&self) -> WorldId {
        self.id
    }

    /// The chunk size of the world's [`ChunkPolicy::Fixed`] policy, or 16 KiB under
    /// another policy. An archetype's own size is `arch.layout().chunk_size()`: overrides and
    /// `MinRows` make them differ (see [`World::set_chunk_policy`]).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let world = World::with_chunk_size(32 * 1024).unwrap();
    /// assert_eq!(world.chunk_size(), 32 * 1024);
    /// ```
    pub fn chunk_size(&self) -> usize {
        match self.archetypes.sizing.policy {
            ChunkPolicy::Fixed(bytes) => bytes,
            _ => CHUNK_SIZE,
        }
    }

    /// Where this world's chunks get their memory: 2 MiB blocks carved into chunks (see
    /// [`ChunkPool`]). Its [`stats`](ChunkPool::stats) say how many blocks the world holds;
    /// [`release_empty`](ChunkPool::release_empty) hands unused blocks back to the system.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let ids: Vec<_> = world.spawn_batch((0..10_000u32).map(|i| (i,))).collect();
    /// assert!(world.chunk_pool().stats().blocks >= 1);
    /// for e in ids {
    ///     world.despawn(e).unwrap();
    /// }
    /// world.chunk_pool().release_empty();
    /// // What is left is the archetype's one spare chunk, kept for the next spawn.
    /// assert_eq!(world.chunk_pool().stats().chunks, 1);
    /// ```
    pub fn chunk_pool(&self) -> &ChunkPool {
        self.archetypes.chunk_pool()
    }

    // ----- entities -------------------------------------------------------------------------

    /// Creates an entity with the components of `bundle`.
    ///
    /// Cost: one `TypeId` lookup for the bundle's archetype, then one store per component.
    ///
    /// # Panics
    /// If the bundle names a type twice, or its row does not fit in one chunk (the message
    /// names each type and its size).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32, "name"));
    /// assert_eq!(world.get::<u32>(e), Ok(&1));
    /// ```
    pub fn spawn<B: Bundle>(&mut self, bundle: B) -> Entity {
        self.flush();
        let tick = self.change_tick();
        let entity = self
            .archetypes
            .spawn(&mut self.components, &mut self.entities, bundle, tick);
        if self.components.may_hook::<B>() {
            self.spawned_with_hooks::<B>(entity);
        }
        entity
    }

    /// Reserves an entity id through a shared reference, e.g. from a command buffer in a
    /// parallel system. It becomes a live entity with no components at the next structural
    /// change (any `&mut self` method that adds, moves or removes entities).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.reserve_entity();
    /// world.flush();
    /// assert!(world.contains(e));
    /// ```
    pub fn reserve_entity(&self) -> Entity {
        self.entities.reserve()
    }

    /// Opens `lanes` id lanes, for systems about to run side by side: the `k`-th id reserved
    /// with [`World::reserve_entity_in_lane`]`(l)` is position `k·lanes + l` of the free list
    /// (from the slot a spawn would take first), then of the indices past the table. So it
    /// depends on the world's state, the lane and `k`, never on thread timing. Flushes pending
    /// reservations first; the next flush (any structural change) closes the lanes, and free
    /// slots no lane reached stay free. The schedule opens a lane per `Commands` parameter
    /// before each parallel segment.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.open_id_lanes(2);
    /// let late = world.reserve_entity_in_lane(1); // reserved first, still lane 1's first id
    /// let early = world.reserve_entity_in_lane(0);
    /// assert!(early.index() < late.index());
    /// world.flush();
    /// assert!(world.contains(early) && world.contains(late));
    /// ```
    pub fn open_id_lanes(&mut self, lanes: u32) {
        self.flush();
        self.entities.open_lanes(lanes);
    }

    /// Reserves an entity id in lane `lane` of [`World::open_id_lanes`] (or, with no such
    /// lane open, as [`World::reserve_entity`] does). It becomes a live, empty entity at the
    /// next structural change.
    #[inline]
    pub fn reserve_entity_in_lane(&self, lane: u32) -> Entity {
        self.entities.reserve_in_lane(lane)
    }

    /// Turns every reserved id into a live, empty entity.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.reserve_entity();
    /// assert!(!world.contains(e));
    /// world.flush();
    /// assert!(world.contains(e));
    /// ```
    #[inline]
    pub fn flush(&mut self) {
        if self.entities.needs_flush() {
            self.flush_reserved();
        }
    }

    #[cold]
    fn flush_reserved(&mut self) {
        let tick = self.change_tick();
        let empty = &mut self.archetypes.as_mut_slice()[ArchetypeId::EMPTY.index()];
        // User code (chunk values of new chunks) runs before any reserved id goes live, so the
        // pushes below cannot panic halfway through the entity table's flush.
        empty.prepare_rows(self.entities.pending());
        self.entities.flush(|entity| {
            let row = empty.push_row(entity, tick).row();
            Location {
                archetype: ArchetypeId::EMPTY,
                row: row as u32,
            }
        });
    }

    /// Removes an entity and drops its components.
    ///
    /// Cost: the archetype's last row moves into the hole (one copy per column, plus its row
    /// ticks and enable bits where the archetype keeps them), then one `Drop` per component
    /// that has one.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] for a stale or unknown handle; nothing changes then.
    ///
    /// ```
    /// # use ecs_core::{World, EntityError};
    /// let mut world = World::new();
    /// let e = world.spawn((String::from("x"),));
    /// world.despawn(e).unwrap();
    /// assert_eq!(world.despawn(e), Err(EntityError::NoSuchEntity(e)));
    /// ```
    pub fn despawn(&mut self, entity: Entity) -> Result<(), EntityError> {
        self.flush();
        if self.components.any_hooks() && self.has_hooked_type(entity) {
            return self.despawn_checked(entity);
        }
        self.despawn_plain(entity)
    }

    /// The despawn itself, hooks aside.
    #[inline]
    pub(crate) fn despawn_plain(&mut self, entity: Entity) -> Result<(), EntityError> {
        let tick = self.change_tick();
        self.archetypes.despawn(&mut self.entities, entity, tick)
    }

    /// Adds the components of `bundle` to `entity`, overwriting (and dropping) any it already
    /// has. Adding new types moves the entity to another archetype along a cached edge.
    ///
    /// Cost: one `TypeId` lookup of the edge (the first insert of `B` from an archetype also
    /// hashes the target signature). Overwriting only: one store per component. Adding types:
    /// one row move, a copy per column of the entity plus a store per new component, and the
    /// source archetype's last row copied into the hole.
    ///
    /// # Errors
    /// [`EntityError::NoSuchEntity`] for a stale handle; `bundle` is dropped, nothing changes.
    ///
    /// # Panics
    /// As [`World::spawn`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.insert(e, (2u32, 'x')).unwrap();
    /// assert_eq!(world.get::<u32>(e), Ok(&2));
    /// assert_eq!(world.get::<char>(e), Ok(&'x'));
    /// ```
    pub fn insert<B: Bundle>(&mut self, entity: Entity, bundle: B) -> Result<(), EntityError> {
        self.flush();
        let parked = self.components.may_hook::<B>() && self.before_insert::<B>(entity);
        self.insert_plain(entity, bundle)?;
        // Checked again: this insert may have registered the first hooked type (and
        // `before_insert` may have found `B` free of hooks).
        if parked || self.components.may_hook::<B>() {
            self.after_insert::<B>(entity, parked);
        }
        Ok(())
    }

    /// The insert itself, hooks aside.
    #[inline(always)]
    pub(crate) fn insert_plain<B: Bundle>(
        &mut self,
        entity: Entity,
        bundle: B,
    ) -> Result<(), EntityError> {
        let tick = self.change_tick();
        let replaced = self.archetypes.insert(
            &mut self.components,
            &mut self.entities,
            entity,
            bundle,
            tick,
        )?;
        // The world is consistent; overwritten values may now run their `Drop`.
        drop(replaced);
        Ok(())
    }

    /// Adds or overwrites one component; shorthand for `insert(entity, (component,))`.
    ///
    /// # Errors
    /// As [`World::insert`].
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.insert_one(e, 'x').unwrap();
    /// assert_eq!(world.get::<char>(e), Ok(&'x'));
    /// ```
    pub fn insert_one<T: Component>(
        &mut self,
        entity: Entity,
        component: T,
    ) -> Result<(), EntityError> {
        self.insert(entity, (component,))
    }

    /// Removes the components of `B` from `entity` and hands them back (nothing is dropped).
    ///
    /// Cost: one `TypeId` lookup of the edge, then one row move (a copy per kept column, a read
    /// per removed one, and the source archetype's last row copied into the hole).
    ///
    /// # Errors
    /// [`ComponentError::NoSuchEntity`] for a stale handle, and
    /// [`ComponentError::MissingComponent`] naming the first type of `B` the entity lacks; in
    /// both cases nothing changes.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32, 2.0f32));
    /// assert_eq!(world.remove::<(f32,)>(e), Ok((2.0,)));
    /// assert!(world.remove::<(f32,)>(e).is_err());
    /// ```
    pub fn remove<B: Bundle>(&mut self, entity: Entity) -> Result<B, ComponentError> {
        self.flush();
        let parked = self.components.may_hook::<B>() && self.before_remove::<B>(entity);
        let values = self.remove_plain::<B>(entity)?;
        if parked {
            self.after_change();
        }
        Ok(values)
    }

    /// The remove itself, hooks aside.
    #[inline(always)]
    pub(crate) fn remove_plain<B: Bundle>(&mut self, entity: Entity) -> Result<B, ComponentError> {
        let tick = self.change_tick();
        self.archetypes
            .remove(&mut self.components, &mut self.entities, entity, tick)
    }

    /// Despawns every entity and drops every component; resources stay. Old handles stop
    /// resolving (their slots' generations are bumped). `OnReplace` / `OnRemove` observers run
    /// first, for every entity; entities they spawn then are cleared with the rest (their
    /// deferred spawns find their ids gone and do nothing).
    ///
    /// # Panics
    /// If a component's `Drop` panics, the panic is passed on after every archetype has been
    /// emptied: the world is left empty and consistent, and only the rest of the archetype
    /// whose `Drop` panicked is leaked (a second panic while unwinding aborts, as in `Vec`).
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// world.insert_resource(7u64);
    /// world.clear();
    /// assert!(world.is_empty() && !world.contains(e));
    /// assert_eq!(world.resource::<u64>(), &7);
    /// ```
    pub fn clear(&mut self) {
        self.flush();
        let hook_commands = if self.components.any_hooks() {
            self.hooks_before_clear()
        } else {
            Vec::new()
        };
        self.clear_rows();
        self.finish_hooks(hook_commands);
    }

    fn clear_rows(&mut self) {
        for arch in self.archetypes.as_slice() {
            for chunk in arch.chunks() {
                for &entity in chunk.entities() {
                    self.entities.free(entity);
                }
            }
        }
        // Every slot is free now, so every archetype must end up empty, even if one `Drop`
        // panics: the guard clears the archetypes after the one that panicked.
        struct ClearRest<'a>(std::slice::IterMut<'a, Archetype>);
        impl Drop for ClearRest<'_> {
            fn drop(&mut self) {
                self.0.by_ref().for_each(Archetype::clear);
            }
        }
        let mut rest = ClearRest(self.archetypes.as_mut_slice().iter_mut());
        for arch in rest.0.by_ref() {
            arch.clear();
        }
    }

    /// Whether `entity` is alive. Ids reserved with `reserve_entity` count once flushed.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// assert!(world.contains(e));
    /// world.despawn(e).unwrap();
    /// assert!(!world.contains(e));
    /// ```
    #[inline]
    pub fn contains(&self, entity: Entity) -> bool {
        self.location(entity).is_some()
    }

    /// Number of live entities.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// world.spawn(('a',));
    /// assert_eq!(world.len(), 2);
    /// ```
    #[inline]
    pub fn len(&self) -> u32 {
        self.entities.len()
    }

    /// Whether no entity is alive.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// assert!(world.is_empty());
    /// world.spawn((1u32,));
    /// assert!(!world.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// Where `entity` lives, if it is alive: its slot gives the row, and the entity id stored
    /// in that row says whether the handle's generation is current.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((1u32,));
    /// let loc = world.location(e).unwrap();
    /// assert_eq!(loc.row, 0);
    /// assert_eq!(world.archetypes()[loc.archetype.index()].len(), 1);
    /// ```
    #[inline]
    pub fn location(&self, entity: Entity) -> Option<Location> {
        self.locate_row(entity).map(|(loc, _)| loc)
    }

    /// [`World::location`] with the row's address, which the generation check computes anyway
    /// and a row move needs: one division per insert or remove instead of two.
    #[inline]
    pub(crate) fn locate_row(&self, entity: Entity) -> Option<(Location, RowAddr)> {
        self.archetypes.locate(&self.entities, entity)
    }

    /// Test hook: sets the generation of a vacant entity slot, so tests can reach generation
    /// retirement without four billion spawns.
    ///
    /// # Panics
    /// If the slot is live or does not exist.
    ///
    /// ```
    /// # use ecs_core::World;
    /// # use std::num::NonZeroU32;
    /// let mut world = World::new();
    /// let e = world.spawn(());
    /// world.despawn(e).unwrap();
    /// world.set_slot_generation_for_tests(e.index(), NonZeroU32::new(u32::MAX).unwrap());
    /// assert_eq!(world.spawn(()).generation(), u32::MAX);
    /// ```
    #[doc(hidden)]
    pub fn set_slot_generation_for_tests(&mut self, index: u32, generation: std::num::NonZeroU32) {
        self.flush();
        self.entities.set_generation_for_tests(index, generation);
    }

    // ----- components -----------------------------------------------------------------------

    /// Whether `entity` is alive and has a `T`.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let e = world.spawn((5u32,));
    /// assert!(world.has::<u32>(e));
    /// assert!(!world.has::<char>(e));
    /// ```
    #[inline]
    pub fn has<T: Component>(&self, entity: Entity) -> bool {
        let (Some(loc), Some(id)) = (self.location(entity), self.components.id::<T>()) else {
            return false;
        };
        self.archetypes.as_slice()[loc.archetype.index()]
            .signature()
            .contains(id)
    }

    /// The id of `T` in this world, registering it on first use.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let id = world.register_component::<u32>();
    /// assert_eq!(world.register_component::<u32>(), id);
    /// assert_eq!(world.component_id::<u32>(), Some(id));
    /// ```
    pub fn register_component<T: Component>(&mut self) -> ComponentId {
        self.components.register::<T>()
    }

    /// The id of `T`, if this world has seen it.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// assert_eq!(world.component_id::<u32>(), None);
    /// world.spawn((1u32,));
    /// assert!(world.component_id::<u32>().is_some());
    /// ```
    pub fn component_id<T: Component>(&self) -> Option<ComponentId> {
        self.components.id::<T>()
    }

    /// The component registry.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// let id = world.register_component::<u32>();
    /// assert_eq!(world.components().info(id).size(), 4);
    /// ```
    pub fn components(&self) -> &Components {
        &self.components
    }

    /// Every archetype, indexed by [`ArchetypeId::index`]. New archetypes are only ever
    /// appended, so a cache can remember how many it has seen.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// let arch = world.archetypes().iter().find(|a| a.len() == 1).unwrap();
    /// assert_eq!(arch.signature().len(), 1);
    /// ```
    #[inline]
    pub fn archetypes(&self) -> &[Archetype] {
        self.archetypes.as_slice()
    }

    /// The cache of one-shot query state, for reading (see [`QueryCache`]).
    ///
    /// ```
    /// # use ecs_core::World;
    /// assert!(World::new().query_cache().is_empty());
    /// ```
    #[inline]
    pub fn query_cache(&self) -> &QueryCache {
        &self.query_cache
    }

    /// The cache of one-shot query state, with the archetypes its entries are matched
    /// against, borrowed together so an entry can catch up with new archetypes.
    ///
    /// ```
    /// # use ecs_core::World;
    /// let mut world = World::new();
    /// world.spawn((1u32,));
    /// let (cache, archetypes) = world.query_cache_mut();
    /// cache.insert(archetypes.len());
    /// assert_eq!(world.query_cache().get::<usize>(), Some(&world.archetypes().len()));
    /// ```
    #[inline]
    pub fn query_cache_mut(&mut self) -> (&mut QueryCache, &[Archetype]) {
        self.query_cache
            .check_registry(self.components.registry_id());
        (&mut self.query_cache, self.archetypes.as_slice())
    }

    pub(crate) fn parts_mut(&mut self) -> (&mut Entities, &mut Components, &mut Archetypes) {
        (
            &mut self.entities,
            &mut self.components,
            &mut self.archetypes,
        )
    }

    /// The archetype graph, for the chunk policy and layout report.
    pub(crate) fn graph(&self) -> &Archetypes {
        &self.archetypes
    }

    /// The entity table, for the snapshot module.
    pub(crate) fn entities_for_snapshot(&self) -> &Entities {
        &self.entities
    }

    /// The archetype with exactly `signature`, if any.
    pub(crate) fn archetypes_find(&self, signature: &crate::Signature) -> Option<ArchetypeId> {
        self.archetypes.find(signature)
    }

    /// Raises the change tick to `tick` (never lowers it: invariant 3).
    pub(crate) fn raise_change_tick(&mut self, tick: Tick) {
        if tick > self.change_tick() {
            self.change_tick.store(tick, Ordering::Relaxed);
        }
    }
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("entities", &self.len())
            .field("archetypes", &self.archetypes.as_slice().len())
            .field("resources", &self.resources.len())
            .finish()
    }
}
