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
mod entities;
pub(crate) mod entity_ref;
pub(crate) mod hierarchy;
mod hooked_despawn;
pub(crate) mod hooks;
mod observers;
mod policy;
pub(crate) mod register_many;
mod relationships;
pub(crate) mod report;
mod required;
mod resources;
mod snapshot;
mod source_positions;
pub(crate) mod spawn_batch;
mod structural;
mod take;
mod ticks;

use crate::archetype::graph::Archetypes;
use crate::archetype::query_cache::QueryCache;
use crate::archetype::Archetype;
use crate::chunk::layout::CHUNK_SIZE;
use crate::chunk::policy::{ChunkPolicy, ChunkSizing};
use crate::chunk::pool::ChunkPool;
use crate::component::{Component, ComponentId, Components, TypeIdMap};
use crate::entity::{Entities, Entity, Location};
use crate::error::{EntityError, WorldError};
use crate::ids::{ArchetypeId, WorldId};
use crate::resource::Resources;
use crate::snapshot::registry::SnapshotRegistry;
use crate::sync::{AtomicU64, Ordering};
use crate::unwind::{keep_first_panic, PanicPayload};
use source_positions::SourcePositions;

pub use crate::ids::Tick;

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
    /// The user code the world calls back when entities change, and what it works out from
    /// it (see [`Callbacks`]).
    callbacks: Callbacks,
    /// Per component type registered for snapshots (pod or clone), how to clone a value out
    /// of an entity (see `world/clone.rs`).
    cloners: TypeIdMap<CloneFn>,
    /// What relationships keep between changes (see [`RelationState`]).
    relations: RelationState,
}

/// The world's callbacks: lifecycle hooks and the commands they record, requirements and
/// observers, with the per-archetype plans worked out from them. Only `&mut World` methods
/// change any of it; a change to the hooks, observers or requirements forgets the plans.
#[derive(Default)]
struct Callbacks {
    /// Lifecycle hooks by component type (see [`World::set_component_hooks`]). A type is in
    /// here if and only if `components` marks it hooked once registered.
    hooks: TypeIdMap<ComponentHooks>,
    /// Commands hooks recorded, applied in order before the structural change that ran the
    /// hooks returns; empty outside a `&mut self` method (see `world/hooks.rs`).
    queue: HookQueue,
    /// Per component type, the components it requires, in registration order (see
    /// [`World::register_required`]). A type with requirements is marked hooked in
    /// `components`, so its additions take the path that inserts them.
    required: TypeIdMap<Vec<Required>>,
    /// Observers, in registration order (see `world/observers.rs`).
    observers: ObserverTable,
    /// Per archetype (by index), how its rows are despawned, once worked out (see
    /// `world/hooked_despawn.rs`).
    despawn_plans: Vec<Option<DespawnPlan>>,
}

/// What relationships keep between changes (see `world/relationships.rs`).
struct RelationState {
    /// Bumped by every write of a relationship component (see
    /// [`World::relationship_version`]).
    writes: u64,
    /// `(target, source)` pairs of hand-written target lists whose sources were made to point
    /// at the target and whose link has not run yet: those sources are listed already, so
    /// their link adds nothing. Empty outside such an insert.
    adopting: std::collections::HashSet<(Entity, Entity), ahash::RandomState>,
    /// Where sources stand in their targets' lists, so that taking one out is O(1) at any
    /// fan-out and in any order (see `world/source_positions.rs`).
    positions: SourcePositions,
}

/// How the rows of one archetype are despawned in a world with hooks.
#[derive(Clone, Copy)]
pub(crate) enum DespawnPlan {
    /// No hooked type: a plain despawn.
    Plain,
    /// Its one hooked type is a relationship source whose removal nothing observes: the
    /// source's upkeep, run directly when nothing else is queued.
    Upkeep(UpkeepIds, SourceUpkeep),
    /// Checks and hooks, dispatched type by type.
    Hooks,
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
    /// A relationship source's upkeep run in place of its hooks when nothing else watches
    /// the change (see [`SourceUpkeep`]).
    pub(crate) upkeep: Option<SourceUpkeep>,
}

/// The engine's own upkeep of a relationship's source type, run directly where its hooks
/// would record one boxed command per entity: for a batch spawn or a despawn whose only hooked
/// type is this one, with no observer of it and no command queue draining (so nothing could
/// run between the change and its upkeep). The result is the hooks' own: the same lists in the
/// same order.
#[derive(Clone, Copy)]
pub(crate) struct SourceUpkeep {
    /// Links the sources in rows `rows` of `archetype`, just spawned, to their targets.
    pub(crate) link_spawned: fn(&mut World, ArchetypeId, std::ops::Range<usize>),
    /// Despawns a source, alive at `Location`, and takes it out of its targets' lists.
    pub(crate) despawn_source: fn(&mut World, Entity, Location, UpkeepIds),
    /// The target list's type (its id is resolved once per despawn plan).
    pub(crate) list_type: std::any::TypeId,
}

/// The component ids a despawn plan resolved for a relationship's upkeep: the source type's,
/// and the target list's if that type is registered yet.
#[derive(Clone, Copy)]
pub(crate) struct UpkeepIds {
    pub(crate) source: ComponentId,
    pub(crate) list: Option<ComponentId>,
    /// Whether a column of the archetype has drop glue (user code that may panic).
    pub(crate) drops: bool,
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
    /// The first panic, since the queue was last drained, of a hook whose change is made
    /// anyway (`on_add` / `on_insert`, or a consequence's despawn): the other hooks still run
    /// and the queue is drained before `finish_hooks` passes it on. In a `Mutex` only so the world stays `Sync` (a payload
    /// is `Send` alone); it is reached through `get_mut`, never locked.
    hook_panic: std::sync::Mutex<Option<PanicPayload>>,
}

impl HookQueue {
    /// Holds the panic of a hook whose change is made anyway (see `hook_panic`), unless one
    /// is held already: the first goes on.
    fn hold_panic(&mut self, panic: PanicPayload) {
        keep_first_panic(self.held_panic(), Err(panic));
    }

    /// The held panic, taken: the queue's next drain starts with none.
    fn take_held_panic(&mut self) -> Option<PanicPayload> {
        self.held_panic().take()
    }

    fn held_panic(&mut self) -> &mut Option<PanicPayload> {
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
            callbacks: Callbacks::default(),
            cloners: TypeIdMap::default(),
            relations: RelationState {
                writes: 0,
                adopting: Default::default(),
                positions: SourcePositions::default(),
            },
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
        self.relations.writes
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
        self.relations.writes += 1;
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
